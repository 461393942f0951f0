/**
 * The read-only subset and wallet history (spec section 4 "Read-only subset (permission: read
 * only)" and "Funds, deposits, ledger, whitelist"; OpenAPI `/wallet/{wallet_id}/history`).
 *
 * Operations (all GET, relative to `/api/v1/p`; both API keys of the account may call them;
 * routes.ts serves them, as every operation, from lib's registry):
 *
 * | Path | Answer |
 * |---|---|
 * | `/account` | {@link AccountView}: the partner's organisation account and its companies |
 * | `/balance` | `{total_count, balances:[{asset, balance}]}`: base units summed over every wallet of the account |
 * | `/funds/` | `{total_count, list:[FundDetail + company_id]}`: every fund of the account, with its wallets |
 * | `/funds/{fund_id}` | FundDetail + company_id |
 * | `/funds/{fund_id}/ledger` | `{Total, List}`: the fund's ledger, same filters as the company fund ledger |
 * | `/trustedparties` | `{total_count, list:[trusted party + company_id]}`: of every company of the account |
 * | `/wallets/{wallet_id}/history`, `/wallet/{wallet_id}/history` | {@link WalletHistory} |
 *
 * Decisions where the spec is silent ("Read-only endpoints response payloads: not shown"):
 * - The simulated account is an organisation account (the partner); GET /account answers its
 *   organisation shape. Its `account_id` is derived from the registered public key, so it is
 *   stable for a data folder and needs no stored field.
 * - GET /trustedparties is documented for personal accounts only; the simulator answers it for
 *   the organisation account too (every company's trusted parties), which is more useful to a
 *   read-only reporting client than a refusal.
 * - Wallet history items follow OpenAPI FundHistoryItem, signed from the wallet's point of view
 *   like the wallets feed (simulator/README.md "Wallets feed events"): `amount` and `net_amount` negative for outgoing entries,
 *   `fee` negative when the wallet paid one (0 otherwise). Direction is
 *   {@link ledgerDirection}. Newest first; `since` (epoch seconds) keeps entries strictly after it.
 *   Only entries that moved the balance are listed (deposits and status `approved`): pending,
 *   rejected, expired and cancelled transactions and `chain_rejected` withdrawals (refunded) are
 *   left out, so the history adds up to the wallet's balance; the fund ledger keeps them all.
 *   An item's `timestamp` is its ledger entry's: a custody transaction's creation time.
 *
 * - "The account" is the API account of the key: companies whose `account` is the engine's
 *   (the partner's, CompanyRecord.account absent), with their funds, wallets and trusted parties.
 *   The simulated foreign account's companies are left out of the lists; naming one of its
 *   funds or wallets answers 403, as the company routes do.
 *
 * No effect on state: every function here only reads.
 */
import { createHash } from 'node:crypto';
import { ASSETS } from './assets';
import type { WalletHistory, WalletHistoryItem } from '../lib/api/v1/fund';
import type { Engine } from './engine';
import { badRequest, notFound } from './errors';
import { fundDetailView, fundLedger, getCompany, getFund, getWallet, ledgerDirection, ledgerMovedBalance } from './network';
import type { CompanyRecord, FundRecord, LedgerEntry, TrustedPartyRecord } from './model';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Display name of the simulated partner account. */
export const ACCOUNT_NAME = 'Simulator partner account';

/** A company of the account as listed by GET /account. */
export interface AccountCompany {
  company_id: string;
  name: string;
}

/**
 * GET /account for an organisation account (simulator shape; spec section 4 says the answer
 * differs for personal and organisation accounts and shows neither).
 */
export interface AccountView {
  /** 27-character base62 id, derived from the account's registered public key */
  account_id: string;
  name: string;
  /** always `organisation` in the simulator */
  type: 'organisation';
  /** the account's companies in creation order */
  companies: AccountCompany[];
}

