/**
 * The durable memory of a `custody-track` node: what it follows (docs/nodes.md, "custody-track",
 * "Across restarts"). One {@link TrackRecord} per followed msg, written before the tracking starts,
 * updated when the status moves, marked "reported" before the final answer is sent, so a restart or
 * a redeploy resumes every transaction still followed and never sends a final answer twice.
 *
 * Two implementations of {@link TrackStore}:
 * - {@link FileTrackStore}: one JSON Lines file per node (`<folder>/<node id>.jsonl`), written with
 *   {@link RecordFile} (group-committed, fdatasync'ed appends; atomic rewrite to compact it). A line
 *   is `{"put": record}` or `{"drop": id}`; the last line of an id wins.
 * - {@link RedisTrackStore}: one hash per node (`<prefix>track:<node id>`, field = record id, value =
 *   the record as JSON) and one key per report (`<prefix>track:<node id>:reported:<record id>`,
 *   `SET NX PX`): with several Node-RED instances on the same Redis, the instance whose `SET NX`
 *   succeeds sends the final answer, the others drop it.
 *
 * Units: every time is epoch milliseconds (`Date.now()`); sizes in bytes of UTF-8 JSON.
 * No Node-RED import.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { RecordFile } from '../support/durable/record-file';
import type { TrackTarget } from './tracker';
import type { CoordinationState } from '../coordination/coordinator';
import { isTransactionKind } from '../api/kinds';
import { withScripts, type LuaScript } from '../coordination/lua';

/** How long a reported final answer is remembered (the send-once check), ms: 24 hours. */
export const DEFAULT_TRACK_KEEP_REPORTED_MS = 24 * 3600_000;

/** Largest stored copy of a msg ({@link storableMsg}), bytes of JSON: 64 KiB. */
export const DEFAULT_TRACK_MSG_MAX_BYTES = 64 * 1024;

/** How a tracking ended, as recorded by {@link TrackStore.markReported}. */
export type TrackOutcome = 'final' | 'timedOut' | 'error';

/**
 * One followed msg as stored. Example:
 * `{id: "t1/8f3c", target: {kind: "transfer", tx_id: "t1", company_id: "c1"}, msg: {_msgid: "8f3c", payload: {tx_id: "t1"}}, startedAt: 1700000000000, deadline: 1700003600000, reads: 2, state: "pending_transfer"}`.
 */
export interface TrackRecord {
  /** The record's id: `<tx_id>/<_msgid>` ({@link trackRecordId}); unique per node. */
  id: string;
  /** What is followed (kind, `tx_id`, owner id, `expires` in epoch seconds when known). */
  target: TrackTarget;
  /** The JSON-safe copy of the msg ({@link storableMsg}) the resumed msg is rebuilt from. */
  msg: Record<string, unknown>;
  /** When the tracking started, epoch ms (kept across restarts). */
  startedAt: number;
  /** When the tracking gives up unless final, epoch ms (`expires` * 1000 + margin, or start + the unknown-expiry time). */
  deadline: number;
  /** Reads made so far. */
  reads: number;
  /** The last status read; absent before the first successful read. */
  state?: string;
  /** Set once the outcome is recorded, just before it is sent: epoch ms. */
  reportedAt?: number;
  /** How it ended (with `reportedAt`). */
  outcome?: TrackOutcome;
}

/**
 * Where a `custody-track` node records what it follows. Every method rejects with what the storage
 * throws (a file system error; `CoordinationUnavailableError`, code `ECOORDINATION`, while Redis
 * cannot be reached): nothing is then recorded.
 */
export interface TrackStore {
  /** `file` or `redis`. */
  readonly kind: 'file' | 'redis';
  /**
   * The records still to follow (not reported), oldest start first. Drops what is past its
   * horizon: reported records older than the keep time, and (Redis) records already reported by
   * some instance.
   */
  load(): Promise<TrackRecord[]>;
  /** Record `record` (insert or replace by id). Resolves once durable. */
  put(record: TrackRecord): Promise<void>;
  /**
   * Record that the outcome of `id` is being reported, before sending it.
   * @param id the record id.
   * @param outcome how it ended.
   * @returns true: this caller reports it (send now); false: already reported (by an earlier start,
   *   or by another instance sharing the Redis): send nothing.
   */
  markReported(id: string, outcome: TrackOutcome): Promise<boolean>;
  /** Forget `id` at once (e.g. a timed-out one, once reported). */
  drop(id: string): Promise<void>;
  /** Release the storage (file handle); the records stay for the next start. */
  close(): Promise<void>;
  /** Remove every record of this node (the node was deleted from the flows), then release the storage. */
  destroy(): Promise<void>;
}

