/**
 * A tracker that follows many transactions to their final state (spec section 3) with ONE timer:
 * a min-heap of next-read times and a single `setTimeout` armed for the earliest; at most
 * `maxInFlight` reads at a time; a backoff per transaction; a deadline per transaction at its own
 * `expires` (epoch seconds, from the first read that shows it) plus a margin. No Node-RED import.
 *
 * Units: `expires` epoch seconds (as in the API); every delay, margin and time below is in
 * milliseconds (times as `Date.now()`).
 */
import { ApiError, ValidationError } from '../api/errors';
import type { TransactionIds, TransactionKind } from '../api/kinds';
import type { TransactionRead } from '../client/read-transaction';

/** What to follow: the kind, `tx_id` and the kind's owner id (`company_id`, `client_id` for sweeps). */
export interface TrackTarget extends TransactionIds {
  kind: TransactionKind;
  /**
   * The transaction's `expires` when already known (epoch seconds); the first read that shows
   * `expires` replaces it.
   */
  expires?: number;
}

/**
 * Reads one transaction. In a node: `(t) => readTransaction(client, t.kind, t)` (lib/client/read-transaction.ts).
 * @throws {ApiError} a 4xx other than 408/429 ends the tracking as an error; anything else is retried.
 */
export type TrackRead = (target: TrackTarget) => Promise<TransactionRead>;

/** One followed transaction, as the callbacks see it. `C` is the caller's own context (e.g. the msg). */
export interface Tracked<C = unknown> {
  /** What is followed. */
  readonly target: TrackTarget;
  /** The caller's context given to {@link Tracker.track}. */
  readonly context: C;
  /** The last status read; undefined before the first successful read. */
  state?: string;
  /** The last successful read. */
  last?: TransactionRead;
  /** Reads made so far (successful or not). */
  reads: number;
  /** When tracking started, ms since the epoch. */
  readonly startedAt: number;
  /** When tracking stops unless final: `expires` * 1000 + margin, ms since the epoch. */
  deadline: number;
}

/**
 * Where a tracking stood before a restart (lib/tracking/track-store.ts `TrackRecord`), for {@link Tracker.track}:
 * the tracking goes on with the same start and deadline instead of starting over, and reads the
 * transaction at once, at least once even when the deadline passed while the process was down (a
 * transaction that became final meanwhile is reported final, not timed out).
 */
export interface TrackResume {
  /** When the tracking first started, ms since the epoch. */
  startedAt: number;
  /** The deadline recorded, ms since the epoch. */
  deadline: number;
  /** Reads made before (default 0). */
  reads?: number;
  /** The last status read before; a first read showing the same status is then no progress. */
  state?: string;
}

/** Callbacks of a {@link Tracker}; each is called at most once per transaction except `progress` and `readError`. */
export interface TrackerCallbacks<C> {
  /** The status changed (the first successful read counts as a change). Called before `final`. */
  progress?(tracked: Tracked<C>, read: TransactionRead): void;
  /** A final status was read; tracking of it has ended. */
  final(tracked: Tracked<C>, read: TransactionRead): void;
  /** The deadline passed without a final status; tracking of it has ended. `tracked.state` is the last status seen. */
  timedOut(tracked: Tracked<C>): void;
  /** A read failed for good (a 4xx answer such as 404, or input refused); tracking of it has ended. */
  error(tracked: Tracked<C>, err: Error): void;
  /** A read failed and will be tried again with backoff (no answer, 5xx, 408, 429). */
  readError?(tracked: Tracked<C>, err: Error): void;
}

/** The timer functions a tracker uses (injectable for tests). */
export interface TrackerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Current time, ms since the epoch. */
  now(): number;
}

/** Options of a {@link Tracker}; all times in milliseconds. */
export interface TrackerOptions {
  /** Delay before the first read, ms (default 1000). */
  firstDelayMs?: number;
  /** Largest delay between two reads, ms (default 30000). */
  maxDelayMs?: number;
  /** Each delay is the previous one times this, up to `maxDelayMs` (default 1.5). */
  factor?: number;
  /** Added to the transaction's `expires` to make the deadline, ms (default 60000). */
  marginMs?: number;
  /** Deadline used while the transaction's `expires` is unknown (no read has shown it yet): `startedAt` + this, ms (default 3600000). */
  unknownExpiryMs?: number;
  /** Reads in flight at most, across all transactions (default 8). */
  maxInFlight?: number;
  /** Timer functions (default the global ones and `Date.now`). */
  timers?: TrackerTimers;
}

