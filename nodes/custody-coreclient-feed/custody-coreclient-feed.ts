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
import { getAction, Action, FeedState } from '../../lib';
import { showFeedState, showError } from '../shared/status';
import type { CustodyConfigNode, FeedMembership } from '../shared/types';

/** Editor properties of `custody-coreclient-feed`. */
interface FeedDef extends NodeDef {
  connection: string;
  clientId: string;
  /** Read each action's details (GET /coreclient/{client_id}/action/{action_id}) before sending it. */
  details?: boolean;
}

export = function register(RED: NodeAPI): void {
  function CoreClientFeedNode(this: Node, def: FeedDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const connection = RED.nodes.getNode(def.connection) as CustodyConfigNode | null;
    const clientId = (def.clientId || '').trim();
    const withDetails = def.details !== false;
    let membership: FeedMembership | undefined;

    if (!connection || !clientId) {
      showError(node, new Error(!connection ? 'connection: no custody-config node selected' : 'clientId: required'));
      return;
    }

    function emit(action: Action): void {
      const payload = { ...action, client_id: clientId, action_id: action.id };
      node.send({ topic: String(action.type), payload } as NodeMessage);
    }

    membership = connection.subscribeFeed(clientId, {
      onAction(action: Action) {
        if (!withDetails) return emit(action);
        connection
          .client()
          .then((client) => getAction(client, { client_id: clientId, action_id: action.id }))
          .then(
            (res) => emit({ ...action, ...res.data }),
            (err: Error) => {
              // Not sent: let the next catch-up (after a reconnect) bring it back while it is pending.
              membership?.forget(action.id);
              node.error(`action ${action.id}: details could not be read: ${err.message}`, { payload: { ...action, client_id: clientId, action_id: action.id } });
            },
          );
      },
      onState(state: FeedState) {
        showFeedState(node, state);
      },
      onUnusable(err: Error) {
        showError(node, err);
      },
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      const m = membership;
      membership = undefined;
      (m ? m.leave() : Promise.resolve()).finally(() => {
        node.status({});
        done();
      });
    });
  }

  RED.nodes.registerType('custody-coreclient-feed', CoreClientFeedNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
