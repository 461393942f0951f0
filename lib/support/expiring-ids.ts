/**
 * A set of ids that each expire at a horizon, with a duplicate check and bookkeeping of O(1)
 * amortised cost per id (a Map for membership, a binary min-heap ordered by horizon for expiry)
 * and a hard cap on memory. Built for the core client feed's memory of the action ids it has
 * emitted ({@link CoreClientFeed}, lib/feeds/feed.ts), where the horizons
 * (an action's expireTime plus a day) do not arrive in order: the heap, not the insertion order,
 * says which id expires first.
 *
 * Rules (those the feed has always had, plus the cap):
 * - An id added is a duplicate ({@link ExpiringIdSet.has}) until it is forgotten.
 * - Ids are forgotten only when an id is added while the set holds at least
 *   {@link ExpiringIdSetOptions.pruneFrom} ids (default 10,000): then every id whose horizon is
 *   before now is forgotten. Below that size nothing is forgotten, even past its horizon.
 * - Above {@link ExpiringIdSetOptions.maxSize} ids (default 200,000) the earliest-expiring ids
 *   are forgotten until the set holds `maxSize` (equal horizons: the one added first goes first).
 */

/** Options of {@link ExpiringIdSet}. */
export interface ExpiringIdSetOptions {
  /** The most ids kept (default 200,000); above it the earliest-expiring are forgotten. At least 1. */
  maxSize?: number;
  /** The size from which ids past their horizon are forgotten when an id is added (default 10,000). */
  pruneFrom?: number;
  /** The clock the horizons are compared with (default: `Date.now()` in whole epoch seconds). */
  now?: () => number;
}

/** The default {@link ExpiringIdSetOptions.maxSize}. */
export const EXPIRING_IDS_MAX_SIZE = 200000;
/** The default {@link ExpiringIdSetOptions.pruneFrom}. */
export const EXPIRING_IDS_PRUNE_FROM = 10000;

/** Whole epoch seconds now. */
const epochSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * Ids with horizons (any unit, as long as {@link ExpiringIdSetOptions.now} uses the same one;
 * the feed uses epoch seconds). See the module comment for when an id is forgotten.
 */
export class ExpiringIdSet {
  /** id -> horizon, for the ids kept. */
  readonly #horizons = new Map<string, number>();
  // The heap, in three parallel arrays: entry i is (horizon, order added, id); every kept id has
  // exactly one entry (an id is only added when not kept, and leaves the map when popped).
  readonly #heapHorizon: number[] = [];
  readonly #heapOrder: number[] = [];
  readonly #heapId: string[] = [];
  #added = 0;
  readonly #maxSize: number;
  readonly #pruneFrom: number;
  readonly #now: () => number;

  /** @throws {RangeError} when `maxSize` is not an integer of at least 1. */
  constructor(options: ExpiringIdSetOptions = {}) {
    this.#maxSize = options.maxSize ?? EXPIRING_IDS_MAX_SIZE;
    if (!Number.isInteger(this.#maxSize) || this.#maxSize < 1) throw new RangeError('maxSize: an integer of at least 1');
    this.#pruneFrom = options.pruneFrom ?? EXPIRING_IDS_PRUNE_FROM;
    this.#now = options.now ?? epochSeconds;
  }

  /** The number of ids kept (at most {@link ExpiringIdSetOptions.maxSize}). */
  get size(): number {
    return this.#horizons.size;
  }

  /** Whether `id` is kept (a duplicate). O(1). */
  has(id: string): boolean {
    return this.#horizons.has(id);
  }

  /** The horizon `id` was added with, or undefined when it is not kept. */
  horizonOf(id: string): number | undefined {
    return this.#horizons.get(id);
  }

  /**
   * Keep `id` until `horizon` (see the module comment for when it is forgotten), unless it is
   * kept already (its horizon then stays as it was). Then forget what the rules say. O(1)
   * amortised: a heap push (O(1) on average, O(log n) at worst) and one pop per id forgotten.
   * @returns true when `id` was new, false when it was a duplicate (nothing changed).
   * @param horizon any number but NaN (`Infinity`: never past; `-Infinity`: always past).
   * @throws {RangeError} when `horizon` is NaN (nothing changed).
   */
  add(id: string, horizon: number): boolean {
    if (this.#horizons.has(id)) return false;
    if (Number.isNaN(horizon)) throw new RangeError('horizon: a number, not NaN');
    this.#horizons.set(id, horizon);
    this.#push(horizon, this.#added++, id);
    if (this.#horizons.size >= this.#pruneFrom) {
      const now = this.#now();
      while (this.#heapId.length > 0 && this.#heapHorizon[0] < now) this.#popEarliest();
    }
    while (this.#horizons.size > this.#maxSize) this.#popEarliest();
    return true;
  }

  /** Whether heap entry `i` comes before entry `j` (earlier horizon; equal: added first). */
  #before(i: number, j: number): boolean {
    const hi = this.#heapHorizon[i];
    const hj = this.#heapHorizon[j];
    return hi < hj || (hi === hj && this.#heapOrder[i] < this.#heapOrder[j]);
  }

  #swap(i: number, j: number): void {
    const h = this.#heapHorizon[i];
    this.#heapHorizon[i] = this.#heapHorizon[j];
    this.#heapHorizon[j] = h;
    const o = this.#heapOrder[i];
    this.#heapOrder[i] = this.#heapOrder[j];
    this.#heapOrder[j] = o;
    const id = this.#heapId[i];
    this.#heapId[i] = this.#heapId[j];
    this.#heapId[j] = id;
  }

  #push(horizon: number, order: number, id: string): void {
    let i = this.#heapId.length;
    this.#heapHorizon.push(horizon);
    this.#heapOrder.push(order);
    this.#heapId.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(i, parent)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** Remove the earliest-expiring id from the heap and the map. */
  #popEarliest(): void {
    const last = this.#heapId.length - 1;
    this.#horizons.delete(this.#heapId[0]);
    this.#swap(0, last);
    this.#heapHorizon.pop();
    this.#heapOrder.pop();
    this.#heapId.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const r = l + 1;
      const child = r < last && this.#before(r, l) ? r : l;
      if (!this.#before(child, i)) break;
      this.#swap(i, child);
      i = child;
    }
  }
}
