/**
 * JSON shape checks of request bodies with ajv. A failure becomes
 * 400 `{code:400, msg:"Bad Request", detail:{reason:"<field>: <problem>"}}`, the field dotted
 * (`send.amount`, `wallets[0].asset`).
 *
 * Amounts (base units) must be JSON integers, non-negative (positive where zero makes no sense)
 * and at most Number.MAX_SAFE_INTEGER.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from './errors';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, verbose: true });

const MAX = Number.MAX_SAFE_INTEGER;
const str = { type: 'string' };
const nonEmpty = { type: 'string', minLength: 1 };
const amountPositive = { type: 'integer', minimum: 1, maximum: MAX };
const amountNonNegative = { type: 'integer', minimum: 0, maximum: MAX };
const custodyGroup = {
  type: 'object',
  properties: {
    threshold: { type: 'integer', minimum: 0, maximum: 1000 },
    members: { type: 'array', items: nonEmpty, maxItems: 1000 },
  },
};
const nullableGroup = { anyOf: [{ type: 'null' }, custodyGroup] };
const newWallet = {
  type: 'object',
  required: ['asset'],
  properties: {
    name: str,
    asset: nonEmpty,
    type: { type: 'integer', enum: [0, 1, 2] },
    custodygroup_withdraw: nullableGroup,
    custodygroup_tx: nullableGroup,
  },
};
const expires = { anyOf: [{ type: 'integer', minimum: 1, maximum: MAX }, { type: 'string', pattern: '^[0-9]{1,15}$' }] };
const sendAmount = { type: 'object', required: ['symbol', 'amount'], properties: { symbol: nonEmpty, amount: amountPositive } };
const companyFields = { name: nonEmpty, city: str, country: { type: 'string', pattern: '^([A-Za-z]{2})?$' }, domain: str, ref: str };

/** Body schemas by name. */
const SCHEMAS = {
  fees: { type: 'object', required: ['type', 'asset', 'amount'], properties: { type: nonEmpty, asset: nonEmpty, amount: amountNonNegative } },
  companyCreate: { type: 'object', required: ['name'], properties: companyFields },
  companyUpdate: { type: 'object', properties: companyFields },
  trustedParty: { type: 'object', required: ['address', 'type'], properties: { address: nonEmpty, type: nonEmpty, name: str } },
  fund: {
    type: 'object',
    required: ['name', 'custodygroup_withdraw', 'custodygroup_tx'],
    properties: { name: nonEmpty, description: str, custodygroup_withdraw: custodyGroup, custodygroup_tx: custodyGroup, wallets: { type: 'array', items: newWallet } },
  },
  fundWallet: { type: 'object', required: ['wallets'], properties: { wallets: { type: 'array', items: newWallet } } },
  transfer: {
    type: 'object',
    required: ['wallet_id', 'counterparty_wallet_address', 'expires', 'benefit_of', 'account_no', 'reference', 'partner_txID', 'send'],
    properties: {
      wallet_id: nonEmpty,
      counterparty_wallet_address: nonEmpty,
      expires,
      benefit_of: str,
      account_no: str,
      reference: str,
      partner_txID: nonEmpty,
      send: sendAmount,
    },
  },
  whitelist: { type: 'object', required: ['name', 'asset', 'address'], properties: { name: nonEmpty, asset: nonEmpty, address: nonEmpty } },
  withdraw: {
    type: 'object',
    required: ['wallet_id', 'address', 'expires', 'benefit_of', 'account_no', 'reference', 'partner_txID', 'send'],
    properties: {
      wallet_id: nonEmpty,
      address: nonEmpty,
      expires,
      benefit_of: str,
      account_no: str,
      reference: str,
      partner_txID: nonEmpty,
      send: sendAmount,
    },
  },
  swapMake: {
    type: 'object',
    required: ['send_wallet_id', 'receive_wallet_id', 'expires', 'reference', 'send', 'receive'],
    properties: {
      send_wallet_id: nonEmpty,
      receive_wallet_id: nonEmpty,
      expires,
      reference: str,
      partner_txID: str,
      send: sendAmount,
      receive: sendAmount,
      add_to_liquidity_hub: { type: 'boolean' },
    },
  },
  swapTake: {
    type: 'object',
    required: ['swap_id', 'send_wallet_id', 'receive_wallet_id', 'reference'],
    properties: { swap_id: nonEmpty, send_wallet_id: nonEmpty, receive_wallet_id: nonEmpty, reference: str, partner_txID: str },
  },
  hubAdd: { type: 'object', required: ['tx_id'], properties: { tx_id: nonEmpty } },
  sweep: {
    type: 'object',
    required: ['wallet_id', 'recipient_wallet_id', 'reference', 'expires', 'send'],
    properties: {
      wallet_id: nonEmpty,
      recipient_wallet_id: nonEmpty,
      reference: str,
      expires,
      partner_txID: str,
      send: { type: 'object', required: ['symbol'], properties: { symbol: nonEmpty, amount: amountPositive } },
    },
  },
  sweepStatus: { type: 'object', required: ['tx_id'], properties: { tx_id: nonEmpty } },
  connectRequest: {
    type: 'object',
    required: ['client_id', 'wallet_id', 'customer_email', 'customer_id'],
    properties: { client_id: nonEmpty, wallet_id: nonEmpty, customer_email: nonEmpty, customer_id: nonEmpty },
  },
  foreignQuote: {
    type: 'object',
    required: ['send', 'receive'],
    properties: { send: sendAmount, receive: sendAmount, expires },
  },
  coreClient: { type: 'object', required: ['name'], properties: { name: nonEmpty } },
  faucet: { type: 'object', required: ['wallet_id', 'amount'], properties: { wallet_id: nonEmpty, amount: amountPositive } },
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
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      if (amountField && e.params.type === 'integer') return 'must be an integer number of base units';
      return `must be ${e.params.type === 'object' ? 'a JSON object' : `of type ${e.params.type}`}`;
    case 'minimum':
    case 'maximum':
      if (amountField) {
        const min = (e.parentSchema as { minimum?: number } | undefined)?.minimum ?? 0;
        return `must be ${min > 0 ? 'a positive' : 'a non-negative'} integer number of base units, at most ${MAX}`;
      }
      return `must be ${e.keyword === 'minimum' ? '>=' : '<='} ${e.params.limit}`;
    case 'minLength':
      return 'must not be empty';
    case 'pattern':
      return field === 'country' ? 'must be an ISO 3166-1 alpha-2 code' : 'has the wrong format';
    case 'anyOf':
      return field === 'expires' ? 'must be an epoch time in seconds (integer)' : 'has the wrong type';
    case 'enum':
      return `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/**
 * Check a parsed body against a schema.
 * @returns the body, typed by the caller.
 * @throws 400 naming the first failing field.
 */
export function validate<T>(name: SchemaName, body: unknown): T {
  let fn = compiled.get(name);
  if (!fn) {
    fn = ajv.compile(SCHEMAS[name]);
    compiled.set(name, fn);
  }
  if (body === undefined) throw badRequest('body: a JSON object is required');
  if (!fn(body)) {
    const errs = fn.errors ?? [];
    // For anyOf, ajv reports the branch errors first; report the anyOf itself for clarity.
    const e = errs.find((x) => x.keyword === 'anyOf') ?? errs[0];
    const field = fieldOf(e);
    throw badRequest(`${field}: ${describe(e, field)}`);
  }
  return body as T;
}
