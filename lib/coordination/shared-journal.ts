/**
 * The submission journal shared by several instances on one API key through Redis
 * (docs/scale-out.md: a key reserved on one instance is recognised on every other; with Redis
 * down, money-moving nodes do not send without a journal reservation). The money-moving calls
 * are those of spec section 4 (POST transfer, withdraw, atomicswap/make, atomicswap/take,
 * coreclient sweep; see lib/client/submission).
 *
 * Each instance keeps its own file journal ({@link SubmissionJournal}); Redis holds the shared
 * truth per key. Keys (below the coordinator's prefix; `<hash>` is the SHA-256 hex of the
 * journal key, so neither a `partner_txID`, an owner id nor a body is in a key name):
 * - `submission:<hash>`: the entry's JSON (a {@link JournalEntry} and its `reservation`: the
 *   reserving instance, first attempt and body hash), or a tombstone `{ freed, reservation, at }`
 *   once the key is freed (so an instance whose own file still holds the key does not bring it
 *   back). Kept until the entry's `expires` plus the local journal's retention (the unknown
 *   retention for `sending` and `unknown` entries), or that retention when `expires` is 0.
 * - `submission-lock:<hash>`: who acts on the key now: a random token, `SET NX PX` with a lease
 *   ({@link SharedJournalOptions.lockLeaseMs}, default 30 s), renewed every third of it while
 *   held, released by a compare-and-delete script.
 * - `submission-tx:<sha256 of tx_id>`: the journal key of the entry holding that transaction
 *   (a lookup must not give one transaction to two keys), kept as long as the entry.
 *
 * Fail closed before sending: {@link SharedSubmissionJournal.lock}, {@link SharedSubmissionJournal.get}
 * and {@link SharedSubmissionJournal.reserve} reject with {@link CoordinationUnavailableError}
 * (code `ECOORDINATION`) while Redis is unavailable, so nothing is sent without a reservation in
 * Redis. After sending, a change (answered, unknown, found, freed) is written to the local file
 * first and then to Redis; when Redis is away then, the change waits in memory (the latest per
 * key) and is written when Redis is back. Meanwhile Redis still holds the key as `sending`, which
 * every instance treats as an unknown outcome (a withdrawal, swap or sweep is refused; a transfer
 * is re-sent with the same body and the API answers `existing`): a reserved key never vanishes
 * from Redis while its payment may have been sent.
 *
 * When Redis comes back without its data (restarted without persistence; the coordinator's
 * `dataLoss`), and once when this journal starts, the local file's live entries are written back
 * (`SET NX`: what another instance wrote since, a tombstone included, stays). While the
 * coordinator is `recovering` (one claim lease after the loss, while every instance writes back),
 * no key is locked for sending: {@link SharedSubmissionJournal.lock} rejects with
 * {@link CoordinationUnavailableError}, as the coordinator's claims do. An entry that only this
 * instance's file holds is also written back when {@link SharedSubmissionJournal.get} finds
 * nothing for its key in Redis.
 *
 * What Redis cannot know: a change this instance made to an entry another instance reserved
 * (e.g. the answer of a transfer re-sent here) is in Redis but not in this instance's file, so
 * after a data loss Redis holds that entry as its reserving instance last wrote it (an older,
 * held state: the safe side). A changed entry whose key another reservation holds by then (it
 * was freed and reserved again) is left as that reservation wrote it.
 */
import type { Redis } from 'ioredis';
import crypto from 'node:crypto';
import { abortableSleep } from '../support/backoff';
import type { SubmissionRef } from '../api/kinds';
import { journalKey, kindOfStored, storedKind, type JournalEntry, type PaymentJournal, type StoredJournalEntry, type SubmissionJournal } from '../client/submission/journal';
import { submissionRef } from '../api/kinds';
import { CoordinationUnavailableError, type CoordinationState, type Coordinator } from './coordinator';
import { withScripts, type LuaScript } from './lua';

