/**
 * The liquidity hub: published swap quotes of the API account (spec section 2 "Liquidity hub
 * item", section 4 "Atomic swaps and liquidity hub"; OpenAPI `/company/{company_id}/liquidityhub`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec, S } from '../operation';
import type { OkBody } from './trusted-party';

/** A liquidity hub item (spec section 2); amounts in base units, times epoch seconds. */
export interface LiquidityHubItem {
  tx_id: string;
  send_asset: string;
  send_amount: number;
  receive_asset: string;
  receive_amount: number;
  /** True when the quote belongs to the queried company. */
  owner: boolean;
  expires: number;
  added: number;
}

/** Operation declarations of this group, by id. */
export const liquidityHubOperations = {
  publish: {
    method: 'POST',
    path: '/company/{company_id}/liquidityhub',
    source: 'spec section 4, POST /company/{company_id}/liquidityhub (tx_id of an approved quote)',
    body: { type: 'object', required: ['tx_id'], properties: { tx_id: S.id } },
  },
  list: { method: 'GET', path: '/company/{company_id}/liquidityhub', idempotent: true, source: 'spec section 4, GET /company/{company_id}/liquidityhub' },
  approveTake: {
    method: 'PUT',
    path: '/company/{company_id}/action/{action_id}',
    source: "spec section 4, PUT /company/{company_id}/action/{action_id} (approves the taker's swap action)",
  },
} satisfies Record<string, OperationSpec>;

/**
 * Publish an approved swap quote to the liquidity hub (HTTP 200; the hub feed announces it).
 * @throws {ValidationError} for a missing `tx_id`. @throws {ApiError} on a non-2xx answer (e.g. a quote not yet approved).
 */
export function publishQuote(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, liquidityHubOperations.publish, input);
}

/**
 * The quotes on the liquidity hub: `{items: [...]}`; `owner` marks the company's own.
 * @throws {ValidationError} for a missing `company_id`. @throws {ApiError} on a non-2xx answer.
 */
export function listLiquidityHub(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<{ items: LiquidityHubItem[] }>> {
  return callOperation(client, liquidityHubOperations.list, input);
}

/**
 * Approve the taker's swap action (`ApproveSwapTake`) at company level. Not retried.
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function approveSwapTake(client: CustodyClient, input: { company_id: string; action_id: string }): Promise<ApiResponse<OkBody>> {
  return callOperation<OkBody>(client, liquidityHubOperations.approveTake, input);
}
