/**
 * The tracking service of one `custody-track` node (docs/nodes.md "custody-track"): follows each
 * msg's transfer, withdrawal, swap (make or take) or sweep to its final state (spec section 3; the
 * table is lib/api/states.ts) and reports it once. No Node-RED import: the node gives plain
 * callbacks (send, done, status, problems) and the texts of its catalog.
 *
 * - One {@link Tracker} (one timer) per service; while anything is followed the service is a member
 *   of the connection's wallets feed and liquidity hub feed (spec section 6) and wakes the matching
 *   transaction on their messages.
 * - Across restarts (docs/nodes.md "custody-track", "Across restarts"): each msg followed is a
 *   {@link TrackRecord} in a {@link TrackStore} (the node's file, or Redis when the connection
 *   coordinates). Recorded before it is followed; marked reported before its final answer is sent
 *   (so it is sent once, by one instance); followed again, its msg rebuilt with `resumed: true`,
 *   when the service starts after a restart or a redeploy; dropped when the node is deleted.
 *
 * Units: `expires` epoch seconds (as in the API); times epoch ms (`Date.now()`); delays ms.
 */
import { isPlainObject as isObject } from '../support/objects';
import os from 'node:os';
import path from 'node:path';
import { ApiError, ValidationError } from '../api/errors';
import { TRANSACTION_KINDS, isTransactionKind, type TransactionKind } from '../api/kinds';
import { TRANSACTION_STATES } from '../api/states';
import type { HubFeedMessage, WalletFeedMessage } from '../api/feeds';
import type { CustodyClient } from '../client/client';
import { readTransaction } from '../client/read-transaction';
import { Tracker, type Tracked } from './tracker';
import { openTrackStore, storableMsg, trackRecordId, type TrackOutcome, type TrackRecord, type TrackStore, type TrackStoreCoordinator } from './track-store';

/**
 * `msg.track` on the outputs. Times in ms since the epoch.
 * Example: `{kind: 'transfer', tx_id: 't1', company_id: 'c1', state: 'approved_transfer', final: true, timedOut: false, reads: 3, startedAt: 1700000000000, finishedAt: 1700000004000}`.
 */
export interface TrackInfo {
  /** The kind followed. */
  kind: TransactionKind;
  /** The transaction's id. */
  tx_id: string;
  /** The owner id of every kind but sweeps. */
  company_id?: string;
  /** The owner id of a sweep (the exchange core client). */
  client_id?: string;
  /** The last status read (`txStatus`, `tx_status` for sweeps); undefined before a successful read. */
  state?: string;
  /** True when `state` is final (spec section 3). */
  final: boolean;
  /** True when the deadline (`expires` + margin) passed first. */
  timedOut: boolean;
  /** Reads made (failed ones included). */
  reads: number;
  /** When the tracking started (kept across restarts), epoch ms. */
  startedAt: number;
  /** When it ended, epoch ms; set on output 1 only. */
  finishedAt?: number;
}

/**
 * A msg as the service reads and writes it: `payload` (in: the answer of a create or get node, or
 * `{tx_id, company_id}` / `{tx_id, client_id}`; out: the last GET answer), `statusCode` (its HTTP
 * status), `custody` (the operation node's trace `{type, operation, company_id?, client_id?}`),
 * `kind`, `track` ({@link TrackInfo}) and `resumed` (true on the msgs of a tracking resumed after a
 * restart or a redeploy).
 */
export type TrackMessage = Record<string, unknown> & { _msgid?: string; payload?: unknown; statusCode?: number; custody?: unknown; kind?: unknown; track?: TrackInfo; resumed?: boolean };

/** Sends on output 1 (final or timed out) and output 2 (progress). */
export type TrackSend = (outputs: [TrackMessage | null, TrackMessage | null]) => void;

/** Ends a msg: without an error when reported (or reported elsewhere), with it when its tracking failed. */
export type TrackDone = (err?: Error) => void;