/** Options of a {@link SharedSubmissionJournal}. */
export interface SharedJournalOptions {
  /**
   * Lease of a key's Redis lock, ms (default {@link SHARED_JOURNAL_LOCK_LEASE_MS}, at least
   * 1,000), renewed every third of it while the key is held: an instance that dies holding a key
   * holds it at most this long.
   */
  lockLeaseMs?: number;
  /** Shortest wait between two tries for a key another instance holds, ms (default 25; each wait is this to twice this). */
  lockPollMs?: number;
  /** Wait between two tries of the changes Redis has not taken yet, ms (default 1,000). */
  retryMs?: number;
}

/** Default {@link SharedJournalOptions.lockLeaseMs}: 30 s. */
export const SHARED_JOURNAL_LOCK_LEASE_MS = 30_000;

/** What Redis holds for a freed key: a tombstone (see the module comment). */
interface Tombstone {
  freed: 'refused' | 'notSent' | 'notFound';
  reservation: string;
  /** When the key was freed, epoch seconds. */
  at: number;
}

/** A change Redis has not taken yet: the entry as it is now (`entry`), or the key freed (`freed`). */
type PendingWrite = {
  hash: string;
  /** The reservation the change belongs to: it is dropped when another reservation holds the key. */
  reservation: string;
  /** The journal key (the value of the tx key). */
  key: string;
  /** The entry's `expires` (epoch seconds, 0 none): how long Redis keeps it. */
  expires: number;
  /** The entry's `tx_id`, when it has one. */
  txId?: string;
} & ({ entry: JournalEntry; freed?: undefined } | { entry?: undefined; freed: Tombstone['freed'] });

// Reserve a key: only while our lock is held (ARGV[3] '' when none), and only when no live entry is there (a tombstone may be replaced).
// 1: reserved; 0: another entry holds the key; -1: the lock is not ours (its lease ended).
const RESERVE = `
if ARGV[3] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[3] then return -1 end
local cur = redis.call('GET', KEYS[1])
if cur and not cjson.decode(cur).freed then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

// Write a change of reservation ARGV[3] (entry or tombstone ARGV[1], for ARGV[2] ms), unless another reservation holds the key.
// ARGV[4]: the journal key (the tx key's value); ARGV[5]: 'set' the tx key, 'del' it (when it names this key), or ''.
const UPDATE = `
local cur = redis.call('GET', KEYS[1])
if cur and cjson.decode(cur).reservation ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[5] == 'set' then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[2]) end
if ARGV[5] == 'del' and redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
return 1`;

// Write back an entry Redis lost: only where nothing (no entry, no tombstone) is. ARGV[4] '1': also its tx key.
const RESTORE = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  if ARGV[4] == '1' then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2], 'NX') end
  return 1
end
return 0`;

const LOCK_RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

const LOCK_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** The journal's scripts (lua.ts), run by name. */
interface JournalScripts {
  cfJournalReserve(entry: string, lock: string, record: string, ttlMs: number, lockToken: string): Promise<number>;
  cfJournalUpdate(entry: string, tx: string, value: string, ttlMs: number, reservation: string, key: string, txOp: string): Promise<number>;
  cfJournalRestore(entry: string, tx: string, record: string, ttlMs: number, key: string, withTx: string): Promise<number>;
  cfJournalLockRenew(lock: string, token: string, leaseMs: number): Promise<number>;
  cfJournalLockRelease(lock: string, token: string): Promise<number>;
}

const JOURNAL_SCRIPTS: Record<keyof JournalScripts, LuaScript> = {
  cfJournalReserve: { lua: RESERVE, keys: 2 },
  cfJournalUpdate: { lua: UPDATE, keys: 2 },
  cfJournalRestore: { lua: RESTORE, keys: 2 },
  cfJournalLockRenew: { lua: LOCK_RENEW, keys: 1 },
  cfJournalLockRelease: { lua: LOCK_RELEASE, keys: 1 },
};

