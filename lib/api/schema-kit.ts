/**
 * Builders of the JSON schemas and operation declarations that lib/api/v1/*.ts and lib/api/v2/*.ts
 * declare over and over: an object with required fields, an array of items, a list answer
 * (`{assets: [...]}`, `{total_count, list}`), the answers of an operation (its success body and
 * the error bodies of spec section 7), a plain GET read. Each shape is written here once.
 *
 * Every builder keeps the literal types of what it is given (`const` type parameters) and returns
 * the very object an `as const` literal of the same shape would be, with the same keys in the same
 * order: `Wire<typeof x>` (lib/api/wire.ts, json-schema-to-ts's `FromSchema`) derives the same type
 * from `objectSchema(['a'], {a: W.id})` as from `{type: 'object', required: ['a'], properties:
 * {a: W.id}} as const`, and the run-time check (lib/request/response-check.ts) and the request validation
 * (lib/request/prepare.ts) see the same schema.
 */
import { W, ERROR_RESPONSES } from './wire';
import type { HttpMethod } from './spec';

/**
 * The `status` of the answer to a create call keyed by `partner_txID` (OpenAPI TxId; spec section
 * 3: a repeated `partner_txID` answers `existing`): `new` or `existing`.
 */
export const NEW_OR_EXISTING = { type: 'string', enum: ['new', 'existing'] } as const;

/** The `properties` of an object schema: a schema per field name. */
export type SchemaProperties = { readonly [field: string]: object };

/**
 * An object schema `{type: 'object', required, properties}` (as `as const`).
 * @param required the field names that must be present, in the order to list them.
 * @param properties a schema per field (required or not), in the order to list them.
 */
export function objectSchema<const R extends readonly string[], const P extends SchemaProperties>(required: R, properties: P): { readonly type: 'object'; readonly required: R; readonly properties: P } {
  return { type: 'object', required, properties };
}

/**
 * An object schema with no required field, `{type: 'object', properties}` (as `as const`): every
 * field optional (filters, a payload none of whose fields the spec promises).
 */
export function optionalFieldsSchema<const P extends SchemaProperties>(properties: P): { readonly type: 'object'; readonly properties: P } {
  return { type: 'object', properties };
}

/** The schema of an array of `items`: `{type: 'array', items}` (as `as const`). */
export function arrayOf<const I extends object>(items: I): { readonly type: 'array'; readonly items: I } {
  return { type: 'array', items };
}

/** The schema {@link listSchema} builds: `{key: [items]}`, `key` required. */
export type ListSchema<K extends string, I> = {
  readonly type: 'object';
  readonly required: readonly [K];
  readonly properties: { readonly [F in K]: { readonly type: 'array'; readonly items: I } };
};

/**
 * An answer that wraps one list under one required key, e.g. `listSchema('assets', assetSchema)`
 * for `{assets: Asset[]}` (GET /assets), `{wallets: [...]}`, `{history: [...]}`.
 * @param key the field holding the list.
 * @param items the schema of each item.
 */
export function listSchema<const K extends string, const I extends object>(key: K, items: I): ListSchema<K, I> {
  return { type: 'object', required: [key], properties: { [key]: arrayOf(items) } } as unknown as ListSchema<K, I>;
}

/**
 * A counted list `{total_count, list}`, both required (spec section 4: the deposit list, the service's documentation examples
 * and OpenAPI FundWhitelist: the whitelist): `total_count` a count ({@link W}`.count`), `list`
 * the items.
 */
export function countedListSchema<const I extends object>(items: I) {
  return objectSchema(['total_count', 'list'], { total_count: W.count, list: arrayOf(items) });
}

/**
 * The answers of an operation (its `responses`, lib/api/spec.ts `OperationSpec.responses`): the
 * success body `schema` under `status` (200 unless given) and the error body of spec section 7 under
 * every error status ({@link ERROR_RESPONSES}): `{200: schema, 400: errorBodySchema, ...}`.
 */
export function answers<const S extends object, const C extends number = 200>(schema: S, status?: C): Answers<S, C> {
  return { [status ?? 200]: schema, ...ERROR_RESPONSES } as Answers<S, C>;
}

/** What {@link answers} builds: `schema` under the success status `C`, and {@link ERROR_RESPONSES}. */
export type Answers<S, C extends number> = { readonly [K in C | keyof typeof ERROR_RESPONSES]: K extends C ? S : (typeof ERROR_RESPONSES)[K & keyof typeof ERROR_RESPONSES] };

/**
 * A plain read (the declaration lib/api/spec.ts `OperationSpec` of a GET): `{method: 'GET', path,
 * idempotent: true, source, ...more, responses: answers(answer)}`, in that key order.
 * @param path the path template, ids in braces (`/company/{company_id}/fund/{fund_id}`).
 * @param source where the operation is defined (spec section, OpenAPI path).
 * @param answer the schema of the 200 body.
 * @param more other fields of the declaration (`query`, `assetFields`), placed before `responses`.
 */
export function readOperation<const S extends object, const M extends object = {}>(path: string, source: string, answer: S, more?: M) {
  return { method: 'GET' as const satisfies HttpMethod, path, idempotent: true as const, source, ...(more as M), responses: answers(answer) };
}

/**
 * A declaration (lib/api/spec.ts `OperationSpec`) of a call that is not a plain read:
 * `{method, path, source, responses, ...more}`, in that key order.
 * @param method the HTTP method.
 * @param path the path template, ids in braces (`/company/{company_id}/transfer`).
 * @param source where the operation is defined (spec section, OpenAPI path).
 * @param responses the answers per status, usually {@link answers}`(schema)`.
 * @param more the other fields of the declaration (`body`, `query`, `idempotent`, `submission`,
 *   `amounts`, `assetFields`).
 */
export function operation<const M extends HttpMethod, const R extends object, const X extends object = {}>(method: M, path: string, source: string, responses: R, more?: X) {
  return { method, path, source, responses, ...(more as X) };
}

/**
 * The entry of `OperationSpec.amounts` (lib/api/spec.ts) for a `{symbol, amount}` field (lib/api/spec.ts
 * `PAYMENT`): `{amount: '<field>.amount', asset: '<field>.symbol'}`, e.g. `paymentAmount('send')`.
 */
export function paymentAmount<const F extends string>(field: F): { readonly amount: `${F}.amount`; readonly asset: `${F}.symbol` } {
  return { amount: `${field}.amount`, asset: `${field}.symbol` };
}
