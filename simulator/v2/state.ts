/**
 * State of the v2 workspace calls (spec section 2 "v2 resources"), kept in `SimState.v2` and
 * provisioned on first start (also when an older state file has none): one workspace, its
 * human members (the network users alice, bob and carol as `m.alice`, `m.bob`, `m.carol`),
 * three API keys and an admin policy.
 *
 * API keys (member ids are stable, tokens random and secret):
 * - `k.partner`: the partner's key, associated with signing key pairs; its token is the one the
 *   config node uses in simulator mode;
 * - `k.agent`: a second key, associated with a signing agent;
 * - `k.unassociated`: a key with neither, which a transaction policy refuses as a member (spec
 *   section 4 rules).
 * The admin policy "Workspace Policy" has members `m.alice`, `k.partner` and `k.agent`, threshold 1.
 *
 * Times are epoch seconds of the business clock; `addressReadyAtMs` is epoch milliseconds of the
 * business clock (real time plus the `clock/advance` offset).
 */
import { randomBytes } from 'node:crypto';
import type { Engine } from '../engine';
import { newId } from '../ids';
import type { ApiKeyAssociation, V2State } from '../model/v2';

export type { ApiKeyAssociation, V2Account, V2Action, V2ApiKey, V2Expression, V2HumanMember, V2Policy, V2State, V2Wallet } from '../model/v2';

/** The engine's state with the optional v2 part. */
type WithV2 = { v2?: V2State };

/** The v2 state; provisions it first when missing ({@link ensureV2}). */
export function v2State(eng: Engine): V2State {
  return ensureV2(eng);
}

/** Business clock in epoch milliseconds: real time plus the `clock/advance` offset. */
export function businessMs(eng: Engine): number {
  return Date.now() + eng.state.clockOffsetSeconds * 1000;
}

const HUMANS = ['alice', 'bob', 'carol'];
const API_KEYS: ReadonlyArray<{ id: string; name: string; associated: ApiKeyAssociation }> = [
  { id: 'k.partner', name: 'partner API key', associated: 'keyPairs' },
  { id: 'k.agent', name: 'signing agent API key', associated: 'signingAgent' },
  { id: 'k.unassociated', name: 'API key without signing keys', associated: 'none' },
];

/**
 * Provision the workspace on first start (see the module comment); later calls return it.
 * Network users must exist first (network/users.ts ensureUsers).
 */
export function ensureV2(eng: Engine): V2State {
  const st = eng.state as typeof eng.state & WithV2;
  if (st.v2) return st.v2;
  const v2: V2State = { workspaceID: newId(), humans: {}, apiKeys: {}, policies: {}, actions: {}, accounts: {}, wallets: {} };
  for (const username of HUMANS) {
    const user = Object.values(eng.state.users).find((u) => u.username === username);
    if (user) v2.humans[`m.${username}`] = { id: `m.${username}`, userID: user.id, username };
  }
  for (const k of API_KEYS) v2.apiKeys[k.id] = { ...k, token: randomBytes(32).toString('base64url') };
  const adminID = newId();
  v2.policies[adminID] = {
    policyID: adminID,
    name: 'Workspace Policy',
    policyType: 'admin',
    systemType: 1,
    actionsGoverned: [],
    expressionContentType: 'application/json',
    expression: {
      type: 1,
      operation: 1,
      threshold: 1,
      rules: ['m.alice', 'k.partner', 'k.agent'].map((id) => ({ type: 2, operation: 3, threshold: 0, arguments: { id } })),
    },
    adminPolicyID: adminID,
    adminLocked: true,
    allowDuplicates: false,
    created: eng.now(),
  };
  st.v2 = v2;
  eng.changed();
  return v2;
}
