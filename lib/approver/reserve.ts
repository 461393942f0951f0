/**
 * The decide and reserve steps of the approver's pipeline (approver.ts): the ordered rules
 * (rules.ts, pure) evaluated against the velocity windows as read, and an approval reserved in
 * them before it is called (velocity.ts; shared through Redis in
 * lib/coordination/velocity-windows.ts), only if no other decision changed them since the read.
 * Only a definite "not applied" frees it again ({@link ApproverCore.unreserve}).
 */
import { fromBaseUnits } from '../api/amounts';
import { CoordinationUnavailableError } from '../coordination/coordinator';
import { abortableSleep } from '../client/transport';
import { AGAIN, type ApproverCore } from './core';
import { markExpired } from './facts';
import { evaluateRules, type ActionFacts, type EvaluationContext } from './rules';
import type { DecisionRecord } from './types';
import type { VelocityEntry, WindowView } from './velocity';

/**
 * Evaluate the rules against the velocity windows as read, and reserve an approval in them
 * (only if no other decision changed them since the read: else read and decide again).
 * @param ctx the rules' context; its `velocity` is replaced by the windows as read.
 * @returns the decision, or {@link AGAIN} when Redis went away.
 * @throws {Error} when the approver closed while it waited to read again (rejects).
 */
export async function decideAndReserve(core: ApproverCore, facts: ActionFacts, ctx: EvaluationContext, reasons: string[], clientId: string, actionId: string): Promise<DecisionRecord | typeof AGAIN> {
  const counted = facts.asset !== undefined && facts.amount !== undefined;
  const useWindows = facts.asset !== undefined && (core.longestWindowMs > 0 || !core.claims.shared);
  const release = useWindows ? await core.windowLocks.acquire(facts.asset!) : undefined;
  try {
    for (;;) {
      let view: WindowView | undefined;
      if (useWindows) {
        try {
          view = await core.windows.read(facts.asset!, ctx.now);
        } catch (e) {
          if (e instanceof CoordinationUnavailableError) return AGAIN;
          throw e;
        }
        const v = view;
        ctx.velocity = (_asset, windowMs) => v.usage(windowMs, ctx.now);
      }
      const evaluation = evaluateRules(core.opts.rules, facts, ctx, core.opts.defaultDecision);
      const scale = typeof ctx.scale === 'number' ? ctx.scale : undefined;
      const decision: DecisionRecord = {
        decision: evaluation.decision,
        rule: evaluation.rule,
        reasons: [...reasons, ...evaluation.reasons],
        action_id: actionId,
        client_id: clientId,
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
      if (decision.decision !== 'approve' || markExpired(decision, facts, core.opts.now()) || !counted) return decision;
      const entry: VelocityEntry = { at: ctx.now, action: actionId, amount: facts.amount! };
      if (view) {
        let reserved: boolean;
        try {
          reserved = await core.windows.reserve(view, entry);
        } catch (e) {
          if (e instanceof CoordinationUnavailableError) return AGAIN;
          throw e;
        }
        if (!reserved) {
          // Another decision reserved since the read: read again after a short random wait.
          await abortableSleep(2 + Math.random() * 10, core.closing.signal);
          if (core.closed) throw new Error('approver: closed');
          continue;
        }
      }
      // The book counts this instance's own approvals too: written back after a data loss of Redis.
      if (core.claims.shared) core.book.velocity[core.mode].add(facts.asset!, entry.amount, entry.at, actionId);
      return decision;
    }
  } finally {
    release?.();
  }
}
