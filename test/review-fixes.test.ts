/**
 * Fixes of review findings, each proven over real sockets (the real simulator, the signed
 * CustodyClient of lib, real RSA keys):
 * - the simulator's partner_txID index is per kind of transaction (transfer, withdrawal, swap
 *   make, swap take), and older state files keyed per company only still load;
 * - the liquidity hub feed accepts `TxID`/`Status` (spec section 6) as well as `txID`/`status`
 *   (NOTES.md) and passes each message on as received;
 * - closing a client stops its retries (a redeploy leaves no request of the old flow running);
 * - a signed call (lib `signedRequest`, node `custody-request`) that a typed operation covers is
 *   checked like that operation, nothing sent for refused input, the body sent as given.
 */
import './isolated-dirs';
import './red-catalogs';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Simulator } from '../simulator';
import { ApiError, CustodyClient, HubFeed, ValidationError, signedRequest, type HubFeedMessage } from '../lib';
import helper from 'node-red-node-test-helper';
import { controlCall, until } from './support';
import { accountClient, signedCall, simulatedSuite } from './simulated';
import { CountingServer } from './counting-server';
import { bodyOf, swapQuoteRequest, transferRequest, uniqueId, withdrawalRequest } from './requests';
import { CHECK_ENV } from '../simulator/response-check';
import { violationReport } from './response-check';


/** A signed call; an API error answer is returned, not thrown. */
const api = signedCall;

describe('review fixes: simulator partner_txID idempotency is per kind of transaction', function () {
  this.timeout(60000);
  let dataDir: string;
  let sim: Simulator;
  let client: CustodyClient;
  let now: number;

  const fields = (partner_txID: string) => ({ expires: now + 3600, reference: 'idempotency per kind', partner_txID });
  const transfer = (partner_txID: string) => bodyOf(transferRequest(sim.demo, { ...fields(partner_txID), send: { symbol: 'BTC-TESTNET', amount: 1000 } }));
  const withdrawal = (partner_txID: string, address = sim.demo.whitelist['ETH-TESTNET']) =>
    bodyOf(withdrawalRequest(sim.demo, { ...fields(partner_txID), wallet_id: sim.demo.wallets['ETH-TESTNET'].wallet_id, address, benefit_of: 'Beneficiary', account_no: 'ACC-9', send: { symbol: 'ETH-TESTNET', amount: 1000 } }));
  const make = (partner_txID: string) => bodyOf(swapQuoteRequest(sim.demo, { ...fields(partner_txID), receive: { symbol: 'ETH-TESTNET', amount: 2000 }, add_to_liquidity_hub: false }));

  async function start(): Promise<void> {
    sim = await Simulator.start({ dataDir, port: 0 });
    client = accountClient(sim);
    now = (await controlCall(sim, 'GET', '/clock')).body.now;
  }
  async function stop(): Promise<void> {
    client?.close();
    await sim?.stop();
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-review-'));
    await start();
  });

  after(async () => {
    await stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a withdrawal or swap quote with the partner_txID of an earlier transfer is its own transaction', async () => {
    const c = sim.demo.company_id;
    const p1 = uniqueId('P1');
    const t = await api(client, 'POST', `/company/${c}/transfer`, transfer(p1));
    assert.equal(t.data.status, 'new', JSON.stringify(t.data));

    // not whitelisted: refused like any other withdrawal, not answered with the transfer
    const refused = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p1, 'tb1qnotwhitelisted0000000000000000000000000'));
    assert.equal(refused.status, 400, JSON.stringify(refused.data));
    assert.match(refused.data.detail.reason, /^address: /);

    const w = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p1));
    assert.equal(w.status, 200, JSON.stringify(w.data));
    assert.equal(w.data.status, 'new');
    assert.notEqual(w.data.tx_id, t.data.tx_id);
    assert.equal((await api(client, 'GET', `/company/${c}/withdraw/${w.data.tx_id}`)).status, 200);

    const m = await api(client, 'POST', `/company/${c}/atomicswap/make`, make(p1));
    assert.equal(m.data.status, 'new', JSON.stringify(m.data));
    assert.ok(![t.data.tx_id, w.data.tx_id].includes(m.data.tx_id));

    // each kind still answers its own repeat with its own transaction
    assert.deepEqual((await api(client, 'POST', `/company/${c}/transfer`, transfer(p1))).data, { tx_id: t.data.tx_id, status: 'existing' });
    assert.deepEqual((await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p1))).data, { tx_id: w.data.tx_id, status: 'existing' });
    const again = await api(client, 'POST', `/company/${c}/atomicswap/make`, make(p1));
    assert.equal(again.data.status, 'existing');
    assert.equal(again.data.tx_id, m.data.tx_id);
  });

  it('a state file with the old index (company and partner_txID only) still loads and keeps its idempotency', async () => {
    const c = sim.demo.company_id;
    const p2 = uniqueId('P2');
    const p3 = uniqueId('P3');
    const t = await api(client, 'POST', `/company/${c}/transfer`, transfer(p2));
    const w = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p3));
    assert.equal(t.data.status, 'new');
    assert.equal(w.data.status, 'new');
    await stop();

    // Rewrite the index as an older simulator wrote it: `company_id\npartner_txID`.
    const file = path.join(dataDir, 'state.json');
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    const old: Record<string, string> = {};
    for (const [key, txId] of Object.entries(state.partnerTxIndex as Record<string, string>)) {
      old[key.startsWith('coreclient:') ? key : key.split('\n').slice(1).join('\n')] = txId;
    }
    assert.equal(old[`${c}\n${p2}`], t.data.tx_id, 'the old form of the transfer key');
    state.partnerTxIndex = old;
    fs.writeFileSync(file, JSON.stringify(state));

    await start();
    assert.deepEqual((await api(client, 'POST', `/company/${c}/transfer`, transfer(p2))).data, { tx_id: t.data.tx_id, status: 'existing' });
    assert.deepEqual((await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p3))).data, { tx_id: w.data.tx_id, status: 'existing' });
    const other = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p2));
    assert.equal(other.data.status, 'new');
    assert.notEqual(other.data.tx_id, t.data.tx_id);
  });
});

