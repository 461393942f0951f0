/**
 * One mechanism for every API operation: a declarative {@link OperationSpec} (method, path
 * template, JSON schemas of path ids, query and body) and {@link callOperation}, which
 * validates a flat input object against it, builds the request and sends it. Bad input is
 * refused with a {@link ValidationError} naming the field before anything is sent.
 *
 * The input of an operation is one flat object with the API's own names: path ids
 * (`company_id`, `tx_id`, ...), query fields and body fields side by side, e.g.
 * `{company_id, wallet_id, counterparty_wallet_address, expires, ..., send: {symbol, amount}}`.
 * Only the fields an operation declares are sent; anything else in the input is ignored.
 */
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { CustodyClient, ApiResponse, HttpMethod } from './client';
import { ValidationError, characterCount, shortValue, type SubmissionKind } from './errors';
import { findListedAsset, unknownAssetText } from './asset-list';
import { submitRequest, type SubmitOptions, type SubmitResult } from './submission/submit';
import { submissionRef } from './submission/kinds';

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
   * Set on the money-moving calls: the {@link SubmissionKind} under which the submission
   * journal keeps them (lib/submission). Such a call is sent through `submitRequest`: journaled,
   * its failures told apart, a transfer re-sent after an unknown outcome.
   */
  submission?: SubmissionKind;
  /**
   * The JSON schema of the answer body per HTTP status: the success status(es) (spec section 4,
   * else the OpenAPI path's; a comment beside a schema says where the spec overrides the OpenAPI)
   * and the error statuses with the error body of spec section 7 (lib/wire.ts `ERROR_RESPONSES`).
   * A status not listed is not an answer the operation can give. Schemas are `as const` (the wire
   * types are derived from them, lib/wire.ts `Wire`) and allow undeclared fields unless the spec
   * forbids them. Checked by `validateResponse` (lib/response-check.ts).
   */
  responses?: Readonly<Record<number, JsonSchema>>;
  /** Where the operation is defined: spec section or OpenAPI path. */
  source: string;
}

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
const compiled = new WeakMap<object, ValidateFunction>();

function validator(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/**
 * A path id: printable text without `/`, `?`, `#`, `%` or a backslash, not `.` or `..` (which
 * URL resolution would collapse into another endpoint), no leading or trailing space. Short
 * codes, with their inner spaces, pass.
 * The editor scripts check with it too (written into resources/custody-editor.js at build).
 */
export const PATH_ID = /^(?!\.{1,2}$)[^\s/?#%\\\x00-\x1f\x7f](?:[^/?#%\\\x00-\x1f\x7f]*[^\s/?#%\\\x00-\x1f\x7f])?$/;

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

/** What an editor shows of an operation (see {@link describeOperation}). */
export interface OperationDescription {
  /** Method and path template, with `?name=` for each query field: `GET /company/search?query=`. */
  call: string;
  /** Every input field, nested object fields dotted: `company_id`, ..., `send.symbol`, `send.amount`. */
  fields: string[];
  /** The fields that must be present. */
  required: string[];
  /** True when the body has amount fields (see {@link OperationSpec.amounts}). */
  amounts: boolean;
  /** True when the body has an `expires` field. */
  expires: boolean;
}

function nestedFields(schema: JsonSchema | undefined, prefix = ''): string[] {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(props).flatMap(([name, sub]) => (sub.type === 'object' && sub.properties ? nestedFields(sub, `${prefix}${name}.`) : [prefix + name]));
}

/**
 * Describe an operation for people: its call, the fields it reads and which are required.
 * Source of the editor's per-operation tips, so they cannot drift from what is sent.
 */
export function describeOperation(spec: OperationSpec): OperationDescription {
  const query = Object.keys(spec.query?.properties ?? {});
  return {
    call: `${spec.method} ${spec.path}${query.length ? '?' + query.map((q) => `${q}=`).join('&') : ''}`,
    fields: [...pathParams(spec.path), ...query, ...nestedFields(spec.body)],
    required: [...pathParams(spec.path), ...(spec.query?.required ?? []), ...(spec.body?.required ?? [])],
    amounts: (spec.amounts?.length ?? 0) > 0,
    expires: Boolean(spec.body?.properties.expires),
  };
}

/** The value at an ajv `instancePath` (`/send/amount`) of `data`, or undefined. */
function valueAtPointer(data: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), data);
}

