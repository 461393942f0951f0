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
import { ValidationError, type SubmissionKind } from './errors';
import { submitRequest, submissionRef, type SubmitOptions, type SubmitResult } from './submission/submit';

/** A JSON schema (draft-07 subset understood by ajv). */
export type JsonSchema = Record<string, unknown>;

/** Declaration of one API operation. */
export interface OperationSpec {
  method: HttpMethod;
  /** Path template below the base URL, ids in braces: `/company/{company_id}/transfer/{tx_id}`. */
  path: string;
  /** Query fields (an object schema). */
  query?: JsonSchema & { properties: Record<string, JsonSchema>; required?: string[] };
  /** Body (an object schema); omitted for calls without a body. */
  body?: JsonSchema & { properties: Record<string, JsonSchema>; required?: string[] };
  /**
   * Amount fields of the body in base units, each with the field holding its asset code, as
   * dotted paths: `[{amount: 'send.amount', asset: 'send.symbol'}]`. Used to convert decimal
   * input exactly (see `decimalAmountsToBaseUnits`).
   */
  amounts?: ReadonlyArray<{ amount: string; asset: string }>;
  /** True when a retry cannot repeat the effect (reads; POSTs keyed by `partner_txID`). */
  idempotent?: boolean;
  /**
   * Set on the money-moving calls: the {@link SubmissionKind} under which the submission
   * journal keeps them (lib/submission). Such a call is sent through `submitRequest`: journaled,
   * its failures told apart, a transfer re-sent after an unknown outcome.
   */
  submission?: SubmissionKind;
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
 */
const PATH_ID = /^(?!\.{1,2}$)[^\s/?#%\\\x00-\x1f\x7f](?:[^/?#%\\\x00-\x1f\x7f]*[^\s/?#%\\\x00-\x1f\x7f])?$/;

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

/** Turn the first ajv error into a message that names the field (dotted, e.g. `send.amount`). */
function toValidationError(error: ErrorObject): ValidationError {
  const path = error.instancePath.split('/').filter(Boolean);
  if (error.keyword === 'required') path.push(String((error.params as { missingProperty: string }).missingProperty));
  const field = path.join('.');
  switch (error.keyword) {
    case 'required':
      return new ValidationError(field, 'required');
    case 'type':
      return new ValidationError(field || 'payload', `must be ${(error.params as { type: string }).type}`);
    case 'pattern':
      return new ValidationError(field, (error.params as { pattern: string }).pattern === '\\S' ? 'must not be empty or blank' : `must match ${(error.params as { pattern: string }).pattern}`);
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

/** Unix epoch seconds now (the client's clock). */
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The request an input maps to, after validation; nothing is sent.
 * @returns `{path, query, body}` with the path ids URL-encoded into `path`.
 * @throws {ValidationError} naming the first bad field: a missing or malformed path id, a query
 *   or body field that is missing, of the wrong type, out of range or not an allowed value, an
 *   `expires` that is not in the future.
 */
export function prepareOperation(spec: OperationSpec, input: Record<string, unknown>): { path: string; query?: Record<string, string | number | boolean>; body?: Record<string, unknown> } {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new ValidationError('payload', 'must be an object');
  const names = pathParams(spec.path);
  let path = spec.path;
  for (const name of names) {
    const v = input[name];
    if ((typeof v !== 'string' && !(typeof v === 'number' && Number.isSafeInteger(v))) || !PATH_ID.test(String(v))) {
      throw new ValidationError(name, v === undefined || v === '' ? 'required' : 'must be an id: no "/", "?", "#", "%", "\\", control characters or surrounding spaces, and not "." or ".."');
    }
    let encoded: string;
    try {
      encoded = encodeURIComponent(String(v));
    } catch {
      throw new ValidationError(name, 'must be well-formed text (a lone UTF-16 surrogate cannot be sent)');
    }
    path = path.replace(`{${name}}`, encoded);
  }
  // Belt and braces: the URL must keep the template's segments (no id may resolve into another path).
  if (new URL(path, 'http://h').pathname !== path) throw new ValidationError(names.join(', ') || 'path', 'an id changed the request path');
  let query: Record<string, string | number | boolean> | undefined;
  if (spec.query) {
    query = pickDeclared(input, spec.query) as Record<string, string | number | boolean>;
    const v = validator(spec.query);
    if (!v(query)) throw toValidationError(v.errors![0]);
  }
  let body: Record<string, unknown> | undefined;
  if (spec.body) {
    body = pickDeclared(input, spec.body) as Record<string, unknown>;
    const v = validator(spec.body);
    if (!v(body)) throw toValidationError(v.errors![0]);
    // An expiry in the past can only be refused by the service: refuse it here, before sending.
    if (spec.body.properties.expires && typeof body.expires === 'number' && body.expires <= nowSeconds()) {
      throw new ValidationError('expires', `must be in the future (epoch seconds), got ${body.expires}, now is ${nowSeconds()}`);
    }
  }
  return { path, query, body };
}

/**
 * Validate `input` against `spec` and send the request. A money-moving operation (`submission`
 * set) goes through {@link submitOperation} with `options`.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending, for bad input (see {@link prepareOperation}).
 * @throws {ApiError} for a non-2xx answer or no answer (`failure` says what it tells).
 * @throws what {@link submitOperation} throws, for a money-moving operation.
 */
export async function callOperation<T = unknown>(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, options?: SubmitOptions): Promise<ApiResponse<T>> {
  if (spec.submission) return submitOperation<T>(client, spec, input, options);
  const req = prepareOperation(spec, input);
  return client.request<T>(spec.method, req.path, { query: req.query, body: req.body, idempotent: spec.idempotent });
}

/**
 * Validate `input` against a money-moving operation's `spec` (one with `submission`) and send it
 * exactly once through the submission journal (see lib/submission/submit.ts `submitRequest`).
 * @param options the journal, and for transfers whether to re-send after an unknown outcome (default yes).
 * @returns the answer with `outcome` (`new` or `existing`), `fromJournal` and `attempts`.
 * @throws {ValidationError} before sending, for bad input; `partner_txID` when it is missing
 *   (a sweep's is optional for the API, but the journal keys on it).
 * @throws {SubmissionConflictError} the key is journaled for another body; nothing sent.
 * @throws {OutcomeUnknownError} the request may have moved money (code `EOUTCOMEUNKNOWN`).
 * @throws {ApiError} refused (4xx) or not sent: nothing happened.
 */
export async function submitOperation<T = unknown>(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, options: SubmitOptions = {}): Promise<SubmitResult<T>> {
  if (!spec.submission) throw new ValidationError('operation', `${spec.method} ${spec.path} does not move money`);
  const req = prepareOperation(spec, input);
  const body = req.body ?? {};
  const key = body.partner_txID;
  if (typeof key !== 'string' || !key.trim()) throw new ValidationError('partner_txID', 'required: the key of this payment (keep it the same when you retry the same payment)');
  const ref = submissionRef(spec.submission, input, key);
  return submitRequest<T>(client, ref, { method: spec.method, path: req.path, body, idempotent: Boolean(spec.idempotent) }, options);
}

/** Schema pieces shared by the operation declarations. */
export const S = {
  /** A string with at least one non-space character. */
  text: { type: 'string', pattern: '\\S' } as JsonSchema,
  /** An optional string (may be empty). */
  optionalText: { type: 'string' } as JsonSchema,
  /** Base units: a non-negative safe integer (spec section 2: amounts are in base units). */
  baseUnits: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as JsonSchema,
  /** Base units of a payment: a positive safe integer. */
  positiveBaseUnits: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as JsonSchema,
  /** Unix epoch seconds. */
  epochSeconds: { type: 'integer', minimum: 1, maximum: 253402300799 } as JsonSchema,
  /** An asset code such as `BTC-TESTNET`. */
  assetCode: { type: 'string', pattern: '^[A-Z0-9][A-Z0-9-]*$' } as JsonSchema,
};

/**
 * `{symbol, amount}`, both required: what a payment sends or receives (spec section 4: `send` of
 * transfers, withdrawals and swap quotes, `receive` of swap quotes); `amount` in base units, > 0.
 */
export const PAYMENT: JsonSchema = { type: 'object', required: ['symbol', 'amount'], properties: { symbol: S.assetCode, amount: S.positiveBaseUnits } };
