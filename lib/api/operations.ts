/**
 * Every API operation of the pack, once, by operationId: each v1 endpoint of spec section 4 and
 * each v2 call (spec section 4 "v2 endpoints"), with its API version, its declaration
 * ({@link OperationSpec}: method, path template, path ids, request and response schemas, amount
 * and asset fields, submission kind, source) and its retry class. lib's calls, the nodes (through
 * their palette, nodes/shared/palette.ts), the edit dialogs and the simulator's handlers all key
 * operations by these ids.
 *
 * An operationId is the OpenAPI's (partner-api-openapi.yaml) where it declares one for the same
 * method and path; else a camelCase verb and noun, named for the call (`createTransfer`,
 * `getTransfer`). The table is grouped by resource, as the OpenAPI's tags group the paths.
 */
import { assetOperations } from './v1/assets';
import { companyOperations } from './v1/company';
import { trustedPartyOperations } from './v1/trusted-party';
import { fundOperations } from './v1/fund';
import { transferOperations } from './v1/transfer';
import { coreClientOperations, actionOperations } from './v1/core-client';
import { withdrawOperations } from './v1/withdraw';
import { swapMakeOperations, swapTakeOperations } from './v1/swap';
import { liquidityHubOperations } from './v1/liquidity-hub';
import { sweepOperations } from './v1/sweep';
import { readOperations } from './v1/read';
import { policyOperations } from './v2/policy';
import { portfolioOperations } from './v2/portfolio';
import type { OperationSpec } from './spec';

/**
 * How a failed call may be retried (the pack's rule, lib/client/transport.ts; spec section 3: a
 * repeated `partner_txID` answers `existing`, which makes a repeated payment safe):
 * - `read`: a call that a repeat cannot change beyond its first effect: every GET, the fee quote
 *   (POST /fees), the sweep status (POST .../sweep/tx_id), a company update (PUT, the same body
 *   sets the same fields); retried freely;
 * - `deduped`: a money-moving POST keyed by `partner_txID` (the API answers `existing` for a
 *   repeated transfer, spec section 3) and journaled by lib/client/submission; retried with the
 *   same body;
 * - `sendOnce`: a call with an effect and no key; never retried after it may have been sent.
 */
export type RetryClass = 'read' | 'deduped' | 'sendOnce';

/** The API version of an operation: v1 under `base_url`, v2 under `base_url_v2` (spec section 9). */
export type ApiVersion = 'v1' | 'v2';

const v1 = (spec: OperationSpec) => ({ version: 'v1', spec }) as const;
const v2 = (spec: OperationSpec) => ({ version: 'v2', spec }) as const;

/** Every operation by operationId: its API version and declaration. */
export const OPERATIONS = {
  // Common: GET /assets, POST /fees
  listAssets: v1(assetOperations.assets),
  quoteFee: v1(assetOperations.fee),
  // Company: /company
  createCompany: v1(companyOperations.create),
  getCompany: v1(companyOperations.get),
  updateCompany: v1(companyOperations.update),
  searchCompanies: v1(companyOperations.search),
  // TrustedNetwork: /company/{company_id}/trustedparty
  addTrustedParty: v1(trustedPartyOperations.add),
  listTrustedParties: v1(trustedPartyOperations.list),
  removeTrustedParty: v1(trustedPartyOperations.remove),
  // Holding: GET /company/{company_id}/holding
  getHoldings: v1(fundOperations.holdings),
  // Fund: /company/{company_id}/fund
  createFund: v1(fundOperations.createFund),
  addWallet: v1(fundOperations.addWallet),
  getFund: v1(fundOperations.getFund),
  getDeposits: v1(fundOperations.deposits),
  getLedger: v1(fundOperations.ledger),
  addWhitelist: v1(fundOperations.addWhitelist),
  listWhitelist: v1(fundOperations.listWhitelist),
  // Wallet: /wallet/{wallet_id}, GET /exchanges
  getWallet: v1(fundOperations.getWallet),
  getWalletHistory: v1(fundOperations.walletHistory),
  listExchanges: v1(sweepOperations.exchanges),
  // Transfer: /company/{company_id}/transfer
  createTransfer: v1(transferOperations.create),
  getTransfer: v1(transferOperations.get),
  // Core Client: /coreclient
  createCoreClient: v1(coreClientOperations.create),
  listCoreClients: v1(coreClientOperations.list),
  listActions: v1(coreClientOperations.actions),
  getAction: v1(coreClientOperations.action),
  listCoreClientWallets: v1(coreClientOperations.wallets),
  approveAction: v1(actionOperations.approve),
  rejectAction: v1(actionOperations.reject),
  // Withdrawal: /company/{company_id}/withdraw
  createWithdrawal: v1(withdrawOperations.create),
  getWithdrawal: v1(withdrawOperations.get),
  // Atomic Swap: /company/{company_id}/atomicswap
  makeSwap: v1(swapMakeOperations.make),
  getSwapMake: v1(swapMakeOperations.get),
  cancelSwap: v1(swapMakeOperations.cancel),
  takeSwap: v1(swapTakeOperations.take),
  getSwapTake: v1(swapTakeOperations.get),
  // Liquidity Hub: /company/{company_id}/liquidityhub, the maker's answer to a take
  publishQuote: v1(liquidityHubOperations.publish),
  listLiquidityHub: v1(liquidityHubOperations.list),
  approveSwapTake: v1(liquidityHubOperations.approveTake),
  // Sweep: /coreclient/{client_id}/sweep
  startSweep: v1(sweepOperations.start),
  getSweepStatus: v1(sweepOperations.status),
  // The read-only subset (spec section 4 "Read-only subset (permission: read only)")
  readAccount: v1(readOperations.account),
  readBalance: v1(readOperations.balance),
  readFunds: v1(readOperations.funds),
  readFund: v1(readOperations.fund),
  readFundLedger: v1(readOperations.fundLedger),
  readTrustedParties: v1(readOperations.trustedParties),
  readWalletHistory: v1(readOperations.walletHistory),
  // v2 policies: /workspaces/{workspaceID}/policies, /actions/{actionID}
  listPolicies: v2(policyOperations.list),
  createPolicy: v2(policyOperations.create),
  updatePolicy: v2(policyOperations.update),
  getWorkspaceAction: v2(policyOperations.getAction),
  approveWorkspaceAction: v2(policyOperations.approveAction),
  rejectWorkspaceAction: v2(policyOperations.rejectAction),
  // v2 portfolios: /workspaces/{workspaceID}/accounts
  createPortfolio: v2(portfolioOperations.create),
  createPortfolioWallet: v2(portfolioOperations.createWallet),
  getPortfolio: v2(portfolioOperations.get),
  getPortfolioWallet: v2(portfolioOperations.getWallet),
} as const satisfies Record<string, { version: ApiVersion; spec: OperationSpec }>;

