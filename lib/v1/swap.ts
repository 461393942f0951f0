/**
 * Atomic swaps (spec section 4 "Atomic swaps and liquidity hub"; section 8: maker and taker
 * belong to the same API account, possibly different companies; OpenAPI
 * `/company/{company_id}/atomicswap/make`, `/atomicswap/make/{tx_id}` (GET, DELETE),
 * `/atomicswap/take`, `/atomicswap/take/{tx_id}`).
 *
 * The maker quotes `send` for `receive`; once its custodians approve (action `ApproveSwap`) the
 * quote can be published to the liquidity hub. A taker takes it by `swap_id` (the quote's
 * `tx_id`), which makes a transfer-out that needs the taker's custody (action `ApproveSwapTake`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, submitOperation, OperationSpec, S, PAYMENT } from '../operation';
import type { SubmitOptions, SubmitResult } from '../submission/submit';
import type { SendAmount } from './transfer';
import type { OkBody } from './trusted-party';

/**
 * POST atomicswap/make body (spec section 4). Wallets by id or short code; `expires` epoch
 * seconds; `send` (what the maker gives) and `receive` (what the maker gets) in base units;
 * `add_to_liquidity_hub` true publishes the quote once approved. `partner_txID` is required
 * here (the spec lists it; the pack requires it so that a quote can be traced to the caller's own id).
 */
export interface SwapMakeRequest {
  send_wallet_id: string;
  receive_wallet_id: string;
  expires: number;
  reference: string;
  partner_txID: string;
  send: SendAmount;
  receive: SendAmount;
  add_to_liquidity_hub?: boolean;
}

/** POST atomicswap/make answer (NOTES.md): the quote's `tx_id`, its `tx_url`, `status` `new` (or `existing`). */
export interface SwapMade {
  tx_id: string;
  tx_url: string;
  status: 'new' | 'existing' | string;
}

/**
 * POST atomicswap/take body (spec section 4): `swap_id` is the quote's `tx_id` from the hub
 * listing; the taker sends from `send_wallet_id` (the maker's `receive` asset) and receives
 * into `receive_wallet_id` (the maker's `send` asset).
 */
export interface SwapTakeRequest {
  swap_id: string;
  send_wallet_id: string;
  receive_wallet_id: string;
  reference: string;
  partner_txID: string;
}


/** Maker operations, by id. */
export const swapMakeOperations = {
  make: {
    method: 'POST',
    path: '/company/{company_id}/atomicswap/make',
    // Never retried by the client: the spec promises idempotency on partner_txID for POST transfer
    // only (section 3), so a repeated make after a timeout could make a second quote. Journaled.
    submission: 'swapMake',
    amounts: [
      { amount: 'send.amount', asset: 'send.symbol' },
      { amount: 'receive.amount', asset: 'receive.symbol' },
    ],
    source: 'spec section 4, POST /company/{company_id}/atomicswap/make',
    body: {
      type: 'object',
      required: ['send_wallet_id', 'receive_wallet_id', 'expires', 'reference', 'partner_txID', 'send', 'receive'],
      properties: {
        send_wallet_id: S.walletId,
        receive_wallet_id: S.walletId,
        expires: S.epochSeconds,
        reference: S.customField,
        partner_txID: S.partnerTxId,
        send: PAYMENT,
        receive: PAYMENT,
        add_to_liquidity_hub: { type: 'boolean' },
      },
    },
  },
  get: { method: 'GET', path: '/company/{company_id}/atomicswap/make/{tx_id}', idempotent: true, source: 'spec section 4, GET /company/{company_id}/atomicswap/make/{tx_id}' },
  cancel: { method: 'DELETE', path: '/company/{company_id}/atomicswap/make/{tx_id}', source: 'OpenAPI DELETE /company/{company_id}/atomicswap/make/{tx_id} (202 OkResponse)' },
} satisfies Record<string, OperationSpec>;

/** Taker operations, by id. */
export const swapTakeOperations = {
  take: {
    method: 'POST',
    path: '/company/{company_id}/atomicswap/take',
    // Never retried by the client, for the reason given on `make`. Journaled.
    submission: 'swapTake',
    source: 'spec section 4, POST /company/{company_id}/atomicswap/take (swap_id in the body)',
    body: {
      type: 'object',
      required: ['swap_id', 'send_wallet_id', 'receive_wallet_id', 'reference', 'partner_txID'],
      properties: { swap_id: S.id, send_wallet_id: S.walletId, receive_wallet_id: S.walletId, reference: S.customField, partner_txID: S.partnerTxId },
    },
  },
  get: { method: 'GET', path: '/company/{company_id}/atomicswap/take/{tx_id}', idempotent: true, source: 'OpenAPI GET /company/{company_id}/atomicswap/take/{tx_id}' },
} satisfies Record<string, OperationSpec>;

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
export function getSwapMake(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<Record<string, unknown>>> {
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
 * POST atomicswap/take answer: `tx_id` of the new taker transaction (spec section 4); the built-in
 * simulator adds `status` (`new` or `existing`) and `action_id`, the company-level action that
 * {@link approveSwapTake} approves.
 */
export interface SwapTaken {
  tx_id: string;
  status?: 'new' | 'existing' | string;
  action_id?: string;
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
export function getSwapTake(client: CustodyClient, input: { company_id: string; tx_id: string }): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, swapTakeOperations.get, input);
}
