/**
 * The simulator's durable store: the state document ({@link SimState}, model/state.ts) kept in
 * memory, its journal and its snapshot. Each change costs constant time to persist (details in
 * journal.ts):
 * - the {@link Store} hands the document out wrapped in a tracking proxy that records which
 *   units (a transfer, a wallet, one ledger entry...) changed;
 * - group commit: a mutation marks the store dirty; at most one journal write is in flight;
 *   changes that pile up behind it go into the next one. Each write appends one line holding
 *   the current JSON of every changed unit to `<dataDir>/journal.jsonl` (mode 0600) and
 *   fdatasyncs it. A request's response is sent only after {@link Store.commit} resolves, i.e.
 *   after the line holding its change is on disk;
 * - snapshot `<dataDir>/state.json` (mode 0600), written atomically (tmp, fsync, rename, fsync
 *   the folder) with the `journalSeq` it includes: on first start, when the journal grows past
 *   max(4 MB, a quarter of the snapshot) (compaction: a restart parses at most 1.25 times the
 *   snapshot; the journal is then rewritten to the lines after
 *   the snapshot), and on {@link Store.close} (stop), which leaves an empty journal;
 * - a restart reads the snapshot and replays the journal lines after its `journalSeq`; a torn
 *   last line (never acknowledged) is dropped. state.json files of older simulators (no
 *   `journalSeq`, no journal) load as before, through upgrade.ts, which also maps the spellings of older simulators.
 *
 * Units: amounts are base units (integers), times are Unix epoch seconds of the business clock.
 */
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { ChangeTracker, JOURNAL_FILE, SNAPSHOT_FILE, jsonDifferences } from './journal';
import { syncDir, writeAtomic } from '../lib/support/durable/atomic';
import type { SimState } from './model';
import { readUpgraded } from './upgrade';

interface Waiter {
  gen: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** What {@link Store.load} learnt about a data folder, for the Store made on its state. */
interface LoadedMeta {
  lastSeq: number;
  journalBytes: number;
  snapshotBytes: number;
}

/** Documents returned by {@link Store.load}, with where their folder's journal stands. */
const loadedMeta = new WeakMap<object, LoadedMeta>();

/**
 * Environment variable: the journal size in bytes from which a compaction is considered
 * (default {@link DEFAULT_COMPACT_BYTES}); for tests and benchmarks that want compactions early.
 */
export const COMPACT_BYTES_ENV = 'CUSTODYFLOW_SIM_JOURNAL_COMPACT_BYTES';

/** Default smallest journal (bytes) that triggers a compaction: 4 MB. */
export const DEFAULT_COMPACT_BYTES = 4 * 1024 * 1024;

/** The snapshot text of `raw` carrying `journalSeq` (the last journal line it includes). */
function snapshotText(raw: SimState, journalSeq: number): string {
  const t = JSON.stringify(raw);
  return t.slice(0, -1) + (t.length > 2 ? ',' : '') + `"journalSeq":${journalSeq}}`;
}

/**
 * Owns the state document, its journal and its snapshot. See the module comment for the group
 * commit, the journal and the compaction.
 */
export class Store {
  /** Path of the snapshot file (`<dataDir>/state.json`). */
  readonly file: string;
  /** Path of the journal file (`<dataDir>/journal.jsonl`). */
  readonly journalFile: string;
  /**
   * The state document the domain code reads and writes: with persistence, a tracking proxy of
   * {@link raw} (every write through it is journaled); without, the document itself.
   */
  readonly state: SimState;
  /** The plain document behind {@link state} (serialised for snapshots; never write through it). */
  readonly raw: SimState;
  /** Journal size (bytes) from which a compaction is considered ({@link COMPACT_BYTES_ENV}). */
  readonly compactBytes: number;
  private readonly tracker: ChangeTracker<SimState> | null;
  private gen = 0;
  private flushedGen = 0;
  private writing = false;
  private scheduled = false;
  private waiters: Waiter[] = [];
  /** seq of the last journal line written (or included in the snapshot) */
  private seq = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  /** the next write is a full snapshot (a new document, or recovery after a failed append) */
  private needSnapshot = false;
  /** a new document: the old journal, if any, is removed before its first snapshot */
  private fresh = false;
  private fh: FileHandle | null = null;
  /** a compaction whose snapshot is being written; `tail` holds the lines written after it */
  private compaction: { seq: number; tail: string[]; done: boolean; written: Promise<void> } | null = null;
  /** counts of what the store wrote (for benchmarks and tests): journal lines, snapshots */
  readonly stats = { lines: 0, snapshots: 0, compactions: 0 };

