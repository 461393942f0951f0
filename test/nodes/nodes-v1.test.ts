/**
 * The operation nodes added for the rest of spec section 4 (withdraw, swap make and take,
 * liquidity hub, sweep, read, request; the new fund and core client operations) in the real
 * Node-RED runtime (node-red-node-test-helper): bad input refused with nothing sent (a counting
 * server), what goes on the wire (decimal amounts, "Expires after", the request node's method,
 * path and body), and the nodes against the in-process simulator.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { control } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting, sendAndWait, operationFlow } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useCountingServer, useRedRuntime } from '../helpers/red-setup';
import { CustodyClient, listActions, getAction, approveAction } from '../../lib';

const dataDir = simulatorDataDir('cf-nodes-v1-');
const nodeModules = redNodes([
  'custody-config', 'custody-fund', 'custody-core-client', 'custody-action', 'custody-trusted-party', 'custody-withdraw',
  'custody-swap-make', 'custody-swap-take', 'custody-liquidity-hub', 'custody-sweep', 'custody-read', 'custody-request',
]);


const inbox: Inbox = new Map();

async function load(flow: object[], credentials?: object): Promise<void> {
  await loadCollecting(nodeModules, flow, credentials ?? {}, inbox, ['out', 'caught']);
}

/** Send `msg` into `op`; resolve with `{out}` (its output) or `{caught}` (the msg at the Catch node). */
function send(msg: Record<string, unknown>): Promise<{ out?: any; caught?: any }> {
  return sendAndWait(inbox, msg);
}

async function ok(msg: Record<string, unknown>): Promise<any> {
  const r = await send(msg);
  if (r.caught) throw new Error('caught: ' + r.caught.error?.message);
  return r.out;
}

async function refused(msg: Record<string, unknown>): Promise<any> {
  const r = await send(msg);
  if (r.out) throw new Error('expected an error, got output ' + JSON.stringify(r.out.payload));
  return r.caught;
}

const now = () => Math.floor(Date.now() / 1000);
let seq = 0;
const unique = (p: string) => `${p}-${process.pid}-${Date.now()}-${++seq}`;

