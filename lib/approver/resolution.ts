/**
 * The resolve step of the approver's pipeline (approver.ts): a call whose outcome is unknown is
 * never counted as failed. Its action is read (outcome.ts `readCallOutcome`, GET
 * /coreclient/{client_id}/action/{action_id}, spec section 4) at once, then on a timer, and after
 * a restart, until the answer is definite; a `resolved` line records it (docs/audit.md). The
 * decision waits for it at most `reportUnknownAfterMs`, then is handed back as still unknown
 * while the reading goes on in the background.
 */
import { abortableSleep } from '../support/backoff';
import type { Entry, Resolution } from './book';
import type { ApproverCore } from './core';
import { ActionNotAppliedError, readCallOutcome } from '../actions/outcome';
import { OutcomeUnknownError } from '../api/errors';
import { resolveCallOutcome } from '../actions/resolve';
import type { Decision } from './rules';
import { OUTPUT, type ApproverOutcome, type ApproverOutput } from './types';

/** Resolves the calls of one approver whose outcome is unknown. */
export class Resolver {
  readonly #core: ApproverCore;
  /** Resolutions running in the background. */
  readonly #running = new Set<Promise<unknown>>();

  constructor(core: ApproverCore) {
    this.#core = core;
  }

  /**
   * Wait for the resolution of a call whose outcome is unknown, at most `reportUnknownAfterMs`
   * (or until close).
   * @param redelivered the action came again (a re-send, a restart): an applied outcome comes back
   *   `redelivered`, a "not applied" one returns undefined (decide it again).
   */
  async wait(key: string, entry: Entry, action: Record<string, unknown>, redelivered: boolean): Promise<ApproverOutcome | undefined> {
    const resolving = this.start(key, entry);
    const decision = entry.decision!;
    const output: ApproverOutput = OUTPUT[decision.decision];
    const timer = new AbortController();
    const late = abortableSleep(this.#core.opts.reportUnknownAfterMs, AbortSignal.any([timer.signal, this.#core.closing.signal])).then(() => ({ outcome: 'unknown' }) as Resolution);
    const r = await Promise.race([resolving, late]);
    timer.abort();
    const mark = redelivered ? { redelivered: true } : {};
    if (r.outcome === 'applied') return { decision: { ...decision, ...mark, outcome: 'applied' }, output, action };
    if (r.outcome === 'notApplied') {
      if (redelivered && r.status === 'pending') return undefined;
      const verb = decision.decision === 'approve' ? 'approve' : 'reject';
      return {
        decision: { ...decision, ...mark, outcome: 'notApplied' },
        output,
        action,
        error: new ActionNotAppliedError(`${verb} of action ${decision.action_id}: not applied: ${r.why}`, { outcome: 'notApplied', status: r.status, why: r.why }),
      };
    }
    const verb = decision.decision === 'approve' ? 'approve' : 'reject';
    return {
      decision: { ...decision, ...mark, outcome: 'unknown' },
      output,
      action,
      error: new OutcomeUnknownError(
        { decision: verb, client_id: decision.client_id, action_id: decision.action_id },
        'it may have taken effect; still counted, and being resolved by reading the action',
        entry.callError,
      ),
    };
  }

  /** Start resolving `entry` (once): read the action at once, then on a timer, until the answer is definite or the approver closes. */
  start(key: string, entry: Entry): Promise<Resolution> {
    if (entry.resolving) return entry.resolving;
    const job = this.#resolve(key, entry);
    entry.resolving = job;
    this.#running.add(job);
    void job.finally(() => {
      this.#running.delete(job);
      if (entry.state === 'unknown') entry.resolving = undefined;
    });
    return job;
  }

  /** Read the action until the answer is definite (or the approver closes); record it in a `resolved` line, then settle the claim and the reservation. */
  async #resolve(key: string, entry: Entry): Promise<Resolution> {
    const decision = entry.decision!;
    const ids = { client_id: decision.client_id, action_id: decision.action_id };
    // Only approve and reject calls are made, so only they are resolved.
    const verb = decision.decision as Exclude<Decision, 'hold'>;
    const reading = await resolveCallOutcome(async () => readCallOutcome(await this.#core.opts.client(), ids, verb, entry.details), {
      callEndedAt: entry.callEndedAt ?? 0,
      signal: this.#core.closing.signal,
      now: this.#core.opts.now,
      pendingSettlesAfterMs: this.#core.opts.pendingSettlesAfterMs,
    });
    if (!reading) return { outcome: 'unknown' };
    const { outcome, why } = reading;
    await this.#core.append({ kind: 'resolved', approver: this.#core.opts.approverId, mode: decision.mode, action_id: decision.action_id, client_id: decision.client_id, outcome, status: reading.status, ...(reading.txStatus ? { txStatus: reading.txStatus } : {}), why, at: new Date(this.#core.opts.now()).toISOString() });
    if (outcome === 'applied') {
      entry.state = 'done';
      this.#core.final(entry.claim, { decision: { ...decision, outcome }, output: OUTPUT[decision.decision], action: ids });
    } else {
      entry.state = reading.status === 'pending' ? 'failed' : 'done';
      await this.#core.unreserve(decision);
      await this.#core.claims.release(entry.claim);
    }
    entry.claim = undefined;
    this.#core.opts.onUnknownChange?.(this.#core.unknown, { ...ids, outcome, why });
    return { outcome, status: reading.status, why };
  }

  /** Once every resolution running now has ended (they end at close). */
  async settled(): Promise<void> {
    await Promise.allSettled(Array.from(this.#running));
  }
}