/** How the last tracking that ended ended, for the status: its final state, or timed out at `state` (undefined: no answer). */
export interface TrackEnded {
  /** Final state read, or the deadline passed first. */
  outcome: 'final' | 'timedOut';
  /** The last status read; undefined when timed out with no answer. */
  state?: string;
}

/**
 * What the node shows: `tracking` (`tracked` msgs followed, `resumed` of them after a restart),
 * `ended` (nothing followed any more; `last` the last outcome reported, undefined when none) or
 * `error` (a failure, shown until the next status).
 */
export type TrackStatus = { state: 'tracking'; tracked: number; resumed: number } | { state: 'ended'; last?: TrackEnded } | { state: 'error'; error: unknown };

/**
 * A problem that is no msg's error: `storeOpen` (the store cannot be opened: every msg is refused),
 * `resume` (resuming after a restart failed), `progressWrite` (a status change was not recorded;
 * said once per start; the tracking goes on), `storeClose` (closing the store failed).
 */
export interface TrackProblem {
  /** Which problem. */
  kind: 'storeOpen' | 'resume' | 'progressWrite' | 'storeClose';
  /** What the storage, the client or the read threw. */
  error: Error;
}

/** The texts of the errors a msg can end with (the node's catalog); `kinds` is the kinds joined by `, `, `kind` the JSON of the value given. */
export interface TrackTexts {
  /** `kind` = `msg` and neither `msg.kind` nor `msg.custody` names one (field `kind`). */
  kindUnknown(kinds: string): string;
  /** The kind given is none of the kinds (field `kind`). */
  kindExpected(kinds: string, kind: string): string;
  /** No `tx_id` (or `txID`) in `msg.payload` (field `tx_id`). */
  txIdRequired(): string;
  /** A sweep without `client_id` (field `client_id`). */
  clientIdRequired(): string;
  /** Any other kind without `company_id` (field `company_id`). */
  companyIdRequired(): string;
  /** A msg refused because its record could not be written; `message` is the storage's error. */
  notRecorded(message: string): string;
}

/** Options of a {@link TrackService}. Times in ms. */
export interface TrackServiceOptions {
  /** The node's id: names its file or its Redis keys. */
  nodeId: string;
  /** The folder of the track files ({@link trackFolder}). */
  folder: string;
  /** The connection's coordinator, undefined when it does not coordinate (then the file is used). */
  coordinator(): Promise<TrackStoreCoordinator | undefined>;
  /** The connection's client. */
  client(): Promise<CustodyClient>;
  /** The kind followed, or `msg` (taken from `msg.kind`, else from `msg.custody` by `traceKind`). */
  kind: TransactionKind | 'msg';
  /**
   * The kind an operation node's answer is about, from its trace `msg.custody` (`type`, the node's
   * type, and `operation`); undefined when it names none. The node types are Node-RED's, so the
   * node gives this.
   */
  traceKind(type: string, operation: string): TransactionKind | undefined;
  /** `company_id` set in the node (it wins over the msg's). */
  companyId?: string;
  /** `client_id` set in the node (sweeps), read per msg; `error` refuses the msgs that need it. */
  clientId(): { value?: string; error?: Error };
  /** Send each status change on output 2. */
  progress: boolean;
  /** Delay before the first read, ms. */
  firstDelayMs: number;
  /** Largest delay between two reads, ms. */
  maxDelayMs: number;
  /** Time after the transaction's `expires` before giving up, ms. */
  marginMs: number;
  /** How long a reported final answer is remembered, ms (default `DEFAULT_TRACK_KEEP_REPORTED_MS`, 24 h): a duplicate report cannot be sent meanwhile. */
  keepReportedMs?: number;
  /**
   * Join the wallets feed and the liquidity hub feed (spec section 6) with these handlers; answers
   * how to leave both. Called when the first msg is followed; left when none is.
   */
  joinFeeds(on: { wallets(m: WalletFeedMessage): void; hub(m: HubFeedMessage): void }): () => Promise<unknown>;
  /** A deep copy of a msg, and a new `_msgid` (Node-RED's `RED.util`). */
  util: { cloneMessage<T extends { _msgid?: string; payload?: unknown }>(msg: T): T; generateId(): string };
  /** The texts of the errors msgs are refused with (the node's catalog). */
  texts: TrackTexts;
  /** The outputs of resumed msgs (no input `send` of theirs is left). */
  send: TrackSend;
  /** The error of a resumed msg (so Catch nodes get it with the msg). */
  error(err: Error, msg: TrackMessage): void;
  /** The status changed (a msg followed or ended, a failure). */
  onStatus(status: TrackStatus): void;
  /** A problem that is no msg's error, to log. */
  onProblem(problem: TrackProblem): void;
}

