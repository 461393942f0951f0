/**
 * The palette's operation nodes and the API operations each sends: per node type, each operation
 * name a flow stores in the node's `operation` property (`create`, `get`, ...; docs/nodes.md) ->
 * the operationId it sends (lib/api/operations.ts `OPERATIONS`). Node types are a Node-RED concern:
 * lib knows operations only by operationId, and this map is the one place that joins the two.
 * The edit dialog's Operation select (nodes/shared/editor-table.ts) offers these names, and the
 * `resolve` of the money-moving nodes, which looks a payment up instead of sending one operation.
 */
import { apiOperation, type ApiVersion, type OperationId, type OperationSpec } from '../../lib';

/** Every operation node type -> operation name -> operationId. */
export const PALETTE = {
  'custody-assets': { assets: 'listAssets', fee: 'quoteFee' },
  'custody-company': { create: 'createCompany', get: 'getCompany', update: 'updateCompany', search: 'searchCompanies' },
  'custody-trusted-party': { add: 'addTrustedParty', list: 'listTrustedParties', remove: 'removeTrustedParty' },
  'custody-fund': {
    createFund: 'createFund',
    addWallet: 'addWallet',
    getFund: 'getFund',
    getWallet: 'getWallet',
    walletHistory: 'getWalletHistory',
    deposits: 'getDeposits',
    ledger: 'getLedger',
    holdings: 'getHoldings',
    addWhitelist: 'addWhitelist',
    listWhitelist: 'listWhitelist',
  },
  'custody-transfer': { create: 'createTransfer', get: 'getTransfer' },
  'custody-core-client': { create: 'createCoreClient', list: 'listCoreClients', actions: 'listActions', action: 'getAction', wallets: 'listCoreClientWallets' },
  'custody-action': { approve: 'approveAction', reject: 'rejectAction' },
  'custody-withdraw': { create: 'createWithdrawal', get: 'getWithdrawal' },
  'custody-swap-make': { make: 'makeSwap', get: 'getSwapMake', cancel: 'cancelSwap' },
  'custody-swap-take': { take: 'takeSwap', get: 'getSwapTake' },
  'custody-liquidity-hub': { publish: 'publishQuote', list: 'listLiquidityHub', approveTake: 'approveSwapTake' },
  'custody-sweep': { exchanges: 'listExchanges', start: 'startSweep', status: 'getSweepStatus' },
  'custody-read': {
    account: 'readAccount',
    balance: 'readBalance',
    funds: 'readFunds',
    fund: 'readFund',
    fundLedger: 'readFundLedger',
    trustedParties: 'readTrustedParties',
    walletHistory: 'readWalletHistory',
  },
  'custody-policy': {
    list: 'listPolicies',
    create: 'createPolicy',
    update: 'updatePolicy',
    getAction: 'getWorkspaceAction',
    approveAction: 'approveWorkspaceAction',
    rejectAction: 'rejectWorkspaceAction',
  },
  'custody-portfolio': { create: 'createPortfolio', createWallet: 'createPortfolioWallet', get: 'getPortfolio', getWallet: 'getPortfolioWallet' },
} as const satisfies Record<string, Record<string, OperationId>>;

/** An operation node type: a key of {@link PALETTE}. */
export type OperationNodeType = keyof typeof PALETTE;

/** Every operation node type, in {@link PALETTE} order. */
export const OPERATION_NODE_TYPES = Object.keys(PALETTE) as OperationNodeType[];

/** True when `type` is an operation node type of {@link PALETTE}. */
export function isOperationNodeType(type: string): type is OperationNodeType {
  return Object.prototype.hasOwnProperty.call(PALETTE, type);
}

/** A node type's operations: operation name -> operationId. */
export function paletteOperations(type: OperationNodeType): Readonly<Record<string, OperationId>> {
  return PALETTE[type];
}

/** A node type's operations with their declarations: operation name -> {@link OperationSpec}. */
export function paletteSpecs(type: OperationNodeType): Record<string, OperationSpec> {
  return Object.fromEntries(Object.entries(paletteOperations(type)).map(([name, id]) => [name, apiOperation(id).spec]));
}

/**
 * The API version a node type speaks (that of its operations).
 * @throws {Error} when its operations mix versions (a programming error).
 */
export function paletteVersion(type: OperationNodeType): ApiVersion {
  const versions = new Set(Object.values(paletteOperations(type)).map((id) => apiOperation(id).version));
  if (versions.size !== 1) throw new Error(`palette: ${type} mixes API versions ${[...versions].join(', ')}`);
  return [...versions][0];
}
