/**
 * Transfers, custodian actions, approvals and expiry for every kind of custody transaction.
 * Sources: spec sections 2 (Transaction object, Action), 3 (states and moves), 4 (Transfers;
 * Core clients and actions), 6 (core client feed), OpenAPI ActionDetailApproveTransfer /
 * ActionDetailApproveWithdraw / ActionDetailApproveNewWalletConnect.
 *
 * The shared machinery (holds, actions, approval records, balance movements, ledger, Transaction
 * object) is in custody.ts; withdrawals.ts, swaps.ts and exchanges.ts hold the other kinds' rules.
 * This module routes an action's decision and a transaction's expiry to its kind.
 *
 * Transfer semantics chosen by the simulator:
 * - POST transfer: idempotent per company on `partner_txID` (a repeat answers `existing` with the
 *   original tx_id, before any other check; spec section 3, whatever `SimulatorOptions.dedupe`
 *   says). Otherwise the origin wallet (id or short code) must
 *   belong to the company, the destination (id or short code) must exist, differ from the origin
 *   and hold the same asset, `send.symbol` must be the wallets' asset, `expires` must be later
 *   than the business clock, and the origin's available balance (balance - held) must cover
 *   send.amount + fees.
 * - Holds: amount + fees are reserved on the origin wallet at creation (so pending transfers
 *   cannot overspend) and released on reject or expiry; at approval the origin is debited
 *   amount + fees and the destination credited send.amount.
 * - `thresholdRequired` and the custodians come from the origin wallet's transfer custody group
 *   (snapshotted at creation); one action per custodian. Core clients see theirs on the feed and
 *   in GET actions; human users act through the control endpoints.
 * - An approval adds an approver record; at the threshold the transfer becomes
 *   `approved_transfer`. One rejection makes it `custody_rejected_transfer` (a veto). Passing
 *   `expires` makes it `expired_transfer`. When a transfer leaves pending, the actions still
 *   pending become `expired` (no longer actionable). The same rules hold for withdrawals, swap
 *   quotes and swap takes with their own status names.
 * - Ledger: the origin's `transferOut` entry is written at creation with status `pending`
 *   (counterparty = the destination wallet's company) and becomes `approved` (with its
 *   chainTxID), `rejected` or `expired` in place; the destination's `transferIn` entry is
 *   written at approval (custody.ts module comment).
 */
import type { Engine } from './engine';
import type { TransactionObject as Transaction, TransferRequest } from '../lib/api/v1/transfer';
import type { Action } from '../lib/api/v1/core-client';
import { badRequest, conflict, forbidden, notFound } from './errors';
import { newChainTxId } from './ids';
import { findUser, getCompany, getCoreClient, getWallet, moveBalance } from './network';
import {
  closeTx,
  companyTx,
  coveredQuote,
  custodyGroupOf,
  custodyTxView,
  existingTx,
  futureExpires,
  ledgerFor,
  newCustodyFields,
  openCustody,
  ownWallet,
  recordApproval,
  type ApproverInfo,
} from './custody';
import { settleWithdrawal, withdrawalView } from './withdrawals';
import { expireSwap, expireTake, rejectTake, swapApproved, swapView, takeCustodianApproves, takeView } from './swaps';
import { connectionDetails, decideConnection } from './exchanges';
import { isLive, type ActionRecord, type CustodyTxRecord, type SwapRecord, type SwapTakeRecord, type TransferRecord, type WithdrawalRecord } from './model';


/** Who acts on an action. */
export type Actor = { type: 'core-client'; id: string } | { type: 'user'; id: string };

/** The kind of a custody record (records of older state files have no `kind`: transfers). */
function kindOf(tx: CustodyTxRecord): NonNullable<CustodyTxRecord['kind']> {
  return tx.kind ?? 'transfer';
}

/** Final status names per kind. */
const CLOSED = {
  transfer: { rejected: 'custody_rejected_transfer', expired: 'expired_transfer' },
  withdrawal: { rejected: 'custody_rejected_withdrawal', expired: 'expired_withdrawal' },
  swapMake: { rejected: 'custody_rejected_swap', expired: 'expired_swap' },
  swapTake: { rejected: 'custody_rejected_swap_take', expired: 'expired_swap_take' },
} as const;

// ---------------------------------------------------------------- expiry

/**
 * Expire every live transaction (pending custody, or a quote open for a taker) whose `expires`
 * has passed on the business clock: final status `expired_*`, its pending actions `expired`, its
 * hold released (a quote also leaves the hub; its pending take expires with it). Cheap when
 * nothing is due: it compares the clock with the earliest expiry first; otherwise it takes the
 * due transactions from the engine's expiry heap (`Engine.takeDueExpiries`, earliest first),
 * without walking the pending ones that are not due.
 * @returns the number of transactions expired.
 */