describe('review fixes: the liquidity hub feed takes TxID and Status (spec section 6) as well as txID and status', function () {
  this.timeout(60000);
  let sim: Simulator;
  let client: CustodyClient;
  simulatedSuite('cf-review-hub-', {}, (s) => ({ sim, client } = s));

  it('emits both casings as received over the real signed websocket and drops a message with neither', async () => {
    const hub = new HubFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
    const quotes: HubFeedMessage[] = [];
    const errors: Error[] = [];
    hub.on('quote', (m: HubFeedMessage) => quotes.push(m));
    hub.on('error', (e: Error) => errors.push(e));
    try {
      hub.start();
      await until(() => (hub.state === 'connected' ? true : undefined), 'hub feed connected');
      const notes = { txID: `swap-${process.pid}-a`, status: 'taker_pending' };
      const spec = { TxID: `swap-${process.pid}-b`, Status: 'taker_pending' };
      const neither = { tx_id: `swap-${process.pid}-c`, status: 'taker_pending' };
      const last = { txID: `swap-${process.pid}-d`, status: 'taker_pending' };
      // What the engine sends on the hub socket, verbatim (its own messages use txID/status).
      // `neither` breaks the hub feed schema on purpose: its violation goes to a file of this
      // test (the response check, test/response-check.ts), not to the run's.
      const runFile = process.env[CHECK_ENV];
      const ownFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cf-hub-casings-')), 'violations.jsonl');
      process.env[CHECK_ENV] = ownFile;
      try {
        for (const m of [notes, spec, neither, last]) sim.engine.emit('hub', m as any);
        await until(() => (quotes.length >= 3 ? true : undefined), 'three quotes');
      } finally {
        process.env[CHECK_ENV] = runFile;
      }
      assert.deepEqual(
        violationReport(ownFile).map((l) => l.split(':')[0]),
        ['feed hub'],
        'the message with neither id is the one violation',
      );
      assert.deepEqual(quotes, [notes, spec, last], 'as received, nothing renamed; the message with neither id dropped');
      assert.equal(errors.length, 1);
      assert.equal(errors[0].message, 'liquidity hub feed: a message without txID or TxID was ignored');
    } finally {
      await hub.stop();
    }
  });
});

/** The hosted stand-in of these tests: its error answer carries the spec's `detail` too. */
function countingServer(): CountingServer {
  const server = new CountingServer();
  server.errorBody = JSON.stringify({ code: 503, msg: 'busy', detail: {} });
  return server;
}

const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const apiKey = 'cmV2aWV3LWZpeGVzLWtleS1ub3QtcmVhbA==';

