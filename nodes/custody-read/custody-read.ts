/**
 * `custody-read`: the `read` operations of spec section 4 (see `lib/api/v1`), one per `operation` value.
 * Editor fields: fund_id, wallet_id, direction; any of them left empty is read from `msg.payload`, with every other
 * request field.
 */
import type { NodeAPI } from 'node-red';
import { registerOperationNode } from '../shared/operation-node';

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, { type: 'custody-read' });
};
