/**
 * v2 portfolios (called accounts in paths) and their wallets (spec section 2 "v2 resources",
 * section 4 "v2 endpoints"). A new wallet's address appears after a key computation of about
 * 4 to 5 seconds; `waitForAddress` (seconds) is how long the call waits for it. When the wait
 * was too short the answer's `address` is an empty string: read the wallet again later
 * ({@link getPortfolioWallet}).
 */
import { W, type Wire } from '../wire';
import { objectSchema, arrayOf, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S } from '../spec';


/** Portfolio types (spec section 2); `standard` is the default. */
export const PORTFOLIO_TYPES = ['standard', 'exchange'] as const;

/** A portfolio type: one of {@link PORTFOLIO_TYPES}. */
export type PortfolioType = (typeof PORTFOLIO_TYPES)[number];

/** Wallet connect plugins (spec section 2): `defi` a Web3 wallet, `wc` a WalletConnect wallet. */
export const CONNECT_PLUGINS = ['defi', 'wc'] as const;

/** A wallet connect plugin: one of {@link CONNECT_PLUGINS}. */
export type ConnectPlugin = (typeof CONNECT_PLUGINS)[number];

/** A portfolio (spec section 2 "v2 resources"): `accountID`, `name`, `type`, all required. */
export const portfolioSchema = objectSchema(['accountID', 'name', 'type'], { accountID: W.id, name: W.text, type: { type: 'string', enum: PORTFOLIO_TYPES } });

/** A portfolio ({@link portfolioSchema}). */
export type Portfolio = Wire<typeof portfolioSchema>;

/**
 * A wallet of a portfolio as the simulator's `getWallet` reads it (spec section 2 names `name`,
 * `connectPlugin`, `policyID`, `address`; `walletID` is the simulator's id, not a spec field), all
 * required: `address` is '' while the key computation runs.
 */
export const portfolioWalletSchema = objectSchema(['walletID', 'name', 'connectPlugin', 'policyID', 'address'], { walletID: W.id, name: W.text, connectPlugin: { type: 'string', enum: CONNECT_PLUGINS }, policyID: W.id, address: W.text });

/** A wallet of a portfolio ({@link portfolioWalletSchema}). */
export type PortfolioWallet = Wire<typeof portfolioWalletSchema>;

/** A portfolio with its wallets, as the simulator's `get` reads it (simulator only). */
export const portfolioWithWalletsSchema = objectSchema([...portfolioSchema.required, 'wallets'], { ...portfolioSchema.properties, wallets: arrayOf(portfolioWalletSchema) });

/** A portfolio with its wallets ({@link portfolioWithWalletsSchema}). */
export type PortfolioWithWallets = Wire<typeof portfolioWithWalletsSchema>;

/** POST accounts answer: `accountID` (spec section 4), required. */
export const portfolioCreatedSchema = objectSchema(['accountID'], { accountID: W.id });

/** POST accounts answer ({@link portfolioCreatedSchema}). */
export type PortfolioCreated = Wire<typeof portfolioCreatedSchema>;

/** Longest `waitForAddress` accepted, in seconds. */
export const MAX_WAIT_FOR_ADDRESS = 120;

/**
 * Seconds a create-wallet request's timeout exceeds its `waitForAddress`: the request's timeout
 * is at least `waitForAddress + 15` seconds (or the client's timeout when longer), so the client
 * does not give up while the server still waits and then creates the wallet anyway.
 */
export const WAIT_FOR_ADDRESS_MARGIN_SECONDS = 15;

/**
 * The answer of create-wallet (spec section 4 returns the `address`, required: '' when the wait was
 * shorter than the key computation). `walletID` is the simulator's (not a spec field; it adds it
 * so the wallet can be read again): typed when present, not required.
 */
export const createdWalletSchema = objectSchema(['address'], { walletID: W.id, address: W.text });

/** The answer of create-wallet ({@link createdWalletSchema}). */
export type CreatedWallet = Wire<typeof createdWalletSchema>;

/** Operation declarations of the portfolios group (spec section 4 "v2 endpoints"). */
export const portfolioOperations = {
  create: operation('POST', '/workspaces/{workspaceID}/accounts', 'spec section 4, POST {base_url_v2}/workspaces/{workspaceID}/accounts', answers(portfolioCreatedSchema), { body: { type: 'object', required: ['name'], properties: { name: S.name, type: { enum: ['standard', 'exchange'] } } } }),
  createWallet: operation('POST', '/workspaces/{workspaceID}/accounts/{accountID}/wallets', 'spec section 4, POST {base_url_v2}/workspaces/{workspaceID}/accounts/{accountID}/wallets', answers(createdWalletSchema), {
    body: {
      type: 'object',
      required: ['name', 'connectPlugin', 'policyID'],
      properties: {
        name: S.name,
        connectPlugin: { enum: ['defi', 'wc'] },
        policyID: S.id,
        waitForAddress: { type: 'integer', minimum: 0, maximum: MAX_WAIT_FOR_ADDRESS },
      },
    },
  }),
  get: readOperation('/workspaces/{workspaceID}/accounts/{accountID}', 'simulator only: read a portfolio with its wallets (not in the spec)', portfolioWithWalletsSchema),
  getWallet: readOperation('/workspaces/{workspaceID}/accounts/{accountID}/wallets/{walletID}', 'simulator only: read a wallet, e.g. its address once computed (not in the spec)', portfolioWalletSchema),
} satisfies Record<string, OperationSpec>;
