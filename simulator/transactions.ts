/**
 * Transfers, custodian actions and expiry. Sources: spec sections 2 (Transaction object,
 * Action), 3 (states and moves), 4 (Transfers; Core clients and actions), 6 (core client feed),
 * OpenAPI ActionDetailApproveTransfer.
 *
 * Semantics chosen by the simulator:
 * - POST transfer: idempotent per company on `partner_txID` (a repeat answers `existing` with the
 *   original tx_id, before any other check). Otherwise the origin wallet (id or short code) must
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
 *   pending become `expired` (no longer actionable).
 */
import type { Engine } from './engine';
import { badRequest, conflict, forbidden, notFound } from './errors';
import { feeFor, isSafeQuote } from './assets';
import { newChainTxId, newId } from './ids';
import { findUser, getCompany, getCoreClient, getWallet, writeLedger } from './network';
import type { ActionRecord, ApproverRecord, LedgerEntry, TransferRecord, TransferStatus } from './state';

/** Transfer request body (spec section 4, Transfers); shape checked by validation.ts. */
export interface TransferInput {
  wallet_id: string;
  counterparty_wallet_address: string;
  /** epoch seconds, as a number or a string of digits */
  expires: number | string;
  benefit_of: string;
  account_no: string;
  reference: string;
  partner_txID: string;
  send: { symbol: string; amount: number };
}

/** Who acts on an action. */
export type Actor = { type: 'core-client'; id: string } | { type: 'user'; id: string };

// ---------------------------------------------------------------- expiry

/**
 * Expire every pending transfer whose `expires` has passed on the business clock (status
 * `expired_transfer`, its pending actions `expired`, its hold released). Cheap when nothing is
 * due: it compares the clock with the earliest pending expiry first.
 * @returns the number of transfers expired.
 */
export function applyExpiry(eng: Engine): number {
  const now = eng.now();
  if (now < eng.nextExpiry) return 0;
  let count = 0;
  let next = Infinity;
  for (const id of [...eng.pendingTransfers]) {
    const tx = eng.state.transfers[id];
    if (!tx || tx.txStatus !== 'pending_transfer') {
      eng.pendingTransfers.delete(id);
      continue;
    }
    if (tx.expires <= now) {
      finish(eng, tx, 'expired_transfer', now);
      count++;
    } else next = Math.min(next, tx.expires);
  }
  eng.nextExpiry = next;
  return count;
}

function finish(eng: Engine, tx: TransferRecord, status: Exclude<TransferStatus, 'pending_transfer'>, now: number): void {
  const origin = eng.state.wallets[tx.wallet_id];
  if (tx.held && origin) origin.held -= tx.amount;
  tx.held = false;
  tx.txStatus = status;
  tx.finished = now;
  for (const aid of tx.actionIDs) {
    const a = eng.state.actions[aid];
    if (a && a.status === 'pending') a.status = 'expired';
  }
  eng.pendingTransfers.delete(tx.txID);
  eng.changed();
}

// ---------------------------------------------------------------- create

function parseExpires(v: number | string): number {
  const n = typeof v === 'string' ? (/^\d+$/.test(v) ? Number(v) : NaN) : v;
  if (!Number.isSafeInteger(n) || n <= 0) throw badRequest('expires: must be an epoch time in seconds (integer)');
  return n;
}

/**
 * POST /company/{company_id}/transfer.
 * @returns `{tx_id, status: 'new' | 'existing'}`.
 * @throws 404 unknown company or wallet (reason names `wallet_id` or `counterparty_wallet_address`);
 *   400 wallet of another company, same wallet twice, asset mismatch, `expires` not in the future,
 *   insufficient available balance, no custodians; all naming the field.
 */
