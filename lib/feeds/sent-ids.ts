/**
 * The core client feed's durable memory of the action ids it has sent (spec section 2 "Action",
 * section 6 rule 2: after a reconnect the service sends every pending action again). A feed that
 * starts anew (a redeploy, a restart, a crash) looks an action up here: an id found was sent by
 * an earlier instance and goes out marked as a redelivery; an id not found is recorded, on disk,
 * before it goes out for the first time. So each action is delivered at least once, and never
 * twice unmarked.
 *
 * One {@link SentIds} per feed node and core client, one JSON Lines file each
 * ({@link sentIdsFile}), written with {@link RecordFile} (group-committed, fdatasync'ed appends;
 * atomic rewrite). A line is a {@link SentRecord}.
 *
 * Bounded: an entry is dropped once its action's `expireTime` has passed by
 * {@link SentIdsOptions.expiryMarginSeconds} (default one day); an action without expiry
 * (`expireTime` 0: a wallet connection request) is dropped once a listing of the pending actions
 * (GET /coreclient/{client_id}/actions) taken after it was sent no longer holds it, and at the
 * latest {@link SentIdsOptions.noExpiryKeepSeconds} (default 30 days) after it was sent. The file
 * is compacted (rewritten with the live entries) at open and whenever it holds more than twice as
 * many lines as live entries.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { RecordFile } from '../support/durable/record-file';

/** One line of the file: an action id sent by the feed node. */
export interface SentRecord {
  /** The action id (spec section 2, Action `id`). */
  action_id: string;
  /** The action's expiry, epoch seconds (a value in milliseconds is converted); 0: it never expires. */
  expireTime: number;
  /** When the record was made, just before the action was sent: epoch milliseconds (wall clock). */
  sentAt: number;
}

/** The part of an action {@link SentIds.markSent} reads (lib `Action` fits). */
export interface SentAction {
  /** The action id. */
  id: string;
  /** Expiry, epoch seconds (milliseconds are recognised: values above 1e11); 0, missing or not a number: none. */
  expireTime?: unknown;
}

/**
 * A listing of a core client's actions (GET /coreclient/{client_id}/actions) for
 * {@link SentIds.prune}: every id it holds, and when it was asked for.
 */
export interface ActionIdListing {
  /** The ids the listing holds (the pending actions). */
  ids: Iterable<string>;
  /** `performance.now()` (milliseconds, this process's monotonic clock) just before the request was sent. */
  requestedAt: number;
}

/** Options of {@link SentIds.open} and {@link SentIds.detached}. */
export interface SentIdsOptions {
  /** How long an entry is kept after its action's `expireTime`, in seconds (default 86400, one day). */
  expiryMarginSeconds?: number;
  /** The longest an entry of an action without expiry (`expireTime` 0) is kept after it was sent, in seconds (default 2592000, 30 days). */
  noExpiryKeepSeconds?: number;
  /** How often {@link SentIds.markSent} drops expired entries by itself, in milliseconds (default 60000). */
  pruneIntervalMs?: number;
  /**
   * Called when a compaction started by {@link SentIds.markSent} fails. Nothing is lost: the file
   * keeps its old content (every live entry) and appends go on; it only stays larger. Default: ignored.
   */
  onCompactionError?: (err: Error) => void;
  /** The wall clock, epoch milliseconds (default `Date.now`); for tests. */
  now?: () => number;
}

/** An entry in memory. */
interface Entry {
  /** Epoch seconds, 0: none. */
  expireTime: number;
  /** When it was sent, epoch seconds (wall clock; the file keeps milliseconds). */
  sentSec: number;
  /** `performance.now()` when this instance marked it; -Infinity when it was read from the file (an earlier instance's). */
  markedAt: number;
}

const DAY_SECONDS = 86400;

/**
 * The memory file of a feed node for a core client:
 * `<folder>/<feed node id>-<first 16 hex digits of sha256(client id)>.jsonl`; characters of the
 * node id other than letters, digits, `.`, `_` and `-` become `_`.
 * @param folder the folder, e.g. `<userDir>/custodyflow/feed`.
 * @param feedId the feed node's id.
 * @param clientId the core client id.
 * @returns the file's path.
 */
export function sentIdsFile(folder: string, feedId: string, clientId: string): string {
  const hash = createHash('sha256').update(clientId, 'utf8').digest('hex').slice(0, 16);
  return path.join(folder, `${feedId.replace(/[^A-Za-z0-9._-]/g, '_')}-${hash}.jsonl`);
}

