/**
 * The typed calls of the operations declared in lib/api/v1/read.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import type { ApiResponse } from '../transport';
import { callOperation } from '../call';
import { readOperations } from '../../api/v1/read';
import type { LedgerFilter, Ledger, WalletHistory } from '../../api/v1/fund';

/** The account of the API key (personal and organisation accounts answer differently). @throws {ApiError} on a non-2xx answer. */
export function readAccount(client: CustodyClient): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, readOperations.account, {});
}

/** The balance of the account (base units). @throws {ApiError} on a non-2xx answer. */
export function readBalance(client: CustodyClient): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, readOperations.balance, {});
}

/** The funds the key may read. @throws {ApiError} on a non-2xx answer. */
export function readFunds(client: CustodyClient): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, readOperations.funds, {});
}

/** One fund. @throws {ValidationError} for a missing `fund_id`. @throws {ApiError} on a non-2xx answer. */
export function readFund(client: CustodyClient, input: { fund_id: string }): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, readOperations.fund, input);
}

/**
 * A fund's ledger with the optional filters `asset`, `wallet_id`, `direction` (all, in, out).
 * @throws {ValidationError} for a missing `fund_id` or a bad filter. @throws {ApiError} on a non-2xx answer.
 */
export function readFundLedger(client: CustodyClient, input: { fund_id: string } & LedgerFilter): Promise<ApiResponse<Ledger>> {
  return callOperation<Ledger>(client, readOperations.fundLedger, { ...input });
}

/** The trusted parties of a personal account. @throws {ApiError} on a non-2xx answer. */
export function readTrustedParties(client: CustodyClient): Promise<ApiResponse<Record<string, unknown>>> {
  return callOperation(client, readOperations.trustedParties, {});
}

/**
 * A wallet's transaction history (shape as {@link WalletHistory}); `since` epoch seconds, optional.
 * @throws {ValidationError} for a missing `wallet_id` or a bad `since`. @throws {ApiError} on a non-2xx answer.
 */
export function readWalletHistory(client: CustodyClient, input: { wallet_id: string; since?: number }): Promise<ApiResponse<WalletHistory>> {
  return callOperation<WalletHistory>(client, readOperations.walletHistory, input);
}
