/**
 * Atomic swaps and the liquidity hub. Sources: spec sections 3 (taker_pending), 4 ("Atomic swaps
 * and liquidity hub"), 6 (liquidity hub feed), 8 (fees; maker and taker in the same API account);
 * OpenAPI `/company/{company_id}/atomicswap/make[/{tx_id}]`, `/atomicswap/take[/{tx_id}]`,
 * `/company/{company_id}/liquidityhub`, `/liquidityhub`, AtomicSwapMake, AtomicSwapTake,
 * SwapTxId, LiquidityHub; simulator/README.md "Swaps and the liquidity hub" (hub feed `{txID, status}`).
 *
 * Semantics chosen by the simulator:
 * - make: the maker's send wallet and receive wallet (ids or short codes) belong to the company
 *   and hold `send.symbol` and `receive.symbol` (which differ). The send wallet's transfer
 *   custody group approves (`ApproveSwap` actions); `send.amount` + fees (0.1 bps) is held on the
 *   send wallet until the swap settles, is rejected, expires or is cancelled.
 *   Status `pending_swap` -> (custody threshold) `taker_pending` -> (settled with a taker)
 *   `approved_swap`; or `custody_rejected_swap`, `expired_swap`, `cancelled_swap`.
 *   `partner_txID` is optional for swaps (OpenAPI example `''`); when given it is idempotent per
 *   company, answering `existing`, for makes and takes alike, unless `SimulatorOptions.dedupe` is
 *   `transfers` (then a repeat is a new make or take).
 * - The quote is listed in the liquidity hub once `taker_pending` and published: at approval
 *   when `add_to_liquidity_hub` is true, or by POST liquidityhub `{tx_id}`. Publishing emits the
 *   engine event `hub` `{txID, status:'taker_pending'}` once. The listing hides quotes that are
 *   being taken (a pending take), expired, cancelled or settled. `owner` is true for the quoting
 *   company (company listing) or for any company of the partner's API account (`GET /liquidityhub`).
 * - take: `swap_id` (the quote's tx_id; POST with or without a trailing `/{tx_id}` in the path,
 *   the body rules) names a `taker_pending` quote of another company of the SAME API account
 *   (403 for another account's quote, spec section 8); one take at a time per quote (409).
 *   The taker's send wallet holds the quote's receive asset, its receive wallet the quote's send
 *   asset. The take is a transfer-out of `receive.amount` (+ fees held) from the taker's send
 *   wallet that needs BOTH the taker send wallet's transfer custody group (`ApproveSwapTake`
 *   actions, on the core client feeds) AND the company-level action approved with
 *   PUT /company/{company_id}/action/{action_id} (DELETE rejects it). The take answer carries
 *   `action_id`, and GET take/{tx_id} carries `companyActionID` and `companyActionStatus`.
 *   Take statuses: `pending_swap_take` -> `approved_swap_take`; `custody_rejected_swap_take`
 *   (a custodian or the company rejected: the quote returns to the hub), `expired_swap_take`,
 *   `cancelled_swap_take` (the maker cancelled).
 * - Ledger: a make writes the maker send wallet's `swapOut` entry (OpenAPI TxHistoryItem type)
 *   with status `pending` and no counterparty yet; a take writes the taker send wallet's
 *   `swapOut`, `pending`, counterparty = the maker's company. Both stay `pending` until the swap
 *   settles (a quote open for a taker has moved nothing), or become `rejected`, `expired` or
 *   `cancelled` in place with their transaction (custody.ts module comment).
 * - Settlement (both sides approved): holds and balances are re-checked, then the four legs move
 *   together: maker send wallet -(send.amount + fees), taker receive wallet +send.amount, taker
 *   send wallet -(receive.amount + fees), maker receive wallet +receive.amount. Both `swapOut`
 *   entries become `approved` (counterparty = the other company), `swapIn` entries are written
 *   in both funds, a wallets feed event per movement. If a check fails nothing moves (409).
 * - Expiry: the take shares the quote's `expires`; at expiry both close and every hold is released.
 */
