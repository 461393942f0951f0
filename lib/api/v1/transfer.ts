/**
 * Transfers, L2 wallet to L2 wallet (spec section 2 "Transaction object", section 3 "Transfer
 * tx status values", section 4 "Transfers"; OpenAPI `/company/{company_id}/transfer`).
 */
import { W, type Wire } from '../wire';
import { objectSchema, arrayOf, answers, readOperation, operation, paymentAmount, NEW_OR_EXISTING } from '../schema-kit';
import { type OperationSpec, S, PAYMENT } from '../spec';

/** `send` of a transfer (lib/api/spec.ts `PAYMENT`): asset `symbol` and `amount` in base units (a positive integer). */
export type SendAmount = Wire<typeof PAYMENT>;

/**
 * The fields of a payment body that follow its origin and destination, all required (spec section
 * 4: POST transfer and POST withdraw list the same ones): `expires` epoch seconds, the custom
 * fields `benefit_of`, `account_no`, `reference`, the caller's key `partner_txID`, and `send`
 * (lib/api/spec.ts `PAYMENT`, `send.amount` base units). Each text has the pack's length bound
 * (lib/api/spec.ts `S`).
 */
export const PAYMENT_TERMS = {
  expires: S.epochSeconds,
  benefit_of: S.customField,
  account_no: S.customField,
  reference: S.customField,
  partner_txID: S.partnerTxId,
  send: PAYMENT,
} as const;

/** The field names of {@link PAYMENT_TERMS}, in order: the `required` list they add to a payment body. */
export const PAYMENT_TERMS_REQUIRED = ['expires', 'benefit_of', 'account_no', 'reference', 'partner_txID', 'send'] as const;

/**
 * POST transfer body (spec section 4: all fields required). `wallet_id` and
 * `counterparty_wallet_address` take a wallet id or short code; then the {@link PAYMENT_TERMS}
 * (`expires` epoch seconds, `send.amount` base units). `partner_txID` makes a retry safe: the same
 * value answers `existing` with the original tx_id.
 */
export const transferRequestSchema = objectSchema(['wallet_id', 'counterparty_wallet_address', ...PAYMENT_TERMS_REQUIRED], {
  wallet_id: S.walletId,
  counterparty_wallet_address: S.walletId,
  ...PAYMENT_TERMS,
});

/** POST transfer body ({@link transferRequestSchema}). */
export type TransferRequest = Wire<typeof transferRequestSchema>;

/**
 * POST transfer answer (spec section 4): `tx_id` and `status`, `new` or `existing` (spec section 3;
 * OpenAPI TxId, which POST withdraw answers too: lib/api/v1/withdraw.ts `withdrawCreatedSchema`).
 */
export const transferCreatedSchema = objectSchema(['tx_id', 'status'], { tx_id: W.id, status: NEW_OR_EXISTING });

/** POST transfer answer ({@link transferCreatedSchema}). */
export type TransferCreated = Wire<typeof transferCreatedSchema>;

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

/**
 * The short `txStatus` values of the spec's walkthrough example (spec section 3: "also shows short
 * values of txStatus: pending, approved, rejected, expired"), accepted for transfers and
 * withdrawals alike.
 */
export const SHORT_TX_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;

/**
 * An approver record (spec section 2), one per approval, all fields required: `actionID`,
 * `firstName`, `lastName`, `status` (for example `approved`), `timestamp` (epoch seconds),
 * `userID`, `username`. For a core client the names are blank and `userID` is its id.
 */
export const approverRecordSchema = objectSchema(['actionID', 'firstName', 'lastName', 'status', 'timestamp', 'userID', 'username'], {
  actionID: W.id,
  firstName: W.text,
  lastName: W.text,
  status: W.text,
  timestamp: W.epochSeconds,
  userID: W.id,
  username: W.text,
});

/** An approver record ({@link approverRecordSchema}). */
export type ApproverRecord = Wire<typeof approverRecordSchema>;

