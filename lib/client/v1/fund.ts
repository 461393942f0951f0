/**
 * The typed calls of the operations declared in lib/api/v1/fund.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import {
  type CustodyGroup,
  type NewWallet,
  type CreateFundResponse,
  fundOperations,
  type WalletIdList,
  type Fund,
  type Wallet,
  type WalletHistory,
  type DepositList,
  type LedgerFilter,
  type Ledger,
  type Holdings,
  type Whitelist,
} from '../../api/v1/fund';
import type { ApiResponse } from '../transport';
import { callOperation } from '../call';

/** Create a fund with its custody groups (and optionally wallets). */
export function createFund(
  client: CustodyClient,
  input: { company_id: string; name: string; description?: string; custodygroup_withdraw: CustodyGroup; custodygroup_tx: CustodyGroup; wallets?: NewWallet[] },
): Promise<ApiResponse<CreateFundResponse>> {
  return callOperation<CreateFundResponse>(client, fundOperations.createFund, { ...input });
}

/** Add wallets to a fund; blank custody groups use the fund's. Answers `{wallets: [wallet ids]}`. */
export function addWallet(client: CustodyClient, input: { company_id: string; fund_id: string; wallets: NewWallet[] }): Promise<ApiResponse<WalletIdList>> {
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
export function getDeposits(client: CustodyClient, input: { company_id: string; fund_id: string }): Promise<ApiResponse<DepositList>> {
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
 * .../fund/{fund_id}/whitelist, FundWhitelist; the service's documentation examples).
 * @throws {ValidationError} for a missing path id. @throws {ApiError} on a non-2xx answer.
 */
export function listWhitelist(client: CustodyClient, input: { company_id: string; fund_id: string }): Promise<ApiResponse<Whitelist>> {
  return callOperation(client, fundOperations.listWhitelist, input);
}
