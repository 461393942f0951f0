/**
 * `custody-track`: follows a transfer, withdrawal, swap (make or take) or sweep to its final state
 * (spec section 3; the table is lib/api/states.ts) and sends the final answer once.
 *
 * Input: the answer of a create (or get) node, or `{tx_id, company_id}` (`{tx_id, client_id}` for
 * a sweep) in `msg.payload`. The kind is the node's `kind`, or with `kind` = `msg` taken from
 * `msg.custody` (left by the operation nodes) or `msg.kind`. `company_id`: the editor wins, else
 * `msg.payload.company_id`, else `msg.custody.company_id`; `client_id` (sweeps) likewise.
 *
 * Output 1 (final): `msg.payload` = the last GET answer, `msg.statusCode` its HTTP status,
 * `msg.track` = {@link TrackInfo}; on timeout the same output with `timedOut: true`,
 * `final: false`. Output 2 (progress, when enabled): a copy of the msg per status change.
 * `done()` is called when tracking of the msg ends (final or timed out); a read that fails for
 * good (4xx such as 404) ends it with `done(err)` so Catch nodes get it with `msg.statusCode` set.
 *
 * One lib/tracking `Tracker` (one timer) per node; while anything is tracked the node is a member of
 * the config node's wallets feed and liquidity hub feed and wakes the matching transaction.
 *
 * Across restarts (docs/nodes.md "custody-track", "Across restarts"): each msg followed is a lib
 * {@link TrackRecord} in a {@link TrackStore}: the file `<userDir>/custodyflow/track/<node id>.jsonl`
 * (or `$CUSTODYFLOW_TRACK_DIR`), or Redis when the connection coordinates. Recorded before it is
 * followed; marked reported before its final answer is sent; resumed (with `msg.resumed = true`)
 * when the node starts again after a restart or a redeploy; dropped when the node is deleted.
 */
import os from 'node:os';
import path from 'node:path';
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import {
  ApiError,
  ConfigError,
  ValidationError,
  TRANSACTION_KINDS,
  TRANSACTION_STATES,
  isTransactionKind,
  readTransaction,
  type CustodyClient,
  type HubFeedMessage,
  type TransactionKind,
  type WalletFeedMessage,
} from '../../lib';
import type { TrackOutcome, TrackRecord, TrackStore, Tracked } from '../../lib/tracking';
import { trackingLib } from '../shared/services';
import { editorSeconds, isPlainObject } from '../shared/input';
import { showError } from '../shared/status';
import { readSetting } from '../shared/typed-field';
import type { CustodyMessage, CustodyTrace, FeedMembership } from '../shared/types';
import { createConnectedNode, noConnectionError } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';

/** Editor properties of `custody-track`; times in seconds. */
interface TrackDef extends ConnectedNodeDef {
  /** A {@link TransactionKind}, or `msg` (from `msg.custody` / `msg.kind`). */
  kind: string;
  company_id?: string;
  client_id?: string;
  /** Send each status change on output 2. */
  progress?: boolean;
  /** Seconds before the first read (default 1). */
  firstDelay?: string | number;
  /** Largest delay between reads, seconds (default 30). */
  maxDelay?: string | number;
  /** Seconds after the transaction's `expires` before giving up (default 60). */
  margin?: string | number;
}

/**
 * `msg.track` on the outputs. Times in ms since the epoch.
 * Example: `{kind: 'transfer', tx_id: 't1', company_id: 'c1', state: 'approved_transfer', final: true, timedOut: false, reads: 3, startedAt: 1700000000000, finishedAt: 1700000004000}`.
 */
interface TrackInfo {
  kind: TransactionKind;
  tx_id: string;
  company_id?: string;
  client_id?: string;
  /** The last status read (`txStatus`, `tx_status` for sweeps); undefined before a successful read. */
  state?: string;
  /** True when `state` is final (spec section 3). */
  final: boolean;
  /** True when the deadline (`expires` + margin) passed first. */
  timedOut: boolean;
  /** Reads made (failed ones included). */
  reads: number;
  startedAt: number;
  /** Set on output 1 only. */
  finishedAt?: number;
}

