/**
 * Transfers, L2 wallet to L2 wallet (spec section 2 "Transaction object", section 3 "Transfer
 * tx status values", section 4 "Transfers"; OpenAPI `/company/{company_id}/transfer`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, submitOperation, OperationSpec, S, PAYMENT } from '../operation';
import type { SubmitOptions, SubmitResult } from '../submission/submit';

/** `send` of a transfer: asset `symbol` and `amount` in base units (integer). */
export interface SendAmount {
  symbol: string;
  amount: number;
}

/**
 * POST transfer body (spec section 4: all fields required). `wallet_id` and
 * `counterparty_wallet_address` take a wallet id or short code; `expires` is epoch seconds.
 * `partner_txID` makes a retry safe: the same value answers `existing` with the original tx_id.
 */
export interface TransferRequest {
  wallet_id: string;
  counterparty_wallet_address: string;
  expires: number;
  benefit_of: string;
  account_no: string;
  reference: string;
  partner_txID: string;
  send: SendAmount;
}

/** POST transfer answer. */
export interface TransferCreated {
  tx_id: string;
  status: 'new' | 'existing';
}

/** Transfer statuses (spec section 3). */
export const TRANSFER_STATUSES = [
  'pending_initiate_transfer',
  'initiate_rejected_transfer',
  'pending_transfer',
  'expired_transfer',
  'approved_transfer',
  'custody_rejected_transfer',
  'chain_rejected_transfer',
] as const;

/** A transfer status (spec section 3): one of {@link TRANSFER_STATUSES}. */
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** An approver record (spec section 2); blank names and `userID` = core client id for a core client. */
export interface ApproverRecord {
  actionID: string;
  firstName: string;
  lastName: string;
  status: string;
  timestamp: number;
  userID: string;
  username: string;
}

/** The Transaction object (spec section 2), camelCase; amounts in base units, times epoch seconds. */
export interface Transaction {
  approvedCount: number;
  expires: number;
  initiatedTimestamp: number;
  initiatorAuthorized: boolean;
  initiatorName: string;
  reference: string;
  status: ApproverRecord[];
  statusDetails: {
    accountNo: string;
    amount: number;
    asset: string;
    benefitOf: string;
    expires: number;
    fees: number;
    fundID: string;
    netAmount: number;
    recipientAddress: string;
    recipientEmail?: string;
    recipientFirstName?: string;
    recipientLastName?: string;
    recipientUsername?: string;
    reference: string;
    requestedBy: string;
  };
  thresholdRequired: number;
  txID: string;
  txStatus: TransferStatus | string;
}

/** Operation declarations of this group, by id. */
export const transferOperations = {
  create: {
    method: 'POST',
    path: '/company/{company_id}/transfer',
    // Safe to retry: the API answers `existing` for a repeated partner_txID (spec section 3).
    idempotent: true,
    submission: 'transfer',
    amounts: [{ amount: 'send.amount', asset: 'send.symbol' }],
    source: 'spec section 4, POST /company/{company_id}/transfer',
    body: {
      type: 'object',
      required: ['wallet_id', 'counterparty_wallet_address', 'expires', 'benefit_of', 'account_no', 'reference', 'partner_txID', 'send'],
      properties: {
        wallet_id: S.walletId,
        counterparty_wallet_address: S.walletId,
        expires: S.epochSeconds,
        benefit_of: S.customField,
        account_no: S.customField,
        reference: S.customField,
        partner_txID: S.partnerTxId,
        send: PAYMENT,
      },
    },
  },
  get: { method: 'GET', path: '/company/{company_id}/transfer/{tx_id}', idempotent: true, source: 'spec section 4, GET /company/{company_id}/transfer/{tx_id}' },
} satisfies Record<string, OperationSpec>;

/**
 * Create a transfer, exactly once (lib/submission): retried on timeouts and 429/502/503/504 with
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
