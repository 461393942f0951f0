/**
 * The typed calls of the v2 portfolio operations declared in lib/api/v2/portfolio.ts (sent over
 * a `WorkspaceClient`, lib/client/v2/call.ts).
 */
import { WorkspaceClient } from './client';
import {
  type PortfolioType,
  type PortfolioCreated,
  portfolioOperations,
  type ConnectPlugin,
  type CreatedWallet,
  MAX_WAIT_FOR_ADDRESS,
  WAIT_FOR_ADDRESS_MARGIN_SECONDS,
  type PortfolioWithWallets,
  type PortfolioWallet,
} from '../../api/v2/portfolio';
import type { ApiResponse } from '../transport';
import { callWorkspaceOperation, requireSimulator } from './call';

/**
 * Create a portfolio (`type` default `standard`). Not retried.
 * @returns `{accountID}`.
 * @throws {ValidationError} before sending, naming the field (`name` missing, `type` not `standard`/`exchange`, `workspaceID` missing).
 * @throws {ApiError} for a non-2xx answer or no answer.
 */
export function createPortfolio(client: WorkspaceClient, input: { name: string; type?: PortfolioType; workspaceID?: string }): Promise<ApiResponse<PortfolioCreated>> {
  return callWorkspaceOperation<PortfolioCreated>(client, portfolioOperations.create, input);
}

/**
 * Create a wallet in a portfolio under a policy, waiting up to `waitForAddress` seconds for its
 * address. Not retried. The request's timeout is at least `waitForAddress` +
 * {@link WAIT_FOR_ADDRESS_MARGIN_SECONDS} seconds, whatever the client's timeout: a client-side
 * timeout while the server still waits would leave a created wallet behind an error, and a
 * retry would create a second one.
 * @returns `{walletID, address}` ({@link CreatedWallet}; `walletID` is the simulator's); `address`
 *   is '' when the wait was shorter than the key computation.
 * @throws {ValidationError} before sending, naming the field (`connectPlugin` not `defi`/`wc`, `waitForAddress` out of 0..120, ...).
 * @throws {ApiError} for a non-2xx answer or no answer.
 */
export function createPortfolioWallet(
  client: WorkspaceClient,
  input: { accountID: string; name: string; connectPlugin: ConnectPlugin; policyID: string; waitForAddress?: number; workspaceID?: string },
): Promise<ApiResponse<CreatedWallet>> {
  const wait = input.waitForAddress;
  const waitSeconds = typeof wait === 'number' && Number.isInteger(wait) && wait > 0 && wait <= MAX_WAIT_FOR_ADDRESS ? wait : 0;
  const timeoutMs = Math.max(client.timeoutMs, (waitSeconds + WAIT_FOR_ADDRESS_MARGIN_SECONDS) * 1000);
  return callWorkspaceOperation<CreatedWallet>(client, portfolioOperations.createWallet, input, { timeoutMs });
}

/**
 * Read a portfolio with its wallets. Simulator only (not in the spec): refused unless the client
 * may send simulator operations ({@link WorkspaceClient.simulatorOperations}).
 * @throws {ConfigError} naming `get` on a client that is not a simulator's, before sending.
 * @throws {ValidationError} before sending, naming the field (`accountID`, `workspaceID`).
 * @throws {ApiError} for a non-2xx answer (404 for an unknown portfolio) or no answer.
 */
export async function getPortfolio(client: WorkspaceClient, input: { accountID: string; workspaceID?: string }): Promise<ApiResponse<PortfolioWithWallets>> {
  requireSimulator(client, 'get');
  return callWorkspaceOperation(client, portfolioOperations.get, input);
}

/**
 * Read one wallet of a portfolio: its `address` once the key computation is done. Simulator
 * only (not in the spec): refused unless the client may send simulator operations.
 * @throws {ConfigError} naming `getWallet` on a client that is not a simulator's, before sending.
 * @throws {ValidationError} before sending, naming the field (`accountID`, `walletID`, `workspaceID`).
 * @throws {ApiError} for a non-2xx answer (404 for an unknown wallet) or no answer.
 */
export async function getPortfolioWallet(client: WorkspaceClient, input: { accountID: string; walletID: string; workspaceID?: string }): Promise<ApiResponse<PortfolioWallet>> {
  requireSimulator(client, 'getWallet');
  return callWorkspaceOperation(client, portfolioOperations.getWallet, input);
}
