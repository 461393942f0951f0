/**
 * Bad input in the nodes (docs/nodes.md, "Bad input is refused before anything is sent"): refused
 * before sending, naming the field, by the money-moving nodes (custody-transfer create and get,
 * custody-withdraw create, custody-swap-make make, custody-swap-take take, custody-sweep start) and
 * the fee quote (custody-assets fee), in the real Node-RED runtime (node-red-node-test-helper),
 * against a counting server configured as a custom environment. Each case is one msg with one bad
 * field; the cases are generated from a table of each operation's fields.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting, sendAndWait, startHelperServer, stopHelperServer } from '../helpers/node-flows';
import { redNodes, useCountingServer } from '../helpers/red-setup';

/** Sweep keys handed out so far: each valid sweep is a new payment. */
let sweepKeys = 0;
const nodeModules = redNodes(['custody-config', 'custody-transfer', 'custody-withdraw', 'custody-swap-make', 'custody-swap-take', 'custody-sweep', 'custody-assets']);

const now = () => Math.floor(Date.now() / 1000);
const MB = 1 << 20;

/** The operation nodes of the flow, by node id: type, editor properties. */
const NODES: Record<string, { type: string; props: Record<string, unknown> }> = {
  transfer: { type: 'custody-transfer', props: { operation: 'create' } },
  transferGet: { type: 'custody-transfer', props: { operation: 'get' } },
  withdraw: { type: 'custody-withdraw', props: { operation: 'create' } },
  make: { type: 'custody-swap-make', props: { operation: 'make' } },
  take: { type: 'custody-swap-take', props: { operation: 'take' } },
  sweep: { type: 'custody-sweep', props: { operation: 'start' } },
  fee: { type: 'custody-assets', props: { operation: 'fee' } },
  transferDecimal: { type: 'custody-transfer', props: { operation: 'create', amountFormat: 'decimal' } },
  feeDecimal: { type: 'custody-assets', props: { operation: 'fee', amountFormat: 'decimal' } },
};

/** What a node's operation reads, for generating its bad inputs. */
interface FieldTable {
  /** A valid payload (every field from msg.payload: no editor field is set). */
  valid: () => Record<string, unknown>;
  /** Required fields, dotted (a missing one is refused as `<field>: required`). */
  required: string[];
  /** Path ids. */
  pathIds: string[];
  /** Required texts (not blank) and their bounds. */
  text: Record<string, number>;
  /** Texts that may be empty and their bounds. */
  optionalText: Record<string, number>;
  /** Asset code fields, dotted. */
  assets: string[];
  /** Amount fields in base units, dotted. */
  amounts: string[];
  /** True when the body has `expires`. */
  expires?: boolean;
  /** Boolean fields. */
  booleans?: string[];
}

const send = () => ({ symbol: 'BTC-TESTNET', amount: 1000 });
/**
 * The field table of a payment body (transfer or withdrawal create): the same fields but the
 * destination, `destination` (at most `maxLength` characters, valid example `sample`).
 */
function paymentTable(destination: string, maxLength: number, sample: string): FieldTable {
  return {
    valid: () => ({ company_id: 'c1', wallet_id: 'w1', [destination]: sample, expires: now() + 3600, benefit_of: 'b', account_no: 'a', reference: 'r', partner_txID: `p-${++sweepKeys}`, send: send() }),
    required: ['company_id', 'wallet_id', destination, 'expires', 'benefit_of', 'account_no', 'reference', 'partner_txID', 'send', 'send.symbol', 'send.amount'],
    pathIds: ['company_id'],
    text: { wallet_id: 128, [destination]: maxLength, partner_txID: 128 },
    optionalText: { benefit_of: 256, account_no: 256, reference: 256 },
    assets: ['send.symbol'],
    amounts: ['send.amount'],
    expires: true,
  };
}

