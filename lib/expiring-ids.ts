/**
 * A set of ids that each expire at a horizon, with a duplicate check and bookkeeping of O(1)
 * amortised cost per id and a hard cap on memory: an open-addressing hash table for membership
 * (linear probing over a typed array of 32-bit hashes, so a lookup reads one cache line of
 * hashes and touches an id string only when its hash matches; a JavaScript Map of 100,000
 * string keys costs 3-4x more per lookup than one of 1,000 on this project's machines, the
 * table about 2x: bench/feed-dedupe.ts) and a binary min-heap ordered by horizon for expiry. Built for the core client feed's memory of the action ids it has
 * emitted ({@link CoreClientFeed}, lib/feed.ts; issue 11 "O(1) feed dedupe"), where the horizons
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

/** The table's first capacity (slots, a power of two). */
const FIRST_CAPACITY = 16;

/** Whole epoch seconds now. */
const epochSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * Ids with horizons (any unit, as long as {@link ExpiringIdSetOptions.now} uses the same one;
 * the feed uses epoch seconds). See the module comment for when an id is forgotten.
 */
export class ExpiringIdSet {
  // The table: slot i is empty when #slotHash[i] is 0, else holds #slotId[i] (hash #slotHash[i],
  // never 0) with its horizon #slotHorizon[i]. Linear probing; at most half full (it doubles);
  // deletion by backward shift, so no tombstones. It does not shrink: its memory is that of the
  // largest size reached, which maxSize bounds.
  #slotHash = new Int32Array(FIRST_CAPACITY);
  #slotId: (string | undefined)[] = new Array<string | undefined>(FIRST_CAPACITY).fill(undefined);
  #slotHorizon = new Float64Array(FIRST_CAPACITY);
  #size = 0;
  /** Per-instance hash seed: ids chosen to collide for one set do not for another. */
  readonly #seed = (Math.random() * 0x100000000) | 0;
  // The heap, in three parallel arrays: entry i is (horizon, order added, id); every kept id has
  // exactly one entry (an id is only added when not kept, and leaves the table when popped).
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
    return this.#size;
  }

  /** Whether `id` is kept (a duplicate). O(1) on average. */
  has(id: string): boolean {
    return this.#find(id, this.#hash(id)) >= 0;
  }

  /** The horizon `id` was added with, or undefined when it is not kept. */
  horizonOf(id: string): number | undefined {
    const slot = this.#find(id, this.#hash(id));
    return slot >= 0 ? this.#slotHorizon[slot] : undefined;
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
    const hash = this.#hash(id);
    const mask = this.#slotHash.length - 1;
    let slot = hash & mask;
    for (let h = this.#slotHash[slot]; h !== 0; h = this.#slotHash[slot]) {
      if (h === hash && this.#slotId[slot] === id) return false;
      slot = (slot + 1) & mask;
    }
    if (Number.isNaN(horizon)) throw new RangeError('horizon: a number, not NaN');
    this.#slotHash[slot] = hash;
    this.#slotId[slot] = id;
    this.#slotHorizon[slot] = horizon;
    if (++this.#size * 2 > this.#slotHash.length) this.#grow();
    this.#push(horizon, this.#added++, id);
    if (this.#size >= this.#pruneFrom) {
      const now = this.#now();
      while (this.#heapId.length > 0 && this.#heapHorizon[0] < now) this.#popEarliest();
    }
    while (this.#size > this.#maxSize) this.#popEarliest();
    return true;
  }

  /** A 32-bit hash of `id`, never 0 (FNV-1a over its UTF-16 code units from the seed, then murmur3's finaliser). */
  #hash(id: string): number {
    let h = this.#seed ^ 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
    return h === 0 ? 1 : h;
  }

  /** The slot holding `id` (of hash `hash`), or -1. */
  #find(id: string, hash: number): number {
    const mask = this.#slotHash.length - 1;
    let slot = hash & mask;
    for (let h = this.#slotHash[slot]; h !== 0; h = this.#slotHash[slot]) {
      if (h === hash && this.#slotId[slot] === id) return slot;
      slot = (slot + 1) & mask;
    }
    return -1;
  }

  /** Double the table and put every id in its new slot. */
  #grow(): void {
    const hashes = this.#slotHash;
    const ids = this.#slotId;
    const horizons = this.#slotHorizon;
    const capacity = hashes.length * 2;
    const mask = capacity - 1;
    this.#slotHash = new Int32Array(capacity);
    this.#slotId = new Array<string | undefined>(capacity).fill(undefined);
    this.#slotHorizon = new Float64Array(capacity);
    for (let i = 0; i < hashes.length; i++) {
      if (hashes[i] === 0) continue;
      let slot = hashes[i] & mask;
      while (this.#slotHash[slot] !== 0) slot = (slot + 1) & mask;
      this.#slotHash[slot] = hashes[i];
      this.#slotId[slot] = ids[i];
      this.#slotHorizon[slot] = horizons[i];
    }
  }

  /** Remove `id` from the table (it is there): empty its slot and shift back the entries of its probe run. */
  #remove(id: string): void {
    const mask = this.#slotHash.length - 1;
    let hole = this.#find(id, this.#hash(id));
    let next = hole;
    for (;;) {
      next = (next + 1) & mask;
      const h = this.#slotHash[next];
      if (h === 0) break;
      const home = h & mask;
      // The entry at `next` may move back into the hole unless its home lies cyclically in (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      this.#slotHash[hole] = h;
      this.#slotId[hole] = this.#slotId[next];
      this.#slotHorizon[hole] = this.#slotHorizon[next];
      hole = next;
    }
    this.#slotHash[hole] = 0;
    this.#slotId[hole] = undefined;
    this.#slotHorizon[hole] = 0;
    this.#size--;
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

  /** Remove the earliest-expiring id from the heap and the table. */
  #popEarliest(): void {
    const last = this.#heapId.length - 1;
    this.#remove(this.#heapId[0]);
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
