/**
 * `custody-review`: the durable queue of actions held for people (docs/nodes.md
 * "custody-review"). Input: the held output of `custody-approver` (or any msg whose payload has
 * `client_id` and `action_id`; `msg.decision.reasons` says why it was held), or a vote from a flow,
 * `msg.review = {action_id, decision, reason, reviewer}` (counted only with "allow flow votes",
 * recorded with `via: "flow"`). People vote in the editor's "Custody review" sidebar tab or through
 * the admin API (admin.ts). When a quorum of distinct approvers is reached the action is approved
 * (PUT `/coreclient/{client_id}/action/{action_id}`, spec section 4); a single reject rejects it
 * (DELETE); either call is made once, in the background (the vote answers at once), its unknown
 * outcome resolved (lib/review). Outputs: 1 approved, 2 rejected, 3 escalated (once, the margin
 * before the deadline), expired or decided elsewhere (the action approved, rejected or expired at
 * the API by someone else: nothing called); each msg
 * has `msg.payload` (the action's ids, type and details) and `msg.review` (its votes and the final
 * call). The queue lives in `<userDir>/custodyflow/review/<node id>.json` (or `$CUSTODYFLOW_REVIEW_DIR`), or in Redis when the
 * connection coordinates (docs/scale-out.md); the audit in `<userDir>/custodyflow-audit/<node id>.jsonl`.
 */
import path from 'node:path';
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { ConfigError } from '../../lib';
import type { QuorumBand, ReviewEvent, ReviewQueue, ReviewStore } from '../../lib/review';
import { reviewLib } from '../shared/services';
import { isPlainObject } from '../shared/input';
import { showError } from '../shared/status';
import { readSetting } from '../shared/typed-field';
import { auditFileOf, createConnectedNode, noConnectionError, userDirOf } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';
import { announce, hasAdminAuth, registerReviewRoutes, reviewNodes } from './admin';

/** Editor properties of `custody-review` (flows.json). */
interface ReviewDef extends ConnectedNodeDef {
  /** Core client id (its TypedInput type in `clientIdType`: str, env, global, flow; read at start); empty: `msg.payload.client_id`. */
  clientId?: string;
  clientIdType?: string;
  /** Distinct approvers needed, 1 to 5 (default 1). */
  approvers?: string | number;
  /** Amount bands, JSON `[{asset, from, approvers}]` (or the array). */
  bands?: unknown;
  /** Escalate this many seconds before the deadline (default 300; 0: never). */
  escalateMargin?: string | number;
  /** Count votes arriving as `msg.review` (default false). */
  allowFlowVotes?: boolean;
  /** Audit file path; empty: `<userDir>/custodyflow-audit/<node id>.jsonl`; relative: below the user directory. */
  auditFile?: string;
}

/** The port of each event. */
const PORT: Record<ReviewEvent['kind'], number | undefined> = { approved: 0, rejected: 1, escalated: 2, expired: 2, decidedElsewhere: 2, failed: undefined };

/** Longest wait at start for the coordination Redis before its store is used anyway (ms). */
const CONNECT_WAIT_MS = 10_000;

function parseBands(v: unknown): QuorumBand[] {
  if (v === undefined || v === null || v === '') return [];
  if (Array.isArray(v)) return v as QuorumBand[];
  try {
    const parsed = JSON.parse(String(v));
    if (Array.isArray(parsed)) return parsed as QuorumBand[];
  } catch {
    // below
  }
  throw new ConfigError(`bands: expected a JSON array [{"asset": "BTC", "from": "10", "approvers": 3}], got ${JSON.stringify(String(v)).slice(0, 60)}`);
}