/** Shortest delay between two reads of one transaction unless `maxDelayMs` is smaller, ms. */
const MIN_REPEAT_MS = 250;

/** Longest delay `setTimeout` accepts, ms. */
const MAX_TIMER_MS = 2147483647;

/** Internal record: a {@link Tracked} plus its place in the schedule. */
interface Entry<C> extends Tracked<C> {
  /** Next time to act (read, or time out), ms. */
  due: number;
  /** Index in the heap; -1 when not in it (queued or reading). */
  heapIndex: number;
  /** The current backoff delay, ms. */
  delay: number;
  /** A read of it is in flight. */
  reading: boolean;
  /** A wake came during a read: read again at once after it. */
  woken: boolean;
  /** Waiting in the ready queue for a free read slot. */
  queued: boolean;
  /** Ended (final, timed out, error, removed, closed). */
  done: boolean;
  /** Read once before timing out, even past the deadline (a resumed tracking). */
  mustRead: boolean;
}

/**
 * Follows many transactions to a final state of spec section 3 with one timer.
 *
 * Per transaction: first read after `firstDelayMs`, then after delays growing by `factor` up to
 * `maxDelayMs`; {@link wake} reads it at once (when a feed shows a move). After each read: a final
 * status -> `final`; a changed status -> `progress`; the deadline is `expires` (epoch seconds,
 * from the answer) * 1000 + `marginMs`; past it without a final status -> `timedOut` (no read is
 * made at the deadline itself: the margin is the time given to see the final status after
 * `expires`). A failed read is retried with the same backoff until the deadline, except a 4xx
 * answer other than 408/429 (e.g. 404 unknown transaction) or refused input, which ends it with
 * `error`.
 *
 * Scale: one `setTimeout` for all transactions, re-armed only when the earliest due time moves
 * earlier or the timer fires; at most `maxInFlight` reads at once, the rest wait in a queue.
 */
export class Tracker<C = unknown> {
  private readonly heap: Entry<C>[] = [];
  private readonly byTxId = new Map<string, Set<Entry<C>>>();
  private readonly ready: Entry<C>[] = [];
  private timer: unknown = undefined;
  private timerAt = Infinity;
  private inFlight = 0;
  private closed = false;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly factor: number;
  private readonly marginMs: number;
  private readonly unknownExpiryMs: number;
  private readonly maxInFlight: number;
  private readonly timers: TrackerTimers;

