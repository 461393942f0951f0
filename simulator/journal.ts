/**
 * The simulator's append-only journal of changes, so persisting a change costs the same however
 * large the state is: change tracking through a proxy of the state document, the journal
 * line format, and reading a data folder back (snapshot + journal).
 *
 * Change tracking ({@link ChangeTracker}): the state document is handed out wrapped in a deep
 * Proxy (one proxy per raw object, cached). Its `set`, `deleteProperty` and `defineProperty`
 * traps record the *unit* that changed, a path from the root:
 * - a top-level key is its own unit when it is a scalar or a small object;
 * - most top-level collections have units `[collection, key]` (`['transfers', txID]`,
 *   `['wallets', id]`, `['actions', id]`, `['nonceMarks', apiKey]`...);
 * - `ledger`, `whitelists` and `v2` have units one level deeper: `['ledger', fund_id, index]`
 *   (one entry of a fund's array; a push records the element only), `['v2', 'actions', id]`;
 * - a write above the unit depth (creating `ledger[fund]`, replacing a whole collection, an
 *   array shrinking) records that shallower path, which covers its descendants.
 * Any write anywhere below a unit records the unit. So no unit grows with history, and a group
 * commit writes a number of bytes proportional to what it changed.
 *
 * Journal `<dataDir>/journal.jsonl` (mode 0600): one line per group commit,
 * `{"seq":N,"ops":[[path,value],[path]]}` where a path without value is a delete; the value is
 * the unit's JSON at the time the line was built. The snapshot `state.json` carries the
 * `journalSeq` it includes (absent in files of older simulators: 0). Loading reads the
 * snapshot, then replays lines with `seq > journalSeq` in order; a torn last line (no newline,
 * or unparsable: it was never acknowledged) is ignored.
 *
 * Known limit: a mutation made through a raw reference (an object created outside the proxy,
 * stored into the state, and mutated later through the creator's own reference in a later
 * turn of the event loop) is not seen. The test run's journal check ({@link JOURNAL_CHECK_ENV})
 * catches it: it compares the state a fresh load gives with the one in memory.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

/** File name of the journal inside the data folder. */
export const JOURNAL_FILE = 'journal.jsonl';
/** File name of the snapshot inside the data folder. */
export const SNAPSHOT_FILE = 'state.json';

/**
 * Environment variable that turns the journal check on (any non-empty value): `Simulator.stop()`
 * reloads its data folder (snapshot + journal) after its final flush and compares it with the
 * state in memory; a difference is a violation, appended to the response check's file
 * (simulator/response-check.ts `CHECK_ENV`) when that is set, thrown otherwise. Set for the
 * whole test run by test/helpers/response-check.ts.
 */
export const JOURNAL_CHECK_ENV = 'CUSTODYFLOW_SIM_CHECK_JOURNAL';

/**
 * Unit depth per top-level key of the state (see the module comment); keys not listed: 2
 * (`[collection, key]`; for a scalar the write at the root records `[key]` already).
 */
const UNIT_DEPTH: Record<string, number> = { ledger: 3, whitelists: 3, v2: 3 };

type Handler = ProxyHandler<object>;

/** Read through a tracking proxy: its raw target. */
const RAW = Symbol('raw');
/** Read through a tracking proxy: its handler. */
const HANDLER = Symbol('handler');

/**
 * Proxy handler of an object above the unit depth (the root, a collection, a fund's ledger
 * array): a write of key `k` records `path + [k]`.
 */
class InnerNode implements Handler {
  /** path joined with NUL (the dirty map's key) */
  readonly key: string;
  constructor(
    readonly tracker: ChangeTracker,
    readonly parent: InnerNode | null,
    readonly name: string,
    readonly path: string[],
    /** unit depth of the branch (0 for the root: decided per child) */
    readonly unitDepth: number,
  ) {
    this.key = path.join('\0');
  }

  get(target: object, prop: string | symbol): unknown {
    const v = (target as Record<string | symbol, unknown>)[prop];
    if (typeof prop === 'symbol') return prop === RAW ? target : prop === HANDLER ? this : v;
    if (v === null || typeof v !== 'object') return v;
    return this.tracker.wrapChild(v, this, prop);
  }

