/**
 * The declaration of an API operation ({@link OperationSpec}: method, path template, JSON schemas
 * of path ids, query and body, answers per status) and the schema pieces and length bounds the
 * declarations share. Declarations only: preparing a request from them is lib/request/prepare.ts,
 * sending it lib/client/call.ts.
 *
 * The input of an operation is one flat object with the API's own names: path ids
 * (`company_id`, `tx_id`, ...), query fields and body fields side by side, e.g.
 * `{company_id, wallet_id, counterparty_wallet_address, expires, ..., send: {symbol, amount}}`.
 * Only the fields an operation declares are sent; anything else in the input is ignored.
 */
import type { TransactionKind } from './kinds';

/** HTTP methods the API uses (spec section 4). */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A JSON schema (draft-07 subset understood by ajv). */
export type JsonSchema = Record<string, unknown>;

/*
 * Length bounds of text and id fields, in characters (Unicode code points, as ajv's `maxLength`
 * counts them). Neither the spec (section 8: "Maximum body sizes ... not shown") nor the OpenAPI
 * gives any, so these are the pack's own: each is well above every real value of its kind, and
 * low enough that a value past it can only be a mistake (a file or a whole message pasted into a
 * field, a runaway expression) that must be refused before it is signed and sent. One bound per
 * kind of value, the same wherever that kind appears (v1 and v2, body, query and path).
 */

/**
 * Ids: every path id (`company_id`, `fund_id`, `tx_id`, `client_id`, `action_id`,
 * `trustedparty_id`, v2 `workspaceID`, `policyID`, `accountID`, ...) and the ids of bodies and
 * queries (`swap_id`, `tx_id`, custody group members, policy member ids). The service's ids are
 * short (UUIDs are 36 characters, the simulator's 27); 128 leaves room for any id format.
 */
export const ID_MAX_LENGTH = 128;

/**
 * Wallet ids and short codes (`wallet_id`, `counterparty_wallet_address`, `send_wallet_id`,
 * `receive_wallet_id`, `recipient_wallet_id`): an id, or three English words separated by
 * spaces (spec section 2 "Wallet identifiers"), far below 128 either way. Bounded as ids.
 */
export const WALLET_ID_MAX_LENGTH = ID_MAX_LENGTH;

/**
 * `partner_txID`: the caller's own unique id of a payment, its idempotency key (spec section
 * 3: a repeated one answers `existing`). An id of the caller's system (an order number, a UUID),
 * so bounded as ids: 128.
 */
export const PARTNER_TXID_MAX_LENGTH = ID_MAX_LENGTH;

/**
 * The custom text fields of a payment (`reference`, `benefit_of`, `account_no`; spec section 4
 * "custom fields") and a company's `ref`: a line of free text copied into the ledger and the
 * approvers' action details. 256, as for names.
 */
export const REFERENCE_MAX_LENGTH = 256;

/**
 * Names (company, fund, wallet, whitelist entry, core client, trusted party, v2 policy,
 * portfolio and wallet) and other one-line free text (a company's `city`): 256.
 */
export const NAME_MAX_LENGTH = 256;

/** A fund's `description`: a few sentences of free text, 1024. */
export const DESCRIPTION_MAX_LENGTH = 1024;

/**
 * L1 (external) addresses (a withdrawal's and a whitelist entry's `address`): bech32 Bitcoin
 * addresses are at most 90 characters, Ethereum's 42; 256 leaves room for longer formats (with
 * a memo or tag) without letting a paste of a whole text through.
 */
export const ADDRESS_MAX_LENGTH = 256;

/**
 * An e-mail address (a trusted party's `address`, spec section 4): 254, the longest address
 * SMTP can carry (RFC 5321's 256-octet path less its angle brackets). A core client id given
 * there instead (type `core-client`) is shorter.
 */
export const EMAIL_MAX_LENGTH = 254;

/** A website domain (a company's `domain`): 253, the longest DNS name (RFC 1035). */
export const DOMAIN_MAX_LENGTH = 253;

/** Asset codes (`send.symbol`, `receive.symbol`, `asset`): `BTC-TESTNET` is 11; 32. */
export const ASSET_CODE_MAX_LENGTH = 32;

/**
 * A decimal amount's text (the nodes' decimal amount option, `"0.015"`): a safe integer of base
 * units has at most 16 digits and a scale at most 18 decimals, so 35 characters with the point;
 * 64 leaves room for trailing zeros.
 */
export const DECIMAL_AMOUNT_MAX_LENGTH = 64;

