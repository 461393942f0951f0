/**
 * Bad input refused before sending, in lib (docs/nodes.md, "Bad input is refused before anything is
 * sent"): the length bound of every text and id field of every v1 and v2 declaration, path ids that
 * are numbers, amounts of 0, and asset codes checked against the per-client GET /assets list (one
 * GET per client, fetched again for an unknown code once a minute old), by `callOperation`, the
 * decimal conversion and `signedRequest`.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { CountingServer, isAssetListRequest } from '../helpers/counting-server';
import {
  ApiError,
  CustodyClient,
  ValidationError,
  checkAssetCodes,
  createTransfer,
  decimalAmountsToBaseUnits,
  getTransfer,
  prepareOperation,
  quoteFee,
  readFundLedger,
  signedRequest,
  API_OPERATIONS,
  OPERATIONS,
  type JsonSchema,
  type OperationSpec,
} from '../../lib';
import { ASSET_LIST_MAX_AGE_MS } from '../../lib/client/asset-list';
import { ID_MAX_LENGTH, pathParams } from '../../lib/api/spec';
import { shortValue } from '../../lib/api/errors';

const now = () => Math.floor(Date.now() / 1000);

/** Every declared operation, v1 and v2, by operationId. */
function allOperations(): Array<[string, OperationSpec]> {
  return API_OPERATIONS.map((o) => [o.id, o.spec]);
}

/** A bounded string field: its path (array items as index 0) and bound. */
interface Bounded {
  path: Array<string | number>;
  max: number;
}

/**
 * Every string schema under `schema`, as paths; asserts each has a `maxLength` (or an `enum`
 * or `const`, which bound it too).
 */
function boundedFields(schema: JsonSchema | undefined, where: string, path: Array<string | number> = []): Bounded[] {
  if (!schema) return [];
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).flatMap((s) => boundedFields(s, where, path));
  if (schema.type === 'string') {
    if (schema.enum || schema.const !== undefined) return [];
    assert.equal(typeof schema.maxLength, 'number', `${where}: ${path.join('.') || '(root)'} is a string without maxLength`);
    return [{ path, max: schema.maxLength as number }];
  }
  if (schema.properties) return Object.entries(schema.properties as Record<string, JsonSchema>).flatMap(([k, s]) => boundedFields(s, where, [...path, k]));
  if (schema.items) return boundedFields(schema.items as JsonSchema, where, [...path, 0]);
  return [];
}

function setAt(obj: Record<string, unknown>, path: Array<string | number>, value: unknown): Record<string, unknown> {
  const copy = structuredClone(obj);
  let target: any = copy;
  for (const k of path.slice(0, -1)) target = target[k];
  target[path[path.length - 1]] = value;
  return copy;
}

const expires = now() + 3600;
const send = { symbol: 'BTC-TESTNET', amount: 1000 };
/** A custody group; a function, so that no two fields share one object (structuredClone keeps sharing). */
const group = () => ({ threshold: 1, members: ['m1'] });
const expression = { type: 1, operation: 1, threshold: 1, rules: [{ type: 2, operation: 3, threshold: 0, arguments: { id: 'm1' } }] };
const policyBody = { workspaceID: 'ws1', name: 'p', expression, expressionContentType: 'application/json', adminPolicyID: 'a1', policyType: 'transaction', adminLocked: false, allowDuplicates: false };

