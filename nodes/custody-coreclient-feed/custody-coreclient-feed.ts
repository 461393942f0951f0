/**
 * `custody-coreclient-feed`: an input node that sends one msg per pending action of a core
 * client (spec section 6, core client feed). The websocket is owned by the `custody-config`
 * node and shared by every feed node with the same `clientId`; it reconnects by itself and
 * catches up through GET /coreclient/{client_id}/actions (see lib `CoreClientFeed`).
 *
 * Output: `msg.payload` = the action (`id`, `type`, `status`, `timestamp`, `expireTime`,
 * `coreClientID`, and `details` when the `details` option is on) plus `client_id` and
 * `action_id`, the path ids a `custody-action` node reads; `msg.topic` = the action type.
 */
import type { NodeAPI, Node, NodeDef, NodeMessage } from 'node-red';
import { getPendingAction, Action } from '../../lib';
import { showError } from '../shared/status';
import { joinSharedFeed } from '../shared/feed-node';
import type { CustodyConfigNode } from '../shared/types';

/** Editor properties of `custody-coreclient-feed`. */
interface FeedDef extends NodeDef {
  connection: string;
  clientId: string;
  /** Read each action's details (GET /coreclient/{client_id}/action/{action_id}) before sending it. */
  details?: boolean;
}

/** First delay before reading a failed action's details again (ms); tripled per attempt. */
const DETAILS_RETRY_FIRST_MS = 5000;
/** Longest delay between those attempts (ms). */
const DETAILS_RETRY_MAX_MS = 120000;

export = function register(RED: NodeAPI): void {
  function CoreClientFeedNode(this: Node, def: FeedDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const connection = RED.nodes.getNode(def.connection) as CustodyConfigNode | null;
    const clientId = (def.clientId || '').trim();
    const withDetails = def.details !== false;
    /** False once the node is closing: no more retries of details reads. */
    let running = true;
    const retries = new Set<NodeJS.Timeout>();

    if (!connection || !clientId) {
      showError(node, new Error(!connection ? 'connection: no custody-config node selected' : 'clientId: required'));
      return;
    }

    function emit(action: Action): void {
      const payload = { ...action, client_id: clientId, action_id: action.id };
      node.send({ topic: String(action.type), payload } as NodeMessage);
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
            else if (attempt > 0) node.warn(`action ${action.id} is no longer pending: not sent`);
          },
          (err: Error) => {
            const payload = { ...action, client_id: clientId, action_id: action.id };
            if (attempt === 0) node.error(`action ${action.id}: details could not be read: ${err.message}; trying again`, { payload });
            else node.warn(`action ${action.id}: details could not be read (attempt ${attempt + 1}): ${err.message}`);
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

    joinSharedFeed(
      node,
      (status) =>
        connection.subscribeFeed(clientId, {
          ...status,
          onAction(action: Action) {
            if (withDetails) sendWithDetails(action, 0);
            else emit(action);
          },
        }),
      () => {
        running = false;
        retries.forEach((t) => clearTimeout(t));
        retries.clear();
      },
    );
  }

  RED.nodes.registerType('custody-coreclient-feed', CoreClientFeedNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