import type { Engine } from './engine';
import { swapMakeOperations, type SwapMakeRequest, type SwapTakeRequest } from '../lib/api/v1/swap';
import { badRequest, conflict, forbidden, notFound } from './errors';
import { newChainTxId, newId } from './ids';
import * as net from './network';
import { closeTx, coveredQuote, custodyGroupOf, custodyTxView, existingTx, expireActions, futureExpires, ledgerFor, newCustodyFields, openCustody, ownWallet, recordApproval, releaseHold } from './custody';
import type { TransactionObject as Transaction } from '../lib/api/v1/transfer';
import type { ActionRecord, CompanyRecord, SwapRecord, SwapTakeRecord } from './model';

/** True when both companies belong to the same API account (absent `account` = the partner's). */
function sameAccount(a: CompanyRecord | undefined, b: CompanyRecord | undefined): boolean {
  return (a?.account ?? '') === (b?.account ?? '');
}

/**
 * POST /company/{company_id}/atomicswap/make.
 * @param txUrlBase e.g. `http://127.0.0.1:8780/api/v1/p` (the `tx_url` is the quote's GET URL).
 * @returns `{tx_id, tx_url, status: 'new' | 'existing'}` (OpenAPI SwapTxId).
 * @throws 404 unknown company or wallet; 400 wallet of another company, symbol mismatch, same
 *   asset on both sides, expires not in the future, insufficient balance, no custody group.
 */
export function createSwap(eng: Engine, companyId: string, input: SwapMakeRequest, txUrlBase: string): { tx_id: string; tx_url: string; status: 'new' | 'existing' } {
  const company = net.getCompany(eng, companyId);
  // The quote's GET URL, from the registry's path of that GET (lib/api/v1/swap.ts).
  const url = (id: string) => txUrlBase + swapMakeOperations.get.path.replace('{company_id}', encodeURIComponent(companyId)).replace('{tx_id}', encodeURIComponent(id));
  const existing = existingTx(eng, 'swapMake', companyId, input.partner_txID);
  if (existing) return { tx_id: existing, tx_url: url(existing), status: 'existing' };
  const send = ownWallet(eng, companyId, input.send_wallet_id, 'send_wallet_id');
  const receive = ownWallet(eng, companyId, input.receive_wallet_id, 'receive_wallet_id');
  if (input.send.symbol !== send.asset) throw badRequest(`send.symbol: must be ${send.asset}, the asset of send_wallet_id`);
  if (input.receive.symbol !== receive.asset) throw badRequest(`receive.symbol: must be ${receive.asset}, the asset of receive_wallet_id`);
  if (send.asset === receive.asset) throw badRequest('receive.symbol: must differ from send.symbol');
  const expires = futureExpires(eng, input.expires);
  const quote = coveredQuote(send, input.send.amount, 'send.amount');
  const group = custodyGroupOf(eng, send, 'custodygroup_tx', 'send_wallet_id');
  const tx: SwapRecord = {
    ...newCustodyFields(eng, companyId, send, quote, { expires, reference: input.reference, partner_txID: input.partner_txID }),
    kind: 'swapMake',
    receive_wallet_id: receive.wallet_id,
    receive_asset: receive.asset,
    receive_amount: input.receive.amount,
    add_to_liquidity_hub: input.add_to_liquidity_hub === true,
    hubAdded: 0,
    takeID: '',
    txStatus: 'pending_swap',
  };
  eng.putTx(tx);
  openCustody(eng, company, tx, group, 'ApproveSwap', { type: 'swapOut', counterpartyID: '', counterpartyName: '' }); // the taker is not known yet
  return { tx_id: tx.txID, tx_url: url(tx.txID), status: 'new' };
}

/** Publish a quote to the liquidity hub (once) and emit the hub event. */
function publish(eng: Engine, swap: SwapRecord, now: number): void {
  if (swap.hubAdded) return;
  eng.publishQuote(swap.txID, now);
  eng.emit('hub', { txID: swap.txID, status: 'taker_pending' });
}

/** The maker's custodians reached the threshold: the quote is open for a taker (and published when asked). */
export function swapApproved(eng: Engine, swap: SwapRecord, now: number): void {
  eng.setTxStatus(swap.txID, 'taker_pending');
  expireActions(eng, swap.actionIDs);
  eng.changed();
  if (swap.add_to_liquidity_hub) publish(eng, swap, now);
}

