/**
 * Funds and wallets. The spec leaves their creation and objects out ("not shown"); the shapes
 * follow the OpenAPI: POST /company/{company_id}/fund (Fund -> CreateFundResponse),
 * POST /company/{company_id}/fund/{fund_id}/wallet (FundWallet -> WalletIDList),
 * GET /company/{company_id}/fund/{fund_id} (FundDetail), GET /wallet/{wallet_id} (FundWalletInfo).
 * Deposits, ledger, whitelist, wallet history and holdings: spec section 4 "Funds, deposits,
 * ledger, whitelist" (list shapes NOTES.md "Shapes seen in documentation examples").
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec, S, JsonSchema, DESCRIPTION_MAX_LENGTH } from '../operation';

/** A custody group: `threshold` approvals needed among `members` (trusted entity ids). */
export interface CustodyGroup {
  threshold: number;
  members: string[];
}

/** A wallet to create (OpenAPI NewWallet); `type` 0 standard, 1 dedicated, 2 multi-counterparty. */
export interface NewWallet {
  name: string;
  asset: string;
  type?: number;
  custodygroup_withdraw?: CustodyGroup | null;
  custodygroup_tx?: CustodyGroup | null;
  connect?: Array<{ counterparty_id: string; client_id: string }> | null;
}

/** A custody policy as read back (OpenAPI Policy). */
export interface Policy {
  id: string;
  name: string;
  threshold: number;
  members: Array<{ type: string; id: string; name: string; [k: string]: unknown }>;
}

/** A wallet as read back (OpenAPI FundWalletInfo; NOTES.md "Wallet"); `balance` in base units. */
export interface Wallet {
  wallet_id: string;
  name: string;
  asset: string;
  type: number;
  status: string;
  address: string;
  address_type?: string;
  /** Three English words separated by spaces; usable wherever a wallet id is. */
  short_code: string;
  balance: number;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  policy_withdraw?: Policy;
  policy_tx?: Policy;
  connected?: unknown;
}

/** A fund as read back (OpenAPI FundDetail). */
export interface Fund {
  fund_id: string;
  name: string;
  description?: string;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  policy_withdraw?: Policy;
  policy_tx?: Policy;
  members?: unknown;
  assets?: string[];
  wallets: Wallet[];
}

/** POST fund answer (OpenAPI CreateFundResponse): the new fund id and its custody group ids. */
export interface CreateFundResponse {
  fund_id: string;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
}

const custodyGroup: JsonSchema = {
  type: 'object',
  required: ['threshold', 'members'],
  properties: { threshold: { type: 'integer', minimum: 1 }, members: { type: 'array', minItems: 1, items: S.id } },
};
const newWallet: JsonSchema = {
  type: 'object',
  required: ['name', 'asset'],
  properties: {
    name: S.name,
    asset: S.assetCode,
    type: { type: 'integer', enum: [0, 1, 2] },
    custodygroup_withdraw: { anyOf: [custodyGroup, { type: 'null' }] },
    custodygroup_tx: { anyOf: [custodyGroup, { type: 'null' }] },
    connect: { anyOf: [{ type: 'array', items: { type: 'object', properties: { counterparty_id: S.id, client_id: S.id } } }, { type: 'null' }] },
  },
};

/**
 * The optional ledger filters (spec section 4): `asset` (an asset code), `wallet_id` (one
 * wallet of the fund) and `direction` (`all`, `in` or `out`). Shared with the read-only
 * `GET /funds/{fund_id}/ledger`.
 */
export const ledgerQuery = {
  type: 'object',
  properties: { asset: S.assetCode, wallet_id: S.walletId, direction: { type: 'string', enum: ['all', 'in', 'out'] } },
} satisfies OperationSpec['query'];

/**
 * The optional `since` of a wallet history read (OpenAPI GET /wallet/{wallet_id}/history: only
 * the history after that epoch timestamp, in seconds). The spec sends nothing; the filter is the
 * OpenAPI's. Shared with the read-only `GET /wallets/{wallet_id}/history`.
 */
export const walletHistoryQuery = {
  type: 'object',
  properties: { since: { type: 'number', minimum: 0 } },
} satisfies OperationSpec['query'];

/**
 * One item of a wallet's history (OpenAPI FundHistoryItem); `amount`, `fee`, `net_amount` in base
 * units (the built-in simulator: negative for outgoing), `timestamp` epoch seconds.
 */
export interface WalletHistoryItem {
  wallet_id: string;
  tx_id: string;
  chain_tx_id: string;
  asset: string;
  amount: number;
  fee: number;
  net_amount: number;
  timestamp: number;
}

