/**
 * Exchanges and sweeps (spec section 2 "Exchange", "Sweep transaction"; section 4 "Exchanges
 * and sweeps"). A sweep lets an exchange's core client move funds into or out of a dedicated
 * or multi-counterparty wallet connected to it, without further authorisation.
 */
import { W, type Wire } from '../wire';
import { objectSchema, listSchema, answers, readOperation, operation, paymentAmount, NEW_OR_EXISTING } from '../schema-kit';
import { type OperationSpec, S } from '../spec';

/**
 * An exchange (spec section 2 "Exchange"): `id`, `name`, `url`, `logourl`, and `client.fields[]`
 * (`id`, `type`, `name`: what an end user supplies to connect), all required (the OpenAPI
 * ExchangesList lacks `client`; the spec rules).
 */
export const exchangeSchema = objectSchema(['id', 'name', 'url', 'logourl', 'client'], {
  id: W.id,
  name: W.text,
  url: W.text,
  logourl: W.text,
  client: {
    type: 'object',
    required: ['fields'],
    properties: { fields: { type: 'array', items: { type: 'object', required: ['id', 'type', 'name'], properties: { id: W.id, type: W.text, name: W.text } } } },
  },
});

/** An exchange ({@link exchangeSchema}). */
export type Exchange = Wire<typeof exchangeSchema>;

/** GET /exchanges answer: `exchanges[]` (spec section 4). */
export const exchangeListSchema = listSchema('exchanges', exchangeSchema);

/** GET /exchanges answer ({@link exchangeListSchema}). */
export type ExchangeList = Wire<typeof exchangeListSchema>;

/** POST sweep answer: `tx_id` (spec section 4), required; `status` (`new` or `existing`, OpenAPI TxId) when present. */
export const sweepStartedSchema = objectSchema(['tx_id'], { tx_id: W.id, status: NEW_OR_EXISTING });

/** POST sweep answer ({@link sweepStartedSchema}). */
export type SweepStarted = Wire<typeof sweepStartedSchema>;

/**
 * POST sweep body (spec section 4): `wallet_id` the origin, `recipient_wallet_id` the
 * destination, `expires` epoch seconds, `send.symbol` required and `send.amount` base units.
 * `partner_txID` (the OpenAPI Sweep body has it, optional; the spec's table does not) is required
 * by this client: the submission journal keys the sweep on it.
 */
export const sweepRequestSchema = objectSchema(['wallet_id', 'recipient_wallet_id', 'partner_txID', 'expires', 'send'], {
  wallet_id: S.walletId,
  recipient_wallet_id: S.walletId,
  reference: S.customField,
  // OpenAPI Sweep (the spec's table does not list it); required here: the journal's key.
  partner_txID: S.partnerTxId,
  expires: S.epochSeconds,
  send: { type: 'object', required: ['symbol'], properties: { symbol: S.assetCode, amount: S.positiveBaseUnits } },
});

/** POST sweep body ({@link sweepRequestSchema}). */
export type SweepRequest = Wire<typeof sweepRequestSchema>;

/**
 * The sweep transaction (spec section 2 "Sweep transaction", snake_case), every field of the
 * spec's list required: `status[]` of `{action_id, status, timestamp, entity}`, `status_details`;
 * amounts base units, times epoch seconds. `tx_status` is text: its values are not shown (spec
 * section 3).
 */
export const sweepTransactionSchema = objectSchema(['approver_count', 'expires', 'initiated_timestamp', 'reference', 'status', 'status_details', 'threshold_required', 'tx_id', 'tx_status'], {
  approver_count: W.count,
  expires: W.epochSeconds,
  initiated_timestamp: W.epochSeconds,
  reference: W.text,
  status: {
    type: 'array',
    items: { type: 'object', required: ['action_id', 'status', 'timestamp', 'entity'], properties: { action_id: W.text, status: W.text, timestamp: W.epochSeconds, entity: W.text } },
  },
  status_details: {
    type: 'object',
    required: ['amount', 'asset', 'expires', 'fees', 'wallet_id', 'net_amount', 'recipient_wallet_id', 'reference', 'requested_by'],
    properties: {
      amount: W.unsignedBaseUnits,
      asset: W.id,
      expires: W.epochSeconds,
      fees: W.unsignedBaseUnits,
      wallet_id: W.id,
      net_amount: W.unsignedBaseUnits,
      recipient_wallet_id: W.id,
      reference: W.text,
      requested_by: W.text,
    },
  },
  threshold_required: W.count,
  tx_id: W.id,
  tx_status: W.text,
});

/** The sweep transaction ({@link sweepTransactionSchema}). */
export type SweepTransaction = Wire<typeof sweepTransactionSchema>;

/** Operation declarations of this group, by id. */
export const sweepOperations = {
  exchanges: readOperation('/exchanges', 'spec section 4, GET /exchanges', exchangeListSchema),
  start: operation('POST', '/coreclient/{client_id}/sweep', 'spec section 4, POST /coreclient/{client_id}/sweep', answers(sweepStartedSchema), {
    // Not retried: the spec promises no dedupe for sweeps. The OpenAPI Sweep body has an optional
    // `partner_txID`; the client requires it, because the submission journal keys the sweep on it.
    submission: 'sweep',
    amounts: [paymentAmount('send')],
    body: sweepRequestSchema,
  }),
  // The spec's form: the literal path segment `tx_id`, the sweep's id in the body. (The OpenAPI
  // has GET /coreclient/{client_id}/sweep/{tx_id} instead; the built-in simulator serves both.)
  status: operation('POST', '/coreclient/{client_id}/sweep/tx_id', 'spec section 4, POST /coreclient/{client_id}/sweep/tx_id (literal path; tx_id in the body)', answers(sweepTransactionSchema), {
    // A read: repeating it changes nothing.
    idempotent: true,
    body: { type: 'object', required: ['tx_id'], properties: { tx_id: S.id } },
  }),
} satisfies Record<string, OperationSpec>;