/** `redis` with the journal's scripts. */
function journalScripts(redis: Redis): Redis & JournalScripts {
  return withScripts<JournalScripts, Redis>(redis, JOURNAL_SCRIPTS);
}

/** SHA-256 hex of `text`: how journal keys and tx ids appear in Redis key names. */
function sha256(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The reference of a journaled payment, from its entry. */
function refOf(entry: JournalEntry): SubmissionRef {
  return submissionRef(entry.kind, { company_id: entry.owner, client_id: entry.owner }, entry.partner_txID);
}

/**
 * The submission journal of several instances on one API key (docs/scale-out.md; see the module comment):
 * a {@link PaymentJournal} over this instance's file journal and the coordinator's Redis. Give it
 * to `submitRequest` / `submitOperation` (`options.journal`) and `resolveSubmission` in place of
 * the file journal. It does not own `local` or `coordinator`: {@link close} it first, then them.
 */
export class SharedSubmissionJournal implements PaymentJournal {
  /** This instance's file journal (what is written back after a data loss). */
  readonly local: SubmissionJournal;
  readonly coordinator: Coordinator;
  /** Lease of a key's Redis lock, ms. */
  readonly lockLeaseMs: number;
  /**
   * Locks found taken over by another holder when their lease was renewed (the holder's
   * connection to Redis was away longer than the lease). The entry in Redis still says
   * `sending`, so the other instance treats the payment as of unknown outcome.
   */
  lockLost = 0;
  /** Changes dropped because Redis refused them for a reason other than being away (a bug: Redis then holds an older state of the key). */
  writesDropped = 0;
  readonly #pollMs: number;
  readonly #retryMs: number;
  /** Changes Redis has not taken yet, by key hash: the latest per key. */
  readonly #pending = new Map<string, PendingWrite>();
  /** The reservation of entries read from Redis (another instance's, or an earlier process's). */
  readonly #reservations = new WeakMap<JournalEntry, string>();
  /** The lock tokens this journal holds, by key hash. */
  readonly #held = new Map<string, string>();
  /** True until the local entries are written back (on start and after each data loss). */
  #restoreNeeded = true;
  #catchingUp: Promise<void> = Promise.resolve();
  #retryTimer: NodeJS.Timeout | undefined;
  readonly #closing = new AbortController();
  readonly #unregisterDataLoss: () => void;
  readonly #onState = (state: CoordinationState) => {
    if (state === 'ready' || state === 'recovering') void this.#catchUp();
  };

  /**
   * Share `local` through `coordinator`: listens to its state and data loss, and writes the
   * local live entries back (`SET NX`) as soon as Redis is reachable.
   * @param local this instance's file journal (opened; shared with nothing else in Redis's place).
   * @param coordinator the Redis coordinator of the same config node.
   * @throws {RangeError} when `options.lockLeaseMs` is under 1,000.
   */
  constructor(local: SubmissionJournal, coordinator: Coordinator, options: SharedJournalOptions = {}) {
    this.local = local;
    this.coordinator = coordinator;
    this.lockLeaseMs = options.lockLeaseMs ?? SHARED_JOURNAL_LOCK_LEASE_MS;
    if (!(this.lockLeaseMs >= 1000)) throw new RangeError('lockLeaseMs: at least 1,000 ms');
    this.#pollMs = options.lockPollMs ?? 25;
    this.#retryMs = options.retryMs ?? 1000;
    this.#unregisterDataLoss = coordinator.onDataLoss(async () => {
      this.#restoreNeeded = true;
      await this.#catchUp();
    });
    coordinator.on('state', this.#onState);
    this.#onState(coordinator.state);
  }

  /** Changes (answered, unknown, found, freed) recorded in the local file and not yet in Redis. */
  get pending(): number {
    return this.#pending.size;
  }

  #entryKey(hash: string): string {
    return this.coordinator.key('submission', hash);
  }

  #lockKey(hash: string): string {
    return this.coordinator.key('submission-lock', hash);
  }

  #txKey(txId: string): string {
    return this.coordinator.key('submission-tx', sha256(txId));
  }

  /** The reservation an entry belongs to: the instance that reserved it, its first attempt and body hash. */
  #reservationOf(entry: JournalEntry): string {
    return this.#reservations.get(entry) ?? `${this.coordinator.instance}\n${entry.firstAttempt}\n${entry.bodyHash}`;
  }

  /**
   * How long Redis keeps an entry (or its tombstone), ms: until its `expires` (epoch seconds)
   * plus the local journal's retention (the unknown retention while `sending` or `unknown`), or
   * that retention when it has no `expires`; at least 1 s.
   */
  #ttlMs(expires: number, state: JournalEntry['state'] | 'freed'): number {
    const keep = state === 'sending' || state === 'unknown' ? this.local.unknownRetentionSeconds : this.local.retentionSeconds;
    const ms = expires > 0 ? (expires + keep) * 1000 - Date.now() : keep * 1000;
    return Math.max(1000, Math.floor(ms));
  }

  /** An entry's JSON in Redis, its kind in the journal's stored spelling (`storedKind`, lib/client/submission/journal.ts). */
  #recordOf(entry: JournalEntry, reservation: string): string {
    return JSON.stringify({ ...entry, kind: storedKind(entry.kind), reservation });
  }

  /** The local file's entry of the same reservation as `entry` (same key, first attempt and body), if any. */
  #localOf(entry: JournalEntry): JournalEntry | undefined {
    const mine = this.local.get(refOf(entry));
    return mine && mine.firstAttempt === entry.firstAttempt && mine.bodyHash === entry.bodyHash ? mine : undefined;
  }

  /**
   * Hold a payment's key across the instances: this process's lock on the local journal first,
   * then the Redis lock (`SET NX PX`, tried every 25-50 ms until free; its lease renewed while
   * held). Two instances never act on one key at once.
   * @returns the release (awaitable; never throws: a lock it cannot delete ends with its lease).
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable, recovering from
   *   a data loss (until what the instances knew is written back), or this journal is closed;
   *   the key is then not held and nothing may be sent.
   */
  async lock(ref: SubmissionRef): Promise<() => Promise<void>> {
    const hash = sha256(journalKey(ref));
    const lockKey = this.#lockKey(hash);
    const releaseLocal = await this.local.lock(ref);
    const token = crypto.randomUUID();
    try {
      for (;;) {
        if (this.#closing.signal.aborted) throw new CoordinationUnavailableError('coordination: the shared submission journal is closed');
        if (this.coordinator.state === 'recovering') {
          throw new CoordinationUnavailableError('coordination: Redis lost its data; no payment is reserved until what the instances knew is written back');
        }
        const taken = await this.coordinator.run((r) => r.set(lockKey, token, 'PX', this.lockLeaseMs, 'NX'));
        if (taken === 'OK') break;
        await abortableSleep(this.#pollMs * (1 + Math.random()), this.#closing.signal);
      }
    } catch (e) {
      releaseLocal();
      throw e;
    }
    this.#held.set(hash, token);
    const renew = setInterval(() => {
      this.coordinator
        .run((r) => journalScripts(r).cfJournalLockRenew(lockKey, token, this.lockLeaseMs))
        .then((n) => {
          if (n !== 1 && this.#held.get(hash) === token) this.lockLost++;
        })
        .catch(() => undefined); // Redis away: the next renewal tries again
    }, Math.floor(this.lockLeaseMs / 3));
    renew.unref();
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      if (this.#held.get(hash) === token) this.#held.delete(hash);
      try {
        await this.coordinator.run((r) => journalScripts(r).cfJournalLockRelease(lockKey, token));
      } catch {
        // Redis away: the lock ends with its lease.
      } finally {
        releaseLocal();
      }
    };
  }

  /**
   * The entry of a payment as Redis holds it (the shared truth). A change of this instance that
   * Redis has not taken yet is written first. When Redis holds nothing for the key (no entry, no
   * tombstone: it lost its data, or the entry's time ran out) and the local file holds it, the
   * local entry is written back and answered: a key is never less held than this instance knows.
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable: nothing local is
   *   answered instead (fail closed).
   */
  async get(ref: SubmissionRef): Promise<JournalEntry | undefined> {
    const key = journalKey(ref);
    const hash = sha256(key);
    await this.#flushOne(hash);
    const text = await this.coordinator.run((r) => r.get(this.#entryKey(hash)));
    if (text) return this.#parse(text);
    const mine = this.local.get(ref);
    if (!mine) return undefined;
    const entry = { ...mine };
    if (await this.#restore(entry)) return entry;
    const again = await this.coordinator.run((r) => r.get(this.#entryKey(hash)));
    return again ? this.#parse(again) : undefined;
  }

  /** An entry read from Redis (its reservation remembered), or undefined for a tombstone. */
  #parse(text: string): JournalEntry | undefined {
    const record = JSON.parse(text) as (StoredJournalEntry & { reservation: string }) | Tombstone;
    if ('freed' in record) return undefined;
    const { reservation, ...stored } = record;
    const entry: JournalEntry = { ...stored, kind: kindOfStored(stored.kind) };
    this.#reservations.set(entry, reservation);
    return entry;
  }

  /**
   * The journal key of the entry that holds the transaction `txId`: Redis's answer, else the
   * local file's.
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable.
   */
  async holderOf(txId: string): Promise<string | undefined> {
    const holder = await this.coordinator.run((r) => r.get(this.#txKey(txId)));
    return holder ?? this.local.holderOf(txId);
  }

  /**
   * Record a payment about to be sent: in the local file, then in Redis (only while this
   * journal's lock of the key is still held, and only when no other live entry holds the key).
   * When Redis does not take it, the local record is freed (`notSent`) and it rejects: nothing
   * may be sent.
   * @param body the request body as it will be sent (base units, the API's field names; `expires` epoch seconds).
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable, the lock's lease
   *   ended (another instance may hold the key), or another instance reserved the key.
   * @throws what the local file throws (rejects).
   */
  async reserve(ref: SubmissionRef, body: Record<string, unknown>): Promise<JournalEntry> {
    const hash = sha256(journalKey(ref));
    const entry = await this.local.reserve(ref, body);
    const reservation = this.#reservationOf(entry);
    let n: unknown;
    try {
      n = await this.coordinator.run((r) => journalScripts(r).cfJournalReserve(this.#entryKey(hash), this.#lockKey(hash), this.#recordOf(entry, reservation), this.#ttlMs(entry.expires, 'sending'), this.#held.get(hash) ?? ''));
    } catch (e) {
      await this.local.free(entry, 'notSent').catch(() => undefined);
      // The command may have run before the connection went: free the key in Redis once it is back (nothing was sent).
      if (e instanceof CoordinationUnavailableError) this.#queue({ hash, reservation, freed: 'notSent', key: entry.key, expires: entry.expires });
      throw e;
    }
    if (n !== 1) {
      await this.local.free(entry, 'notSent').catch(() => undefined);
      throw new CoordinationUnavailableError(
        n === -1
          ? 'coordination: the lock of this payment key ended before it was reserved (Redis was away longer than its lease); nothing was sent'
          : 'coordination: another instance reserved this payment key at the same time; nothing was sent',
      );
    }
    return entry;
  }

  /**
   * Record a 2xx answer (its `tx_id` indexed): in the local file (when it holds this reservation),
   * then in Redis (queued while Redis is away).
   * @throws what the local file throws (rejects), after Redis was written or the change queued.
   */
  answered(entry: JournalEntry, statusCode: number, answer: Record<string, unknown>): Promise<void> {
    const txId = typeof answer.tx_id === 'string' ? answer.tx_id : undefined;
    return this.#change(
      entry,
      (mine) => this.local.answered(mine, statusCode, answer),
      (e) => Object.assign(e, { state: 'answered', statusCode, answer, updated: Math.floor(Date.now() / 1000) }, txId ? { tx_id: txId } : {}),
    );
  }

  /** Record that the outcome is unknown (as {@link answered}). @throws what the local file throws (rejects). */
  unknown(entry: JournalEntry): Promise<void> {
    if (entry.state === 'unknown') return Promise.resolve();
    return this.#change(
      entry,
      (mine) => this.local.unknown(mine),
      (e) => Object.assign(e, { state: 'unknown', updated: Math.floor(Date.now() / 1000) }),
    );
  }

  /** Record that a lookup found the transaction `txId` (as {@link answered}). @throws what the local file throws (rejects). */
  found(entry: JournalEntry, txId: string): Promise<void> {
    return this.#change(
      entry,
      (mine) => this.local.found(mine, txId),
      (e) => Object.assign(e, { state: 'found', tx_id: txId, updated: Math.floor(Date.now() / 1000) }),
    );
  }

  /**
   * Free the key (refused, not sent, or not found after its `expires`): in the local file, then
   * in Redis a tombstone in place of the entry (queued while Redis is away: until then the key
   * stays held, the safe side).
   * @throws what the local file throws (rejects).
   */
  async free(entry: JournalEntry, reason: 'refused' | 'notSent' | 'notFound'): Promise<void> {
    const mine = this.#localOf(entry);
    let failure: unknown;
    if (mine) await this.local.free(mine, reason).catch((e: unknown) => (failure = e));
    await this.#write({ hash: sha256(entry.key), reservation: this.#reservationOf(entry), freed: reason, key: entry.key, expires: entry.expires, txId: entry.tx_id });
    if (failure) throw failure;
  }

  /**
   * A change after sending: the local file first (when it holds this reservation), then `entry`
   * itself, then Redis. Redis being away never fails it: the change waits for Redis.
   */
  async #change(entry: JournalEntry, local: (mine: JournalEntry) => Promise<void>, apply: (e: JournalEntry) => void): Promise<void> {
    const mine = this.#localOf(entry);
    let failure: unknown;
    if (mine) await local(mine).catch((e: unknown) => (failure = e));
    const reservation = this.#reservationOf(entry);
    apply(entry);
    this.#reservations.set(entry, reservation);
    await this.#write({ hash: sha256(entry.key), reservation, entry: { ...entry }, key: entry.key, expires: entry.expires, txId: entry.tx_id });
    if (failure) throw failure;
  }

  /** Queue `write` (replacing an older one of the key) and try it now; Redis being away leaves it queued. */
  async #write(write: PendingWrite): Promise<void> {
    this.#queue(write);
    try {
      await this.#flushOne(write.hash);
    } catch {
      this.#scheduleRetry();
    }
  }

  #queue(write: PendingWrite): void {
    this.#pending.set(write.hash, write);
    this.#scheduleRetry();
  }

  /**
   * Write the queued change of `hash`, if any.
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable (the change stays queued).
   */
  async #flushOne(hash: string): Promise<void> {
    const write = this.#pending.get(hash);
    if (!write) return;
    try {
      const value = write.entry
        ? this.#recordOf(write.entry, write.reservation)
        : JSON.stringify({ freed: write.freed, reservation: write.reservation, at: Math.floor(Date.now() / 1000) } satisfies Tombstone);
      const ttl = this.#ttlMs(write.expires, write.entry ? write.entry.state : 'freed');
      const tx = write.txId ? this.#txKey(write.txId) : this.#entryKey(hash);
      const txOp = write.txId ? (write.entry ? 'set' : 'del') : '';
      // 0: another reservation holds the key now (ours was freed and the key reserved again): the change is for nothing.
      await this.coordinator.run((r) => journalScripts(r).cfJournalUpdate(this.#entryKey(hash), tx, value, ttl, write.reservation, write.key, txOp));
    } catch (e) {
      if (e instanceof CoordinationUnavailableError) throw e;
      this.writesDropped++;
    }
    if (this.#pending.get(hash) === write) this.#pending.delete(hash);
  }

  /** Write every queued change; stops at the first sign that Redis is away (and tries again later). */
  async #flushAll(): Promise<void> {
    for (const hash of [...this.#pending.keys()]) {
      try {
        await this.#flushOne(hash);
      } catch {
        this.#scheduleRetry();
        return;
      }
    }
  }

  /** Try again in {@link SharedJournalOptions.retryMs} while changes wait or the local entries are to be written back. */
  #scheduleRetry(): void {
    if (this.#retryTimer || (this.#pending.size === 0 && !this.#restoreNeeded) || this.#closing.signal.aborted) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#catchUp();
    }, this.#retryMs);
    this.#retryTimer.unref();
  }

  /** Write back the local entries (when needed), then the queued changes; one run at a time; never rejects. */
  #catchUp(): Promise<void> {
    this.#catchingUp = this.#catchingUp
      .then(async () => {
        if (this.#closing.signal.aborted) return;
        if (this.#restoreNeeded) {
          try {
            await this.#restoreAll();
            this.#restoreNeeded = false;
          } catch {
            // Redis went again: the next 'ready' (or the retry) writes them back.
            this.#scheduleRetry();
            return;
          }
        }
        await this.#flushAll();
      })
      .catch(() => undefined);
    return this.#catchingUp;
  }

  /**
   * Write one local entry back where Redis holds nothing for its key.
   * @returns true when written. @throws {CoordinationUnavailableError} (rejects).
   */
  async #restore(entry: JournalEntry): Promise<boolean> {
    const hash = sha256(entry.key);
    const n = await this.coordinator.run((r) =>
      journalScripts(r).cfJournalRestore(this.#entryKey(hash), entry.tx_id ? this.#txKey(entry.tx_id) : this.#entryKey(hash), this.#recordOf(entry, this.#reservationOf(entry)), this.#ttlMs(entry.expires, entry.state), entry.key, entry.tx_id ? '1' : '0'),
    );
    return n === 1;
  }

  /**
   * Write back every live entry of the local file (`SET NX`: what Redis holds stays), in
   * pipelines of 500. @returns how many were written. @throws {CoordinationUnavailableError} (rejects).
   */
  async #restoreAll(): Promise<number> {
    const entries = this.local.entries();
    let written = 0;
    for (let i = 0; i < entries.length; i += 500) {
      const batch = entries.slice(i, i + 500);
      const results = await this.coordinator.run(async (r) => {
        const p = journalScripts(r).pipeline();
        for (const e of batch) {
          const hash = sha256(e.key);
          (p as unknown as JournalScripts).cfJournalRestore(this.#entryKey(hash), e.tx_id ? this.#txKey(e.tx_id) : this.#entryKey(hash), this.#recordOf(e, this.#reservationOf(e)), this.#ttlMs(e.expires, e.state), e.key, e.tx_id ? '1' : '0');
        }
        const out = await p.exec();
        const failed = out?.find(([err]) => err);
        if (!out || failed) throw failed?.[0] ?? new Error('the pipeline was not run');
        return out;
      });
      written += results.filter(([, n]) => n === 1).length;
    }
    return written;
  }

  /**
   * Stop: no new lock (waiting ones reject with {@link CoordinationUnavailableError}), the
   * data-loss and state listeners removed, and one last try of the queued changes (those Redis
   * does not take are left: the local file holds them, and the next start writes back its live
   * entries). Closes neither the local journal nor the coordinator (their owner does, after this).
   * Locks still held are released by their holders (or end with their lease).
   */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#unregisterDataLoss();
    this.coordinator.off('state', this.#onState);
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    await this.#catchingUp.catch(() => undefined);
    await this.#flushAll().catch(() => undefined);
    this.#closing.abort();
    clearTimeout(this.#retryTimer);
  }
}
