/**
 * Velocity windows of the approver node: the approvals of one approver per asset, in time
 * order, in a balanced search tree (a treap) whose nodes carry the count and sum of their
 * subtree, so the sum and count over any rolling window, an approval added (in or out of time
 * order), one taken out and the old ones pruned each cost O(log n) whatever the number n of
 * approvals in the window. Amounts in base units (bigint), times in epoch milliseconds.
 * Rebuilt from the audit file on start (approver.ts), so a restart never resets a limit.
 *
 * - {@link VelocityWindows}: the interface the approver decides through (read, evaluate the
 *   rules, reserve only if the window did not change since the read).
 * - {@link LocalVelocityWindows}: one process (a {@link VelocityLedger} in memory).
 * - `RedisVelocityWindows` (lib/approver/velocity-redis.ts): shared by several instances
 *   through Redis, each keeping a mirror (a {@link VelocityLedger}) that a read brings up to date
 *   with the changes since the version it last saw.
 */

/** One approval counted in a velocity window. */
export interface VelocityEntry {
  /** Epoch ms of the decision. */
  at: number;
  /** The action id it approved (an action counts once). */
  action: string;
  /** Base units. */
  amount: bigint;
}

/** One asset's window as read: what the rules count, and the version a reserve checks. */
export interface WindowView {
  /** Asset code, e.g. `BTC-TESTNET`. */
  readonly asset: string;
  /** The window's version when read: {@link VelocityWindows.reserve} counts an approval only while it is unchanged. */
  readonly version: string;
  /**
   * Sum (base units) and count of the approvals in `(now - windowMs, now]`; when another
   * instance's clock runs ahead (entries after `now`), `now` is taken as the newest entry's time.
   * @param windowMs the rule's rolling window, ms (at most the windows' keepMs).
   * @param now epoch ms.
   */
  usage(windowMs: number, now: number): { sum: bigint; count: number };
  /**
   * The approval counted for `action` in this window, if any: an earlier decision of the same
   * action reserved it (a holder that died before its call). A decision of that action does not
   * count it against itself.
   */
  entry(action: string): VelocityEntry | undefined;
}

/**
 * The velocity windows of one approver scope and mode (`live` / `dryRun`): local
 * ({@link LocalVelocityWindows}), or shared through Redis (`RedisVelocityWindows`,
 * lib/approver/velocity-redis.ts). Used as read -> evaluate the rules -> reserve (only if
 * the window did not change since the read; else read again).
 */
export interface VelocityWindows {
  /**
   * Read the window of `asset`; its cost does not grow with the approvals in the window.
   * @param now epoch ms (the decision's clock).
   * @throws {CoordinationUnavailableError} (rejects) Redis is unavailable.
   */
  read(asset: string, now: number): Promise<WindowView>;
  /**
   * Count `entries` (one approval, or a batch of them: all or none) if the window is still at
   * `view.version`; the approvals older than the longest window before the oldest entry's time go.
   * @returns true when counted; false when the window changed since the read (read again).
   * @throws {CoordinationUnavailableError} (rejects) Redis is unavailable; nothing or the entries may be counted (safe side).
   */
  reserve(view: WindowView, entries: VelocityEntry | readonly VelocityEntry[]): Promise<boolean>;
  /**
   * Stop counting `action` (only for a definite "not applied" from the API).
   * @param at the time (epoch ms) of the approval this caller counted: only that one goes. Another
   *   decision of the same action (another instance that took the claim over) may have counted it
   *   again since; its reservation stays.
   * @throws {CoordinationUnavailableError} (rejects) Redis is unavailable.
   */
  release(asset: string, action: string, at?: number): Promise<void>;
  /**
   * Count entries known from elsewhere (audit replay, write-back after a Redis data loss); an
   * action already counted stays as it is.
   * @throws {CoordinationUnavailableError} (rejects) Redis is unavailable.
   */
  restore(asset: string, entries: VelocityEntry[]): Promise<void>;
  /**
   * Every entry counted within keepMs of `now` (epoch ms), per asset: what this instance knows,
   * for a write-back after a Redis data loss.
   */
  entries(now: number): Promise<Array<VelocityEntry & { asset: string }>>;
}

/** An entry as the ledger keeps it. */
type Entry = VelocityEntry;

/** One approval in a tree of approvals ordered by (`at`, `seq`), with its subtree's count and sum. */
class Node {
  left: Node | null = null;
  right: Node | null = null;
  /** Entries in this subtree. */
  size = 1;
  /** Base units of this subtree. */
  sum: bigint;
  /** Heap priority of the treap (random). */
  pri = Math.random();
  constructor(
    /** Epoch ms of the decision. */
    readonly at: number,
    /** Insertion number: orders entries of one `at` and makes every key unique. */
    readonly seq: number,
    readonly action: string,
    /** Base units. */
    readonly amount: bigint,
  ) {
    this.sum = amount;
  }
}

