/**
 * The typed calls of the operations declared in lib/api/v1/transfer.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import { type TransferRequest, type TransferCreated, transferOperations } from '../../api/v1/transfer';
import type { SubmitOptions, SubmitResult } from '../submission/submit';
import { submitOperation, callOperation } from '../call';
import type { ApiResponse } from '../transport';
import type { Transaction } from '../../api/v1/withdraw';

/**
 * Create a transfer, exactly once (lib/client/submission): retried on timeouts and 429/502/503/504 with
 * the same body (same `partner_txID`), and after an unknown outcome sent again (fresh signature)
 * until the API answers `new` or `existing` or the transfer's `expires` is reached (opt out with
 * `options.resolveUnknown: false`). With `options.journal`, the key is journaled first.
 * @returns `{statusCode, data: {tx_id, status}, outcome, fromJournal, attempts}`.
 * @throws {ValidationError} for a missing or malformed field (e.g. `send.amount` not a positive integer).
 * @throws {SubmissionConflictError} the journal holds this `partner_txID` for another body.
 * @throws {OutcomeUnknownError} no definite answer before `expires` (code `EOUTCOMEUNKNOWN`).
 * @throws {ApiError} refused (4xx) or not sent: no transfer was made.
 */
export function createTransfer(client: CustodyClient, input: TransferRequest & { company_id: string }, options?: SubmitOptions): Promise<SubmitResult<TransferCreated>> {
  return submitOperation<TransferCreated>(client, transferOperations.create, { ...input }, options);
}

/** Read a transfer's Transaction object. */
export function getTransfer(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<Transaction>> {
  return callOperation<Transaction>(client, transferOperations.get, input);
}