/** Which kind an operation node's answer is about: `<type>/<operation>` -> kind. */
const KIND_BY_TRACE: Record<string, TransactionKind> = {
  'custody-transfer/create': 'transfer',
  'custody-transfer/get': 'transfer',
  'custody-withdraw/create': 'withdrawal',
  'custody-withdraw/get': 'withdrawal',
  'custody-swap-make/make': 'swapMake',
  'custody-swap-make/get': 'swapMake',
  'custody-swap-take/take': 'swapTake',
  'custody-swap-take/get': 'swapTake',
  'custody-sweep/start': 'sweep',
  'custody-sweep/status': 'sweep',
};

/** `msg.resumed`: true on the msgs of a tracking resumed after a restart or a redeploy. */
type TrackMessage = CustodyMessage & { track?: TrackInfo; kind?: unknown; resumed?: boolean };

/** What the tracker keeps per msg. */
interface Context {
  /** The record's id ({@link trackRecordId}). */
  id: string;
  /** The record as last written (state, reads, deadline kept current). */
  record: TrackRecord;
  msg: TrackMessage;
  /** Resumed after a restart or a redeploy (its msg rebuilt from the record). */
  resumed: boolean;
  send: (msgs: Array<NodeMessageInFlow | null>) => void;
  done: (err?: Error) => void;
}

/** Deadline of a tracking while the transaction's `expires` is unknown: its start plus this, ms (lib Tracker `unknownExpiryMs`). */
const UNKNOWN_EXPIRY_MS = 3600_000;

/** Wait between two tries of a report whose "reported" mark could not be written (storage away), ms. */
const REPORT_RETRY_MS = 2000;

/**
 * The folder of the track files: `$CUSTODYFLOW_TRACK_DIR`, else `<userDir>/custodyflow/track`, else
 * a folder in the OS temp dir (as the submission journal's and the feed memory's).
 */
function trackDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_TRACK_DIR || path.join(userDir || os.tmpdir(), 'custodyflow', 'track');
}

/** The string `v` trimmed, or undefined when empty or not a string. */
function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