/** Deadline of a tracking while the transaction's `expires` is unknown: its start plus this, ms (lib Tracker `unknownExpiryMs`). */
export const UNKNOWN_EXPIRY_MS = 3600_000;

/** Wait between two tries of a report whose "reported" mark could not be written (storage away), ms. */
export const REPORT_RETRY_MS = 2000;

/**
 * The folder of the track files: `$CUSTODYFLOW_TRACK_DIR`, else `<userDir>/custodyflow/track`, else
 * a folder in the OS temp dir (as the submission journal's and the feed memory's).
 */
export function trackFolder(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_TRACK_DIR || path.join(userDir || os.tmpdir(), 'custodyflow', 'track');
}

/** The string `v` trimmed, or undefined when empty or not a string. */
function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** What the service keeps per msg. */
interface Context {
  /** The record's id ({@link trackRecordId}). */
  id: string;
  /** The record as last written (state, reads, deadline kept current). */
  record: TrackRecord;
  msg: TrackMessage;
  /** Resumed after a restart or a redeploy (its msg rebuilt from the record). */
  resumed: boolean;
  send: TrackSend;
  done: TrackDone;
}

/** The target of a msg: the kind, `tx_id` and the kind's owner id. */
type Target = { kind: TransactionKind; tx_id: string; company_id?: string; client_id?: string };

/**
 * The tracking of one `custody-track` node. Opens its store at construction (a failure is a
 * `storeOpen` problem and every msg is then refused with it) and resumes what the store holds
 * unreported. Nothing it does throws to its caller: failures reach `done(err)`, `error`,
 * `onStatus` or `onProblem`.
 */
export class TrackService {
  private readonly o: TrackServiceOptions;
  private readonly tracker: Tracker<Context>;
  private readonly store: Promise<TrackStore>;
  private readonly closing = new AbortController();
  /** Every msg followed, or whose report is being written, by record id. */
  private readonly live = new Map<string, Context>();
  /** Reports in progress (mark, then send): close waits for them. */
  private readonly reporting = new Set<Promise<void>>();
  /** Waits to end at close. */
  private readonly waits = new Set<() => void>();
  private client: CustodyClient | undefined;
  private leave: (() => Promise<unknown>) | undefined;
  private last: TrackEnded | undefined;
  private closed = false;
  private progressWarned = false;

