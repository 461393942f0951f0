/**
 * Business rules of the v2 workspace calls (spec section 4 "v2 endpoints" and its rules for
 * policies; section 2 "v2 resources"). Synchronous; each mutation calls `eng.changed()`.
 *
 * Decisions where the spec is silent:
 * - Members are human members (`m.alice`, `m.bob`, `m.carol`) or API keys (`k.partner`,
 *   `k.agent`, `k.unassociated`); any other id is refused (400, naming the rule).
 * - An API key member must be associated with signing key pairs or a signing agent, else 400.
 * - A PUT of a policy makes an update request (action, `type` `policyUpdate`): the policy is
 *   changed only once approved. Who decides: the members of the admin policy when the policy is
 *   `adminLocked` (and for an admin policy itself), else the members of the policy itself, as
 *   they are when the request is made; approvals needed: that policy's threshold. One rejection
 *   rejects the request.
 * - A human approves through a control endpoint; an API key that is a member approves with
 *   `PUT /api/v2/actions/{actionID}` under its own token. The API key that made the request
 *   cannot approve it (spec section 4: "another API key"); it may reject it.
 * - A transaction of a wallet (made through a control endpoint) needs the threshold of the
 *   wallet's policy: threshold 1 completes it with one approval.
 */
import { newAddress, newId } from '../ids';
import type { Engine } from '../engine';
import type { PolicyBody } from '../../lib/api/v2/policy';
import { badRequest, conflict, forbidden, notFound } from '../errors';
import { businessMs, v2State, type V2Action, type V2Expression, type V2Policy, type V2State, type V2Wallet } from './state';

/** A policy as listed (spec section 2). */
export function policyView(p: V2Policy): Omit<V2Policy, 'created'> {
  const { created: _c, ...rest } = p;
  return JSON.parse(JSON.stringify(rest));
}

/** @throws 404 for another workspace id. */
export function checkWorkspace(eng: Engine, workspaceID: string): V2State {
  const v2 = v2State(eng);
  if (workspaceID !== v2.workspaceID) throw notFound(`workspaceID: no workspace ${workspaceID}`);
  return v2;
}

/** Member ids of an expression. */
export function membersOf(expr: V2Expression): string[] {
  return expr.rules.map((r) => r.arguments.id);
}

/**
 * Check an expression's meaning: the top level and member rules of spec section 2, known
 * members, each once, API keys associated with signing, threshold within 1..members.
 * @throws 400 naming the field (`expression.rules[1].arguments.id: ...`).
 */
function checkExpression(v2: V2State, expr: V2Expression): void {
  if (expr.type !== 1 || expr.operation !== 1) throw badRequest('expression: the top-level node must have type 1 and operation 1');
  const seen = new Set<string>();
  expr.rules.forEach((r, i) => {
    const f = `expression.rules[${i}]`;
    if (r.type !== 2 || r.operation !== 3 || r.threshold !== 0) throw badRequest(`${f}: a member rule has type 2, operation 3, threshold 0`);
    const id = r.arguments.id;
    if (seen.has(id)) throw badRequest(`${f}.arguments.id: ${id} is a member twice`);
    seen.add(id);
    const key = v2.apiKeys[id];
    if (key) {
      if (key.associated === 'none') throw badRequest(`${f}.arguments.id: API key ${id} is not associated with a signing agent or signing key pairs; associate it first, then add it to a policy`);
    } else if (!v2.humans[id]) {
      throw badRequest(`${f}.arguments.id: ${id} is neither a human member nor an API key of the workspace`);
    }
  });
  if (expr.threshold < 1 || expr.threshold > expr.rules.length) throw badRequest(`expression.threshold: must be from 1 to the number of member rules (${expr.rules.length})`);
}

function checkAdminPolicy(v2: V2State, adminPolicyID: string): void {
  const admin = v2.policies[adminPolicyID];
  if (!admin) throw badRequest(`adminPolicyID: no policy ${adminPolicyID}`);
  if (admin.policyType !== 'admin') throw badRequest(`adminPolicyID: policy ${adminPolicyID} is a ${admin.policyType} policy, not an admin policy`);
}

/** POST policies: a new transaction policy. @returns `{policyID}`. */
export function createPolicy(eng: Engine, workspaceID: string, b: PolicyBody): { policyID: string } {
  const v2 = checkWorkspace(eng, workspaceID);
  if (b.policyType !== 'transaction') throw badRequest('policyType: only transaction policies are created through the API');
  checkAdminPolicy(v2, b.adminPolicyID);
  checkExpression(v2, b.expression);
  const policyID = newId();
  v2.policies[policyID] = {
    policyID,
    name: b.name,
    policyType: 'transaction',
    systemType: 0,
    actionsGoverned: [],
    expressionContentType: 'application/json',
    expression: JSON.parse(JSON.stringify(b.expression)),
    adminPolicyID: b.adminPolicyID,
    adminLocked: b.adminLocked ?? false,
    allowDuplicates: b.allowDuplicates ?? false,
    created: eng.now(),
  };
  eng.changed();
  return { policyID };
}

