/**
 * When a failing connection is worth a log line: once per cause, again when the cause changes or
 * the connection recovers, never at every retry. A feed that cannot connect retries for as long
 * as it runs (lib/feeds/feed.ts, every 30 s at most); without this, each retry would log the
 * same failure again.
 */
import type { ConnectionFailure } from '../client/failure';

/** Options of a {@link FailureReports}. */
export interface FailureReportsOptions {
  /**
   * A cause reported less than this long ago is not reported again, even after a change of cause
   * or a recovery in between (a connection that flaps between two causes logs each at most once
   * per this period). Milliseconds, default 60000.
   */
  quietMs?: number;
  /** The clock, epoch milliseconds (default `Date.now`). */
  now?: () => number;
}

/**
 * The reporting state of one connection. Feed it every failure ({@link failed}) and every
 * success ({@link recovered}); each answers whether to log it:
 * - a failure is logged when its cause ({@link ConnectionFailure.key}) differs from the current
 *   one and was not logged within `quietMs`;
 * - a recovery is logged when the failure it ends was logged.
 * So over any period each cause is logged at most once per `quietMs`, and each logged failure
 * is followed by at most one logged recovery.
 */
export class FailureReports {
  readonly #quietMs: number;
  readonly #now: () => number;
  /** The failure in force (until a recovery), if any. */
  #current: ConnectionFailure | undefined;
  /** True when a failure of the current outage was logged. */
  #outageLogged = false;
  /** When each cause was last logged (epoch ms), by key. */
  readonly #loggedAt = new Map<string, number>();

  constructor(options: FailureReportsOptions = {}) {
    this.#quietMs = options.quietMs ?? 60000;
    this.#now = options.now ?? Date.now;
  }

  /** The failure in force: the last one since the last recovery, or undefined. */
  get current(): ConnectionFailure | undefined {
    return this.#current;
  }

  /**
   * A failed attempt.
   * @returns `changed`: the cause differs from the one in force (a status should show it);
   *   `log`: log it (see the class comment).
   */
  failed(failure: ConnectionFailure): { changed: boolean; log: boolean } {
    if (this.#current?.key === failure.key) {
      this.#current = failure;
      return { changed: false, log: false };
    }
    this.#current = failure;
    const now = this.#now();
    const last = this.#loggedAt.get(failure.key);
    if (last !== undefined && now - last < this.#quietMs) return { changed: true, log: false };
    this.#loggedAt.set(failure.key, now);
    this.#outageLogged = true;
    return { changed: true, log: true };
  }

  /**
   * A successful connection.
   * @returns `changed`: a failure was in force; `log`: log the recovery (the failure it ends was logged).
   */
  recovered(): { changed: boolean; log: boolean } {
    const changed = this.#current !== undefined;
    const log = changed && this.#outageLogged;
    this.#current = undefined;
    this.#outageLogged = false;
    return { changed, log };
  }
}
