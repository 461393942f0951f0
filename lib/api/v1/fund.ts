/**
 * Funds and wallets. The spec leaves their creation and objects out ("not shown"); the shapes
 * follow the OpenAPI: POST /company/{company_id}/fund (Fund -> CreateFundResponse),
 * POST /company/{company_id}/fund/{fund_id}/wallet (FundWallet -> WalletIDList),
 * GET /company/{company_id}/fund/{fund_id} (FundDetail), GET /wallet/{wallet_id} (FundWalletInfo).
 * Deposits, ledger, whitelist, wallet history and holdings: spec section 4 "Funds, deposits,
 * ledger, whitelist" (list shapes the service's documentation examples).
 */
import { W, CONFLICT_RESPONSE, emptyBodySchema, type Wire } from '../wire';
import { objectSchema, arrayOf, listSchema, countedListSchema, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S, DESCRIPTION_MAX_LENGTH } from '../spec';

/**
 * A custody group to create (OpenAPI NewCustodyGroup): `threshold` approvals needed (>= 1) among
 * `members` (trusted entity ids, at least one). Both required.
 */
export const custodyGroupSchema = objectSchema(['threshold', 'members'], { threshold: { type: 'integer', minimum: 1 }, members: { type: 'array', minItems: 1, items: S.id } });

/** A custody group to create ({@link custodyGroupSchema}). */
export type CustodyGroup = Wire<typeof custodyGroupSchema>;

/**
 * A wallet to create (OpenAPI NewWallet): `name` and `asset` required; `type` 0 standard, 1
 * dedicated, 2 multi-counterparty; custody groups (null or absent: the fund's); `connect` the
 * external counterparties of a dedicated wallet.
 */
export const newWalletSchema = objectSchema(['name', 'asset'], {
  name: S.name,
  asset: S.assetCode,
  type: { type: 'integer', enum: [0, 1, 2] },
  custodygroup_withdraw: { anyOf: [custodyGroupSchema, { type: 'null' }] },
  custodygroup_tx: { anyOf: [custodyGroupSchema, { type: 'null' }] },
  connect: { anyOf: [{ type: 'array', items: { type: 'object', properties: { counterparty_id: S.id, client_id: S.id } } }, { type: 'null' }] },
});

/** A wallet to create ({@link newWalletSchema}). */
export type NewWallet = Wire<typeof newWalletSchema>;

/**
 * A custody policy as read back (OpenAPI Policy): `id`, `name`, `threshold` (approvals needed),
 * `members` (OpenAPI Entity: `type` user, company or core-client, `id`, `name`, and per type a
 * `user`, `company` or `core-client` object).
 */
export const policySchema = objectSchema(['id', 'name', 'threshold', 'members'], {
  id: W.id,
  name: W.text,
  threshold: W.count,
  members: {
    type: 'array',
    items: { type: 'object', required: ['type', 'id', 'name'], properties: { type: { type: 'string', enum: ['user', 'company', 'core-client'] }, id: W.id, name: W.text } },
  },
});

/** A custody policy as read back ({@link policySchema}). */
export type Policy = Wire<typeof policySchema>;

/**
 * A wallet as read back (GET /wallet/{wallet_id}, and each wallet of a fund; OpenAPI
 * FundWalletInfo; the service's documentation examples). Spec section 4 names `short_code`, assets and `balance`;
 * the other required fields are the OpenAPI's and the documentation examples'. `short_code` is three English words
 * separated by spaces (spec section 2 "Wallet identifiers"), usable wherever a wallet id is;
 * `balance` base units; `type` the OpenAPI WalletType (0 standard, 1 dedicated, 2
 * multi-counterparty); `connected` the connected external counterparties (or null).
 */