export = function register(RED: NodeAPI): void {
  registerReviewRoutes(RED);

  function ReviewNode(this: Node, def: ReviewDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const clientIdSetting = readSetting(RED, node, def as unknown as Record<string, unknown>, 'clientId');
    const clientId = (clientIdSetting.value ?? '').trim();
    const allowFlowVotes = def.allowFlowVotes === true;
    const userDir = userDirOf(RED);
    const auditFile = auditFileOf(RED, node.id, def.auditFile);
    const closing = new AbortController();

    function emit(event: ReviewEvent): void {
      const r = event.review;
      const msg = {
        payload: { client_id: r.client_id, action_id: r.action_id, ...(r.type ? { type: r.type } : {}), details: r.details },
        review: { action_id: r.action_id, state: event.kind === 'escalated' ? 'escalated' : r.state, required: r.required, votes: r.votes, reasons: r.reasons, expireTime: r.expireTime, ...(r.final ? { final: r.final } : {}), ...(r.elsewhere ? { elsewhere: r.elsewhere } : {}) },
      };
      const port = PORT[event.kind];
      if (port === undefined) {
        node.error(RED._('custody-review.errors.failed', { action: r.action_id, why: event.why ?? '' }), msg);
        return;
      }
      const ports: Array<object | null> = [null, null, null];
      ports[port] = msg;
      node.send(ports as NodeMessageInFlow[]);
    }

    function showCount(queue: ReviewQueue): void {
      node.status({ fill: 'green', shape: 'dot', text: RED._('custody-review.status.open', { open: queue.openCount }) });
    }

    const ready: Promise<ReviewQueue> = (async () => {
      if (!connection) throw noConnectionError(RED);
      const { FileReviewStore, RedisReviewStore, ReviewQueue, maxApprovers, reviewStoreFile } = reviewLib();
      if (clientIdSetting.error) throw clientIdSetting.error;
      const approvers = Number(def.approvers ?? 1);
      const bands = parseBands(def.bands);
      const margin = def.escalateMargin === undefined || def.escalateMargin === '' ? 300 : Number(def.escalateMargin);
      if (!Number.isFinite(margin) || margin < 0) throw new ConfigError(`escalateMargin: ${RED._('custody-review.errors.margin', { value: JSON.stringify(def.escalateMargin) })}`);
      const rules = { approvers, bands };
      if (!hasAdminAuth(RED) && maxApprovers(rules) > 1) throw new ConfigError(`approvers: ${RED._('custody-review.errors.quorumWithoutLogin', { approvers: maxApprovers(rules) })}`);
      const coordinator = await connection.coordinator().catch((e: Error) => {
        throw new ConfigError(RED._('custody-review.errors.coordination', { message: e.message }));
      });
      let store: ReviewStore;
      if (coordinator) {
        const wait = AbortSignal.any([closing.signal, AbortSignal.timeout(CONNECT_WAIT_MS)]);
        await coordinator.whenReady(wait, false);
        store = new RedisReviewStore(coordinator, node.id);
      } else {
        store = await FileReviewStore.open(reviewStoreFile(process.env.CUSTODYFLOW_REVIEW_DIR || path.join(userDir, 'custodyflow', 'review'), node.id), node.id);
      }
      let queue: ReviewQueue | undefined;
      queue = await ReviewQueue.open({
        store,
        auditFile,
        // The chain's head through Node-RED's log (docs/audit.md "The head"): a cut tail or an edited last line shows against it.
        auditOptions: { onHead: (head) => node.log(RED._('custody-review.log.auditHead', { seq: head.seq, hash: head.hash, file: head.file, head: `${head.seq}:${head.hash}` })) },
        client: () => connection.client(),
        rules,
        escalateMarginMs: margin * 1000,
        reviewerNode: node.id,
        instance: coordinator?.instance ?? 'local',
        onEvent: emit,
        onChange: (change) => {
          announce(RED, change);
          if (queue) showCount(queue);
        },
      });
      return queue;
    })();
    reviewNodes.set(node.id, { id: node.id, name: (def as { name?: string }).name || '', queue: ready });
    ready.then(
      (queue) => {
        showCount(queue);
        announce(RED, { node: node.id, action_id: '', event: 'restored' });
      },
      (err: Error) => {
        showError(node, err);
        node.error(RED._('custody-review.errors.notReviewing', { message: err.message }));
      },
    );

    node.on('input', (msg: NodeMessageInFlow, _send: unknown, done: (err?: Error) => void) => {
      const m = msg as NodeMessageInFlow & { review?: unknown; decision?: { reasons?: unknown } };
      ready
        .then(async (queue) => {
          if (m.review !== undefined) {
            if (!isPlainObject(m.review)) throw new ConfigError(`msg.review: ${RED._('custody-review.errors.voteShape')}`);
            if (!allowFlowVotes) throw new ConfigError(`msg.review: ${RED._('custody-review.errors.flowVotesOff')}`);
            const v = m.review as Record<string, unknown>;
            try {
              await queue.vote(v.action_id, { decision: v.decision, reason: v.reason, reviewer: v.reviewer }, 'flow');
            } catch (e) {
              // A review closed because its action was decided elsewhere is not the flow's error: said, not thrown to Catch.
              if (!(e instanceof reviewLib().ReviewError && e.status === 409 && (await queue.get(String(v.action_id)).catch(() => undefined))?.state === 'decidedElsewhere')) throw e;
              node.warn(RED._('custody-review.errors.decidedElsewhere', { action: String(v.action_id), message: e.message }));
            }
            return;
          }
          const payload = isPlainObject(msg.payload) ? (msg.payload as Record<string, unknown>) : {};
          const reasons = isPlainObject(m.decision) && Array.isArray(m.decision.reasons) ? m.decision.reasons : [];
          await queue.add({ ...payload, ...(clientId ? { client_id: clientId } : {}), reasons });
        })
        .then(
          () => done(),
          (err: Error) => {
            if (!(err as { status?: number }).status) showError(node, err);
            done(err);
          },
        );
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      closing.abort();
      if (reviewNodes.get(node.id)?.queue === ready) reviewNodes.delete(node.id);
      ready
        .then((queue) => queue.close(), () => undefined)
        .catch((err: Error) => node.warn(RED._('custody-review.errors.closing', { message: err.message })))
        .finally(() => {
          announce(RED, { node: node.id, action_id: '', event: 'restored' });
          node.status({});
          done();
        });
    });
  }

  RED.nodes.registerType('custody-review', ReviewNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
