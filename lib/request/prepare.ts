/**
 * Preparing a request from an operation declaration ({@link OperationSpec}, lib/api/spec.ts):
 * the flat input object is validated against the declaration and mapped to the path (ids
 * checked and URL-encoded), query and body. Bad input is refused with a {@link ValidationError}
 * naming the field; nothing here sends anything (lib/client/call.ts sends). The JSON schemas are
 * compiled by ajv on first use, each once.
 */
import type { default as Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { ValidationError, characterCount, shortValue } from '../api/errors';
import { ASSET_CODE_MAX_LENGTH, ID_MAX_LENGTH, pathParams, type JsonSchema, type OperationSpec } from '../api/spec';

/** The ajv instance, made (and ajv loaded) on the first validation: a start-up that validates nothing loads no ajv. */
let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/** The compiled validator of `schema`, compiled on its first use and kept. */
function validator(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ajv ??= new (require('ajv') as typeof import('ajv')).default({ allErrors: false, strict: false, coerceTypes: false });
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/**
 * A path id: printable text without `/`, `?`, `#`, `%` or a backslash, not `.` or `..` (which
 * URL resolution would collapse into another endpoint), no leading or trailing space. Short
 * codes, with their inner spaces, pass.
 * The editor scripts check with it too (scripts/bundle-editor.ts writes it into their bundles,
 * resources/custody-editor.js, at build).
 */
export const PATH_ID = /^(?!\.{1,2}$)[^\s/?#%\\\x00-\x1f\x7f](?:[^/?#%\\\x00-\x1f\x7f]*[^\s/?#%\\\x00-\x1f\x7f])?$/;

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
 * The asset code values of a prepared request: every asset code field of `spec`
 * ({@link assetCodeFields}) present in `request`, with its field name as errors name it
 * (`send.symbol`, `wallets.0.asset`). Checks each is text of at most
 * {@link ASSET_CODE_MAX_LENGTH} characters; whether GET /assets lists it is the caller's look-up
 * (lib/client/call.ts `checkAssetCodes`).
 * @param request the prepared request (`query` and `body`), or any object with the input's
 *   fields under `body`.
 * @throws {ValidationError} naming the field, for a code that is not text or is too long.
 */
export function assetCodeValues(spec: OperationSpec, request: { query?: Record<string, unknown>; body?: unknown }): Array<[field: string, code: string]> {
  const fields = assetCodeFields(spec);
  if (fields.length === 0) return [];
  const body = request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body) ? (request.body as Record<string, unknown>) : {};
  const input = { ...request.query, ...body };
  const codes = fields.flatMap((f) => valuesAtPath(input, f)).filter(([, v]) => v !== undefined);
  for (const [field, code] of codes) {
    if (typeof code !== 'string') throw new ValidationError(field, `must be an asset code (string), got ${shortValue(code)}`);
    const length = characterCount(code);
    if (length > ASSET_CODE_MAX_LENGTH) throw tooLongError(field, ASSET_CODE_MAX_LENGTH, length);
  }
  return codes as Array<[string, string]>;
}