/** The account id: SHA-256 of the registered public key (SPKI PEM) as 27 base62 characters. */
export function accountId(eng: Engine): string {
  let n = BigInt('0x' + createHash('sha256').update(eng.state.publicKeyPem).digest('hex'));
  let out = '';
  for (let i = 0; i < 27; i++) {
    out += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

/** The companies of the API account the engine acts for, in creation order. */
export function accountCompanies(eng: Engine): CompanyRecord[] {
  return Object.values(eng.state.companies)
    .filter((c) => c.account === eng.account)
    .sort((a, b) => a.created - b.created);
}

/** True when the company belongs to the API account the engine acts for. */
function ownCompany(eng: Engine, companyId: string): boolean {
  const c = eng.state.companies[companyId];
  return c !== undefined && c.account === eng.account;
}

/** GET /account. */
export function accountView(eng: Engine): AccountView {
  const companies = accountCompanies(eng).map((c) => ({ company_id: c.company_id, name: c.name }));
  return { account_id: accountId(eng), name: ACCOUNT_NAME, type: 'organisation', companies };
}

/** One asset's total of GET /balance: `balance` is base units of `asset`. */
export interface BalanceItem {
  asset: string;
  balance: number;
}

/**
 * GET /balance: booked balances (holds of pending transactions not subtracted, as in wallet
 * views) summed per asset over every wallet of every company of the account, in the order of
 * GET /assets; assets without a wallet are left out.
 */
export function accountBalance(eng: Engine): { total_count: number; balances: BalanceItem[] } {
  const sums = new Map<string, number>();
  // The account's own wallets through the engine's index per company (not every wallet of every account).
  for (const c of accountCompanies(eng)) {
    for (const id of eng.walletIdsOfCompany(c.company_id)) {
      const w = eng.state.wallets[id];
      if (w && w.company_id === c.company_id) sums.set(w.asset, (sums.get(w.asset) ?? 0) + w.balance);
    }
  }
  const order = ASSETS.map((a) => a.code as string);
  const balances = [...sums]
    .sort(([a], [b]) => (order.indexOf(a) >>> 0) - (order.indexOf(b) >>> 0) || a.localeCompare(b))
    .map(([asset, balance]) => ({ asset, balance }));
  return { total_count: balances.length, balances };
}

/** A fund of the read-only subset: the company fund detail (OpenAPI FundDetail) plus its `company_id`. */
export type AccountFundView = Record<string, unknown> & { company_id: string; fund_id: string };

function accountFundView(eng: Engine, f: FundRecord): AccountFundView {
  return { company_id: f.company_id, ...fundDetailView(eng, f.company_id, f.fund_id) } as AccountFundView;
}

/**
 * A fund of the account by id.
 * @throws 404 `fund_id` when unknown; 403 when its company belongs to another API account.
 */
export function getAccountFund(eng: Engine, fundId: string): FundRecord {
  const f = eng.state.funds[fundId];
  if (!f) throw notFound(`fund_id: no fund ${fundId}`);
  return getFund(eng, f.company_id, fundId);
}

/** GET /funds/: every fund of the account in creation order, each with its wallets. */
export function accountFunds(eng: Engine): { total_count: number; list: AccountFundView[] } {
  const list = Object.values(eng.state.funds)
    .filter((f) => ownCompany(eng, f.company_id))
    .sort((a, b) => a.created - b.created)
    .map((f) => accountFundView(eng, f));
  return { total_count: list.length, list };
}

/** GET /funds/{fund_id}. @throws 404 unknown fund; 403 a fund of another API account. */
export function accountFund(eng: Engine, fundId: string): AccountFundView {
  return accountFundView(eng, getAccountFund(eng, fundId));
}

/**
 * GET /funds/{fund_id}/ledger: the fund's ledger, with the filters and answer of
 * GET /company/{company_id}/fund/{fund_id}/ledger ({@link fundLedger}).
 * @throws 404 unknown fund; 403 a fund of another API account; 400 naming the field for a bad filter.
 */
export function accountFundLedger(eng: Engine, fundId: string, query: Record<string, unknown>): { Total: number; List: LedgerEntry[] } {
  const f = getAccountFund(eng, fundId);
  return fundLedger(eng, f.company_id, f.fund_id, query);
}

/** A trusted party of GET /trustedparties: the company trusted party entry plus its `company_id`. */
export type AccountTrustedParty = TrustedPartyRecord & { company_id: string };

/** GET /trustedparties: the trusted parties of every company of the account (see the module comment). */
export function accountTrustedParties(eng: Engine): { total_count: number; list: AccountTrustedParty[] } {
  const list: AccountTrustedParty[] = [];
  for (const c of accountCompanies(eng)) {
    for (const t of Object.values(c.trusted)) list.push({ company_id: c.company_id, ...t });
  }
  return { total_count: list.length, list };
}

const negate = (n: number): number => (n === 0 ? 0 : -n);

/** A ledger entry as a history item of `walletId` (signs: see {@link WalletHistoryItem}). */
export function historyItem(walletId: string, e: LedgerEntry): WalletHistoryItem {
  const out = ledgerDirection(e.type) === 'out';
  return {
    wallet_id: walletId,
    tx_id: e.TxID,
    chain_tx_id: e.chainTxID,
    asset: e.asset,
    amount: out ? negate(e.amount) : e.amount,
    fee: negate(e.fees),
    net_amount: out ? negate(e.netAmount) : e.netAmount,
    timestamp: e.timestamp,
  };
}

/**
 * GET /wallet/{wallet_id}/history and GET /wallets/{wallet_id}/history: the wallet's ledger
 * entries that moved its balance ({@link ledgerMovedBalance}: deposits and `approved` entries),
 * newest first, as history items, so the amounts add up to the wallet's balance. Pending,
 * rejected, expired and cancelled transactions and chain-rejected (refunded) withdrawals are
 * left out. A transaction's `timestamp` is its creation time, also once settled. Cost: the
 * wallet's own ledger entries (the answer has no paging), not the fund's.
 * @param walletIdOrCode wallet id or short code (spec section 2).
 * @param since optional query value: epoch seconds; only entries with a later timestamp are kept.
 * @throws 404 `wallet_id` unknown; 403 a wallet of another API account; 400 `since` not a
 *   non-negative number.
 */
export function walletHistory(eng: Engine, walletIdOrCode: string, since: unknown): WalletHistory {
  let after = -Infinity;
  if (since !== undefined && since !== '') {
    if (typeof since !== 'string' || !/^\d+(\.\d+)?$/.test(since)) throw badRequest('since: must be epoch seconds (a non-negative number)');
    after = Number(since);
  }
  const w = getWallet(eng, walletIdOrCode);
  getCompany(eng, w.company_id);
  // The wallet's own entries through the engine's index (positions into the fund ledger, oldest
  // first): the fund's other wallets are not walked.
  const records = eng.state.ledger[w.fund_id] ?? [];
  const positions = eng.ledgerPositions(w.fund_id, { walletId: w.wallet_id });
  const history: WalletHistoryItem[] = [];
  for (let i = positions.length - 1; i >= 0; i--) {
    const e = records[positions[i]].entry;
    if (e.timestamp > after && ledgerMovedBalance(e)) history.push(historyItem(w.wallet_id, e));
  }
  return { history };
}
