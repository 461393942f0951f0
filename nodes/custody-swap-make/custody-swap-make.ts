/**
 * `custody-swap-make`: the `swapMake` operations of spec section 4 (see `lib/api/v1`), one per `operation` value.
 * Editor fields: company_id, send_wallet_id, receive_wallet_id, tx_id; any of them left empty is read from `msg.payload`, with every other
 * request field.
 */
import type { NodeAPI } from 'node-red';
import { registerOperationNode } from '../shared/operation-node';

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, { type: 'custody-swap-make' });
};