/**
 * POST /company/{company_id}/liquidityhub `{tx_id}`: publish an approved quote. Idempotent.
 * @throws 404 unknown company or quote of another company; 409 quote not `taker_pending`.
 */
export function addToHub(eng: Engine, companyId: string, txId: string): void {
  net.getCompany(eng, companyId);
  const swap = eng.state.swaps[txId];
  if (!swap || swap.company_id !== companyId) throw notFound(`tx_id: no swap quote ${txId} in company ${companyId}`);
  if (swap.txStatus !== 'taker_pending') throw conflict(`tx_id: swap ${txId} is ${swap.txStatus}; only an approved quote (taker_pending) can be published`);
  publish(eng, swap, eng.now());
}

/** Liquidity hub item (spec section 2). */
export interface HubItem {
  tx_id: string;
  send_asset: string;
  send_amount: number;
  receive_asset: string;
  receive_amount: number;
  owner: boolean;
  expires: number;
  added: number;
}

/**
 * GET /company/{company_id}/liquidityhub (owner = made by that company) or GET /liquidityhub
 * (companyId null: owner = made by a company of the partner's account) -> `{items}`, oldest first
 * (by `added`, ties in creation order). The published quotes come from the engine's index
 * (`Engine.hubQuoteIds`), not from a scan of every quote.
 * @throws 404 unknown company.
 */
export function hubItems(eng: Engine, companyId: string | null): { items: HubItem[] } {
  if (companyId !== null) net.getCompany(eng, companyId);
  const now = eng.now();
  const items = eng
    .hubQuoteIds()
    .map((id) => eng.state.swaps[id])
    .filter((s) => s.txStatus === 'taker_pending' && s.hubAdded > 0 && !s.takeID && s.expires > now)
    .map((s) => ({
      tx_id: s.txID,
      send_asset: s.asset,
      send_amount: s.netAmount,
      receive_asset: s.receive_asset,
      receive_amount: s.receive_amount,
      owner: companyId !== null ? s.company_id === companyId : !eng.state.companies[s.company_id]?.account,
      expires: s.expires,
      added: s.hubAdded,
    }));
  return { items };
}

/** GET make/{tx_id}: the Transaction object of the quote plus `swap` (the quote's terms, request names). */
export type SwapView = Transaction & {
  swap: {
    send_wallet_id: string;
    receive_wallet_id: string;
    send: { symbol: string; amount: number };
    receive: { symbol: string; amount: number };
    add_to_liquidity_hub: boolean;
    /** epoch seconds when published to the hub, 0 when not */
    added: number;
    /** tx id of the pending or settled take, '' when none */
    take_tx_id: string;
  };
};

/** Swap record -> view. `statusDetails.recipientAddress` is the taker's receive wallet once taken, '' before. */
export function swapView(eng: Engine, s: SwapRecord): SwapView {
  const take = s.takeID ? eng.state.swapTakes[s.takeID] : undefined;
  return {
    ...custodyTxView(eng, s, take?.receive_wallet_id ?? ''),
    swap: {
      send_wallet_id: s.wallet_id,
      receive_wallet_id: s.receive_wallet_id,
      send: { symbol: s.asset, amount: s.netAmount },
      receive: { symbol: s.receive_asset, amount: s.receive_amount },
      add_to_liquidity_hub: s.add_to_liquidity_hub,
      added: s.hubAdded,
      take_tx_id: s.takeID,
    },
  };
}

/** GET /company/{company_id}/atomicswap/make/{tx_id}. @throws 404 */
export function getSwap(eng: Engine, companyId: string, txId: string): SwapView {
  net.getCompany(eng, companyId);
  const s = eng.state.swaps[txId];
  if (!s || s.company_id !== companyId) throw notFound(`tx_id: no swap quote ${txId} in company ${companyId}`);
  return swapView(eng, s);
}

/** Close a pending take and free its quote (the quote goes back to the hub when still open). */
function closeTake(eng: Engine, take: SwapTakeRecord, status: SwapTakeRecord['txStatus'], now: number): void {
  closeTx(eng, take, status, now);
  expireActions(eng, [take.companyActionID]);
  const swap = eng.state.swaps[take.swap_id];
  if (swap && swap.takeID === take.txID) swap.takeID = '';
  eng.changed();
}