/**
 * Delete every memory file of feed node `feedId` in `folder` (one per core client it has used,
 * see {@link sentIdsFile}), with their temporary files; for a feed node deleted from the flows.
 * A folder that does not exist (or is not a folder) holds none.
 * @throws what the file system throws (rejects), other than ENOENT and ENOTDIR.
 */
export async function removeSentIdsFiles(folder: string, feedId: string): Promise<void> {
  const prefix = `${feedId.replace(/[^A-Za-z0-9._-]/g, '_')}-`;
  let names: string[];
  try {
    names = await fs.promises.readdir(folder);
  } catch (e) {
    if (['ENOENT', 'ENOTDIR'].includes(String((e as NodeJS.ErrnoException).code))) return;
    throw e;
  }
  const mine = names.filter((n) => n.startsWith(prefix) && /^[0-9a-f]{16}\.jsonl(\.tmp)?$/.test(n.slice(prefix.length)));
  await Promise.all(mine.map((n) => fs.promises.rm(path.join(folder, n), { force: true })));
}

/** `expireTime` as epoch seconds: milliseconds (above 1e11) divided down; anything not a positive number is 0. */
function expirySeconds(value: unknown): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.floor(n > 1e11 ? n / 1000 : n);
}

/**
 * The action ids a feed node has sent, in memory and (unless {@link SentIds.detached}) in a
 * durable file. One instance per file per process.
 */
export class SentIds {
  /** The file's path; undefined for a {@link SentIds.detached} memory. */
  readonly path: string | undefined;
  readonly #file: RecordFile<SentRecord> | undefined;
  readonly #entries = new Map<string, Entry>();
  readonly #marginMs: number;
  readonly #noExpiryKeepMs: number;
  readonly #pruneIntervalMs: number;
  readonly #now: () => number;
  readonly #onCompactionError: (err: Error) => void;
  #lastPrune: number;
  #pruning = false;

  private constructor(file: RecordFile<SentRecord> | undefined, options: SentIdsOptions) {
    this.#file = file;
    this.path = file?.path;
    this.#marginMs = (options.expiryMarginSeconds ?? DAY_SECONDS) * 1000;
    this.#noExpiryKeepMs = (options.noExpiryKeepSeconds ?? 30 * DAY_SECONDS) * 1000;
    this.#pruneIntervalMs = options.pruneIntervalMs ?? 60000;
    this.#now = options.now ?? Date.now;
    this.#onCompactionError = options.onCompactionError ?? (() => undefined);
    this.#lastPrune = this.#now();
  }

