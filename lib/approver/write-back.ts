/**
 * After a data loss of the coordination Redis (docs/scale-out.md, "Redis down, Redis lost"): an
 * approver writes back what it knows, the actions it decided and the approvals in its velocity
 * windows, so the instances go on deciding each action once within the limits.
 */
import type { ApproverCore } from './core';
import type { VelocityEntry } from './velocity';
import { OUTPUT, type ApproverOutput, type DecidedRecord } from './types';

/** Write back the decided actions of `core`'s mode (within the claims' "decided" lifetime) and its velocity windows. */
export async function writeBack(core: ApproverCore): Promise<void> {
  const decided: Array<[string, string]> = [];
  const since = core.opts.now() - core.claims.decidedTtlMs;
  // Settled ones only: an unknown outcome is not "decided" yet (its claim is gone with the data; a takeover reads the action first).
  for (const { clientId, actionId, decision } of core.book.decidedSince(core.mode, since)) {
    const output: ApproverOutput = decision.expired ? 'held' : OUTPUT[decision.decision];
    decided.push([`${core.mode}:${clientId}:${actionId}`, JSON.stringify({ decision, output, instance: decision.decidedBy ?? core.claims.instance } satisfies DecidedRecord)]);
  }
  await core.claims.restore(decided);
  if (core.longestWindowMs === 0) return;
  const now = core.opts.now();
  const byAsset = new Map<string, Map<string, VelocityEntry>>();
  const put = (asset: string, e: VelocityEntry) => {
    let m = byAsset.get(asset);
    if (!m) byAsset.set(asset, (m = new Map()));
    m.set(e.action, e);
  };
  for (const e of await core.windows.entries(now)) put(e.asset, { at: e.at, action: e.action, amount: e.amount });
  for (const e of core.book.velocity[core.mode].entries()) put(e.asset, { at: e.at, action: e.action, amount: e.amount });
  const horizon = now - core.longestWindowMs;
  for (const [asset, m] of byAsset) await core.windows.restore(asset, [...m.values()].filter((e) => e.at >= horizon));
}
