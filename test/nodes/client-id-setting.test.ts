/**
 * The core client id as a typed setting (docs/nodes.md "custody-coreclient-feed",
 * "custody-approver", "custody-track"): `clientId`/`client_id` with its type in
 * `clientIdType`/`client_idType`, str (also a node saved without a type), env, global or flow.
 * The feed and the approver read it once at start; custody-track per msg; an env variable that
 * is not set is refused naming the property. Real Node-RED against the simulator.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { demoTransfer, until } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { CONFIG, Inbox, TAB, loadCollecting } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { CustodyClient, createTransfer } from '../../lib';

const dataDir = simulatorDataDir('cf-client-id-', 'sim');
const nodeModules = redNodes(['custody-config', 'custody-approver', 'custody-coreclient-feed', 'custody-track']);
const OUTS = ['fed', 'approved', 'rejected', 'held', 'caught'] as const;
const ENV = 'CF_TEST_CORE_CLIENT';

describe('core client id as a typed setting: feed, approver, track', function () {
  this.timeout(60000);
  let sim: Simulator;
  let client: CustodyClient;
  const inbox: Inbox = new Map();
  const simulator = useRedRuntime(dataDir, { simulatorDir: path.join(dataDir, 'sim') });
  before(() => {
    sim = simulator();
    client = accountClient(sim);
  });
  afterEach(() => {
    delete process.env[ENV];
  });
  after(() => client.close());

  /** A feed (props) wired to helper `fed`, an approver `ap` (props) and a track node `tr` (props), a Catch node to `caught`. */
  async function load(feed: Record<string, unknown> | undefined, approver: Record<string, unknown>, track: Record<string, unknown> = {}): Promise<void> {
    const flow: object[] = [
      TAB,
      { ...CONFIG, z: 'tab' },
      { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: true, auditFile: path.join(dataDir, `audit-${Date.now()}.jsonl`), wires: [['approved'], ['rejected'], ['held']], x: 100, y: 100, ...approver },
      { id: 'tr', z: 'tab', type: 'custody-track', connection: 'cfg', kind: 'sweep', wires: [['fed'], []], x: 100, y: 100, ...track },
      ...OUTS.map((id) => ({ id, z: 'tab', type: 'helper', x: 100, y: 100 })),
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
    ];
    if (feed) flow.push({ id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', details: true, wires: [['fed']], x: 100, y: 100, ...feed });
    await loadCollecting(nodeModules, flow, {}, inbox, [...OUTS]);
  }

  it('a feed whose core client id is an environment variable sends that client\'s actions; an approver with the same setting decides an action without client_id', async () => {
    process.env[ENV] = 'demo-approver';
    await load({ clientId: ENV, clientIdType: 'env' }, { clientId: ENV, clientIdType: 'env', rules: [{ name: 'btc', decision: 'approve', assets: ['BTC-TESTNET'] }] });
    const created = await createTransfer(client, demoTransfer(sim));
    const fed = await until(() => inbox.get('fed')!.find((m) => m.payload?.details?.txID === created.data.tx_id), 'the action from the feed');
    assert.equal(fed.payload.client_id, 'demo-approver');
    const { client_id, ...action } = fed.payload;
    void client_id;
    helper.getNode('ap').receive({ payload: action });
    const approved = await until(() => inbox.get('approved')![0] ?? (inbox.get('caught')![0] ? assert.fail(inbox.get('caught')![0].error.message) : undefined), 'a decision');
    assert.equal(approved.decision.decision, 'approve');
    assert.equal(approved.decision.client_id, 'demo-approver', 'the client id from the environment');
  });

  it('an approver whose environment variable is not set refuses each msg naming clientId; a stored approver without the type reads its text', async () => {
    await load(undefined, { clientId: ENV, clientIdType: 'env' });
    helper.getNode('ap').receive({ payload: { action_id: 'a1' } });
    const caught = await until(() => inbox.get('caught')![0], 'the refusal');
    assert.equal(caught.error.code, 'ECONFIG');
    assert.match(caught.error.message, new RegExp(`clientId: env ${ENV} is not set`));
    await helper.unload();
    await load(undefined, { clientId: 'demo-approver', rules: [{ name: 'all', decision: 'reject' }] });
    helper.getNode('ap').receive({ payload: { id: 'no-such-action', action_id: 'no-such-action', type: 'ApproveTransfer' } });
    const decided = await until(() => inbox.get('rejected')![0] ?? (inbox.get('caught')![0] ? assert.fail(inbox.get('caught')![0].error.message) : undefined), 'a decision');
    assert.equal(decided.decision.client_id, 'demo-approver', 'the stored text, as a str');
  });

  it('custody-track reads a flow-context core client id per msg; unset, a sweep is refused naming client_id before any request', async () => {
    await load(undefined, {}, { client_id: 'sweepClient', client_idType: 'flow' });
    helper.getNode('tr').receive({ payload: { tx_id: 'sw-1' } });
    const caught = await until(() => inbox.get('caught')![0], 'the refusal');
    assert.match(caught.error.message, /client_id: flow\.sweepClient is not set/);
  });
});