export function createTransfer(eng: Engine, companyId: string, input: TransferInput): { tx_id: string; status: 'new' | 'existing' } {
  const company = getCompany(eng, companyId);
  const idemKey = `${companyId}\n${input.partner_txID}`;
  const existing = eng.state.partnerTxIndex[idemKey];
  if (existing) return { tx_id: existing, status: 'existing' };

  const origin = getWallet(eng, input.wallet_id, 'wallet_id');
  if (origin.company_id !== companyId) throw badRequest(`wallet_id: wallet ${origin.wallet_id} does not belong to company ${companyId}`);
  const dest = getWallet(eng, input.counterparty_wallet_address, 'counterparty_wallet_address');
  if (dest.wallet_id === origin.wallet_id) throw badRequest('counterparty_wallet_address: must differ from wallet_id');
  if (dest.asset !== origin.asset) throw badRequest(`counterparty_wallet_address: holds ${dest.asset}, the origin wallet holds ${origin.asset}`);
  if (input.send.symbol !== origin.asset) throw badRequest(`send.symbol: must be ${origin.asset}, the asset of the origin wallet`);
  const now = eng.now();
  const expires = parseExpires(input.expires);
  if (expires <= now) throw badRequest(`expires: must be in the future (now is ${now})`);
  const quote = feeFor(input.send.amount);
  if (!isSafeQuote(quote)) throw badRequest('send.amount: too large');
  const available = origin.balance - origin.held;
  if (available < quote.amountToSend) {
    throw badRequest(`send.amount: insufficient balance: ${quote.amountToSend} needed (amount ${quote.netAmount} + fees ${quote.fees}), ${available} available`);
  }
  const group = eng.state.custodyGroups[origin.custodygroup_tx];
  if (!group || group.members.length === 0) throw badRequest('wallet_id: the wallet has no transfer custody group');

  const txID = newId();
  const tx: TransferRecord = {
    txID,
    company_id: companyId,
    fund_id: origin.fund_id,
    wallet_id: origin.wallet_id,
    recipient_wallet_id: dest.wallet_id,
    recipient_fund_id: dest.fund_id,
    recipient_company_id: dest.company_id,
    partner_txID: input.partner_txID,
    asset: origin.asset,
    netAmount: quote.netAmount,
    fees: quote.fees,
    amount: quote.amountToSend,
    expires,
    initiatedTimestamp: now,
    reference: input.reference,
    benefitOf: input.benefit_of,
    accountNo: input.account_no,
    thresholdRequired: group.threshold,
    custodians: [...group.members],
    actionIDs: [],
    approvals: [],
    txStatus: 'pending_transfer',
    finished: 0,
    held: true,
  };
  origin.held += quote.amountToSend;
  eng.state.transfers[txID] = tx;
  eng.state.partnerTxIndex[idemKey] = txID;
  eng.pendingTransfers.add(txID);
  eng.nextExpiry = Math.min(eng.nextExpiry, expires);

  const newActions: ActionRecord[] = [];
  for (const custodian of tx.custodians) {
    const party = company.trusted[custodian];
    const custodianType: 'core-client' | 'user' = party?.type === 'core-client' || eng.state.coreClients[custodian] ? 'core-client' : 'user';
    const action: ActionRecord = { id: newId(), type: 'ApproveTransfer', status: 'pending', timestamp: now, expireTime: expires, txID, custodianID: custodian, custodianType };
    eng.state.actions[action.id] = action;
    tx.actionIDs.push(action.id);
    newActions.push(action);
  }
  eng.changed();
  for (const a of newActions) if (a.custodianType === 'core-client') eng.emit('action', a);
  return { tx_id: txID, status: 'new' };
}

// ---------------------------------------------------------------- approve / reject

