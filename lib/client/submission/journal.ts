/**
 * The submission journal (docs/nodes.md "Money safety"): a durable
 * record of every money-moving request (POST transfer, withdraw, atomicswap/make,
 * atomicswap/take, coreclient sweep; spec section 4), keyed per kind, per owner (`company_id`,
 * or `client_id` for sweeps) and per `partner_txID`.
 *
 * - Before a request is sent, its key, the request body and a hash of the body are recorded and
 *   on disk ({@link SubmissionJournal.reserve}); after it, the answer (or what the failure tells).
 * - On open, an entry that was recorded but has no answer (the process died between "recorded"
 *   and "answered") counts as `unknown`: the request may have been sent.
 * - A key is free again when its request was refused (4xx: nothing happened), not sent, or
 *   looked up and not found after its `expires` had passed.
 * - Bounded: an answered or found entry is kept {@link JournalOptions.retentionSeconds} (default
 *   7 days) past its `expires`; an unknown one until it is resolved, at most
 *   {@link JournalOptions.unknownRetentionSeconds} (default 90 days) past its `expires`. The
 *   file is compacted (one line per live entry) when it holds more than twice the live entries.
 *
 * The journal is one file per API account (see {@link journalFile}); one process writes it
 * through one {@link SubmissionJournal} ({@link openSharedJournal} shares it between callers).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { RecordFile } from '../../support/durable/record-file';
import { KeyedLock } from '../../support/keyed-lock';
import { isTransactionKind, ownerOf, type SubmissionRef, type TransactionKind } from '../../api/kinds';

/** Where an entry stands. */
export type JournalState =
  /** Recorded, the request being sent (on open: counts as `unknown`). */
  | 'sending'
  /** A 2xx answer came: `tx_id`, `statusCode` and `answer` hold it. */
  | 'answered'
  /** The outcome is unknown: the request may have had its effect. */
  | 'unknown'
  /** A lookup found the transaction: `tx_id` holds it. */
  | 'found';

/** One journaled payment. Times are epoch seconds. */
export interface JournalEntry {
  /** `kind`, owner and `partner_txID`, joined by newlines. */
  key: string;
  kind: TransactionKind;
  /** `company_id`, or `client_id` for a sweep. */
  owner: string;
  partner_txID: string;
  /** SHA-256 (hex) of the body's canonical JSON without `expires` (see {@link bodyHash}). */
  bodyHash: string;
  /** The request body as first sent (base units, the API's field names). */
  body: Record<string, unknown>;
  /** The body's `expires` (epoch seconds), 0 when it has none. */
  expires: number;
  /** When the first request was recorded. */
  firstAttempt: number;
  state: JournalState;
  /** The transaction's id, once answered or found. */
  tx_id?: string;
  /** The HTTP status of the answer. */
  statusCode?: number;
  /** The answer's body. */
  answer?: Record<string, unknown>;
  /** When the entry last changed. */
  updated: number;
}

/**
 * How a journal stores a kind: in its file's lines, in its keys ({@link journalKey}) and in the
 * entries the shared journal keeps in Redis (lib/coordination/shared-journal.ts). A withdrawal is
 * stored as `withdraw`, the name of its call (POST /company/{company_id}/withdraw, spec section
 * 4), the spelling every journal has been written with: a journal file or a Redis key written by
 * an earlier version, or by an instance not yet upgraded that shares the Redis, then names the
 * same payment, so an upgrade never sends a payment twice. Every other kind is stored by its name.
 */
const STORED_KINDS: Readonly<Record<TransactionKind, string>> = { transfer: 'transfer', withdrawal: 'withdraw', swapMake: 'swapMake', swapTake: 'swapTake', sweep: 'sweep' };

/** The stored spelling of a kind (see {@link STORED_KINDS}): `withdraw` for a withdrawal. */
export function storedKind(kind: TransactionKind): string {
  return STORED_KINDS[kind];
}

/**
 * The kind a stored spelling names (see {@link STORED_KINDS}): `withdraw` and `withdrawal` both
 * read as a withdrawal. Text that names no kind is kept as it is (an entry is never dropped for
 * its kind).
 */