/** Declaration of one API operation. */
export interface OperationSpec {
  method: HttpMethod;
  /** Path template below the base URL, ids in braces: `/company/{company_id}/transfer/{tx_id}`. */
  path: string;
  /** Query fields (an object schema). */
  query?: JsonSchema & { properties: Record<string, JsonSchema>; required?: readonly string[] };
  /** Body (an object schema); omitted for calls without a body. */
  body?: JsonSchema & { properties: Record<string, JsonSchema>; required?: readonly string[] };
  /**
   * Amount fields of the body in base units, each with the field holding its asset code, as
   * dotted paths: `[{amount: 'send.amount', asset: 'send.symbol'}]`. Used to convert decimal
   * input exactly (see `decimalAmountsToBaseUnits`).
   */
  amounts?: ReadonlyArray<{ amount: string; asset: string }>;
  /**
   * Asset code fields other than the `asset` of {@link OperationSpec.amounts}, as dotted paths
   * into the input (body and query fields side by side; `[]` for every item of an array):
   * `['asset']`, `['wallets[].asset']`. Every asset code field (these and the amounts' assets,
   * see {@link assetCodeFields}) must be a code GET /assets lists ({@link checkAssetCodes}).
   */
  assetFields?: readonly string[];
  /** True when a retry cannot repeat the effect (reads; POSTs keyed by `partner_txID`). */
  idempotent?: boolean;
  /**
   * Set on the money-moving calls: the {@link TransactionKind} under which the submission
   * journal keeps them (lib/client/submission). Such a call is sent through `submitRequest`: journaled,
   * its failures told apart, a transfer re-sent after an unknown outcome.
   */
  submission?: TransactionKind;
  /**
   * The JSON schema of the answer body per HTTP status: the success status(es) (spec section 4,
   * else the OpenAPI path's; a comment beside a schema says where the spec overrides the OpenAPI)
   * and the error statuses with the error body of spec section 7 (lib/api/wire.ts `ERROR_RESPONSES`).
   * A status not listed is not an answer the operation can give. Schemas are `as const` (the wire
   * types are derived from them, lib/api/wire.ts `Wire`) and allow undeclared fields unless the spec
   * forbids them. Checked by `validateResponse` (lib/request/response-check.ts).
   */
  responses?: Readonly<Record<number, JsonSchema>>;
  /** Where the operation is defined: spec section or OpenAPI path. */
  source: string;
}

const pathParamCache = new Map<string, string[]>();

/** Names of the `{ids}` in a path template (parsed once per template). */
export function pathParams(path: string): string[] {
  let names = pathParamCache.get(path);
  if (!names) {
    names = Array.from(path.matchAll(/\{(\w+)\}/g), (m) => m[1]);
    pathParamCache.set(path, names);
  }
  return names;
}

/** A required text of at most `maxLength` characters with at least one non-space character. */
function boundedText<M extends number>(maxLength: M) {
  return { type: 'string', maxLength, pattern: '\\S' } as const;
}

/** An optional text (may be empty) of at most `maxLength` characters. */
function boundedOptionalText<M extends number>(maxLength: M) {
  return { type: 'string', maxLength } as const;
}

/**
 * Schema pieces shared by the operation declarations. Every text has a length bound (one of the
 * `*_MAX_LENGTH` constants above): `S.text(NAME_MAX_LENGTH)`, or a piece that carries its own.
 */
export const S = {
  /** A required text of at most `maxLength` characters, with at least one non-space character. */
  text: boundedText,
  /** An optional text (may be empty) of at most `maxLength` characters. */
  optionalText: boundedOptionalText,
  /** An id in a body or query (`swap_id`, `tx_id`, a member id): text, {@link ID_MAX_LENGTH}. */
  id: boundedText(ID_MAX_LENGTH),
  /** A wallet id or short code (spec section 2 "Wallet identifiers"): text, {@link WALLET_ID_MAX_LENGTH}. */
  walletId: boundedText(WALLET_ID_MAX_LENGTH),
  /** `partner_txID`, the caller's idempotency key of a payment: text, {@link PARTNER_TXID_MAX_LENGTH}. */
  partnerTxId: boundedText(PARTNER_TXID_MAX_LENGTH),
  /** A payment's custom field (`reference`, `benefit_of`, `account_no`): may be empty, {@link REFERENCE_MAX_LENGTH}. */
  customField: boundedOptionalText(REFERENCE_MAX_LENGTH),
  /** A name: text, {@link NAME_MAX_LENGTH}. */
  name: boundedText(NAME_MAX_LENGTH),
  /** An L1 (external) address: text, {@link ADDRESS_MAX_LENGTH}. */
  address: boundedText(ADDRESS_MAX_LENGTH),
  /**
   * Base units of a payment or a quote: a positive safe integer (spec section 2: amounts are in
   * base units; an amount of 0 moves nothing and is a mistake, as is one past 2^53 - 1, which a
   * JSON number no longer holds exactly).
   */
  positiveBaseUnits: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const,
  /** Unix epoch seconds. */
  epochSeconds: { type: 'integer', minimum: 1, maximum: 253402300799 } as const,
  /**
   * An asset code such as `BTC-TESTNET`: upper-case letters, digits and `-`, at most
   * {@link ASSET_CODE_MAX_LENGTH} characters. Declare the field in {@link OperationSpec.amounts}
   * or {@link OperationSpec.assetFields} so that it is also checked against GET /assets.
   */
  assetCode: { type: 'string', maxLength: ASSET_CODE_MAX_LENGTH, pattern: '^[A-Z0-9][A-Z0-9-]*$' } as const,
};

/**
 * `{symbol, amount}`, both required: what a payment sends or receives (spec section 4: `send` of
 * transfers, withdrawals and swap quotes, `receive` of swap quotes); `amount` in base units, > 0.
 * Declare `<field>.symbol` as the asset of `<field>.amount` in {@link OperationSpec.amounts}.
 */
export const PAYMENT = { type: 'object', required: ['symbol', 'amount'], properties: { symbol: S.assetCode, amount: S.positiveBaseUnits } } as const;
