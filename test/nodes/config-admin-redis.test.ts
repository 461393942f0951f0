/**
 * The admin endpoints of custody-config with coordination through Redis (docs/scale-out.md), in
 * node-red-node-test-helper against a real `redis-server` (test/helpers/redis-server.ts) that asks for a
 * password: `POST <admin>/custodyflow/config/test` with the dialog's `coordination: 'redis'` also
 * connects to Redis and answers its outcome in `redis` (OK with the password typed or stored;
 * `badPassword` for a wrong or missing one; `unreachable` once the server is stopped; `config`
 * for a URL that carries a password, a bad sentinel or cluster node list, an empty master name,
 * or with nonce signing), with the master it reached and no password in any answer or log line;
 * `GET <admin>/custodyflow/config/:id/coordination` answers the deployed node's coordination
 * (mode, master, since when, failovers). The API part of each test is the built-in simulator's.
 * A real Redis Cluster (test/helpers/redis-cluster.ts): the test names the node serving the
 * prefix's hash slot. Sentinel against a real setup: config-admin-sentinel.test.ts.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/nodes/config-admin-redis.test.js`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { describeCleanLog } from '../helpers/log-spy';
import { useSharedSimulatorIn } from '../helpers/red-setup';
import { Coordinator } from '../../lib/coordination';
import { REDIS_TEST_MS } from '../../nodes/custody-config/admin';
import { RedisServer } from '../helpers/redis-server';
import { RedisCluster } from '../helpers/redis-cluster';
import { TAB, startHelperServer, stopHelperServer } from '../helpers/node-flows';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const configNode = require('../../nodes/custody-config/custody-config');

helper.init(require.resolve('node-red'));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-config-admin-redis-'));

/** The password the Redis server asks for, and a wrong one: neither may appear in an answer or a log line. */
const PASSWORD = 'redis-secret-' + Math.random().toString(36).slice(2, 10);
const WRONG = 'wrong-secret-' + Math.random().toString(36).slice(2, 10);

/** Fail when `text` holds one of the passwords. */
function assertNoPassword(text: string, where: string): void {
  for (const p of [PASSWORD, WRONG]) assert.ok(!text.includes(p), `${where} holds a Redis password`);
}

/** POST the connection test with `body`; asserts a 200 JSON answer without a password. */
async function testWith(body: Record<string, unknown>): Promise<any> {
  const res = await helper.request().post('/custodyflow/config/test').send(body).expect(200);
  assertNoPassword(JSON.stringify(res.body), 'the test answer');
  return res.body;
}

