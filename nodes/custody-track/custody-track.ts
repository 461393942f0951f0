/**
 * `custody-track`: follows a transfer, withdrawal, swap (make or take) or sweep to its final state
 * (spec section 3; the table is lib/v1/states.ts) and sends the final answer once.
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
 * One lib {@link Tracker} (one timer) per node; while anything is tracked the node is a member of
 * the config node's wallets feed and liquidity hub feed and wakes the matching transaction.
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import {
  ApiError,
  ConfigError,
  ValidationError,
  Tracker,
  TRANSACTION_KINDS,
  TRANSACTION_STATES,
  isTransactionKind,
  readTransaction,
  type CustodyClient,
  type HubFeedMessage,
  type TransactionKind,
  type TransactionRead,
  type Tracked,
  type WalletFeedMessage,
} from '../../lib';
import { editorSeconds, isPlainObject } from '../shared/input';
import { showError } from '../shared/status';
import type { CustodyMessage, CustodyTrace, FeedMembership } from '../shared/types';
import { createConnectedNode, noConnectionError, type ConnectedNodeDef } from '../shared/node-setup';

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

type TrackMessage = CustodyMessage & { track?: TrackInfo; kind?: unknown };

/** What the tracker keeps per msg. */
interface Context {
  msg: TrackMessage;
  send: (msgs: Array<NodeMessageInFlow | null>) => void;
  done: (err?: Error) => void;
}

/** The string `v` trimmed, or undefined when empty or not a string. */
function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

export = function register(RED: NodeAPI): void {
  function TrackNode(this: Node, def: TrackDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const sendProgress = def.progress === true || (def.progress as unknown) === 'true';
    const editorCompany = text(def.company_id);
    const editorClient = text(def.client_id);
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

    const tracker = new Tracker<Context>(
      (target) => readTransaction(client!, target.kind, target),
      {
        progress(t, read) {
          if (!sendProgress) return;
          const copy = RED.util.cloneMessage(t.context.msg) as TrackMessage;
          copy.payload = read.answer;
          copy.statusCode = read.statusCode;
          copy.track = info(t, read.final, false);
          t.context.send([null, copy]);
        },
        final(t, read) {
          const msg = t.context.msg;
          msg.payload = read.answer;
          msg.statusCode = read.statusCode;
          msg.track = { ...info(t, true, false), finishedAt: Date.now() };
          lastFinal = read.status;
          finish();
          t.context.send([msg, null]);
          t.context.done();
        },
        timedOut(t) {
          const msg = t.context.msg;
          if (t.last) {
            msg.payload = t.last.answer;
            msg.statusCode = t.last.statusCode;
          }
          msg.track = { ...info(t, false, true), finishedAt: Date.now() };
          lastFinal = t.state === undefined ? RED._('custody-track.status.timedOutNoAnswer') : RED._('custody-track.status.timedOut', { state: t.state });
          finish();
          t.context.send([msg, null]);
          t.context.done();
        },
        error(t, err) {
          const msg = t.context.msg;
          if (err instanceof ApiError && err.statusCode > 0) msg.statusCode = err.statusCode;
          else delete msg.statusCode;
          msg.track = { ...info(t, false, false), finishedAt: Date.now() };
          finish(err);
          t.context.done(err);
        },
      },
      { firstDelayMs: firstDelay * 1000, maxDelayMs: maxDelay * 1000, marginMs: margin * 1000 },
    );

    if (configError) showError(node, configError);
    else node.status({});

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
      if (err) showError(node, err);
      if (tracker.size === 0) {
        leaveFeeds();
        if (!err) node.status({ fill: 'green', shape: 'dot', text: RED._('custody-track.status.final', { state: String(lastFinal), time: new Date().toLocaleTimeString() }) });
      } else if (!err) showTracking();
    }

    function showTracking(): void {
      node.status({ fill: 'blue', shape: 'dot', text: RED._('custody-track.status.tracking', { tracked: tracker.size }) });
    }

    /** Wake on a feed message naming a followed transaction. */
    function joinFeeds(): void {
      if (memberships.length || !connection) return;
      const quiet = { onState() {}, onUnusable() {} };
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
        const client_id = editorClient ?? text(payload.client_id) ?? text(trace.client_id);
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
      connection!.client().then(
        (c) => {
          if (closed) return done();
          client = c;
          joinFeeds();
          tracker.track(target, { msg: m, send, done });
          showTracking();
        },
        (err: Error) => {
          delete m.statusCode;
          showError(node, err);
          done(err);
        },
      );
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      closed = true;
      tracker.close();
      leaveFeeds().finally(() => {
        node.status({});
        done();
      });
    });
  }

  RED.nodes.registerType('custody-track', TrackNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