/** The policy whose members decide on changes of `p` (see the module comment). */
function governingPolicy(v2: V2State, p: V2Policy): V2Policy {
  if (p.policyType === 'admin' || !p.adminLocked) return p;
  return v2.policies[p.adminPolicyID] ?? p;
}

/**
 * PUT policies/{policyID}: the full body; makes an update request awaiting approval.
 * @returns `{actionID, policyID, status: 'pending'}`.
 */
export function updatePolicy(eng: Engine, workspaceID: string, policyID: string, b: PolicyBody, requestedBy: string): { actionID: string; policyID: string; status: 'pending' } {
  const v2 = checkWorkspace(eng, workspaceID);
  const p = v2.policies[policyID];
  if (!p) throw notFound(`policyID: no policy ${policyID}`);
  if (b.policyType !== p.policyType) throw badRequest(`policyType: the policy is a ${p.policyType} policy`);
  if (p.policyType === 'transaction') checkAdminPolicy(v2, b.adminPolicyID);
  checkExpression(v2, b.expression);
  const gov = governingPolicy(v2, p);
  const actionID = newId();
  v2.actions[actionID] = {
    actionID,
    type: 'policyUpdate',
    status: 'pending',
    workspaceID,
    policyID,
    governingPolicyID: gov.policyID,
    governingMembers: membersOf(gov.expression),
    threshold: gov.expression.threshold,
    approvers: [],
    rejectedBy: '',
    proposed: {
      name: b.name,
      policyType: p.policyType,
      expressionContentType: 'application/json',
      expression: JSON.parse(JSON.stringify(b.expression)),
      adminPolicyID: p.policyType === 'admin' ? p.adminPolicyID : b.adminPolicyID,
      adminLocked: b.adminLocked ?? false,
      allowDuplicates: b.allowDuplicates ?? false,
    },
    requestedBy,
    timestamp: eng.now(),
  };
  eng.changed();
  return { actionID, policyID, status: 'pending' };
}

/** An action as served. */
export function actionView(a: V2Action): Record<string, unknown> {
  return {
    actionID: a.actionID,
    type: a.type,
    status: a.status,
    workspaceID: a.workspaceID,
    policyID: a.policyID,
    ...(a.walletID ? { walletID: a.walletID } : {}),
    threshold: a.threshold,
    approvedCount: a.approvers.length,
    approvers: [...a.approvers],
    members: [...a.governingMembers],
    rejectedBy: a.rejectedBy,
    requestedBy: a.requestedBy,
    timestamp: a.timestamp,
  };
}

/** An action by id. @throws 404. */
export function getAction(eng: Engine, actionID: string): V2Action {
  const a = v2State(eng).actions[actionID];
  if (!a) throw notFound(`actionID: no action ${actionID}`);
  return a;
}

/**
 * Approve or reject an action as `memberID` (a human member or an API key).
 * @throws 403 when `memberID` is not a member of the governing policy (or an API key without
 *   signing association); 409 when the action is no longer pending or the member already approved.
 */
export function decide(eng: Engine, actionID: string, memberID: string, approve: boolean): V2Action {
  const v2 = v2State(eng);
  const a = getAction(eng, actionID);
  if (a.status !== 'pending') throw conflict(`actionID: action ${actionID} is ${a.status}, not pending`);
  if (!a.governingMembers.includes(memberID)) throw forbidden(`${memberID} is not a member of policy ${a.governingPolicyID}, which decides on action ${actionID}`);
  const key = v2.apiKeys[memberID];
  if (key && key.associated === 'none') throw forbidden(`API key ${memberID} is not associated with a signing agent or signing key pairs`);
  if (a.approvers.includes(memberID)) throw conflict(`${memberID} already approved action ${actionID}`);
  if (approve && memberID === a.requestedBy) throw forbidden(`${memberID} made update request ${actionID} and cannot approve it: another member must`);
  if (!approve) {
    a.status = 'rejected';
    a.rejectedBy = memberID;
  } else {
    a.approvers.push(memberID);
    if (a.approvers.length >= a.threshold) {
      a.status = 'approved';
      if (a.type === 'policyUpdate' && a.proposed) {
        const p = v2.policies[a.policyID];
        if (p) Object.assign(p, JSON.parse(JSON.stringify(a.proposed)));
      }
    }
  }
  eng.changed();
  return a;
}

