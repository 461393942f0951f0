/**
 * `custody-wallets-feed`: an input node that sends one msg per wallet transaction of the
 * connection's API key (spec section 6, wallets feed; the spec does not show the shape: it is
 * the one observed on the real service, docs/nodes.md "The liquidity hub and wallets feeds").
 * The websocket is owned by the `custody-config` node and shared by every wallets feed node of
 * that connection; it reconnects by itself but has no catch-up (see lib `WalletsFeed`).
 *
 * Output: `msg.payload` = the feed message `{Status, amount, asset, chain_tx_id, fee,
 * net_amount, sweep_tx, timestamp, tx_id, wallet_id}` as received (amounts in base units,
 * negative for outgoing; timestamp epoch seconds); `msg.topic` = its `wallet_id`. With the
 * optional `walletId` property set, only messages of that wallet are sent.
 */
import type { NodeAPI, Node, NodeMessage } from 'node-red';
import type { WalletFeedMessage } from '../../lib';
import { joinConnectionFeed } from '../shared/feed-node';
import { createConnectedNode } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';

/** Editor properties of `custody-wallets-feed`. */
interface WalletsFeedDef extends ConnectedNodeDef {
  /** Optional: send only the transactions of this wallet id (compared with the message's `wallet_id`). */
  walletId?: string;
}

export = function register(RED: NodeAPI): void {
  function WalletsFeedNode(this: Node, def: WalletsFeedDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const walletId = (def.walletId || '').trim();

    joinConnectionFeed(RED, node, connection, (c, status) =>
      c.subscribeWalletsFeed({
        ...status,
        onMessage(message: WalletFeedMessage) {
          if (walletId && message.wallet_id !== walletId) return;
          node.send({ topic: message.wallet_id, payload: message } as NodeMessage);
        },
      }),
    );
  }

  RED.nodes.registerType('custody-wallets-feed', WalletsFeedNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