/**
 * DELETE /company/{company_id}/atomicswap/make/{tx_id}: cancel a quote that is pending custody or
 * open for a taker; releases its hold, removes it from the hub, and cancels a pending take.
 * @throws 404 unknown; 409 already settled, rejected, expired or cancelled.
 */
export function cancelSwap(eng: Engine, companyId: string, txId: string): void {
  net.getCompany(eng, companyId);
  const s = eng.state.swaps[txId];
  if (!s || s.company_id !== companyId) throw notFound(`tx_id: no swap quote ${txId} in company ${companyId}`);
  if (s.txStatus !== 'pending_swap' && s.txStatus !== 'taker_pending') throw conflict(`tx_id: swap ${txId} is ${s.txStatus}`);
  const now = eng.now();
  const take = s.takeID ? eng.state.swapTakes[s.takeID] : undefined;
  if (take && take.txStatus === 'pending_swap_take') closeTake(eng, take, 'cancelled_swap_take', now);
  closeTx(eng, s, 'cancelled_swap', now);
}

/** Expire a quote (and its pending take). */
export function expireSwap(eng: Engine, s: SwapRecord, now: number): void {
  const take = s.takeID ? eng.state.swapTakes[s.takeID] : undefined;
  if (take && take.txStatus === 'pending_swap_take') closeTake(eng, take, 'expired_swap_take', now);
  closeTx(eng, s, 'expired_swap', now);
}

/** Expire a pending take. */
export function expireTake(eng: Engine, t: SwapTakeRecord, now: number): void {
  closeTake(eng, t, 'expired_swap_take', now);
}

/** A custodian or the company rejected the take: it closes and the quote is free again. */
export function rejectTake(eng: Engine, t: SwapTakeRecord, now: number): void {
  closeTake(eng, t, 'custody_rejected_swap_take', now);
}

/**
 * POST /company/{company_id}/atomicswap/take[/{tx_id}].
 * @returns `{tx_id, status: 'new' | 'existing', action_id}`: `action_id` is the company-level
 *   action to approve with PUT /company/{company_id}/action/{action_id}.
 * @throws 404 unknown company, quote or wallet; 403 quote of another API account; 400 own quote,
 *   wallet of another company or with the wrong asset, insufficient balance, no custody group;
 *   409 quote not open (not approved yet, being taken, settled, expired or cancelled).
 */
export function takeSwap(eng: Engine, companyId: string, input: SwapTakeRequest): { tx_id: string; status: 'new' | 'existing'; action_id: string } {
  const company = net.getCompany(eng, companyId);
  const existing = existingTx(eng, 'swapTake', companyId, input.partner_txID);
  if (existing) return { tx_id: existing, status: 'existing', action_id: eng.state.swapTakes[existing]?.companyActionID ?? '' };
  const swap = eng.state.swaps[input.swap_id];
  if (!swap) throw notFound(`swap_id: no swap quote ${input.swap_id}`);
  if (!sameAccount(eng.state.companies[swap.company_id], company)) throw forbidden(`swap_id: quote ${swap.txID} belongs to another API account; maker and taker must belong to the same API account`);
  if (swap.company_id === companyId) throw badRequest(`swap_id: quote ${swap.txID} was made by company ${companyId} itself`);
  const now = eng.now();
  if (swap.txStatus !== 'taker_pending' || swap.expires <= now) throw conflict(`swap_id: swap ${swap.txID} is ${swap.txStatus}, not open for a taker (taker_pending)`);
  if (swap.takeID) throw conflict(`swap_id: swap ${swap.txID} is already being taken (take ${swap.takeID})`);
  const send = ownWallet(eng, companyId, input.send_wallet_id, 'send_wallet_id');
  const receive = ownWallet(eng, companyId, input.receive_wallet_id, 'receive_wallet_id');
  if (send.asset !== swap.receive_asset) throw badRequest(`send_wallet_id: must hold ${swap.receive_asset} (the quote's receive asset), holds ${send.asset}`);
  if (receive.asset !== swap.asset) throw badRequest(`receive_wallet_id: must hold ${swap.asset} (the quote's send asset), holds ${receive.asset}`);
  const quote = coveredQuote(send, swap.receive_amount, 'send_wallet_id');
  const group = custodyGroupOf(eng, send, 'custodygroup_tx', 'send_wallet_id');
  const companyAction: ActionRecord = {
    id: newId(),
    type: 'ApproveSwapTake',
    status: 'pending',
    timestamp: now,
    expireTime: swap.expires,
    txID: '',
    custodianID: companyId,
    custodianType: 'company',
  };
  const take: SwapTakeRecord = {
    ...newCustodyFields(eng, companyId, send, quote, { expires: swap.expires, reference: input.reference, partner_txID: input.partner_txID }),
    kind: 'swapTake',
    swap_id: swap.txID,
    receive_wallet_id: receive.wallet_id,
    companyActionID: companyAction.id,
    txStatus: 'pending_swap_take',
  };
  companyAction.txID = take.txID;
  eng.putAction(companyAction);
  eng.putTx(take);
  swap.takeID = take.txID;
  openCustody(eng, company, take, group, 'ApproveSwapTake', { type: 'swapOut', counterpartyID: swap.company_id, counterpartyName: eng.state.companies[swap.company_id]?.name ?? '' });
  return { tx_id: take.txID, status: 'new', action_id: companyAction.id };
}

