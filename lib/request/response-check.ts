/**
 * Checking answers and feed messages against the schemas of the operations
 * (lib/api/operations.ts: each operation's `responses`, lib/api/spec.ts
 * `OperationSpec.responses`) and of the three feeds
 * (spec section 6). Made for tests and the simulator's self-check: every answer the simulator
 * gives can be checked against what the spec says the real service answers.
 *
 * Each schema is compiled by ajv once (on first use, then kept per schema object), with every
 * violation reported (`allErrors`), no coercion and no defaults: the body is never changed.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { ApiOperation } from '../api/operations';
import type { JsonSchema } from '../api/spec';
import { coreClientFeedMessageSchema, hubFeedMessageSchema, walletFeedMessageSchema } from '../api/feeds';

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false, removeAdditional: false });
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * The ajv validator of a schema, compiled on first use and kept (per schema object: a schema
 * shared by several operations, such as the error body, is compiled once).
 * @throws {Error} when the schema does not compile (a programming error in a declaration).
 */
export function compiledSchema(schema: JsonSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** A value for a violation text: JSON, cut to 40 characters. */
function shortJson(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/**
 * One ajv error as `<instance path> <what is wrong>`: `/txStatus must be string`, `/statusDetails/fees
 * is required`, `/status must be one of "new", "existing"`. The root is `/`.
 */
function describeError(e: ErrorObject): string {
  const at = e.instancePath || '/';
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${e.instancePath}/${String(params.missingProperty)} is required`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${at} must be ${JSON.stringify(params.allowedValue)}`;
    case 'type':
      return `${at} must be ${String(params.type).replace(',', ' or ')}`;
    default:
      return `${at} ${e.message ?? 'is invalid'}`;
  }
}

/**
 * The violations of ajv's errors for `data`, each as {@link describeError} with the bad value
 * (`, got 12`) where one is at the path; `anyOf`'s own summary error (`must match a schema in
 * anyOf`) is kept after the branch errors that explain it.
 */
function violations(validate: ValidateFunction, data: unknown, prefix: string): string[] {
  if (validate(data)) return [];
  return (validate.errors ?? []).map((e) => {
    const text = `${prefix} ${describeError(e)}`;
    if (e.keyword === 'required' || e.keyword === 'anyOf' || e.keyword === 'allOf') return text;
    return `${text}, got ${shortJson(valueAt(data, e.instancePath))}`;
  });
}

/** The value at a JSON pointer (`/status/0/timestamp`) of `data`, or undefined. */
function valueAt(data: unknown, pointer: string): unknown {
  if (!pointer) return data;
  return pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), data);
}

/**
 * Check one answer of an operation against the schema its declaration gives for that
 * status (`entry.spec.responses`; lib/api/spec.ts `OperationSpec.responses`).
 *
 * @param entry the operation (lib/api/operations.ts `API_OPERATIONS`, `apiOperation`,
 *   `operationsForRoute`).
 * @param status the HTTP status of the answer.
 * @param body the answer's body as parsed JSON; an empty answer is `{}` (as lib's client parses it),
 *   and `undefined` is read as `{}` too.
 * @returns the violations, each a readable line naming the operation, the status and the place in
 *   the body: `GET /company/{company_id}: 200 body /txStatus must be string, got 12`,
 *   `POST /company/{company_id}/transfer: 200 body /status is required`. An undeclared status is
 *   itself a violation (`GET /assets: status 201 is not declared (declared: 200, 400, ...)`), as
 *   is an entry without `responses`. Empty when the answer is as declared.
 * @throws {Error} only when a declared schema does not compile (a programming error).
 */
export function validateResponse(entry: Pick<ApiOperation<string>, 'spec'>, status: number, body: unknown): string[] {
  const { method, path, responses } = entry.spec;
  const name = `${method} ${path}`;
  if (!responses) return [`${name}: declares no responses`];
  const schema = Object.prototype.hasOwnProperty.call(responses, status) ? responses[status] : undefined;
  if (!schema) return [`${name}: status ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`];
  return violations(compiledSchema(schema), body === undefined ? {} : body, `${name}: ${status} body`);
}

/**
 * The feeds of spec section 6 by kind, each with its message schema: `coreClient` the core client
 * feed (`{ws_base_url}/coreclient/{client_id}/feed`, lib/feeds/feed.ts `coreClientFeedMessageSchema`),
 * `hub` the liquidity hub feed (`/liquidityhub/feed`, lib/feeds/hub-feed.ts `hubFeedMessageSchema`),
 * `wallets` the wallets feed (`/wallets/feed`, lib/feeds/wallets-feed.ts `walletFeedMessageSchema`).
 */
export const FEED_MESSAGE_SCHEMAS = {
  coreClient: coreClientFeedMessageSchema,
  hub: hubFeedMessageSchema,
  wallets: walletFeedMessageSchema,
} as const;

/** A feed kind of {@link FEED_MESSAGE_SCHEMAS}. */
export type FeedKind = keyof typeof FEED_MESSAGE_SCHEMAS;

/** The feed names used in violation texts. */
const FEED_NAMES: Record<FeedKind, string> = { coreClient: 'core client feed', hub: 'liquidity hub feed', wallets: 'wallets feed' };

/**
 * Check one feed message (parsed JSON) against its feed's schema ({@link FEED_MESSAGE_SCHEMAS}).
 * @param kind `coreClient`, `hub` or `wallets`.
 * @param message the message as parsed JSON.
 * @returns the violations, e.g. `core client feed message /status must be "pending", got
 *   "approved"`; empty when the message is as declared; `unknown feed kind "x"` for a kind that
 *   is not one of the three.
 */
export function validateFeedMessage(kind: FeedKind, message: unknown): string[] {
  if (!Object.prototype.hasOwnProperty.call(FEED_MESSAGE_SCHEMAS, kind)) return [`unknown feed kind ${JSON.stringify(kind)}`];
  return violations(compiledSchema(FEED_MESSAGE_SCHEMAS[kind]), message, `${FEED_NAMES[kind]} message`);
}
