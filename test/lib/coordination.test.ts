/**
 * Coordination through Redis (docs/scale-out.md) in lib, with real parts: a real redis-server
 * (test/helpers/redis-server.ts), the simulator over real sockets, and three lib `Approver`s, each
 * with its own `Coordinator`, audit file and client, standing for three Node-RED instances on one
 * API key. Every approver is handed every action (as three feeds would deliver it):
 * - each action is decided once: one approve or reject call per action, the others skip it;
 * - a velocity count limit holds across the three together;
 * - a claim whose holder died is taken over after its lease (the action read first);
 * - Redis stopped: the approvers hold (nothing is called), and decide once it is back;
 * - Redis restarted without its data: what was decided is written back, nothing is decided twice;
 * - every decision of every instance is in the one audit stream;
 * - the decisions of one asset go in batches (one window read and one reserve each), and an
 *   amount limit holds exactly as in a one-at-a-time order.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { getAction, type CustodyClient } from '../../lib';
import { Approver, compileRules, type ApprovalRule, type ApproverOutcome } from '../../lib/approver';
import { Coordinator } from '../../lib/coordination';
import type { Simulator } from '../../simulator';
import { accountClient, simulatedSuite } from '../helpers/simulated';
import { closedAfterEach, pendingTransferActions, tempDirPerSuite } from '../helpers/support';
import { RedisServer } from '../helpers/redis-server';
import { sleep } from '../helpers/red-process';
import { RedisVelocityWindows } from '../../lib/approver/velocity-redis';

const CLIENT = 'demo-approver';

describe('coordination through Redis (lib): three approvers on one API key', function () {
  this.timeout(120000);
  const redis = new RedisServer();
  before(() => redis.start());
  after(() => redis.stop());
  let sim: Simulator;
  simulatedSuite('cf-coord-', {}, (s) => {
    sim = s.sim;
  });
  const dir = tempDirPerSuite('cf-coord-audit-');
  const open = closedAfterEach();

  /** Three instances: each a coordinator (its own connection and name), a client and an approver with its own audit file. */
  async function instances(rules: ApprovalRule[], opts: { leaseMs?: number; prefix: string; n?: number }): Promise<Array<{ coord: Coordinator; approver: Approver; client: CustodyClient; audit: string }>> {
    const out = [];
    for (let i = 0; i < (opts.n ?? 3); i++) {
      const coord = new Coordinator({ url: redis.url, keyPrefix: opts.prefix, leaseMs: opts.leaseMs ?? 5000, instance: `instance-${i}` });
      const client = accountClient(sim);
      const audit = path.join(dir(), `${opts.prefix.replace(/\W/g, '')}-${i}.jsonl`);
      const approver = await Approver.open({ rules: compileRules(rules), defaultDecision: 'reject', auditFile: audit, client: async () => client, approverId: 'approver-1', coordinator: coord });
      open.push(coord, { close: () => client.close() }, approver);
      out.push({ coord, approver, client, audit });
    }
    await Promise.all(out.map((o) => o.coord.whenReady()));
    return out;
  }

  /** Create `n` transfers that need demo-approver's decision; return their pending actions (with details, as the feed sends them). */
  async function pendingActions(n: number, amount = 1000): Promise<any[]> {
    const client = accountClient(sim);
    try {
      return await pendingTransferActions(client, sim, n, amount, CLIENT);
    } finally {
      await client.close();
    }
  }

  /** The status of each action in the simulator. */
  async function statuses(actions: any[]): Promise<string[]> {
    const client = accountClient(sim);
    try {
      return await Promise.all(actions.map(async (a) => String((await getAction(client, { client_id: CLIENT, action_id: a.action_id })).data.status)));
    } finally {
      await client.close();
    }
  }

  /** Outcomes that called the API (an approve or reject answered, or failed). */
  const calls = (outcomes: ApproverOutcome[]) => outcomes.filter((o) => o.statusCode !== undefined || o.error);

  it('each action is decided once across the instances, and a velocity count limit holds for them together', async () => {
    const rules: ApprovalRule[] = [{ name: 'ten per day', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityCount: '10', velocityWindowHours: '24' }];
    const nodes = await instances(rules, { prefix: 'cf-t1:' });
    const actions = await pendingActions(30);
    // Every instance is handed every action, in its own order, all at once.
    const outcomes = await Promise.all(nodes.flatMap((n, i) => actions.map((_, k) => n.approver.decide(actions[(k + i * 7) % actions.length]))));
    const made = calls(outcomes);
    assert.equal(made.filter((o) => o.error).length, 0, `no call failed: ${made.filter((o) => o.error).map((o) => o.error!.message).join('; ')}`);
    assert.equal(made.length, actions.length, 'one approve-or-reject call per action');
    assert.deepEqual(new Set(made.map((o) => o.decision.action_id)).size, actions.length);
    assert.equal(outcomes.filter((o) => o.output === 'skipped').length, 2 * actions.length, 'the two other instances skip each action');
    assert.equal(made.filter((o) => o.output === 'approved').length, 10, 'the velocity count limit (10) held across the three instances');
    const st = await statuses(actions);
    assert.equal(st.filter((x) => x === 'pending').length, 0);
    // One audit stream with every decision and result line of the three instances.
    const lines = nodes.reduce((n, x) => n + fs.readFileSync(x.audit, 'utf8').split('\n').filter(Boolean).length, 0);
    await Promise.all(nodes.map((n) => n.coord.drainAudit()));
    const len = await nodes[0].coord.run((r) => r.xlen('cf-t1:audit'));
    assert.equal(len, lines, 'the stream holds every audit line of every instance');
  });

  it('a claim whose holder died is taken over after its lease: the action is read first, then decided once', async () => {
    const [a, b] = await instances([{ name: 'all', decision: 'approve', actionTypes: ['ApproveTransfer'] }], { prefix: 'cf-t2:', leaseMs: 1500, n: 2 });
    const [action] = await pendingActions(1);
    // An instance that claimed the action and died before deciding it.
    const dead = await a.coord.claim(`live:${CLIENT}:${action.action_id}`, 'dead-instance-claim');
    assert.equal(dead.kind, 'claimed');
    const started = Date.now();
    const outcome = await b.approver.decide(action);
    assert.ok(Date.now() - started >= 1000, 'it waited for the lease');
    assert.equal(outcome.output, 'approved');
    assert.equal(outcome.statusCode !== undefined, true);
    assert.deepEqual(await statuses([action]), ['approved']);
    // The holder comes back after all: the action is decided, it skips it.
    const again = await a.approver.decide(action);
    assert.equal(again.output, 'skipped');
    assert.equal(again.decision.decidedBy, 'instance-1', JSON.stringify(again));
  });

  it('a takeover of an action its dead holder had already approved calls nothing', async () => {
    const [a, b] = await instances([{ name: 'all', decision: 'approve', actionTypes: ['ApproveTransfer'] }], { prefix: 'cf-t3:', leaseMs: 1500, n: 2 });
    const [action] = await pendingActions(1);
    await a.coord.claim(`live:${CLIENT}:${action.action_id}`, 'dead-instance-claim');
    // It approved, then died before writing "decided".
    const raw = accountClient(sim);
    await raw.request('PUT', `/coreclient/${CLIENT}/action/${action.action_id}`).finally(() => raw.close());
    const outcome = await b.approver.decide(action);
    assert.equal(outcome.output, 'skipped');
    assert.equal(outcome.statusCode, undefined, 'nothing called');
    assert.match(outcome.decision.reasons.join(' '), /not pending: decided before/);
  });

  it('Redis down: the approvers hold (nothing called) and decide once it is back, each action once', async () => {
    const nodes = await instances([{ name: 'all', decision: 'approve', actionTypes: ['ApproveTransfer'] }], { prefix: 'cf-t4:', leaseMs: 2000 });
    const actions = await pendingActions(6);
    await redis.stop({ kill: true });
    await until(() => nodes.every((n) => n.coord.state === 'down'), 'the coordinators see Redis down');
    const waits: string[] = [];
    const pending = Promise.all(nodes.flatMap((n) => actions.map((a) => n.approver.decide(a))));
    await sleep(1500);
    assert.deepEqual(await statuses(actions), actions.map(() => 'pending'), 'nothing approved while Redis is down');
    await redis.start();
    const outcomes = await pending;
    void waits;
    const made = calls(outcomes);
    assert.equal(made.length, actions.length, 'one call per action once Redis is back');
    assert.equal(made.filter((o) => o.error).length, 0);
    assert.deepEqual(await statuses(actions), actions.map(() => 'approved'));
  });

  it('Redis restarted without its data: decided actions are written back, a re-sent action is not decided twice', async () => {
    const nodes = await instances([{ name: 'all', decision: 'approve', actionTypes: ['ApproveTransfer'], velocityCount: '100' }], { prefix: 'cf-t5:', leaseMs: 1500 });
    const actions = await pendingActions(4);
    const first = await Promise.all(actions.map((a) => nodes[0].approver.decide(a)));
    assert.equal(calls(first).length, 4);
    await redis.restart(200);
    await until(() => nodes.every((n) => n.coord.state === 'ready'), 'the coordinators past their recovery', 20000);
    // Every instance is handed the actions again (a feed reconnect re-sends what it saw).
    const again = await Promise.all(nodes.slice(1).flatMap((n) => actions.map((a) => n.approver.decide(a))));
    assert.equal(calls(again).length, 0, 'nothing decided twice');
    assert.ok(again.every((o) => o.output === 'skipped'));
    // The velocity window came back too: the four approvals count.
    const window = await new RedisVelocityWindows(nodes[1].coord, 'approver-1', 'live', 3600_000).read('BTC-TESTNET', Date.now());
    assert.equal(window.usage(3600_000, Date.now()).count, 4);
  });

  it('decisions of one asset are evaluated and reserved in batches, with the outcome of a one-at-a-time order: an amount limit holds exactly', async () => {
    // 0.0001001 BTC-TESTNET (10,010 base units) a day, in actions of 1,001 (1,000 and the fee): exactly ten fit, whatever the batches.
    const rules: ApprovalRule[] = [{ name: 'ten a day by amount', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityAmount: '0.0001001', velocityWindowHours: '24' }];
    const [one] = await instances(rules, { prefix: 'cf-t6:', n: 1 });
    const actions = await pendingActions(40, 1000);
    const stats = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await one.coord.run((r) => r.info('commandstats')))?.[1] ?? 0);
    const before = await stats();
    const outcomes = await Promise.all(actions.map((a) => one.approver.decide(a)));
    const scripts = (await stats()) - before;
    assert.equal(outcomes.filter((o) => o.output === 'approved').length, 10, `the amount limit held exactly: ${JSON.stringify(outcomes.map((o) => [o.output, o.decision.reasons.join('; ')]).slice(0, 3))}`);
    assert.equal(outcomes.filter((o) => o.output === 'rejected').length, 30);
    const window = await new RedisVelocityWindows(one.coord, 'approver-1', 'live', 24 * 3600_000).read('BTC-TESTNET', Date.now());
    assert.deepEqual(window.usage(24 * 3600_000, Date.now()), { sum: 10010n, count: 10 });
    // Per decision: a claim, a renew and a decided record (3 scripts); a read and a reserve per
    // decision would add 2 more each (162 counted with batches of one). Batched: 118 here.
    assert.ok(scripts < 3 * actions.length + actions.length / 2, `window scripts batched: ${scripts} script calls for ${actions.length} decisions`);
  });
});

/** Poll `check` every 50 ms until true. @throws after `ms`. */
async function until(check: () => boolean, what: string, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(50);
  }
}