/** Why a take cannot settle now, or undefined when it can (holds and balances re-checked). */
function settleProblem(eng: Engine, take: SwapTakeRecord): string | undefined {
  const swap = eng.state.swaps[take.swap_id];
  if (!swap || swap.txStatus !== 'taker_pending' || swap.takeID !== take.txID) return `swap ${take.swap_id} is no longer open for this take`;
  if (!swap.held || !take.held) return 'a hold is missing';
  const w = eng.state.wallets;
  const makerSend = w[swap.wallet_id];
  const makerReceive = w[swap.receive_wallet_id];
  const takerSend = w[take.wallet_id];
  const takerReceive = w[take.receive_wallet_id];
  if (!makerSend || !makerReceive || !takerSend || !takerReceive) return 'a wallet of the swap no longer exists';
  if (makerSend.balance < swap.amount || makerSend.held < swap.amount) return `maker wallet ${makerSend.wallet_id} cannot cover ${swap.amount}`;
  if (takerSend.balance < take.amount || takerSend.held < take.amount) return `taker wallet ${takerSend.wallet_id} cannot cover ${take.amount}`;
  if (!Number.isSafeInteger(makerReceive.balance + take.netAmount) || !Number.isSafeInteger(takerReceive.balance + swap.netAmount)) return 'a balance would overflow';
  return undefined;
}

/** Both sides approved: move the four legs at once (checked first: all or nothing); both `swapOut` entries approved, both `swapIn` written. */
function settleSwap(eng: Engine, take: SwapTakeRecord, now: number): void {
  const problem = settleProblem(eng, take);
  if (problem) throw conflict(`action_id: the swap cannot settle: ${problem}`);
  const swap = eng.state.swaps[take.swap_id];
  const w = eng.state.wallets;
  const makerSend = w[swap.wallet_id];
  const makerReceive = w[swap.receive_wallet_id];
  const takerSend = w[take.wallet_id];
  const takerReceive = w[take.receive_wallet_id];
  const maker = eng.state.companies[swap.company_id];
  const taker = eng.state.companies[take.company_id];
  releaseHold(eng, swap);
  releaseHold(eng, take);
  eng.setTxStatus(swap.txID, 'approved_swap');
  eng.setTxStatus(take.txID, 'approved_swap_take');
  const makerLeg = newChainTxId();
  const takerLeg = newChainTxId();
  net.moveBalance(eng, makerSend, 'out', { tx_id: swap.txID, chain_tx_id: makerLeg, status: swap.txStatus, amount: swap.amount, fee: swap.fees }, now);
  net.moveBalance(eng, takerReceive, 'in', { tx_id: take.txID, chain_tx_id: makerLeg, status: take.txStatus, amount: swap.netAmount, fee: 0 }, now);
  net.moveBalance(eng, takerSend, 'out', { tx_id: take.txID, chain_tx_id: takerLeg, status: take.txStatus, amount: take.amount, fee: take.fees }, now);
  net.moveBalance(eng, makerReceive, 'in', { tx_id: swap.txID, chain_tx_id: takerLeg, status: swap.txStatus, amount: take.netAmount, fee: 0 }, now);
  const cp = (c: CompanyRecord | undefined) => ({ counterpartyID: c?.company_id ?? '', counterpartyName: c?.name ?? '' });
  ledgerFor(eng, makerSend, swap, { type: 'swapOut', chainTxID: makerLeg, amount: swap.amount, fees: swap.fees, netAmount: swap.netAmount, ...cp(taker), now });
  ledgerFor(eng, makerReceive, swap, { type: 'swapIn', chainTxID: takerLeg, amount: take.netAmount, fees: 0, netAmount: take.netAmount, ...cp(taker), now });
  ledgerFor(eng, takerSend, take, { type: 'swapOut', chainTxID: takerLeg, amount: take.amount, fees: take.fees, netAmount: take.netAmount, ...cp(maker), now });
  ledgerFor(eng, takerReceive, take, { type: 'swapIn', chainTxID: makerLeg, amount: swap.netAmount, fees: 0, netAmount: swap.netAmount, ...cp(maker), now });
  closeTx(eng, take, 'approved_swap_take', now);
  closeTx(eng, swap, 'approved_swap', now);
}

