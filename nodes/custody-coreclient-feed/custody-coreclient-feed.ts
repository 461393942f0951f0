/**
 * `custody-coreclient-feed`: an input node that sends one msg per pending action of a core
 * client (spec section 6, core client feed). The websocket is owned by the `custody-config`
 * node and shared by every feed node with the same `clientId`; it reconnects by itself and
 * catches up through GET /coreclient/{client_id}/actions (see lib `CoreClientFeed`).
 *
 * Redelivery: the node remembers, durably, which action ids it has sent
 * (lib/feeds/sent-ids.ts, one file per node and core client in
 * `<userDir>/custodyflow/feed`, see `memoryDir`). Each action is recorded on disk before its msg is
 * sent; an action already recorded (sent by an earlier instance of this node: before a redeploy, a
 * restart or a crash) is sent again with `msg.redelivered = true`. So every action is delivered at
 * least once and never twice unmarked. A crash between the record and the send marks the first
 * delivery as a redelivery: the safe side.
 *
 * Output: `msg.payload` = the action (`id`, `type`, `status`, `timestamp`, `expireTime`,
 * `coreClientID`, and `details` when the `details` option is on) plus `client_id` and
 * `action_id`, the path ids a `custody-action` node reads; `msg.topic` = the action type;
 * `msg.redelivered` = true when this node sent the action before (absent otherwise).
 */
import os from 'node:os';
import path from 'node:path';
import type { NodeAPI, Node, NodeMessage } from 'node-red';
import { getPendingAction, Action } from '../../lib';
import type { SentIds, ActionListing } from '../../lib/feeds';
import { feedsLib } from '../shared/services';
import { showError } from '../shared/status';
import { readSetting } from '../shared/typed-field';
import { joinSharedFeed } from '../shared/feed-node';
import { createConnectedNode, noConnectionError } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';

/** Editor properties of `custody-coreclient-feed`. */
interface FeedDef extends ConnectedNodeDef {
  clientId: string;
  /** Read each action's details (GET /coreclient/{client_id}/action/{action_id}) before sending it. */
  details?: boolean;
}

/** First delay before reading a failed action's details again (ms); tripled per attempt. */
const DETAILS_RETRY_FIRST_MS = 5000;
/** Longest delay between those attempts (ms). */
const DETAILS_RETRY_MAX_MS = 120000;

/**
 * Where the feed nodes keep their memory of the actions sent: `$CUSTODYFLOW_FEED_DIR`, else
 * `<userDir>/custodyflow/feed`, else a folder in the OS temp dir (as the submission journal's
 * `CUSTODYFLOW_JOURNAL_DIR`). A file per feed node and core client (lib `sentIdsFile`).
 */
function memoryDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_FEED_DIR || path.join(userDir || os.tmpdir(), 'custodyflow', 'feed');
}

