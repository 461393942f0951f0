/**
 * The read-only subset (spec section 4 "Read-only subset (permission: read only)"): calls an API
 * key with the read-only permission may make. Their payloads are "not shown" by the spec and are
 * passed through as the service answers.
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec } from '../operation';
import { ledgerQuery, LedgerFilter, Ledger, walletHistoryQuery, WalletHistory, ledgerSchema, walletHistorySchema } from './fund';
import { anyObjectSchema } from '../wire';
import { readOperation } from '../schema-kit';

/*
 * Answers: spec section 4, "Read-only endpoints response payloads: not shown". The account,
 * balance, funds, fund and trusted parties reads are checked as JSON objects only
 * (`anyObjectSchema`); the fund ledger and wallet history reads are typed, and checked, as their
 * full-permission counterparts (GET .../fund/{fund_id}/ledger, GET /wallet/{wallet_id}/history).
 */

/** Operation declarations of this group, by id. */
export const readOperations = {
  account: readOperation('/account', 'spec section 4 read-only subset, GET /account', anyObjectSchema),
  balance: readOperation('/balance', 'spec section 4 read-only subset, GET /balance', anyObjectSchema),
  funds: readOperation('/funds/', 'spec section 4 read-only subset, GET /funds/', anyObjectSchema),
  fund: readOperation('/funds/{fund_id}', 'spec section 4 read-only subset, GET /funds/{fund_id}', anyObjectSchema),
  // No `assetFields`: the asset filter is not checked against GET /assets here, since GET
  // /assets is not in the read-only subset's list (spec section 4), so a read-only key may not
  // be allowed to read it; an unknown asset only filters the ledger down to nothing.
  fundLedger: readOperation('/funds/{fund_id}/ledger', 'spec section 4 read-only subset, GET /funds/{fund_id}/ledger (filters as the fund ledger)', ledgerSchema, { query: ledgerQuery }),
  trustedParties: readOperation('/trustedparties', 'spec section 4 read-only subset, GET /trustedparties (personal accounts only)', anyObjectSchema),
  walletHistory: readOperation('/wallets/{wallet_id}/history', 'spec section 4 read-only subset, GET /wallets/{wallet_id}/history (optional since, as the fund wallet history)', walletHistorySchema, { query: walletHistoryQuery }),
} satisfies Record<string, OperationSpec>;

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
