/**
 * The typed calls of the operations declared in lib/api/v1/liquidity-hub.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import type { ApiResponse } from '../transport';
import { callOperation } from '../call';
import { liquidityHubOperations, type LiquidityHubList } from '../../api/v1/liquidity-hub';
import { type OpenWire, anyObjectSchema } from '../../api/wire';

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
export function listLiquidityHub(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<LiquidityHubList>> {
  return callOperation(client, liquidityHubOperations.list, input);
}

/**
 * Approve the taker's swap action (`ApproveSwapTake`) at company level. Not retried.
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function approveSwapTake(client: CustodyClient, input: { company_id: string; action_id: string }): Promise<ApiResponse<OpenWire<typeof anyObjectSchema>>> {
  return callOperation(client, liquidityHubOperations.approveTake, input);
}