/** The member id of a human given as member id, network user id, e-mail or username. @throws 404. */
export function humanMemberId(eng: Engine, who: string): string {
  const v2 = v2State(eng);
  const key = who.trim().toLowerCase();
  if (v2.humans[who]) return who;
  const user = Object.values(eng.state.users).find((u) => u.id === who || u.email === key || u.username === key);
  const m = user && Object.values(v2.humans).find((h) => h.userID === user.id);
  if (!m) throw notFound(`user_id: no human member ${who}`);
  return m.id;
}

/** POST accounts: a portfolio. @returns `{accountID}`. */
export function createAccount(eng: Engine, workspaceID: string, b: { name: string; type?: 'standard' | 'exchange' }): { accountID: string } {
  const v2 = checkWorkspace(eng, workspaceID);
  const accountID = newId();
  v2.accounts[accountID] = { accountID, name: b.name, type: b.type ?? 'standard', created: eng.now() };
  eng.changed();
  return { accountID };
}

/** A portfolio by id. @throws 404. */
export function getAccount(eng: Engine, workspaceID: string, accountID: string) {
  const v2 = checkWorkspace(eng, workspaceID);
  const a = v2.accounts[accountID];
  if (!a) throw notFound(`accountID: no portfolio ${accountID}`);
  return a;
}

/** The wallet as served: `address` '' until the key computation is over (business clock). */
export function walletView(eng: Engine, w: V2Wallet): { walletID: string; accountID: string; name: string; connectPlugin: string; policyID: string; address: string } {
  return { walletID: w.walletID, accountID: w.accountID, name: w.name, connectPlugin: w.connectPlugin, policyID: w.policyID, address: businessMs(eng) >= w.addressReadyAtMs ? w.address : '' };
}

/** Portfolio with its wallets. */
export function accountView(eng: Engine, workspaceID: string, accountID: string): Record<string, unknown> {
  const a = getAccount(eng, workspaceID, accountID);
  const wallets = Object.values(v2State(eng).wallets).filter((w) => w.accountID === accountID).map((w) => walletView(eng, w));
  return { accountID: a.accountID, name: a.name, type: a.type, wallets };
}

/** Key computation time of a new wallet, milliseconds: 4000 to 5000 (spec section 4). */
function keyComputationMs(): number {
  return 4000 + Math.floor(Math.random() * 1001);
}

/** POST accounts/{accountID}/wallets: the wallet record (its address computed over 4 to 5 s of business time). */
export function createWallet(eng: Engine, workspaceID: string, accountID: string, b: { name: string; connectPlugin: 'defi' | 'wc'; policyID: string }): V2Wallet {
  const v2 = checkWorkspace(eng, workspaceID);
  getAccount(eng, workspaceID, accountID);
  const p = v2.policies[b.policyID];
  if (!p) throw badRequest(`policyID: no policy ${b.policyID}`);
  if (p.policyType !== 'transaction') throw badRequest(`policyID: policy ${b.policyID} is an admin policy; a wallet needs a transaction policy`);
  const walletID = newId();
  const w: V2Wallet = {
    walletID,
    accountID,
    name: b.name,
    connectPlugin: b.connectPlugin,
    policyID: b.policyID,
    address: newAddress('ETH').address,
    addressReadyAtMs: businessMs(eng) + keyComputationMs(),
    created: eng.now(),
  };
  v2.wallets[walletID] = w;
  eng.changed();
  return w;
}

/** A wallet of a portfolio. @throws 404. */
export function getWallet(eng: Engine, workspaceID: string, accountID: string, walletID: string): V2Wallet {
  getAccount(eng, workspaceID, accountID);
  const w = v2State(eng).wallets[walletID];
  if (!w || w.accountID !== accountID) throw notFound(`walletID: no wallet ${walletID} in portfolio ${accountID}`);
  return w;
}

/** A transaction of a wallet awaiting the approvals of its policy (control endpoint). */
export function createTransaction(eng: Engine, walletID: string): V2Action {
  const v2 = v2State(eng);
  const w = v2.wallets[walletID];
  if (!w) throw notFound(`walletID: no wallet ${walletID}`);
  const p = v2.policies[w.policyID];
  const actionID = newId();
  const a: V2Action = {
    actionID,
    type: 'transaction',
    status: 'pending',
    workspaceID: v2.workspaceID,
    policyID: p.policyID,
    governingPolicyID: p.policyID,
    governingMembers: membersOf(p.expression),
    threshold: p.expression.threshold,
    approvers: [],
    rejectedBy: '',
    walletID,
    requestedBy: 'simulator',
    timestamp: eng.now(),
  };
  v2.actions[actionID] = a;
  eng.changed();
  return a;
}