/**
 * The refusal of a text longer than its bound: `reference: must be at most 256 characters, got
 * 1048576` (the length, never the value).
 */
export function tooLongError(field: string, max: number, length: number): ValidationError {
  return new ValidationError(field, `must be at most ${max} characters, got ${length}`);
}

/**
 * Turn the first ajv error into a message that names the field (dotted, e.g. `send.amount`)
 * and what was expected. A bad value is quoted only as a short prefix ({@link shortValue}); a
 * text past its bound is described by its length alone.
 * @param data the object that was validated (to read the bad value's length or number).
 */
function toValidationError(error: ErrorObject, data: unknown): ValidationError {
  const path = error.instancePath.split('/').filter(Boolean);
  if (error.keyword === 'required') path.push(String((error.params as { missingProperty: string }).missingProperty));
  const field = path.join('.');
  const value = valueAtPointer(data, error.instancePath);
  const limit = (error.params as { limit?: number }).limit;
  switch (error.keyword) {
    case 'required':
      return new ValidationError(field, 'required');
    case 'type':
      return new ValidationError(field || 'payload', `must be ${(error.params as { type: string }).type}`);
    case 'maxLength':
      return tooLongError(field, limit!, typeof value === 'string' ? characterCount(value) : NaN);
    case 'minLength':
      return new ValidationError(field, `must be at least ${limit} characters, got ${typeof value === 'string' ? characterCount(value) : NaN}`);
    case 'minimum':
      return new ValidationError(field, `must be >= ${limit}, got ${shortValue(value)}`);
    case 'maximum':
      return new ValidationError(field, `must be <= ${limit}, got ${shortValue(value)}`);
    case 'pattern':
      return new ValidationError(field, (error.params as { pattern: string }).pattern === '\\S' ? 'must not be empty or blank' : `must match ${(error.params as { pattern: string }).pattern}, got ${shortValue(value)}`);
    case 'enum':
      return new ValidationError(field, `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`);
    default:
      return new ValidationError(field || 'payload', error.message ?? 'invalid');
  }
}

/**
 * A copy of `value` with only what `schema` declares: the declared properties of objects, at
 * every depth (arrays by their `items`). What is not declared is never sent. Values that are
 * not of the declared shape are copied as they are, for validation to refuse.
 */
function pickDeclared(value: unknown, schema: JsonSchema | undefined): unknown {
  if (!schema) return value;
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (props && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, sub] of Object.entries(props)) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = pickDeclared(v, sub);
    }
    return out;
  }
  if (schema.items && Array.isArray(value)) return value.map((v) => pickDeclared(v, schema.items as JsonSchema));
  if (Array.isArray(schema.anyOf)) {
    const objectSchema = (schema.anyOf as JsonSchema[]).find((s) => s.properties || s.items);
    return objectSchema ? pickDeclared(value, objectSchema) : value;
  }
  return value;
}

/** Text that reads as a number: `-1`, `0`, `1.5`, `1e3`, `+7`, `.5` (not hex such as `0x1f`). */
const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
/** A positive whole number in plain digits (`7`, `007`; not `0`, `00`, `+7`, `7.0`). */
const POSITIVE_INTEGER_TEXT = /^\d*[1-9]\d*$/;

/**
 * One path id, checked and URL-encoded.
 * @param name the path id's name, e.g. `tx_id`, named in an error.
 * @param v text of at most {@link ID_MAX_LENGTH} characters (see {@link PATH_ID}), or a
 *   positive safe integer. Text that reads as a number must be a positive whole number: `-1`,
 *   `0`, `1.5` and `1e3` are refused, as the numbers -1 and 0 are: such a value is taken for
 *   a mistake (an unset counter, a failed parse, a default of 0), not for an id.
 * @throws {ValidationError} `required` when missing or empty, else `must be an id ...` or the
 *   length bound.
 */
