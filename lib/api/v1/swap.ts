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
import { W, okBodySchema, type OpenWire, type Wire } from '../wire';
import { objectSchema, optionalFieldsSchema, answers, readOperation, operation, paymentAmount, NEW_OR_EXISTING } from '../schema-kit';
import { type OperationSpec, S, PAYMENT } from '../spec';

/**
 * Statuses of an atomic swap quote (the maker's transaction). Spec section 3 names only
 * `taker_pending` (a published quote); the others follow the transfer pattern, as the built-in
 * simulator sets them (simulator/swaps.ts): `pending_swap` awaits the maker's custodians;
 * `taker_pending` approved, open for a taker; `approved_swap` settled with a taker;
 * `custody_rejected_swap`, `expired_swap`, `cancelled_swap` (DELETE make/{tx_id}).
 */
export const SWAP_STATUSES = ['pending_swap', 'taker_pending', 'approved_swap', 'custody_rejected_swap', 'expired_swap', 'cancelled_swap'] as const;

/** A swap quote status: one of {@link SWAP_STATUSES}. */
export type SwapStatus = (typeof SWAP_STATUSES)[number];

/**
 * Statuses of a swap take (the taker's transfer-out; not shown by the spec, the built-in
 * simulator's values after the transfer pattern): `pending_swap_take` awaits the taker's
 * custodians and the company approval; `approved_swap_take` settled; `custody_rejected_swap_take`
 * (a custodian or the company rejected); `expired_swap_take` (the quote expired first);
 * `cancelled_swap_take` (the maker cancelled the quote).
 */
export const SWAP_TAKE_STATUSES = ['pending_swap_take', 'approved_swap_take', 'custody_rejected_swap_take', 'expired_swap_take', 'cancelled_swap_take'] as const;

/** A swap take status: one of {@link SWAP_TAKE_STATUSES}. */
export type SwapTakeStatus = (typeof SWAP_TAKE_STATUSES)[number];

/**
 * POST atomicswap/make body (spec section 4). Wallets by id or short code; `expires` epoch
 * seconds; `send` (what the maker gives) and `receive` (what the maker gets) in base units;
 * `add_to_liquidity_hub` true publishes the quote once approved. `partner_txID` is required
 * here (the spec lists it; the pack requires it so that a quote can be traced to the caller's own id).
 */
export const swapMakeRequestSchema = objectSchema(['send_wallet_id', 'receive_wallet_id', 'expires', 'reference', 'partner_txID', 'send', 'receive'], {
  send_wallet_id: S.walletId,
  receive_wallet_id: S.walletId,
  expires: S.epochSeconds,
  reference: S.customField,
  partner_txID: S.partnerTxId,
  send: PAYMENT,
  receive: PAYMENT,
  add_to_liquidity_hub: { type: 'boolean' },
});

/** POST atomicswap/make body ({@link swapMakeRequestSchema}). */
export type SwapMakeRequest = Wire<typeof swapMakeRequestSchema>;

/**
 * POST atomicswap/make answer (spec section 4: `tx_id`, `tx_url`, `status` `new`; OpenAPI
 * SwapTxId, whose `status` also allows `existing`): all three required.
 */
export const swapMadeSchema = objectSchema(['tx_id', 'tx_url', 'status'], { tx_id: W.id, tx_url: W.text, status: NEW_OR_EXISTING });

/** POST atomicswap/make answer ({@link swapMadeSchema}). */
export type SwapMade = Wire<typeof swapMadeSchema>;

/**
 * A swap quote or swap (taker) transaction as read with GET .../atomicswap/make/{tx_id} (spec
 * section 4: "details of the quote or swap transaction") or GET .../atomicswap/take/{tx_id}
 * (OpenAPI): neither the spec nor the OpenAPI shows the payload, so nothing is required. The
 * fields the pack reads to follow it (lib/api/states.ts: `txStatus`, `expires`) are typed when
 * present: `txID` text, `txStatus` text (its values are not shown), `expires` epoch seconds.
 */
export const swapTransactionSchema = optionalFieldsSchema({ txID: W.id, txStatus: W.text, expires: W.epochSeconds });

/** A swap quote or swap transaction as read ({@link swapTransactionSchema}); other fields passed through. */
export type SwapTransaction = OpenWire<typeof swapTransactionSchema>;

/**
 * POST atomicswap/take body (spec section 4): `swap_id` is the quote's `tx_id` from the hub
 * listing; the taker sends from `send_wallet_id` (the maker's `receive` asset) and receives
 * into `receive_wallet_id` (the maker's `send` asset). All required.
 */
export const swapTakeRequestSchema = objectSchema(['swap_id', 'send_wallet_id', 'receive_wallet_id', 'reference', 'partner_txID'], { swap_id: S.id, send_wallet_id: S.walletId, receive_wallet_id: S.walletId, reference: S.customField, partner_txID: S.partnerTxId });

/** POST atomicswap/take body ({@link swapTakeRequestSchema}). */
export type SwapTakeRequest = Wire<typeof swapTakeRequestSchema>;

/**
 * POST atomicswap/take answer: the new taker transaction's `tx_id` (spec section 4), required;
 * `status` (`new` or `existing`, OpenAPI TxId) and `action_id` (the built-in simulator's: the
 * company-level action that `approveSwapTake` approves; not a spec field) when present.
 */
export const swapTakenSchema = objectSchema(['tx_id'], { tx_id: W.id, status: NEW_OR_EXISTING, action_id: W.id });

/** POST atomicswap/take answer ({@link swapTakenSchema}). */
export type SwapTaken = Wire<typeof swapTakenSchema>;

/** Maker operations, by id. */
export const swapMakeOperations = {
  make: operation('POST', '/company/{company_id}/atomicswap/make', 'spec section 4, POST /company/{company_id}/atomicswap/make', answers(swapMadeSchema), {
    // Never retried by the client: the spec promises idempotency on partner_txID for POST transfer
    // only (section 3), so a repeated make after a timeout could make a second quote. Journaled.
    submission: 'swapMake',
    amounts: [paymentAmount('send'), paymentAmount('receive')],
    body: swapMakeRequestSchema,
  }),
  get: readOperation('/company/{company_id}/atomicswap/make/{tx_id}', 'spec section 4, GET /company/{company_id}/atomicswap/make/{tx_id}', swapTransactionSchema),
  cancel: operation('DELETE', '/company/{company_id}/atomicswap/make/{tx_id}', 'OpenAPI DELETE /company/{company_id}/atomicswap/make/{tx_id} (202 OkResponse)', answers(okBodySchema, 202)),
} satisfies Record<string, OperationSpec>;

/** Taker operations, by id. */
export const swapTakeOperations = {
  take: operation('POST', '/company/{company_id}/atomicswap/take', 'spec section 4, POST /company/{company_id}/atomicswap/take (swap_id in the body)', answers(swapTakenSchema), {
    // Never retried by the client, for the reason given on `make`. Journaled.
    submission: 'swapTake',
    body: swapTakeRequestSchema,
  }),
  get: readOperation('/company/{company_id}/atomicswap/take/{tx_id}', 'OpenAPI GET /company/{company_id}/atomicswap/take/{tx_id}', swapTransactionSchema),
} satisfies Record<string, OperationSpec>;