/** A valid input of every declared operation that has text fields in its body or query. */
const VALID: Record<string, Record<string, unknown>> = {
  quoteFee: { type: 'transferOut', asset: 'BTC-TESTNET', amount: 1000 },
  createCompany: { name: 'Acme', city: 'Zug', country: 'CH', domain: 'acme.example', ref: 'r1' },
  updateCompany: { company_id: 'c1', name: 'Acme', city: 'Zug', country: 'CH', domain: 'acme.example', ref: 'r1' },
  searchCompanies: { query: 'acm' },
  addTrustedParty: { company_id: 'c1', address: 'a@b.example', type: 'user', name: 'Ann' },
  createFund: { company_id: 'c1', name: 'f', description: 'd', custodygroup_withdraw: group(), custodygroup_tx: group(), wallets: [{ name: 'w', asset: 'BTC-TESTNET', type: 0, custodygroup_withdraw: group(), custodygroup_tx: group(), connect: [{ counterparty_id: 'x', client_id: 'y' }] }] },
  addWallet: { company_id: 'c1', fund_id: 'f1', wallets: [{ name: 'w', asset: 'BTC-TESTNET', custodygroup_withdraw: group(), custodygroup_tx: group(), connect: [{ counterparty_id: 'x', client_id: 'y' }] }] },
  getLedger: { company_id: 'c1', fund_id: 'f1', asset: 'BTC-TESTNET', wallet_id: 'w1', direction: 'in' },
  addWhitelist: { company_id: 'c1', fund_id: 'f1', name: 'cold', asset: 'BTC-TESTNET', address: 'tb1qaddress' },
  createTransfer: { company_id: 'c1', wallet_id: 'w1', counterparty_wallet_address: 'w2', expires, benefit_of: 'b', account_no: 'a', reference: 'r', partner_txID: 'p1', send },
  createCoreClient: { name: 'cc' },
  listCoreClients: { company_id: 'c1' },
  createWithdrawal: { company_id: 'c1', wallet_id: 'w1', address: 'tb1qaddress', expires, benefit_of: 'b', account_no: 'a', reference: 'r', partner_txID: 'p1', send },
  makeSwap: { company_id: 'c1', send_wallet_id: 'w1', receive_wallet_id: 'w2', expires, reference: 'r', partner_txID: 'p1', send, receive: { symbol: 'ETH-TESTNET', amount: 2000 } },
  takeSwap: { company_id: 'c1', swap_id: 's1', send_wallet_id: 'w1', receive_wallet_id: 'w2', reference: 'r', partner_txID: 'p1' },
  publishQuote: { company_id: 'c1', tx_id: 't1' },
  startSweep: { client_id: 'cc1', wallet_id: 'w1', recipient_wallet_id: 'w2', reference: 'r', partner_txID: 'sweep-1', expires, send },
  getSweepStatus: { client_id: 'cc1', tx_id: 't1' },
  readFundLedger: { fund_id: 'f1', asset: 'BTC-TESTNET', wallet_id: 'w1', direction: 'in' },
  createPolicy: policyBody,
  updatePolicy: { ...policyBody, policyID: 'p1' },
  createPortfolio: { workspaceID: 'ws1', name: 'pf', type: 'standard' },
  createPortfolioWallet: { workspaceID: 'ws1', accountID: 'a1', name: 'w', connectPlugin: 'defi', policyID: 'p1', waitForAddress: 0 },
};