export function kindOfStored(text: string): TransactionKind {
  const stored = (Object.keys(STORED_KINDS) as TransactionKind[]).find((kind) => STORED_KINDS[kind] === text);
  return stored ?? (isTransactionKind(text) ? text : (text as TransactionKind));
}

/** A {@link JournalEntry} as stored: its kind in the stored spelling ({@link storedKind}). */
export type StoredJournalEntry = Omit<JournalEntry, 'kind'> & { kind: string };

/** One line of the journal file; `kind` in the stored spelling ({@link storedKind}). */
type JournalRecord =
  | { op: 'reserve'; key: string; kind: string; owner: string; partner_txID: string; bodyHash: string; body: Record<string, unknown>; expires: number; at: number }
  | { op: 'answer'; key: string; statusCode: number; tx_id?: string; answer: Record<string, unknown>; at: number }
  | { op: 'unknown'; key: string; at: number }
  | { op: 'found'; key: string; tx_id: string; at: number }
  | { op: 'free'; key: string; reason: 'refused' | 'notSent' | 'notFound'; at: number }
  | ({ op: 'entry' } & StoredJournalEntry);

/** Options of a journal. */
export interface JournalOptions {
  /** Seconds an answered or found entry is kept past its `expires` (default 604800: 7 days). */
  retentionSeconds?: number;
  /** Seconds an unresolved (`unknown`) entry is kept past its `expires` (default 7776000: 90 days). */
  unknownRetentionSeconds?: number;
  /** The clock, epoch milliseconds (tests). */
  now?: () => number;
}

/** Default {@link JournalOptions.retentionSeconds}: 7 days. */
export const JOURNAL_RETENTION_SECONDS = 7 * 24 * 3600;
/** Default {@link JournalOptions.unknownRetentionSeconds}: 90 days. */
export const JOURNAL_UNKNOWN_RETENTION_SECONDS = 90 * 24 * 3600;

/** The journal key of a payment: kind (stored spelling, {@link storedKind}), owner and `partner_txID`. */
export function journalKey(ref: SubmissionRef): string {
  return `${storedKind(ref.kind)}\n${ownerOf(ref)}\n${ref.partner_txID}`;
}

/** JSON with object keys sorted at every depth: the same value always gives the same text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The identity of a payment's body: SHA-256 (hex) of its canonical JSON without `expires`. The
 * expiry is left out because a node computes it per msg (now + "Expires after"): a second click
 * of the same payment has a later `expires` but is the same payment (it is then sent, when it
 * is sent, with the first request's body, expiry included).
 */
export function bodyHash(body: Record<string, unknown>): string {
  const { expires: _expires, ...rest } = body;
  return crypto.createHash('sha256').update(canonical(rest), 'utf8').digest('hex');
}

/**
 * The fields (dotted, e.g. `send.amount`) whose values differ between two bodies, `expires`
 * left out (see {@link bodyHash}).
 */
export function differingFields(a: Record<string, unknown>, b: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    if (!prefix && k === 'expires') continue;
    const x = a[k];
    const y = b[k];
    const plain = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
    if (plain(x) && plain(y)) out.push(...differingFields(x as Record<string, unknown>, y as Record<string, unknown>, `${prefix}${k}.`));
    else if (canonical(x) !== canonical(y)) out.push(prefix + k);
  }
  return out;
}

/**
 * The journal file of an API account below `dir`: `<dir>/<account>.jsonl`, where `account` is
 * the first 16 hex digits of SHA-256(base URL + newline + API key): the same account always
 * finds its journal, and neither the key nor anything it reveals is in the name.
 */
export function journalFile(dir: string, baseUrl: string, apiKey: string): string {
  const account = crypto.createHash('sha256').update(`${baseUrl}\n${apiKey}`, 'utf8').digest('hex').slice(0, 16);
  return path.join(dir, `${account}.jsonl`);
}

/**
 * What sending ({@link submitRequest} in submit.ts) and resolving (`resolveSubmission` in
 * resolve.ts) need of a submission journal (docs/nodes.md "Money safety"; docs/scale-out.md for a journal shared by several
 * instances). {@link SubmissionJournal} is the one of a single process (a file; its reads are
 * synchronous); `SharedSubmissionJournal` (lib/coordination/shared-journal.ts) shares the keys
 * of several instances through Redis (its reads ask Redis, so they may be asynchronous and may
 * reject, e.g. with `CoordinationUnavailableError`). Callers `await` every read and the release
 * of a lock. Times are epoch seconds.
 */
