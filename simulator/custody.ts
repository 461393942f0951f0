/**
 * The machinery every custody transaction shares (transfers, withdrawals, swap quotes, swap
 * takes): idempotency on `partner_txID`, holds, one action per custodian, approval records,
 * closing (release of the hold, pending actions expired), balance movements with their wallets
 * feed event, ledger entries and the Transaction object. Sources: spec sections 2 (Transaction
 * object, Action, Ledger entry), 3 (states and moves), 6 (feeds), 8 (fees); simulator/README.md "Custody".
 *
 * Ledger entries of a custody transaction (spec section 2 "Ledger entry": its `status` and
 * `expireTime` show that the service lists transactions still pending). Amounts in base units of
 * the wallet's asset, times epoch seconds of the business clock.
 * - The debit entry (the wallet the transaction debits, `tx.wallet_id`: `transferOut`,
 *   `withdraw`, `swapOut`) is written at creation ({@link openCustody}) with `status` `pending`,
 *   `TxID` the tx id, `chainTxID` '', `timestamp` the creation time, `expireTime` the
 *   transaction's `expires`, `amount` gross (= netAmount + fees), `fees`, `netAmount`, the
 *   reference fields and the counterparty fields known then (a swap quote's taker is not).
 * - It is updated in place, found through its position (`Engine.debitEntry`, no scan): at settlement
 *   ({@link ledgerFor}) `approved` with the chainTxID, amounts and counterparty fields of the
 *   settlement (`timestamp` stays the creation time); when the transaction ends without settling
 *   ({@link closeTx}) `rejected` (custody or initiator rejection), `expired` or `cancelled`; a
 *   chain rejection of a withdrawal makes it `chain_rejected` (withdrawals.ts). A swap quote
 *   approved by its custodians and open for a taker (`taker_pending`) is still `pending`: it has
 *   moved nothing yet.
 * - The credit entries (`transferIn`, `swapIn`) are written at settlement.
 * - A transaction of an older state file created before pending entries existed has no debit
 *   entry until it settles, when {@link ledgerFor} writes it as a new entry.
 *
 * The kind-specific rules live in transactions.ts (transfers, and the dispatch of approvals and
 * expiry), withdrawals.ts, swaps.ts and exchanges.ts; they all build on these functions.
 */
import type { Engine } from './engine';
import { badRequest, notFound } from './errors';
import { feeFor, isSafeQuote } from './assets';
import type { FeeQuote } from '../lib/api/v1/assets';
import type { TransactionObject as Transaction } from '../lib/api/v1/transfer';
import { newId } from './ids';
import { getCompany, getWallet } from './network';
import type { ActionRecord, ActionType, ApproverRecord, CompanyRecord, CustodyGroupRecord, CustodyKind, CustodyTxRecord, LedgerEntry, TransactionKind, WalletRecord } from './model';

/**
 * Parse `expires` (epoch seconds as a number or a string of digits, OpenAPI says string).
 * @throws 400 naming `expires` when it is not a positive integer.
 */
export function parseExpires(v: number | string, field = 'expires'): number {
  const n = typeof v === 'string' ? (/^\d+$/.test(v) ? Number(v) : NaN) : v;
  if (!Number.isSafeInteger(n) || n <= 0) throw badRequest(`${field}: must be an epoch time in seconds (integer)`);
  return n;
}

/**
 * Parse `expires` and require it later than the business clock.
 * @throws 400 naming the field.
 */
export function futureExpires(eng: Engine, v: number | string, field = 'expires'): number {
  const expires = parseExpires(v, field);
  const now = eng.now();
  if (expires <= now) throw badRequest(`${field}: must be in the future (now is ${now})`);
  return expires;
}

/**
 * Whether a repeated `partner_txID` of this kind of call answers `existing` (`Engine.dedupe`):
 * always for transfers (spec section 3), for the other kinds only in mode `all` (the default).
 */
export function dedupes(eng: Engine, kind: TransactionKind): boolean {
  return kind === 'transfer' || eng.dedupe === 'all';
}