/**
 * The id of a record: `<tx_id>/<_msgid>` (a transaction followed twice, by two msgs, is two records).
 * @param txId the transaction id.
 * @param msgId the msg's `_msgid`.
 */
export function trackRecordId(txId: string, msgId: string): string {
  return `${txId}/${msgId}`;
}

/** Properties never stored: Node-RED's HTTP request and response objects, and what the node writes itself. */
const NEVER_STORED = new Set(['req', 'res', 'track', 'resumed', 'statusCode', 'error']);
/** Stored first, in this order, so the cap drops the user's own properties before these. */
const FIRST = ['_msgid', 'topic', 'custody', 'kind', 'payload'];

/** What {@link storableMsg} made. */
export interface StorableMsg {
  /** The JSON-safe copy: a plain object that `JSON.parse(JSON.stringify(...))` gives back as it is. */
  msg: Record<string, unknown>;
  /** Names of the properties left out (not JSON-serialisable, or past the cap); `payload` when it was replaced by the transaction ids. */
  dropped: string[];
}

/**
 * A JSON-safe copy of `msg` to store with a {@link TrackRecord}: `_msgid`, `topic`, `custody`,
 * `kind`, `payload`, then the user's own properties, each kept only when `JSON.stringify` can
 * write it (no function, BigInt, or cycle) and the copy stays within `maxBytes`. Never kept:
 * `req`, `res` (HTTP objects), properties starting with `_` other than `_msgid` (Node-RED's own,
 * such as `_event`, `_linkSource`), and `track`, `resumed`, `statusCode`, `error` (written by the
 * node). A `payload` that does not fit is replaced by `ids` (the transaction ids).
 * @param msg the msg as it came in.
 * @param ids what stands in for a payload that cannot be stored (e.g. `{tx_id, company_id}`).
 * @param maxBytes the cap, bytes of JSON (default {@link DEFAULT_TRACK_MSG_MAX_BYTES}).
 */
export function storableMsg(msg: Record<string, unknown>, ids: Record<string, unknown>, maxBytes = DEFAULT_TRACK_MSG_MAX_BYTES): StorableMsg {
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  let size = 2; // {}
  const keys = [...FIRST.filter((k) => k in msg), ...Object.keys(msg).filter((k) => !FIRST.includes(k))];
  for (const key of keys) {
    if (NEVER_STORED.has(key) || (key.startsWith('_') && key !== '_msgid')) continue;
    let text: string | undefined;
    try {
      text = JSON.stringify(msg[key]);
    } catch {
      text = undefined;
    }
    const cost = text === undefined ? Infinity : Buffer.byteLength(JSON.stringify(key) + ':' + text + ',', 'utf8');
    if (text !== undefined && size + cost <= maxBytes) {
      out[key] = JSON.parse(text);
      size += cost;
    } else if (key === 'payload') {
      out.payload = { ...ids };
      size += Buffer.byteLength(JSON.stringify({ payload: ids }), 'utf8');
      dropped.push(key);
    } else if (msg[key] !== undefined) {
      dropped.push(key);
    }
  }
  return { msg: out, dropped };
}

/** Whether `r` has the shape of a {@link TrackRecord} (a line or hash value read back). */
function isRecord(r: unknown): r is TrackRecord {
  if (!r || typeof r !== 'object') return false;
  const x = r as TrackRecord;
  return (
    typeof x.id === 'string' &&
    !!x.target &&
    typeof x.target === 'object' &&
    isTransactionKind(x.target.kind) &&
    typeof x.target.tx_id === 'string' &&
    !!x.msg &&
    typeof x.msg === 'object' &&
    Number.isFinite(x.startedAt) &&
    Number.isFinite(x.deadline)
  );
}

/**
 * One line of a {@link FileTrackStore} file: a record put (followed, or its state moved), a record
 * dropped, or a record reported (`at` epoch ms, and how it ended): after that line only the id,
 * the time and the outcome are kept, never the msg.
 */
type TrackLine = { put: TrackRecord } | { drop: string } | { reported: string; at: number; outcome: TrackOutcome };

const OUTCOMES: readonly TrackOutcome[] = ['final', 'timedOut', 'error'];

/** How often a {@link FileTrackStore} forgets reports past their keep time by itself, ms (also at idle). */
export const TRACK_PRUNE_EVERY_MS = 30_000;

