/**
 * Whitelisted addresses and withdrawals (L2 wallet -> whitelisted external L1 address). Sources:
 * spec sections 2 (Transaction object), 3 (withdrawal tx status values), 4 ("Funds, deposits,
 * ledger, whitelist", "Withdrawals"), 8 (fees); OpenAPI `/company/{company_id}/fund/{fund_id}/whitelist`,
 * `/company/{company_id}/withdraw`, FundWhitelist, ActionDetailApproveWithdraw, TxHistoryItem.
 *
 * Semantics chosen by the simulator:
 * - Whitelist entries belong to a fund and an asset; the same address may be whitelisted for
 *   several funds of a company (spec). Adding an entry that exists (same asset and address)
 *   renames it. Only assets of GET /assets are accepted.
 * - POST withdraw: idempotent per company on `partner_txID` (like transfers) unless
 *   `SimulatorOptions.dedupe` is `transfers` (the spec promises it for transfers only): then a
 *   repeat is a new withdrawal. The origin wallet
 *   (id or short code, never an address) must belong to the company, `send.symbol` must be its
 *   asset, `address` must be whitelisted for the wallet's fund and asset (else 400 naming
 *   `address`), `expires` in the future, available balance >= amount + fees.
 * - Custody: the wallet's `custodygroup_withdraw`; actions `ApproveWithdraw`; states
 *   pending_withdrawal -> approved_withdrawal | custody_rejected_withdrawal | expired_withdrawal.
 * - Ledger: at creation a `withdraw` entry (the OpenAPI TxHistoryItem name) with status
 *   `pending`, `address` = the L1 address and `counterpartyName` = the whitelist entry's name is
 *   written on the origin wallet; it becomes `rejected` or `expired` in place when the withdrawal
 *   ends so (custody.ts module comment).
 * - On approval the origin is debited amount + fees, the `withdraw` entry becomes `approved` with
 *   its chainTxID, and a wallets feed event is emitted.
 * - Chain rejection (control endpoint `POST /_simulator/withdraw/{tx_id}/chain-reject`) applies
 *   to an approved withdrawal: status chain_rejected_withdrawal, amount + fees credited back to the
 *   origin wallet (wallets feed event, positive amounts), and the `withdraw` ledger entry's status
 *   becomes `chain_rejected` (no second entry: the ledger then shows a withdrawal that moved nothing).
 */
import type { Engine } from './engine';
import type { WhitelistEntry } from '../lib/api/v1/fund';
import type { WithdrawRequest } from '../lib/api/v1/withdraw';
import { badRequest, conflict, notFound } from './errors';
import { findAsset } from './assets';
import { newChainTxId } from './ids';
import { getCompany, getFund, moveBalance } from './network';
import { closeTx, companyTx, coveredQuote, custodyGroupOf, custodyTxView, existingTx, futureExpires, ledgerFor, newCustodyFields, openCustody, ownWallet } from './custody';
import type { TransactionObject as Transaction } from '../lib/api/v1/transfer';
import type { WithdrawalRecord } from './model';

/**
 * Whitelist an external address for a fund and asset.
 * @throws 404 unknown company or fund; 400 unknown asset.
 */
export function addWhitelist(eng: Engine, companyId: string, fundId: string, input: WhitelistEntry): void {
  getFund(eng, companyId, fundId);
  if (!findAsset(input.asset)) throw badRequest(`asset: unknown asset ${input.asset}`);
  const list = (eng.state.whitelists[fundId] ??= []);
  const found = list.find((e) => e.asset === input.asset && e.address === input.address);
  if (found) found.name = input.name;
  else list.push({ name: input.name, asset: input.asset, address: input.address, created: eng.now() });
  eng.changed();
}

/**
 * GET /company/{company_id}/fund/{fund_id}/whitelist -> `{total_count, list:[{name, asset, address}]}`
 * (OpenAPI FundWhitelist), oldest first; optional query filters `address` and `asset`.
 * @throws 404 unknown company or fund.
 */
export function listWhitelist(eng: Engine, companyId: string, fundId: string, q: Record<string, unknown>): { total_count: number; list: { name: string; asset: string; address: string }[] } {
  getFund(eng, companyId, fundId);
  const address = typeof q.address === 'string' && q.address !== '' ? q.address : undefined;
  const asset = typeof q.asset === 'string' && q.asset !== '' ? q.asset : undefined;
  const list = (eng.state.whitelists[fundId] ?? [])
    .filter((e) => (!address || e.address === address) && (!asset || e.asset === asset))
    .map((e) => ({ name: e.name, asset: e.asset, address: e.address }));
  return { total_count: list.length, list };
}

