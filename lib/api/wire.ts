/**
 * Wire bodies: the JSON schemas of what the API answers (and of the feed messages), declared
 * once, and the TypeScript types derived from them with json-schema-to-ts's `FromSchema` (a
 * type-only import: nothing of it is loaded at run time).
 *
 * Every schema of a wire body is an `as const` object literal, so that its TypeScript type holds
 * the literal values (`required` lists, `enum`s) that `FromSchema` reads. Schemas allow properties
 * they do not declare (the real service may add fields), unless the spec forbids them; the types
 * derived with {@link Wire} list only the declared fields (see {@link KnownFields}).
 *
 * The pieces here are shared by every group's schemas (lib/api/v1/*.ts, lib/api/v2/*.ts): number kinds
 * ({@link W}), the plain success body ({@link okBodySchema}), the empty body, and the error body
 * of spec section 7 ({@link errorBodySchema}) with the error statuses every operation can answer
 * ({@link ERROR_RESPONSES}).
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * `T` without index signatures, at every depth (objects, array items, union members); declared
 * fields keep their optional and readonly modifiers.
 *
 * Why: `FromSchema` gives an object schema without `additionalProperties: false` the index
 * signature `[x: string]: unknown` (the schema does allow other fields). On a type that would let
 * a misspelt field (`tx.txstatus`) compile as `unknown` instead of failing, which the
 * hand-written interfaces this replaces did not. The run-time check ({@link errorBodySchema},
 * lib/request/response-check.ts) still allows the other fields; only the type leaves them out.
 */
export type KnownFields<T> = T extends readonly (infer U)[]
  ? KnownFields<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : number extends K ? never : K]: KnownFields<T[K]> }
    : T;

/**
 * The TypeScript type of a wire body from its `as const` JSON schema: `FromSchema` with the index
 * signatures removed ({@link KnownFields}). Use it as `export type X = Wire<typeof xSchema>`.
 * For a body whose type should keep other fields reachable (a feed message passed on as
 * received), use {@link OpenWire}.
 */
export type Wire<S extends JSONSchema> = KnownFields<FromSchema<S>>;

/**
 * The TypeScript type of a wire body from its `as const` JSON schema, keeping the index signature
 * `[x: string]: unknown` of objects that allow other fields: for bodies passed on as received,
 * whose other fields callers read (feed messages, a ledger's top level).
 */
export type OpenWire<S extends JSONSchema> = FromSchema<S>;

/**
 * The latest epoch second any timestamp may hold: 9999-12-31T23:59:59Z (as `S.epochSeconds` of
 * lib/api/spec.ts). A value past it is in milliseconds, not seconds (spec section 1: "All
 * timestamps are Unix Epoch", seconds everywhere in this API).
 */
export const MAX_EPOCH_SECONDS = 253402300799;

/**
 * Schema pieces of answers (`as const`, for {@link Wire}). Unlike the request pieces `S` of
 * lib/api/spec.ts they carry no length bounds: an answer is checked for its shape, not refused.
 */
export const W = {
  /** Any text (may be empty). */
  text: { type: 'string' },
  /** An id the service assigns: non-empty text. */
  id: { type: 'string', minLength: 1 },
  /**
   * Base units (spec section 2: "amounts across the API are in base units"): an integer, signed
   * (wallet history and wallets feed amounts are negative for outgoing).
   */
  baseUnits: { type: 'integer' },
  /** Base units that cannot be negative (a balance, a fee, a quoted amount). */
  unsignedBaseUnits: { type: 'integer', minimum: 0 },
  /**
   * Unix epoch seconds (spec section 1), 0 where the spec allows "none" (a ledger entry's
   * `expireTime`); at most {@link MAX_EPOCH_SECONDS}, so a milliseconds value is caught.
   */
  epochSeconds: { type: 'integer', minimum: 0, maximum: MAX_EPOCH_SECONDS },
  /** A count (`total_count`, `count`, `approvedCount`, `thresholdRequired`): an integer >= 0. */
  count: { type: 'integer', minimum: 0 },
  /** A boolean. */
  boolean: { type: 'boolean' },
} as const;