describe('review fixes: close() stops in-flight retries', function () {
  this.timeout(30000);
  const server = countingServer();
  before(() => server.start());
  after(() => server.stop());

  it('a GET retrying against 503 is ended by close(): it rejects with ECLOSED and no attempt follows', async () => {
    server.seen.length = 0;
    server.status = 503;
    // Long waits between attempts: without close() it would try 6 times in ~3 s. (GET /exchanges:
    // the counting server answers GET /assets 200 whatever its status, for the asset check.)
    const client = new CustodyClient({ baseUrl: server.baseUrl, apiKey, privateKey: pem, attempts: 6, retryDelayMs: 400 });
    const pending = client.request('GET', '/exchanges', { idempotent: true });
    const outcome = pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    await until(() => (server.seen.length >= 1 ? true : undefined), 'the first attempt');
    await client.close();
    const atClose = server.seen.length;
    const err = (await outcome) as ApiError;
    assert.ok(err instanceof ApiError, `rejected with an ApiError, got ${String(err)}`);
    assert.equal(err.code, 'ECLOSED');
    assert.equal(err.statusCode, 0);
    assert.match(err.message, /^GET \/exchanges: no response the client was closed/);
    assert.ok(!err.message.includes(apiKey));
    // Longer than every wait the retries had left (at most 400+800+1600+3200+6400 ms is not needed:
    // the loop has ended, so none can come); a short pause shows none arrives late.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(server.seen.length, atClose, 'no attempt after close()');
    assert.ok(atClose < 6, 'close() ended the retries before they ran out');
    // Afterwards nothing is sent at all.
    await assert.rejects(client.request('GET', '/exchanges', { idempotent: true }), (e: ApiError) => e.code === 'ECLOSED');
    assert.equal(server.seen.length, atClose);
  });
});

