/**
 * The decide and reserve steps of the approver's pipeline (approver.ts): the ordered rules
 * (rules.ts, pure) evaluated against the velocity windows as read, and an approval reserved in
 * them before it is called (velocity.ts; shared through Redis in
 * lib/approver/velocity-redis.ts), only if no other decision changed them since the read.
 * Only a definite "not applied" frees it again ({@link ApproverCore.unreserve}).
 *
 * **Group commit.** The decisions of one asset that wait while a read-evaluate-reserve runs are
 * taken together as the next batch (at most {@link BATCH_MAX}): one read of the window, the rules
 * evaluated for each in arrival order (each counting the approvals the batch made before it), and
 * one reserve of all the batch's approvals, which passes only if the window did not change since
 * the read (else the whole batch is read and evaluated again). The outcome is the one a strict
 * one-at-a-time order would give; with the window shared through Redis it costs two round trips
 * per batch instead of two per decision (docs/scale-out.md "Throughput").
 */
import { fromBaseUnits } from '../api/amounts';
import { CoordinationUnavailableError } from '../coordination/coordinator';
import { abortableSleep } from '../support/backoff';
import { KeyedBatches } from '../support/keyed-batches';
import { AGAIN, type ApproverCore } from './core';
import { markExpired } from './facts';
import { evaluateRules, type ActionFacts, type EvaluationContext } from './rules';
import type { DecisionRecord } from './types';
import type { VelocityEntry, WindowView } from './velocity';

/** Most decisions of one asset evaluated and reserved together. */
export const BATCH_MAX = 64;

/** One decision waiting for its asset's window. */
interface WindowJob {
  facts: ActionFacts;
  ctx: EvaluationContext;
  reasons: string[];
  clientId: string;
  actionId: string;
  resolve(d: DecisionRecord | typeof AGAIN): void;
  reject(e: unknown): void;
}

/** The batches of each approver (its core), per asset. */
const batchesOf = new WeakMap<ApproverCore, KeyedBatches<WindowJob>>();

/** The batches of `core`: one read-evaluate-reserve per asset at a time, the decisions waiting meanwhile taken as the next batch. */
function batchesFor(core: ApproverCore): KeyedBatches<WindowJob> {
  let b = batchesOf.get(core);
  if (!b) batchesOf.set(core, (b = new KeyedBatches((asset, batch) => runWindowBatch(core, asset, batch), BATCH_MAX)));
  return b;
}

/** Run one batch of `asset`: each job resolves with its decision, or rejects with what stopped the batch. */
async function runWindowBatch(core: ApproverCore, asset: string, batch: WindowJob[]): Promise<void> {
  try {
    const out = await decideBatch(core, asset, batch);
    batch.forEach((job, i) => job.resolve(out[i]));
  } catch (e) {
    for (const job of batch) job.reject(e);
  }
}

/** The decision record of `job` as `evaluation` decided it. */
function recordOf(core: ApproverCore, job: WindowJob, evaluation: ReturnType<typeof evaluateRules>): DecisionRecord {
  const { facts, ctx } = job;
  const scale = typeof ctx.scale === 'number' ? ctx.scale : undefined;
  return {
    decision: evaluation.decision,
    rule: evaluation.rule,
    reasons: [...job.reasons, ...evaluation.reasons],
    action_id: job.actionId,
    client_id: job.clientId,
    type: facts.type,
    asset: facts.asset ?? null,
    amount: facts.amount !== undefined ? facts.amount.toString() : null,
    amountDecimal: facts.amount !== undefined && scale !== undefined ? fromBaseUnits(facts.amount, scale) : null,
    destination: facts.destination ?? null,
    velocity: evaluation.velocity,
    mode: core.mode,
    decidedAt: new Date(ctx.now).toISOString(),
    expireTime: facts.expireTime,
  };
}

/**
 * Evaluate one batch of `asset` against one read of its window, then reserve its approvals at
 * once; again from the read when another decision changed the window meanwhile.
 * @returns each job's decision, or {@link AGAIN} for all when Redis went away.
 * @throws {Error} when the approver closed while it waited to read again (rejects).
 */
