/**
 * Every node in the real Node-RED runtime (node-red-node-test-helper) against the in-process
 * simulator: outputs, errors reaching a Catch node, bad input refused before any request,
 * and nothing secret on a msg.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { until, control, demoTransfer } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting, sendAndWait } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useCountingServer, useRedRuntime } from '../helpers/red-setup';
import { CustodyClient, createTransfer } from '../../lib';

const dataDir = simulatorDataDir('cf-nodes-');
const nodeModules = redNodes([
  'custody-config', 'custody-assets', 'custody-company', 'custody-trusted-party', 'custody-fund',
  'custody-transfer', 'custody-core-client', 'custody-action', 'custody-coreclient-feed',
]);

/**
 * Give every flow node a position: Node-RED treats a node without `x`/`y` as a config node
 * (and a config node whose property equals its own id as a circular dependency).
 */
function placed(nodes: object[]): object[] {
  return nodes.map((n: any) => (n.type === 'tab' || n.type === 'custody-config' ? n : { x: 100, y: 100, ...n }));
}

/** A flow: one operation node `op` wired to helper `out`, and a Catch node wired to helper `caught`. */
function opFlow(type: string, props: Record<string, unknown>, extra: object[] = []): object[] {
  return placed([
    TAB,
    { ...CONFIG, z: 'tab' },
    { id: 'op', z: 'tab', type, connection: 'cfg', wires: [['out']], ...props },
    { id: 'out', z: 'tab', type: 'helper' },
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', z: 'tab', type: 'helper' },
    ...extra,
  ]);
}

/** Every msg each helper node received since the flow was loaded, by helper node id. */
const inbox: Inbox = new Map();

/** Load a flow and start collecting what its helper nodes receive. */
async function load(flow: object[], credentials?: object): Promise<void> {
  await loadCollecting(nodeModules, flow, credentials ?? {}, inbox);
}

/** Send `payload` into node `id` and resolve with its output msg (at helper `out`), or reject with the msg the Catch node got. */
async function call(payload: unknown, id = 'op'): Promise<any> {
  const { out, caught } = await sendAndWait(inbox, { payload }, id);
  if (caught) throw Object.assign(new Error('caught: ' + caught.error?.message), { caught });
  return out;
}

/** Send `payload` into node `op` and resolve with the msg that reached the Catch node; reject if the node sent output. */
async function callExpectingError(payload: unknown): Promise<any> {
  const { out, caught } = await sendAndWait(inbox, { payload }, 'op', 'an error at the Catch node');
  if (out) throw new Error('expected an error, got output ' + JSON.stringify(out.payload));
  return caught;
}