  constructor(options: TrackServiceOptions) {
    this.o = options;
    this.store = (async () => openTrackStore({ coordinator: await options.coordinator(), folder: options.folder, nodeId: options.nodeId, signal: this.closing.signal, keepReportedMs: options.keepReportedMs }))();
    this.store.catch((error: Error) => {
      options.onStatus({ state: 'error', error });
      options.onProblem({ kind: 'storeOpen', error });
    });
    this.tracker = new Tracker<Context>((target) => readTransaction(this.client!, target.kind, target), {
      progress: (t, read) => {
        const ctx = t.context;
        ctx.record = { ...ctx.record, target: { ...ctx.record.target, ...(read.expires !== undefined ? { expires: read.expires } : {}) }, state: read.status, reads: t.reads, deadline: t.deadline };
        this.store
          .then((store) => store.put(ctx.record))
          .catch((error: Error) => {
            // The record keeps its last state; the tracking goes on. Said once per start.
            if (!this.progressWarned) options.onProblem({ kind: 'progressWrite', error });
            this.progressWarned = true;
          });
        if (!options.progress) return;
        const copy = options.util.cloneMessage(ctx.msg);
        copy.payload = read.answer;
        copy.statusCode = read.statusCode;
        copy.track = this.info(t, read.final, false);
        ctx.send([null, copy]);
      },
      final: (t, read) => {
        const track = this.info(t, true, false);
        this.report(t.context, 'final', { outcome: 'final', state: read.status }, (msg) => {
          msg.payload = read.answer;
          msg.statusCode = read.statusCode;
          msg.track = { ...track, finishedAt: Date.now() };
        });
      },
      timedOut: (t) => {
        const track = this.info(t, false, true);
        const last = t.last;
        this.report(t.context, 'timedOut', { outcome: 'timedOut', state: t.state }, (msg) => {
          if (last) {
            msg.payload = last.answer;
            msg.statusCode = last.statusCode;
          }
          msg.track = { ...track, finishedAt: Date.now() };
        });
      },
      error: (t, err) => {
        const track = this.info(t, false, false);
        this.report(
          t.context,
          'error',
          undefined,
          (msg) => {
            if (err instanceof ApiError && err.statusCode > 0) msg.statusCode = err.statusCode;
            else delete msg.statusCode;
            msg.track = { ...track, finishedAt: Date.now() };
          },
          err,
        );
      },
    }, { firstDelayMs: options.firstDelayMs, maxDelayMs: options.maxDelayMs, marginMs: options.marginMs, unknownExpiryMs: UNKNOWN_EXPIRY_MS });
    this.store.then(() => this.resume(), () => undefined).catch((error: Error) => {
      if (this.closed) return;
      options.onStatus({ state: 'error', error });
      options.onProblem({ kind: 'resume', error });
    });
  }

  /**
   * Follow the transaction `msg` names: record it, then follow it; its outcome goes out by `send`
   * (output 1; output 2 per status change when `progress`) and ends it by `done()`. A read that
   * fails for good (4xx such as 404) ends it with `done(err)`, `msg.statusCode` set. Input refused
   * (a {@link ValidationError} naming `kind`, `tx_id`, `company_id` or `client_id`), a record that
   * cannot be written (code of the storage's error, else `ESTORE`), or no client: `done(err)`.
   */
  input(msg: TrackMessage, send: TrackSend, done: TrackDone): void {
    let target: Target;
    try {
      target = this.target(msg);
    } catch (e) {
      delete msg.statusCode;
      return done(e as Error);
    }
    Promise.all([this.o.client(), this.store])
      .then(async ([client, store]) => {
        if (this.closed) return done();
        this.client = client;
        if (typeof msg._msgid !== 'string' || !msg._msgid) msg._msgid = this.o.util.generateId();
        let id = trackRecordId(target.tx_id, msg._msgid);
        for (let n = 2; this.live.has(id); n++) id = trackRecordId(target.tx_id, `${msg._msgid}.${n}`);
        const now = Date.now();
        const record: TrackRecord = { id, target, msg: storableMsg(msg, { ...target }).msg, startedAt: now, deadline: now + UNKNOWN_EXPIRY_MS, reads: 0 };
        try {
          await store.put(record);
        } catch (e) {
          delete msg.statusCode;
          const err = e as Error & { code?: string };
          const refused = Object.assign(new Error(this.o.texts.notRecorded(err.message)), { code: err.code ?? 'ESTORE' });
          this.o.onStatus({ state: 'error', error: refused });
          return done(refused);
        }
        // Closed while writing: the record stays, the next start follows it (resumed).
        if (this.closed) return done();
        this.follow({ id, record, msg, resumed: false, send, done }, false);
        this.showTracking();
      })
      // The client, the store, or following it failed: the msg ends with the error (no unhandled rejection).
      .catch((err: Error) => {
        delete msg.statusCode;
        this.o.onStatus({ state: 'error', error: err });
        done(err);
      });
  }