  set(target: object, prop: string | symbol, value: unknown): boolean {
    const v = this.tracker.unwrap(value);
    (target as Record<string | symbol, unknown>)[prop] = v;
    if (typeof prop === 'string') {
      // A push sets the element, then `length` to what it already is: nothing more to record.
      if (prop === 'length' && Array.isArray(target) && target.length === value) return true;
      if (prop === 'length' && Array.isArray(target)) this.tracker.mark(this.path, this.key);
      else this.tracker.mark([...this.path, prop], this.key === '' ? prop : this.key + '\0' + prop);
    }
    return true;
  }

  deleteProperty(target: object, prop: string | symbol): boolean {
    delete (target as Record<string | symbol, unknown>)[prop];
    if (typeof prop === 'string') this.tracker.mark([...this.path, prop], this.key === '' ? prop : this.key + '\0' + prop);
    return true;
  }

  defineProperty(target: object, prop: string | symbol, desc: PropertyDescriptor): boolean {
    if ('value' in desc) desc = { ...desc, value: this.tracker.unwrap(desc.value) };
    Reflect.defineProperty(target, prop, desc);
    if (typeof prop === 'string') this.tracker.mark([...this.path, prop], this.key === '' ? prop : this.key + '\0' + prop);
    return true;
  }
}

/** Proxy handler shared by a unit's object and every object below it: any write records the unit. */
class UnitNode implements Handler {
  private p: string[] | undefined;
  private k: string | undefined;
  constructor(
    readonly tracker: ChangeTracker,
    readonly parent: InnerNode,
    readonly name: string,
  ) {}

  /** the unit's path (computed on first write: most units are only read) */
  get path(): string[] {
    return (this.p ??= [...this.parent.path, this.name]);
  }

  /** the path joined with NUL */
  get key(): string {
    return (this.k ??= this.path.join('\0'));
  }

  get(target: object, prop: string | symbol): unknown {
    const v = (target as Record<string | symbol, unknown>)[prop];
    if (typeof prop === 'symbol') return prop === RAW ? target : prop === HANDLER ? this : v;
    if (v === null || typeof v !== 'object') return v;
    return this.tracker.wrapWith(v, this);
  }

  set(target: object, prop: string | symbol, value: unknown): boolean {
    const v = this.tracker.unwrap(value);
    (target as Record<string | symbol, unknown>)[prop] = v;
    this.tracker.mark(this.path, this.key);
    return true;
  }

  deleteProperty(target: object, prop: string | symbol): boolean {
    delete (target as Record<string | symbol, unknown>)[prop];
    this.tracker.mark(this.path, this.key);
    return true;
  }

  defineProperty(target: object, prop: string | symbol, desc: PropertyDescriptor): boolean {
    if ('value' in desc) desc = { ...desc, value: this.tracker.unwrap(desc.value) };
    Reflect.defineProperty(target, prop, desc);
    this.tracker.mark(this.path, this.key);
    return true;
  }
}

/**
 * Tracks which units of a state document changed (see the module comment). `proxy` is what the
 * domain code reads and writes; `raw` is the plain document (serialised for snapshots).
 */
export class ChangeTracker<T extends object = object> {
  /** the document wrapped in the tracking proxy */
  readonly proxy: T;
  /** dirty paths by NUL-joined key, in the order first recorded */
  private dirty = new Map<string, string[]>();
  /** raw object -> its proxy (the handler is read back through the proxy's HANDLER) */
  private readonly proxies = new WeakMap<object, object>();

  /**
   * @param raw the state document (a plain JSON-compatible object)
   * @param onChange called after every recorded write (the Store's `markDirty`)
   */
  constructor(
    readonly raw: T,
    private readonly onChange: () => void,
  ) {
    const root = new InnerNode(this, null, '', [], 0);
    this.proxy = this.make(raw, root) as T;
  }

  private make(raw: object, handler: Handler): object {
    const p = new Proxy(raw, handler);
    this.proxies.set(raw, p);
    return p;
  }

  private static handlerOf(proxy: object | undefined): Handler | undefined {
    return proxy === undefined ? undefined : ((proxy as Record<symbol, unknown>)[HANDLER] as Handler);
  }

  /** The raw object behind a proxy of this tracker, or the value itself. */
  unwrap<V>(value: V): V {
    if (value !== null && typeof value === 'object') return ((value as Record<symbol, unknown>)[RAW] as V | undefined) ?? value;
    return value;
  }