/** A wallet's history (OpenAPI FundWalletHistory; the spec does not show this payload). */
export interface WalletHistory {
  history: WalletHistoryItem[];
}

/** Ledger filters (see {@link ledgerQuery}); all optional. */
export interface LedgerFilter {
  asset?: string;
  wallet_id?: string;
  direction?: 'all' | 'in' | 'out';
}

/**
 * A ledger entry (spec section 2 "Ledger entry"); amounts in base units, times epoch seconds.
 * For deposits `TxID`, `status` and the counterparty fields are empty strings and `fees` is 0.
 */
export interface LedgerEntry {
  TxID: string;
  chainTxID: string;
  fundID: string;
  timestamp: number;
  /** 0 when none. */
  expireTime: number;
  status: string;
  /** For example `transferOut`, `deposit`. */
  type: string;
  asset: string;
  amount: number;
  fees: number;
  netAmount: number;
  counterpartyID: string;
  counterpartyName: string;
  address: string;
  reference: string;
  benefitOf: string;
  accountNo: string;
}

/** A fund ledger (NOTES.md: `{Total, List}`); the spec names only `List`. */
export interface Ledger {
  Total?: number;
  List: LedgerEntry[];
  [k: string]: unknown;
}

/** A deposit wallet entry (spec section 2): `balance` in base units of `asset`. */
export interface DepositEntry {
  asset: string;
  /** The L1 deposit address. */
  address: string;
  balance: number;
}

/** A whitelisted external address of a fund (spec section 4; OpenAPI FundWhitelist). */
export interface WhitelistEntry {
  name: string;
  asset: string;
  address: string;
  [k: string]: unknown;
}

/** Company holdings (NOTES.md: `{total_count, holdings: [{code, amount}]}`); `amount` in base units. */
export interface Holdings {
  total_count: number;
  holdings: Array<{ code: string; amount: number; [k: string]: unknown }>;
}

/** Operation declarations of this group, by id. */
export const fundOperations = {
  createFund: {
    method: 'POST',
    path: '/company/{company_id}/fund',
    source: 'OpenAPI POST /company/{company_id}/fund (schema Fund)',
    assetFields: ['wallets[].asset'],
    body: {
      type: 'object',
      required: ['name', 'custodygroup_withdraw', 'custodygroup_tx'],
      properties: { name: S.name, description: S.optionalText(DESCRIPTION_MAX_LENGTH), custodygroup_withdraw: custodyGroup, custodygroup_tx: custodyGroup, wallets: { type: 'array', items: newWallet } },
    },
  },
  addWallet: {
    method: 'POST',
    path: '/company/{company_id}/fund/{fund_id}/wallet',
    source: 'OpenAPI POST /company/{company_id}/fund/{fund_id}/wallet (schema FundWallet)',
    assetFields: ['wallets[].asset'],
    body: { type: 'object', required: ['wallets'], properties: { wallets: { type: 'array', minItems: 1, items: newWallet } } },
  },
  getFund: { method: 'GET', path: '/company/{company_id}/fund/{fund_id}', idempotent: true, source: 'OpenAPI GET /company/{company_id}/fund/{fund_id}' },
  getWallet: { method: 'GET', path: '/wallet/{wallet_id}', idempotent: true, source: 'spec section 4, GET wallet/{wallet_id}; OpenAPI FundWalletInfo' },
  walletHistory: {
    method: 'GET',
    path: '/wallet/{wallet_id}/history',
    idempotent: true,
    source: 'spec section 4, GET /wallet/{wallet_id}/history; optional query since: OpenAPI',
    query: walletHistoryQuery,
  },
  deposits: { method: 'GET', path: '/company/{company_id}/fund/{fund_id}/deposit', idempotent: true, source: 'spec section 4, GET /company/{company_id}/fund/{fund_id}/deposit' },
  ledger: {
    method: 'GET',
    path: '/company/{company_id}/fund/{fund_id}/ledger',
    idempotent: true,
    source: 'spec section 4, GET /company/{company_id}/fund/{fund_id}/ledger (optional query asset, wallet_id, direction)',
    query: ledgerQuery,
    assetFields: ['asset'],
  },
  holdings: { method: 'GET', path: '/company/{company_id}/holding', idempotent: true, source: 'spec section 4, GET /company/{company_id}/holding' },
  addWhitelist: {
    method: 'POST',
    path: '/company/{company_id}/fund/{fund_id}/whitelist',
    source: 'spec section 4, POST /company/{company_id}/fund/{fund_id}/whitelist (name, asset, address, all required)',
    assetFields: ['asset'],
    body: { type: 'object', required: ['name', 'asset', 'address'], properties: { name: S.name, asset: S.assetCode, address: S.address } },
  },
  listWhitelist: { method: 'GET', path: '/company/{company_id}/fund/{fund_id}/whitelist', idempotent: true, source: 'OpenAPI GET /company/{company_id}/fund/{fund_id}/whitelist (FundWhitelist)' },
} satisfies Record<string, OperationSpec>;

