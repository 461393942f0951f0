/**
 * The TypedInput fields of the operation nodes in the Node-RED runtime (docs/nodes.md "Fields:
 * TypedInputs, look-ups, the operation from the msg"): a field whose `<field>Type` is msg, flow,
 * global, env, jsonata or num drives the request the simulator receives (seen through a recording
 * proxy in front of it); `operation` "msg.operation" takes the msg's operation; bad typed values
 * are refused naming the field, and nothing is sent.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { Inbox, loadCollecting, sendAndWait, operationFlow } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { useRecordingProxy } from '../helpers/recording-proxy';

const dataDir = simulatorDataDir('cf-typed-fields-');
const nodeModules = redNodes(['custody-config', 'custody-transfer', 'custody-fund', 'custody-company', 'custody-portfolio', 'custody-policy'], []);

let seq = 0;
const unique = (p: string) => `${p}-${process.pid}-${Date.now()}-${++seq}`;

describe('TypedInput fields in the runtime: msg, flow, global, env, jsonata, num drive the request', function () {
  this.timeout(60000);
  let sim: Simulator;
  const inbox: Inbox = new Map();
  /** A flow whose config node reaches the simulator through the proxy (custom environment, the account's keys). */
  let flowOf: (type: string, props: Record<string, unknown>) => object[];
  let creds: object;

  const simulator = useRedRuntime(dataDir);
  const proxy = useRecordingProxy(simulator);
  before(() => {
    sim = simulator();
    const v1 = new URL(sim.baseUrl);
    const v2 = new URL(sim.v2.baseUrl);
    flowOf = (type, props) =>
      operationFlow(type, props, { environment: 'custom', baseUrl: proxy.origin + v1.pathname, v2BaseUrl: proxy.origin + v2.pathname, workspaceId: sim.v2.workspaceId });
    creds = { cfg: { apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, token: sim.v2.token } };
  });
  afterEach(() => {
    delete process.env.CF_TEST_COMPANY;
  });

  async function load(type: string, props: Record<string, unknown>): Promise<void> {
    await loadCollecting(nodeModules, flowOf(type, props), creds, inbox, ['out', 'caught']);
  }

  /** A transfer request's fields but company_id, wallet_id and counterparty (those come from the node). */
  const rest = () => ({ expires: Math.floor(Date.now() / 1000) + 3600, benefit_of: 'typed', account_no: 'A-1', reference: 'typed fields', send: { symbol: 'BTC-TESTNET', amount: 1000 } });

  it('msg, flow, global and jsonata fields fill a transfer; the simulator receives those values', async () => {
    const { company_id } = sim.demo;
    const from = sim.demo.wallets['BTC-TESTNET'].wallet_id;
    const to = sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id;
    await load('custody-transfer', {
      operation: 'create',
      company_id: 'customer.company',
      company_idType: 'msg',
      wallet_id: 'fromWallet',
      wallet_idType: 'flow',
      counterparty_wallet_address: 'toWallet',
      counterparty_wallet_addressType: 'global',
      partnerTxId: '"typed-" & payload.invoice',
      partnerTxIdType: 'jsonata',
    });
    const op = helper.getNode('op') as any;
    op.context().flow.set('fromWallet', from);
    op.context().global.set('toWallet', to);
    const invoice = unique('inv');
    const r = await sendAndWait(inbox, { customer: { company: company_id }, payload: { invoice, ...rest(), company_id: 'ignored', wallet_id: 'ignored' } });
    assert.equal(r.caught, undefined, r.caught?.error?.message);
    const post = proxy.requests().find((s) => s.method === 'POST')!;
    assert.equal(post.path, `/api/v1/p/company/${company_id}/transfer`);
    assert.equal(post.body.wallet_id, from);
    assert.equal(post.body.counterparty_wallet_address, to);
    assert.equal(post.body.partner_txID, `typed-${invoice}`);
    assert.equal(r.out.payload.status, 'new');
  });

  it('env and jsonata path ids: a fund read with company_id from an environment variable, fund_id from JSONata', async () => {
    process.env.CF_TEST_COMPANY = sim.demo.company_id;
    await load('custody-fund', { operation: 'getFund', company_id: 'CF_TEST_COMPANY', company_idType: 'env', fund_id: '$string(payload.fund)', fund_idType: 'jsonata' });
    const r = await sendAndWait(inbox, { payload: { fund: sim.demo.fund_id } });
    assert.equal(r.caught, undefined, r.caught?.error?.message);
    assert.deepEqual(proxy.requests().map((s) => `${s.method} ${s.path}`), [`GET /api/v1/p/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}`]);
  });

  it('a num field (v2 waitForAddress) and a str field: the simulator receives the number', async () => {
    const accountID = unique('acct');
    await load('custody-portfolio', { operation: 'create', portfolioName: accountID, portfolioNameType: 'str', portfolioType: 'standard' });
    const created = await sendAndWait(inbox, { payload: {} });
    assert.equal(created.caught, undefined, created.caught?.error?.message);
    assert.deepEqual(proxy.requests()[0].body, { name: accountID, type: 'standard' });
    await helper.unload();
    proxy.seen.length = 0;
    await load('custody-policy', { operation: 'list' });
    const policies = await sendAndWait(inbox, { payload: {} });
    const policyID = policies.out.payload.policies.find((p: { policyType: string }) => p.policyType === 'transaction')?.policyID ?? policies.out.payload.policies[0].policyID;
    await helper.unload();
    proxy.seen.length = 0;
    await load('custody-portfolio', { operation: 'createWallet', accountID: 'payload.account', accountIDType: 'msg', walletName: 'typed wallet', connectPlugin: 'defi', policyID, waitForAddress: '0', waitForAddressType: 'num' });
    // The simulator may refuse the policy (a fresh workspace has only its admin policy): the request is what counts here.
    await sendAndWait(inbox, { payload: { account: created.out.payload.accountID } });
    const post = proxy.requests().find((s) => s.method === 'POST')!;
    assert.equal(post.path, `/api/v2/workspaces/${sim.v2.workspaceId}/accounts/${created.out.payload.accountID}/wallets`);
    assert.deepEqual(post.body, { name: 'typed wallet', connectPlugin: 'defi', policyID, waitForAddress: 0 });
  });

  it('operation from msg.operation: each msg its own operation; an unknown one refused with EINPUT naming operation, nothing sent', async () => {
    await load('custody-company', { operation: 'msg.operation', company_id: 'payload.id', company_idType: 'msg', query: 'Dem' });
    const got = await sendAndWait(inbox, { operation: 'get', payload: { id: sim.demo.company_id } });
    assert.equal(got.caught, undefined, got.caught?.error?.message);
    const searched = await sendAndWait(inbox, { operation: 'search', payload: {} });
    assert.equal(searched.caught, undefined, searched.caught?.error?.message);
    assert.deepEqual(proxy.requests().map((s) => `${s.method} ${s.path}`), [`GET /api/v1/p/company/${sim.demo.company_id}`, 'GET /api/v1/p/company/search?query=Dem']);
    assert.equal(got.out.custody.operation, 'get');
    proxy.seen.length = 0;
    for (const operation of ['drop', undefined, 7]) {
      const bad = await sendAndWait(inbox, { operation, payload: { id: sim.demo.company_id } });
      assert.equal(bad.caught?.error?.code, 'EINPUT');
      assert.match(bad.caught.error.message, /operation: msg.operation: expected one of create, get, update, search, msg.operation|operation: msg.operation: expected one of create, get, update, search/);
      assert.equal(bad.caught.outcome, 'notSent');
    }
    assert.equal(proxy.seen.length, 0, 'nothing sent');
  });

  it('bad typed values are refused naming the field, nothing sent', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, RegExp, string]> = [
      [{ company_id: 'customer.company', company_idType: 'msg' }, { payload: {} }, /company_id: msg\.customer\.company/, 'EINPUT'],
      [{ company_id: 'nope', company_idType: 'flow' }, { payload: {} }, /company_id: flow\.nope is not set$/, 'EINPUT'],
      [{ company_id: 'CF_TEST_UNSET_VARIABLE', company_idType: 'env' }, { payload: {} }, /company_id: env CF_TEST_UNSET_VARIABLE is (not set|empty)$/, 'EINPUT'],
      [{ company_id: 'payload.id', company_idType: 'msg' }, { payload: { id: '   ' } }, /company_id: msg\.payload\.id is empty$/, 'EINPUT'],
      [{ company_id: 'payload.id', company_idType: 'msg' }, { payload: { id: { a: 1 } } }, /company_id: must be an id/, 'EINPUT'],
      [{ company_id: '$error("no company")', company_idType: 'jsonata' }, { payload: {} }, /company_id: JSONata .*no company/, 'EINPUT'],
      [{ company_id: 'payload.(', company_idType: 'jsonata' }, { payload: {} }, /company_id: JSONata .* does not parse/, 'ECONFIG'],
      [{ company_id: 'a..b', company_idType: 'msg' }, { payload: {} }, /company_id: "a\.\.b" is not a msg property/, 'ECONFIG'],
      [{ company_id: 'abc', company_idType: 'num' }, { payload: {} }, /company_idType: "num" is not a type of company_id, expected one of str, msg, flow, global, env, jsonata/, 'ECONFIG'],
      [{ company_id: 'x', company_idType: 'date' }, { payload: {} }, /company_idType: "date" is not a type of company_id/, 'ECONFIG'],
    ];
    for (const [props, msg, message, code] of cases) {
      await load('custody-company', { operation: 'get', ...props });
      proxy.seen.length = 0;
      const r = await sendAndWait(inbox, msg);
      assert.ok(r.caught, `${JSON.stringify(props)}: refused`);
      assert.match(r.caught.error.message, message, JSON.stringify(props));
      assert.equal(r.caught.error.code, code, JSON.stringify(props));
      assert.equal(proxy.seen.length, 0, `${JSON.stringify(props)}: nothing sent`);
      await helper.unload();
    }
  });

  it('a typed field of another operation is not read: a msg-typed tx_id does not stop a create', async () => {
    await load('custody-transfer', { operation: 'create', tx_id: 'payload.missing', tx_idType: 'msg' });
    const r = await sendAndWait(inbox, {
      payload: { company_id: sim.demo.company_id, wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, counterparty_wallet_address: sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id, partner_txID: unique('other-op'), ...rest() },
    });
    assert.equal(r.caught, undefined, r.caught?.error?.message);
    assert.equal(r.out.payload.status, 'new');
  });
});
