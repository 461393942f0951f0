/**
 * Withdrawals, L2 wallet to a whitelisted external (L1) address (spec section 3 "Withdrawal tx
 * status values", section 4 "Withdrawals"; OpenAPI `/company/{company_id}/withdraw`).
 */
import { PAYMENT_TERMS, PAYMENT_TERMS_REQUIRED, transferCreatedSchema, transactionSchemaOf, type transferTransactionSchema } from './transfer';
import type { Wire } from '../wire';
import { objectSchema, answers, readOperation, operation, paymentAmount } from '../schema-kit';
import { type OperationSpec, S } from '../spec';

/**
 * POST withdraw body (spec section 4: all fields required). `wallet_id` is the origin wallet id
 * or short code (never an address); `address` a whitelisted L1 address (see fund
 * `addWhitelist`); then the `PAYMENT_TERMS` of a transfer (lib/api/v1/transfer.ts: `expires` epoch
 * seconds, `send.amount` base units). `partner_txID` is the caller's own unique id of the
 * withdrawal; build it from something stable (an order number).
 */
export const withdrawRequestSchema = objectSchema(['wallet_id', 'address', ...PAYMENT_TERMS_REQUIRED], {
  wallet_id: S.walletId,
  address: S.address,
  ...PAYMENT_TERMS,
});

/** POST withdraw body ({@link withdrawRequestSchema}). */
export type WithdrawRequest = Wire<typeof withdrawRequestSchema>;

/**
 * POST withdraw answer: `tx_id` and `status` (spec section 4 shows `new`; the OpenAPI's TxId
 * answer, shared with transfers, also allows `existing`, which the built-in simulator answers for
 * a repeated `partner_txID`; the spec does not forbid it): the transfer's answer,
 * `transferCreatedSchema` (lib/api/v1/transfer.ts).
 */
export const withdrawCreatedSchema = transferCreatedSchema;

/** POST withdraw answer ({@link withdrawCreatedSchema}). */
export type WithdrawCreated = Wire<typeof withdrawCreatedSchema>;

/** Withdrawal statuses (spec section 3), parallel to the transfer statuses. */
export const WITHDRAWAL_STATUSES = [
  'pending_initiate_withdrawal',
  'initiate_rejected_withdrawal',
  'pending_withdrawal',
  'expired_withdrawal',
  'approved_withdrawal',
  'custody_rejected_withdrawal',
  'chain_rejected_withdrawal',
] as const;

/** A withdrawal status (spec section 3): one of {@link WITHDRAWAL_STATUSES}. */
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/**
 * The Transaction object of a withdrawal (spec section 4: "same shape as for transfers"; GET
 * /company/{company_id}/withdraw/{tx_id}): the fields of `transferTransactionSchema`
 * (lib/api/v1/transfer.ts), `txStatus` one of {@link WITHDRAWAL_STATUSES} or `SHORT_TX_STATUSES`.
 */
export const withdrawalTransactionSchema = transactionSchemaOf(WITHDRAWAL_STATUSES);

/**
 * The Transaction object (spec section 2) of a transfer or a withdrawal, camelCase; amounts in
 * base units, times epoch seconds: `transferTransactionSchema` (lib/api/v1/transfer.ts) or
 * {@link withdrawalTransactionSchema}.
 */
export type Transaction = Wire<typeof transferTransactionSchema> | Wire<typeof withdrawalTransactionSchema>;

/** Operation declarations of this group, by id. */
export const withdrawOperations = {
  create: operation('POST', '/company/{company_id}/withdraw', 'spec section 4, POST /company/{company_id}/withdraw', answers(withdrawCreatedSchema), {
    // Never retried by the client: the spec promises "existing, no new transaction" for a repeated
    // partner_txID on POST transfer only (section 3, "Moves shown"), not on POST withdraw. The
    // submission journal keeps the key; after an unknown outcome, `resolveSubmission` looks the
    // withdrawal up (ledger, wallet history) before the key may be used again.
    submission: 'withdrawal',
    amounts: [paymentAmount('send')],
    body: withdrawRequestSchema,
  }),
  get: readOperation('/company/{company_id}/withdraw/{tx_id}', 'spec section 4, GET /company/{company_id}/withdraw/{tx_id}', withdrawalTransactionSchema),
} satisfies Record<string, OperationSpec>;