export const walletSchema = objectSchema(['wallet_id', 'name', 'asset', 'type', 'status', 'address', 'short_code', 'balance', 'custodygroup_withdraw', 'custodygroup_tx'], {
  wallet_id: W.id,
  name: W.text,
  asset: W.id,
  type: { type: 'integer' },
  status: W.text,
  address: W.text,
  address_type: W.text,
  short_code: { type: 'string', pattern: '^[^\\s]+ [^\\s]+ [^\\s]+$' },
  balance: W.unsignedBaseUnits,
  custodygroup_withdraw: W.text,
  custodygroup_tx: W.text,
  policy_withdraw: policySchema,
  policy_tx: policySchema,
  connected: {
    anyOf: [
      { type: 'array', items: { type: 'object', properties: { client_id: W.text, counterparty_id: W.text, name: W.text, status: W.text } } },
      { type: 'null' },
    ],
  },
});

/** A wallet as read back ({@link walletSchema}); `balance` in base units. */
export type Wallet = Wire<typeof walletSchema>;

/**
 * A fund as read back (GET /company/{company_id}/fund/{fund_id}; OpenAPI FundDetail; spec section
 * 4: "fund details including all wallets, each with short_code"). `members` are OpenAPI
 * FundMember `{entity, permissions}`; `assets` asset codes.
 */
export const fundSchema = objectSchema(['fund_id', 'name', 'custodygroup_withdraw', 'custodygroup_tx', 'wallets'], {
  fund_id: W.id,
  name: W.text,
  description: W.text,
  custodygroup_withdraw: W.text,
  custodygroup_tx: W.text,
  policy_withdraw: policySchema,
  policy_tx: policySchema,
  members: { type: 'array', items: { type: 'object', properties: { entity: { type: 'object' }, permissions: { type: 'object' } } } },
  assets: arrayOf(W.id),
  wallets: arrayOf(walletSchema),
});

/** A fund as read back ({@link fundSchema}). */
export type Fund = Wire<typeof fundSchema>;

/** POST fund answer (OpenAPI CreateFundResponse; the service's documentation examples): the new fund id and its custody group ids. */
export const createFundResponseSchema = objectSchema(['fund_id', 'custodygroup_withdraw', 'custodygroup_tx'], { fund_id: W.id, custodygroup_withdraw: W.id, custodygroup_tx: W.id });

/** POST fund answer ({@link createFundResponseSchema}). */
export type CreateFundResponse = Wire<typeof createFundResponseSchema>;

/** POST .../fund/{fund_id}/wallet answer (OpenAPI WalletIDList; the service's documentation examples): `{wallets: [wallet ids]}`. */
export const walletIdListSchema = listSchema('wallets', W.id);

/** POST .../fund/{fund_id}/wallet answer ({@link walletIdListSchema}). */
export type WalletIdList = Wire<typeof walletIdListSchema>;


/**
 * The optional ledger filters (spec section 4): `asset` (an asset code), `wallet_id` (one
 * wallet of the fund) and `direction` (`all`, `in` or `out`). Shared with the read-only
 * `GET /funds/{fund_id}/ledger`.
 */
export const ledgerQuery = {
  type: 'object',
  properties: { asset: S.assetCode, wallet_id: S.walletId, direction: { type: 'string', enum: ['all', 'in', 'out'] } },
} as const satisfies OperationSpec['query'];

/**
 * The optional `since` of a wallet history read (OpenAPI GET /wallet/{wallet_id}/history: only
 * the history after that epoch timestamp, in seconds). The spec sends nothing; the filter is the
 * OpenAPI's. Shared with the read-only `GET /wallets/{wallet_id}/history`.
 */
export const walletHistoryQuery = {
  type: 'object',
  properties: { since: { type: 'number', minimum: 0 } },
} as const satisfies OperationSpec['query'];

/**
 * One item of a wallet's history (OpenAPI FundHistoryItem; the spec does not show this payload):
 * `amount`, `fee`, `net_amount` base units, signed (OpenAPI: sent and received differ in sign),
 * `timestamp` epoch seconds.
 */
export const walletHistoryItemSchema = objectSchema(['wallet_id', 'tx_id', 'chain_tx_id', 'asset', 'amount', 'fee', 'net_amount', 'timestamp'], {
  wallet_id: W.id,
  tx_id: W.text,
  chain_tx_id: W.text,
  asset: W.id,
  amount: W.baseUnits,
  fee: W.baseUnits,
  net_amount: W.baseUnits,
  timestamp: W.epochSeconds,
});

