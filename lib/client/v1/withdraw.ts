/**
 * The typed calls of the operations declared in lib/api/v1/withdraw.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import { type WithdrawRequest, type WithdrawCreated, withdrawOperations, type Transaction } from '../../api/v1/withdraw';
import type { SubmitOptions, SubmitResult } from '../submission/submit';
import { submitOperation, callOperation } from '../call';
import type { ApiResponse } from '../transport';

/**
 * Create a withdrawal to a whitelisted address. Retried on timeouts and 429/502/503/504 with
 * the same body (same `partner_txID`).
 * @throws {ValidationError} for a missing or malformed field (e.g. `address` empty, `send.amount` not a positive integer, `expires` past).
 * @throws {ApiError} on a non-2xx answer (for example an address that is not whitelisted).
 */
export function createWithdraw(client: CustodyClient, input: WithdrawRequest & { company_id: string }, options?: SubmitOptions): Promise<SubmitResult<WithdrawCreated>> {
  return submitOperation<WithdrawCreated>(client, withdrawOperations.create, { ...input }, options);
}

/**
 * Read a withdrawal's Transaction object (same shape as a transfer's; `txStatus` one of
 * {@link WithdrawalStatus}).
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function getWithdraw(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<Transaction>> {
  return callOperation<Transaction>(client, withdrawOperations.get, input);
}