function update(n: Node): void {
  let size = 1;
  let sum = n.amount;
  if (n.left) {
    size += n.left.size;
    sum += n.left.sum;
  }
  if (n.right) {
    size += n.right.size;
    sum += n.right.sum;
  }
  n.size = size;
  n.sum = sum;
}

/** True when `a` sorts before (`at`, `seq`). */
function before(a: Node, at: number, seq: number): boolean {
  return a.at < at || (a.at === at && a.seq < seq);
}

/** Split `t` into the nodes before (`at`, `seq`) and the rest. */
function split(t: Node | null, at: number, seq: number): [Node | null, Node | null] {
  if (!t) return [null, null];
  if (before(t, at, seq)) {
    const [l, r] = split(t.right, at, seq);
    t.right = l;
    update(t);
    return [t, r];
  }
  const [l, r] = split(t.left, at, seq);
  t.left = r;
  update(t);
  return [l, t];
}

/** Join two treaps, every node of `a` before every node of `b`. */
function merge(a: Node | null, b: Node | null): Node | null {
  if (!a) return b;
  if (!b) return a;
  if (a.pri > b.pri) {
    a.right = merge(a.right, b);
    update(a);
    return a;
  }
  b.left = merge(a, b.left);
  update(b);
  return b;
}

/** Take node `x` out of `t` (found by its key). */
function erase(t: Node | null, x: Node): Node | null {
  if (!t) return null;
  if (t === x) return merge(t.left, t.right);
  if (before(x, t.at, t.seq)) t.left = erase(t.left, x);
  else t.right = erase(t.right, x);
  update(t);
  return t;
}

/**
 * A treap of `nodes` (already in key order) in O(n): a balanced shape, then priorities drawn at
 * random and handed out largest first, level by level, so every parent's is above its children's.
 */
function build(nodes: Node[]): Node | null {
  const shape = (lo: number, hi: number): Node | null => {
    if (lo >= hi) return null;
    const mid = (lo + hi) >>> 1;
    const n = nodes[mid];
    n.left = shape(lo, mid);
    n.right = shape(mid + 1, hi);
    return n;
  };
  const root = shape(0, nodes.length);
  const pris = nodes.map(() => Math.random()).sort((x, y) => y - x);
  const order: Node[] = root ? [root] : [];
  for (let i = 0; i < order.length; i++) {
    const n = order[i];
    n.pri = pris[i];
    if (n.left) order.push(n.left);
    if (n.right) order.push(n.right);
  }
  for (let i = order.length - 1; i >= 0; i--) update(order[i]);
  return root;
}

/** The approvals of one asset: a treap by time, the node of each action, a version that changes with every change. */
class AssetWindow {
  root: Node | null = null;
  readonly byAction = new Map<string, Node>();
  /** Increases with every add, remove, prune that took something, and reset. */
  version = 0;
  #seq = 0;

  get size(): number {
    return this.root?.size ?? 0;
  }