function decide(eng: Engine, action: ActionRecord, approve: boolean, approver: Omit<ApproverRecord, 'actionID' | 'status' | 'timestamp'>): void {
  applyExpiry(eng);
  if (action.status !== 'pending') throw conflict(`action_id: action ${action.id} is ${action.status}, not pending`);
  const tx = eng.state.transfers[action.txID];
  if (!tx || tx.txStatus !== 'pending_transfer') throw conflict(`action_id: transaction ${action.txID} is ${tx?.txStatus ?? 'unknown'}`);
  const now = eng.now();
  if (!approve) {
    action.status = 'rejected';
    finish(eng, tx, 'custody_rejected_transfer', now);
    return;
  }
  action.status = 'approved';
  tx.approvals.push({
    actionID: action.id,
    firstName: approver.firstName,
    lastName: approver.lastName,
    status: 'approved',
    timestamp: now,
    userID: approver.userID,
    username: approver.username,
  });
  eng.changed();
  if (tx.approvals.length >= tx.thresholdRequired) settle(eng, tx, now);
}

/** Threshold reached: move the money, write both ledger entries, mark approved. */
function settle(eng: Engine, tx: TransferRecord, now: number): void {
  const origin = eng.state.wallets[tx.wallet_id];
  const dest = eng.state.wallets[tx.recipient_wallet_id];
  const fromCompany = eng.state.companies[tx.company_id];
  const toCompany = eng.state.companies[tx.recipient_company_id];
  if (tx.held) origin.held -= tx.amount;
  tx.held = false;
  origin.balance -= tx.amount;
  dest.balance += tx.netAmount;
  const chainTxID = newChainTxId();
  const entry = (fundID: string, type: 'transferIn' | 'transferOut', amount: number, fees: number, counterpartyID: string, counterpartyName: string): LedgerEntry => ({
    TxID: tx.txID,
    chainTxID,
    fundID,
    timestamp: now,
    expireTime: tx.expires,
    status: 'approved',
    type,
    asset: tx.asset,
    amount,
    fees,
    netAmount: tx.netAmount,
    counterpartyID,
    counterpartyName,
    address: '',
    reference: tx.reference,
    benefitOf: tx.benefitOf,
    accountNo: tx.accountNo,
  });
  writeLedger(eng, origin, entry(origin.fund_id, 'transferOut', tx.amount, tx.fees, tx.recipient_company_id, toCompany?.name ?? ''));
  writeLedger(eng, dest, entry(dest.fund_id, 'transferIn', tx.netAmount, 0, tx.company_id, fromCompany?.name ?? ''));
  finish(eng, tx, 'approved_transfer', now);
}

/**
 * PUT (approve) or DELETE (reject) /coreclient/{client_id}/action/{action_id}.
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
 * A human custodian approves or rejects a transfer (control endpoints
 * `POST /_simulator/transfer/{tx_id}/approve|reject {user_id}`; `user_id` may be the user id,
 * e-mail or username).
 * @returns the Transaction object after the decision.
 * @throws 404 unknown transfer or user; 403 the user is not a custodian of the transfer; 409 not pending.
 */
export function userDecide(eng: Engine, txId: string, userIdOrEmail: string, approve: boolean): TransactionView {
  applyExpiry(eng);
  const tx = eng.state.transfers[txId];
  if (!tx) throw notFound(`tx_id: no transfer ${txId}`);
  const user = findUser(eng, userIdOrEmail);
  if (!user) throw notFound(`user_id: no user ${userIdOrEmail}`);
  const action = tx.actionIDs.map((id) => eng.state.actions[id]).find((a) => a && a.custodianID === user.id);
  if (!action) throw forbidden(`user_id: ${user.email} is not a custodian of transfer ${txId}`);
  decide(eng, action, approve, { firstName: user.firstName, lastName: user.lastName, userID: user.id, username: user.username });
  return transactionView(eng, tx);
}

// ---------------------------------------------------------------- views

/** The Transaction object of spec section 2 (camelCase). */
export interface TransactionView {
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
    recipientEmail: string;
    recipientFirstName: string;
    recipientLastName: string;
    recipientUsername: string;
    reference: string;
    requestedBy: string;
  };
  thresholdRequired: number;
  txID: string;
  txStatus: TransferStatus;
}