describe('review fixes: a signed call that a typed operation covers is checked like it', function () {
  this.timeout(30000);
  const server = countingServer();
  let client: CustodyClient;
  const transferBody = (overrides: Record<string, unknown> = {}) => ({
    wallet_id: 'w1',
    counterparty_wallet_address: 'w2',
    expires: Math.floor(Date.now() / 1000) + 3600,
    benefit_of: '',
    account_no: '',
    reference: 'r',
    partner_txID: 'p-1',
    send: { symbol: 'BTC-TESTNET', amount: 1000 },
    ...overrides,
  });
  before(async () => {
    await server.start();
    client = new CustodyClient({ baseUrl: server.baseUrl, apiKey, privateKey: pem });
  });
  after(async () => {
    await client.close();
    await server.stop();
  });
  beforeEach(() => {
    server.seen.length = 0;
    server.status = 200;
  });

  it('refuses bad fields of covered calls naming the field, sending nothing', async () => {
    const { partner_txID: _omit, ...noPartner } = transferBody();
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/company/c1/transfer', noPartner, 'partner_txID'],
      ['POST', '/company/c1/transfer', transferBody({ send: { symbol: 'BTC-TESTNET', amount: 1.5 } }), 'send.amount'],
      ['POST', '/company/c1/transfer', transferBody({ send: { symbol: 'BTC-TESTNET', amount: '1000' } }), 'send.amount'],
      ['POST', '/company/c1/transfer', transferBody({ expires: 1000 }), 'expires'],
      // the service's routing ignores case and a trailing slash: so does the check
      ['post', '/Company/c1/Transfer/', noPartner, 'partner_txID'],
      ['POST', '/company/c1/withdraw', { wallet_id: 'w1', expires: Math.floor(Date.now() / 1000) + 60, benefit_of: '', account_no: '', reference: '', partner_txID: 'p', send: { symbol: 'BTC-TESTNET', amount: 5 } }, 'address'],
      ['POST', '/company', undefined, 'name'],
    ];
    for (const [method, p, body, field] of cases) {
      await assert.rejects(signedRequest(client, { method, path: p, body }), (e: unknown) => {
        assert.ok(e instanceof ValidationError, `${method} ${p}: ${String(e)}`);
        assert.equal(e.code, 'EINPUT');
        assert.equal(e.field, field, `${method} ${p}: ${e.message}`);
        return true;
      });
    }
    assert.equal(server.seen.length, 0, 'nothing was sent');
  });

  it('sends a valid covered call with its body exactly as given, and calls no typed node covers unchecked', async () => {
    const body = { ...transferBody(), note: 'kept: the escape hatch strips nothing' };
    const res = await signedRequest(client, { method: 'POST', path: '/company/c1/transfer', body });
    assert.equal(res.statusCode, 200);
    await signedRequest(client, { method: 'POST', path: '/company/c1/custom', body: { anything: 1 } });
    await signedRequest(client, { method: 'PUT', path: '/coreclient/cc1/action/a1' });
    assert.deepEqual(
      server.seen.map((r) => `${r.method} ${r.url} ${r.body}`),
      // The covered transfer's asset code is checked against GET /assets first (the client's one GET).
      ['GET /api/v1/p/assets ', `POST /api/v1/p/company/c1/transfer ${JSON.stringify(body)}`, 'POST /api/v1/p/company/c1/custom {"anything":1}', 'PUT /api/v1/p/coreclient/cc1/action/a1 '],
    );
  });

  describe('through the custody-request node', () => {
    helper.init(require.resolve('node-red'));
    const nodeModules = [require('../nodes/custody-config/custody-config'), require('../nodes/custody-request/custody-request'), require('@node-red/nodes/core/common/25-catch.js')];
    const flow = (props: Record<string, unknown>) => [
      { id: 'tab', type: 'tab', label: 'test' },
      { id: 'cfg', z: 'tab', type: 'custody-config', name: 'counting', environment: 'custom', baseUrl: server.baseUrl, signingMode: 'timestamp', timeout: 30 },
      { id: 'op', z: 'tab', type: 'custody-request', connection: 'cfg', wires: [['out']], x: 100, y: 100, ...props },
      { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
      { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
    ];
    before((done) => {
      helper.startServer(done);
    });
    after((done) => {
      helper.stopServer(done);
    });
    afterEach(() => helper.unload());

    /** Send `msg` into op; resolve with `{out}` or `{caught}`. */
    async function run(msg: Record<string, unknown>): Promise<{ out?: any; caught?: any }> {
      const got: { out?: any; caught?: any } = {};
      helper.getNode('out').once('input', (m: unknown) => (got.out = m));
      helper.getNode('caught').once('input', (m: unknown) => (got.caught = m));
      helper.getNode('op').receive(msg);
      await until(() => (got.out || got.caught ? true : undefined), 'a msg from op');
      return got;
    }

    it('refuses a transfer without partner_txID with EINPUT naming it, 0 requests sent; a valid one is sent as given', async () => {
      await helper.load(nodeModules, flow({ method: 'POST', path: '/company/c1/transfer' }), { cfg: { apiKey, privateKey: pem } });
      const { partner_txID: _omit, ...noPartner } = transferBody();
      const refused = await run({ payload: noPartner });
      assert.ok(refused.caught, 'reached the Catch node');
      assert.equal(refused.caught.error.code, 'EINPUT');
      assert.match(refused.caught.error.message, /partner_txID: required/);
      assert.equal(refused.caught.statusCode, undefined);
      const badAmount = await run({ payload: transferBody({ send: { symbol: 'BTC-TESTNET', amount: -5 } }) });
      assert.match(badAmount.caught.error.message, /send\.amount/);
      assert.equal(server.seen.length, 0, '0 requests sent for refused input');

      const body = { ...transferBody(), extra: true };
      const sent = await run({ payload: body });
      assert.ok(sent.out, 'sent');
      assert.equal(sent.out.statusCode, 200);
      assert.deepEqual(sent.out.payload, { tx_id: 'counted', status: 'new' });
      assert.deepEqual(server.sent().map((r) => r.body), [JSON.stringify(body)]);
      assert.equal(server.seen.length - server.sent().length, 1, 'and the one GET /assets of the asset check');
    });

    it('a redeploy (the flow stopped) ends a GET that is being retried against 503: no attempt after the stop', async () => {
      server.status = 503;
      await helper.load(nodeModules, flow({ method: 'GET', path: '/exchanges' }), { cfg: { apiKey, privateKey: pem } });
      helper.getNode('op').receive({});
      await until(() => (server.seen.length >= 1 ? true : undefined), 'the first attempt');
      await helper.unload(); // closes every node; the config node waits for its clients' close()
      // An attempt already on the wire when the flow stopped may land a few ms later (loopback,
      // a loaded machine): let it land, then count; a retry after the stop would come much later.
      await new Promise((r) => setTimeout(r, 50));
      const atStop = server.seen.length;
      // The retry loop has ended with the close: a pause longer than its remaining waits shows nothing comes late.
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(server.seen.length, atStop, 'no attempt after the flow stopped');
    });
  });
});