/**
 * The tx id of the `kind` already created by this company with this `partner_txID`, or undefined
 * (idempotency is per company and per kind of call, spec section 3: model/state.ts `partnerKey`).
 * An empty or missing partner_txID never matches (only swaps accept one, OpenAPI example `''`);
 * nor does any partner_txID of a kind the engine does not dedupe ({@link dedupes}).
 */
export function existingTx(eng: Engine, kind: CustodyKind, companyId: string, partnerTxID: string | undefined): string | undefined {
  if (!partnerTxID || !dedupes(eng, kind)) return undefined;
  return eng.txIdOfPartnerId(kind, companyId, partnerTxID);
}

/**
 * A wallet named in a request body (`field`, id or short code) that must belong to the company.
 * @throws 404 unknown wallet; 400 wallet of another company; both naming `field`.
 */
export function ownWallet(eng: Engine, companyId: string, idOrCode: string, field: string): WalletRecord {
  const w = getWallet(eng, idOrCode, field);
  if (w.company_id !== companyId) throw badRequest(`${field}: wallet ${w.wallet_id} does not belong to company ${companyId}`);
  return w;
}

/**
 * The fee quote for a net amount, checked against the wallet's available balance (balance - held).
 * @throws 400 naming `field` when too large or not covered.
 */
export function coveredQuote(wallet: WalletRecord, netAmount: number, field: string): FeeQuote {
  const quote = feeFor(netAmount);
  if (!isSafeQuote(quote)) throw badRequest(`${field}: too large`);
  const available = wallet.balance - wallet.held;
  if (available < quote.amountToSend) {
    throw badRequest(`${field}: insufficient balance: ${quote.amountToSend} needed (amount ${quote.netAmount} + fees ${quote.fees}), ${available} available`);
  }
  return quote;
}

/**
 * The custody group of a wallet (`custodygroup_tx` or `custodygroup_withdraw`).
 * @throws 400 naming `field` when the wallet has none or it is empty.
 */
export function custodyGroupOf(eng: Engine, wallet: WalletRecord, which: 'custodygroup_tx' | 'custodygroup_withdraw', field: string): CustodyGroupRecord {
  const group = eng.state.custodyGroups[wallet[which]];
  if (!group || group.members.length === 0) throw badRequest(`${field}: the wallet has no ${which === 'custodygroup_tx' ? 'transfer' : 'withdrawal'} custody group`);
  return group;
}

/** Whether a custodian id is a core client (it then sees its actions on its feed) or a human user. */
function custodianTypeOf(eng: Engine, company: CompanyRecord, custodian: string): 'core-client' | 'user' {
  const party = company.trusted[custodian];
  return party?.type === 'core-client' || eng.state.coreClients[custodian] ? 'core-client' : 'user';
}

/**
 * What the debit ledger entry of a new custody transaction says beyond the transaction's own
 * fields: its type and the counterparty as known at creation ('' when not known yet).
 */
export interface DebitEntryInput {
  /** `transferOut`, `withdraw` or `swapOut` */
  type: LedgerEntry['type'];
  counterpartyID: string;
  counterpartyName: string;
  /** the L1 address of a withdrawal; default '' */
  address?: string;
}

/**
 * Open custody for a new transaction already stored (`Engine.putTx`, which registers its
 * partner_txID and watches its expiry): reserve `tx.amount` on the origin wallet, write its
 * pending debit ledger entry (see the module comment), create one
 * `actionType` action per custodian of `group` and announce the core clients' actions (engine
 * event `action`).
 * @param stored the new transaction, already stored; it is read back through
 *   `eng.state` and written through it.
 * @param debit the debit entry's type and counterparty fields.
 * @returns the new actions.
 */