/** Transfer record -> Transaction object. */
export function transactionView(eng: Engine, tx: TransferRecord): TransactionView {
  const companyName = eng.state.companies[tx.company_id]?.name ?? '';
  return {
    approvedCount: tx.approvals.length,
    expires: tx.expires,
    initiatedTimestamp: tx.initiatedTimestamp,
    initiatorAuthorized: true,
    initiatorName: companyName,
    reference: tx.reference,
    status: tx.approvals.map((a) => ({ ...a })),
    statusDetails: {
      accountNo: tx.accountNo,
      amount: tx.amount,
      asset: tx.asset,
      benefitOf: tx.benefitOf,
      expires: tx.expires,
      fees: tx.fees,
      fundID: tx.fund_id,
      netAmount: tx.netAmount,
      recipientAddress: tx.recipient_wallet_id,
      recipientEmail: '',
      recipientFirstName: '',
      recipientLastName: '',
      recipientUsername: '',
      reference: tx.reference,
      requestedBy: companyName,
    },
    thresholdRequired: tx.thresholdRequired,
    txID: tx.txID,
    txStatus: tx.txStatus,
  };
}

/** GET /company/{company_id}/transfer/{tx_id}. @throws 404 unknown company or transfer not of that company. */
export function getTransfer(eng: Engine, companyId: string, txId: string): TransactionView {
  getCompany(eng, companyId);
  const tx = eng.state.transfers[txId];
  if (!tx || tx.company_id !== companyId) throw notFound(`tx_id: no transfer ${txId} in company ${companyId}`);
  return transactionView(eng, tx);
}

/** Action summary `{id, type, status, timestamp, expireTime}` (spec section 2, NOTES). */
export interface ActionSummary {
  id: string;
  type: string;
  status: string;
  timestamp: number;
  expireTime: number;
}

/** Feed message of spec section 6: `{coreClientID, expireTime, id, status, timestamp, type}`. */
export interface FeedMessage {
  coreClientID: string;
  expireTime: number;
  id: string;
  status: 'pending';
  timestamp: number;
  type: string;
}

/** Action -> feed message. */
export function feedMessage(a: ActionRecord): FeedMessage {
  return { coreClientID: a.custodianID, expireTime: a.expireTime, id: a.id, status: 'pending', timestamp: a.timestamp, type: a.type };
}

function summary(a: ActionRecord): ActionSummary {
  return { id: a.id, type: a.type, status: a.status, timestamp: a.timestamp, expireTime: a.expireTime };
}

/** Pending actions of a core client, oldest first. */
export function pendingActionsOf(eng: Engine, clientId: string): ActionRecord[] {
  applyExpiry(eng);
  return Object.values(eng.state.actions)
    .filter((a) => a.custodianID === clientId && a.status === 'pending')
    .sort((a, b) => a.timestamp - b.timestamp);
}

/** GET /coreclient/{client_id}/actions -> `{count, actions}` (pending only). @throws 404 unknown client */
export function listActions(eng: Engine, clientId: string): { count: number; actions: ActionSummary[] } {
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
  const tx = eng.state.transfers[a.txID];
  const from = eng.state.companies[tx.company_id];
  const to = eng.state.companies[tx.recipient_company_id];
  return {
    ...summary(a),
    coreClientID: clientId,
    details: {
      txType: 'transfer',
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
      // Spec section 2 names these recipientAddress / recipientAddressName (the OpenAPI transfer
      // schema says recipientID / recipientName); the spec rules. For a transfer the recipient
      // is an L2 wallet: its id, and the name of the company that holds it.
      recipientAddress: tx.recipient_wallet_id,
      recipientAddressName: to?.name ?? '',
      initiatedBy: tx.company_id,
      initiatorName: from?.name ?? '',
      initiatorType: 'company',
    },
  };
}