/**
 * POST /company/{company_id}/withdraw.
 * @returns `{tx_id, status: 'new' | 'existing'}`.
 * @throws 404 unknown company or wallet; 400 wallet of another company, asset mismatch, address not
 *   whitelisted for the wallet's fund and asset, `expires` not in the future, insufficient
 *   available balance, no withdrawal custody group; each naming the field.
 */
export function createWithdrawal(eng: Engine, companyId: string, input: WithdrawRequest): { tx_id: string; status: 'new' | 'existing' } {
  const company = getCompany(eng, companyId);
  const existing = existingTx(eng, 'withdrawal', companyId, input.partner_txID);
  if (existing) return { tx_id: existing, status: 'existing' };
  const origin = ownWallet(eng, companyId, input.wallet_id, 'wallet_id');
  if (input.send.symbol !== origin.asset) throw badRequest(`send.symbol: must be ${origin.asset}, the asset of the origin wallet`);
  const entry = (eng.state.whitelists[origin.fund_id] ?? []).find((e) => e.address === input.address && e.asset === origin.asset);
  if (!entry) throw badRequest(`address: ${input.address} is not whitelisted for fund ${origin.fund_id} and asset ${origin.asset}`);
  const expires = futureExpires(eng, input.expires);
  const quote = coveredQuote(origin, input.send.amount, 'send.amount');
  const group = custodyGroupOf(eng, origin, 'custodygroup_withdraw', 'wallet_id');
  const tx: WithdrawalRecord = {
    ...newCustodyFields(eng, companyId, origin, quote, { expires, reference: input.reference, benefitOf: input.benefit_of, accountNo: input.account_no, partner_txID: input.partner_txID }),
    kind: 'withdrawal',
    address: entry.address,
    addressName: entry.name,
    chainTxID: '',
    txStatus: 'pending_withdrawal',
  };
  eng.putTx(tx);
  openCustody(eng, company, tx, group, 'ApproveWithdraw', { type: 'withdraw', counterpartyID: '', counterpartyName: entry.name, address: entry.address });
  return { tx_id: tx.txID, status: 'new' };
}

/** Threshold reached: debit the origin, mark approved, the pending `withdraw` ledger entry becomes approved (with its chainTxID). */
export function settleWithdrawal(eng: Engine, tx: WithdrawalRecord, now: number): void {
  const origin = eng.state.wallets[tx.wallet_id];
  closeTx(eng, tx, 'approved_withdrawal', now); // releases the hold first
  tx.chainTxID = newChainTxId();
  moveBalance(eng, origin, 'out', { tx_id: tx.txID, chain_tx_id: tx.chainTxID, status: tx.txStatus, amount: tx.amount, fee: tx.fees }, now);
  ledgerFor(eng, origin, tx, { type: 'withdraw', chainTxID: tx.chainTxID, amount: tx.amount, fees: tx.fees, netAmount: tx.netAmount, counterpartyID: '', counterpartyName: tx.addressName, address: tx.address, now });
}

/**
 * The chain rejects an approved withdrawal (control endpoint): status chain_rejected_withdrawal,
 * amount + fees credited back, the ledger entry's status `chain_rejected`.
 * @returns the Transaction object.
 * @throws 404 unknown withdrawal; 409 not approved_withdrawal.
 */
export function chainRejectWithdrawal(eng: Engine, txId: string): Transaction {
  const tx = eng.state.withdrawals[txId];
  if (!tx) throw notFound(`tx_id: no withdrawal ${txId}`);
  if (tx.txStatus !== 'approved_withdrawal') throw conflict(`tx_id: withdrawal ${txId} is ${tx.txStatus}; only an approved withdrawal can be rejected by the chain`);
  const now = eng.now();
  const origin = eng.state.wallets[tx.wallet_id];
  eng.setTxStatus(tx.txID, 'chain_rejected_withdrawal');
  moveBalance(eng, origin, 'in', { tx_id: tx.txID, chain_tx_id: tx.chainTxID, status: tx.txStatus, amount: tx.amount, fee: 0 }, now);
  const entry = eng.debitEntry(tx.txID);
  if (entry) entry.status = 'chain_rejected';
  eng.changed();
  return withdrawalView(eng, tx);
}

/** Withdrawal record -> Transaction object (`statusDetails.recipientAddress` is the L1 address). */
export function withdrawalView(eng: Engine, tx: WithdrawalRecord): Transaction {
  return custodyTxView(eng, tx, tx.address);
}

/** GET /company/{company_id}/withdraw/{tx_id}. @throws 404 unknown company or withdrawal not of that company. */
export function getWithdrawal(eng: Engine, companyId: string, txId: string): Transaction {
  return withdrawalView(eng, companyTx(eng, eng.state.withdrawals, 'withdrawal', companyId, txId));
}