/** Run `fn`, expecting a ValidationError; @returns it. */
function refusal(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ValidationError, `a ValidationError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a ValidationError');
}

describe('bad input: length bounds, path ids, amounts (lib)', () => {
  it('every text and id field of every v1 and v2 declaration has a length bound, and an over-long value is refused naming the field and the bound', () => {
    let checked = 0;
    for (const [name, spec] of allOperations()) {
      const fields = [...boundedFields(spec.query, name), ...boundedFields(spec.body, name)];
      if (fields.length === 0) continue;
      const valid = VALID[name];
      assert.ok(valid, `${name} has text fields: give it a valid input in VALID`);
      prepareOperation(spec, valid);
      for (const { path, max } of fields) {
        const field = path.join('.');
        const e = refusal(() => prepareOperation(spec, setAt(valid, path, 'x'.repeat(max + 1))));
        assert.equal(e.field, field, `${name} ${field}: ${e.message}`);
        assert.equal(e.message, `${field}: must be at most ${max} characters, got ${max + 1}`);
        prepareOperation(spec, setAt(valid, path, 'X'.repeat(max)));
        checked++;
      }
    }
    assert.ok(checked >= 60, `${checked} bounded fields checked`);
  });

  it('every path id of every declaration is bounded by ID_MAX_LENGTH; 1 MB values are refused with a short message', () => {
    for (const [name, spec] of allOperations()) {
      const names = pathParams(spec.path);
      for (const id of names) {
        const input = { ...(VALID[name] ?? {}), ...Object.fromEntries(names.map((n) => [n, 'x1'])), [id]: 'y'.repeat(ID_MAX_LENGTH + 1) };
        const e = refusal(() => prepareOperation(spec, input));
        assert.equal(e.message, `${id}: must be at most ${ID_MAX_LENGTH} characters, got ${ID_MAX_LENGTH + 1}`, name);
      }
    }
    const mb = 'R'.repeat(1 << 20);
    for (const field of ['reference', 'partner_txID', 'benefit_of', 'account_no', 'wallet_id', 'company_id']) {
      const e = refusal(() => prepareOperation(OPERATIONS.createTransfer.spec, { ...VALID.createTransfer, [field]: mb }));
      assert.equal(e.field, field);
      assert.match(e.message, new RegExp(`^${field}: must be at most \\d+ characters, got 1048576$`));
    }
    const code = refusal(() => prepareOperation(OPERATIONS.createTransfer.spec, { ...VALID.createTransfer, send: { symbol: 'B'.repeat(5000), amount: 1 } }));
    assert.equal(code.message, 'send.symbol: must be at most 32 characters, got 5000');
    // Characters are code points: 256 emoji are 256 characters (512 UTF-16 units).
    prepareOperation(OPERATIONS.createTransfer.spec, { ...VALID.createTransfer, reference: '😀'.repeat(256) });
    assert.equal(refusal(() => prepareOperation(OPERATIONS.createTransfer.spec, { ...VALID.createTransfer, reference: '😀'.repeat(257) })).message, 'reference: must be at most 256 characters, got 257');
  });

  it('a path id that is a number must be a positive whole number (numbers and number texts)', () => {
    const spec = OPERATIONS.getTransfer.spec;
    for (const bad of [-1, 0, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN, '-1', '0', '00', '1.5', '1e3', '+7', '-0', '.5']) {
      const e = refusal(() => prepareOperation(spec, { company_id: 'c1', tx_id: bad }));
      assert.equal(e.field, 'tx_id', String(bad));
      assert.match(e.message, /^tx_id: must be an id: a number id must be a positive whole number, got /, String(bad));
    }
    for (const bad of ['../x', 'a/b', '..', '.', ' x', 'a?b', 'a#b', 'a%2Fb', true, null, {}]) {
      assert.match(refusal(() => prepareOperation(spec, { company_id: 'c1', tx_id: bad })).message, /^tx_id: must be an id/, String(bad));
    }
    for (const good of [7, '7', '007', 'abc-1', '0x1f', 'apple banana cherry', '12345678901234567890123']) {
      assert.ok(prepareOperation(spec, { company_id: 'c1', tx_id: good }).path.startsWith('/company/c1/transfer/'), String(good));
    }
  });

  it('every amount of every declaration is a positive integer of base units; a fee quote for 0 is refused', () => {
    const at = (schema: JsonSchema, path: string) => path.split('.').reduce<JsonSchema>((s, k) => (s.properties as Record<string, JsonSchema>)[k], schema);
    let amounts = 0;
    for (const [name, spec] of allOperations()) {
      for (const { amount } of spec.amounts ?? []) {
        const schema = at(spec.body!, amount);
        assert.equal(schema.type, 'integer', `${name} ${amount}`);
        assert.equal(schema.minimum, 1, `${name} ${amount}`);
        assert.equal(schema.maximum, Number.MAX_SAFE_INTEGER, `${name} ${amount}`);
        amounts++;
      }
    }
    assert.equal(amounts, 6, 'fee, transfer, withdraw, swap send and receive, sweep');
    for (const [amount, message] of [
      [0, 'amount: must be >= 1, got 0'],
      [-1, 'amount: must be >= 1, got -1'],
      [1.5, 'amount: must be integer'],
      ['1', 'amount: must be integer'],
      [2 ** 53, 'amount: must be <= 9007199254740991, got 9007199254740992'],
    ] as const) {
      assert.equal(refusal(() => prepareOperation(OPERATIONS.quoteFee.spec, { ...VALID.quoteFee, amount })).message, message);
    }
  });

  it('errors quote at most a short prefix of a bad value', () => {
    assert.equal(shortValue('BTC'), '"BTC"');
    assert.equal(shortValue('A'.repeat(5000)), `"${'A'.repeat(32)}…" (5000 characters)`);
    assert.equal(shortValue(-1), '-1');
    assert.equal(shortValue({ big: 'x'.repeat(1000) }), 'an object');
    assert.equal(shortValue(10n ** 100n), 'a number of 101 digits');
    const mb = '1'.repeat(1 << 20);
    const bad = refusal(() => prepareOperation(OPERATIONS.createTransfer.spec, { ...VALID.createTransfer, send: { symbol: 'btc' + mb, amount: 1 } }));
    assert.ok(bad.message.length < 200, bad.message.slice(0, 300));
  });
});

describe('bad input: asset codes checked against GET /assets (lib)', function () {
  this.timeout(30000);
  const server = new CountingServer();
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const clients: CustodyClient[] = [];
  const newClient = (baseUrl = server.baseUrl) => {
    const c = new CustodyClient({ baseUrl, apiKey: 'dGVzdA==', privateKey: pem, retryDelayMs: 1 });
    clients.push(c);
    return c;
  };
  const transfer = (symbol: string) => ({ ...(VALID.createTransfer as any), send: { symbol, amount: 1000 } });
  const refusedAsync = async (p: Promise<unknown>): Promise<ValidationError> => {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof ValidationError, `a ValidationError, got ${String(e)}`);
      return e;
    }
    assert.fail('expected a ValidationError');
  };

  before(() => server.start());
  beforeEach(() => {
    server.seen.length = 0;
    server.requests = 0;
    server.assetRequests = 0;
    server.assets = server.assets.filter((a) => a.code !== 'SOL-TESTNET');
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.stop();
  });

  it('refuses an unknown asset naming the field and listing the known ones; one GET /assets per client, not per request', async () => {
    const client = newClient();
    const e = await refusedAsync(createTransfer(client, transfer('XYZ')));
    assert.equal(e.field, 'send.symbol');
    assert.equal(e.code, 'EINPUT');
    assert.equal(e.message, 'send.symbol: unknown asset "XYZ"; GET /assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET');
    assert.deepEqual(server.sent(), [], 'nothing but GET /assets');
    await createTransfer(client, transfer('BTC-TESTNET'));
    await createTransfer(client, transfer('ETH-TESTNET'));
    assert.equal(await refusedAsync(quoteFee(client, { type: 'transferOut', asset: 'DOGE', amount: 5 })).then((x) => x.message), 'asset: unknown asset "DOGE"; GET /assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET');
    assert.equal(server.assetRequests, 1, 'one GET /assets for the client');
    assert.deepEqual(server.sent().map((r) => `${r.method} ${r.url}`), ['POST /api/v1/p/company/c1/transfer', 'POST /api/v1/p/company/c1/transfer']);
    // An operation without asset codes sends no GET /assets at all, on a new client either.
    const other = newClient();
    await getTransfer(other, { company_id: 'c1', tx_id: 't1' });
    assert.equal(server.assetRequests, 1);
    await createTransfer(other, transfer('BTC'));
    assert.equal(server.assetRequests, 2, 'another client, its own GET');
  });

  it('a code the cached list lacks fetches the list again once it is older than a minute, so a newly listed asset is accepted', async () => {
    const client = newClient();
    await createTransfer(client, transfer('BTC-TESTNET'));
    server.assets.push({ code: 'SOL-TESTNET', name: 'Solana Testnet', unitCode: 'SOL-TEST', scale: 1000000000, enabled: true, testAsset: true });
    await refusedAsync(createTransfer(client, transfer('SOL-TESTNET')));
    assert.equal(server.assetRequests, 1, 'a fresh list is not fetched again');
    const realNow = Date.now;
    const later = realNow() + ASSET_LIST_MAX_AGE_MS + 1000;
    Date.now = () => later;
    try {
      // Concurrent lookups of unknown codes share the one new GET.
      const [a, b] = await Promise.allSettled([createTransfer(client, transfer('SOL-TESTNET')), createTransfer(client, transfer('NOPE'))]);
      assert.equal(a.status, 'fulfilled', String((a as PromiseRejectedResult).reason));
      assert.equal(b.status, 'rejected');
      assert.match((b as PromiseRejectedResult).reason.message, /^send\.symbol: unknown asset "NOPE"; GET \/assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET, SOL-TESTNET$/);
      assert.equal(server.assetRequests, 2);
      await refusedAsync(createTransfer(client, transfer('NOPE')));
      assert.equal(server.assetRequests, 2, 'the new list is fresh: not fetched again');
    } finally {
      Date.now = realNow;
    }
  });

  it('every declared asset field is checked: swap receive, whitelist, new wallets of a fund (each item), fund ledger filter; not the read-only ledger', async () => {
    const client = newClient();
    const cases: Array<[OperationSpec, Record<string, unknown>, string]> = [
      [OPERATIONS.makeSwap.spec, { ...VALID.makeSwap, receive: { symbol: 'XRP', amount: 5 } }, 'receive.symbol'],
      [OPERATIONS.startSweep.spec, { ...VALID.startSweep, send: { symbol: 'XRP' } }, 'send.symbol'],
      [OPERATIONS.addWhitelist.spec, { ...VALID.addWhitelist, asset: 'XRP' }, 'asset'],
      [OPERATIONS.addWallet.spec, { company_id: 'c1', fund_id: 'f1', wallets: [{ name: 'a', asset: 'BTC' }, { name: 'b', asset: 'XRP' }] }, 'wallets.1.asset'],
      [OPERATIONS.createFund.spec, { ...VALID.createFund, wallets: [{ name: 'b', asset: 'XRP' }] }, 'wallets.0.asset'],
      [OPERATIONS.getLedger.spec, { company_id: 'c1', fund_id: 'f1', asset: 'XRP' }, 'asset'],
      [OPERATIONS.createWithdrawal.spec, { ...VALID.createWithdrawal, send: { symbol: 'XRP', amount: 5 } }, 'send.symbol'],
    ];
    for (const [spec, input, field] of cases) {
      const req = prepareOperation(spec, input);
      const e = await refusedAsync(checkAssetCodes(client, spec, req));
      assert.equal(e.message, `${field}: unknown asset "XRP"; GET /assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET`);
    }
    assert.deepEqual(server.sent(), []);
    // The read-only subset's ledger: GET /assets is not in its list, so its filter is not checked.
    await readFundLedger(client, { fund_id: 'f1', asset: 'XRP' });
    assert.deepEqual(server.sent().map((r) => r.url), ['/api/v1/p/funds/f1/ledger?asset=XRP']);
    assert.equal(server.assetRequests, 1);
  });

  it('decimal amounts and the signed request check the asset the same way', async () => {
    const client = newClient();
    const e = await refusedAsync(decimalAmountsToBaseUnits(client, OPERATIONS.createTransfer.spec, { ...transfer('XYZ'), send: { symbol: 'XYZ', amount: '0.5' } }));
    assert.equal(e.message, 'send.symbol: unknown asset "XYZ"; GET /assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET');
    const tooLong = await refusedAsync(decimalAmountsToBaseUnits(client, OPERATIONS.createTransfer.spec, { ...transfer('BTC'), send: { symbol: 'BTC', amount: '0.' + '0'.repeat(5000) + '1' } }));
    assert.equal(tooLong.message, 'send.amount: must be at most 64 characters, got 5003');
    const { company_id: _c, ...body } = transfer('XYZ');
    const signed = await refusedAsync(signedRequest(client, { method: 'POST', path: '/company/c1/transfer', body }));
    assert.equal(signed.field, 'send.symbol');
    const query = await refusedAsync(signedRequest(client, { method: 'GET', path: '/company/c1/fund/f1/ledger?asset=XYZ' }));
    assert.equal(query.message, 'asset: unknown asset "XYZ"; GET /assets lists BTC, BTC-TESTNET, ETH, ETH-TESTNET');
    const twice = await refusedAsync(signedRequest(client, { method: 'GET', path: '/company/c1/fund/f1/ledger?asset=BTC&asset=XYZ' }));
    assert.equal(twice.message, 'asset: must be an asset code (string), got an array');
    const method = await refusedAsync(signedRequest(client, { method: 'X'.repeat(1 << 20), path: '/assets' }));
    assert.ok(method.message.length < 120, method.message.slice(0, 200));
    const path = await refusedAsync(signedRequest(client, { method: 'GET', path: '/' + 'a'.repeat(5000) }));
    assert.equal(path.message, 'path: must be at most 2048 characters, got 5001');
    assert.deepEqual(server.sent(), []);
    await signedRequest(client, { method: 'POST', path: '/company/c1/transfer', body: transfer('BTC-TESTNET') });
    await signedRequest(client, { method: 'GET', path: '/company/c1/fund/f1/ledger?asset=ETH' });
    assert.equal(server.sent().length, 2);
    assert.equal(server.assetRequests, 1);
  });

  it('when GET /assets fails or answers no list, the operation is not sent (ApiError), and the failure is not cached', async () => {
    let assetsAnswer = { status: 503, body: '{"code":503,"msg":"busy"}' };
    const failing = new CountingServer({ answer: (r, s) => (isAssetListRequest(r) ? assetsAnswer : { status: 200, body: s.body }) });
    await failing.start();
    try {
      const client = newClient(failing.baseUrl);
      await assert.rejects(createTransfer(client, transfer('BTC')), (e: unknown) => e instanceof ApiError && e.statusCode === 503 && /^GET \/assets: 503/.test(e.message));
      assert.deepEqual(failing.sent(), [], 'the transfer was not sent');
      assert.equal(failing.assetRequests, 3, 'GET /assets is a read: retried');
      assetsAnswer = { status: 200, body: '{"tx_id":"not a list"}' };
      await assert.rejects(createTransfer(client, transfer('BTC')), (e: unknown) => e instanceof ApiError && e.code === 'EASSETS');
      assert.deepEqual(failing.sent(), []);
      assetsAnswer = { status: 200, body: JSON.stringify({ assets: [{ code: 'BTC', scale: 100000000 }] }) };
      await createTransfer(client, transfer('BTC'));
      assert.equal(failing.sent().length, 1, 'sent once the list could be read');
    } finally {
      await failing.stop();
    }
  });
});