export = function register(RED: NodeAPI): void {
  function TrackNode(this: Node, def: TrackDef) {
    const connection = createConnectedNode(RED, this, def);
    const { Tracker, openTrackStore, storableMsg, trackRecordId } = trackingLib();
    const node = this;
    const sendProgress = def.progress === true || (def.progress as unknown) === 'true';
    const editorCompany = text(def.company_id);
    // Read per msg (a flow or global value may change); an error refuses the msgs that need it.
    const editorClient = () => readSetting(RED, node, def as unknown as Record<string, unknown>, 'client_id');
    const kindSetting = text(def.kind) ?? 'msg';

    let configError: Error | undefined;
    let firstDelay = 1, maxDelay = 30, margin = 60;
    try {
      firstDelay = editorSeconds(RED, def.firstDelay, 'firstDelay', 1, 0);
      maxDelay = editorSeconds(RED, def.maxDelay, 'maxDelay', 30, 0.001);
      margin = editorSeconds(RED, def.margin, 'margin', 60, 0);
      if (kindSetting !== 'msg' && !isTransactionKind(kindSetting)) throw new ConfigError(`kind: ${RED._('custody-track.errors.kindSetting', { kinds: TRANSACTION_KINDS.join(', '), kind: JSON.stringify(kindSetting) })}`);
      if (!connection) throw noConnectionError(RED);
    } catch (e) {
      configError = e as Error;
    }

    let client: CustodyClient | undefined;
    let memberships: FeedMembership[] = [];
    let lastFinal: string | undefined;
    let closed = false;
    /** Every msg followed, or whose report is being written, by record id. */
    const live = new Map<string, Context>();
    /** Reports in progress (mark, then send): close waits for them. */
    const reporting = new Set<Promise<void>>();
    /** Waits to end at close. */
    const waits = new Set<() => void>();
    let progressWarned = false;

    /** Aborted at close: ends the wait for the coordinator. */
    const closing = new AbortController();
    /** The storage: Redis when the connection coordinates, else the node's file. Rejects when it cannot be opened. */
    const storeReady: Promise<TrackStore> = (async () => {
      if (configError || !connection) throw configError ?? noConnectionError(RED);
      const coordinator = await connection.coordinator();
      return openTrackStore({ coordinator, folder: trackDir((RED.settings as { userDir?: string }).userDir), nodeId: node.id, signal: closing.signal });
    })();
    storeReady.catch((err: Error) => {
      if (configError) return;
      showError(node, err);
      node.error(RED._('custody-track.errors.storeOpen', { message: err.message }));
    });

    const tracker = new Tracker<Context>(
      (target) => readTransaction(client!, target.kind, target),
      {
        progress(t, read) {
          const ctx = t.context;
          ctx.record = { ...ctx.record, target: { ...ctx.record.target, ...(read.expires !== undefined ? { expires: read.expires } : {}) }, state: read.status, reads: t.reads, deadline: t.deadline };
          storeReady
            .then((store) => store.put(ctx.record))
            .catch((err: Error) => {
              // The record keeps its last state; the tracking goes on. Said once per node start.
              if (!progressWarned) node.warn(RED._('custody-track.errors.progressWrite', { message: err.message }));
              progressWarned = true;
            });
          if (!sendProgress) return;
          const copy = RED.util.cloneMessage(ctx.msg) as TrackMessage;
          copy.payload = read.answer;
          copy.statusCode = read.statusCode;
          copy.track = info(t, read.final, false);
          ctx.send([null, copy]);
        },
        final(t, read) {
          const track = info(t, true, false);
          report(t.context, 'final', read.status, (msg) => {
            msg.payload = read.answer;
            msg.statusCode = read.statusCode;
            msg.track = { ...track, finishedAt: Date.now() };
          });
        },
        timedOut(t) {
          const track = info(t, false, true);
          const last = t.last;
          const shown = t.state === undefined ? RED._('custody-track.status.timedOutNoAnswer') : RED._('custody-track.status.timedOut', { state: t.state });
          report(t.context, 'timedOut', shown, (msg) => {
            if (last) {
              msg.payload = last.answer;
              msg.statusCode = last.statusCode;
            }
            msg.track = { ...track, finishedAt: Date.now() };
          });
        },
        error(t, err) {
          const track = info(t, false, false);
          report(
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
      },
      { firstDelayMs: firstDelay * 1000, maxDelayMs: maxDelay * 1000, marginMs: margin * 1000, unknownExpiryMs: UNKNOWN_EXPIRY_MS },
    );

    if (configError) showError(node, configError);
    else node.status({});

    /** Resolve after `ms`, or at once when the node closes. */
    function wait(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const end = () => {
          clearTimeout(timer);
          waits.delete(end);
          resolve();
        };
        const timer = setTimeout(end, ms);
        waits.add(end);
      });
    }

    /**
     * The outcome of `ctx`: mark it reported in the store (retried while the storage is away,
     * until the node closes: then it stays unreported and the next start reads it again), then,
     * when this node's mark is the one that counts, send it (or `done(err)`); a mark already there
     * (an earlier start, another instance) sends nothing. A timed-out or failed one is then
     * dropped from the store; a final one is kept (reported) for the send-once check.
     */
    function report(ctx: Context, outcome: TrackOutcome, shown: string | undefined, build: (msg: TrackMessage) => void, err?: Error): void {
      const run = (async () => {
        const store = await storeReady;
        let mine: boolean | undefined;
        while (mine === undefined) {
          try {
            mine = await store.markReported(ctx.id, outcome);
          } catch (e) {
            if (closed) return;
            showError(node, e);
            await wait(REPORT_RETRY_MS);
            if (closed) return;
          }
        }
        live.delete(ctx.id);
        if (mine) {
          build(ctx.msg);
          if (shown !== undefined) lastFinal = shown;
          if (err) ctx.done(err);
          else {
            ctx.send([ctx.msg, null]);
            ctx.done();
          }
          if (outcome !== 'final') await store.drop(ctx.id).catch(() => undefined);
        } else ctx.done();
        finish(err);
      })().catch((e: Error) => {
        // Only storeReady can reject here (the store never opened): said at start already.
        live.delete(ctx.id);
        ctx.done(e);
      });
      reporting.add(run);
      void run.finally(() => reporting.delete(run));
    }

    /** `msg.track` for `t`. */
    function info(t: Tracked<Context>, final: boolean, timedOut: boolean): TrackInfo {
      const { kind, tx_id, company_id, client_id } = t.target;
      const out: TrackInfo = { kind, tx_id, state: t.state, final, timedOut, reads: t.reads, startedAt: t.startedAt };
      if (TRANSACTION_STATES[kind].owner === 'client_id') out.client_id = client_id;
      else out.company_id = company_id;
      return out;
    }

    /** Status after a tracking ended; leaves the feeds when nothing is tracked. */
    function finish(err?: Error): void {
      if (closed) return;
      if (err) showError(node, err);
      if (live.size === 0) {
        leaveFeeds();
        if (!err) node.status({ fill: 'green', shape: 'dot', text: RED._('custody-track.status.final', { state: String(lastFinal), time: new Date().toLocaleTimeString() }) });
      } else if (!err) showTracking();
    }

    /** Blue dot "tracking N", with "(M resumed)" while resumed ones are followed. */
    function showTracking(): void {
      let resumed = 0;
      for (const c of live.values()) if (c.resumed) resumed++;
      const text = resumed ? RED._('custody-track.status.trackingResumed', { tracked: live.size, resumed }) : RED._('custody-track.status.tracking', { tracked: live.size });
      node.status({ fill: 'blue', shape: 'dot', text });
    }

    /** Wake on a feed message naming a followed transaction. */
    function joinFeeds(): void {
      if (memberships.length || !connection || closed) return;
      const quiet = { onHealth() {} };
      memberships = [
        connection.subscribeWalletsFeed({
          ...quiet,
          onMessage(m: WalletFeedMessage) {
            if (typeof m.tx_id === 'string' && m.tx_id) tracker.wake(m.tx_id);
          },
        }),
        connection.subscribeHubFeed({
          ...quiet,
          onMessage(m: HubFeedMessage) {
            const id = m.txID ?? m.TxID;
            if (typeof id === 'string' && id) tracker.wake(id);
          },
        }),
      ];
    }

    function leaveFeeds(): Promise<unknown> {
      const left = memberships;
      memberships = [];
      return Promise.allSettled(left.map((m) => m.leave()));
    }

    /** Follow `ctx`: the tracker, the feeds, the status. */
    function follow(ctx: Context, resume: boolean): void {
      live.set(ctx.id, ctx);
      joinFeeds();
      const t = tracker.track(
        ctx.record.target,
        ctx,
        resume ? { startedAt: ctx.record.startedAt, deadline: ctx.record.deadline, reads: ctx.record.reads, state: ctx.record.state } : undefined,
      );
      if (!resume) ctx.record = { ...ctx.record, startedAt: t.startedAt, deadline: t.deadline };
    }

    /**
     * At start: follow again every record still unreported (a restart, a redeploy), its msg rebuilt
     * from the stored copy with `msg.resumed = true`; its outcome leaves by `node.send` (errors by
     * `node.error(err, msg)`, so Catch nodes get them). Retried while the storage is away.
     */
    async function resume(): Promise<void> {
      const store = await storeReady;
      let records: TrackRecord[] | undefined;
      while (!records && !closed) {
        try {
          records = await store.load();
        } catch (e) {
          showError(node, e);
          await wait(REPORT_RETRY_MS);
        }
      }
      if (!records?.length || closed) return;
      client = await connection!.client();
      if (closed) return;
      for (const record of records) {
        if (live.has(record.id)) continue;
        const msg = { ...RED.util.cloneMessage(record.msg), resumed: true } as TrackMessage;
        if (typeof msg._msgid !== 'string') msg._msgid = RED.util.generateId();
        follow(
          {
            id: record.id,
            record,
            msg,
            resumed: true,
            send: (msgs) => node.send(msgs),
            done: (err) => {
              if (err) node.error(err, msg);
            },
          },
          true,
        );
      }
      showTracking();
    }
    if (!configError) {
      storeReady.then(resume, () => undefined).catch((err: Error) => {
        if (closed) return;
        showError(node, err);
        node.error(RED._('custody-track.errors.resume', { message: err.message }));
      });
    }

    /**
     * The target named by `msg`. @throws {ValidationError} naming `tx_id`, `kind`, `company_id` or
     * `client_id` when missing or unusable.
     */
    function resolveTarget(msg: TrackMessage): { kind: TransactionKind; tx_id: string; company_id?: string; client_id?: string } {
      const payload = isPlainObject(msg.payload) ? msg.payload : {};
      const trace: Partial<CustodyTrace> = isPlainObject(msg.custody) ? (msg.custody as CustodyTrace) : {};
      let kind: unknown = kindSetting;
      if (kindSetting === 'msg') {
        kind = text(msg.kind) ?? (trace.type ? KIND_BY_TRACE[`${trace.type}/${trace.operation}`] : undefined);
        if (kind === undefined) throw new ValidationError('kind', RED._('custody-track.errors.kindUnknown', { kinds: TRANSACTION_KINDS.join(', ') }));
      }
      if (!isTransactionKind(kind)) throw new ValidationError('kind', RED._('custody-track.errors.kindExpected', { kinds: TRANSACTION_KINDS.join(', '), kind: JSON.stringify(kind) }));
      const tx_id = text(payload.tx_id) ?? text(payload.txID);
      if (!tx_id) throw new ValidationError('tx_id', RED._('custody-track.errors.txIdRequired'));
      if (TRANSACTION_STATES[kind].owner === 'client_id') {
        const setting = editorClient();
        if (setting.error) throw setting.error;
        const client_id = setting.value ?? text(payload.client_id) ?? text(trace.client_id);
        if (!client_id) throw new ValidationError('client_id', RED._('custody-track.errors.clientIdRequired'));
        return { kind, tx_id, client_id };
      }
      const company_id = editorCompany ?? text(payload.company_id) ?? text(trace.company_id);
      if (!company_id) throw new ValidationError('company_id', RED._('custody-track.errors.companyIdRequired'));
      return { kind, tx_id, company_id };
    }

    node.on('input', (msg: NodeMessageInFlow, send: (m: Array<NodeMessageInFlow | null>) => void, done: (err?: Error) => void) => {
      const m = msg as TrackMessage;
      if (configError) return done(configError);
      let target: ReturnType<typeof resolveTarget>;
      try {
        target = resolveTarget(m);
      } catch (e) {
        delete m.statusCode;
        return done(e as Error);
      }
      Promise.all([connection!.client(), storeReady])
        .then(async ([c, store]) => {
          if (closed) return done();
          client = c;
          if (typeof m._msgid !== 'string' || !m._msgid) m._msgid = RED.util.generateId();
          let id = trackRecordId(target.tx_id, m._msgid);
          for (let n = 2; live.has(id); n++) id = trackRecordId(target.tx_id, `${m._msgid}.${n}`);
          const ids: Record<string, unknown> = { ...target };
          const now = Date.now();
          const record: TrackRecord = { id, target, msg: storableMsg(m as Record<string, unknown>, ids).msg, startedAt: now, deadline: now + UNKNOWN_EXPIRY_MS, reads: 0 };
          try {
            await store.put(record);
          } catch (e) {
            delete m.statusCode;
            const err = e as Error & { code?: string };
            const refused = Object.assign(new Error(RED._('custody-track.errors.notRecorded', { message: err.message })), { code: err.code ?? 'ESTORE' });
            showError(node, refused);
            return done(refused);
          }
          // Closed while writing: the record stays, the next start follows it (resumed).
          if (closed) return done();
          follow({ id, record, msg: m, resumed: false, send, done }, false);
          showTracking();
        })
        // The client, the store, or following it failed: the msg ends with the error (no unhandled rejection).
        .catch((err: Error) => {
          delete m.statusCode;
          showError(node, err);
          done(err);
        });
    });

    node.on('close', (removed: boolean, done: () => void) => {
      closed = true;
      closing.abort();
      tracker.close();
      for (const end of [...waits]) end();
      (async () => {
        // A report whose mark is being written finishes (and sends); the rest stay recorded for the next start.
        await Promise.allSettled([...reporting]);
        for (const ctx of live.values()) ctx.done();
        live.clear();
        await leaveFeeds();
        const store = await storeReady.catch(() => undefined);
        if (store) await (removed ? store.destroy() : store.close()).catch((err: Error) => node.warn(RED._('custody-track.errors.storeClose', { message: err.message })));
      })().finally(() => {
        node.status({});
        done();
      });
    });
  }

  RED.nodes.registerType('custody-track', TrackNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
