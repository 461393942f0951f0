/**
 * Velocity windows of the `custody-approver`: the approvals of one approver per asset, in time
 * order, with running sums, so the sum and count over any rolling window are two binary
 * searches whatever the number of approvals in it. Amounts in base units (bigint), times in
 * epoch milliseconds. Rebuilt from the audit file on start (approver.ts), so a restart never
 * resets a limit.
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
}

/**
 * The velocity windows of one approver scope and mode (`live` / `dryRun`): local
 * ({@link LocalVelocityWindows}), or shared through Redis (`RedisVelocityWindows`,
 * lib/coordination/velocity-windows.ts). Used as read -> evaluate the rules -> reserve (only if
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
   * Count `entry` if the window is still at `view.version`.
   * @returns true when counted; false when the window changed since the read (read again).
   * @throws {CoordinationUnavailableError} (rejects) Redis is unavailable; nothing or the entry may be counted (safe side).
   */
  reserve(view: WindowView, entry: VelocityEntry): Promise<boolean>;
  /**
   * Stop counting `action` (only for a definite "not applied" from the API).
   * @throws {CoordinationUnavailableError} (rejects) Redis is unavailable.
   */
  release(asset: string, action: string): Promise<void>;
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

/** One approval counted in a window. */
interface Entry {
  /** When it was decided, epoch ms. */
  at: number;
  /** Base units. */
  amount: bigint;
  /** The action it approved; an action counts once. */
  action: string;
}

/** The approvals of one asset, oldest first, with prefix sums: `sums[i]` = amounts of entries[0..i). */
class AssetWindow {
  entries: Entry[] = [];
  sums: bigint[] = [0n];

  /** Index of the first entry at or after `at` ms. */
  lowerBound(at: number): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid].at < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(e: Entry): void {
    const n = this.entries.length;
    if (n === 0 || this.entries[n - 1].at <= e.at) {
      this.entries.push(e);
      this.sums.push(this.sums[n] + e.amount);
      return;
    }
    // Out of order (a clock step back): insert and rebuild the sums after it.
    const i = this.lowerBound(e.at + 1);
    this.entries.splice(i, 0, e);
    this.rebuild(i);
  }

  remove(action: string): boolean {
    const i = this.entries.findIndex((e) => e.action === action);
    if (i < 0) return false;
    this.entries.splice(i, 1);
    this.rebuild(i);
    return true;
  }

  rebuild(from: number): void {
    this.sums.length = from + 1;
    for (let i = from; i < this.entries.length; i++) this.sums.push(this.sums[i] + this.entries[i].amount);
  }

  /** Drop entries before `at` ms. */
  prune(at: number): void {
    const i = this.lowerBound(at);
    if (i === 0) return;
    this.entries.splice(0, i);
    const base = this.sums[i];
    this.sums = this.sums.slice(i).map((s) => s - base);
  }
}

/**
 * The approvals of one approver, per asset, for velocity limits. Each action counts once
 * (adding it again replaces the earlier entry).
 */
export class VelocityLedger {
  readonly #assets = new Map<string, AssetWindow>();
  readonly #assetOf = new Map<string, string>();
  #added = 0;

  /**
   * Count an approval.
   * @param asset asset code, e.g. `BTC-TESTNET`.
   * @param amount base units.
   * @param at epoch ms of the decision.
   * @param action the action id (an action counts once).
   */
  add(asset: string, amount: bigint, at: number, action: string): void {
    if (this.#assetOf.has(action)) this.remove(action);
    let w = this.#assets.get(asset);
    if (!w) {
      w = new AssetWindow();
      this.#assets.set(asset, w);
    }
    w.add({ at, amount, action });
    this.#assetOf.set(action, asset);
    this.#added++;
  }

  /** Stop counting the approval of `action` (a reservation the API refused). @returns true when it was counted. */
  remove(action: string): boolean {
    const asset = this.#assetOf.get(action);
    if (asset === undefined) return false;
    this.#assetOf.delete(action);
    return this.#assets.get(asset)?.remove(action) ?? false;
  }

  /**
   * Sum (base units) and count of the approvals of `asset` in the window `(now - windowMs, now]`.
   * @param now epoch ms.
   */
  usage(asset: string, windowMs: number, now: number): { sum: bigint; count: number } {
    const w = this.#assets.get(asset);
    if (!w) return { sum: 0n, count: 0 };
    const lo = w.lowerBound(now - windowMs + 1);
    const hi = w.lowerBound(now + 1);
    return { sum: w.sums[hi] - w.sums[lo], count: hi - lo };
  }

  /** Every approval counted, per asset, oldest first (to write them back to a shared window after a data loss). */
  entries(): Array<{ asset: string; at: number; amount: bigint; action: string }> {
    const out: Array<{ asset: string; at: number; amount: bigint; action: string }> = [];
    for (const [asset, w] of this.#assets) for (const e of w.entries) out.push({ asset, ...e });
    return out;
  }

  /**
   * Forget approvals older than `keepMs` before `now` (the longest window of the rules), once
   * every 1,000 additions, so memory follows the window and not the history.
   */
  prune(now: number, keepMs: number): void {
    if (this.#added < 1000) return;
    this.#added = 0;
    for (const w of this.#assets.values()) {
      const before = w.entries.slice(0, w.lowerBound(now - keepMs));
      for (const e of before) this.#assetOf.delete(e.action);
      w.prune(now - keepMs);
    }
  }
}