  /**
   * Open (or create, with its folder) the memory file, read the ids in it, drop the expired ones
   * and compact the file when it holds anything else than the live entries (an expired entry, a
   * duplicate, a line that is not a record, a cut-off last line). A failed compaction is passed
   * to {@link SentIdsOptions.onCompactionError} and the file is used as it is.
   * @param file the file, e.g. from {@link sentIdsFile}.
   * @throws what the file system throws when opening or reading (rejects), e.g. EACCES for a
   *   folder or file that cannot be written.
   */
  static async open(file: string, options: SentIdsOptions = {}): Promise<SentIds> {
    const opened = await RecordFile.open<SentRecord>(file);
    const ids = new SentIds(opened.file, options);
    for (const r of opened.records) {
      if (typeof r.action_id !== 'string' || !r.action_id) continue;
      const sentAt = Number(r.sentAt);
      ids.#entries.set(r.action_id, { expireTime: expirySeconds(r.expireTime), sentSec: Math.floor((Number.isFinite(sentAt) ? sentAt : ids.#now()) / 1000), markedAt: -Infinity });
    }
    ids.#dropExpired();
    if (opened.file.lines + opened.skipped > ids.#entries.size) {
      // A failed compaction loses nothing (the old content holds every live entry): report it, go on.
      await opened.file.rewrite(ids.#records()).catch((err: Error) => ids.#onCompactionError(err));
    }
    return ids;
  }

  /**
   * A memory without a file (nothing survives the process), for a feed node whose file cannot be
   * opened: {@link SentIds.has} knows only what this instance marked, {@link SentIds.markSent}
   * writes nothing.
   */
  static detached(options: SentIdsOptions = {}): SentIds {
    return new SentIds(undefined, options);
  }

  /** The number of live entries. */
  get size(): number {
    return this.#entries.size;
  }

  /** Lines in the file (0 for a detached memory); see {@link RecordFile.lines}. */
  get lines(): number {
    return this.#file?.lines ?? 0;
  }

  /**
   * Whether action `actionId` was sent: by an earlier instance (read from the file) or by this
   * one ({@link SentIds.markSent}).
   */
  has(actionId: string): boolean {
    return this.#entries.has(actionId);
  }

  /** Whether this instance marked action `actionId` sent (an id read from the file does not count). */
  sentHere(actionId: string): boolean {
    return (this.#entries.get(actionId)?.markedAt ?? -Infinity) > -Infinity;
  }

  /**
   * Mark `action` sent by this instance, before sending it. An id not known yet is appended to the
   * file; an id read from the file (sent by an earlier instance) is only marked in memory. The mark
   * in memory is made at once (synchronously), so a second call for the same id sees it through
   * {@link SentIds.sentHere} while the first is still being written. Drops the expired entries by
   * itself every {@link SentIdsOptions.pruneIntervalMs}.
   * @returns once the record is written and fdatasync'ed (at once when nothing was to be written).
   * @throws {Error} when the record could not be written (rejects): the file is closed or a write
   *   failed (after a failed write, every later record fails too). The mark in memory stays.
   */
  markSent(action: SentAction): Promise<void> {
    const markedAt = performance.now();
    const known = this.#entries.get(action.id);
    if (known) {
      if (known.markedAt === -Infinity) known.markedAt = markedAt;
      return Promise.resolve();
    }
    const record: SentRecord = { action_id: action.id, expireTime: expirySeconds(action.expireTime), sentAt: this.#now() };
    this.#entries.set(action.id, { expireTime: record.expireTime, sentSec: Math.floor(record.sentAt / 1000), markedAt });
    const written = this.#file ? this.#file.append(record) : Promise.resolve();
    if (this.#now() - this.#lastPrune >= this.#pruneIntervalMs && !this.#pruning) {
      this.#pruning = true;
      this.prune()
        .catch((err: Error) => this.#onCompactionError(err))
        .finally(() => (this.#pruning = false));
    }
    return written;
  }

  /**
   * Drop the entries whose action expired more than the margin ago, the entries of actions
   * without expiry kept for longer than {@link SentIdsOptions.noExpiryKeepSeconds}, and, given a
   * `listing` of the pending actions, every entry marked before that listing was requested that it
   * does not hold (the action is no longer pending, so it cannot come again). Then compact the file
   * when it holds more than twice as many lines as live entries.
   * @param listing the pending actions listed after a (re)connect, if any.
   * @returns the number of entries dropped.
   * @throws {Error} when the compaction fails (rejects): the file keeps its old content, which
   *   still holds every live entry; or when the file is closed.
   */
  async prune(listing?: ActionIdListing): Promise<number> {
    const before = this.#entries.size;
    this.#dropExpired();
    if (listing) {
      const listed = new Set(listing.ids);
      for (const [id, e] of this.#entries) if (e.markedAt < listing.requestedAt && !listed.has(id)) this.#entries.delete(id);
    }
    const dropped = before - this.#entries.size;
    if (this.#file && this.#file.lines > 2 * this.#entries.size) await this.#file.rewrite(this.#records());
    return dropped;
  }

  /**
   * Wait for the records being written, then release the file (the memory in this process is
   * kept). Later calls of {@link SentIds.markSent} reject; {@link SentIds.has} still answers.
   */
  async close(): Promise<void> {
    await this.#file?.close();
  }

  /** Drop the entries past their horizon (see {@link SentIds.prune}). */
  #dropExpired(): void {
    const now = this.#now();
    this.#lastPrune = now;
    for (const [id, e] of this.#entries) {
      const horizon = e.expireTime > 0 ? e.expireTime * 1000 + this.#marginMs : e.sentSec * 1000 + this.#noExpiryKeepMs;
      if (horizon < now) this.#entries.delete(id);
    }
  }

  /** The live entries as records, for a rewrite. */
  #records(): SentRecord[] {
    return Array.from(this.#entries, ([action_id, e]) => ({ action_id, expireTime: e.expireTime, sentAt: e.sentSec * 1000 }));
  }
}