describe('v1 operation nodes in the Node-RED runtime', function () {
  this.timeout(60000);
  let sim: Simulator;

  const simulator = useRedRuntime(dataDir);
  before(() => {
    sim = simulator();
  });

  describe('against a counting server', () => {
    /** Answers the asset list to GET /assets, else `server.status` (503 to see retries). */
    const server = new CountingServer({
      answer: (request, s) =>
        request.url.endsWith('/assets')
          ? { status: 200, body: JSON.stringify({ assets: [{ code: 'BTC-TESTNET', scale: 100000000 }, { code: 'ETH-TESTNET', scale: 1000000000 }] }) }
          : { status: s.status, body: s.status === 200 ? s.body : s.errorBody },
    });
    const seen = server.seen;
    const { apiKey, creds } = useCountingServer(server);
    /** Requests other than the GET /assets a decimal conversion makes. */
    const sent = () => seen.filter((s) => !s.url.endsWith('/assets'));

    beforeEach(() => {
      seen.length = 0;
      server.status = 200;
    });

    const custom = (type: string, props: Record<string, unknown>) => operationFlow(type, props, { environment: 'custom', baseUrl: server.baseUrl });

    it('each new node refuses bad input naming the field, sending nothing', async () => {
      const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, RegExp]> = [
        ['custody-withdraw', { operation: 'create', company_id: 'c1' }, { wallet_id: 'w1', expires: now() + 60, benefit_of: '', account_no: '', reference: '', partner_txID: 'p', send: { symbol: 'BTC-TESTNET', amount: 5 } }, /address: required/],
        ['custody-withdraw', { operation: 'get', company_id: 'c1' }, { tx_id: '../x' }, /tx_id: must be an id/],
        ['custody-swap-make', { operation: 'make', company_id: 'c1' }, { send_wallet_id: 'a', receive_wallet_id: 'b', expires: now() + 60, reference: '', partner_txID: 'p', send: { symbol: 'BTC-TESTNET', amount: 5 } }, /receive: required/],
        ['custody-swap-make', { operation: 'cancel', company_id: 'c1' }, {}, /tx_id: required/],
        ['custody-swap-take', { operation: 'take', company_id: 'c1' }, { send_wallet_id: 'a', receive_wallet_id: 'b', reference: '', partner_txID: 'p' }, /swap_id: required/],
        ['custody-liquidity-hub', { operation: 'publish', company_id: 'c1' }, {}, /tx_id: required/],
        ['custody-liquidity-hub', { operation: 'approveTake', company_id: 'c1' }, { action_id: '..' }, /action_id: must be an id/],
        ['custody-sweep', { operation: 'start', client_id: 'cc1' }, { wallet_id: 'a', recipient_wallet_id: 'b', partner_txID: 'sw-1', expires: now() + 60, send: { amount: 5 } }, /send\.symbol: required/],
        ['custody-sweep', { operation: 'status', client_id: 'cc1' }, {}, /tx_id: required/],
        ['custody-read', { operation: 'fundLedger' }, { fund_id: 'f1', direction: 'both' }, /direction: must be one of/],
        ['custody-fund', { operation: 'addWhitelist', company_id: 'c1', fund_id: 'f1' }, { name: 'n', address: 'a' }, /asset: required/],
        ['custody-core-client', { operation: 'wallets' }, {}, /client_id: required/],
      ];
      for (const [type, props, payload, expected] of cases) {
        await load(custom(type, props), creds);
        const caught = await refused({ payload });
        assert.equal(caught.error.code, 'EINPUT', `${type} ${expected}`);
        assert.match(caught.error.message, expected);
        await helper.unload();
      }
      assert.equal(seen.length, 0, 'nothing was sent');
    });

    it('withdraw and swap make: decimal amounts converted exactly, "Expires after" fills expires', async () => {
      await load(custom('custody-withdraw', { operation: 'create', company_id: 'c1', amountFormat: 'decimal', expiresAfter: '600' }), creds);
      const w = await ok({ payload: { wallet_id: 'w1', address: 'addr', benefit_of: '', account_no: '', reference: 'r', partner_txID: 'p-1', send: { symbol: 'BTC-TESTNET', amount: '0.015' } } });
      assert.equal(w.statusCode, 200);
      const wb = JSON.parse(sent()[0].body);
      assert.deepEqual(wb.send, { symbol: 'BTC-TESTNET', amount: 1500000 });
      assert.ok(wb.expires >= now() + 590 && wb.expires <= now() + 610, 'expires = now + 600');
      const tooFine = await refused({ payload: { wallet_id: 'w1', address: 'addr', benefit_of: '', account_no: '', reference: 'r', partner_txID: 'p-2', send: { symbol: 'BTC-TESTNET', amount: '0.000000001' } } });
      assert.match(tooFine.error.message, /send\.amount: at most 8 decimal places/);
      // A JS number past 15 significant digits may not be what was typed: refused, never converted.
      const inexact = await refused({ payload: { wallet_id: 'w1', address: 'addr', benefit_of: '', account_no: '', reference: 'r', partner_txID: 'p-3', send: { symbol: 'ETH-TESTNET', amount: 8999999.999999999 } } });
      assert.match(inexact.error.message, /send\.amount: a number with more than 15 significant digits/);
      const exactNumber = await ok({ payload: { wallet_id: 'w1', address: 'addr', benefit_of: '', account_no: '', reference: 'r', partner_txID: 'p-4', send: { symbol: 'BTC-TESTNET', amount: 0.015 } } });
      assert.equal(exactNumber.statusCode, 200);
      assert.deepEqual(JSON.parse(sent()[1].body).send, { symbol: 'BTC-TESTNET', amount: 1500000 }, 'a short number converts as typed');
      await helper.unload();

      await load(custom('custody-swap-make', { operation: 'make', company_id: 'c1', amountFormat: 'decimal', expiresAfter: '300' }), creds);
      await ok({ payload: { send_wallet_id: 'a', receive_wallet_id: 'b', reference: 'r', partner_txID: 'm-1', send: { symbol: 'BTC-TESTNET', amount: '0.001' }, receive: { symbol: 'ETH-TESTNET', amount: '0.5' }, add_to_liquidity_hub: true } });
      const mb = JSON.parse(sent()[2].body);
      assert.deepEqual([mb.send, mb.receive, mb.add_to_liquidity_hub], [{ symbol: 'BTC-TESTNET', amount: 100000 }, { symbol: 'ETH-TESTNET', amount: 500000000 }, true]);
      assert.equal(sent()[2].url, '/api/v1/p/company/c1/atomicswap/make');
    });

    it('sweep status posts to the literal .../sweep/tx_id with the tx_id in the body; fund ledger sends the editor direction', async () => {
      await load(custom('custody-sweep', { operation: 'status', client_id: 'cc1', tx_id: 'sw-1' }), creds);
      await ok({});
      await helper.unload();
      await load(custom('custody-fund', { operation: 'ledger', company_id: 'c1', fund_id: 'f1', direction: 'out' }), creds);
      await ok({ payload: { asset: 'BTC-TESTNET' } });
      assert.deepEqual(
        seen.map((s) => `${s.method} ${s.url} ${s.body}`),
        // The ledger's asset filter is checked against GET /assets first (a new connection: one GET).
        ['POST /api/v1/p/coreclient/cc1/sweep/tx_id {"tx_id":"sw-1"}', 'GET /api/v1/p/assets ', 'GET /api/v1/p/company/c1/fund/f1/ledger?asset=BTC-TESTNET&direction=out '],
      );
    });

    it('custody-request refuses paths that escape the base URL, bad methods and bodies, before sending', async () => {
      const cases: Array<[Record<string, unknown>, Record<string, unknown>, RegExp]> = [
        [{ method: 'GET', path: '' }, { path: 'https://evil.example/api/v1/p/assets' }, /path: must be relative to the base URL/],
        [{ method: 'GET', path: '' }, { path: '//evil.example/x' }, /path: must be relative/],
        [{ method: 'GET', path: '' }, { path: '/../../admin' }, /path: must not have "\." or "\.\." segments/],
        [{ method: 'GET', path: '' }, { path: '/company/%2e%2e/%2e%2e/x' }, /path: must not hide/],
        [{ method: 'GET', path: '' }, { path: 'company/abc' }, /path: must start with/],
        [{ method: 'GET', path: '' }, {}, /path: required/],
        [{ method: '', path: '/assets' }, {}, /method: required/],
        [{ method: '', path: '/assets' }, { method: 'PATCH' }, /method: must be one of/],
        [{ method: 'POST', path: '/company' }, { payload: 1700000000 }, /payload: the POST body must be a JSON object or array/],
      ];
      for (const [props, msg, expected] of cases) {
        await load(custom('custody-request', props), creds);
        const caught = await refused(msg);
        assert.equal(caught.error.code, 'EINPUT', String(expected));
        assert.match(caught.error.message, expected);
        await helper.unload();
      }
      assert.equal(seen.length, 0, 'nothing was sent');
    });

    it('custody-request: editor wins over msg.method/msg.path; POST sends msg.payload, GET none; only GET is retried', async () => {
      await load(custom('custody-request', { method: 'GET', path: '/company/c1/holding?x=1' }), creds);
      const got = await ok({ method: 'DELETE', path: '/elsewhere', payload: { ignored: true } });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.payload, { tx_id: 'counted', status: 'new' });
      await helper.unload();
      await load(custom('custody-request', { method: '', path: '' }), creds);
      await ok({ method: 'post', path: '/company', payload: { name: 'X' } });
      await ok({ method: 'PUT', path: '/coreclient/cc1/action/a1' });
      await helper.unload();
      // (a path no typed node covers: POST /company without a body is refused, name required)
      await load(custom('custody-request', { method: 'POST', path: '/company/c1/custom', body: 'none' }), creds);
      await ok({ payload: { name: 'not sent' } });
      assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.body}`), [
        'GET /api/v1/p/company/c1/holding?x=1 ',
        'POST /api/v1/p/company {"name":"X"}',
        'PUT /api/v1/p/coreclient/cc1/action/a1 ',
        'POST /api/v1/p/company/c1/custom ',
      ]);
      await helper.unload();

      server.status = 503;
      for (const [method, attempts] of [['GET', 3], ['POST', 1]] as const) {
        seen.length = 0;
        await load(custom('custody-request', { method, path: '/x' }), creds);
        const caught = await refused({ payload: {} });
        assert.equal(caught.statusCode, 503);
        assert.equal(seen.length, attempts, `${method}: ${attempts} attempt(s)`);
        assert.ok(!JSON.stringify(caught).includes(apiKey), 'no API key on the msg');
        await helper.unload();
      }
    });
    it('custody-request with typed fields: method from a msg property, path from JSONata or flow context, body JSON, a msg property or none', async () => {
      await load(custom('custody-request', { method: 'req.verb', methodType: 'msg', path: '"/company/" & payload.c & "/custom"', pathType: 'jsonata', body: '{"name":"fixed"}', bodyType: 'json' }), creds);
      await ok({ req: { verb: 'POST' }, payload: { c: 'c1' } });
      await helper.unload();
      await load(custom('custody-request', { method: 'PUT', methodType: 'str', path: 'target', pathType: 'flow', body: 'payload.inner', bodyType: 'msg' }), creds);
      (helper.getNode('op') as any).context().flow.set('target', '/coreclient/cc1/action/a2');
      await ok({ payload: { inner: { note: 'inner' }, outer: true } });
      await helper.unload();
      await load(custom('custody-request', { method: 'POST', methodType: 'str', path: '/company/c1/custom', pathType: 'str', body: '', bodyType: 'none' }), creds);
      await ok({ payload: { name: 'not sent' } });
      assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.body}`), [
        'POST /api/v1/p/company/c1/custom {"name":"fixed"}',
        'PUT /api/v1/p/coreclient/cc1/action/a2 {"note":"inner"}',
        'POST /api/v1/p/company/c1/custom ',
      ]);
      await helper.unload();
      seen.length = 0;
      for (const [props, message] of [
        [{ method: 'req.verb', methodType: 'msg', path: '/x', pathType: 'str' }, /method: required/],
        [{ method: 'GET', methodType: 'str', path: 'payload.missing', pathType: 'msg' }, /path: msg\.payload\.missing is not set/],
        [{ method: 'POST', methodType: 'str', path: '/company', pathType: 'str', body: 'payload.(', bodyType: 'jsonata' }, /body: JSONata .* does not parse/],
      ] as const) {
        await load(custom('custody-request', props), creds);
        const caught = await refused({ payload: {} });
        assert.match(caught.error.message, message);
        await helper.unload();
      }
      assert.equal(seen.length, 0, 'nothing sent for refused input');
    });
  });

  describe('against the simulator', () => {
    /** A custodian's approval, as a core client (the setup steps these tests do not exercise through nodes). */
    async function approveAsCoreClient(clientId: string, txId: string, type: string): Promise<void> {
      const client = accountClient(sim);
      try {
        for (const a of (await listActions(client, { client_id: clientId })).data.actions.filter((x) => x.type === type)) {
          if ((await getAction(client, { client_id: clientId, action_id: a.id })).data.details?.txID === txId) {
            await approveAction(client, { client_id: clientId, action_id: a.id });
            return;
          }
        }
        throw new Error(`no pending ${type} action of ${clientId} for ${txId}`);
      } finally {
        client.close();
      }
    }

    it('flow through the nodes: make with add_to_liquidity_hub, take, approve take, read', async () => {
      const demo = sim.demo;
      const maker = sim.demo.company_id;
      await load(operationFlow('custody-swap-make', { operation: 'make', company_id: maker, amountFormat: 'decimal', expiresAfter: '600' }));
      const made = await ok({ payload: { send_wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, receive_wallet_id: sim.demo.wallets['ETH-TESTNET'].wallet_id, reference: 'node flow', partner_txID: unique('nsf'), send: { symbol: 'BTC-TESTNET', amount: '0.0002' }, receive: { symbol: 'ETH-TESTNET', amount: '0.03' }, add_to_liquidity_hub: true } });
      await helper.unload();
      await approveAsCoreClient(sim.demo.core_client_id, made.payload.tx_id, 'ApproveSwap');
      await load(operationFlow('custody-liquidity-hub', { operation: 'list', company_id: demo.taker.company_id }));
      const item = (await ok({})).payload.items.find((i: { tx_id: string }) => i.tx_id === made.payload.tx_id);
      assert.deepEqual([item?.send_amount, item?.receive_amount], [20000, 30000000], 'published at approval, decimal amounts converted');
      await helper.unload();
      await load(operationFlow('custody-swap-take', { operation: 'take', company_id: demo.taker.company_id, swap_id: made.payload.tx_id }));
      const taken = await ok({ payload: { send_wallet_id: demo.taker.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: demo.taker.wallets['BTC-TESTNET'].wallet_id, reference: 'take', partner_txID: unique('ntk') } });
      await helper.unload();
      await load(operationFlow('custody-liquidity-hub', { operation: 'approveTake', company_id: demo.taker.company_id }));
      await ok({ payload: { action_id: taken.payload.action_id } });
      await helper.unload();
      await approveAsCoreClient(demo.taker.core_client_id, taken.payload.tx_id, 'ApproveSwapTake');
      await load(operationFlow('custody-swap-take', { operation: 'get', company_id: demo.taker.company_id, tx_id: taken.payload.tx_id }));
      assert.equal((await ok({})).payload.txStatus, 'approved_swap_take');
    });

    it('flow through the nodes: a wallet connection request approved with custody-action, a sweep and its status', async () => {
      const demo = sim.demo;
      const clientId = demo.exchange.client_id;
      const walletId = demo.exchange.wallets['BTC-TESTNET'].wallet_id;
      const request = await control(sim, '/exchange/connect-request', { client_id: clientId, wallet_id: walletId, customer_email: 'eve@exchange.example', customer_id: 'cust-2' });
      await load(operationFlow('custody-action', { operation: 'approve', client_id: clientId }));
      assert.deepEqual((await ok({ payload: { action_id: request.action_id } })).payload, { code: 200, msg: 'OK', action_id: request.action_id, client_id: clientId });
      await helper.unload();
      await load(operationFlow('custody-core-client', { operation: 'wallets', client_id: clientId }));
      assert.ok((await ok({})).payload.wallets.some((w: { wallet_id: string; status: string }) => w.wallet_id === walletId && w.status === 'approved'));
      await helper.unload();
      await load(operationFlow('custody-sweep', { operation: 'start', client_id: clientId, wallet_id: walletId, recipient_wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, amountFormat: 'decimal', expiresAfter: '600' }));
      const swept = await ok({ payload: { reference: 'node sweep', partner_txID: 'node-sweep-1', send: { symbol: 'BTC-TESTNET', amount: '0.00002' } } });
      await helper.unload();
      await load(operationFlow('custody-sweep', { operation: 'status', client_id: clientId }));
      const status = await ok({ payload: { tx_id: swept.payload.tx_id } });
      assert.equal(status.payload.status_details.net_amount, 2000);
    });

    it('custody-fund reads holdings, deposit addresses and the ledger filtered from the editor', async () => {
      const { company_id, fund_id } = sim.demo;
      await load(operationFlow('custody-fund', { operation: 'holdings', company_id }));
      const holdings = await ok({});
      assert.ok(holdings.payload.holdings.some((h: { code: string }) => h.code === 'BTC-TESTNET'));
      await helper.unload();
      await load(operationFlow('custody-fund', { operation: 'deposits', company_id, fund_id }));
      const deposits = await ok({});
      assert.equal(deposits.payload.total_count, deposits.payload.list.length);
      await helper.unload();
      await load(operationFlow('custody-fund', { operation: 'ledger', company_id, fund_id, direction: 'in' }));
      const ledger = await ok({ payload: { direction: 'out' } });
      assert.ok(ledger.payload.List.length > 0 && ledger.payload.List.every((e: { type: string }) => e.type !== 'transferOut'), 'the editor direction wins');
    });

    it('custody-trusted-party adds, lists and removes a core client party', async () => {
      const company_id = sim.demo.company_id;
      await load(operationFlow('custody-core-client', { operation: 'create' }));
      const cc = (await ok({ payload: { name: unique('party') } })).payload;
      await helper.unload();
      await load(operationFlow('custody-trusted-party', { operation: 'add', company_id }));
      await ok({ payload: { address: cc.id, type: 'core-client', name: 'to remove' } });
      await helper.unload();
      await load(operationFlow('custody-trusted-party', { operation: 'list', company_id }));
      const party = (await ok({})).payload.list.find((p: { address: string }) => p.address === cc.id);
      assert.ok(party, 'listed after add');
      await helper.unload();
      await load(operationFlow('custody-trusted-party', { operation: 'remove', company_id }));
      assert.equal((await ok({ payload: { trustedparty_id: party.trusted_entity_id } })).statusCode, 200);
      await helper.unload();
      await load(operationFlow('custody-trusted-party', { operation: 'list', company_id }));
      assert.ok(!(await ok({})).payload.list.some((p: { address: string }) => p.address === cc.id), 'gone after remove');
    });

    it('custody-request calls the simulator signed, and an API error reaches the Catch node', async () => {
      await load(operationFlow('custody-request', { method: 'GET', path: '/assets' }));
      const assets = await ok({});
      assert.ok(assets.payload.assets.some((a: { code: string }) => a.code === 'BTC-TESTNET'));
      await helper.unload();
      await load(operationFlow('custody-request', { method: '', path: '' }));
      const company = await ok({ method: 'POST', path: '/company', payload: { name: 'Request Node GmbH' } });
      assert.ok(company.payload.company_id);
      const missing = await refused({ method: 'GET', path: `/company/${company.payload.company_id}/transfer/nope` });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.error.cause.statusCode, 404);
    });

    it('custody-read with the simulator\'s read-only key (config v1 API key)', async () => {
      await load(operationFlow('custody-read', { operation: 'fund', fund_id: sim.demo.fund_id }, { simulatorV1Key: 'readOnly' }));
      const r = await send({});
      assert.ok(r.out, JSON.stringify(r.caught?.error));
      assert.equal(r.out.statusCode, 200);
      await helper.unload();
      for (const [operation, props, check] of [
        ['account', {}, (p: any) => typeof p === 'object'],
        ['balance', {}, (p: any) => typeof p === 'object'],
        ['funds', {}, (p: any) => typeof p === 'object'],
        ['fundLedger', { fund_id: sim.demo.fund_id, direction: 'in' }, (p: any) => p.List.length > 0 && p.List.every((e: { type: string }) => e.type !== 'transferOut')],
        ['walletHistory', { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id }, (p: any) => typeof p === 'object'],
      ] as const) {
        await load(operationFlow('custody-read', { operation, ...props }, { simulatorV1Key: 'readOnly' }));
        const read = await ok({});
        assert.ok(check(read.payload), `${operation}: ${JSON.stringify(read.payload).slice(0, 200)}`);
        await helper.unload();
      }
      await load(operationFlow('custody-fund', { operation: 'addWhitelist', company_id: sim.demo.company_id, fund_id: sim.demo.fund_id }, { simulatorV1Key: 'readOnly' }));
      const denied = await refused({ payload: { name: 'not allowed', asset: 'BTC-TESTNET', address: 'tb1qreadonlynotallowed' } });
      assert.equal(denied.statusCode, 403, 'a write with the read-only key');
    });

    it('custody-withdraw: whitelist, withdraw with decimal amount, read', async () => {
      const { company_id, fund_id } = sim.demo;
      const address = `tb1qnodesv1whitelist${++seq}`;
      await load(operationFlow('custody-fund', { operation: 'addWhitelist', company_id, fund_id }));
      const wl = await send({ payload: { name: 'cold', asset: 'BTC-TESTNET', address } });
      assert.ok(wl.out, JSON.stringify(wl.caught?.error));
      await helper.unload();
      await load(operationFlow('custody-withdraw', { operation: 'create', company_id, amountFormat: 'decimal', expiresAfter: '600' }));
      const request = { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, address, benefit_of: '', account_no: '', reference: 'node withdraw', partner_txID: unique('nwd'), send: { symbol: 'BTC-TESTNET', amount: '0.0001' } };
      const first = await ok({ payload: request });
      const again = await ok({ payload: request });
      assert.equal(again.payload.tx_id, first.payload.tx_id);
      await helper.unload();
      await load(operationFlow('custody-withdraw', { operation: 'get', company_id }));
      const tx = await ok({ payload: { tx_id: first.payload.tx_id } });
      assert.equal(tx.payload.statusDetails.amount - tx.payload.statusDetails.fees, 10000);
    });

    it('custody-swap-make, custody-liquidity-hub and custody-sweep answer from the simulator', async () => {
      const { company_id } = sim.demo;
      await load(operationFlow('custody-swap-make', { operation: 'make', company_id, amountFormat: 'decimal' }));
      const made = await send({ payload: { send_wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, receive_wallet_id: sim.demo.wallets['ETH-TESTNET'].wallet_id, expires: now() + 600, reference: 'node swap', partner_txID: unique('nmk'), send: { symbol: 'BTC-TESTNET', amount: '0.00001' }, receive: { symbol: 'ETH-TESTNET', amount: '0.001' } } });
      assert.ok(made.out, JSON.stringify(made.caught?.error));
      assert.equal(made.out.payload.status, 'new');
      await helper.unload();
      await load(operationFlow('custody-swap-make', { operation: 'get', company_id, tx_id: made.out.payload.tx_id }));
      assert.equal((await ok({})).statusCode, 200);
      await helper.unload();
      await load(operationFlow('custody-liquidity-hub', { operation: 'list', company_id }));
      assert.ok(Array.isArray((await ok({})).payload.items));
      await helper.unload();
      await load(operationFlow('custody-swap-take', { operation: 'get', company_id }));
      assert.equal((await refused({ payload: { tx_id: 'no-such-take' } })).statusCode, 404);
      await helper.unload();
      await load(operationFlow('custody-sweep', { operation: 'exchanges' }));
      assert.ok(Array.isArray((await ok({})).payload.exchanges));
      await helper.unload();
      await load(operationFlow('custody-core-client', { operation: 'wallets', client_id: sim.demo.core_client_id }));
      assert.ok(Array.isArray((await ok({})).payload.wallets));
    });
  });
});
