/**
 * `custody-portfolio`: v2 portfolios (accounts) and their wallets (spec section 2 "v2
 * resources", section 4 "v2 endpoints"): `create` (name, type `standard` or `exchange`),
 * `createWallet` (name, connectPlugin `defi` or `wc`, policyID, waitForAddress seconds), and the
 * reads `get` and `getWallet` (simulator only, not in the spec: refused with ECONFIG on a hosted
 * environment) to see an address computed after the wait.
 */
import type { NodeAPI } from 'node-red';
import { v2Operations, createPortfolio, createPortfolioWallet, getPortfolio, getPortfolioWallet, ValidationError, ConnectPlugin, PortfolioType } from '../../lib';
import { registerWorkspaceNode } from '../shared/workspace-node';

const ops = v2Operations.portfolio;

/** The editor's waitForAddress (seconds) or msg.payload's. @throws {ValidationError} naming `waitForAddress`. */
function waitForAddress(RED: NodeAPI, config: Record<string, unknown>, input: Record<string, unknown>): number | undefined {
  const s = String(config.waitForAddress ?? '').trim();
  if (s === '') return input.waitForAddress as number | undefined;
  if (!/^\d+$/.test(s)) throw new ValidationError('waitForAddress', RED._('custody-portfolio.errors.waitForAddress', { value: JSON.stringify(s) }));
  return Number(s);
}

export = function register(RED: NodeAPI): void {
  registerWorkspaceNode(RED, {
    type: 'custody-portfolio',
    editorFields: ['workspaceID', 'accountID', 'walletID', 'policyID', ['type', 'portfolioType'], 'connectPlugin'],
    operations: {
      create: {
        spec: ops.create,
        properties: ['workspaceID', 'portfolioName', 'portfolioType'],
        run: (client, input, config) => {
          const name = String(config.portfolioName ?? '').trim() || input.name;
          return createPortfolio(client, { ...input, name: name as string, type: (input.type as PortfolioType) ?? 'standard' });
        },
      },
      createWallet: {
        spec: ops.createWallet,
        properties: ['workspaceID', 'accountID', 'walletName', 'connectPlugin', 'policyID', 'waitForAddress'],
        run: (client, input, config) => {
          input.waitForAddress = waitForAddress(RED, config, input);
          const name = String(config.walletName ?? '').trim() || input.name;
          return createPortfolioWallet(client, {
            ...input,
            accountID: input.accountID as string,
            policyID: input.policyID as string,
            name: name as string,
            connectPlugin: input.connectPlugin as ConnectPlugin,
            waitForAddress: input.waitForAddress as number | undefined,
          });
        },
        note: (data, input) => {
          const d = data as { walletID?: string; address?: string };
          if (d.address !== '') return undefined;
          return RED._('custody-portfolio.status.addressPending', { wait: String(input.waitForAddress ?? 0), walletID: String(d.walletID) });
        },
      },
      get: {
        spec: ops.get,
        properties: ['workspaceID', 'accountID'],
        run: (client, input) => getPortfolio(client, input as { accountID: string }),
        simulatorOnly: true,
      },
      getWallet: {
        spec: ops.getWallet,
        properties: ['workspaceID', 'accountID', 'walletID'],
        run: (client, input) => getPortfolioWallet(client, input as { accountID: string; walletID: string }),
        note: (data) => ((data as { address?: string }).address === '' ? RED._('custody-portfolio.status.addressPendingRead') : undefined),
        simulatorOnly: true,
      },
    },
  });
};
