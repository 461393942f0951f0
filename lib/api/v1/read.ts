/**
 * The read-only subset (spec section 4 "Read-only subset (permission: read only)"): calls an API
 * key with the read-only permission may make. Their payloads are "not shown" by the spec and are
 * passed through as the service answers.
 */
import { ledgerQuery, walletHistoryQuery, ledgerSchema, walletHistorySchema } from './fund';
import { anyObjectSchema } from '../wire';
import { readOperation } from '../schema-kit';
import type { OperationSpec } from '../spec';

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