  /**
   * @param read reads one transaction (see {@link TrackRead}).
   * @param callbacks what to call on progress, final, timeout and error.
   * @param options delays, margin and limits (ms); see {@link TrackerOptions}.
   * @throws {RangeError} for a negative delay or margin, `maxDelayMs` not above 0, a factor below 1 or `maxInFlight` below 1.
   */
  constructor(private readonly read: TrackRead, private readonly callbacks: TrackerCallbacks<C>, options: TrackerOptions = {}) {
    this.firstDelayMs = options.firstDelayMs ?? 1000;
    this.maxDelayMs = Math.max(options.maxDelayMs ?? 30000, this.firstDelayMs);
    this.factor = options.factor ?? 1.5;
    this.marginMs = options.marginMs ?? 60000;
    this.unknownExpiryMs = options.unknownExpiryMs ?? 3600000;
    this.maxInFlight = options.maxInFlight ?? 8;
    this.timers = options.timers ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout), now: () => Date.now() };
    for (const [name, v] of [['firstDelayMs', this.firstDelayMs], ['marginMs', this.marginMs], ['unknownExpiryMs', this.unknownExpiryMs]] as const) {
      if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`${name}: expected a number >= 0, got ${v}`);
    }
    if (!(Number.isFinite(this.maxDelayMs) && this.maxDelayMs > 0)) throw new RangeError(`maxDelayMs: expected a number > 0, got ${this.maxDelayMs}`);
    if (!(Number.isFinite(this.factor) && this.factor >= 1)) throw new RangeError(`factor: expected a number >= 1, got ${this.factor}`);
    if (!(Number.isInteger(this.maxInFlight) && this.maxInFlight >= 1)) throw new RangeError(`maxInFlight: expected an integer >= 1, got ${this.maxInFlight}`);
  }

  /** Transactions followed now. */
  get size(): number {
    let n = 0;
    for (const set of this.byTxId.values()) n += set.size;
    return n;
  }

  /** Whether the one timer is armed (false once nothing is scheduled). */
  get timerArmed(): boolean {
    return this.timer !== undefined;
  }

  /**
   * Follow one transaction. The same `tx_id` may be followed several times (each ends on its own).
   * @param target the kind, `tx_id` and owner id; `expires` (epoch seconds) when known.
   * @param context the caller's own data, given back in every callback.
   * @param resume where an earlier tracking of it stood (a restart): same start and deadline, first read at once.
   * @returns the tracked record.
   * @throws {Error} after {@link close}.
   */
  track(target: TrackTarget, context: C, resume?: TrackResume): Tracked<C> {
    if (this.closed) throw new Error('tracker: closed');
    const now = this.timers.now();
    const entry: Entry<C> = {
      target: { ...target },
      context,
      reads: resume?.reads ?? 0,
      state: resume?.state,
      startedAt: resume?.startedAt ?? now,
      deadline: resume ? resume.deadline : typeof target.expires === 'number' && target.expires > 0 ? target.expires * 1000 + this.marginMs : now + this.unknownExpiryMs,
      due: 0,
      heapIndex: -1,
      delay: this.firstDelayMs,
      reading: false,
      woken: false,
      queued: false,
      done: false,
      mustRead: resume !== undefined,
    };
    let set = this.byTxId.get(target.tx_id);
    if (!set) this.byTxId.set(target.tx_id, (set = new Set()));
    set.add(entry);
    this.schedule(entry, resume ? now : Math.min(now + this.firstDelayMs, entry.deadline));
    return entry;
  }

  /**
   * Read every followed transaction with this `tx_id` now (a feed showed it move): one read right
   * away (or right after the read in flight). Unknown ids are ignored.
   * @param txId the transaction id (`tx_id`).
   * @returns how many followed transactions it woke.
   */
  wake(txId: string): number {
    const set = this.byTxId.get(txId);
    if (!set || this.closed) return 0;
    const now = this.timers.now();
    for (const entry of set) {
      if (entry.reading) entry.woken = true;
      else if (!entry.queued) this.schedule(entry, now);
    }
    return set.size;
  }

  /** Stop following `tracked` without any callback. @returns false when it had already ended. */
  remove(tracked: Tracked<C>): boolean {
    const entry = tracked as Entry<C>;
    if (entry.done) return false;
    this.end(entry);
    this.arm();
    return true;
  }

  /** Stop everything: the timer is cleared, nothing is scheduled, answers of reads in flight are ignored. No callback is called. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const set of this.byTxId.values()) for (const e of set) e.done = true;
    this.byTxId.clear();
    this.heap.length = 0;
    this.ready.length = 0;
  }

  // ---- schedule ----

  /** Put `entry` in the heap at `due` (moving it when already there) and re-arm the timer. */
  private schedule(entry: Entry<C>, due: number): void {
    entry.due = due;
    if (entry.heapIndex < 0) {
      entry.heapIndex = this.heap.length;
      this.heap.push(entry);
    }
    this.siftUp(entry.heapIndex);
    this.siftDown(entry.heapIndex);
    this.arm();
  }

  /** Arm the one timer for the earliest due time (kept when it already fires no later). */
  private arm(): void {
    if (this.closed) return;
    const top = this.heap[0];
    if (!top) {
      if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
      this.timer = undefined;
      this.timerAt = Infinity;
      return;
    }
    if (this.timer !== undefined && this.timerAt <= top.due) return;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    const delay = Math.min(Math.max(0, top.due - this.timers.now()), MAX_TIMER_MS);
    this.timerAt = top.due;
    this.timer = this.timers.setTimeout(() => this.fire(), delay);
  }

  /** The timer fired: time out or queue every entry that is due, start reads, re-arm. */
  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.closed) return;
    const now = this.timers.now();
    while (this.heap.length && this.heap[0].due <= now) {
      const entry = this.popTop();
      if (now >= entry.deadline && !entry.mustRead) this.timeOut(entry);
      else {
        entry.queued = true;
        this.ready.push(entry);
      }
    }
    this.startReads();
    this.arm();
  }

  /** Start queued reads while slots are free. */
  private startReads(): void {
    while (this.inFlight < this.maxInFlight && this.ready.length) {
      const entry = this.ready.shift()!;
      entry.queued = false;
      if (entry.done) continue;
      this.startRead(entry);
    }
  }

  private startRead(entry: Entry<C>): void {
    entry.reading = true;
    entry.woken = false;
    entry.mustRead = false;
    this.inFlight++;
    let p: Promise<TransactionRead>;
    try {
      p = this.read(entry.target);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (r) => this.afterRead(entry, r, undefined),
      (err: unknown) => this.afterRead(entry, undefined, err instanceof Error ? err : new Error(String(err))),
    );
  }

  private afterRead(entry: Entry<C>, r: TransactionRead | undefined, err: Error | undefined): void {
    this.inFlight--;
    entry.reading = false;
    if (this.closed) return;
    if (!entry.done) {
      entry.reads++;
      try {
        this.handleRead(entry, r, err);
      } finally {
        if (!entry.done) this.next(entry);
      }
    }
    this.startReads();
    this.arm();
  }

  /** Apply one read's outcome: callbacks, deadline. */
  private handleRead(entry: Entry<C>, r: TransactionRead | undefined, err: Error | undefined): void {
    if (err) {
      if (isFinalFailure(err)) {
        this.end(entry);
        this.callbacks.error(entry, err);
      } else {
        this.callbacks.readError?.(entry, err);
      }
      return;
    }
    const read = r!;
    entry.last = read;
    if (read.expires !== undefined) entry.deadline = read.expires * 1000 + this.marginMs;
    if (read.status !== entry.state) {
      entry.state = read.status;
      this.callbacks.progress?.(entry, read);
    }
    if (read.final && !entry.done) {
      this.end(entry);
      this.callbacks.final(entry, read);
    }
  }

  /** Schedule the next read of a still-followed entry (at once after a wake), or time it out. */
  private next(entry: Entry<C>): void {
    const now = this.timers.now();
    if (now >= entry.deadline) {
      this.timeOut(entry);
      return;
    }
    if (entry.woken) {
      entry.woken = false;
      this.schedule(entry, now);
      return;
    }
    // Grow the delay (never below MIN_REPEAT_MS unless maxDelayMs is smaller, so a first delay of 0 cannot spin).
    entry.delay = Math.min(Math.max(entry.delay * this.factor, MIN_REPEAT_MS), this.maxDelayMs);
    this.schedule(entry, Math.min(now + entry.delay, entry.deadline));
  }

  private timeOut(entry: Entry<C>): void {
    this.end(entry);
    this.callbacks.timedOut(entry);
  }

  /** Take `entry` out of every structure and mark it done. */
  private end(entry: Entry<C>): void {
    entry.done = true;
    if (entry.heapIndex >= 0) this.removeAt(entry.heapIndex);
    const set = this.byTxId.get(entry.target.tx_id);
    if (set) {
      set.delete(entry);
      if (set.size === 0) this.byTxId.delete(entry.target.tx_id);
    }
  }

  // ---- binary min-heap on `due`, entries keep their index ----

  private popTop(): Entry<C> {
    const top = this.heap[0];
    this.removeAt(0);
    return top;
  }

  private removeAt(i: number): void {
    const removed = this.heap[i];
    const last = this.heap.pop()!;
    removed.heapIndex = -1;
    if (last !== removed) {
      this.heap[i] = last;
      last.heapIndex = i;
      this.siftUp(i);
      this.siftDown(last.heapIndex);
    }
  }

  private siftUp(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent].due <= h[i].due) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l].due < h[m].due) m = l;
      if (r < h.length && h[r].due < h[m].due) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(a: number, b: number): void {
    const h = this.heap;
    [h[a], h[b]] = [h[b], h[a]];
    h[a].heapIndex = a;
    h[b].heapIndex = b;
  }
}

/**
 * Whether a failed read ends the tracking: refused input ({@link ValidationError}), or an API
 * answer 4xx other than 408 (timeout) and 429 (too many requests, spec section 7). A 404 (unknown
 * transaction) is final. No answer (status 0) and 5xx are retried.
 * @param err the error of the read.
 */
export function isFinalFailure(err: Error): boolean {
  if (err instanceof ValidationError) return true;
  if (err instanceof ApiError) return err.statusCode >= 400 && err.statusCode < 500 && err.statusCode !== 408 && err.statusCode !== 429;
  return false;
}