export function openCustody(eng: Engine, company: CompanyRecord, stored: CustodyTxRecord, group: CustodyGroupRecord, actionType: ActionType, debit: DebitEntryInput): ActionRecord[] {
  // Write through the state document, not through the caller's reference to the new record.
  const tx = eng.findTx(stored.txID) ?? stored;
  const origin = eng.state.wallets[tx.wallet_id];
  tx.thresholdRequired = group.threshold;
  tx.custodians = [...group.members];
  origin.held += tx.amount;
  tx.held = true;
  const entry = newLedgerEntry(origin, tx, tx.initiatedTimestamp, { ...debit, chainTxID: '', status: 'pending', amount: tx.amount, fees: tx.fees, netAmount: tx.netAmount });
  eng.appendLedger(origin, entry);
  const created: ActionRecord[] = [];
  for (const custodian of tx.custodians) {
    const action: ActionRecord = {
      id: newId(),
      type: actionType,
      status: 'pending',
      timestamp: tx.initiatedTimestamp,
      expireTime: tx.expires,
      txID: tx.txID,
      custodianID: custodian,
      custodianType: custodianTypeOf(eng, company, custodian),
    };
    eng.putAction(action);
    tx.actionIDs.push(action.id);
    created.push(action);
  }
  eng.changed();
  for (const a of created) if (a.custodianType === 'core-client') eng.emit('action', a);
  return created;
}

/** The fields every new custody record starts with. */
export function newCustodyFields(
  eng: Engine,
  companyId: string,
  origin: WalletRecord,
  quote: FeeQuote,
  f: { expires: number; reference: string; benefitOf?: string; accountNo?: string; partner_txID?: string },
): Omit<CustodyTxRecord, 'kind' | 'txStatus'> {
  return {
    txID: newId(),
    company_id: companyId,
    fund_id: origin.fund_id,
    wallet_id: origin.wallet_id,
    partner_txID: f.partner_txID ?? '',
    asset: origin.asset,
    netAmount: quote.netAmount,
    fees: quote.fees,
    amount: quote.amountToSend,
    expires: f.expires,
    initiatedTimestamp: eng.now(),
    reference: f.reference,
    benefitOf: f.benefitOf ?? '',
    accountNo: f.accountNo ?? '',
    thresholdRequired: 0,
    custodians: [],
    actionIDs: [],
    approvals: [],
    finished: 0,
    held: false,
  };
}

/** Release the hold of a transaction on its origin wallet (no-op when not held). */
export function releaseHold(eng: Engine, tx: CustodyTxRecord): void {
  const origin = eng.state.wallets[tx.wallet_id];
  if (tx.held && origin) origin.held -= tx.amount;
  tx.held = false;
  eng.changed();
}

/**
 * The ledger status of a transaction that ended without settling, from its final status:
 * `rejected` (`custody_rejected_*`, `initiate_rejected_*`), `expired` (`expired_*`), `cancelled`
 * (`cancelled_*`); undefined for any other status (a settlement writes its entry itself).
 */
export function endedLedgerStatus(txStatus: string): 'rejected' | 'expired' | 'cancelled' | undefined {
  if (txStatus.startsWith('custody_rejected_') || txStatus.startsWith('initiate_rejected_')) return 'rejected';
  if (txStatus.startsWith('expired_')) return 'expired';
  if (txStatus.startsWith('cancelled_')) return 'cancelled';
  return undefined;
}

/**
 * Close a transaction: release its hold, set its final status, stop watching its expiry,
 * expire its still-pending actions (no longer actionable) and, when it ended without settling,
 * give its pending debit ledger entry the matching status ({@link endedLedgerStatus}).
 */
export function closeTx(eng: Engine, tx: CustodyTxRecord, status: string, now: number): void {
  releaseHold(eng, tx);
  eng.setTxStatus(tx.txID, status);
  tx.finished = now;
  expireActions(eng, tx.actionIDs);
  const ended = endedLedgerStatus(status);
  const entry = eng.debitEntry(tx.txID);
  if (ended && entry?.status === 'pending') entry.status = ended;
  eng.changed();
}

/** Mark the still-pending actions among `ids` expired. */
export function expireActions(eng: Engine, ids: string[]): void {
  for (const aid of ids) {
    if (eng.state.actions[aid]?.status === 'pending') eng.setActionStatus(aid, 'expired');
  }
}

/** Who approved: blank names and userID = client id for a core client (spec section 2). */
export type ApproverInfo = Omit<ApproverRecord, 'actionID' | 'status' | 'timestamp'>;

/** Add the approver record of an approved action. @returns true when the threshold is reached. */
export function recordApproval(eng: Engine, tx: CustodyTxRecord, action: ActionRecord, approver: ApproverInfo, now: number): boolean {
  eng.setActionStatus(action.id, 'approved');
  tx.approvals.push({ actionID: action.id, firstName: approver.firstName, lastName: approver.lastName, status: 'approved', timestamp: now, userID: approver.userID, username: approver.username });
  eng.changed();
  return tx.approvals.length >= tx.thresholdRequired;
}

