/**
 * The payment terms as typed fields (docs/nodes.md "The payment fields"): custody-transfer,
 * custody-withdraw, custody-swap-make and custody-sweep send a payment built from their editor
 * fields alone (`sendAsset`, `sendAmount`, `receiveAsset`, `receiveAmount`, `reference`,
 * `benefit_of`, `account_no`), in decimals or base units as the node's Amounts option says; a
 * field left empty is read from msg.payload as before; bad or missing input is refused naming
 * the request field before anything is sent. A fee quote asked in decimals answers in decimals
 * too. Real Node-RED (node-red-node-test-helper) against the simulator, every request seen
 * through a recording proxy.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { fromBaseUnits } from '../../lib';
import { Inbox, demoTransferFields, loadCollecting, sendAndWait, operationFlow, str, typedProps, type TypedValue } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { useRecordingProxy } from '../helpers/recording-proxy';
import { uniqueId, transferRequest, bodyOf } from '../helpers/requests';
import { control } from '../helpers/support';

const dataDir = simulatorDataDir('cf-payment-fields-');
const nodeModules = redNodes(['custody-config', 'custody-transfer', 'custody-withdraw', 'custody-swap-make', 'custody-sweep', 'custody-action', 'custody-assets'], []);

describe('payment fields: transfer, withdraw, swap make and sweep from typed fields', function () {
  this.timeout(60000);
  let sim: Simulator;
  const inbox: Inbox = new Map();
  let creds: object;
  const simulator = useRedRuntime(dataDir);
  const proxy = useRecordingProxy(simulator);

  before(() => {
    sim = simulator();
    creds = { cfg: { apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem } };
  });

  /** Load one node `op` of `type` whose config node reaches the simulator through the proxy. */
  async function load(type: string, props: Record<string, unknown>): Promise<void> {
    const v1 = new URL(sim.baseUrl);
    await loadCollecting(nodeModules, operationFlow(type, props, { environment: 'custom', baseUrl: proxy.origin + v1.pathname }), creds, inbox, ['out', 'caught']);
    proxy.seen.length = 0;
  }

  /** The one POST the node sent (the asset list it read is not counted). */
  function posted(): { path: string; body: any } {
    const posts = proxy.requests().filter((s) => s.method === 'POST');
    assert.equal(posts.length, 1, `one POST, got ${JSON.stringify(proxy.requests())}`);
    return posts[0];
  }

  /** Send `payload` into the node, which must not fail; its output msg and the one POST it sent. */
  async function sentPost(payload: unknown): Promise<{ out: any; post: { path: string; body: any } }> {
    const r = await sendAndWait(inbox, { payload });
    assert.equal(r.caught, undefined, r.caught?.error?.message);
    return { out: r.out, post: posted() };
  }

  it('a transfer from typed fields only (msg.payload has just an invoice number), decimal amount: the simulator gets the whole body', async () => {
    const demo = sim.demo;
    await load('custody-transfer', {
      operation: 'create',
      ...demoTransferFields(demo, { value: 'payload.amount', type: 'msg' }, { value: 'payload.invoice', type: 'msg' }),
      amountFormat: 'decimal',
      partnerTxId: 'invoice-{{payload.invoice}}',
      partnerTxIdType: 'template',
      expiresAfter: '3600',
    });
    const invoice = uniqueId('INV');
    const { out, post } = await sentPost({ invoice, amount: '0.015' });
    assert.equal(post.path, `/api/v1/p/company/${demo.company_id}/transfer`);
    const { expires, ...body } = post.body;
    assert.ok(Number.isInteger(expires) && expires > Date.now() / 1000, 'expires from Expires after');
    assert.deepEqual(body, {
      wallet_id: demo.wallets['BTC-TESTNET'].wallet_id,
      counterparty_wallet_address: demo.counterparty.wallets['BTC-TESTNET'].wallet_id,
      send: { symbol: 'BTC-TESTNET', amount: 1500000 },
      reference: invoice,
      benefit_of: 'Demo customer',
      account_no: 'ACC-001',
      partner_txID: `invoice-${invoice}`,
    });
    assert.equal(out.payload.status, 'new');
  });

  it('a withdrawal from typed fields with msg.payload = {}, base units: a num and a str amount are sent as integers', async () => {
    const demo = sim.demo;
    const base = {
      operation: 'create',
      ...typedProps({
        company_id: str(demo.company_id),
        wallet_id: str(demo.wallets['BTC-TESTNET'].wallet_id),
        address: str(demo.whitelist['BTC-TESTNET']),
        sendAsset: str('BTC-TESTNET'),
        reference: str('withdraw typed'),
        benefit_of: str('Demo customer'),
        account_no: str('ACC-002'),
      }),
      amountFormat: 'baseUnits',
      partnerTxIdType: 'str',
      expiresAfter: '600',
    };
    for (const sendAmount of [{ value: '1000', type: 'num' }, str('2000')]) {
      await load('custody-withdraw', { ...base, ...typedProps({ sendAmount }), partnerTxId: uniqueId('wd') });
      const { out, post } = await sentPost({});
      assert.equal(post.path, `/api/v1/p/company/${demo.company_id}/withdraw`);
      assert.deepEqual(post.body.send, { symbol: 'BTC-TESTNET', amount: Number(sendAmount.value) });
      assert.deepEqual([post.body.address, post.body.reference, post.body.benefit_of, post.body.account_no], [demo.whitelist['BTC-TESTNET'], 'withdraw typed', 'Demo customer', 'ACC-002']);
      await helper.unload();
    }
  });

  it('a swap quote from typed fields with msg.payload = {}, both amounts in decimals', async () => {
    const demo = sim.demo;
    await load('custody-swap-make', {
      operation: 'make',
      ...typedProps({
        company_id: str(demo.company_id),
        send_wallet_id: str(demo.wallets['BTC-TESTNET'].wallet_id),
        receive_wallet_id: str(demo.wallets['ETH-TESTNET'].wallet_id),
        sendAsset: str('BTC-TESTNET'),
        sendAmount: str('0.0002'),
        receiveAsset: str('ETH-TESTNET'),
        receiveAmount: { value: '0.03', type: 'num' },
        reference: str('swap typed'),
      }),
      amountFormat: 'decimal',
      partnerTxId: uniqueId('mk'),
      partnerTxIdType: 'str',
      expiresAfter: '600',
    });
    const { out, post } = await sentPost({});
    assert.equal(post.path, `/api/v1/p/company/${demo.company_id}/atomicswap/make`);
    assert.deepEqual([post.body.send, post.body.receive, post.body.reference], [{ symbol: 'BTC-TESTNET', amount: 20000 }, { symbol: 'ETH-TESTNET', amount: 30000000 }, 'swap typed']);
    assert.equal(out.payload.status, 'new');
  });

  it('a sweep from typed fields with msg.payload = {}, decimal amount', async () => {
    const demo = sim.demo;
    const clientId = demo.exchange.client_id;
    const walletId = demo.exchange.wallets['BTC-TESTNET'].wallet_id;
    const request = await control(sim, '/exchange/connect-request', { client_id: clientId, wallet_id: walletId, customer_email: 'fay@exchange.example', customer_id: 'cust-typed' });
    await load('custody-action', { operation: 'approve', client_id: clientId });
    assert.equal((await sendAndWait(inbox, { payload: { action_id: request.action_id } })).caught, undefined);
    await helper.unload();
    await load('custody-sweep', {
      operation: 'start',
      ...typedProps({
        client_id: str(clientId),
        wallet_id: str(walletId),
        recipient_wallet_id: str(demo.wallets['BTC-TESTNET'].wallet_id),
        sendAsset: str('BTC-TESTNET'),
        sendAmount: str('0.00003'),
        reference: str('sweep typed'),
      }),
      amountFormat: 'decimal',
      partnerTxId: uniqueId('sw'),
      partnerTxIdType: 'str',
      expiresAfter: '600',
    });
    const { out, post } = await sentPost({});
    assert.equal(post.path, `/api/v1/p/coreclient/${clientId}/sweep`);
    assert.deepEqual([post.body.send, post.body.reference, post.body.wallet_id], [{ symbol: 'BTC-TESTNET', amount: 3000 }, 'sweep typed', walletId]);
    assert.ok(out.payload.tx_id);
  });

  it('a field set in the node fills its part of send; the rest of msg.payload.send stays', async () => {
    const demo = sim.demo;
    await load('custody-transfer', {
      operation: 'create',
      ...typedProps({ company_id: str(demo.company_id), sendAsset: str('BTC-TESTNET'), sendAmount: str('') }),
      amountFormat: 'baseUnits',
    });
    const payload = bodyOf(transferRequest(demo, { send: { amount: 4000 } as never }));
    const { post } = await sentPost(payload);
    assert.deepEqual(post.body.send, { symbol: 'BTC-TESTNET', amount: 4000 });
  });

  it('a flow saved before the payment fields (no sendAsset, no reference properties) still reads them from msg.payload', async () => {
    const demo = sim.demo;
    await load('custody-transfer', { operation: 'create', company_id: demo.company_id, wallet_id: demo.wallets['BTC-TESTNET'].wallet_id, counterparty_wallet_address: demo.counterparty.wallets['BTC-TESTNET'].wallet_id, amountFormat: 'decimal' });
    const partner_txID = uniqueId('old');
    const { body } = (await sentPost({ expires: Math.floor(Date.now() / 1000) + 600, benefit_of: 'old b', account_no: 'old a', reference: 'old r', partner_txID, send: { symbol: 'BTC-TESTNET', amount: '0.00005' } })).post;
    assert.deepEqual([body.send, body.reference, body.benefit_of, body.account_no, body.partner_txID], [{ symbol: 'BTC-TESTNET', amount: 5000 }, 'old r', 'old b', 'old a', partner_txID]);
  });

  it('missing or bad payment input is refused naming the field, and no request is sent', async () => {
    const demo = sim.demo;
    const transfer = (fields: Record<string, TypedValue>, amountFormat: string) => ({
      operation: 'create',
      ...typedProps({
        company_id: str(demo.company_id),
        wallet_id: str(demo.wallets['BTC-TESTNET'].wallet_id),
        counterparty_wallet_address: str(demo.counterparty.wallets['BTC-TESTNET'].wallet_id),
        reference: str('r'),
        benefit_of: str('b'),
        account_no: str('a'),
        ...fields,
      }),
      amountFormat,
      partnerTxId: 'bad-input',
      partnerTxIdType: 'str',
      expiresAfter: '600',
    });
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, RegExp]> = [
      [transfer({ sendAmount: str('0.01') }, 'decimal'), {}, /: send\.symbol: required/],
      [transfer({ sendAsset: str('BTC-TESTNET') }, 'decimal'), {}, /: send\.amount: required/],
      [transfer({ sendAsset: str('BTC-TESTNET'), sendAmount: str('0.015') }, 'baseUnits'), {}, /: send\.amount: a whole number of base units/],
      [transfer({ sendAsset: str('BTC-TESTNET'), sendAmount: str('1,5') }, 'decimal'), {}, /: send\.amount: a decimal number/],
      [transfer({ sendAsset: str('BTC-TESTNET'), sendAmount: str('0.000000001') }, 'decimal'), {}, /: send\.amount: at most 8 decimal places/],
      [transfer({ sendAsset: str('BTC-TESTNET'), sendAmount: { value: 'payload.amount', type: 'msg' } }, 'decimal'), { amount: undefined }, /: send\.amount: msg\.payload\.amount is not set/],
      [transfer({ sendAsset: str('BTC-TESTNET'), sendAmount: str('1000'), benefit_of: str('') }, 'baseUnits'), {}, /: benefit_of: required/],
      [transfer({ sendAsset: str('BTC-TESTNET'), sendAmount: str('1000'), account_no: { value: 'ACCOUNT_UNSET_IN_TEST', type: 'env' } }, 'baseUnits'), {}, /: account_no: env ACCOUNT_UNSET_IN_TEST is (not set|empty)/],
    ];
    for (const [props, payload, message] of cases) {
      await load('custody-transfer', props);
      const r = await sendAndWait(inbox, { payload });
      assert.ok(r.caught, `${JSON.stringify(props)}: refused`);
      assert.equal(r.caught.error.code, 'EINPUT', r.caught.error.message);
      assert.match(r.caught.error.message, message);
      assert.deepEqual(proxy.requests(), [], `${r.caught.error.message}: nothing sent`);
      await helper.unload();
    }
  });

  it('a fee quote asked in decimals answers in decimals too, beside the base units fields', async () => {
    await load('custody-assets', { operation: 'fee', ...typedProps({ feeType: str('transferOut'), asset: str('BTC-TESTNET'), amount: str('0.01') }), amountFormat: 'decimal' });
    const { out, post } = await sentPost({});
    assert.deepEqual(post.body, { type: 'transferOut', asset: 'BTC-TESTNET', amount: 1000000 });
    const q = out.payload;
    assert.equal(q.amountToSend, q.netAmount + q.fees);
    assert.deepEqual(
      [q.netAmount_decimal, q.amountToSend_decimal, q.fees_decimal],
      [fromBaseUnits(q.netAmount, 100000000), fromBaseUnits(q.amountToSend, 100000000), fromBaseUnits(q.fees, 100000000)],
    );
    assert.ok(q.fees > 0, 'the simulator charges a fee');
    await helper.unload();
    await load('custody-assets', { operation: 'fee', ...typedProps({ feeType: str('transferOut'), asset: str('BTC-TESTNET'), amount: str('1000000') }), amountFormat: 'baseUnits' });
    const inBase = await sendAndWait(inbox, { payload: {} });
    assert.deepEqual(Object.keys(inBase.out.payload).sort(), ['amountToSend', 'fees', 'netAmount']);
  });
});