function encodePathId(name: string, v: unknown): string {
  if (v === undefined || v === '') throw new ValidationError(name, 'required');
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v <= 0) throw new ValidationError(name, `must be an id: a number id must be a positive whole number, got ${shortValue(v)}`);
    return String(v);
  }
  if (typeof v !== 'string') throw new ValidationError(name, `must be an id (text or a positive whole number), got ${shortValue(v)}`);
  const length = characterCount(v);
  if (length > ID_MAX_LENGTH) throw tooLongError(name, ID_MAX_LENGTH, length);
  if (NUMBER_TEXT.test(v) && !POSITIVE_INTEGER_TEXT.test(v)) throw new ValidationError(name, `must be an id: a number id must be a positive whole number, got ${shortValue(v)}`);
  if (!PATH_ID.test(v)) throw new ValidationError(name, 'must be an id: no "/", "?", "#", "%", "\\", control characters or surrounding spaces, and not "." or ".."');
  try {
    return encodeURIComponent(v);
  } catch {
    throw new ValidationError(name, 'must be well-formed text (a lone UTF-16 surrogate cannot be sent)');
  }
}

/** Unix epoch seconds now (the client's clock). */
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The request an input maps to, after validation; nothing is sent. Asset codes are checked
 * against GET /assets separately ({@link checkAssetCodes}): this function sends nothing at all.
 * @returns `{path, query, body}` with the path ids URL-encoded into `path`.
 * @throws {ValidationError} naming the first bad field: a missing or malformed path id (see
 *   {@link encodePathId}: too long, a number that is not a positive whole number, characters
 *   that would change the path), a query or body field that is missing, of the wrong type,
 *   longer than its bound (`reference: must be at most 256 characters, got 1048576`), out of
 *   range or not an allowed value, an `expires` that is not in the future.
 */
export function prepareOperation(spec: OperationSpec, input: Record<string, unknown>): { path: string; query?: Record<string, string | number | boolean>; body?: Record<string, unknown> } {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new ValidationError('payload', 'must be an object');
  const names = pathParams(spec.path);
  let path = spec.path;
  for (const name of names) path = path.replace(`{${name}}`, encodePathId(name, input[name]));
  // Belt and braces: the URL must keep the template's segments (no id may resolve into another path).
  if (new URL(path, 'http://h').pathname !== path) throw new ValidationError(names.join(', ') || 'path', 'an id changed the request path');
  let query: Record<string, string | number | boolean> | undefined;
  if (spec.query) {
    query = pickDeclared(input, spec.query) as Record<string, string | number | boolean>;
    const v = validator(spec.query);
    if (!v(query)) throw toValidationError(v.errors![0], query);
  }
  let body: Record<string, unknown> | undefined;
  if (spec.body) {
    body = pickDeclared(input, spec.body) as Record<string, unknown>;
    const v = validator(spec.body);
    if (!v(body)) throw toValidationError(v.errors![0], body);
    // An expiry in the past can only be refused by the service: refuse it here, before sending.
    if (spec.body.properties.expires && typeof body.expires === 'number' && body.expires <= nowSeconds()) {
      throw new ValidationError('expires', `must be in the future (epoch seconds), got ${body.expires}, now is ${nowSeconds()}`);
    }
  }
  return { path, query, body };
}

/**
 * The asset code fields of an operation, each once, as dotted paths into the input (body and
 * query fields side by side; `[]` for every item of an array): the `asset` of each of its
 * {@link OperationSpec.amounts} and its {@link OperationSpec.assetFields}.
 */
export function assetCodeFields(spec: OperationSpec): string[] {
  return [...new Set([...(spec.amounts ?? []).map((a) => a.asset), ...(spec.assetFields ?? [])])];
}

/**
 * The values at a dotted path with `[]` items (`wallets[].asset`), each with its field name as
 * errors name it (`wallets.0.asset`, as ajv's paths read); a missing step gives undefined.
 */
function valuesAtPath(data: unknown, path: string): Array<[field: string, value: unknown]> {
  let found: Array<[string, unknown]> = [['', data]];
  for (const part of path.split('.')) {
    const each = part.endsWith('[]');
    const key = each ? part.slice(0, -2) : part;
    const next: Array<[string, unknown]> = [];
    for (const [at, o] of found) {
      const v = o !== null && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>)[key] : undefined;
      const field = at ? `${at}.${key}` : key;
      if (!each) next.push([field, v]);
      else if (Array.isArray(v)) v.forEach((item, i) => next.push([`${field}.${i}`, item]));
    }
    found = next;
  }
  return found;
}