export interface PaymentJournal {
  /**
   * The entry of a payment, if it is journaled.
   * @throws what the journal's store throws (rejects), e.g. `CoordinationUnavailableError`: then nothing may be sent.
   */
  get(ref: SubmissionRef): JournalEntry | undefined | Promise<JournalEntry | undefined>;
  /**
   * The journal key ({@link journalKey}) of the entry that holds the transaction `txId`, if any.
   * @throws what the journal's store throws (rejects).
   */
  holderOf(txId: string): string | undefined | Promise<string | undefined>;
  /**
   * Hold a payment's key: holders of the same key act one after the other.
   * @returns the function that releases it (call it, and await it, exactly once, also on failure; it does not throw).
   * @throws what the journal's store throws (rejects): then the key is not held and nothing may be sent.
   */
  lock(ref: SubmissionRef): Promise<() => void | Promise<void>>;
  /**
   * Record a payment about to be sent (state `sending`) before it resolves.
   * @param body the request body as it will be sent (base units, the API's field names).
   * @throws (rejects) when it cannot be recorded: then nothing may be sent.
   */
  reserve(ref: SubmissionRef, body: Record<string, unknown>): Promise<JournalEntry>;
  /** Record a 2xx answer (`answer`: its body; its `tx_id` is indexed). */
  answered(entry: JournalEntry, statusCode: number, answer: Record<string, unknown>): Promise<void>;
  /** Record that the outcome is unknown (the request may have moved money). */
  unknown(entry: JournalEntry): Promise<void>;
  /** Record that a lookup found the transaction `txId`. */
  found(entry: JournalEntry, txId: string): Promise<void>;
  /** Free the key: refused (nothing happened), not sent, or looked up and not found after its `expires`. */
  free(entry: JournalEntry, reason: 'refused' | 'notSent' | 'notFound'): Promise<void>;
}

/** A durable journal of money-moving requests. Open with {@link SubmissionJournal.open}. */
export class SubmissionJournal implements PaymentJournal {
  /** The journal file. */
  readonly path: string;
  readonly #file: RecordFile<JournalRecord>;
  readonly #entries = new Map<string, JournalEntry>();
  /** tx_id -> key of the entry that holds it (a lookup must not give one transaction to two keys). */
  readonly #txIds = new Map<string, string>();
  /** One caller per payment key at a time (see {@link lock}). */
  readonly #locks = new KeyedLock();
  readonly #retention: number;
  readonly #unknownRetention: number;
  readonly #now: () => number;
  #compacting: Promise<void> | undefined;