  /**
   * Stop: reports whose mark is being written finish (and send); the rest end with `done()` and
   * stay recorded for the next start. Then the feeds are left and the store closed, or destroyed
   * when `removed` (the node deleted). Never rejects (a close failure is a `storeClose` problem).
   */
  async close(removed: boolean): Promise<void> {
    this.closed = true;
    this.closing.abort();
    this.tracker.close();
    for (const end of [...this.waits]) end();
    await Promise.allSettled([...this.reporting]);
    for (const ctx of this.live.values()) ctx.done();
    this.live.clear();
    await this.leaveFeeds();
    const store = await this.store.catch(() => undefined);
    if (store) await (removed ? store.destroy() : store.close()).catch((error: Error) => this.o.onProblem({ kind: 'storeClose', error }));
  }

  /**
   * The target named by `msg`. @throws {ValidationError} naming `tx_id`, `kind`, `company_id` or
   * `client_id` when missing or unusable; the error of the `clientId` setting.
   */
  private target(msg: TrackMessage): Target {
    const { texts, kind: setting } = this.o;
    const payload = isObject(msg.payload) ? msg.payload : {};
    const trace = isObject(msg.custody) ? msg.custody : {};
    let kind: unknown = setting;
    if (setting === 'msg') {
      kind = text(msg.kind) ?? (trace.type ? this.o.traceKind(String(trace.type), String(trace.operation)) : undefined);
      if (kind === undefined) throw new ValidationError('kind', texts.kindUnknown(TRANSACTION_KINDS.join(', ')));
    }
    if (!isTransactionKind(kind)) throw new ValidationError('kind', texts.kindExpected(TRANSACTION_KINDS.join(', '), JSON.stringify(kind)));
    const tx_id = text(payload.tx_id) ?? text(payload.txID);
    if (!tx_id) throw new ValidationError('tx_id', texts.txIdRequired());
    if (TRANSACTION_STATES[kind].owner === 'client_id') {
      const read = this.o.clientId();
      if (read.error) throw read.error;
      const client_id = read.value ?? text(payload.client_id) ?? text(trace.client_id);
      if (!client_id) throw new ValidationError('client_id', texts.clientIdRequired());
      return { kind, tx_id, client_id };
    }
    const company_id = this.o.companyId ?? text(payload.company_id) ?? text(trace.company_id);
    if (!company_id) throw new ValidationError('company_id', texts.companyIdRequired());
    return { kind, tx_id, company_id };
  }