describe('custody-config admin endpoints with Redis coordination', function () {
  this.timeout(60000);
  const redis = new RedisServer();
  useSharedSimulatorIn(path.join(tmp, 'shared-sim'));
  /** The dialog's settings: the built-in simulator, timestamp signing, Redis coordination. */
  const dialog = () => ({ environment: 'simulator', signingMode: 'timestamp', timeout: '10', coordination: 'redis', redisUrl: `${redis.url}/0`, redisTls: false, redisKeyPrefix: 'cf-test:', claimLeaseSeconds: '60' });

  before(async () => {
    await redis.start(['--requirepass', PASSWORD]);
    await startHelperServer();
    await helper.load(
      configNode,
      [
        TAB,
        { id: 'cfg-redis', z: 'tab', type: 'custody-config', name: 'coordinated', environment: 'simulator', signingMode: 'timestamp', timeout: 10, coordination: 'redis', redisUrl: `${redis.url}/0`, redisKeyPrefix: 'cf-test:', claimLeaseSeconds: 60 },
        { id: 'cfg-plain', z: 'tab', type: 'custody-config', name: 'alone', environment: 'simulator', signingMode: 'timestamp', timeout: 10 },
      ],
      { 'cfg-redis': { redisPassword: PASSWORD } },
    );
  });

  after(async () => {
    await helper.unload();
    await stopHelperServer();
    await redis.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('POST custodyflow/config/test', () => {
    it('Redis up, the password typed: OK, redis.ok with state ready', async () => {
      const a = await testWith({ ...dialog(), redisPassword: PASSWORD });
      assert.equal(a.ok, true, a.message);
      assert.equal(a.v1.ok, true, 'the API part is tested as before');
      assert.equal(a.redis.ok, true, a.redis.message);
      assert.equal(a.redis.state, 'ready');
      assert.equal(a.redis.url, `${redis.url}/0`);
      assert.equal(a.redis.mode, 'standalone', 'a body without redisMode: standalone');
      assert.equal(a.redis.master, `127.0.0.1:${redis.port}`, 'the master reached');
      assert.equal(a.redis.keyPrefix, 'cf-test:');
      assert.equal(a.redis.tls, false);
      assert.equal(a.redis.cause, undefined);
      assert.match(a.message, /^Connected to the built-in simulator: .* Redis ready at redis:\/\/127\.0\.0\.1:\d+\/0, key prefix "cf-test:" \(\d+ ms\)\.$/);
    });

    it('Redis up, the password left unchanged (__PWRD__): the deployed node\'s stored password is used', async () => {
      const a = await testWith({ id: 'cfg-redis', ...dialog(), redisPassword: '__PWRD__' });
      assert.equal(a.ok, true, a.message);
      assert.equal(a.redis.ok, true);
      // A node with no stored password: no password is sent, and Redis asks for one.
      const b = await testWith({ id: 'cfg-plain', ...dialog(), redisPassword: '__PWRD__' });
      assert.equal(b.redis.cause, 'badPassword', b.redis.message);
    });

    it('a wrong password: cause badPassword (WRONGPASS), step redis, and no answer holds the password', async () => {
      const started = Date.now();
      const a = await testWith({ ...dialog(), redisPassword: WRONG });
      assert.equal(a.ok, false);
      assert.equal(a.step, 'redis');
      assert.equal(a.cause, 'badPassword');
      assert.equal(a.redis.ok, false);
      assert.equal(a.redis.cause, 'badPassword');
      assert.match(a.redis.message, /^Redis refused the password: check the Redis password \(WRONGPASS/);
      assert.match(a.message, /^Redis refused the password.*API: Connected to the built-in simulator/);
      assert.ok(Date.now() - started < REDIS_TEST_MS, 'the first refusal answers, without waiting for the whole test time');
    });

    it('no password where Redis asks for one: cause badPassword (NOAUTH)', async () => {
      const a = await testWith({ ...dialog() });
      assert.equal(a.cause, 'badPassword');
      assert.match(a.redis.message, /NOAUTH/);
    });

    it('Redis stopped: cause unreachable (ECONNREFUSED), and the test ends within the Redis test time', async () => {
      const gone = new RedisServer();
      await gone.start();
      const url = gone.url;
      await gone.stop();
      const started = Date.now();
      const a = await testWith({ ...dialog(), redisUrl: url, redisPassword: PASSWORD });
      assert.equal(a.ok, false);
      assert.equal(a.step, 'redis');
      assert.equal(a.cause, 'unreachable', a.message);
      assert.match(a.redis.message, /^Redis cannot be reached: .*ECONNREFUSED/);
      assert.ok(Date.now() - started < REDIS_TEST_MS + 2000, `answered in ${Date.now() - started} ms`);
    });

    it('a password in the URL, a bad scheme, a missing URL or a bad lease: cause config, nothing sent, the password not echoed', async () => {
      const inUrl = await testWith({ ...dialog(), redisUrl: `redis://:${WRONG}@127.0.0.1:${redis.port}/0` });
      assert.equal(inUrl.cause, 'config');
      assert.equal(inUrl.redis.url, undefined);
      assert.match(inUrl.redis.message, /redisUrl: put the password in the Redis password field/);
      const scheme = await testWith({ ...dialog(), redisUrl: `http://127.0.0.1:${redis.port}` });
      assert.match(scheme.redis.message, /redisUrl: redis:\/\/ or rediss:\/\//);
      const missing = await testWith({ ...dialog(), redisUrl: '' });
      assert.match(missing.redis.message, /redisUrl: set the Redis URL/);
      const lease = await testWith({ ...dialog(), claimLeaseSeconds: '0.5', redisPassword: PASSWORD });
      assert.equal(lease.cause, 'config');
      assert.match(lease.redis.message, /claimLeaseSeconds: a number of seconds, at least 1/);
    });

    it('Sentinel or Cluster settings that cannot be used: cause config naming the field, nothing sent', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ redisMode: 'sentinel', redisSentinels: ' , ' }, /redisSentinels: at least one host:port/],
        [{ redisMode: 'sentinel', redisSentinels: '127.0.0.1:26379, 127.0.0.1:0' }, /redisSentinels: entry 2 is not host:port/],
        [{ redisMode: 'sentinel', redisSentinels: '127.0.0.1:26379', redisMasterName: ' ' }, /redisMasterName: /],
        [{ redisMode: 'cluster', redisClusterNodes: '' }, /redisClusterNodes: at least one host:port/],
        [{ redisMode: 'cluster', redisClusterNodes: `u:${WRONG}@127.0.0.1:7000` }, /redisClusterNodes: entry 1 is not host:port/],
      ];
      for (const [fields, message] of cases) {
        const a = await testWith({ ...dialog(), ...fields, redisPassword: PASSWORD });
        assert.equal(a.ok, false, JSON.stringify(fields));
        assert.deepEqual([a.step, a.cause, a.redis.cause], ['redis', 'config', 'config']);
        assert.match(a.redis.message, message);
        assert.equal(a.redis.master, undefined);
      }
    });

    it('Sentinel with no sentinel listening: cause unreachable, the master name in the answer', async () => {
      const gone = new RedisServer();
      await gone.start();
      const port = gone.port;
      await gone.stop();
      const a = await testWith({ ...dialog(), redisMode: 'sentinel', redisSentinels: `127.0.0.1:${port}`, redisMasterName: 'custody', redisPassword: PASSWORD, redisSentinelPassword: WRONG });
      assert.equal(a.ok, false);
      assert.equal(a.cause, 'unreachable', a.redis.message);
      assert.equal(a.redis.mode, 'sentinel');
      assert.equal(a.redis.masterName, 'custody');
      assert.equal(a.redis.url, undefined, 'no URL in Sentinel mode');
      assert.match(a.redis.message, /^Redis cannot be reached: .*All sentinels are unreachable/);
    });

    it('nonce signing with Redis coordination: refused as at deploy (step v1, cause config: use timestamp), Redis itself OK', async () => {
      const a = await testWith({ ...dialog(), signingMode: 'nonce', redisPassword: PASSWORD });
      assert.equal(a.ok, false);
      assert.equal(a.step, 'v1');
      assert.equal(a.cause, 'config');
      assert.equal(a.redis.ok, true);
      assert.match(a.message, /signingMode: nonce signing cannot be used with coordination.*use timestamp signing.* Redis: OK\.$/);
    });

    it('coordination none (or absent): the answer has no redis part, as before', async () => {
      for (const coordination of ['none', undefined]) {
        const a = await testWith({ ...dialog(), coordination, redisUrl: 'not looked at' });
        assert.equal(a.ok, true, a.message);
        assert.equal(a.redis, undefined);
        assert.equal(a.step, undefined);
      }
    });

    it('refuses a coordination or a Redis field of the wrong type: 400', async () => {
      const a = await helper.request().post('/custodyflow/config/test').send({ ...dialog(), coordination: 'zookeeper' }).expect(400);
      assert.equal(a.body.cause, 'input');
      assert.match(a.body.message, /^coordination: /);
      const b = await helper.request().post('/custodyflow/config/test').send({ ...dialog(), redisTls: 'maybe' }).expect(400);
      assert.match(b.body.message, /^redisTls: /);
      const c = await helper.request().post('/custodyflow/config/test').send({ ...dialog(), redisUrl: 6379 }).expect(400);
      assert.match(c.body.message, /^redisUrl: /);
      const d = await helper.request().post('/custodyflow/config/test').send({ ...dialog(), redisMode: 'ring' }).expect(400);
      assert.match(d.body.message, /^redisMode: /);
      const e = await helper.request().post('/custodyflow/config/test').send({ ...dialog(), redisMode: 'sentinel', redisSentinels: ['127.0.0.1:26379'] }).expect(400);
      assert.match(e.body.message, /^redisSentinels: /);
    });
  });

  describe('POST custodyflow/config/test with a Redis Cluster', () => {
    const cluster = new RedisCluster();
    before(() => cluster.start());
    after(() => cluster.stop());

    it('OK through the seed nodes, naming the node that serves the prefix\'s hash slot; the prefix a hash tag', async () => {
      const seeds = cluster.seeds.map((n) => `${n.host}:${n.port}`).join(', ');
      const a = await testWith({ ...dialog(), redisMode: 'cluster', redisClusterNodes: seeds, redisUrl: 'not looked at' });
      assert.equal(a.ok, true, a.message);
      assert.equal(a.redis.mode, 'cluster');
      assert.equal(a.redis.keyPrefix, '{cf-test}:', 'every key of the prefix in one hash slot');
      const slot = Number(await cluster.read(cluster.nodes[0], (r) => r.cluster('KEYSLOT', '{cf-test}:epoch')));
      const owner = await cluster.ownerOf(slot);
      assert.equal(a.redis.master, `127.0.0.1:${owner.port}`, 'the master of the slot');
      assert.equal(a.redis.url, undefined);
      assert.match(a.message, /Redis Cluster ready: the key prefix's hash slot is at 127\.0\.0\.1:\d+ \(3 seed nodes\), key prefix "\{cf-test\}:" \(\d+ ms\)\.$/);
    });
  });

  describe('GET custodyflow/config/:id/coordination', () => {
    it('not deployed: 404 notDeployed; a node of another type: 404', async () => {
      for (const id of ['nope', 'tab']) {
        const r = await helper.request().get(`/custodyflow/config/${id}/coordination`).expect(404);
        assert.equal(r.body.cause, 'notDeployed');
        assert.match(r.body.message, /deploy the flow first/);
      }
    });

    it('a deployed node: its coordinationStatus(): redis ready with its instance; none for a node without coordination', async () => {
      const deadline = Date.now() + 10000;
      let r = await helper.request().get('/custodyflow/config/cfg-redis/coordination').expect(200);
      while (r.body.state !== 'ready' && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 100));
        r = await helper.request().get('/custodyflow/config/cfg-redis/coordination').expect(200);
      }
      assert.equal(r.body.coordination, 'redis');
      assert.equal(r.body.state, 'ready');
      assert.equal(typeof r.body.instance, 'string');
      assert.equal(r.body.mode, 'standalone');
      assert.equal(r.body.master, `127.0.0.1:${redis.port}`);
      assert.ok(r.body.masterSince > 0 && r.body.masterSince <= Date.now(), 'since when, epoch ms');
      assert.equal(r.body.failovers, 0);
      assertNoPassword(JSON.stringify(r.body), 'the coordination answer');
      const plain = await helper.request().get('/custodyflow/config/cfg-plain/coordination').expect(200);
      assert.deepEqual(plain.body, { coordination: 'none' });
    });
  });

  describe('Coordinator.close()', () => {
    it('returns at once for a Redis that was never reached (no QUIT waiting in the offline queue)', async () => {
      const gone = new RedisServer();
      await gone.start();
      const url = gone.url;
      await gone.stop();
      const c = new Coordinator({ url });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(c.state, 'connecting');
      const started = Date.now();
      await c.close();
      assert.ok(Date.now() - started < 2000, `closed in ${Date.now() - started} ms`);
      assert.equal(c.state, 'closed');
    });
  });

  describeCleanLog('a Redis password', assertNoPassword);
});