/** Create a fund with its custody groups (and optionally wallets). */
export function createFund(
  client: CustodyClient,
  input: { company_id: string; name: string; description?: string; custodygroup_withdraw: CustodyGroup; custodygroup_tx: CustodyGroup; wallets?: NewWallet[] },
): Promise<ApiResponse<CreateFundResponse>> {
  return callOperation<CreateFundResponse>(client, fundOperations.createFund, { ...input });
}

/** Add wallets to a fund; blank custody groups use the fund's. Answers `{wallets: [wallet ids]}`. */
export function addWallet(client: CustodyClient, input: { company_id: string; fund_id: string; wallets: NewWallet[] }): Promise<ApiResponse<{ wallets: string[] }>> {
  return callOperation(client, fundOperations.addWallet, input);
}

/** Read a fund with all its wallets (each with short_code and balance). */
export function getFund(client: CustodyClient, input: { company_id: string; fund_id: string }): Promise<ApiResponse<Fund>> {
  return callOperation<Fund>(client, fundOperations.getFund, input);
}

/** Read a wallet by id or short code. */
export function getWallet(client: CustodyClient, input: { wallet_id: string }): Promise<ApiResponse<Wallet>> {
  return callOperation<Wallet>(client, fundOperations.getWallet, input);
}

/**
 * The transaction history of a wallet (spec section 4, GET /wallet/{wallet_id}/history; payload
 * "not shown" by the spec, OpenAPI FundWalletHistory). `wallet_id` takes an id or short code;
 * `since` (epoch seconds, optional) keeps only the later history.
 * @throws {ValidationError} for a missing or malformed `wallet_id`, or a `since` that is not a non-negative number.
 * @throws {ApiError} on a non-2xx answer.
 */
export function getWalletHistory(client: CustodyClient, input: { wallet_id: string; since?: number }): Promise<ApiResponse<WalletHistory>> {
  return callOperation<WalletHistory>(client, fundOperations.walletHistory, input);
}

/**
 * The deposit addresses of a fund with their balances: `{total_count, list: [{asset, address,
 * balance}]}` (spec section 4, GET /company/{company_id}/fund/{fund_id}/deposit).
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function getDeposits(client: CustodyClient, input: { company_id: string; fund_id: string }): Promise<ApiResponse<{ total_count: number; list: DepositEntry[] }>> {
  return callOperation(client, fundOperations.deposits, input);
}

/**
 * The ledger of a fund, optionally filtered (spec section 4, GET .../fund/{fund_id}/ledger).
 * @throws {ValidationError} for a missing path id or a bad filter (`direction` not all/in/out).
 * @throws {ApiError} on a non-2xx answer.
 */
export function getLedger(client: CustodyClient, input: { company_id: string; fund_id: string } & LedgerFilter): Promise<ApiResponse<Ledger>> {
  return callOperation<Ledger>(client, fundOperations.ledger, { ...input });
}

/**
 * What a company holds, per asset (spec section 4, GET /company/{company_id}/holding).
 * @throws {ValidationError} for a missing `company_id`. @throws {ApiError} on a non-2xx answer.
 */
export function getHoldings(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<Holdings>> {
  return callOperation<Holdings>(client, fundOperations.holdings, input);
}

/**
 * Whitelist an external (L1) address for withdrawals from a fund (spec section 4, POST
 * .../fund/{fund_id}/whitelist; answers an empty body). Withdrawals go only to whitelisted addresses.
 * @throws {ValidationError} for a missing `name`, `asset` or `address`. @throws {ApiError} on a non-2xx answer.
 */
export function addWhitelist(client: CustodyClient, input: { company_id: string; fund_id: string; name: string; asset: string; address: string }): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, fundOperations.addWhitelist, input);
}

/**
 * The whitelisted addresses of a fund: `{total_count, list}` (OpenAPI GET
 * .../fund/{fund_id}/whitelist, FundWhitelist; NOTES.md).
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function listWhitelist(client: CustodyClient, input: { company_id: string; fund_id: string }): Promise<ApiResponse<{ total_count: number; list: WhitelistEntry[] }>> {
  return callOperation(client, fundOperations.listWhitelist, input);
}
