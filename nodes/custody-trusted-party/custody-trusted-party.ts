/**
 * `custody-trusted-party`: the `trustedParty` operations of spec section 4 (see `lib/api/v1`), one per
 * `operation` value. Editor fields (TypedInputs, nodes/shared/editor-table.ts): company_id,trustedparty_id; any of them left empty is
 * read from `msg.payload`, with every other request field.
 */
import type { NodeAPI } from 'node-red';
import { registerOperationNode } from '../shared/operation-node';

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, { type: 'custody-trusted-party' });
};
