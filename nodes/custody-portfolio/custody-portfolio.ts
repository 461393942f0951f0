/**
 * `custody-portfolio`: v2 portfolios (accounts) and their wallets (spec section 2 "v2
 * resources", section 4 "v2 endpoints"): `create` (name, type `standard` or `exchange`),
 * `createWallet` (name, connectPlugin `defi` or `wc`, policyID, waitForAddress seconds), and the
 * reads `get` and `getWallet` (simulator only, not in the spec: refused with ECONFIG on a hosted
 * environment) to see an address computed after the wait.
 */
import type { NodeAPI } from 'node-red';
import { createPortfolio, createPortfolioWallet, getPortfolio, getPortfolioWallet, ValidationError, PortfolioType } from '../../lib';
import { registerOperationNode } from '../shared/operation-node';
import type { ConnectPlugin } from '../../lib';

/** The editor's waitForAddress (seconds) or msg.payload's. @throws {ValidationError} naming `waitForAddress`. */
function waitForAddress(RED: NodeAPI, editor: Record<string, unknown>, input: Record<string, unknown>): number | undefined {
  const s = String(editor.waitForAddress ?? '').trim();
  if (s === '') return input.waitForAddress as number | undefined;
  if (!/^\d+$/.test(s)) throw new ValidationError('waitForAddress', RED._('custody-portfolio.errors.waitForAddress', { value: JSON.stringify(s) }));
  return Number(s);
}

/** The editor's name (text, trimmed) or else msg.payload's. */
function editorName(v: unknown, input: Record<string, unknown>): unknown {
  return String(v ?? '').trim() || input.name;
}

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, {
    type: 'custody-portfolio',
    behaviours: {
      create: {
        run: (client, input, editor) => createPortfolio(client, { ...input, name: editorName(editor.portfolioName, input) as string, type: (input.type as PortfolioType) ?? 'standard' }),
      },
      createWallet: {
        run: (client, input, editor) => {
          input.waitForAddress = waitForAddress(RED, editor, input);
          return createPortfolioWallet(client, {
            ...input,
            accountID: input.accountID as string,
            policyID: input.policyID as string,
            name: editorName(editor.walletName, input) as string,
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
      get: { run: (client, input) => getPortfolio(client, input as { accountID: string }) },
      getWallet: {
        run: (client, input) => getPortfolioWallet(client, input as { accountID: string; walletID: string }),
        note: (data) => ((data as { address?: string }).address === '' ? RED._('custody-portfolio.status.addressPendingRead') : undefined),
      },
    },
  });
};