/** True when the take's custodians reached the threshold and the company approved. */
function takeReady(eng: Engine, take: SwapTakeRecord): boolean {
  return take.approvals.length >= take.thresholdRequired && eng.state.actions[take.companyActionID]?.status === 'approved';
}

/**
 * A custodian of the taker approves an `ApproveSwapTake` action (called by transactions.ts).
 * Settles when this completes both approvals; refuses (409, nothing recorded) when it would
 * complete them but the swap cannot settle.
 */
export function takeCustodianApproves(eng: Engine, take: SwapTakeRecord, action: ActionRecord, approver: Parameters<typeof recordApproval>[3], now: number): void {
  const companyApproved = eng.state.actions[take.companyActionID]?.status === 'approved';
  if (companyApproved && take.approvals.length + 1 >= take.thresholdRequired) {
    const problem = settleProblem(eng, take);
    if (problem) throw conflict(`action_id: the swap cannot settle: ${problem}`);
  }
  recordApproval(eng, take, action, approver, now);
  if (takeReady(eng, take)) settleSwap(eng, take, now);
}

/**
 * PUT (approve) or DELETE (reject) /company/{company_id}/action/{action_id}: the company-level
 * approval of its swap take.
 * @throws 404 unknown company or action (or an action that is not this company's); 409 action or take no longer pending, or the swap cannot settle.
 */
export function companyDecide(eng: Engine, companyId: string, actionId: string, approve: boolean): void {
  net.getCompany(eng, companyId);
  const action = eng.state.actions[actionId];
  if (!action || action.custodianType !== 'company' || action.custodianID !== companyId) throw notFound(`action_id: no action ${actionId} of company ${companyId}`);
  if (action.status !== 'pending') throw conflict(`action_id: action ${actionId} is ${action.status}, not pending`);
  const take = eng.state.swapTakes[action.txID];
  if (!take || take.txStatus !== 'pending_swap_take') throw conflict(`action_id: take ${action.txID} is ${take?.txStatus ?? 'unknown'}`);
  const now = eng.now();
  if (!approve) {
    eng.setActionStatus(action.id, 'rejected');
    rejectTake(eng, take, now);
    return;
  }
  if (take.approvals.length >= take.thresholdRequired) {
    const problem = settleProblem(eng, take);
    if (problem) throw conflict(`action_id: the swap cannot settle: ${problem}`);
  }
  eng.setActionStatus(action.id, 'approved');
  eng.changed();
  if (takeReady(eng, take)) settleSwap(eng, take, now);
}

/** GET take/{tx_id}: the Transaction object of the take plus its quote and company action. */
export type TakeView = Transaction & {
  swapID: string;
  companyActionID: string;
  companyActionStatus: string;
};

/** GET /company/{company_id}/atomicswap/take/{tx_id}. `statusDetails.recipientAddress` is the maker's receive wallet. @throws 404 */
export function getTake(eng: Engine, companyId: string, txId: string): TakeView {
  net.getCompany(eng, companyId);
  const t = eng.state.swapTakes[txId];
  if (!t || t.company_id !== companyId) throw notFound(`tx_id: no swap take ${txId} in company ${companyId}`);
  return takeView(eng, t);
}

