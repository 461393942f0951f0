/**
 * The admin endpoints of custody-config with coordination through Redis Sentinel, in
 * node-red-node-test-helper against a real Sentinel setup (test/helpers/redis-sentinel.ts: a
 * `redis-server` master and replica, three `redis-sentinel` processes), where Redis and the
 * sentinels each ask for their own password:
 *
 * - `POST <admin>/custodyflow/config/test` with `redisMode: 'sentinel'` asks the sentinels for the
 *   master and answers OK naming it (`host:port`, and the master name); the sentinel password
 *   typed, or left unchanged (`__PWRD__`: the deployed node's stored one); a wrong or missing
 *   sentinel password is `badPassword`, an unknown master name `noMaster`;
 * - `GET <admin>/custodyflow/config/:id/coordination` of the deployed Sentinel node answers mode,
 *   master, since when and failovers; after the master is killed and a replica promoted, the new
 *   master and one failover, and the test names the new master;
 * - no answer and no log line holds either password.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/nodes/config-admin-sentinel.test.js`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { describeCleanLog } from '../helpers/log-spy';
import { useSharedSimulatorIn } from '../helpers/red-setup';
import { RedisSentinelSetup } from '../helpers/redis-sentinel';
import { TAB, startHelperServer, stopHelperServer } from '../helpers/node-flows';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const configNode = require('../../nodes/custody-config/custody-config');

helper.init(require.resolve('node-red'));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-config-admin-sentinel-'));

/** The Redis password, the sentinels' password, and a wrong one: none may appear in an answer or a log line. */
const PASSWORD = 'redis-secret-' + Math.random().toString(36).slice(2, 10);
const SENTINEL_PASSWORD = 'sentinel-secret-' + Math.random().toString(36).slice(2, 10);
const WRONG = 'wrong-secret-' + Math.random().toString(36).slice(2, 10);
const MASTER_NAME = 'custody-master';

/** Fail when `text` holds one of the passwords. */
function assertNoPassword(text: string, where: string): void {
  for (const p of [PASSWORD, SENTINEL_PASSWORD, WRONG]) assert.ok(!text.includes(p), `${where} holds a password`);
}

/** POST the connection test with `body`; asserts a 200 JSON answer without a password. */
async function testWith(body: Record<string, unknown>): Promise<any> {
  const res = await helper.request().post('/custodyflow/config/test').send(body).expect(200);
  assertNoPassword(JSON.stringify(res.body), 'the test answer');
  return res.body;
}