  /**
   * @param state the document: one returned by {@link Store.load}, or a new one (then the first
   *   write is a full snapshot, and any journal left in the folder is removed first).
   * @param persist false keeps the state in memory only: commits resolve without writing
   *   (`SimulatorOptions.persist`).
   */
  constructor(
    state: SimState,
    dataDir: string,
    private readonly persist = true,
  ) {
    this.file = path.join(dataDir, SNAPSHOT_FILE);
    this.journalFile = path.join(dataDir, JOURNAL_FILE);
    this.raw = state;
    const env = Number(process.env[COMPACT_BYTES_ENV]);
    this.compactBytes = Number.isFinite(env) && env > 0 ? env : DEFAULT_COMPACT_BYTES;
    if (!persist) {
      this.tracker = null;
      this.state = state;
      return;
    }
    this.tracker = new ChangeTracker(state, () => this.markDirty());
    this.state = this.tracker.proxy;
    const meta = loadedMeta.get(state);
    if (meta) {
      this.seq = meta.lastSeq;
      this.journalBytes = meta.journalBytes;
      this.snapshotBytes = meta.snapshotBytes;
    } else {
      this.fresh = true;
      this.needSnapshot = true;
      this.markDirty();
    }
  }

  /**
   * Load a data folder: the snapshot `state.json`, then the journal lines after its
   * `journalSeq`; a torn last journal line is cut off the file. Leftover `.tmp` files of an
   * interrupted write are removed.
   * @returns the state (upgraded: upgrade.ts `readUpgraded`), or null when there is no snapshot yet.
   * @throws {Error} when the snapshot is not a state document of version 1, or the journal is
   *   corrupt before its last line.
   */
  static async load(dataDir: string): Promise<SimState | null> {
    const r = await readUpgraded(dataDir);
    if (!r.state) return null;
    const journal = path.join(dataDir, JOURNAL_FILE);
    if (r.journalBytes > r.journalGoodBytes) {
      const fh = await fsp.open(journal, 'r+');
      try {
        await fh.truncate(r.journalGoodBytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
    await fsp.rm(path.join(dataDir, SNAPSHOT_FILE + '.tmp'), { force: true });
    await fsp.rm(journal + '.tmp', { force: true });
    const state = r.state as unknown as SimState;
    loadedMeta.set(state, { lastSeq: r.lastSeq, journalBytes: r.journalGoodBytes, snapshotBytes: r.snapshotBytes });
    return state;
  }

  /** Record that the state changed; a write is scheduled (on the next turn of the event loop). */
  markDirty(): void {
    this.gen++;
    this.schedule();
  }

  /** True when every change has been written. */
  get clean(): boolean {
    return this.flushedGen >= this.gen;
  }

  /**
   * Resolve once a write that includes every change made so far has completed (its journal
   * line fdatasync'ed). Resolves at once when nothing is dirty.
   * @throws the file system error of the write that failed (the change stays dirty and is
   *   written by the next write, as part of a full snapshot).
   */
  commit(): Promise<void> {
    if (this.flushedGen >= this.gen) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ gen: this.gen, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    // setImmediate: the mutating handler finishes first, and concurrent requests batch up.
    setImmediate(() => {
      this.scheduled = false;
      void this.writeLoop();
    });
  }

  private async writeLoop(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.flushedGen < this.gen || this.compaction?.done) {
        if (this.compaction?.done) {
          await this.finishCompaction();
          continue;
        }
        const target = this.gen;
        try {
          if (this.persist) {
            if (this.needSnapshot) await this.fullSnapshot();
            else await this.appendLine();
          }
          this.flushedGen = target;
          this.settle((w) => w.gen <= target, null);
        } catch (err) {
          this.settle((w) => w.gen <= target, err);
          break;
        }
      }
    } finally {
      this.writing = false;
    }
    if ((this.flushedGen < this.gen && this.waiters.length > 0) || this.compaction?.done) this.schedule();
  }

  private settle(match: (w: Waiter) => boolean, err: unknown): void {
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (!match(w)) keep.push(w);
      else if (err) w.reject(err);
      else w.resolve();
    }
    this.waiters = keep;
  }

  private async journal(): Promise<FileHandle> {
    if (!this.fh) {
      this.fh = await fsp.open(this.journalFile, 'a', 0o600);
      // The file may be new: make its folder entry durable before the first line counts.
      await syncDir(path.dirname(this.journalFile));
    }
    return this.fh;
  }

  private async closeJournal(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (fh) await fh.close().catch(() => undefined);
  }