async function decideBatch(core: ApproverCore, asset: string, batch: WindowJob[]): Promise<Array<DecisionRecord | typeof AGAIN>> {
  for (;;) {
    let view: WindowView;
    try {
      view = await core.windows.read(asset, Math.max(...batch.map((j) => j.ctx.now)));
    } catch (e) {
      if (e instanceof CoordinationUnavailableError) return batch.map(() => AGAIN);
      throw e;
    }
    // The approvals this batch made so far: counted by the decisions after them.
    const made: VelocityEntry[] = [];
    // Reservations of earlier decisions of these actions (a holder that died before its call, the
    // action then read first and found pending): not counted against themselves; freed when decided otherwise.
    const stale: VelocityEntry[] = [];
    const decisions = batch.map((job) => {
      const { facts, ctx } = job;
      const own = view.entry(job.actionId);
      ctx.velocity = (_asset, windowMs) => {
        const u = view.usage(windowMs, ctx.now);
        let { sum, count } = u;
        if (own && own.at > ctx.now - windowMs) {
          sum -= own.amount;
          count--;
        }
        for (const e of made) {
          if (e.at > ctx.now - windowMs) {
            sum += e.amount;
            count++;
          }
        }
        return { sum, count };
      };
      const decision = recordOf(core, job, evaluateRules(core.opts.rules, facts, ctx, core.opts.defaultDecision));
      const counted = facts.amount !== undefined;
      if (decision.decision === 'approve' && !markExpired(decision, facts, core.opts.now()) && counted) made.push({ at: ctx.now, action: job.actionId, amount: facts.amount! });
      else if (own) stale.push(own);
      return decision;
    });
    if (made.length > 0) {
      let reserved: boolean;
      try {
        reserved = await core.windows.reserve(view, made);
      } catch (e) {
        if (e instanceof CoordinationUnavailableError) return batch.map(() => AGAIN);
        throw e;
      }
      if (!reserved) {
        // Another decision reserved since the read: read again after a short random wait.
        await abortableSleep(2 + Math.random() * 10, core.closing.signal);
        if (core.closed) throw new Error('approver: closed');
        continue;
      }
      for (const e of made) core.noteOwn(asset, e);
    }
    // Not approved now: its earlier reservation goes (Redis away: it stays counted, the safe side).
    for (const e of stale) await core.release(asset, e.action, e.at);
    return decisions;
  }
}

/**
 * Evaluate the rules against the velocity windows as read, and reserve an approval in them
 * (only if no other decision changed them since the read: else read and decide again). The
 * decisions of one asset go in batches (see the module comment).
 * @param ctx the rules' context; its `velocity` is replaced by the windows as read.
 * @returns the decision, or {@link AGAIN} when Redis went away.
 * @throws {Error} when the approver closed while it waited to read again (rejects).
 */
export function decideAndReserve(core: ApproverCore, facts: ActionFacts, ctx: EvaluationContext, reasons: string[], clientId: string, actionId: string): Promise<DecisionRecord | typeof AGAIN> {
  const useWindows = facts.asset !== undefined && (core.longestWindowMs > 0 || !core.claims.shared);
  return new Promise((resolve, reject) => {
    const job: WindowJob = { facts, ctx, reasons, clientId, actionId, resolve, reject };
    if (useWindows) {
      batchesFor(core).submit(facts.asset!, job);
      return;
    }
    // No window to count in (no asset, or shared claims without a velocity rule): the rules alone, with the context's own velocity.
    const decision = recordOf(core, job, evaluateRules(core.opts.rules, facts, ctx, core.opts.defaultDecision));
    const approved = decision.decision === 'approve' && !markExpired(decision, facts, core.opts.now());
    if (approved && facts.asset !== undefined && facts.amount !== undefined) core.noteOwn(facts.asset, { at: ctx.now, action: actionId, amount: facts.amount });
    resolve(decision);
  });
}