/**
 * Refuse an asset code that GET /assets does not list, before anything else is sent: every
 * asset code field of `spec` ({@link assetCodeFields}) present in `request` must be a code of
 * the client's asset list (spec section 2 "Asset"; cached per client, fetched again when a code
 * is not in a list older than a minute: lib/asset-list.ts). Sends nothing when the operation has
 * no asset code field or the request none of them; else at most the one GET /assets of the
 * client (not one per request).
 *
 * `callOperation` calls it after {@link prepareOperation}; a caller that prepares requests itself
 * (lib/v1/request.ts `signedRequest`) calls it too.
 * @param request the prepared request (`query` and `body`), or any object with the input's
 *   fields under `body`.
 * @throws {ValidationError} naming the field: `send.symbol: unknown asset "XYZ"; GET /assets
 *   lists BTC, BTC-TESTNET, ...`; also for a code that is not text or is longer than
 *   {@link ASSET_CODE_MAX_LENGTH} (checked before any GET).
 * @throws {ApiError} when GET /assets fails (no answer, non-2xx, or no asset list in the
 *   answer): then the operation is not sent either.
 */
export async function checkAssetCodes(client: CustodyClient, spec: OperationSpec, request: { query?: Record<string, unknown>; body?: unknown }): Promise<void> {
  const fields = assetCodeFields(spec);
  if (fields.length === 0) return;
  const body = request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body) ? (request.body as Record<string, unknown>) : {};
  const input = { ...request.query, ...body };
  const codes = fields.flatMap((f) => valuesAtPath(input, f)).filter(([, v]) => v !== undefined);
  for (const [field, code] of codes) {
    if (typeof code !== 'string') throw new ValidationError(field, `must be an asset code (string), got ${shortValue(code)}`);
    const length = characterCount(code);
    if (length > ASSET_CODE_MAX_LENGTH) throw tooLongError(field, ASSET_CODE_MAX_LENGTH, length);
  }
  for (const [field, code] of codes as Array<[string, string]>) {
    const { asset, listing } = await findListedAsset(client, code);
    if (!asset) throw new ValidationError(field, unknownAssetText(code, listing));
  }
}

/**
 * Validate `input` against `spec` and send the request. A money-moving operation (`submission`
 * set) goes through {@link submitOperation} with `options`.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending, for bad input (see {@link prepareOperation}) or an
 *   asset code GET /assets does not list (see {@link checkAssetCodes}).
 * @throws {ApiError} for a non-2xx answer or no answer (`failure` says what it tells); also when
 *   the GET /assets of the asset check fails, and then the operation itself is not sent.
 * @throws what {@link submitOperation} throws, for a money-moving operation.
 */
export async function callOperation<T = unknown>(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, options?: SubmitOptions): Promise<ApiResponse<T>> {
  if (spec.submission) return submitOperation<T>(client, spec, input, options);
  const req = prepareOperation(spec, input);
  await checkAssetCodes(client, spec, req);
  return client.request<T>(spec.method, req.path, { query: req.query, body: req.body, idempotent: spec.idempotent });
}

/**
 * Validate `input` against a money-moving operation's `spec` (one with `submission`) and send it
 * exactly once through the submission journal (see lib/submission/submit.ts `submitRequest`).
 * @param options the journal, and for transfers whether to re-send after an unknown outcome (default yes).
 * @returns the answer with `outcome` (`new` or `existing`), `fromJournal` and `attempts`.
 * @throws {ValidationError} before sending, for bad input (an asset code GET /assets does not
 *   list included); `partner_txID` when it is missing (a sweep's is optional for the API, but the
 *   journal keys on it).
 * @throws {SubmissionConflictError} the key is journaled for another body; nothing sent.
 * @throws {OutcomeUnknownError} the request may have moved money (code `EOUTCOMEUNKNOWN`).
 * @throws {ApiError} refused (4xx) or not sent: nothing happened.
 */
export async function submitOperation<T = unknown>(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, options: SubmitOptions = {}): Promise<SubmitResult<T>> {
  if (!spec.submission) throw new ValidationError('operation', `${spec.method} ${spec.path} does not move money`);
  const req = prepareOperation(spec, input);
  await checkAssetCodes(client, spec, req);
  const body = req.body ?? {};
  const key = body.partner_txID;
  if (typeof key !== 'string' || !key.trim()) throw new ValidationError('partner_txID', 'required: the key of this payment (keep it the same when you retry the same payment)');
  const ref = submissionRef(spec.submission, input, key);
  return submitRequest<T>(client, ref, { method: spec.method, path: req.path, body, idempotent: Boolean(spec.idempotent) }, options);
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
