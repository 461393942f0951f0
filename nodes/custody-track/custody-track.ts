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
 * `msg.track` = lib/tracking `TrackInfo`; on timeout the same output with `timedOut: true`,
 * `final: false`. Output 2 (progress, when enabled): a copy of the msg per status change.
 * `done()` is called when tracking of the msg ends (final or timed out); a read that fails for
 * good (4xx such as 404) ends it with `done(err)` so Catch nodes get it with `msg.statusCode` set.
 *
 * The orchestration is lib/tracking's {@link TrackService} (one per node): the records that survive
 * restarts (docs/nodes.md "custody-track", "Across restarts": `<userDir>/custodyflow/track/<node id>.jsonl`
 * or `$CUSTODYFLOW_TRACK_DIR`, or Redis when the connection coordinates), "mark reported, then
 * send", the deadline and the feeds' wake-ups. This file is the Node-RED glue: the editor
 * properties, the catalog's texts, status, send, done and close; resumed msgs (`msg.resumed = true`)
 * leave by `node.send`, their errors by `node.error(err, msg)`.
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { ConfigError, TRANSACTION_KINDS, isTransactionKind, type TransactionKind } from '../../lib';
import type { TrackMessage, TrackService, TrackStatus } from '../../lib/tracking';
import { trackingLib } from '../shared/services';
import { editorHours, editorSeconds } from '../shared/input';
import { showError } from '../shared/status';
import { readSetting } from '../shared/typed-field';
import { createConnectedNode, noConnectionError } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';

/** Editor properties of `custody-track`; times in seconds. */
interface TrackDef extends ConnectedNodeDef {
  /** A `TransactionKind`, or `msg` (from `msg.custody` / `msg.kind`). */
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
  /** How long a reported final answer is remembered (a report is never sent twice meanwhile), hours; default 24. */
  keepReported?: string | number;
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

/** The string `v` trimmed, or undefined when empty or not a string. */
function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

export = function register(RED: NodeAPI): void {
  function TrackNode(this: Node, def: TrackDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const kindSetting = text(def.kind) ?? 'msg';

    let service: TrackService | undefined;
    let configError: Error | undefined;
    try {
      const firstDelay = editorSeconds(RED, def.firstDelay, 'firstDelay', 1, 0);
      const maxDelay = editorSeconds(RED, def.maxDelay, 'maxDelay', 30, 0.001);
      const margin = editorSeconds(RED, def.margin, 'margin', 60, 0);
      const keepReported = editorHours(RED, def.keepReported, 'keepReported', 24, 0);
      if (kindSetting !== 'msg' && !isTransactionKind(kindSetting)) throw new ConfigError(`kind: ${RED._('custody-track.errors.kindSetting', { kinds: TRANSACTION_KINDS.join(', '), kind: JSON.stringify(kindSetting) })}`);
      if (!connection) throw noConnectionError(RED);
      const { TrackService, trackFolder } = trackingLib();
      service = new TrackService({
        nodeId: node.id,
        folder: trackFolder((RED.settings as { userDir?: string }).userDir),
        coordinator: () => connection.coordinator(),
        client: () => connection.client(),
        kind: kindSetting,
        traceKind: (type, operation) => KIND_BY_TRACE[`${type}/${operation}`],
        companyId: text(def.company_id),
        // Read per msg (a flow or global value may change); an error refuses the msgs that need it.
        clientId: () => readSetting(RED, node, def as unknown as Record<string, unknown>, 'client_id'),
        progress: def.progress === true || (def.progress as unknown) === 'true',
        firstDelayMs: firstDelay * 1000,
        maxDelayMs: maxDelay * 1000,
        marginMs: margin * 1000,
        keepReportedMs: keepReported * 3_600_000,
        joinFeeds(on) {
          const quiet = { onHealth() {} };
          const memberships = [connection.subscribeWalletsFeed({ ...quiet, onMessage: on.wallets }), connection.subscribeHubFeed({ ...quiet, onMessage: on.hub })];
          return () => Promise.allSettled(memberships.map((m) => m.leave()));
        },
        util: RED.util,
        texts: {
          kindUnknown: (kinds) => RED._('custody-track.errors.kindUnknown', { kinds }),
          kindExpected: (kinds, kind) => RED._('custody-track.errors.kindExpected', { kinds, kind }),
          txIdRequired: () => RED._('custody-track.errors.txIdRequired'),
          clientIdRequired: () => RED._('custody-track.errors.clientIdRequired'),
          companyIdRequired: () => RED._('custody-track.errors.companyIdRequired'),
          notRecorded: (message) => RED._('custody-track.errors.notRecorded', { message }),
        },
        send: (msgs) => node.send(msgs as unknown as NodeMessageInFlow[]),
        error: (err, msg) => node.error(err, msg),
        onStatus: showStatus,
        onProblem({ kind, error }) {
          const message = error.message;
          if (kind === 'storeOpen') node.error(RED._('custody-track.errors.storeOpen', { message }));
          else if (kind === 'resume') node.error(RED._('custody-track.errors.resume', { message }));
          else if (kind === 'progressWrite') node.warn(RED._('custody-track.errors.progressWrite', { message }));
          else node.warn(RED._('custody-track.errors.storeClose', { message }));
        },
      });
    } catch (e) {
      configError = e as Error;
    }
    if (configError) showError(node, configError);
    else node.status({});

    /** The node's status for the service's. */
    function showStatus(status: TrackStatus): void {
      if (status.state === 'error') return showError(node, status.error);
      if (status.state === 'tracking') {
        const { tracked, resumed } = status;
        const shown = resumed ? RED._('custody-track.status.trackingResumed', { tracked, resumed }) : RED._('custody-track.status.tracking', { tracked });
        return node.status({ fill: 'blue', shape: 'dot', text: shown });
      }
      const last = status.last;
      let state = last?.state;
      if (last?.outcome === 'timedOut') state = last.state === undefined ? RED._('custody-track.status.timedOutNoAnswer') : RED._('custody-track.status.timedOut', { state: last.state });
      node.status({ fill: 'green', shape: 'dot', text: RED._('custody-track.status.final', { state: String(state), time: new Date().toLocaleTimeString() }) });
    }

    node.on('input', (msg: NodeMessageInFlow, send: (m: Array<NodeMessageInFlow | null>) => void, done: (err?: Error) => void) => {
      if (!service) return done(configError);
      service.input(msg as unknown as TrackMessage, (msgs) => send(msgs as unknown as Array<NodeMessageInFlow | null>), done);
    });

    node.on('close', (removed: boolean, done: () => void) => {
      void (service ? service.close(removed) : Promise.resolve()).finally(() => {
        node.status({});
        done();
      });
    });
  }

  RED.nodes.registerType('custody-track', TrackNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
