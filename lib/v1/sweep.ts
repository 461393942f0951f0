/**
 * Exchanges and sweeps (spec section 2 "Exchange", "Sweep transaction"; section 4 "Exchanges
 * and sweeps"). A sweep lets an exchange's core client move funds into or out of a dedicated
 * or multi-counterparty wallet connected to it, without further authorisation.
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, submitOperation, OperationSpec, S } from '../operation';
import type { SubmitOptions, SubmitResult } from '../submission/submit';

/** An exchange (spec section 2): `client.fields` is what an end user supplies to connect. */
export interface Exchange {
  id: string;
  name: string;
  url: string;
  logourl: string;
  client: { fields: Array<{ id: string; type: string; name: string }> };
}

/**
 * POST sweep body (spec section 4): `wallet_id` the origin, `recipient_wallet_id` the
 * destination, `expires` epoch seconds, `send.symbol` required and `send.amount` base units.
 * `partner_txID` (optional; the OpenAPI Sweep body has it, the spec's table does not) is the
 * caller's key of this sweep.
 */
export interface SweepRequest {
  wallet_id: string;
  recipient_wallet_id: string;
  reference?: string;
  /** The payment's key (OpenAPI Sweep): required by this client, which journals the sweep under it. */
  partner_txID: string;
  expires: number;
  send: { symbol: string; amount?: number };
}

/** The sweep transaction (spec section 2, snake_case); amounts base units, times epoch seconds. */
export interface SweepTransaction {
  approver_count: number;
  expires: number;
  initiated_timestamp: number;
  reference: string;
  status: Array<{ action_id: string; status: string; timestamp: number; entity: string }>;
  status_details: {
    amount: number;
    asset: string;
    expires: number;
    fees: number;
    wallet_id: string;
    net_amount: number;
    recipient_wallet_id: string;
    reference: string;
    requested_by: string;
  };
  threshold_required: number;
  tx_id: string;
  /** Values not shown by the spec. */
  tx_status: string;
}

/** Operation declarations of this group, by id. */
export const sweepOperations = {
  exchanges: { method: 'GET', path: '/exchanges', idempotent: true, source: 'spec section 4, GET /exchanges' },
  start: {
    method: 'POST',
    path: '/coreclient/{client_id}/sweep',
    // Not retried: the spec promises no dedupe for sweeps. The OpenAPI Sweep body has an optional
    // `partner_txID`; the client requires it, because the submission journal keys the sweep on it.
    submission: 'sweep',
    amounts: [{ amount: 'send.amount', asset: 'send.symbol' }],
    source: 'spec section 4, POST /coreclient/{client_id}/sweep',
    body: {
      type: 'object',
      required: ['wallet_id', 'recipient_wallet_id', 'partner_txID', 'expires', 'send'],
      properties: {
        wallet_id: S.walletId,
        recipient_wallet_id: S.walletId,
        reference: S.customField,
        // OpenAPI Sweep (the spec's table does not list it); required here: the journal's key.
        partner_txID: S.partnerTxId,
        expires: S.epochSeconds,
        send: { type: 'object', required: ['symbol'], properties: { symbol: S.assetCode, amount: S.positiveBaseUnits } },
      },
    },
  },
  status: {
    // The spec's form: the literal path segment `tx_id`, the sweep's id in the body. (The OpenAPI
    // has GET /coreclient/{client_id}/sweep/{tx_id} instead; the built-in simulator serves both.)
    method: 'POST',
    path: '/coreclient/{client_id}/sweep/tx_id',
    // A read: repeating it changes nothing.
    idempotent: true,
    source: 'spec section 4, POST /coreclient/{client_id}/sweep/tx_id (literal path; tx_id in the body)',
    body: { type: 'object', required: ['tx_id'], properties: { tx_id: S.id } },
  },
} satisfies Record<string, OperationSpec>;

/**
 * The exchanges a wallet can connect to: `{exchanges: [...]}`.
 * @throws {ApiError} on a non-2xx answer.
 */
export function listExchanges(client: CustodyClient): Promise<ApiResponse<{ exchanges: Exchange[] }>> {
  return callOperation(client, sweepOperations.exchanges, {});
}

/**
 * Start a sweep as the exchange's core client `client_id`: answers `{tx_id}`. Not retried
 * by the transport (the spec promises no dedupe); sent exactly once through the submission journal, keyed on partner_txID.
 * @throws {ValidationError} for a missing or malformed field (e.g. `send.symbol`). @throws {ApiError} on a non-2xx answer.
 */
export function startSweep(client: CustodyClient, input: SweepRequest & { client_id: string }, options?: SubmitOptions): Promise<SubmitResult<{ tx_id: string; status?: string }>> {
  return submitOperation<{ tx_id: string; status?: string }>(client, sweepOperations.start, { ...input }, options);
}

/**
 * Read a sweep's transaction by the spec's `POST /coreclient/{client_id}/sweep/tx_id` with
 * `{tx_id}` in the body.
 * @throws {ValidationError} for a missing `client_id` or `tx_id`. @throws {ApiError} on a non-2xx answer.
 */
export function getSweep(client: CustodyClient, input: { client_id: string; tx_id: string }): Promise<ApiResponse<SweepTransaction>> {
  return callOperation<SweepTransaction>(client, sweepOperations.status, input);
}