export function applyExpiry(eng: Engine): number {
  const now = eng.now();
  if (now < eng.nextExpiry) return 0;
  let count = 0;
  for (const id of eng.takeDueExpiries(now)) {
    const tx = eng.findTx(id);
    if (!tx || !isLive(tx)) continue; // closed by an earlier expiry of this batch (a quote's take)
    expire(eng, tx, now);
    count++;
  }
  return count;
}

function expire(eng: Engine, tx: CustodyTxRecord, now: number): void {
  const kind = kindOf(tx);
  if (kind === 'swapMake') expireSwap(eng, tx as SwapRecord, now);
  else if (kind === 'swapTake') expireTake(eng, tx as SwapTakeRecord, now);
  else closeTx(eng, tx, CLOSED[kind].expired, now);
}

// ---------------------------------------------------------------- transfers

/**
 * POST /company/{company_id}/transfer.
 * @returns `{tx_id, status: 'new' | 'existing'}`.
 * @throws 404 unknown company or wallet (reason names `wallet_id` or `counterparty_wallet_address`);
 *   400 wallet of another company, same wallet twice, asset mismatch, `expires` not in the future,
 *   insufficient available balance, no custodians; all naming the field.
 */
export function createTransfer(eng: Engine, companyId: string, input: TransferRequest): { tx_id: string; status: 'new' | 'existing' } {
  const company = getCompany(eng, companyId);
  const existing = existingTx(eng, 'transfer', companyId, input.partner_txID);
  if (existing) return { tx_id: existing, status: 'existing' };

  const origin = ownWallet(eng, companyId, input.wallet_id, 'wallet_id');
  const dest = getWallet(eng, input.counterparty_wallet_address, 'counterparty_wallet_address');
  if (dest.wallet_id === origin.wallet_id) throw badRequest('counterparty_wallet_address: must differ from wallet_id');
  if (dest.asset !== origin.asset) throw badRequest(`counterparty_wallet_address: holds ${dest.asset}, the origin wallet holds ${origin.asset}`);
  if (input.send.symbol !== origin.asset) throw badRequest(`send.symbol: must be ${origin.asset}, the asset of the origin wallet`);
  const expires = futureExpires(eng, input.expires);
  const quote = coveredQuote(origin, input.send.amount, 'send.amount');
  const group = custodyGroupOf(eng, origin, 'custodygroup_tx', 'wallet_id');

  const tx: TransferRecord = {
    ...newCustodyFields(eng, companyId, origin, quote, { expires, reference: input.reference, benefitOf: input.benefit_of, accountNo: input.account_no, partner_txID: input.partner_txID }),
    recipient_wallet_id: dest.wallet_id,
    recipient_fund_id: dest.fund_id,
    recipient_company_id: dest.company_id,
    txStatus: 'pending_transfer',
  };
  eng.putTx(tx);
  openCustody(eng, company, tx, group, 'ApproveTransfer', { type: 'transferOut', counterpartyID: dest.company_id, counterpartyName: eng.state.companies[dest.company_id]?.name ?? '' });
  return { tx_id: tx.txID, status: 'new' };
}

/**
 * Threshold reached: move the money, mark approved, update the origin's pending `transferOut`
 * ledger entry (approved) and write the destination's `transferIn`, with a wallets feed event each.
 */
function settleTransfer(eng: Engine, tx: TransferRecord, now: number): void {
  const origin = eng.state.wallets[tx.wallet_id];
  const dest = eng.state.wallets[tx.recipient_wallet_id];
  const fromCompany = eng.state.companies[tx.company_id];
  const toCompany = eng.state.companies[tx.recipient_company_id];
  closeTx(eng, tx, 'approved_transfer', now); // releases the hold first
  const chainTxID = newChainTxId();
  moveBalance(eng, origin, 'out', { tx_id: tx.txID, chain_tx_id: chainTxID, status: tx.txStatus, amount: tx.amount, fee: tx.fees }, now);
  moveBalance(eng, dest, 'in', { tx_id: tx.txID, chain_tx_id: chainTxID, status: tx.txStatus, amount: tx.netAmount, fee: 0 }, now);
  ledgerFor(eng, origin, tx, { type: 'transferOut', chainTxID, amount: tx.amount, fees: tx.fees, netAmount: tx.netAmount, counterpartyID: tx.recipient_company_id, counterpartyName: toCompany?.name ?? '', now });
  ledgerFor(eng, dest, tx, { type: 'transferIn', chainTxID, amount: tx.netAmount, fees: 0, netAmount: tx.netAmount, counterpartyID: tx.company_id, counterpartyName: fromCompany?.name ?? '', now });
}

// ---------------------------------------------------------------- approve / reject

