/**
 * The typed calls of the operations declared in lib/api/v1/sweep.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import type { ApiResponse } from '../transport';
import { type ExchangeList, sweepOperations, type SweepRequest, type SweepStarted, type SweepTransaction } from '../../api/v1/sweep';
import { callOperation, submitOperation } from '../call';
import type { SubmitOptions, SubmitResult } from '../submission/submit';

/**
 * The exchanges a wallet can connect to: `{exchanges: [...]}`.
 * @throws {ApiError} on a non-2xx answer.
 */
export function listExchanges(client: CustodyClient): Promise<ApiResponse<ExchangeList>> {
  return callOperation(client, sweepOperations.exchanges, {});
}

/**
 * Start a sweep as the exchange's core client `client_id`: answers `{tx_id}`. Not retried
 * by the transport (the spec promises no dedupe); sent exactly once through the submission journal, keyed on partner_txID.
 * @throws {ValidationError} for a missing or malformed field (e.g. `send.symbol`). @throws {ApiError} on a non-2xx answer.
 */
export function startSweep(client: CustodyClient, input: SweepRequest & { client_id: string }, options?: SubmitOptions): Promise<SubmitResult<SweepStarted>> {
  return submitOperation<SweepStarted>(client, sweepOperations.start, { ...input }, options);
}

/**
 * Read a sweep's transaction by the spec's `POST /coreclient/{client_id}/sweep/tx_id` with
 * `{tx_id}` in the body.
 * @throws {ValidationError} for a missing `client_id` or `tx_id`. @throws {ApiError} on a non-2xx answer.
 */
export function getSweep(client: CustodyClient, input: { client_id: string; tx_id: string }): Promise<ApiResponse<SweepTransaction>> {
  return callOperation<SweepTransaction>(client, sweepOperations.status, input);
}
