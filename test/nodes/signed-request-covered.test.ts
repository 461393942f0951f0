/**
 * A signed call (lib `signedRequest`, the custody-request node) that a typed operation covers is
 * checked like that operation: nothing sent for refused input, the body sent as given.
 */
import '../helpers/isolated-dirs';
import '../helpers/red-catalogs';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { CustodyClient, ValidationError, signedRequest } from '../../lib';
import helper from 'node-red-node-test-helper';
import { until } from '../helpers/support';
import { countingServer } from '../helpers/counting-server';

const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const apiKey = 'cmV2aWV3LWZpeGVzLWtleS1ub3QtcmVhbA==';

describe('a signed call that a typed operation covers is checked like it', function () {
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
    const nodeModules = [require('../../nodes/custody-config/custody-config'), require('../../nodes/custody-request/custody-request'), require('@node-red/nodes/core/common/25-catch.js')];
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
