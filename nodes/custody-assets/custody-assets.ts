/**
 * `custody-assets`: the `assets` operations of spec section 4 (see `lib/api/v1`), one per
 * `operation` value. Editor fields (TypedInputs, nodes/shared/editor-table.ts): feeType (the fee
 * request's `type`), asset, amount; any of them left empty is read from `msg.payload`, with every
 * other request field. With Amounts "decimal" the fee quote's answer also carries its amounts in
 * whole units of the asset (`netAmount_decimal`, `amountToSend_decimal`, `fees_decimal`, lib
 * `feeQuoteInDecimals`) beside the base units fields.
 */
import type { NodeAPI } from 'node-red';
import { feeQuoteInDecimals, type FeeQuote } from '../../lib';
import { registerOperationNode } from '../shared/operation-node';

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, {
    type: 'custody-assets',
    answers: {
      fee: (data, input, { amountFormat, client }) => (amountFormat === 'decimal' ? feeQuoteInDecimals(client, String(input.asset), data as FeeQuote) : data),
    },
  });
};