function decide(eng: Engine, action: ActionRecord, approve: boolean, approver: ApproverInfo): void {
  applyExpiry(eng);
  if (action.status !== 'pending') throw conflict(`action_id: action ${action.id} is ${action.status}, not pending`);
  if (action.type === 'ApproveNewWalletConnect') {
    decideConnection(eng, action, approve);
    return;
  }
  const tx = eng.findTx(action.txID);
  if (!tx || !tx.txStatus.startsWith('pending_')) throw conflict(`action_id: transaction ${action.txID} is ${tx?.txStatus ?? 'unknown'}`);
  const now = eng.now();
  const kind = kindOf(tx);
  if (!approve) {
    eng.setActionStatus(action.id, 'rejected');
    if (kind === 'swapTake') rejectTake(eng, tx as SwapTakeRecord, now);
    else closeTx(eng, tx, CLOSED[kind].rejected, now);
    return;
  }
  if (kind === 'swapTake') {
    takeCustodianApproves(eng, tx as SwapTakeRecord, action, approver, now);
    return;
  }
  if (!recordApproval(eng, tx, action, approver, now)) return;
  if (kind === 'transfer') settleTransfer(eng, tx as TransferRecord, now);
  else if (kind === 'withdrawal') settleWithdrawal(eng, tx as WithdrawalRecord, now);
  else swapApproved(eng, tx as SwapRecord, now);
}

/**
 * PUT (approve) or DELETE (reject) /coreclient/{client_id}/action/{action_id}, for every action
 * type (transfers, withdrawals, swap quotes, swap takes, wallet connection requests).
 * @throws 404 unknown client or action; 403 the action belongs to another custodian; 409 the
 *   action or its transaction is no longer pending.
 */
export function coreClientDecide(eng: Engine, clientId: string, actionId: string, approve: boolean): void {
  getCoreClient(eng, clientId);
  const action = eng.state.actions[actionId];
  if (!action) throw notFound(`action_id: no action ${actionId}`);
  if (action.custodianID !== clientId) throw forbidden(`action_id: action ${actionId} belongs to another custodian`);
  decide(eng, action, approve, { firstName: '', lastName: '', userID: clientId, username: '' });
}

/**
 * A human custodian approves or rejects a custody transaction of any kind (control endpoints
 * `POST /_simulator/tx/{tx_id}/approve|reject {user_id}`, and the older
 * `POST /_simulator/transfer/{tx_id}/approve|reject`; `user_id` may be the user id, e-mail or
 * username).
 * @param kindName the word used in error texts (`transfer` for the older endpoints).
 * @returns the transaction's view after the decision (Transaction object; swap quotes and takes
 *   their GET views).
 * @throws 404 unknown transaction or user; 403 the user is not a custodian of it; 409 not pending.
 */
export function userDecide(eng: Engine, txId: string, userIdOrEmail: string, approve: boolean, kindName = 'transfer'): Transaction {
  applyExpiry(eng);
  const tx = kindName === 'transfer' ? eng.state.transfers[txId] : eng.findTx(txId);
  if (!tx) throw notFound(`tx_id: no ${kindName} ${txId}`);
  const user = findUser(eng, userIdOrEmail);
  if (!user) throw notFound(`user_id: no user ${userIdOrEmail}`);
  const action = tx.actionIDs.map((id) => eng.state.actions[id]).find((a) => a && a.custodianID === user.id);
  if (!action) throw forbidden(`user_id: ${user.email} is not a custodian of ${kindName} ${txId}`);
  decide(eng, action, approve, { firstName: user.firstName, lastName: user.lastName, userID: user.id, username: user.username });
  return txView(eng, tx);
}

// ---------------------------------------------------------------- views

/** The view of any custody transaction (GET answer of its kind). */
export function txView(eng: Engine, tx: CustodyTxRecord): Transaction {
  switch (kindOf(tx)) {
    case 'withdrawal':
      return withdrawalView(eng, tx as WithdrawalRecord);
    case 'swapMake':
      return swapView(eng, tx as SwapRecord);
    case 'swapTake':
      return takeView(eng, tx as SwapTakeRecord);
    default:
      return transactionView(eng, tx as TransferRecord);
  }
}

/** Transfer record -> Transaction object (`statusDetails.recipientAddress` is the destination wallet id). */
export function transactionView(eng: Engine, tx: TransferRecord): Transaction {
  return custodyTxView(eng, tx, tx.recipient_wallet_id);
}

/** GET /company/{company_id}/transfer/{tx_id}. @throws 404 unknown company or transfer not of that company. */
export function getTransfer(eng: Engine, companyId: string, txId: string): Transaction {
  return transactionView(eng, companyTx(eng, eng.state.transfers, 'transfer', companyId, txId));
}

/**
 * Action -> core client feed message of spec section 6: `{coreClientID, expireTime, id, status:
 * 'pending', timestamp, type}` (lib's Action with `coreClientID`, no `details`).
 */