const TABLES: Record<string, FieldTable> = {
  transfer: paymentTable('counterparty_wallet_address', 128, 'apple banana cherry'),
  transferGet: {
    valid: () => ({ company_id: 'c1', tx_id: 't1' }),
    required: ['company_id', 'tx_id'],
    pathIds: ['company_id', 'tx_id'],
    text: {},
    optionalText: {},
    assets: [],
    amounts: [],
  },
  withdraw: paymentTable('address', 256, 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx'),
  make: {
    valid: () => ({ company_id: 'c1', send_wallet_id: 'w1', receive_wallet_id: 'w2', expires: now() + 3600, reference: 'r', partner_txID: 'm-1', send: send(), receive: { symbol: 'ETH-TESTNET', amount: 2000 }, add_to_liquidity_hub: true }),
    required: ['company_id', 'send_wallet_id', 'receive_wallet_id', 'expires', 'reference', 'partner_txID', 'send', 'send.symbol', 'send.amount', 'receive', 'receive.symbol', 'receive.amount'],
    pathIds: ['company_id'],
    text: { send_wallet_id: 128, receive_wallet_id: 128, partner_txID: 128 },
    optionalText: { reference: 256 },
    assets: ['send.symbol', 'receive.symbol'],
    amounts: ['send.amount', 'receive.amount'],
    expires: true,
    booleans: ['add_to_liquidity_hub'],
  },
  take: {
    valid: () => ({ company_id: 'c1', swap_id: 's1', send_wallet_id: 'w3', receive_wallet_id: 'w4', reference: 'r', partner_txID: 't-1' }),
    required: ['company_id', 'swap_id', 'send_wallet_id', 'receive_wallet_id', 'reference', 'partner_txID'],
    pathIds: ['company_id'],
    text: { swap_id: 128, send_wallet_id: 128, receive_wallet_id: 128, partner_txID: 128 },
    optionalText: { reference: 256 },
    assets: [],
    amounts: [],
  },
  sweep: {
    valid: () => ({ client_id: 'cc1', wallet_id: 'w1', recipient_wallet_id: 'w2', reference: 'r', partner_txID: `sweep-${++sweepKeys}`, expires: now() + 3600, send: send() }),
    required: ['client_id', 'wallet_id', 'recipient_wallet_id', 'partner_txID', 'expires', 'send', 'send.symbol'],
    pathIds: ['client_id'],
    text: { wallet_id: 128, recipient_wallet_id: 128, partner_txID: 128 },
    optionalText: { reference: 256 },
    assets: ['send.symbol'],
    amounts: ['send.amount'],
    expires: true,
  },
  fee: {
    valid: () => ({ type: 'transferOut', asset: 'BTC-TESTNET', amount: 1000 }),
    required: ['type', 'asset', 'amount'],
    pathIds: [],
    text: {},
    optionalText: {},
    assets: ['asset'],
    amounts: ['amount'],
  },
};

/** One bad input: the node it goes to, the msg payload, the field the error must name and what it must say. */
interface Case {
  node: string;
  what: string;
  payload: unknown;
  field: string;
  says: RegExp;
}

/** A copy of `obj` with the dotted `path` set to `value` (or deleted when `value` is `DELETE`). */
const DELETE = Symbol('delete');
function withField(obj: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(obj);
  const keys = path.split('.');
  let target = copy as Record<string, any>;
  for (const k of keys.slice(0, -1)) target = target[k];
  if (value === DELETE) delete target[keys[keys.length - 1]];
  else target[keys[keys.length - 1]] = value;
  return copy;
}

const UNKNOWN = /unknown asset "XYZ"; GET \/assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET$/;
const NUMBER_ID = /must be an id: a number id must be a positive whole number/;

/** The bad inputs of one node, from its table. */
function casesOf(node: string, t: FieldTable): Case[] {
  const cases: Case[] = [];
  const add = (what: string, field: string, value: unknown, says: RegExp) => cases.push({ node, what, payload: withField(t.valid(), field, value), field, says });
  for (const f of t.required) add('missing', f, DELETE, /required$/);
  for (const f of t.pathIds) {
    for (const v of [-1, 0, 1.5, '-1', '0', '1.5', '1e3']) add(`path id ${JSON.stringify(v)}`, f, v, NUMBER_ID);
    for (const v of ['../x', 'a/b', '..', ' padded ', 'a?b=1']) add(`path id ${JSON.stringify(v)}`, f, v, /must be an id: no "\/"/);
    add('path id true', f, true, /must be an id/);
    add('path id of 129 characters', f, 'i'.repeat(129), /must be at most 128 characters, got 129$/);
    add('path id of 1 MB', f, 'i'.repeat(MB), /must be at most 128 characters, got 1048576$/);
  }
  for (const [f, max] of Object.entries(t.text)) {
    add('a number', f, 42, /must be string$/);
    add('blank', f, '   ', /must not be empty or blank$/);
    add('empty', f, '', /must not be empty or blank$/);
    add(`${max + 1} characters`, f, 'x'.repeat(max + 1), new RegExp(`must be at most ${max} characters, got ${max + 1}$`));
  }
  for (const [f, max] of Object.entries(t.optionalText)) {
    add('an object', f, { text: 'r' }, /must be string$/);
    add(`${max + 1} characters`, f, 'x'.repeat(max + 1), new RegExp(`must be at most ${max} characters, got ${max + 1}$`));
  }
  for (const f of ['partner_txID', 'reference']) {
    if (f in t.text || f in t.optionalText) add('1 MB', f, 'x'.repeat(MB), /must be at most \d+ characters, got 1048576$/);
  }
  for (const f of t.assets) {
    add('5,000 characters', f, 'B'.repeat(5000), /must be at most 32 characters, got 5000$/);
    add('lower case', f, 'btc-testnet', /must match \^\[A-Z0-9\]\[A-Z0-9-\]\*\$/);
    add('a number', f, 1, /must be string$/);
    add('unknown', f, 'XYZ', UNKNOWN);
  }
  for (const f of t.amounts) {
    for (const [v, says] of [
      [0, /must be >= 1, got 0$/],
      [-1, /must be >= 1, got -1$/],
      [1.5, /must be integer$/],
      ['1', /must be integer$/],
      [2 ** 53, /must be <= 9007199254740991, got 9007199254740992$/],
      [null, /must be integer$/],
    ] as const) {
      add(`amount ${JSON.stringify(v)}`, f, v, says);
    }
  }
  if (t.expires) {
    add('in the past', 'expires', now() - 60, /must be in the future/);
    add('text', 'expires', 'tomorrow', /must be integer$/);
    add('in milliseconds', 'expires', Date.now(), /must be <= 253402300799/);
    add('0', 'expires', 0, /must be >= 1, got 0$/);
  }
  for (const f of t.booleans ?? []) add('text', f, 'yes', /must be boolean$/);
  const first = t.required[0];
  cases.push({ node, what: 'msg.payload not an object', payload: 'send 1 BTC', field: first, says: /required$/ });
  return cases;
}

const transferDecimal = (amount: unknown, symbol = 'BTC-TESTNET') => ({ ...TABLES.transfer.valid(), send: { symbol, amount } });
const CASES: Case[] = [
  ...Object.entries(TABLES).flatMap(([node, t]) => casesOf(node, t)),
  // A fee quote for 0 is a quote of nothing, in base units and in whole units.
  { node: 'fee', what: 'type not a fee type', payload: { ...TABLES.fee.valid(), type: 'deposit' }, field: 'type', says: /must be one of "transferOut", "withdraw", "swap"$/ },
  { node: 'feeDecimal', what: 'amount "0"', payload: { ...TABLES.fee.valid(), amount: '0' }, field: 'amount', says: /: at least 0\.00000001 BTC-TESTNET, got 0$/ },
  { node: 'feeDecimal', what: 'amount "0.000"', payload: { ...TABLES.fee.valid(), amount: '0.000' }, field: 'amount', says: /: at least 0\.00000001 BTC-TESTNET, got 0\.000$/ },
  { node: 'feeDecimal', what: 'unknown asset', payload: { ...TABLES.fee.valid(), asset: 'XYZ', amount: '1' }, field: 'asset', says: UNKNOWN },
  { node: 'transferDecimal', what: 'amount "0"', payload: transferDecimal('0'), field: 'send.amount', says: /: at least 0\.00000001 BTC-TESTNET, got 0$/ },
  { node: 'transferDecimal', what: 'amount "-1"', payload: transferDecimal('-1'), field: 'send.amount', says: /a decimal number of whole units/ },
  { node: 'transferDecimal', what: 'amount "1e3"', payload: transferDecimal('1e3'), field: 'send.amount', says: /a decimal number of whole units/ },
  { node: 'transferDecimal', what: 'amount of 5,000 digits', payload: transferDecimal('9'.repeat(5000)), field: 'send.amount', says: /must be at most 64 characters, got 5000$/ },
  { node: 'transferDecimal', what: 'amount finer than the scale', payload: transferDecimal('0.000000001'), field: 'send.amount', says: /: at most 8 decimal places for BTC-TESTNET, got 0\.000000001 \(9 places\)/ },
  { node: 'transferDecimal', what: 'amount past 2^53 - 1 base units', payload: transferDecimal('90071992.54740992'), field: 'send.amount', says: /: at most 90071992\.54740991 BTC-TESTNET, got 90071992\.54740992$/ },
  { node: 'transferDecimal', what: 'unknown asset', payload: transferDecimal('0.5', 'XYZ'), field: 'send.symbol', says: UNKNOWN },
];

describe('bad input to the money-moving nodes and the fee quote, in the Node-RED runtime', function () {
  this.timeout(120000);
  const server = new CountingServer();
  const { creds } = useCountingServer(server, 'YmFkLWlucHV0LWtleS1ub3QtcmVhbA==');
  const inbox: Inbox = new Map();

  before(async () => {
    await startHelperServer();
    const flow = [
      TAB,
      { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: server.baseUrl },
      ...Object.entries(NODES).map(([id, n]) => ({ id, z: 'tab', type: n.type, connection: 'cfg', wires: [['out']], x: 100, y: 100, ...n.props })),
      { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
      { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
    ];
    await loadCollecting(nodeModules, flow, creds, inbox, ['out', 'caught']);
  });
  after(async () => {
    await helper.unload();
    await stopHelperServer();
  });

  it(`refuses all ${CASES.length} bad inputs before sending (EINPUT at the Catch node, the field named, nothing sent but GET /assets)`, async () => {
    assert.ok(CASES.length >= 140, `${CASES.length} cases`);
    const failures: string[] = [];
    for (const c of CASES) {
      const label = `${c.node} ${c.field} ${c.what}`;
      const sentBefore = server.requests - server.assetRequests;
      const r = await sendAndWait(inbox, { payload: c.payload }, c.node, label);
      const error = r.caught?.error;
      if (!r.caught) failures.push(`${label}: sent, answered ${JSON.stringify(r.out?.payload)}`);
      else if (error.code !== 'EINPUT') failures.push(`${label}: code ${error.code}: ${String(error.message).slice(0, 200)}`);
      // Node-RED's Catch node shows the error as `<name>: <message>`.
      else if (!error.message.startsWith(`ValidationError: ${c.field}: `) || !c.says.test(error.message)) failures.push(`${label}: ${String(error.message).slice(0, 200)} (expected ${c.field}: ${c.says})`);
      else if (error.message.length > 300) failures.push(`${label}: a message of ${error.message.length} characters echoes the value`);
      else if (r.caught.statusCode !== undefined) failures.push(`${label}: msg.statusCode ${r.caught.statusCode} for a request never sent`);
      if (server.requests - server.assetRequests !== sentBefore) failures.push(`${label}: a request other than GET /assets reached the server`);
    }
    assert.deepEqual(failures, [], `${failures.length} of ${CASES.length} cases`);
    assert.deepEqual(server.sent(), [], 'nothing but GET /assets was sent');
    assert.equal(server.assetRequests, 1, 'one GET /assets for the connection (cached), not one per msg');
  });

  it('sends the valid payload of every node the cases start from (so each case is refused for its one bad field)', async () => {
    const valid: Array<[string, unknown]> = [
      ...Object.entries(TABLES).map(([node, t]) => [node, t.valid()] as [string, unknown]),
      ['feeDecimal', { ...TABLES.fee.valid(), amount: '0.00001' }],
      ['transferDecimal', transferDecimal('0.015')],
    ];
    for (const [node, payload] of valid) {
      const r = await sendAndWait(inbox, { payload }, node);
      assert.ok(r.out, `${node}: ${r.caught?.error?.message}`);
      assert.equal(r.out.statusCode, 200);
    }
    assert.equal(server.sent().length, valid.length);
    assert.deepEqual(JSON.parse(server.sent().at(-1)!.body).send, { symbol: 'BTC-TESTNET', amount: 1500000 });
    assert.equal(server.assetRequests, 1, 'still the one GET /assets');
  });
});