/**
 * The fields of the Transaction object (spec section 2) but `txStatus`, camelCase (the service's documentation examples:
 * transfer and withdrawal GET answers are camelCase whatever the OpenAPI TxInfo names say; the
 * spec rules). Amounts base units (`amount` gross, `netAmount` = amount - fees), times epoch seconds.
 */
export const transactionProperties = {
  approvedCount: W.count,
  expires: W.epochSeconds,
  initiatedTimestamp: W.epochSeconds,
  initiatorAuthorized: W.boolean,
  initiatorName: W.text,
  reference: W.text,
  status: arrayOf(approverRecordSchema),
  statusDetails: {
    type: 'object',
    required: [
      'accountNo', 'amount', 'asset', 'benefitOf', 'expires', 'fees', 'fundID', 'netAmount', 'recipientAddress',
      'recipientEmail', 'recipientFirstName', 'recipientLastName', 'recipientUsername', 'reference', 'requestedBy',
    ],
    properties: {
      accountNo: W.text,
      amount: W.unsignedBaseUnits,
      asset: W.id,
      benefitOf: W.text,
      expires: W.epochSeconds,
      fees: W.unsignedBaseUnits,
      fundID: W.text,
      netAmount: W.unsignedBaseUnits,
      recipientAddress: W.text,
      recipientEmail: W.text,
      recipientFirstName: W.text,
      recipientLastName: W.text,
      recipientUsername: W.text,
      reference: W.text,
      requestedBy: W.text,
    },
  },
  thresholdRequired: W.count,
  txID: W.id,
} as const;

/** The required fields of the Transaction object: every field of spec section 2's table. */
export const TRANSACTION_REQUIRED = [
  'approvedCount', 'expires', 'initiatedTimestamp', 'initiatorAuthorized', 'initiatorName', 'reference', 'status', 'statusDetails',
  'thresholdRequired', 'txID', 'txStatus',
] as const;

/**
 * The Transaction object of one kind (spec section 2): every field required, `txStatus` one of
 * `statuses` (that kind's, spec section 3) or of {@link SHORT_TX_STATUSES}.
 * @param statuses the kind's status values, e.g. {@link TRANSFER_STATUSES}.
 */
export function transactionSchemaOf<const T extends readonly string[]>(statuses: T) {
  return objectSchema(TRANSACTION_REQUIRED, { ...transactionProperties, txStatus: { type: 'string', enum: [...statuses, ...SHORT_TX_STATUSES] } as const });
}

/**
 * The Transaction object of a transfer (spec section 2; GET /company/{company_id}/transfer/{tx_id}):
 * every field required; `txStatus` one of {@link TRANSFER_STATUSES} (spec section 3) or of
 * {@link SHORT_TX_STATUSES}. `withdrawalTransactionSchema` (lib/api/v1/withdraw.ts) is the same with
 * the withdrawal statuses.
 */
export const transferTransactionSchema = transactionSchemaOf(TRANSFER_STATUSES);

/**
 * The Transaction object (spec section 2) of any kind, `txStatus` any text: the shape the swap
 * legs (make and take) share with transfers and withdrawals, whose own status lists are in
 * lib/api/states.ts. Used where one function builds or reads Transaction objects of every kind.
 */
export const transactionObjectSchema = objectSchema(TRANSACTION_REQUIRED, { ...transactionProperties, txStatus: W.text });

/** A Transaction object of any kind ({@link transactionObjectSchema}). */
export type TransactionObject = Wire<typeof transactionObjectSchema>;

/** Operation declarations of this group, by id. */
export const transferOperations = {
  create: operation('POST', '/company/{company_id}/transfer', 'spec section 4, POST /company/{company_id}/transfer', answers(transferCreatedSchema), {
    // Safe to retry: the API answers `existing` for a repeated partner_txID (spec section 3).
    idempotent: true,
    submission: 'transfer',
    amounts: [paymentAmount('send')],
    body: transferRequestSchema,
  }),
  get: readOperation('/company/{company_id}/transfer/{tx_id}', 'spec section 4, GET /company/{company_id}/transfer/{tx_id}', transferTransactionSchema),
} satisfies Record<string, OperationSpec>;
