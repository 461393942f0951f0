/**
 * The liquidity hub: published swap quotes of the API account (spec section 2 "Liquidity hub
 * item", section 4 "Atomic swaps and liquidity hub"; OpenAPI `/company/{company_id}/liquidityhub`).
 */
import { W, anyObjectSchema, type Wire } from '../wire';
import { objectSchema, listSchema, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S } from '../spec';

/**
 * A liquidity hub item (spec section 2 "Liquidity hub item"), all fields required: `tx_id`,
 * `send_asset`, `send_amount`, `receive_asset`, `receive_amount` (base units), `owner` (true when
 * the quote belongs to the queried company), `expires` and `added` (epoch seconds).
 */
export const liquidityHubItemSchema = objectSchema(['tx_id', 'send_asset', 'send_amount', 'receive_asset', 'receive_amount', 'owner', 'expires', 'added'], {
  tx_id: W.id,
  send_asset: W.id,
  send_amount: W.unsignedBaseUnits,
  receive_asset: W.id,
  receive_amount: W.unsignedBaseUnits,
  owner: W.boolean,
  expires: W.epochSeconds,
  added: W.epochSeconds,
});

/** A liquidity hub item ({@link liquidityHubItemSchema}). */
export type LiquidityHubItem = Wire<typeof liquidityHubItemSchema>;

/**
 * GET /company/{company_id}/liquidityhub answer: `items[]` (spec section 4; the OpenAPI
 * LiquidityHub types `items` as one object, the spec's array rules).
 */
export const liquidityHubListSchema = listSchema('items', liquidityHubItemSchema);

/** GET /company/{company_id}/liquidityhub answer ({@link liquidityHubListSchema}). */
export type LiquidityHubList = Wire<typeof liquidityHubListSchema>;

/** Operation declarations of this group, by id. */
export const liquidityHubOperations = {
  // Spec section 4: "HTTP 200", no body shown (OpenAPI: schema {}).
  publish: operation('POST', '/company/{company_id}/liquidityhub', 'spec section 4, POST /company/{company_id}/liquidityhub (tx_id of an approved quote)', answers(anyObjectSchema), { body: { type: 'object', required: ['tx_id'], properties: { tx_id: S.id } } }),
  list: readOperation('/company/{company_id}/liquidityhub', 'spec section 4, GET /company/{company_id}/liquidityhub', liquidityHubListSchema),
  // Spec section 4: "HTTP 200", no body shown (not in the OpenAPI).
  approveTake: operation('PUT', '/company/{company_id}/action/{action_id}', "spec section 4, PUT /company/{company_id}/action/{action_id} (approves the taker's swap action)", answers(anyObjectSchema)),
} satisfies Record<string, OperationSpec>;