  private constructor(file: RecordFile<JournalRecord>, options: JournalOptions) {
    this.path = file.path;
    this.#file = file;
    this.#retention = options.retentionSeconds ?? JOURNAL_RETENTION_SECONDS;
    this.#unknownRetention = options.unknownRetentionSeconds ?? JOURNAL_UNKNOWN_RETENTION_SECONDS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Open (creating it when missing) the journal file `file` and rebuild its entries. Entries
   * recorded but never answered become `unknown` (the process stopped while they were in
   * flight); expired entries are dropped and the file compacted.
   * @throws what the file system throws (rejects), e.g. EACCES.
   */
  static async open(file: string, options: JournalOptions = {}): Promise<SubmissionJournal> {
    const opened = await RecordFile.open<JournalRecord>(file);
    const journal = new SubmissionJournal(opened.file, options);
    for (const rec of opened.records) journal.#apply(rec);
    for (const e of journal.#entries.values()) if (e.state === 'sending') e.state = 'unknown';
    journal.#prune();
    await journal.#compact(true);
    return journal;
  }

  /** Epoch seconds now. */
  #seconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  /** Apply one record to the entries in memory. */
  #apply(rec: JournalRecord): void {
    if (rec.op === 'entry') {
      const { op: _op, ...entry } = rec;
      this.#set({ ...entry, kind: kindOfStored(entry.kind) });
      return;
    }
    if (rec.op === 'reserve') {
      const old = this.#entries.get(rec.key);
      if (old?.tx_id) this.#txIds.delete(old.tx_id);
      this.#set({ key: rec.key, kind: kindOfStored(rec.kind), owner: rec.owner, partner_txID: rec.partner_txID, bodyHash: rec.bodyHash, body: rec.body, expires: rec.expires, firstAttempt: rec.at, state: 'sending', updated: rec.at });
      return;
    }
    const e = this.#entries.get(rec.key);
    if (!e) return;
    e.updated = rec.at;
    switch (rec.op) {
      case 'answer':
        e.state = 'answered';
        e.statusCode = rec.statusCode;
        e.answer = rec.answer;
        if (rec.tx_id) this.#setTx(e, rec.tx_id);
        break;
      case 'unknown':
        e.state = 'unknown';
        break;
      case 'found':
        e.state = 'found';
        this.#setTx(e, rec.tx_id);
        break;
      case 'free':
        this.#entries.delete(e.key);
        if (e.tx_id) this.#txIds.delete(e.tx_id);
        break;
    }
  }

  #set(e: JournalEntry): void {
    this.#entries.set(e.key, e);
    if (e.tx_id) this.#txIds.set(e.tx_id, e.key);
  }

