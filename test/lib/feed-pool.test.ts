/**
 * lib/feeds FeedPool and ApproverRegistry without Node-RED, against the simulator over real
 * sockets: one socket per shared feed, opened by the first subscriber and closed by the last;
 * a client that cannot be built is reported once and tried again; watchers follow a core client
 * feed's health; approvers of one core client are told of each other (docs/architecture.md).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { CustodyClient, type HubFeedMessage } from '../../lib';
import { FeedPool, ApproverRegistry, type AccountFeedUser, type FeedHealth, type FeedReport, type ApproverEntry } from '../../lib/feeds';
import { simulatedSuite, accountClient } from '../helpers/simulated';
import { control, until } from '../helpers/support';

/** A hub feed user that records every health and report it is given. */
function recorder(): AccountFeedUser<HubFeedMessage> & { healths: FeedHealth[]; reports: FeedReport[] } {
  const healths: FeedHealth[] = [];
  const reports: FeedReport[] = [];
  return { healths, reports, onHealth: (h) => healths.push(h), onReport: (r) => reports.push(r), onMessage: () => undefined };
}

describe('lib FeedPool and ApproverRegistry (no Node-RED)', function () {
  this.timeout(60000);
  const account = simulatedSuite('cf-feed-pool-');

  it('shares one socket per feed: the first subscriber opens it, the last to leave closes it', async () => {
    const pool = new FeedPool({ client: async () => account.client, retryMs: () => 200 });
    const a = recorder();
    const b = { ...recorder(), onReport: undefined };
    const ma = pool.subscribeHub(a);
    const mb = pool.subscribeHub(b);
    await until(() => (a.healths.at(-1)?.state === 'connected' && b.healths.at(-1)?.state === 'connected' ? true : undefined), 'both connected');
    assert.deepEqual(a.healths[0], { state: 'connecting' }, 'a subscriber is told the health at once');
    assert.equal((await control(account.sim, '/feeds/drop')).dropped, 1, 'one socket for both subscribers');
    await until(() => (a.healths.at(-1)?.state === 'connected' ? true : undefined), 'reconnected');
    await ma.leave();
    await until(() => (pool.health('liquidityhub')?.state === 'connected' ? true : undefined), 'still connected for b');
    await mb.leave();
    assert.equal(pool.health('liquidityhub'), undefined, 'gone once the last subscriber left');
    assert.equal((await control(account.sim, '/feeds/drop')).dropped, 0, 'the last to leave closed the socket');
    await pool.close();
  });

  it('a refused handshake is reported as failing, with the failure in the health', async () => {
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
    const wrong = new CustodyClient({ baseUrl: account.sim.baseUrl, apiKey: account.sim.account.apiKey, privateKey: otherKey });
    const pool = new FeedPool({ client: async () => wrong, retryMs: () => 20 });
    const u = recorder();
    const m = pool.subscribeHub(u);
    try {
      const failing = await until(() => u.healths.find((h) => h.failure), 'a failing health');
      assert.equal(failing.failure!.statusCode, 401);
      await until(() => (u.reports.length > 0 ? true : undefined), 'a report');
      assert.deepEqual(u.reports.map((r) => r.kind), ['failing']);
      assert.equal((await control(account.sim, '/feeds/drop')).dropped, 0, 'no socket is open');
    } finally {
      await m.leave();
      await pool.close();
      wrong.close();
    }
  });

  it('a client that cannot be built is tried again until it can; the same failure is reported once, then the recovery; watchers follow the health of a core client feed', async () => {
    let calls = 0;
    const client = accountClient(account.sim);
    const pool = new FeedPool({ client: async () => (++calls < 3 ? Promise.reject(new Error('no client yet')) : client), retryMs: () => 5 });
    const watched: Array<FeedHealth | undefined> = [];
    const w = pool.watchCoreClient(account.sim.demo.core_client_id, { onHealth: (h) => watched.push(h) });
    const reports: FeedReport[] = [];
    const m = pool.subscribeCoreClient(account.sim.demo.core_client_id, { onHealth: () => undefined, onReport: (r) => reports.push(r), onAction: () => undefined });
    try {
      await until(() => (watched.at(-1)?.state === 'connected' ? true : undefined), 'the watcher sees it connected');
      assert.equal(calls, 3, 'built again after each failure');
      assert.deepEqual(reports.map((r) => r.kind), ['failing', 'recovered']);
      assert.equal(watched[0], undefined, 'nobody used the feed when the watcher came');
      await m.leave();
      assert.equal(watched.at(-1), undefined, 'the watcher is told when the last user left');
    } finally {
      await w.leave();
      await pool.close();
      client.close();
    }
  });

  it('approvers of one core client, by their own id or by a route, are told of each other, and of the change when one leaves', async () => {
    const registry = new ApproverRegistry();
    const told = new Map<string, string>();
    const approver = (id: string, clientId: string): ApproverEntry => ({ id, name: id.toUpperCase(), clientId, onOthers: (c, others) => told.set(id, `${c}|${others.map((o) => o.name).join(',')}`) });
    const a = registry.register(approver('a', 'cc-1'));
    registry.register(approver('b', ''));
    assert.equal(told.get('b'), '|', 'b watches nothing yet');
    const route = registry.route('cc-1', ['b']);
    assert.equal(told.get('a'), 'cc-1|B');
    assert.equal(told.get('b'), 'cc-1|A');
    await a.leave();
    assert.equal(told.get('b'), 'cc-1|');
    await route.leave();
    assert.equal(told.get('b'), '|');
    registry.close();
  });
});