/** Take record -> {@link TakeView}. */
export function takeView(eng: Engine, t: SwapTakeRecord): TakeView {
  const swap = eng.state.swaps[t.swap_id];
  return {
    ...custodyTxView(eng, t, swap?.receive_wallet_id ?? ''),
    swapID: t.swap_id,
    companyActionID: t.companyActionID,
    companyActionStatus: eng.state.actions[t.companyActionID]?.status ?? '',
  };
}

/** Account id of the simulated foreign API account (control endpoint `POST /_simulator/foreign/quote`). */
export const FOREIGN_ACCOUNT = 'foreign';

/** Body of `POST /_simulator/foreign/quote`. */
export interface ForeignQuoteInput {
  send: { symbol: string; amount: number };
  receive: { symbol: string; amount: number };
  /** epoch seconds; default one hour from the business clock */
  expires?: number;
}

/**
 * Stand-in for another partner API account: on first use creates the company "Foreign Markets
 * Ltd" (owned by account {@link FOREIGN_ACCOUNT}, so the partner's key gets 403 on it) with its
 * own core client custodian and a fund holding 100 of each test asset; then makes a quote from
 * it, approves it by its core client and publishes it to the liquidity hub (hub event). The
 * partner can see the quote in the hub (owner false) but its take is refused with 403 (spec
 * section 8: maker and taker belong to the same API account).
 * @returns `{company_id, core_client_id, tx_id}` (the foreign company, its core client, the quote).
 * @throws 400 unknown or equal assets, expires in the past.
 */
export function createForeignQuote(eng: Engine, input: ForeignQuoteInput, txUrlBase: string): { company_id: string; core_client_id: string; tx_id: string } {
  const assets = ['BTC-TESTNET', 'ETH-TESTNET', 'BTC', 'ETH'];
  for (const f of ['send', 'receive'] as const) if (!assets.includes(input[f].symbol)) throw badRequest(`${f}.symbol: unknown asset ${input[f].symbol}`);
  return eng.asAccount(FOREIGN_ACCOUNT, () => {
    let company = Object.values(eng.state.companies).find((c) => c.account === FOREIGN_ACCOUNT);
    if (!company) {
      const created = net.createCompany(eng, { name: 'Foreign Markets Ltd', country: 'CH', domain: 'foreign-markets.example', ref: 'foreign account' });
      company = eng.state.companies[created.company_id]; // written through the state document
      company.account = FOREIGN_ACCOUNT;
      const client = net.createCoreClient(eng, 'Foreign approver');
      net.addTrustedParty(eng, company.company_id, { address: client.id, type: 'core-client' });
      const group = { threshold: 1, members: [client.id] };
      const fund = net.createFund(eng, company.company_id, { name: 'Foreign fund', custodygroup_withdraw: group, custodygroup_tx: group, wallets: assets.map((asset) => ({ name: `Foreign ${asset} wallet`, asset })) });
      for (const w of fund.wallets) net.faucetDeposit(eng, w, eng.state.wallets[w].asset.startsWith('ETH') ? 100_000_000_000 : 10_000_000_000);
    }
    const cid = company.company_id;
    const wallets = eng
      .walletIdsOfCompany(cid)
      .map((id) => eng.state.wallets[id])
      .filter((w) => w !== undefined && w.company_id === cid);
    const walletOf = (asset: string) => wallets.find((w) => w.asset === asset)!;
    const made = createSwap(
      eng,
      cid,
      {
        send_wallet_id: walletOf(input.send.symbol).wallet_id,
        receive_wallet_id: walletOf(input.receive.symbol).wallet_id,
        expires: input.expires ?? eng.now() + 3600,
        reference: 'foreign quote',
        partner_txID: '',
        send: input.send,
        receive: input.receive,
        add_to_liquidity_hub: true,
      },
      txUrlBase,
    );
    const swap = eng.state.swaps[made.tx_id];
    const action = eng.state.actions[swap.actionIDs[0]];
    const now = eng.now();
    if (recordApproval(eng, swap, action, { firstName: '', lastName: '', userID: action.custodianID, username: '' }, now)) swapApproved(eng, swap, now);
    return { company_id: cid, core_client_id: action.custodianID, tx_id: made.tx_id };
  });
}
