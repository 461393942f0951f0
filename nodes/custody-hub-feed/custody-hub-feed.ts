/**
 * `custody-hub-feed`: an input node that sends one msg per swap quote newly published to the
 * liquidity hub (spec section 6, liquidity hub feed). The websocket is owned by the
 * `custody-config` node and shared by every hub feed node of that connection; it reconnects by
 * itself but has no catch-up (see lib `HubFeed`): quotes published while it was disconnected
 * are not sent.
 *
 * Output: `msg.payload` = the feed message as received, `{txID, status}` (observed on
 * the real service, docs/nodes.md "The liquidity hub and wallets feeds") or
 * `{TxID, Status}` (spec section 6), status e.g. `taker_pending`; `msg.topic` = `liquidityhub`.
 */
import type { NodeAPI, Node, NodeMessage } from 'node-red';
import type { HubFeedMessage } from '../../lib';
import { joinConnectionFeed } from '../shared/feed-node';
import { createConnectedNode } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';

/** Editor properties of `custody-hub-feed`: its connection only. */
type HubFeedDef = ConnectedNodeDef;

export = function register(RED: NodeAPI): void {
  function HubFeedNode(this: Node, def: HubFeedDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;

    joinConnectionFeed(RED, node, connection, (c, status) =>
      c.subscribeHubFeed({
        ...status,
        onMessage(message: HubFeedMessage) {
          node.send({ topic: 'liquidityhub', payload: message } as NodeMessage);
        },
      }),
    );
  }

  RED.nodes.registerType('custody-hub-feed', HubFeedNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