  /** @internal proxy of `raw` inside the unit of `unit` */
  wrapWith(raw: object, unit: UnitNode): object {
    const cached = this.proxies.get(raw);
    if (cached !== undefined && ChangeTracker.handlerOf(cached) === unit) return cached;
    return this.make(raw, unit);
  }

  /** @internal proxy of `raw`, the value of key `name` of the object handled by `parent` */
  wrapChild(raw: object, parent: InnerNode, name: string): object {
    const cached = this.proxies.get(raw);
    if (cached !== undefined) {
      const h = ChangeTracker.handlerOf(cached) as InnerNode | UnitNode;
      if (h.parent === parent && h.name === name) return cached;
    }
    return this.make(raw, this.childHandler(parent, name));
  }

  private childHandler(parent: InnerNode, name: string): InnerNode | UnitNode {
    const depth = parent.parent === null ? (UNIT_DEPTH[name] ?? 2) : parent.unitDepth;
    return parent.path.length + 1 >= depth ? new UnitNode(this, parent, name) : new InnerNode(this, parent, name, [...parent.path, name], depth);
  }

  /** @internal record a changed path */
  mark(p: string[], key: string): void {
    if (!this.dirty.has(key)) this.dirty.set(key, p);
    this.onChange();
  }

  /** Record a path as changed by hand (e.g. every top-level key of a new document). */
  markPath(p: string[]): void {
    this.mark(p, p.join('\0'));
  }

  /** True when something was recorded since the last {@link take}. */
  get hasChanges(): boolean {
    return this.dirty.size > 0;
  }

  /**
   * The recorded changes as journal ops (JSON text of `[[path,value],[path]]`, the value read
   * from the raw document now), and forget them. A path covered by a shallower recorded path is
   * left out (the shallower value holds it).
   * @returns the ops' JSON text, `[]` when nothing changed.
   */
  take(): string {
    const dirty = this.dirty;
    this.dirty = new Map();
    const ops: string[] = [];
    for (const p of dirty.values()) {
      let covered = false;
      for (let i = 1; i < p.length && !covered; i++) covered = dirty.has(p.slice(0, i).join('\0'));
      if (covered) continue;
      const v = resolve(this.raw, p);
      const json = v === undefined ? undefined : JSON.stringify(v);
      ops.push(json === undefined ? `[${JSON.stringify(p)}]` : `[${JSON.stringify(p)},${json}]`);
    }
    return `[${ops.join(',')}]`;
  }
}

