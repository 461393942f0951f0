/**
 * The typed calls of the operations declared in lib/api/v1/swap.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import { type SwapMakeRequest, type SwapMade, swapMakeOperations, type SwapTransaction, type SwapTakeRequest, type SwapTaken, swapTakeOperations } from '../../api/v1/swap';
import type { SubmitOptions, SubmitResult } from '../submission/submit';
import { submitOperation, callOperation } from '../call';
import type { ApiResponse } from '../transport';
import type { OkBody } from '../../api/wire';

/**
 * Make a swap quote. Sent once, never retried (see the declaration).
 * @throws {ValidationError} for a missing or malformed field (e.g. `receive.amount` not a positive integer).
 * @throws {ApiError} on a non-2xx answer.
 */
export function makeSwap(client: CustodyClient, input: SwapMakeRequest & { company_id: string }, options?: SubmitOptions): Promise<SubmitResult<SwapMade>> {
  return submitOperation<SwapMade>(client, swapMakeOperations.make, { ...input }, options);
}

/**
 * Read a swap quote or swap transaction (payload not shown by the spec; passed through).
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function getSwapMake(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<SwapTransaction>> {
  return callOperation(client, swapMakeOperations.get, input);
}

/**
 * Cancel a swap quote (OpenAPI: answers 202 `{code, msg}`). Not retried.
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function cancelSwap(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<OkBody>> {
  return callOperation<OkBody>(client, swapMakeOperations.cancel, input);
}

/**
 * Take a published quote: answers the new taker transaction's `tx_id` (a transfer-out that needs
 * the taker's custody; not an action id). Sent once, never retried.
 * @throws {ValidationError} for a missing or malformed field. @throws {ApiError} on a non-2xx answer.
 */
export function takeSwap(client: CustodyClient, input: SwapTakeRequest & { company_id: string }, options?: SubmitOptions): Promise<SubmitResult<SwapTaken>> {
  return submitOperation<SwapTaken>(client, swapTakeOperations.take, { ...input }, options);
}

/**
 * Read a taker transaction (payload not shown; passed through).
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function getSwapTake(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<SwapTransaction>> {
  return callOperation(client, swapTakeOperations.get, input);
}