/** Options of {@link FileTrackStore.open} and {@link RedisTrackStore}. */
export interface TrackStoreOptions {
  /** How long a reported final answer is remembered, ms (default {@link DEFAULT_TRACK_KEEP_REPORTED_MS}). */
  keepReportedMs?: number;
  /** The wall clock, epoch ms (default `Date.now`); for tests. */
  now?: () => number;
}

/** What a {@link FileTrackStore} holds in memory ({@link FileTrackStore.retained}). */
export interface TrackRetained {
  /** Records followed (not reported): each with its msg copy. */
  live: number;
  /** Reports remembered (id, time, outcome) until the keep time passes. */
  reported: number;
}

/**
 * The file of node `nodeId` in `folder`: `<folder>/<node id>.jsonl`; characters of the id other
 * than letters, digits, `.`, `_` and `-` become `_`.
 */
export function trackStoreFile(folder: string, nodeId: string): string {
  return path.join(folder, `${nodeId.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
}

/**
 * {@link TrackStore} in a JSON Lines file (see the module comment). One instance per file per
 * process. In memory: each record followed, with its msg copy, until it is reported; then only its
 * id and one number (report time and outcome) until {@link TrackStoreOptions.keepReportedMs} has
 * passed (docs/performance.md, "What is kept in memory"). Compacted (rewritten with what is kept)
 * at open and whenever it holds more than twice as many lines as kept entries (plus 64).
 */
export class FileTrackStore implements TrackStore {
  readonly kind = 'file' as const;
  /** The file's path. */
  readonly path: string;
  readonly #file: RecordFile<TrackLine>;
  /** The records followed (not reported). */
  readonly #records = new Map<string, TrackRecord>();
  /**
   * The reports remembered: id -> (report time in epoch seconds - {@link FileTrackStore.#base}) * 4 +
   * the outcome's index in {@link OUTCOMES}: a small integer (a V8 Smi, stored in the map itself)
   * for 17 years either side of the store's opening.
   */
  readonly #reported = new Map<string, number>();
  /** Epoch seconds the report times are counted from (when the store was opened). */
  readonly #base: number;
  readonly #keepMs: number;
  readonly #now: () => number;
  readonly #pruneTimer: NodeJS.Timeout;

  private constructor(file: RecordFile<TrackLine>, options: TrackStoreOptions) {
    this.#file = file;
    this.path = file.path;
    this.#keepMs = options.keepReportedMs ?? DEFAULT_TRACK_KEEP_REPORTED_MS;
    this.#now = options.now ?? Date.now;
    this.#base = Math.floor(this.#now() / 1000);
    this.#pruneTimer = setInterval(() => this.#prune(), TRACK_PRUNE_EVERY_MS);
    this.#pruneTimer.unref();
  }

  /**
   * Open (or create, with its folder, modes 0700/0600) the file and read it. A file written
   * before `reported` lines existed (its reported records as `put` lines with `reportedAt`) is
   * read the same way and rewritten in the compact form.
   * @param file e.g. from {@link trackStoreFile}.
   * @throws what the file system throws (rejects), e.g. EACCES.
   */
  static async open(file: string, options: TrackStoreOptions = {}): Promise<FileTrackStore> {
    const opened = await RecordFile.open<TrackLine>(file);
    const store = new FileTrackStore(opened.file, options);
    let legacy = false;
    for (const line of opened.records) {
      if ('put' in line && isRecord(line.put)) {
        if (line.put.reportedAt !== undefined) {
          legacy = true;
          store.#remember(line.put.id, line.put.reportedAt, line.put.outcome ?? 'final');
        } else if (!store.#reported.has(line.put.id)) store.#records.set(line.put.id, line.put);
      } else if ('reported' in line && typeof line.reported === 'string' && Number.isFinite(line.at)) {
        store.#remember(line.reported, line.at, line.outcome);
      } else if ('drop' in line && typeof line.drop === 'string') {
        store.#records.delete(line.drop);
        store.#reported.delete(line.drop);
      }
    }
    store.#prune();
    if (legacy || opened.file.lines + opened.skipped > store.#kept()) await opened.file.rewrite(store.#lines());
    return store;
  }

  /** Records followed plus reports remembered. */
  get size(): number {
    return this.#kept();
  }

  /** What the store holds in memory now, once reports past their keep time are forgotten. */
  retained(): TrackRetained {
    this.#prune();
    return { live: this.#records.size, reported: this.#reported.size };
  }

  async load(): Promise<TrackRecord[]> {
    this.#prune();
    return [...this.#records.values()].sort((a, b) => a.startedAt - b.startedAt);
  }

  async put(record: TrackRecord): Promise<void> {
    if (this.#reported.has(record.id)) return; // reported: nothing moves it back
    const copy = JSON.parse(JSON.stringify(record)) as TrackRecord;
    this.#records.set(record.id, copy);
    await this.#append({ put: copy });
  }

  async markReported(id: string, outcome: TrackOutcome): Promise<boolean> {
    const known = this.#records.get(id);
    if (!known || this.#reported.has(id)) return false;
    const at = this.#now();
    // At once, so a second call in the same turn sees it.
    this.#records.delete(id);
    this.#remember(id, at, outcome);
    try {
      await this.#append({ reported: id, at, outcome });
    } catch (e) {
      this.#reported.delete(id);
      this.#records.set(id, known);
      throw e;
    }
    return true;
  }

  async drop(id: string): Promise<void> {
    const had = this.#records.delete(id);
    if (!this.#reported.delete(id) && !had) return;
    await this.#append({ drop: id });
  }

  close(): Promise<void> {
    clearInterval(this.#pruneTimer);
    return this.#file.close();
  }

  async destroy(): Promise<void> {
    clearInterval(this.#pruneTimer);
    this.#records.clear();
    this.#reported.clear();
    await this.#file.close();
    await Promise.all([this.path, this.path + '.tmp'].map((f) => fs.promises.rm(f, { force: true })));
  }

  /** Remember the report of `id` at `at` (epoch ms; kept to the second). */
  #remember(id: string, at: number, outcome: TrackOutcome): void {
    this.#records.delete(id);
    this.#reported.set(id, (Math.floor(at / 1000) - this.#base) * 4 + Math.max(0, OUTCOMES.indexOf(outcome)));
  }

  /** The report time (epoch ms, to the second) of a {@link FileTrackStore.#reported} value. */
  #reportedAt(v: number): number {
    return (this.#base + Math.floor(v / 4)) * 1000;
  }

  #kept(): number {
    return this.#records.size + this.#reported.size;
  }

  /** Append one line, then compact when the file has grown past twice what is kept. */
  async #append(line: TrackLine): Promise<void> {
    await this.#file.append(line);
    if (this.#file.lines > 2 * this.#kept() + 64) {
      this.#prune();
      // A failed compaction loses nothing (the old content holds every live record).
      await this.#file.rewrite(this.#lines()).catch(() => undefined);
    }
  }

  /** Forget reports older than the keep time. */
  #prune(): void {
    const before = this.#now() - this.#keepMs;
    for (const [id, v] of this.#reported) if (this.#reportedAt(v) < before) this.#reported.delete(id);
  }

  #lines(): TrackLine[] {
    const out: TrackLine[] = Array.from(this.#records.values(), (r) => ({ put: r }));
    for (const [id, v] of this.#reported) out.push({ reported: id, at: this.#reportedAt(v), outcome: OUTCOMES[((v % 4) + 4) % 4] ?? 'final' });
    return out;
  }
}

/**
 * The part of the Redis coordinator (lib/coordination `Coordinator`) a {@link RedisTrackStore}
 * uses: its key prefix, a command on its connection (failing with `ECOORDINATION` while Redis is
 * away), and its state.
 */
export interface TrackCoordination {
  key(...parts: string[]): string;
  run<T>(fn: (redis: Redis) => Promise<T>): Promise<T>;
  readonly state: CoordinationState;
}

/** HSET the record (KEYS[1] hash, ARGV[1] field, ARGV[2] value) unless its report key (KEYS[2]) exists. */
const PUT_UNLESS_REPORTED = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

/** The track store's scripts (lib/coordination/lua.ts). */
interface TrackScripts {
  cfTrackPut(hash: string, reported: string, field: string, value: string): Promise<number>;
}
const TRACK_SCRIPTS: Record<keyof TrackScripts, LuaScript> = { cfTrackPut: { lua: PUT_UNLESS_REPORTED, keys: 2 } };

/**
 * {@link TrackStore} in Redis, shared by every instance that runs the same flow on the same Redis
 * and key prefix (see the module comment). Each instance loads every record of the node at its
 * start and follows it; the report is claimed with `SET NX PX` (kept {@link TrackStoreOptions.keepReportedMs}),
 * so one instance sends it; the record is then deleted from the hash.
 */
export class RedisTrackStore implements TrackStore {
  readonly kind = 'redis' as const;
  readonly #c: TrackCoordination;
  readonly #hash: string;
  readonly #nodeId: string;
  readonly #keepMs: number;
  readonly #instance: string;

  /**
   * @param coordination the connection's coordinator.
   * @param nodeId the `custody-track` node's id.
   * @param instance this instance's name, the value of the report keys (for an operator reading them).
   */
  constructor(coordination: TrackCoordination, nodeId: string, instance: string, options: TrackStoreOptions = {}) {
    this.#c = coordination;
    this.#nodeId = nodeId;
    this.#hash = coordination.key('track', nodeId);
    this.#keepMs = options.keepReportedMs ?? DEFAULT_TRACK_KEEP_REPORTED_MS;
    this.#instance = instance;
  }

  /** The report key of record `id`. */
  reportedKey(id: string): string {
    return this.#c.key('track', this.#nodeId, 'reported', id);
  }

  async load(): Promise<TrackRecord[]> {
    const all = await this.#c.run((r) => r.hgetall(this.#hash));
    const records: TrackRecord[] = [];
    const bad: string[] = [];
    for (const [field, text] of Object.entries(all)) {
      try {
        const rec = JSON.parse(text);
        if (isRecord(rec) && rec.id === field) records.push(rec);
        else bad.push(field);
      } catch {
        bad.push(field);
      }
    }
    const reported = records.length ? await this.#c.run((r) => Promise.all(records.map((rec) => r.exists(this.reportedKey(rec.id))))) : [];
    const live = records.filter((_, i) => reported[i] === 0);
    const gone = [...bad, ...records.filter((_, i) => reported[i] !== 0).map((r) => r.id)];
    if (gone.length) await this.#c.run((r) => r.hdel(this.#hash, ...gone));
    return live.sort((a, b) => a.startedAt - b.startedAt);
  }

  async put(record: TrackRecord): Promise<void> {
    // Not once reported (by any instance): a late status update must not bring a reported record back.
    await this.#c.run((r) => withScripts<TrackScripts, Redis>(r, TRACK_SCRIPTS).cfTrackPut(this.#hash, this.reportedKey(record.id), record.id, JSON.stringify(record)));
  }

  async markReported(id: string, _outcome: TrackOutcome): Promise<boolean> {
    const ok = await this.#c.run((r) => r.set(this.reportedKey(id), this.#instance, 'PX', this.#keepMs, 'NX'));
    // The hash entry goes either way (reported here or elsewhere); should this fail, load() drops it.
    await this.#c.run((r) => r.hdel(this.#hash, id)).catch(() => undefined);
    return ok === 'OK';
  }

  async drop(id: string): Promise<void> {
    await this.#c.run((r) => r.hdel(this.#hash, id));
  }

  async close(): Promise<void> {
    // the connection is the config node's
  }

  async destroy(): Promise<void> {
    await this.#c.run((r) => r.del(this.#hash));
  }
}

/** Longest wait at start for a coordinator that is not ready yet before the Redis store is used anyway (its writes then fail and say so), ms. */
export const TRACK_CONNECT_WAIT_MS = 10_000;

/** The coordinator as {@link openTrackStore} uses it: a {@link TrackCoordination} with its instance name and its wait for readiness (lib/coordination `Coordinator`). */
export interface TrackStoreCoordinator extends TrackCoordination {
  /** This instance's name (`<hostname>/<pid>` by default). */
  readonly instance: string;
  /** Resolve once connected (with `claims` false: also while recovering from a data loss), or when `signal` aborts. */
  whenReady(signal?: AbortSignal, claims?: boolean): Promise<void>;
}

/**
 * Open the store of one `custody-track` node: Redis when the connection coordinates (after
 * waiting for the coordinator to connect, at most {@link TRACK_CONNECT_WAIT_MS} or until `signal`
 * aborts), else the node's file in `folder`.
 * @param options `coordinator` (absent: no coordination), `folder` for the file, the node's id, a signal that ends the wait (the node closing), and how long a report is remembered (ms).
 * @throws what {@link FileTrackStore.open} throws (rejects).
 */
export async function openTrackStore(options: { coordinator?: TrackStoreCoordinator; folder: string; nodeId: string; signal?: AbortSignal; keepReportedMs?: number }): Promise<TrackStore> {
  const { coordinator, folder, nodeId, signal, keepReportedMs } = options;
  if (!coordinator) return FileTrackStore.open(trackStoreFile(folder, nodeId), { keepReportedMs });
  const timeout = AbortSignal.timeout(TRACK_CONNECT_WAIT_MS);
  await coordinator.whenReady(signal ? AbortSignal.any([signal, timeout]) : timeout, false);
  return new RedisTrackStore(coordinator, nodeId, coordinator.instance, { keepReportedMs });
}