/** GET the coordination of the deployed node `id` until `done` holds for it (20 s at most); @returns the last answer. */
async function coordinationUntil(id: string, done: (s: any) => boolean): Promise<any> {
  const deadline = Date.now() + 20000;
  for (;;) {
    const r = await helper.request().get(`/custodyflow/config/${id}/coordination`).expect(200);
    assertNoPassword(JSON.stringify(r.body), 'the coordination answer');
    if (done(r.body) || Date.now() > deadline) return r.body;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('custody-config admin endpoints with Redis Sentinel', function () {
  this.timeout(90000);
  const group = new RedisSentinelSetup({ masterName: MASTER_NAME, password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
  useSharedSimulatorIn(path.join(tmp, 'shared-sim'));
  /** The dialog's settings: the built-in simulator, timestamp signing, Redis through the sentinels. */
  const dialog = () => ({ environment: 'simulator', signingMode: 'timestamp', timeout: '10', coordination: 'redis', redisMode: 'sentinel', redisSentinels: group.sentinelList, redisMasterName: MASTER_NAME, redisTls: false, redisKeyPrefix: 'cf-sentinel:', claimLeaseSeconds: '60' });

  before(async () => {
    await group.start();
    await startHelperServer();
    const { coordination, redisMode, redisSentinels, redisMasterName, redisKeyPrefix } = dialog();
    await helper.load(
      configNode,
      [
        TAB,
        { id: 'cfg-sentinel', z: 'tab', type: 'custody-config', name: 'sentinel', environment: 'simulator', signingMode: 'timestamp', timeout: 10, coordination, redisMode, redisSentinels, redisMasterName, redisKeyPrefix, claimLeaseSeconds: 60 },
        { id: 'cfg-plain', z: 'tab', type: 'custody-config', name: 'alone', environment: 'simulator', signingMode: 'timestamp', timeout: 10 },
      ],
      { 'cfg-sentinel': { redisPassword: PASSWORD, redisSentinelPassword: SENTINEL_PASSWORD } },
    );
  });

  after(async () => {
    await helper.unload();
    await stopHelperServer();
    await group.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the passwords typed: OK through the sentinels, naming the master reached', async () => {
    const a = await testWith({ ...dialog(), redisPassword: PASSWORD, redisSentinelPassword: SENTINEL_PASSWORD });
    assert.equal(a.ok, true, a.message);
    assert.equal(a.redis.ok, true);
    assert.equal(a.redis.mode, 'sentinel');
    assert.equal(a.redis.masterName, MASTER_NAME);
    assert.equal(a.redis.master, `127.0.0.1:${group.masterPort}`, 'the master the sentinels named');
    assert.equal(a.redis.url, undefined);
    assert.match(a.message, /^Connected to the built-in simulator: .* Redis ready through Sentinel: master "custody-master" at 127\.0\.0\.1:\d+ \(3 sentinels\), key prefix "cf-sentinel:" \(\d+ ms\)\.$/);
  });

  it('the passwords left unchanged (__PWRD__): the deployed node\'s stored ones; a node without them: badPassword', async () => {
    const a = await testWith({ id: 'cfg-sentinel', ...dialog(), redisPassword: '__PWRD__', redisSentinelPassword: '__PWRD__' });
    assert.equal(a.ok, true, a.message);
    assert.equal(a.redis.master, `127.0.0.1:${group.masterPort}`);
    const b = await testWith({ id: 'cfg-plain', ...dialog(), redisPassword: PASSWORD, redisSentinelPassword: '__PWRD__' });
    assert.equal(b.ok, false);
    assert.equal(b.redis.cause, 'badPassword', b.redis.message);
    assert.match(b.redis.message, /^The sentinels refused the password: .*NOAUTH/, 'the sentinels ask for their password');
  });

  it('a wrong sentinel password: badPassword; an unknown master name: noMaster', async () => {
    const wrong = await testWith({ ...dialog(), redisPassword: PASSWORD, redisSentinelPassword: WRONG });
    assert.deepEqual([wrong.ok, wrong.step, wrong.cause], [false, 'redis', 'badPassword'], wrong.redis.message);
    assert.match(wrong.redis.message, /^The sentinels refused the password: check the sentinel password \(.*WRONGPASS/);
    const unknown = await testWith({ ...dialog(), redisMasterName: 'nobody', redisPassword: PASSWORD, redisSentinelPassword: SENTINEL_PASSWORD });
    assert.deepEqual([unknown.ok, unknown.cause, unknown.redis.masterName], [false, 'noMaster', 'nobody'], unknown.redis.message);
    assert.match(unknown.redis.message, /^The sentinels know no master by that name: check the master name/);
  });

  it('the deployed node: mode, master and since when; after a failover, the new master and one failover', async () => {
    const before = await coordinationUntil('cfg-sentinel', (s) => s.state === 'ready');
    assert.equal(before.state, 'ready', JSON.stringify(before));
    assert.equal(before.mode, 'sentinel');
    assert.equal(before.master, `127.0.0.1:${group.masterPort}`);
    assert.ok(before.masterSince > 0 && before.masterSince <= Date.now());
    assert.equal(before.failovers, 0);

    const killed = await group.killMaster();
    const promoted = await group.waitForNewMaster();
    assert.notEqual(promoted, killed);
    const after = await coordinationUntil('cfg-sentinel', (s) => s.failovers === 1 && s.master === `127.0.0.1:${promoted}`);
    assert.equal(after.master, `127.0.0.1:${promoted}`, JSON.stringify(after));
    assert.equal(after.failovers, 1);
    assert.ok(after.masterSince >= group.killedAt, 'since the failover');

    const a = await testWith({ id: 'cfg-sentinel', ...dialog(), redisPassword: '__PWRD__', redisSentinelPassword: '__PWRD__' });
    assert.equal(a.ok, true, a.message);
    assert.equal(a.redis.master, `127.0.0.1:${promoted}`, 'the test reaches the new master');
  });

  describeCleanLog('a Redis or sentinel password', assertNoPassword);
});