/**
 * The plain success body `{code, msg}`, e.g. `{"code":200,"msg":"OK"}` (the service's documentation examples;
 * OpenAPI OkResponse, `code` an integer). Answer of trusted party add (spec section 4: "HTTP 200
 * with code and msg"), and of the calls the service's documentation lists (action approve/reject, policy update).
 */
export const okBodySchema = {
  type: 'object',
  required: ['code', 'msg'],
  properties: { code: { type: 'integer' }, msg: { type: 'string' } },
} as const;

/** The plain success body `{code, msg}` ({@link okBodySchema}). */
export type OkBody = Wire<typeof okBodySchema>;

/**
 * An empty body (spec section 4: POST .../whitelist answers "empty body, HTTP 200"). lib's client
 * parses an empty answer as `{}`; so does {@link validateResponse} (lib/request/response-check.ts) for an
 * `undefined` body.
 */
export const emptyBodySchema = { type: 'object', maxProperties: 0 } as const;

/**
 * A JSON object whose fields neither the spec nor the OpenAPI shows (spec section 4, e.g. the
 * read-only subset: "response payloads: not shown"): only the kind of value is checked.
 */
export const anyObjectSchema = { type: 'object' } as const;

/**
 * The error body of spec section 7: "All errors have the body: `code` (error code), `msg`
 * (message), `detail` (object; `reason` string, not always present)". So `code`, `msg` and
 * `detail` are required, `detail.reason` is optional and a string.
 *
 * `code` is a number or a string: the spec gives no type (its examples are numbers: 1020 and 401
 * for a bad signature, "some 4xx errors carry an explanatory code"), the OpenAPI Error schema
 * types it as a string, the service's documentation examples show `{"code":401,...}`. Other fields are allowed.
 */
export const errorBodySchema = {
  type: 'object',
  required: ['code', 'msg', 'detail'],
  properties: {
    code: { type: ['integer', 'string'] },
    msg: { type: 'string' },
    detail: { type: 'object', properties: { reason: { type: 'string' } } },
  },
} as const;

/** The error body of spec section 7 ({@link errorBodySchema}) as the API sends it. */
export type ErrorBody = Wire<typeof errorBodySchema>;

/**
 * The error statuses every operation can answer, each with the error body of spec section 7
 * ({@link errorBodySchema}): the table of spec section 7 (400 bad request, 401 unauthorized, 403
 * no permission or account not set up, 404 resource does not exist, 429 too many requests, "50x"
 * server-side error, read as 500 to 504). Spread into an operation's `responses`:
 * `responses: {200: xSchema, ...ERROR_RESPONSES}`. Spec section 7: "Per-endpoint error
 * conditions ...: not shown", so every operation declares them all (any call can name an unknown
 * resource by a path, query or body id, or hit an unknown route).
 */
export const ERROR_RESPONSES = {
  400: errorBodySchema,
  401: errorBodySchema,
  403: errorBodySchema,
  404: errorBodySchema,
  // Spec section 7: "All errors have the body" and 4xx carry client errors; its table lists the
  // common ones. The OpenAPI declares 409 on some calls (a state conflict), and the simulator
  // answers 409 for every state conflict (an action already decided, a quote already taken)
  // and 413 for a body over its 1 MB limit: both client errors, with the same body.
  409: errorBodySchema,
  413: errorBodySchema,
  429: errorBodySchema,
  500: errorBodySchema,
  501: errorBodySchema,
  502: errorBodySchema,
  503: errorBodySchema,
  504: errorBodySchema,
} as const;

/**
 * 409 Conflict with the error body, for the operations whose OpenAPI path declares it ("The
 * specified resource already exists": POST /company, POST .../fund/{fund_id}/wallet) and the
 * simulator-only v2 action calls whose lib functions document it (an action no longer pending).
 * Spec section 7 does not list 409.
 */
export const CONFLICT_RESPONSE = { 409: errorBodySchema } as const;