/** The value at `p` in `root`, or undefined when it or a parent is absent. */
function resolve(root: unknown, p: string[]): unknown {
  let v: unknown = root;
  for (const k of p) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** One journal op: `[path, value]` sets, `[path]` deletes. */
export type JournalOp = [string[], unknown?];

/**
 * Apply journal ops to a document in order.
 * @throws {Error} when a set's parent is missing or not an object (a corrupt journal).
 */
export function applyOps(root: Record<string, unknown>, ops: JournalOp[]): void {
  for (const op of ops) {
    const p = op[0];
    if (!Array.isArray(p) || p.length === 0) throw new Error(`journal: bad op path ${JSON.stringify(p)}`);
    const parent = resolve(root, p.slice(0, -1));
    const last = p[p.length - 1];
    if (op.length < 2) {
      if (parent !== null && typeof parent === 'object') delete (parent as Record<string, unknown>)[last];
      continue;
    }
    if (parent === null || typeof parent !== 'object') throw new Error(`journal: no parent object for ${p.join('/')}`);
    (parent as Record<string, unknown>)[last] = op[1];
  }
}

/** What {@link readDataFolder} found. */
export interface DataFolderRead {
  /** the document (snapshot + replayed journal, `journalSeq` removed), null when there is no snapshot */
  state: Record<string, unknown> | null;
  /** the `journalSeq` of the snapshot (0 for a file without it) */
  journalSeq: number;
  /** seq of the last journal line applied or skipped (>= journalSeq) */
  lastSeq: number;
  /** bytes of the snapshot file */
  snapshotBytes: number;
  /** bytes of the journal up to the end of its last whole line */
  journalGoodBytes: number;
  /** bytes of the journal file (larger than journalGoodBytes when its last line is torn) */
  journalBytes: number;
  /** lines replayed (seq > journalSeq) */
  replayed: number;
}

const SEQ_PREFIX = /^\{"seq":(\d+),/;

/**
 * Read a data folder: the snapshot, then the journal's lines with seq above its `journalSeq`,
 * in order. A journal without a snapshot is ignored (a snapshot is always written before the
 * first line: a journal alone is left from a state deleted by hand, or from a first start that
 * crashed). Reads only: never writes.
 * @param upgrade applied to the snapshot before the replay (the lines were recorded against an
 *   upgraded document; upgrade.ts `upgradeState`).
 * @throws {Error} when the snapshot is not JSON, or a journal line that is not the last is
 *   unreadable, or seqs do not increase (a corrupt folder).
 */
export async function readDataFolder(dataDir: string, upgrade: (s: Record<string, unknown>) => void): Promise<DataFolderRead> {
  const snapFile = path.join(dataDir, SNAPSHOT_FILE);
  let text: string;
  try {
    text = await fsp.readFile(snapFile, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: null, journalSeq: 0, lastSeq: 0, snapshotBytes: 0, journalGoodBytes: 0, journalBytes: 0, replayed: 0 };
    throw e;
  }
  const snapshotBytes = Buffer.byteLength(text);
  const state = JSON.parse(text) as Record<string, unknown>;
  text = '';
  if (!state || typeof state !== 'object' || state.version !== 1) throw new Error(`simulator: ${snapFile} is not a version 1 state file`);
  const journalSeq = typeof state.journalSeq === 'number' ? state.journalSeq : 0;
  delete state.journalSeq;
  upgrade(state);

  let buf: Buffer;
  try {
    buf = await fsp.readFile(path.join(dataDir, JOURNAL_FILE));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state, journalSeq, lastSeq: journalSeq, snapshotBytes, journalGoodBytes: 0, journalBytes: 0, replayed: 0 };
    throw e;
  }
  let lastSeq = journalSeq;
  let pos = 0;
  let good = 0;
  let replayed = 0;
  let tornAt = -1;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    const end = nl < 0 ? buf.length : nl;
    const line = buf.toString('utf8', pos, end);
    let seq: number | undefined;
    let ops: JournalOp[] | undefined;
    if (nl >= 0) {
      const m = SEQ_PREFIX.exec(line);
      if (m && Number(m[1]) <= journalSeq) {
        // Included in the snapshot: skip without parsing (its seq prefix is enough).
        seq = Number(m[1]);
      } else {
        try {
          const parsed = JSON.parse(line) as { seq: number; ops: JournalOp[] };
          if (typeof parsed.seq === 'number' && Array.isArray(parsed.ops)) {
            seq = parsed.seq;
            ops = parsed.ops;
          }
        } catch {
          seq = undefined;
        }
      }
    }
    if (seq === undefined) {
      // Torn (no newline, or an unreadable line): only acceptable as the end of the file.
      if (tornAt < 0) tornAt = pos;
      pos = nl < 0 ? buf.length : nl + 1;
      continue;
    }
    if (tornAt >= 0) throw new Error(`simulator: ${path.join(dataDir, JOURNAL_FILE)} has an unreadable line at byte ${tornAt} followed by others`);
    if (seq <= lastSeq && seq > journalSeq) throw new Error(`simulator: ${path.join(dataDir, JOURNAL_FILE)}: seq ${seq} after ${lastSeq}`);
    if (ops) {
      applyOps(state, ops);
      replayed++;
    }
    if (seq > lastSeq) lastSeq = seq;
    pos = nl + 1;
    good = pos;
  }
  return { state, journalSeq, lastSeq, snapshotBytes, journalGoodBytes: good, journalBytes: buf.length, replayed };
}

/**
 * Differences between two JSON documents, as `path: expected ... got ...` texts (at most
 * `max`); key order is ignored.
 */
export function jsonDifferences(expected: unknown, actual: unknown, max = 10, at = ''): string[] {
  if (isDeepStrictEqual(expected, actual)) return [];
  const out: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';
  if (isObj(expected) && isObj(actual) && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const k of keys) {
      if (out.length >= max) break;
      out.push(...jsonDifferences(expected[k], actual[k], max - out.length, `${at}/${k}`));
    }
    return out;
  }
  const show = (v: unknown): string => (v === undefined ? 'absent' : JSON.stringify(v).slice(0, 200));
  return [`${at || '/'}: in memory ${show(expected)}, reloaded ${show(actual)}`];
}