  add(e: Entry): void {
    const n = new Node(e.at, ++this.#seq, e.action, e.amount);
    const [l, r] = split(this.root, n.at, n.seq);
    this.root = merge(merge(l, n), r);
    this.byAction.set(e.action, n);
    this.version++;
  }

  remove(action: string): boolean {
    const n = this.byAction.get(action);
    if (!n) return false;
    this.byAction.delete(action);
    this.root = erase(this.root, n);
    this.version++;
    return true;
  }

  /** Count and sum of the entries at or before `at` ms. */
  prefix(at: number): { sum: bigint; count: number } {
    let sum = 0n;
    let count = 0;
    let t = this.root;
    while (t) {
      if (t.at <= at) {
        if (t.left) {
          sum += t.left.sum;
          count += t.left.size;
        }
        sum += t.amount;
        count++;
        t = t.right;
      } else t = t.left;
    }
    return { sum, count };
  }

  /** The latest `at`, undefined when empty. */
  newest(): number | undefined {
    let t = this.root;
    if (!t) return undefined;
    while (t.right) t = t.right;
    return t.at;
  }

  /** The oldest `at`, undefined when empty. */
  oldest(): number | undefined {
    let t = this.root;
    if (!t) return undefined;
    while (t.left) t = t.left;
    return t.at;
  }

  /** Drop entries before `at` ms. @returns their actions. */
  prune(at: number): string[] {
    const oldest = this.oldest();
    if (oldest === undefined || oldest >= at) return [];
    const [old, keep] = split(this.root, at, -Infinity);
    this.root = keep;
    const gone: Node[] = [];
    collect(old, gone);
    for (const n of gone) this.byAction.delete(n.action);
    this.version++;
    return gone.map((n) => n.action);
  }

  /** Replace every entry with `entries` (any order). */
  reset(entries: Entry[]): void {
    const last = new Map<string, Entry>();
    for (const e of entries) last.set(e.action, e);
    const sorted = [...last.values()].sort((a, b) => a.at - b.at);
    this.byAction.clear();
    const nodes = sorted.map((e) => new Node(e.at, ++this.#seq, e.action, e.amount));
    for (const n of nodes) this.byAction.set(n.action, n);
    this.root = build(nodes);
    this.version++;
  }

  /** Every entry, oldest first. */
  list(): Entry[] {
    const nodes: Node[] = [];
    collect(this.root, nodes);
    return nodes.map((n) => ({ at: n.at, amount: n.amount, action: n.action }));
  }
}

/** Append the nodes of `t` in key order to `out` (iteratively: no recursion limit). */
function collect(t: Node | null, out: Node[]): void {
  const stack: Node[] = [];
  let n = t;
  while (n || stack.length > 0) {
    while (n) {
      stack.push(n);
      n = n.left;
    }
    n = stack.pop()!;
    out.push(n);
    n = n.right;
  }
}

/**
 * The approvals of one approver, per asset, for velocity limits. Each action counts once
 * (adding it again replaces the earlier entry). Every operation is O(log n) in the approvals n
 * of the asset (a prune also O(k) in the k approvals it drops).
 */
export class VelocityLedger {
  readonly #assets = new Map<string, AssetWindow>();
  readonly #assetOf = new Map<string, string>();

  #window(asset: string): AssetWindow {
    let w = this.#assets.get(asset);
    if (!w) {
      w = new AssetWindow();
      this.#assets.set(asset, w);
    }
    return w;
  }

  /**
   * Count an approval (in any time order).
   * @param asset asset code, e.g. `BTC-TESTNET`.
   * @param amount base units.
   * @param at epoch ms of the decision.
   * @param action the action id (an action counts once: an earlier entry of it is replaced).
   */
  add(asset: string, amount: bigint, at: number, action: string): void {
    if (this.#assetOf.has(action)) this.remove(action);
    this.#window(asset).add({ at, amount, action });
    this.#assetOf.set(action, asset);
  }

  /** The approval counted for `action`, undefined when none. */
  entry(action: string): VelocityEntry | undefined {
    const asset = this.#assetOf.get(action);
    const n = asset === undefined ? undefined : this.#assets.get(asset)?.byAction.get(action);
    return n ? { at: n.at, action: n.action, amount: n.amount } : undefined;
  }

  /** Stop counting the approval of `action` (a reservation the API refused). @returns true when it was counted. */
  remove(action: string): boolean {
    const asset = this.#assetOf.get(action);
    if (asset === undefined) return false;
    this.#assetOf.delete(action);
    return this.#assets.get(asset)?.remove(action) ?? false;
  }

  /** The asset `action`'s approval is counted in, undefined when none. */
  assetOf(action: string): string | undefined {
    return this.#assetOf.get(action);
  }

  /** The assets with approvals counted (or counted once). */
  assets(): string[] {
    return [...this.#assets.keys()];
  }

  /** Approvals counted, every asset. */
  count(): number {
    return this.#assetOf.size;
  }

  /** True when `action` is counted. */
  has(action: string): boolean {
    return this.#assetOf.has(action);
  }

  /**
   * Sum (base units) and count of the approvals of `asset` in the window `(now - windowMs, now]`.
   * @param now epoch ms.
   */
  usage(asset: string, windowMs: number, now: number): { sum: bigint; count: number } {
    const w = this.#assets.get(asset);
    if (!w || w.size === 0) return { sum: 0n, count: 0 };
    const hi = w.prefix(now);
    const lo = w.prefix(now - windowMs);
    return { sum: hi.sum - lo.sum, count: hi.count - lo.count };
  }

  /** Epoch ms of the latest approval of `asset` counted, undefined when none. */
  newest(asset: string): number | undefined {
    return this.#assets.get(asset)?.newest();
  }

  /** Approvals of `asset` counted. */
  size(asset: string): number {
    return this.#assets.get(asset)?.size ?? 0;
  }

  /** A number that increases with every change to `asset`'s approvals (add, remove, prune, reset). */
  version(asset: string): number {
    return this.#assets.get(asset)?.version ?? 0;
  }

  /** Every approval counted, per asset, oldest first (to write them back to a shared window after a data loss). */
  entries(): Array<{ asset: string; at: number; amount: bigint; action: string }> {
    const out: Array<{ asset: string; at: number; amount: bigint; action: string }> = [];
    for (const asset of this.#assets.keys()) for (const e of this.entriesOf(asset)) out.push({ asset, ...e });
    return out;
  }

  /** The approvals of `asset`, oldest first. */
  entriesOf(asset: string): VelocityEntry[] {
    return this.#assets.get(asset)?.list() ?? [];
  }

  /**
   * Replace the approvals of `asset` with `entries` (any order; a later duplicate action
   * replaces an earlier one), in O(n log n) for the sort and O(n) for the tree.
   */
  reset(asset: string, entries: VelocityEntry[]): void {
    const w = this.#window(asset);
    for (const action of w.byAction.keys()) this.#assetOf.delete(action);
    for (const e of entries) {
      const other = this.#assetOf.get(e.action);
      if (other !== undefined && other !== asset) this.remove(e.action);
    }
    w.reset(entries);
    for (const action of w.byAction.keys()) this.#assetOf.set(action, asset);
  }

  /** Forget the approvals of `asset` before `at` (epoch ms). @returns how many. */
  pruneAsset(asset: string, at: number): number {
    const w = this.#assets.get(asset);
    if (!w) return 0;
    const gone = w.prune(at);
    for (const action of gone) this.#assetOf.delete(action);
    return gone.length;
  }

  /**
   * Forget approvals older than `keepMs` before `now` (the longest window of the rules), so
   * memory follows the window and not the history.
   */
  prune(now: number, keepMs: number): void {
    for (const asset of this.#assets.keys()) this.pruneAsset(asset, now - keepMs);
  }
}

/**
 * A window's usage as {@link WindowView.usage} defines it: `(now - windowMs, now]`, `now` moved
 * to the newest approval when one is after it (another instance's clock running ahead).
 */
export function windowUsage(ledger: VelocityLedger, asset: string, windowMs: number, now: number): { sum: bigint; count: number } {
  const newest = ledger.newest(asset);
  return ledger.usage(asset, windowMs, newest !== undefined && newest > now ? newest : now);
}

/**
 * {@link VelocityWindows} of one process: a {@link VelocityLedger} in memory (the approver's,
 * rebuilt from its audit file). The version of an asset's window changes with every add and
 * remove, so of two decisions that read one version only the first reserve passes: two
 * concurrent decisions cannot both use the room left under a limit. Every operation O(log n).
 */
export class LocalVelocityWindows implements VelocityWindows {
  /** The ledger counted in (shared with whoever passed it). */
  readonly ledger: VelocityLedger;
  readonly #keepMs: number | (() => number);

  /**
   * @param keepMs the longest velocity window of the rules, ms: a reserve forgets the asset's
   *   approvals older than that before the new one's time. A function when the ledger is shared
   *   by several users whose longest window may grow (the approvers of one audit file): read at
   *   each reserve, so one user's shorter window never forgets what another still counts.
   * @param ledger the ledger to count in (default a new, empty one).
   */
  constructor(keepMs: number | (() => number), ledger: VelocityLedger = new VelocityLedger()) {
    this.#keepMs = keepMs;
    this.ledger = ledger;
  }

  /** The window of `asset` as it stands (nothing to wait for). */
  async read(asset: string, _now: number): Promise<WindowView> {
    const ledger = this.ledger;
    return { asset, version: String(ledger.version(asset)), usage: (windowMs, now) => windowUsage(ledger, asset, windowMs, now), entry: (action) => ledger.entry(action) };
  }

  /** How long an approval is kept, ms (see the constructor). */
  get keepMs(): number {
    return typeof this.#keepMs === 'function' ? this.#keepMs() : this.#keepMs;
  }

  /** Count `entries` (all of them) if no add or remove touched the asset since `view` was read. @returns false when one did. */
  async reserve(view: WindowView, entries: VelocityEntry | readonly VelocityEntry[]): Promise<boolean> {
    const list = Array.isArray(entries) ? (entries as readonly VelocityEntry[]) : [entries as VelocityEntry];
    if (String(this.ledger.version(view.asset)) !== view.version) return false;
    if (list.length === 0) return true;
    this.ledger.pruneAsset(view.asset, Math.min(...list.map((e) => e.at)) - this.keepMs);
    for (const e of list) this.ledger.add(view.asset, e.amount, e.at, e.action);
    return true;
  }

  /** Stop counting `action`. */
  async release(_asset: string, action: string, at?: number): Promise<void> {
    if (at !== undefined && this.ledger.entry(action)?.at !== at) return;
    this.ledger.remove(action);
  }

  /** Count each of `entries` not counted yet. */
  async restore(asset: string, entries: VelocityEntry[]): Promise<void> {
    for (const e of entries) if (!this.ledger.has(e.action)) this.ledger.add(asset, e.amount, e.at, e.action);
  }

  /** Every approval at or after `now - keepMs`. */
  async entries(now: number): Promise<Array<VelocityEntry & { asset: string }>> {
    return this.ledger.entries().filter((e) => e.at >= now - this.keepMs);
  }
}
