/**
 * Coordination through Redis (docs/scale-out.md) in Node-RED (node-red-node-test-helper, the
 * built-in simulator, a real redis-server): the `custody-config` coordination settings as a user
 * sets them.
 * - nonce signing with coordination is refused before anything is sent, naming `signingMode`;
 * - a password in the Redis URL is refused naming `redisUrl`, and the password is in no error;
 * - the approver with Redis stopped holds the action (its status says so, nothing is called),
 *   and decides it once Redis is back; its decision reaches the shared audit stream.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { demoTransfer, until } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { CONFIG, Inbox, TAB, loadCollecting } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { createTransfer, getAction, listActions, type CustodyClient } from '../../lib';
import { RedisServer } from '../helpers/redis-server';

const dataDir = simulatorDataDir('cf-coord-nodes-', 'sim');
const nodeModules = redNodes(['custody-config', 'custody-approver', 'custody-transfer']);

const inbox: Inbox = new Map();
const APPROVER = 'demo-approver';

describe('coordination settings of custody-config in Node-RED', function () {
  this.timeout(60000);
  const redis = new RedisServer();
  let sim: Simulator;
  let client: CustodyClient;

  before(() => redis.start(['--requirepass', 'not-a-real-redis-password']));
  const simulator = useRedRuntime(dataDir, { simulatorDir: path.join(dataDir, 'sim') });
  before(() => {
    sim = simulator();
    client = accountClient(sim);
  });
  after(async () => {
    await client.close();
    await redis.stop();
  });

  const coordination = () => ({ coordination: 'redis', redisUrl: redis.url, redisKeyPrefix: 'cf-nodes:', claimLeaseSeconds: 2 });
  const credentials = { cfg: { redisPassword: 'not-a-real-redis-password' } };

  it('nonce signing with coordination is refused before anything is sent, naming signingMode', async () => {
    const flow = [
      TAB,
      { ...CONFIG, z: 'tab', signingMode: 'nonce', ...coordination() },
      { id: 'op', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', wires: [['out']], x: 1, y: 1 },
      { id: 'out', z: 'tab', type: 'helper', x: 1, y: 1 },
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 1, y: 1 },
      { id: 'caught', z: 'tab', type: 'helper', x: 1, y: 1 },
    ];
    await loadCollecting(nodeModules, flow, credentials, inbox);
    const before = (await listActions(client, { client_id: APPROVER })).data.actions.length;
    helper.getNode('op').receive({ payload: demoTransfer(sim) });
    const caught = await until(() => inbox.get('caught')![0], 'the refusal');
    assert.match(caught.error.message, /signingMode: nonce signing cannot be used with coordination/);
    assert.equal((await listActions(client, { client_id: APPROVER })).data.actions.length, before, 'nothing was sent');
  });

  it('a password in the Redis URL is refused naming redisUrl, and it is in no error', async () => {
    const flow = [
      TAB,
      { ...CONFIG, z: 'tab', ...coordination(), redisUrl: `redis://:hunter2-in-url@127.0.0.1:${redis.port}` },
      { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', rules: [], wires: [[], [], []], x: 1, y: 1 },
    ];
    const errors: string[] = [];
    await loadCollecting(nodeModules, flow, credentials, inbox, []);
    const ap = helper.getNode('ap');
    const statuses: any[] = [];
    ap.on('call:status', (c: any) => statuses.push(c.args[0]));
    ap.on('call:error', (c: any) => errors.push(String(c.args[0])));
    await until(() => errors.find((e) => /redisUrl/.test(e)), 'the approver says why it does not decide');
    assert.match(errors.join('\n'), /redisUrl: put the password in the Redis password field/);
    assert.ok(!errors.join('\n').includes('hunter2'), 'the password is in no error');
    assert.ok(!JSON.stringify(statuses).includes('hunter2'));
  });

  it('with Redis stopped the approver holds the action (status says so, nothing called), then decides it once Redis is back', async () => {
    const flow = [
      TAB,
      { ...CONFIG, z: 'tab', ...coordination() },
      { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', rules: [{ name: 'all transfers', decision: 'approve', actionTypes: ['ApproveTransfer'] }], auditFile: path.join(dataDir, 'audit.jsonl'), wires: [['approved'], ['rejected'], ['held']], x: 1, y: 1 },
      ...['approved', 'rejected', 'held'].map((id) => ({ id, z: 'tab', type: 'helper', x: 1, y: 1 })),
    ];
    await loadCollecting(nodeModules, flow, credentials, inbox);
    const ap = helper.getNode('ap');
    const statuses: any[] = [];
    ap.on('call:status', (c: any) => statuses.push(c.args[0]));
    const tx = (await createTransfer(client, demoTransfer(sim))).data.tx_id;
    let action: any;
    for (let i = 0; i < 200 && !action; i++) {
      for (const a of (await listActions(client, { client_id: APPROVER })).data.actions) {
        const full = (await getAction(client, { client_id: APPROVER, action_id: a.id })).data;
        if (full.details?.txID === tx) action = full;
      }
      if (!action) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(action, 'the transfer has its pending action');
    await redis.stop({ kill: true });
    ap.receive({ payload: { ...action, client_id: APPROVER, action_id: action.id } });
    await until(() => statuses.find((s) => /holding: waiting for Redis/.test(s.text ?? '')), 'the holding status');
    assert.equal((await getAction(client, { client_id: APPROVER, action_id: action.id })).data.status, 'pending', 'nothing approved while Redis is down');
    assert.equal(inbox.get('approved')!.length, 0);
    await redis.start(['--requirepass', 'not-a-real-redis-password']);
    const msg = await until(() => inbox.get('approved')![0], 'the decision once Redis is back', 20000);
    assert.equal(msg.decision.decision, 'approve');
    assert.equal((await getAction(client, { client_id: APPROVER, action_id: action.id })).data.status, 'approved');
    assert.match(statuses[statuses.length - 1].text, /decided elsewhere 0/);
  });
});
