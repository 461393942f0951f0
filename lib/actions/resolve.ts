/**
 * The resolve loop of a call that approved (PUT) or rejected (DELETE) a core client action
 * (`/coreclient/{client_id}/action/{action_id}`, spec section 4) and whose answer never came (an
 * ApiError whose `failure` is `outcomeUnknown`, lib/api/errors.ts): the action is read
 * (outcome.ts `readCallOutcome`) at once, then on a growing timer, until the answer is definite.
 * Used by the approver (lib/approver/resolution.ts) and the review queue (lib/review/queue.ts)
 * alike; docs/nodes.md "custody-approver" and "custody-review".
 */
import { abortableSleep } from '../support/backoff';
import type { OutcomeReading } from './outcome';

/** Delays between two reads of the action, ms: the first read at once, then growing to the last, which repeats. */
export const RESOLVE_DELAYS_MS: readonly number[] = [0, 500, 1000, 2000, 5000, 10_000, 30_000];

/**
 * How long after a call ended an action still read as `pending` counts as definitely not applied
 * (ms): 60 s, twice the client's default request timeout. Until then a pending read may be the
 * call still in flight.
 */
export const PENDING_SETTLES_AFTER_MS = 60_000;

/** A reading that settled the outcome. */
export type SettledReading = OutcomeReading & { outcome: 'applied' | 'notApplied' };

/** Options of {@link resolveCallOutcome}. */
export interface ResolveOptions {
  /** When the call ended (its answer did not come), epoch ms. */
  callEndedAt: number;
  /** Ends the loop (the owner closes): the outcome is then still unknown. */
  signal: AbortSignal;
  /** The clock, epoch ms (default Date.now). */
  now?: () => number;
  /** Default {@link PENDING_SETTLES_AFTER_MS}. */
  pendingSettlesAfterMs?: number;
}

/**
 * Read until the outcome is definite.
 * @param read one reading of the action (outcome.ts `readCallOutcome` with its client and ids); a
 *   reading that throws (the action could not be read) is tried again after the next delay.
 * @returns the settling reading: `applied` or `notApplied` as read, or `notApplied` once the action
 *   is still pending {@link ResolveOptions.pendingSettlesAfterMs} after the call ended (its `why`
 *   says so); undefined when `signal` aborted first (still unknown: resume later).
 */
export async function resolveCallOutcome(read: () => Promise<OutcomeReading>, options: ResolveOptions): Promise<SettledReading | undefined> {
  const now = options.now ?? Date.now;
  const settlesAfter = options.pendingSettlesAfterMs ?? PENDING_SETTLES_AFTER_MS;
  for (let attempt = 0; ; attempt++) {
    await abortableSleep(RESOLVE_DELAYS_MS[Math.min(attempt, RESOLVE_DELAYS_MS.length - 1)], options.signal);
    if (options.signal.aborted) return undefined;
    let reading: OutcomeReading;
    try {
      reading = await read();
    } catch {
      continue;
    }
    if (options.signal.aborted) return undefined;
    if (reading.outcome !== 'pending') return reading as SettledReading;
    const since = now() - options.callEndedAt;
    if (since >= settlesAfter) return { ...reading, outcome: 'notApplied', why: `${reading.why} ${Math.round(since / 1000)} s after the call ended: it did not take effect` };
  }
}