describe('nodes in the Node-RED runtime', function () {
  this.timeout(60000);
  let sim: Simulator;
  const now = () => Math.floor(Date.now() / 1000);

  const simulator = useRedRuntime(dataDir);
  before(() => {
    sim = simulator();
  });

  it('custody-assets lists assets and quotes a fee from a decimal amount, exactly', async () => {
    await load(opFlow('custody-assets', { operation: 'assets' }));
    const list = await call(undefined);
    assert.equal(list.statusCode, 200);
    assert.ok(list.payload.assets.some((a: { code: string; scale: number }) => a.code === 'ETH-TESTNET' && a.scale === 1e9));
    await helper.unload();

    await load(opFlow('custody-assets', { operation: 'fee', feeType: 'transferOut', amountFormat: 'decimal' }));
    const fee = await call({ asset: 'BTC-TESTNET', amount: '0.015' });
    // Asked in decimals, answered in decimals too, beside the base units.
    assert.deepEqual(fee.payload, { netAmount: 1500000, fees: 15, amountToSend: 1500015, netAmount_decimal: '0.015', fees_decimal: '0.00000015', amountToSend_decimal: '0.01500015' });
    const refused = await callExpectingError({ asset: 'BTC-TESTNET', amount: '0.000000001' });
    assert.equal(refused.error.code, 'EINPUT');
    assert.match(refused.error.message, /amount: at most 8 decimal places/);
  });

  it('custody-company creates, reads, updates and searches', async () => {
    await load(opFlow('custody-company', { operation: 'create' }));
    const created = await call({ name: 'Node Test Holdings', country: 'DE' });
    const company_id = created.payload.company_id;
    assert.ok(company_id);
    await helper.unload();
    await load(opFlow('custody-company', { operation: 'update' }));
    await call({ company_id, city: 'Berlin' });
    await helper.unload();
    await load(opFlow('custody-company', { operation: 'get', company_id }));
    const read = await call({ company_id: 'ignored-because-the-editor-field-wins' });
    assert.equal(read.payload.city, 'Berlin');
    await helper.unload();
    await load(opFlow('custody-company', { operation: 'search', query: 'Nod' }));
    assert.ok((await call({})).payload.matches.some((m: { company_id: string }) => m.company_id === company_id));
  });

  it('custody-trusted-party adds and lists; custody-core-client creates, lists and reads actions', async () => {
    await load(opFlow('custody-core-client', { operation: 'create' }));
    const cc = (await call({ name: 'Node approver' })).payload;
    await helper.unload();
    await load(opFlow('custody-trusted-party', { operation: 'add', company_id: sim.demo.company_id }));
    const added = await call({ address: cc.id, type: 'core-client', name: 'Node approver' });
    assert.equal(added.statusCode, 200);
    await helper.unload();
    await load(opFlow('custody-trusted-party', { operation: 'list' }));
    const list = await call({ company_id: sim.demo.company_id });
    assert.ok(list.payload.list.some((p: { trusted_entity_id: string }) => p.trusted_entity_id === cc.id));
    await helper.unload();
    await load(opFlow('custody-core-client', { operation: 'list', company_id: sim.demo.company_id }));
    assert.ok((await call({})).payload.clients.some((c: { id: string }) => c.id === cc.id));
    await helper.unload();
    await load(opFlow('custody-core-client', { operation: 'actions' }));
    const actions = await call({ client_id: cc.id });
    assert.deepEqual(actions.payload, { count: 0, actions: [] });
  });

  it('custody-fund creates a fund, adds a wallet, reads both', async () => {
    await load(opFlow('custody-fund', { operation: 'createFund', company_id: sim.demo.company_id }));
    const group = { threshold: 1, members: [sim.demo.core_client_id] };
    const fund = (await call({ name: 'Node fund', custodygroup_withdraw: group, custodygroup_tx: group })).payload;
    assert.ok(fund.fund_id);
    await helper.unload();
    await load(opFlow('custody-fund', { operation: 'addWallet', company_id: sim.demo.company_id, fund_id: fund.fund_id }));
    const wallets = (await call({ wallets: [{ name: 'Node ETH', asset: 'ETH-TESTNET' }] })).payload.wallets;
    assert.equal(wallets.length, 1);
    await helper.unload();
    await load(opFlow('custody-fund', { operation: 'getFund' }));
    const detail = (await call({ company_id: sim.demo.company_id, fund_id: fund.fund_id })).payload;
    assert.equal(detail.wallets[0].wallet_id, wallets[0]);
    await helper.unload();
    await load(opFlow('custody-fund', { operation: 'getWallet' }));
    const wallet = (await call({ wallet_id: detail.wallets[0].short_code })).payload;
    assert.equal(wallet.wallet_id, wallets[0]);
    assert.equal(wallet.asset, 'ETH-TESTNET');
  });

  it('custody-coreclient-feed -> custody-action approves a transfer made by custody-transfer', async () => {
    const flow = [
      TAB,
      { ...CONFIG, z: 'tab' },
      { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: sim.demo.core_client_id, details: true, wires: [['approve', 'seen']] },
      { id: 'seen', z: 'tab', type: 'helper' },
      { id: 'approve', z: 'tab', type: 'custody-action', connection: 'cfg', operation: 'approve', wires: [['approved']] },
      { id: 'approved', z: 'tab', type: 'helper' },
      { id: 'op', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', company_id: sim.demo.company_id, amountFormat: 'decimal', expiresAfter: '600', wires: [['out']] },
      { id: 'out', z: 'tab', type: 'helper' },
      { id: 'get', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'get', company_id: sim.demo.company_id, wires: [['got']] },
      { id: 'got', z: 'tab', type: 'helper' },
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', z: 'tab', type: 'helper' },
    ];
    await load(placed(flow));
    const partner_txID = `node-test-${Date.now()}`;
    const seen = inbox.get('seen')!;
    const approved = inbox.get('approved')!;
    const request = {
      wallet_id: sim.demo.wallets['ETH-TESTNET'].short_code,
      counterparty_wallet_address: sim.demo.counterparty.wallets['ETH-TESTNET'].wallet_id,
      benefit_of: 'Node test',
      account_no: 'N-1',
      reference: 'feed to action',
      partner_txID,
      send: { symbol: 'ETH-TESTNET', amount: '0.25' },
    };
    const created = await call(request);
    assert.equal(created.payload.status, 'new');
    const tx_id = created.payload.tx_id;
    const action = await until(() => seen.find((m) => m.payload.details?.txID === tx_id), 'the feed to send the action of the transfer');
    assert.equal(action.topic, 'ApproveTransfer');
    assert.equal(action.payload.client_id, sim.demo.core_client_id);
    assert.equal(action.payload.action_id, action.payload.id);
    assert.equal(action.payload.details.netAmount, 250000000, '0.25 ETH-TESTNET at scale 1e9');
    const ok = await until(() => approved[0], 'custody-action to approve');
    assert.deepEqual(ok.payload, { code: 200, msg: 'OK', action_id: action.payload.action_id, client_id: sim.demo.core_client_id });
    let status = '';
    for (let i = 0; i < 50 && status !== 'approved_transfer'; i++) {
      const got = inbox.get('got')!;
      const n = got.length;
      helper.getNode('get').receive({ payload: { tx_id } });
      status = (await until(() => got[n], 'the transfer')).payload.txStatus;
    }
    assert.equal(status, 'approved_transfer');
    // The same request sent again (a retry) is the same transfer: `existing`, the original tx_id.
    const again = await call(request);
    assert.deepEqual(again.payload, { tx_id, status: 'existing' });
    assert.equal(again.outcome, 'existing');
    // The journal compares requests as written: the wallet named by id instead of short code is
    // another request under the same key, refused before sending, naming the field.
    const renamed = await call({ ...request, wallet_id: sim.demo.wallets['ETH-TESTNET'].wallet_id }).then(
      () => assert.fail('a changed request under a used partner_txID was sent'),
      (e) => e.caught,
    );
    assert.equal(renamed.error.code, 'ECONFLICT');
    assert.match(renamed.error.message, /partner_txID: "node-test-\d+" was already used for another transfer \(wallet_id differs\)/);
    assert.equal(renamed.outcome, 'notSent');
  });

  it('custody-coreclient-feed reads a failed action detail again and sends the action once', async function () {
    this.timeout(40000);
    const flow = placed([
      TAB,
      { ...CONFIG, z: 'tab' },
      { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: sim.demo.manual.core_client_id, details: true, wires: [['seen']] },
      { id: 'seen', z: 'tab', type: 'helper' },
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', z: 'tab', type: 'helper' },
    ]);
    await load(flow);
    const seen = inbox.get('seen')!;
    const caught = inbox.get('caught')!;
    await until(() => (helper.getNode('feed') ? true : undefined), 'the feed node');
    await new Promise((r) => setTimeout(r, 300)); // connected
    // The next three reads of an action fail with 503: the client's three attempts of one read.
    await control(sim, '/faults/http', { method: 'GET', path: '/action/', status: 503, count: 3 });
    const client = accountClient(sim);
    const { tx_id } = (
      await createTransfer(
        client,
        demoTransfer(sim, { wallet_id: sim.demo.manual.wallets['BTC-TESTNET'].wallet_id, reference: 'details retry', send: { symbol: 'BTC-TESTNET', amount: 1000 } }),
      )
    ).data;
    client.close();
    const error = await until(() => caught[0], 'the failed read at the Catch node');
    assert.match(error.error.message, /details could not be read: .*503/);
    assert.equal(seen.length, 0, 'not sent without its details');
    const sent = await until(() => seen.find((m) => m.payload.details?.txID === tx_id), 'the action after the second read', 20000);
    assert.equal(sent.payload.status, 'pending');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(seen.filter((m) => m.payload.id === sent.payload.id).length, 1, 'sent once');
  });

  it('status: a red ring stays after a burst in which one request failed', async () => {
    await load(opFlow('custody-transfer', { operation: 'get', company_id: sim.demo.company_id }));
    const statuses: Array<{ fill?: string; shape?: string }> = [];
    helper.getNode('op').on('call:status', (c: { args: [{ fill?: string; shape?: string }] }) => statuses.push(c.args[0]));
    const client = accountClient(sim);
    const tx = await createTransfer(client, demoTransfer(sim, { reference: 'status burst', send: { symbol: 'BTC-TESTNET', amount: 1000 } }));
    client.close();
    const out = inbox.get('out')!;
    const caught = inbox.get('caught')!;
    // A good read (a network round trip) and, while it is in flight, a bad id (refused at once).
    helper.getNode('op').receive({ payload: { tx_id: tx.data.tx_id } });
    helper.getNode('op').receive({ payload: { tx_id: '..' } });
    await until(() => (out.length === 1 && caught.length === 1 ? true : undefined), 'both msgs');
    await new Promise((r) => setTimeout(r, 100));
    const shown = statuses.filter((st) => st.fill);
    assert.deepEqual(shown[0], { fill: 'blue', shape: 'dot', text: 'requesting' });
    assert.equal(shown[shown.length - 1].fill, 'red', `last status ${JSON.stringify(shown[shown.length - 1])}`);
    assert.ok(!shown.some((st) => st.fill === 'green'), 'no green for a burst with a failure');
  });

  it('an API error reaches a Catch node with message, code, cause and msg.statusCode', async () => {
    await load(opFlow('custody-transfer', { operation: 'get', company_id: sim.demo.company_id }));
    const caught = await callExpectingError({ tx_id: 'no-such-transaction' });
    assert.equal(caught.statusCode, 404);
    assert.equal(caught.error.source.id, 'op');
    assert.match(caught.error.message, /GET \/company\/.+\/transfer\/no-such-transaction: 404/);
    assert.equal(caught.error.cause.statusCode, 404);
    assert.equal(caught.error.code, caught.error.cause.code);
    assert.equal(typeof caught.error.cause.msg, 'string');
    assert.ok(!JSON.stringify(caught).includes(sim.account.apiKey), 'no API key on the msg');
  });

  describe('against a counting server (nothing may be sent)', () => {
    const server = new CountingServer();
    const { apiKey, pem } = useCountingServer(server);

    function customFlow(props: Record<string, unknown>): object[] {
      const flow = opFlow('custody-transfer', props);
      flow[1] = { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: server.baseUrl };
      return flow;
    }

    const good = () => ({
      wallet_id: 'w1',
      counterparty_wallet_address: 'w2',
      expires: now() + 600,
      benefit_of: 'b',
      account_no: 'a',
      reference: 'r',
      partner_txID: 'p-1',
      send: { symbol: 'BTC-TESTNET', amount: 1000 },
    });

    it('refuses bad input before any request, naming the field', async () => {
      await load(customFlow({ operation: 'create', company_id: 'c1' }), { cfg: { apiKey, privateKey: pem } });
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ ...good(), partner_txID: undefined }, /partner_txID: required/],
        [{ ...good(), send: { symbol: 'BTC-TESTNET', amount: '1000' } }, /send\.amount: must be integer/],
        [{ ...good(), send: { symbol: 'BTC-TESTNET', amount: 0 } }, /send\.amount/],
        [{ ...good(), expires: 'tomorrow' }, /expires: must be integer/],
        [{ ...good(), wallet_id: '' }, /wallet_id/],
      ];
      for (const [payload, expected] of cases) {
        const caught = await callExpectingError(payload);
        assert.equal(caught.error.code, 'EINPUT');
        assert.match(caught.error.message, expected);
      }
      assert.equal(server.requests, 0, 'nothing was sent');
      const sent = await call({ ...good(), note: 'not an API field', send: { symbol: 'BTC-TESTNET', amount: 1000, memo: 'nor this' } });
      assert.equal(sent.payload.tx_id, 'counted');
      // The transfer, after the connection's one GET /assets (its asset code is checked first).
      assert.equal(server.requests, 2);
      assert.equal(server.assetRequests, 1);
      await until(() => server.sent()[0]?.body, 'the body');
      assert.deepEqual(Object.keys(JSON.parse(server.sent()[0].body)).sort(), ['account_no', 'benefit_of', 'counterparty_wallet_address', 'expires', 'partner_txID', 'reference', 'send', 'wallet_id']);
      assert.deepEqual(JSON.parse(server.sent()[0].body).send, { symbol: 'BTC-TESTNET', amount: 1000 }, 'only declared fields are sent, nested ones too');
      assert.ok(!JSON.stringify(sent).includes(apiKey), 'no API key on the msg');
      assert.ok(!JSON.stringify(sent).includes('PRIVATE KEY'), 'no private key on the msg');
    });

    it('with decimal amounts, refuses bad input before any request (not even GET /assets)', async () => {
      await load(customFlow({ operation: 'create', company_id: 'c1', amountFormat: 'decimal' }), { cfg: { apiKey, privateKey: pem } });
      const before = server.requests;
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ ...good(), partner_txID: undefined, send: { symbol: 'BTC-TESTNET', amount: '0.01' } }, /partner_txID: required/],
        [{ ...good(), send: { symbol: 'BTC-TESTNET', amount: '1e-8' } }, /send\.amount: a decimal number/],
        [{ ...good(), send: { symbol: 'BTC-TESTNET', amount: '-1' } }, /send\.amount: a decimal number/],
        [{ ...good(), send: { amount: '0.01' } }, /send\.symbol: required/],
      ];
      for (const [payload, expected] of cases) {
        const caught = await callExpectingError(payload);
        assert.equal(caught.error.code, 'EINPUT');
        assert.match(caught.error.message, expected);
      }
      assert.equal(server.requests, before, 'nothing was sent');
    });

    it('a feed on an unusable connection shows the error, not "retrying"', async () => {
      const flow = placed([
        TAB,
        { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: server.baseUrl },
        { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: 'cc1', details: true, wires: [[]] },
      ]);
      await helper.load(nodeModules, flow, { cfg: { apiKey } });
      const statuses: Array<{ fill?: string; shape?: string; text?: string }> = [];
      helper.getNode('feed').on('call:status', (c: { args: [{ fill?: string; shape?: string; text?: string }] }) => statuses.push(c.args[0]));
      const last = await until(() => statuses.find((s) => s.fill === 'red' && /privateKey/.test(s.text ?? '')), 'a red status naming privateKey');
      assert.equal(last.shape, 'ring');
      assert.ok(!statuses.some((s) => /retrying/.test(s.text ?? '')));
    });

    it('refuses a configuration without credentials, or plain HTTP to a remote host, with ECONFIG', async () => {
      await load(customFlow({ operation: 'create', company_id: 'c1' }), { cfg: { apiKey } });
      let caught = await callExpectingError(good());
      assert.equal(caught.error.code, 'ECONFIG');
      assert.match(caught.error.message, /privateKey/);
      await helper.unload();
      const flow = customFlow({ operation: 'create', company_id: 'c1' });
      flow[1] = { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: 'http://custody.example.test/api/v1/p' };
      await load(flow, { cfg: { apiKey, privateKey: pem } });
      caught = await callExpectingError(good());
      assert.equal(caught.error.code, 'ECONFIG');
      assert.match(caught.error.message, /plain HTTP/);
      assert.ok(!JSON.stringify(caught).includes(apiKey));
      assert.equal(server.requests, 2, 'still only the GET /assets and the transfer of the first test');
    });
  });
});