export function feedMessage(a: ActionRecord): Action {
  return { coreClientID: a.custodianID, expireTime: a.expireTime, id: a.id, status: 'pending', timestamp: a.timestamp, type: a.type };
}

/** Action summary `{id, type, status, timestamp, expireTime}` (spec section 2 "Action"): lib's Action without `coreClientID` and `details`. */
function summary(a: ActionRecord): Action {
  return { id: a.id, type: a.type, status: a.status, timestamp: a.timestamp, expireTime: a.expireTime };
}

/**
 * Pending actions of a core client, oldest first (by `timestamp`, ties in creation order), read
 * through the engine's index of pending actions per custodian (`Engine.pendingActionIds`): no
 * scan of every action. Due expiries are applied first.
 */
export function pendingActionsOf(eng: Engine, clientId: string): ActionRecord[] {
  applyExpiry(eng);
  return eng.pendingActionIds(clientId).map((id) => eng.state.actions[id]);
}

/** GET /coreclient/{client_id}/actions -> `{count, actions}` (pending only). @throws 404 unknown client */
export function listActions(eng: Engine, clientId: string): { count: number; actions: Action[] } {
  getCoreClient(eng, clientId);
  const actions = pendingActionsOf(eng, clientId).map(summary);
  return { count: actions.length, actions };
}

/**
 * GET /coreclient/{client_id}/action/{action_id} -> action + `coreClientID` + `details`
 * (OpenAPI ActionDetailApproveTransfer field names).
 * @throws 404 unknown client or action; 403 the action belongs to another custodian.
 */
export function getAction(eng: Engine, clientId: string, actionId: string): Record<string, unknown> {
  getCoreClient(eng, clientId);
  applyExpiry(eng);
  const a = eng.state.actions[actionId];
  if (!a) throw notFound(`action_id: no action ${actionId}`);
  if (a.custodianID !== clientId) throw forbidden(`action_id: action ${actionId} belongs to another custodian`);
  return { ...summary(a), coreClientID: clientId, details: actionDetails(eng, a) };
}

/** `txType` of an action's details per kind (a swap quote's is `swap`). */
const TX_TYPE = { transfer: 'transfer', withdrawal: 'withdrawal', swapMake: 'swap', swapTake: 'swapTake' } as const;

/**
 * The `details` of an action (spec section 2 detail fields; OpenAPI ActionDetailApprove*):
 * for a wallet connection request `{clientData, wallet}` (OpenAPI ActionDetailApproveNewWalletConnect), otherwise the
 * transaction's fields. `recipientAddress` is the destination wallet id of a transfer, the L1
 * address of a withdrawal, the maker's receive wallet for a swap take, '' for a swap quote;
 * `recipientAddressName` the recipient company's name or the whitelist entry's name.
 */
export function actionDetails(eng: Engine, a: ActionRecord): Record<string, unknown> {
  if (a.type === 'ApproveNewWalletConnect') return connectionDetails(eng, a);
  const tx = eng.findTx(a.txID);
  if (!tx) return {};
  const from = eng.state.companies[tx.company_id];
  const kind = kindOf(tx);
  let recipientAddress = '';
  let recipientAddressName = '';
  if (kind === 'transfer') {
    const t = tx as TransferRecord;
    // Spec section 2 names these recipientAddress / recipientAddressName (the OpenAPI transfer
    // schema says recipientID / recipientName); the spec rules. For a transfer the recipient
    // is an L2 wallet: its id, and the name of the company that holds it.
    recipientAddress = t.recipient_wallet_id;
    recipientAddressName = eng.state.companies[t.recipient_company_id]?.name ?? '';
  } else if (kind === 'withdrawal') {
    const w = tx as WithdrawalRecord;
    recipientAddress = w.address;
    recipientAddressName = w.addressName;
  } else if (kind === 'swapTake') {
    const swap = eng.state.swaps[(tx as SwapTakeRecord).swap_id];
    recipientAddress = swap?.receive_wallet_id ?? '';
    recipientAddressName = swap ? (eng.state.companies[swap.company_id]?.name ?? '') : '';
  }
  return {
    txType: TX_TYPE[kind],
    txID: tx.txID,
    asset: tx.asset,
    amount: tx.amount,
    fees: tx.fees,
    netAmount: tx.netAmount,
    reference: tx.reference,
    benefitOf: tx.benefitOf,
    accountNo: tx.accountNo,
    companyID: tx.company_id,
    fundID: tx.fund_id,
    initiatedTime: tx.initiatedTimestamp,
    expires: tx.expires,
    recipientAddress,
    recipientAddressName,
    initiatedBy: tx.company_id,
    initiatorName: from?.name ?? '',
    initiatorType: 'company',
  };
}
