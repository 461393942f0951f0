/**
 * The one back-off policy and the one sleep of the pack: how long to wait before the next try of
 * something that failed (a request's retry, lib/client/transport.ts; a payment's re-send after an
 * unknown outcome, lib/client/submission/submit.ts; a feed's reconnect, lib/feeds/feed.ts), each
 * with its own parameters, and a wait that a close ends at once. Nothing of the API here.
 */

/** How the waits grow: `firstMs`, then times `factor` per try, at most `maxMs`, with jitter. */
export interface BackoffPolicy {
  /** The wait before the first retry (before jitter), ms. */
  firstMs: number;
  /** Each wait is the one before times this (>= 1). */
  factor: number;
  /** The longest wait (before jitter), ms. */
  maxMs: number;
  /**
   * `full`: a random wait in [0, wait) ("full jitter": many clients that failed together spread
   * out); `quarter`: a random wait in [0.75, 1.25) x wait; `none`: the wait itself.
   */
  jitter: 'full' | 'quarter' | 'none';
}

/**
 * The wait before retry `retry` (0 for the first retry, 1 for the second, ...) under `policy`, ms.
 * @param random a number in [0, 1) (default Math.random).
 */
export function backoffDelay(policy: BackoffPolicy, retry: number, random: () => number = Math.random): number {
  const wait = Math.min(policy.maxMs, policy.firstMs * policy.factor ** Math.min(Math.max(0, retry), 64));
  if (policy.jitter === 'full') return random() * wait;
  if (policy.jitter === 'quarter') return wait * (0.75 + random() * 0.5);
  return wait;
}

/** Resolve after `ms` milliseconds, or at once when `signal` aborts (the timer is then cleared). Never rejects. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