/** What a movement sets on a ledger entry: its type, chain id, status (default `approved`), amounts in base units and counterparty. */
type MovementFields = { type: LedgerEntry['type']; chainTxID: string; status?: string; amount: number; fees: number; netAmount: number; counterpartyID: string; counterpartyName: string; address?: string };

/** The fields of a ledger entry that a movement sets, with their defaults (status `approved`, address ''). */
function settledFields(e: MovementFields): Pick<LedgerEntry, 'chainTxID' | 'status' | 'type' | 'amount' | 'fees' | 'netAmount' | 'counterpartyID' | 'counterpartyName' | 'address'> {
  return { chainTxID: e.chainTxID, status: e.status ?? 'approved', type: e.type, amount: e.amount, fees: e.fees, netAmount: e.netAmount, counterpartyID: e.counterpartyID, counterpartyName: e.counterpartyName, address: e.address ?? '' };
}

/** A new ledger entry (spec section 2, fields in its order) of `wallet` for `tx` at `timestamp` (epoch seconds). */
function newLedgerEntry(wallet: WalletRecord, tx: CustodyTxRecord, timestamp: number, e: MovementFields): LedgerEntry {
  const f = settledFields(e);
  return {
    TxID: tx.txID,
    chainTxID: f.chainTxID,
    fundID: wallet.fund_id,
    timestamp,
    expireTime: tx.expires,
    status: f.status,
    type: f.type,
    asset: wallet.asset,
    amount: f.amount,
    fees: f.fees,
    netAmount: f.netAmount,
    counterpartyID: f.counterpartyID,
    counterpartyName: f.counterpartyName,
    address: f.address,
    reference: tx.reference,
    benefitOf: tx.benefitOf,
    accountNo: tx.accountNo,
  };
}

/**
 * The ledger entry (spec section 2) of a settled custody transaction for one of its wallets. For
 * the debited wallet (`tx.wallet_id`) the pending entry written at creation is updated in place:
 * status (default `approved`), type, chainTxID, amounts, counterparty fields and address; its
 * `timestamp` stays the creation time. Otherwise (a credited wallet, or a transaction of an older
 * state file that has no debit entry) a new entry is written with `timestamp` `e.now`.
 * @returns the entry, as listed by the fund ledger.
 */
export function ledgerFor(
  eng: Engine,
  wallet: WalletRecord,
  tx: CustodyTxRecord,
  e: MovementFields & { now: number },
): LedgerEntry {
  const debit = wallet.wallet_id === tx.wallet_id;
  const open = debit ? eng.debitEntry(tx.txID) : undefined;
  if (open) {
    Object.assign(open, settledFields(e));
    eng.changed();
    return open;
  }
  const entry = newLedgerEntry(wallet, tx, e.now, e);
  eng.appendLedger(wallet, entry);
  return entry;
}

/**
 * One company's custody transaction of one kind, for its GET (GET /company/{company_id}/transfer/{tx_id},
 * GET /company/{company_id}/withdraw/{tx_id}).
 * @param records the kind's records by tx id, e.g. `eng.state.transfers`.
 * @param kindName the kind as the 404 text names it, e.g. `transfer`, `withdrawal`.
 * @throws 404 unknown company, or no transaction `txId` of that kind in that company.
 */
export function companyTx<T extends CustodyTxRecord>(eng: Engine, records: Record<string, T>, kindName: string, companyId: string, txId: string): T {
  getCompany(eng, companyId);
  const tx = records[txId];
  if (!tx || tx.company_id !== companyId) throw notFound(`tx_id: no ${kindName} ${txId} in company ${companyId}`);
  return tx;
}

/**
 * Custody record -> Transaction object.
 * @param recipientAddress the destination: a wallet id for transfers and swap legs, the L1 address for withdrawals.
 */
export function custodyTxView(eng: Engine, tx: CustodyTxRecord, recipientAddress: string): Transaction {
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
      recipientAddress,
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