/** One item of a wallet's history ({@link walletHistoryItemSchema}). */
export type WalletHistoryItem = Wire<typeof walletHistoryItemSchema>;

/** A wallet's history (OpenAPI FundWalletHistory): `{history: [...]}`. */
export const walletHistorySchema = listSchema('history', walletHistoryItemSchema);

/** A wallet's history ({@link walletHistorySchema}). */
export type WalletHistory = Wire<typeof walletHistorySchema>;

/** Ledger filters ({@link ledgerQuery}); all optional. */
export type LedgerFilter = Wire<typeof ledgerQuery>;

/**
 * A ledger entry (spec section 2 "Ledger entry"): every field of the spec's list is required.
 * `amount`, `fees`, `netAmount` base units; `timestamp` and `expireTime` epoch seconds
 * (`expireTime` 0 when none). For deposits `TxID`, `status` and the counterparty fields are empty
 * strings and `fees` is 0. `type` is one of the OpenAPI TxHistoryItem's values (the spec: "for
 * example transferOut, deposit"); `status` is text (the OpenAPI enum omits the deposits' '').
 */
export const ledgerEntrySchema = {
  type: 'object',
  required: [
    'TxID', 'chainTxID', 'fundID', 'timestamp', 'expireTime', 'status', 'type', 'asset', 'amount', 'fees', 'netAmount',
    'counterpartyID', 'counterpartyName', 'address', 'reference', 'benefitOf', 'accountNo',
  ],
  properties: {
    TxID: W.text,
    chainTxID: W.text,
    fundID: W.text,
    timestamp: W.epochSeconds,
    expireTime: W.epochSeconds,
    status: W.text,
    type: { type: 'string', enum: ['none', 'deposit', 'withdraw', 'transferIn', 'transferOut', 'swap', 'swapIn', 'swapOut'] },
    asset: W.id,
    amount: W.baseUnits,
    fees: W.unsignedBaseUnits,
    netAmount: W.baseUnits,
    counterpartyID: W.text,
    counterpartyName: W.text,
    address: W.text,
    reference: W.text,
    benefitOf: W.text,
    accountNo: W.text,
  },
} as const;

/** A ledger entry ({@link ledgerEntrySchema}). */
export type LedgerEntry = Wire<typeof ledgerEntrySchema>;

/** A fund ledger: `List` of entries (spec section 4), `Total` their count (the service's documentation examples, OpenAPI TxLedger). */
export const ledgerSchema = objectSchema(['List'], { Total: W.count, List: arrayOf(ledgerEntrySchema) });

/** A fund ledger ({@link ledgerSchema}). */
export type Ledger = Wire<typeof ledgerSchema>;

/** A deposit wallet entry (spec section 2): `asset` code, `address` (L1), `balance` base units. */
export const depositEntrySchema = objectSchema(['asset', 'address', 'balance'], { asset: W.id, address: W.text, balance: W.unsignedBaseUnits });

/** A deposit wallet entry ({@link depositEntrySchema}). */
export type DepositEntry = Wire<typeof depositEntrySchema>;

/** GET .../fund/{fund_id}/deposit answer: `total_count`, `list[]` (spec section 4). */
export const depositListSchema = countedListSchema(depositEntrySchema);

/** GET .../fund/{fund_id}/deposit answer ({@link depositListSchema}). */
export type DepositList = Wire<typeof depositListSchema>;

/** A whitelisted external address of a fund (spec section 4; OpenAPI FundWhitelist): `name`, `asset`, `address`. */
export const whitelistEntrySchema = objectSchema(['name', 'asset', 'address'], { name: W.text, asset: W.id, address: W.text });

/** A whitelisted external address ({@link whitelistEntrySchema}). */
export type WhitelistEntry = Wire<typeof whitelistEntrySchema>;