/** An operationId: a key of {@link OPERATIONS}. */
export type OperationId = keyof typeof OPERATIONS;

/** The operationIds of one API version. */
export type OperationIdOf<V extends ApiVersion> = { [K in OperationId]: (typeof OPERATIONS)[K]['version'] extends V ? K : never }[OperationId];

/** One operation: its id, version, declaration and retry class. */
export interface ApiOperation<Id extends string = OperationId> {
  /** The operationId, e.g. `createTransfer`. */
  id: Id;
  /** v1 (signed, spec section 5) or v2 (`x-token`, spec section 5.8). */
  version: ApiVersion;
  /** The declaration: method, path template, schemas. */
  spec: OperationSpec;
  /** Retry class, derived from the declaration (see {@link retryClass}). */
  retry: RetryClass;
}

/**
 * The retry class of a declaration: `deduped` when it has a submission kind
 * (lib/client/submission), `read` when it is idempotent, else `sendOnce`.
 */
export function retryClass(spec: OperationSpec): RetryClass {
  if (spec.submission) return 'deduped';
  return spec.idempotent ? 'read' : 'sendOnce';
}

/** Every operation, in {@link OPERATIONS} order. Built once. */
export const API_OPERATIONS: readonly ApiOperation[] = (Object.keys(OPERATIONS) as OperationId[]).map((id) => {
  const { version, spec } = OPERATIONS[id];
  return { id, version, spec, retry: retryClass(spec) };
});

const byId = new Map<string, ApiOperation>(API_OPERATIONS.map((o) => [o.id, o]));

/**
 * The operation of an operationId.
 * @throws {Error} for an unknown id (a programming error, not user input).
 */
export function apiOperation(id: OperationId): ApiOperation {
  const op = byId.get(id);
  if (!op) throw new Error(`operations: no operation ${String(id)}`);
  return op;
}

/** True when `id` is an operationId of {@link OPERATIONS}. */
export function isOperationId(id: string): id is OperationId {
  return byId.has(id);
}

/**
 * The operations of one API version whose method and path template match: path templates compare
 * with their `{ids}` as wildcards, so `/company/c1/transfer` finds `POST /company/{company_id}/transfer`.
 */
export function operationsForRoute(version: ApiVersion, method: string, path: string): ApiOperation[] {
  return API_OPERATIONS.filter((o) => o.version === version && o.spec.method === method && routePattern(o.spec.path).test(path));
}

const patterns = new Map<string, RegExp>();

/** A regular expression matching a concrete path of a template (`{id}` = one segment). */
export function routePattern(template: string): RegExp {
  let re = patterns.get(template);
  if (!re) {
    re = new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}|\{\w+\}/g, '[^/]+') + '/?$');
    patterns.set(template, re);
  }
  return re;
}
