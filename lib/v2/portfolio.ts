/**
 * v2 portfolios (called accounts in paths) and their wallets (spec section 2 "v2 resources",
 * section 4 "v2 endpoints"). A new wallet's address appears after a key computation of about
 * 4 to 5 seconds; `waitForAddress` (seconds) is how long the call waits for it. When the wait
 * was too short the answer's `address` is an empty string: read the wallet again later
 * ({@link getPortfolioWallet}).
 */
import type { ApiResponse } from '../client';
import { OperationSpec, S } from '../operation';
import type { WorkspaceClient } from './client';
import { callWorkspaceOperation } from './operation';

/** Portfolio types (spec section 2); `standard` is the default. */
export type PortfolioType = 'standard' | 'exchange';

/** Wallet connect plugins (spec section 2): `defi` a Web3 wallet, `wc` a WalletConnect wallet. */
export type ConnectPlugin = 'defi' | 'wc';

/** A portfolio (spec section 2): `accountID`, `name`, `type`. */
export interface Portfolio {
  accountID: string;
  name: string;
  type: PortfolioType;
}

/** A wallet of a portfolio (spec section 2): `address` is '' while the key computation runs. */
export interface PortfolioWallet {
  walletID: string;
  name: string;
  connectPlugin: ConnectPlugin;
  policyID: string;
  address: string;
}

/** Longest `waitForAddress` accepted, in seconds (keep it below the connection's timeout). */
export const MAX_WAIT_FOR_ADDRESS = 120;

/** Operation declarations of the portfolios group (spec section 4 "v2 endpoints"). */
export const portfolioOperations = {
  create: {
    method: 'POST',
    path: '/workspaces/{workspaceID}/accounts',
    source: 'spec section 4, POST {base_url_v2}/workspaces/{workspaceID}/accounts',
    body: { type: 'object', required: ['name'], properties: { name: S.text, type: { enum: ['standard', 'exchange'] } } },
  },
  createWallet: {
    method: 'POST',
    path: '/workspaces/{workspaceID}/accounts/{accountID}/wallets',
    source: 'spec section 4, POST {base_url_v2}/workspaces/{workspaceID}/accounts/{accountID}/wallets',
    body: {
      type: 'object',
      required: ['name', 'connectPlugin', 'policyID'],
      properties: {
        name: S.text,
        connectPlugin: { enum: ['defi', 'wc'] },
        policyID: S.text,
        waitForAddress: { type: 'integer', minimum: 0, maximum: MAX_WAIT_FOR_ADDRESS },
      },
    },
  },
  get: { method: 'GET', path: '/workspaces/{workspaceID}/accounts/{accountID}', idempotent: true, source: 'simulator: read a portfolio with its wallets (not in the spec)' },
  getWallet: { method: 'GET', path: '/workspaces/{workspaceID}/accounts/{accountID}/wallets/{walletID}', idempotent: true, source: 'simulator: read a wallet, e.g. its address once computed (not in the spec)' },
} satisfies Record<string, OperationSpec>;

/** Create a portfolio (`type` default `standard`). Not retried. @returns `{accountID}`. */
export function createPortfolio(client: WorkspaceClient, input: { name: string; type?: PortfolioType; workspaceID?: string }): Promise<ApiResponse<{ accountID: string }>> {
  return callWorkspaceOperation<{ accountID: string }>(client, portfolioOperations.create, input);
}

/**
 * Create a wallet in a portfolio under a policy, waiting up to `waitForAddress` seconds for its
 * address. Not retried.
 * @returns `{walletID, address}`; `address` is '' when the wait was shorter than the key computation.
 * @throws {ValidationError} naming the field (`connectPlugin` not `defi`/`wc`, `waitForAddress` out of 0..120, ...).
 */
export function createPortfolioWallet(
  client: WorkspaceClient,
  input: { accountID: string; name: string; connectPlugin: ConnectPlugin; policyID: string; waitForAddress?: number; workspaceID?: string },
): Promise<ApiResponse<{ walletID: string; address: string }>> {
  return callWorkspaceOperation<{ walletID: string; address: string }>(client, portfolioOperations.createWallet, input);
}

/** Read a portfolio with its wallets (simulator route). */
export function getPortfolio(client: WorkspaceClient, input: { accountID: string; workspaceID?: string }): Promise<ApiResponse<Portfolio & { wallets: PortfolioWallet[] }>> {
  return callWorkspaceOperation(client, portfolioOperations.get, input);
}

/** Read one wallet of a portfolio (simulator route): its `address` once the key computation is done. */
export function getPortfolioWallet(client: WorkspaceClient, input: { accountID: string; walletID: string; workspaceID?: string }): Promise<ApiResponse<PortfolioWallet>> {
  return callWorkspaceOperation(client, portfolioOperations.getWallet, input);
}
