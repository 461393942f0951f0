/**
 * `custody-hub-feed`: an input node that sends one msg per swap quote newly published to the
 * liquidity hub (spec section 6, liquidity hub feed). The websocket is owned by the
 * `custody-config` node and shared by every hub feed node of that connection; it reconnects by
 * itself but has no catch-up (see lib `HubFeed`): quotes published while it was disconnected
 * are not sent.
 *
 * Output: `msg.payload` = the feed message as received, `{txID, status}` (NOTES.md) or
 * `{TxID, Status}` (spec section 6), status e.g. `taker_pending`; `msg.topic` = `liquidityhub`.
 */
import type { NodeAPI, Node, NodeDef, NodeMessage } from 'node-red';
import type { HubFeedMessage } from '../../lib';
import { showError } from '../shared/status';
import { joinSharedFeed } from '../shared/feed-node';
import type { CustodyConfigNode } from '../shared/types';

/** Editor properties of `custody-hub-feed`. */
interface HubFeedDef extends NodeDef {
  connection: string;
}

export = function register(RED: NodeAPI): void {
  function HubFeedNode(this: Node, def: HubFeedDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const connection = RED.nodes.getNode(def.connection) as CustodyConfigNode | null;

    if (!connection) {
      showError(node, new Error(`connection: ${RED._('common.errors.noConnection')}`));
      return;
    }

    joinSharedFeed(RED, node, (status) =>
      connection.subscribeHubFeed({
        ...status,
        onMessage(message: HubFeedMessage) {
          node.send({ topic: 'liquidityhub', payload: message } as NodeMessage);
        },
      }),
    );
  }

  RED.nodes.registerType('custody-hub-feed', HubFeedNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