export = function register(RED: NodeAPI): void {
  function CoreClientFeedNode(this: Node, def: FeedDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const clientIdSetting = readSetting(RED, node, def as unknown as Record<string, unknown>, 'clientId');
    const clientId = clientIdSetting.value ?? '';
    const withDetails = def.details !== false;
    /** False once the node is closing: no more retries of details reads, no more sends. */
    let running = true;
    const retries = new Set<NodeJS.Timeout>();

    if (!connection || !clientId) {
      showError(node, !connection ? noConnectionError(RED) : (clientIdSetting.error ?? new Error(`clientId: ${RED._('custody-coreclient-feed.errors.clientIdRequired')}`)));
      return;
    }

    // The approvers it sends to learn their core client from it (one approver per core client: custody-approver).
    const route = connection.routeFeed(clientId, ((def as { wires?: string[][] }).wires ?? []).flat());
    const { SentIds, sentIdsFile, removeSentIdsFiles } = feedsLib();
    const memoryFolder = memoryDir((RED.settings as { userDir?: string }).userDir);
    const memoryFile = sentIdsFile(memoryFolder, node.id, clientId);
    /** Set once the memory file failed (opening or writing): shown in the status, warned once. */
    let memoryProblem: string | undefined;
    let status: { refresh(): void } | undefined;
    function memoryFailed(err: Error & { code?: string }): void {
      if (memoryProblem) return;
      memoryProblem = err.code ? RED._('custody-coreclient-feed.status.memoryFailedCode', { code: err.code }) : RED._('custody-coreclient-feed.status.memoryFailed');
      node.warn(RED._('custody-coreclient-feed.errors.memoryFailed', { file: memoryFile, message: err.message }));
      status?.refresh();
    }
    const onCompactionError = (err: Error): void => node.warn(RED._('custody-coreclient-feed.errors.compactionFailed', { file: memoryFile, message: err.message }));
    const memory: Promise<SentIds> = SentIds.open(memoryFile, { onCompactionError }).catch((err: Error) => {
      memoryFailed(err);
      return SentIds.detached({ onCompactionError });
    });
    /** Sends waiting for their record (awaited by close). */
    const inFlight = new Set<Promise<void>>();

    /**
     * Send `action`, once per node instance: record it on disk first (an id recorded before, by an
     * earlier instance, goes out with `msg.redelivered = true`). A closing node sends nothing more.
     */
    async function deliver(action: Action): Promise<void> {
      const sent = await memory;
      if (!running || sent.sentHere(action.id)) return;
      const redelivered = sent.has(action.id);
      try {
        await sent.markSent(action);
      } catch (err) {
        memoryFailed(err as Error); // sent all the same: at least once
      }
      if (!running) return; // recorded but not sent: its next delivery is marked, the safe side
      const payload = { ...action, client_id: clientId, action_id: action.id };
      node.send({ topic: String(action.type), payload, ...(redelivered ? { redelivered: true } : {}) } as NodeMessage);
    }

    function emit(action: Action): void {
      const p = deliver(action).catch((err: Error) => node.error(RED._('custody-coreclient-feed.errors.action', { id: action.id, message: err.message })));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }

    /** Forget the ids a catch-up listing shows are no longer pending. */
    function prune(listing: ActionListing): void {
      memory
        .then((sent) => (running ? sent.prune(listing) : 0))
        .catch(onCompactionError);
    }

    /**
     * Read an action's details and send it. After a failed read (the client has already retried
     * timeouts and 5xx), try again later, for this node only, while the action is pending and
     * the node runs: a passing failure must not leave a transfer waiting for nobody.
     */
    function sendWithDetails(action: Action, attempt: number): void {
      connection!
        .client()
        .then((client) => getPendingAction(client, { client_id: clientId, action_id: action.id }))
        .then(
          (pending) => {
            if (pending) emit({ ...action, ...pending });
            else if (attempt > 0) node.warn(RED._('custody-coreclient-feed.errors.noLongerPending', { id: action.id }));
          },
          (err: Error) => {
            const payload = { ...action, client_id: clientId, action_id: action.id };
            if (attempt === 0) node.error(RED._('custody-coreclient-feed.errors.detailsFailed', { id: action.id, message: err.message }), { payload });
            else node.warn(RED._('custody-coreclient-feed.errors.detailsFailedAgain', { id: action.id, attempt: attempt + 1, message: err.message }));
            const delayMs = Math.min(DETAILS_RETRY_MAX_MS, DETAILS_RETRY_FIRST_MS * 3 ** attempt);
            const expired = Number(action.expireTime) > 0 && Date.now() + delayMs > Number(action.expireTime) * 1000;
            if (expired || !running) return;
            const timer = setTimeout(() => {
              retries.delete(timer);
              if (running) sendWithDetails(action, attempt + 1);
            }, delayMs);
            retries.add(timer);
          },
        );
    }

    status = joinSharedFeed(
      RED,
      node,
      (callbacks) =>
        connection.subscribeFeed(clientId, {
          ...callbacks,
          onAction(action: Action) {
            if (withDetails) sendWithDetails(action, 0);
            else emit(action);
          },
          onListing: prune,
        }),
      {
        onClose() {
          running = false;
          void route.leave();
          retries.forEach((t) => clearTimeout(t));
          retries.clear();
        },
        async release(removed: boolean) {
          await Promise.allSettled(inFlight);
          await (await memory).close();
          // Deleted from the flows: its memory goes too (the files of earlier core client ids as well).
          if (removed) await removeSentIdsFiles(memoryFolder, node.id);
        },
        note: () => memoryProblem,
      },
    );
  }

  RED.nodes.registerType('custody-coreclient-feed', CoreClientFeedNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