  #setTx(e: JournalEntry, txId: string): void {
    e.tx_id = txId;
    this.#txIds.set(txId, e.key);
  }

  /** True when `e` is past its retention at `now` (epoch seconds). */
  #past(e: JournalEntry, now: number): boolean {
    const keep = e.state === 'unknown' || e.state === 'sending' ? this.#unknownRetention : this.#retention;
    return e.expires > 0 && e.expires + keep < now;
  }

  /** Drop the entries past their retention. */
  #prune(): void {
    const now = this.#seconds();
    for (const e of [...this.#entries.values()]) {
      if (this.#past(e, now)) {
        this.#entries.delete(e.key);
        if (e.tx_id) this.#txIds.delete(e.tx_id);
      }
    }
  }

  /** Rewrite the file as one line per live entry, when it holds more than twice as many lines (or always, with `force`). */
  async #compact(force = false): Promise<void> {
    if (this.#compacting) return this.#compacting;
    if (!force && this.#file.lines <= 2 * this.#entries.size + 256) return;
    this.#prune();
    this.#compacting = this.#file.rewrite([...this.#entries.values()].map((e) => ({ op: 'entry' as const, ...e, kind: storedKind(e.kind) })));
    try {
      await this.#compacting;
    } finally {
      this.#compacting = undefined;
    }
  }

  /** Append a record and apply it. @throws what the file throws (rejects): the journal cannot be written. */
  async #record(rec: JournalRecord): Promise<void> {
    // Applied first, so a compaction that starts while this append is in flight snapshots it:
    // the rewrite is ordered after the append and must not drop it. A failed append fails every
    // later one, so the journal then refuses every reservation.
    this.#apply(rec);
    await this.#file.append(rec);
    if (this.#file.lines > 2 * this.#entries.size + 256) void this.#compact().catch(() => undefined);
  }

  /** Live entries (tests and tools). */
  get size(): number {
    return this.#entries.size;
  }

  /** Seconds an answered or found entry is kept past its `expires` ({@link JournalOptions.retentionSeconds}). */
  get retentionSeconds(): number {
    return this.#retention;
  }

  /** Seconds an unknown (or `sending`) entry is kept past its `expires` ({@link JournalOptions.unknownRetentionSeconds}). */
  get unknownRetentionSeconds(): number {
    return this.#unknownRetention;
  }

  /**
   * The live entries, past-retention ones left out (a copy of each: changing one changes nothing
   * here). For writing them back to a shared store that lost them (docs/scale-out.md "Redis down, Redis lost").
   */
  entries(): JournalEntry[] {
    const now = this.#seconds();
    return [...this.#entries.values()].filter((e) => !this.#past(e, now)).map((e) => ({ ...e }));
  }

  /** The entry of a payment, if it is journaled. */
  get(ref: SubmissionRef): JournalEntry | undefined {
    return this.#entries.get(journalKey(ref));
  }

  /** The key of the entry that holds `txId`, if any. */
  holderOf(txId: string): string | undefined {
    return this.#txIds.get(txId);
  }

  /**
   * Hold a payment's key: callers with the same key run one after the other, in call order.
   * @returns the function that releases it (call it exactly once, also on failure).
   */
  lock(ref: SubmissionRef): Promise<() => void> {
    return this.#locks.acquire(journalKey(ref));
  }

  /**
   * Record a payment about to be sent (state `sending`), on disk before it resolves.
   * @param ref the payment; @param body the request body as it will be sent.
   * @throws what the file throws (rejects): then nothing may be sent.
   */
  async reserve(ref: SubmissionRef, body: Record<string, unknown>): Promise<JournalEntry> {
    const at = this.#seconds();
    const expires = typeof body.expires === 'number' ? body.expires : Number(body.expires) || 0;
    await this.#record({ op: 'reserve', key: journalKey(ref), kind: storedKind(ref.kind), owner: ownerOf(ref), partner_txID: ref.partner_txID, bodyHash: bodyHash(body), body, expires, at });
    return this.#entries.get(journalKey(ref))!;
  }

  /** Record a 2xx answer. @param answer the answer's body (its `tx_id` is indexed). @throws what the file throws (rejects). */
  answered(entry: JournalEntry, statusCode: number, answer: Record<string, unknown>): Promise<void> {
    const txId = typeof answer.tx_id === 'string' ? answer.tx_id : undefined;
    return this.#record({ op: 'answer', key: entry.key, statusCode, answer, at: this.#seconds(), ...(txId ? { tx_id: txId } : {}) });
  }

  /** Record that the outcome is unknown. @throws what the file throws (rejects). */
  unknown(entry: JournalEntry): Promise<void> {
    if (entry.state === 'unknown') return Promise.resolve();
    return this.#record({ op: 'unknown', key: entry.key, at: this.#seconds() });
  }

  /** Record that a lookup found the transaction `txId`. @throws what the file throws (rejects). */
  found(entry: JournalEntry, txId: string): Promise<void> {
    return this.#record({ op: 'found', key: entry.key, tx_id: txId, at: this.#seconds() });
  }

  /**
   * Free the key: its request was refused (nothing happened), not sent, or looked up and not
   * found after its `expires`. @throws what the file throws (rejects).
   */
  free(entry: JournalEntry, reason: 'refused' | 'notSent' | 'notFound'): Promise<void> {
    return this.#record({ op: 'free', key: entry.key, reason, at: this.#seconds() });
  }

  /** Wait for the records in flight and close the file. */
  async close(): Promise<void> {
    await this.#compacting?.catch(() => undefined);
    await this.#file.close();
  }
}

/** Journals open in this process, by file: one writer per file. */
const shared = new Map<string, { journal: Promise<SubmissionJournal>; users: number }>();

/** A use of a shared journal: release it once (the last release closes the file). */
export interface JournalLease {
  journal: SubmissionJournal;
  release(): Promise<void>;
}

/**
 * Open `file` once per process and share it: every caller with the same file gets the same
 * {@link SubmissionJournal}; the last {@link JournalLease.release} closes it.
 * @throws what {@link SubmissionJournal.open} throws (rejects).
 */
export async function openSharedJournal(file: string, options?: JournalOptions): Promise<JournalLease> {
  const resolved = path.resolve(file);
  let slot = shared.get(resolved);
  if (!slot) {
    const journal = SubmissionJournal.open(resolved, options);
    slot = { journal, users: 0 };
    shared.set(resolved, slot);
    journal.catch(() => {
      if (shared.get(resolved) === slot) shared.delete(resolved);
    });
  }
  slot.users++;
  const current = slot;
  let journal: SubmissionJournal;
  try {
    journal = await current.journal;
  } catch (e) {
    current.users--;
    throw e;
  }
  let released = false;
  return {
    journal,
    release: async () => {
      if (released) return;
      released = true;
      if (--current.users === 0 && shared.get(resolved) === current) {
        shared.delete(resolved);
        await journal.close();
      }
    },
  };
}