/** GET .../fund/{fund_id}/whitelist answer (OpenAPI FundWhitelist; the service's documentation examples): `total_count`, `list`. */
export const whitelistSchema = countedListSchema(whitelistEntrySchema);

/** GET .../fund/{fund_id}/whitelist answer ({@link whitelistSchema}). */
export type Whitelist = Wire<typeof whitelistSchema>;

/**
 * Company holdings (the service's documentation examples `{total_count, holdings: [{code, amount}]}`; OpenAPI Holdings, which
 * requires `holdings` and each holding's `code` and `amount`): `amount` in base units.
 */
export const holdingsSchema = objectSchema(['total_count', 'holdings'], {
  total_count: W.count,
  holdings: { type: 'array', items: { type: 'object', required: ['code', 'amount'], properties: { code: W.id, amount: W.unsignedBaseUnits } } },
});

/** Company holdings ({@link holdingsSchema}). */
export type Holdings = Wire<typeof holdingsSchema>;

/** Operation declarations of this group, by id. */
export const fundOperations = {
  createFund: operation('POST', '/company/{company_id}/fund', 'OpenAPI POST /company/{company_id}/fund (schema Fund)', answers(createFundResponseSchema), {
    assetFields: ['wallets[].asset'],
    body: {
      type: 'object',
      required: ['name', 'custodygroup_withdraw', 'custodygroup_tx'],
      properties: {
        name: S.name,
        description: S.optionalText(DESCRIPTION_MAX_LENGTH),
        custodygroup_withdraw: custodyGroupSchema,
        custodygroup_tx: custodyGroupSchema,
        wallets: arrayOf(newWalletSchema),
      },
    },
  }),
  // 409: OpenAPI ("already exists").
  addWallet: operation('POST', '/company/{company_id}/fund/{fund_id}/wallet', 'OpenAPI POST /company/{company_id}/fund/{fund_id}/wallet (schema FundWallet)', { ...answers(walletIdListSchema), ...CONFLICT_RESPONSE }, {
    assetFields: ['wallets[].asset'],
    body: { type: 'object', required: ['wallets'], properties: { wallets: { type: 'array', minItems: 1, items: newWalletSchema } } },
  }),
  getFund: readOperation('/company/{company_id}/fund/{fund_id}', 'OpenAPI GET /company/{company_id}/fund/{fund_id}', fundSchema),
  getWallet: readOperation('/wallet/{wallet_id}', 'spec section 4, GET wallet/{wallet_id}; OpenAPI FundWalletInfo', walletSchema),
  walletHistory: readOperation('/wallet/{wallet_id}/history', 'spec section 4, GET /wallet/{wallet_id}/history; optional query since: OpenAPI', walletHistorySchema, { query: walletHistoryQuery }),
  deposits: readOperation('/company/{company_id}/fund/{fund_id}/deposit', 'spec section 4, GET /company/{company_id}/fund/{fund_id}/deposit', depositListSchema),
  ledger: readOperation('/company/{company_id}/fund/{fund_id}/ledger', 'spec section 4, GET /company/{company_id}/fund/{fund_id}/ledger (optional query asset, wallet_id, direction)', ledgerSchema, { query: ledgerQuery, assetFields: ['asset'] }),
  holdings: readOperation('/company/{company_id}/holding', 'spec section 4, GET /company/{company_id}/holding', holdingsSchema),
  // Spec section 4: "empty body, HTTP 200".
  addWhitelist: operation('POST', '/company/{company_id}/fund/{fund_id}/whitelist', 'spec section 4, POST /company/{company_id}/fund/{fund_id}/whitelist (name, asset, address, all required)', answers(emptyBodySchema), {
    assetFields: ['asset'],
    body: { type: 'object', required: ['name', 'asset', 'address'], properties: { name: S.name, asset: S.assetCode, address: S.address } },
  }),
  listWhitelist: readOperation('/company/{company_id}/fund/{fund_id}/whitelist', 'OpenAPI GET /company/{company_id}/fund/{fund_id}/whitelist (FundWhitelist)', whitelistSchema),
} satisfies Record<string, OperationSpec>;
