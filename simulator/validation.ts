/**
 * JSON shape checks of requests with ajv: an API request against the query and body schemas of
 * its registry entry (lib/api/operations.ts, the schemas lib validates with before sending), a control
 * request against the control schemas below. A failure becomes 400
 * `{code:400, msg:"Bad Request", detail:{reason:"<field>: <problem>"}}` (spec section 7), the
 * field dotted (`send.amount`, `wallets[0].asset`).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from './errors';
import { PAYMENT, S, type JsonSchema, type OperationSpec } from '../lib/api/spec';

/** Bodies: no coercion, a JSON body carries its types. */
const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, verbose: true });
/** Query strings: every value arrives as text, so `since=5` is checked as the number the schema declares. */
const queryAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: true, verbose: true });

const MAX = Number.MAX_SAFE_INTEGER;
const nonEmpty = { type: 'string', minLength: 1 };

/** Body schemas of the control endpoints by name (control.ts, v2/routes.ts; not API operations). */
const SCHEMAS = {
  connectRequest: {
    type: 'object',
    required: ['client_id', 'wallet_id', 'customer_email', 'customer_id'],
    properties: { client_id: nonEmpty, wallet_id: nonEmpty, customer_email: nonEmpty, customer_id: nonEmpty },
  },
  foreignQuote: {
    type: 'object',
    required: ['send', 'receive'],
    properties: { send: PAYMENT, receive: PAYMENT, expires: S.epochSeconds },
  },
  faucet: { type: 'object', required: ['wallet_id', 'amount'], properties: { wallet_id: nonEmpty, amount: S.positiveBaseUnits } },
  partnerKey: { type: 'object', required: ['public_key'], properties: { public_key: nonEmpty } },
  userDecision: { type: 'object', required: ['user_id'], properties: { user_id: nonEmpty } },
  accept: { type: 'object', required: ['company_id', 'address'], properties: { company_id: nonEmpty, address: nonEmpty } },
  httpFault: {
    type: 'object',
    required: ['path', 'status', 'count'],
    properties: {
      method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE', 'get', 'post', 'put', 'delete'] },
      path: nonEmpty,
      status: { type: 'integer', minimum: 400, maximum: 599 },
      count: { type: 'integer', minimum: 1, maximum: 1000 },
    },
  },
  feedFaults: { type: 'object', properties: { replayOnConnect: { type: 'boolean' }, deliver: { type: 'boolean' } } },
  clock: { type: 'object', required: ['seconds'], properties: { seconds: { type: 'integer', minimum: 0, maximum: 10 * 365 * 86400 } } },
} as const;

/** Name of a body schema. */
export type SchemaName = keyof typeof SCHEMAS;

const compiled = new Map<SchemaName, ValidateFunction>();

function fieldOf(e: ErrorObject): string {
  let field = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');
  if (e.keyword === 'required') field = field ? `${field}.${(e.params as { missingProperty: string }).missingProperty}` : (e.params as { missingProperty: string }).missingProperty;
  return field || 'body';
}

function describe(e: ErrorObject, field: string): string {
  const amountField = /(^|\.)amount$/.test(field);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      if (amountField && p.type === 'integer') return 'must be an integer number of base units';
      return `must be ${p.type === 'object' ? 'a JSON object' : `of type ${String(p.type)}`}`;
    case 'minimum':
    case 'maximum':
      if (amountField) {
        const min = (e.parentSchema as { minimum?: number } | undefined)?.minimum ?? 0;
        return `must be ${min > 0 ? 'a positive' : 'a non-negative'} integer number of base units, at most ${MAX}`;
      }
      return `must be ${e.keyword === 'minimum' ? '>=' : '<='} ${String(p.limit)}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'pattern':
      if (p.pattern === '\\S') return 'must not be empty or blank';
      return field === 'country' ? 'must be an ISO 3166-1 alpha-2 code (upper case)' : `must match ${String(p.pattern)}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'minItems':
      return `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'minProperties':
      return `must name at least ${String(p.limit)} field${p.limit === 1 ? '' : 's'}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** The 400 of the first error of a failed check (for `anyOf`, the `anyOf` itself: ajv reports its branches first). */
function refusal(errors: ErrorObject[] | null | undefined): Error {
  const errs = errors ?? [];
  const e = errs.find((x) => x.keyword === 'anyOf') ?? errs[0];
  const field = fieldOf(e);
  return badRequest(`${field}: ${e.keyword === 'anyOf' ? 'has the wrong type' : describe(e, field)}`);
}

const compiledSchemas = new WeakMap<object, ValidateFunction>();

function compiledFor(schema: JsonSchema, forQuery: boolean): ValidateFunction {
  let fn = compiledSchemas.get(schema);
  if (!fn) {
    fn = (forQuery ? queryAjv : ajv).compile(schema);
    compiledSchemas.set(schema, fn);
  }
  return fn;
}

/**
 * Check an API request against its registry declaration (lib/api/spec.ts OperationSpec): the
 * query string against `spec.query` (values coerced from text to the declared types, on a copy),
 * the parsed body against `spec.body`. An operation without a body schema ignores any body.
 * @throws 400 `body: a JSON object is required` when a body is declared and none was sent; else
 *   400 naming the first failing field (`send.amount: must be an integer number of base units`).
 */
export function checkRequest(spec: Pick<OperationSpec, 'query' | 'body' | 'submission'>, query: Record<string, unknown>, body: unknown): void {
  if (spec.query) {
    const check = compiledFor(spec.query, true);
    if (!check({ ...query })) throw refusal(check.errors);
  }
  if (spec.body) {
    if (body === undefined) throw badRequest('body: a JSON object is required');
    const check = compiledFor(serverBody(spec.body, spec.submission), false);
    if (!check(body)) throw refusal(check.errors);
  }
}

/**
 * Body fields lib requires for its own reasons that the API leaves optional, by submission kind:
 * lib journals every money-moving call under its `partner_txID` (lib/client/submission), so it asks for
 * one on swap makes, swap takes and sweeps too; the spec requires it of transfers and withdrawals
 * only ("all required", spec section 4) and does not list it for sweeps at all. The simulator
 * answers what the API allows, so it accepts these bodies without one (no dedupe then).
 */
const OPTIONAL_ON_THE_SERVER: Partial<Record<NonNullable<OperationSpec['submission']>, readonly string[]>> = {
  swapMake: ['partner_txID'],
  swapTake: ['partner_txID'],
  sweep: ['partner_txID'],
};

const serverBodies = new WeakMap<object, JsonSchema>();

/** The body schema the simulator checks: lib's, less {@link OPTIONAL_ON_THE_SERVER} in `required`. */
function serverBody(body: NonNullable<OperationSpec['body']>, kind: OperationSpec['submission']): JsonSchema {
  const optional = kind ? OPTIONAL_ON_THE_SERVER[kind] : undefined;
  if (!optional) return body;
  let schema = serverBodies.get(body);
  if (!schema) serverBodies.set(body, (schema = { ...body, required: (body.required ?? []).filter((f) => !optional.includes(f)) }));
  return schema;
}

/**
 * Check a parsed control body against one of the control schemas.
 * @returns the body, typed by the caller.
 * @throws 400 `body: a JSON object is required` when there is none; else 400 naming the first failing field.
 */
export function validate<T>(name: SchemaName, body: unknown): T {
  let fn = compiled.get(name);
  if (!fn) {
    fn = ajv.compile(SCHEMAS[name]);
    compiled.set(name, fn);
  }
  if (body === undefined) throw badRequest('body: a JSON object is required');
  if (!fn(body)) throw refusal(fn.errors);
  return body as T;
}