  /** Append one line with every change recorded so far and fdatasync it; start a compaction when due. */
  private async appendLine(): Promise<void> {
    const tracker = this.tracker!;
    if (!tracker.hasChanges) return;
    const seq = this.seq + 1;
    const line = `{"seq":${seq},"ops":${tracker.take()}}\n`;
    // A compaction's snapshot is the state exactly after this line (taken in the same turn).
    const due = !this.compaction && this.journalBytes > Math.max(this.compactBytes, this.snapshotBytes / 4);
    const snap = due ? snapshotText(this.raw, seq) : undefined;
    try {
      const fh = await this.journal();
      await fh.writeFile(line, 'utf8');
      await fh.datasync();
    } catch (err) {
      // The line may be partly written: the changes it held go into a full snapshot instead.
      this.needSnapshot = true;
      await this.closeJournal();
      throw err;
    }
    this.seq = seq;
    this.journalBytes += Buffer.byteLength(line);
    this.stats.lines++;
    if (this.compaction) this.compaction.tail.push(line);
    if (snap !== undefined) this.startCompaction(seq, snap);
  }

  /**
   * Write the snapshot in the background while lines keep being appended (they are kept in
   * `tail`); {@link finishCompaction} then rewrites the journal to those lines.
   */
  private startCompaction(seq: number, text: string): void {
    const c = { seq, tail: [] as string[], done: false, written: Promise.resolve() };
    c.written = writeAtomic(this.file, text).then(
      () => {
        this.snapshotBytes = Buffer.byteLength(text);
        this.stats.snapshots++;
        c.done = true;
        if (!this.writing) this.schedule();
      },
      () => {
        // The old snapshot and the whole journal stay: still correct; retried when due again.
        if (this.compaction === c) this.compaction = null;
      },
    );
    this.compaction = c;
  }

  /**
   * After a compaction's snapshot is renamed into place: replace the journal by the lines
   * written after it (tmp, fsync, rename, fsync the folder). Runs inside the write loop, so no
   * append is in flight. A crash at any point loads correctly: lines up to the snapshot's
   * `journalSeq` are skipped.
   */
  private async finishCompaction(): Promise<void> {
    const c = this.compaction!;
    this.compaction = null;
    try {
      const tail = c.tail.join('');
      await this.closeJournal();
      await writeAtomic(this.journalFile, tail);
      this.journalBytes = Buffer.byteLength(tail);
      this.stats.compactions++;
    } catch {
      // The journal keeps every line: still correct; the next compaction tries again.
      await this.closeJournal();
    }
  }

  /**
   * Write the whole document as the snapshot, then remove the journal (a new document: remove
   * the journal first, so lines of an older document never apply to it).
   */
  private async fullSnapshot(): Promise<void> {
    if (this.compaction) {
      await this.compaction.written;
      this.compaction = null;
    }
    this.tracker?.take();
    const text = snapshotText(this.raw, this.seq);
    await this.closeJournal();
    if (this.fresh) {
      await fsp.rm(this.journalFile, { force: true });
      await syncDir(path.dirname(this.journalFile));
    }
    await writeAtomic(this.file, text);
    if (!this.fresh) {
      await fsp.rm(this.journalFile, { force: true });
      await syncDir(path.dirname(this.journalFile));
    }
    this.fresh = false;
    this.needSnapshot = false;
    this.snapshotBytes = Buffer.byteLength(text);
    this.journalBytes = 0;
    this.stats.snapshots++;
  }

  /** Write everything still dirty and wait for it, and for a compaction under way (used by start and stop). */
  async flush(): Promise<void> {
    for (;;) {
      if (!this.clean) await this.commit();
      else if (this.compaction && !this.compaction.done) await this.compaction.written;
      else if (this.writing || this.scheduled || this.compaction) await new Promise((r) => setImmediate(r));
      else return;
    }
  }

  /**
   * Flush, then write a full snapshot and remove the journal, so `state.json` alone holds the
   * state (used by `Simulator.stop()`). Costs a full serialisation (seconds for a 200 MB state).
   * No-op without persistence.
   */
  async close(): Promise<void> {
    await this.flush();
    if (!this.persist) return;
    this.writing = true;
    try {
      if (this.journalBytes > 0 || this.needSnapshot || this.tracker!.hasChanges) {
        const target = this.gen;
        this.needSnapshot = true;
        await this.fullSnapshot();
        this.flushedGen = target;
      }
    } finally {
      this.writing = false;
      await this.closeJournal();
    }
  }

  /**
   * The journal check ({@link JOURNAL_CHECK_ENV} in journal.ts): read the data folder afresh
   * (snapshot + journal) and compare it with the document in memory, key order ignored. Call
   * after {@link flush}.
   * @returns the differences (`path: in memory ..., reloaded ...`), empty when they agree or
   *   without persistence.
   */
  async verify(): Promise<string[]> {
    if (!this.persist) return [];
    const r = await readUpgraded(path.dirname(this.file));
    const memory = JSON.parse(JSON.stringify(this.raw)) as unknown;
    return jsonDifferences(memory, r.state);
  }
}