  /** Resolve after `ms`, or at once when the service closes. */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.waits.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.waits.add(end);
    });
  }

  /**
   * The outcome of `ctx`: mark it reported in the store (retried while the storage is away, until
   * the service closes: then it stays unreported and the next start reads it again), then, when
   * this mark is the one that counts, send it (or `done(err)`); a mark already there (an earlier
   * start, another instance) sends nothing. A timed-out or failed one is then dropped from the
   * store; a final one is kept (reported) for the send-once check.
   */
  private report(ctx: Context, outcome: TrackOutcome, ended: TrackEnded | undefined, build: (msg: TrackMessage) => void, err?: Error): void {
    const run = (async () => {
      const store = await this.store;
      let mine: boolean | undefined;
      while (mine === undefined) {
        try {
          mine = await store.markReported(ctx.id, outcome);
        } catch (e) {
          if (this.closed) return;
          this.o.onStatus({ state: 'error', error: e });
          await this.wait(REPORT_RETRY_MS);
          if (this.closed) return;
        }
      }
      this.live.delete(ctx.id);
      if (mine) {
        build(ctx.msg);
        if (ended !== undefined) this.last = ended;
        if (err) ctx.done(err);
        else {
          ctx.send([ctx.msg, null]);
          ctx.done();
        }
        if (outcome !== 'final') await store.drop(ctx.id).catch(() => undefined);
      } else ctx.done();
      this.finish(err);
    })().catch((e: Error) => {
      // Only the store can reject here (it never opened): said at start already.
      this.live.delete(ctx.id);
      ctx.done(e);
    });
    this.reporting.add(run);
    void run.finally(() => this.reporting.delete(run));
  }

  /** `msg.track` for `t`. */
  private info(t: Tracked<Context>, final: boolean, timedOut: boolean): TrackInfo {
    const { kind, tx_id, company_id, client_id } = t.target;
    const out: TrackInfo = { kind, tx_id, state: t.state, final, timedOut, reads: t.reads, startedAt: t.startedAt };
    if (TRANSACTION_STATES[kind].owner === 'client_id') out.client_id = client_id;
    else out.company_id = company_id;
    return out;
  }

  /** Status after a tracking ended; leaves the feeds when nothing is followed. */
  private finish(err?: Error): void {
    if (this.closed) return;
    if (err) this.o.onStatus({ state: 'error', error: err });
    if (this.live.size === 0) {
      void this.leaveFeeds();
      if (!err) this.o.onStatus({ state: 'ended', last: this.last });
    } else if (!err) this.showTracking();
  }

  /** `tracking` status: how many are followed, how many of them resumed. */
  private showTracking(): void {
    let resumed = 0;
    for (const c of this.live.values()) if (c.resumed) resumed++;
    this.o.onStatus({ state: 'tracking', tracked: this.live.size, resumed });
  }

  /** Join the feeds (once) to wake a followed transaction a feed message names. */
  private joinFeeds(): void {
    if (this.leave || this.closed) return;
    this.leave = this.o.joinFeeds({
      wallets: (m) => {
        if (typeof m.tx_id === 'string' && m.tx_id) this.tracker.wake(m.tx_id);
      },
      hub: (m) => {
        const id = m.txID ?? m.TxID;
        if (typeof id === 'string' && id) this.tracker.wake(id);
      },
    });
  }

  /** Leave the feeds, when joined. */
  private leaveFeeds(): Promise<unknown> {
    const leave = this.leave;
    this.leave = undefined;
    return leave ? leave() : Promise.resolve();
  }

  /** Follow `ctx`: the tracker, the feeds. */
  private follow(ctx: Context, resume: boolean): void {
    this.live.set(ctx.id, ctx);
    this.joinFeeds();
    const r = ctx.record;
    const t = this.tracker.track(r.target, ctx, resume ? { startedAt: r.startedAt, deadline: r.deadline, reads: r.reads, state: r.state } : undefined);
    if (!resume) ctx.record = { ...r, startedAt: t.startedAt, deadline: t.deadline };
  }

  /**
   * At start: follow again every record still unreported (a restart, a redeploy), its msg rebuilt
   * from the stored copy with `msg.resumed = true`; its outcome leaves by the `send` option (errors
   * by the `error` option). Retried while the storage is away.
   */
  private async resume(): Promise<void> {
    const store = await this.store;
    let records: TrackRecord[] | undefined;
    while (!records && !this.closed) {
      try {
        records = await store.load();
      } catch (e) {
        this.o.onStatus({ state: 'error', error: e });
        await this.wait(REPORT_RETRY_MS);
      }
    }
    if (!records?.length || this.closed) return;
    this.client = await this.o.client();
    if (this.closed) return;
    for (const record of records) {
      if (this.live.has(record.id)) continue;
      const msg: TrackMessage = { ...this.o.util.cloneMessage(record.msg), resumed: true };
      if (typeof msg._msgid !== 'string') msg._msgid = this.o.util.generateId();
      const done: TrackDone = (err) => {
        if (err) this.o.error(err, msg);
      };
      this.follow({ id: record.id, record, msg, resumed: true, send: this.o.send, done }, true);
    }
    this.showTracking();
  }
}
