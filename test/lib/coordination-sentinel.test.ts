/**
 * Coordination through Redis Sentinel in lib (docs/scale-out.md "Sentinel"), with real parts:
 * Debian's `redis-server` master and replica and three `redis-sentinel` processes on loopback
 * ports (test/helpers/redis-sentinel.ts), with a Redis password and a sentinel password; the
 * simulator over real sockets; lib `Coordinator`s and `Approver`s in this process.
 * - A coordinator reaches the master through the sentinels; when the master is killed (SIGKILL) it
 *   goes down, reconnects to the replica the sentinels promote, and reports the failover (event,
 *   count, master and since when), handled like a data loss: `recovering` for one lease, then `ready`.
 * - Three approvers, each with its own coordinator (three instances), handed every action while
 *   the master is killed: each action decided once, approvals within the velocity count limit,
 *   every action decided by the end.
 * The setup is started afresh for each test (a killed master stays dead).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { getAction } from '../../lib';
import { Approver, compileRules, type ApprovalRule, type ApproverOutcome } from '../../lib/approver';
import { Coordinator, type CoordinationState, type FailoverInfo } from '../../lib/coordination';
import { accountClient, simulatedSuite } from '../helpers/simulated';
import { closedAfterEach, pendingTransferActions, tempDirPerSuite } from '../helpers/support';
import { RedisSentinelSetup } from '../helpers/redis-sentinel';
import { sleep } from '../helpers/red-process';

const CLIENT = 'demo-approver';
const PASSWORD = 'sentinel-test-redis-secret';
const SENTINEL_PASSWORD = 'sentinel-test-sentinel-secret';

describe('coordination through Redis Sentinel (lib): a failover of the master', function () {
  this.timeout(90000);
  let setup: RedisSentinelSetup;
  const s = simulatedSuite('cf-coord-sentinel-');
  const dir = tempDirPerSuite('cf-coord-sentinel-audit-');
  const open = closedAfterEach();

  beforeEach(async () => {
    setup = new RedisSentinelSetup({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
    await setup.start();
  });
  afterEach(() => setup.stop());

  /** A coordinator through the setup's sentinels (lease 1 s: the recovery after a failover is short). */
  function coordinator(instance: string, prefix: string): Coordinator {
    const coord = new Coordinator({ sentinels: setup.sentinels, masterName: setup.masterName, password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD, keyPrefix: prefix, leaseMs: 1000, instance });
    open.push(coord);
    return coord;
  }

  it('connects to the master through the sentinels; after the master is killed, reconnects to the promoted replica and reports the failover', async () => {
    const coord = coordinator('sentinel-1', 'cf-s1:');
    await coord.whenReady();
    const firstMaster = `127.0.0.1:${setup.master.port}`;
    assert.equal(coord.mode, 'sentinel');
    assert.equal(coord.master, firstMaster);
    assert.equal(coord.failovers, 0);
    assert.ok(coord.masterSince > 0 && coord.masterSince <= Date.now());
    await coord.run((r) => r.set(coord.key('before'), 'written before the failover'));

    const states: CoordinationState[] = [];
    const said: string[] = [];
    const failovers: FailoverInfo[] = [];
    coord.on('state', (st: CoordinationState, reason?: string) => {
      states.push(st);
      said.push(`${Date.now() - setup.killedAt} ms ${st}${reason ? ` (${reason})` : ''}`);
    });
    coord.on('failover', (f: FailoverInfo) => failovers.push(f));
    await setup.killMaster();
    await until(() => coord.state === 'down', 'the coordinator sees the master gone', 10000);
    await assert.rejects(coord.run((r) => r.get(coord.key('before'))), { code: 'ECOORDINATION' }, 'nothing runs while no master answers');
    const promoted = await setup.waitForNewMaster();
    assert.equal(promoted, setup.replica.port, 'the sentinels promoted the replica');
    const seen = () => `state ${coord.state} (${coord.reason}), master ${coord.master}, failovers ${coord.failovers}; since the kill: ${said.join('; ')}`;
    await until(() => failovers.length > 0, 'the failover event', 20000, seen);
    const recoveringAt = Date.now();
    await until(() => coord.state === 'ready', 'ready after one lease', 10000, seen);
    console.error(`      master killed -> promoted by the sentinels ${setup.promotedAt - setup.killedAt} ms -> the coordinator on the new master ${failovers[0].at - setup.killedAt} ms -> ready ${Date.now() - setup.killedAt} ms`);

    assert.equal(failovers.length, 1);
    assert.deepEqual(failovers[0], { from: firstMaster, to: `127.0.0.1:${promoted}`, at: failovers[0].at });
    assert.ok(failovers[0].at >= setup.killedAt);
    assert.equal(coord.failovers, 1);
    assert.equal(coord.master, `127.0.0.1:${promoted}`);
    assert.equal(coord.masterSince, failovers[0].at);
    assert.ok(coord.lostAt >= setup.killedAt, 'the failover is taken as a data loss');
    // down, then recovering (no new claim for one lease), then ready.
    const after = states.slice(states.indexOf('down'));
    assert.deepEqual(after.filter((st, i) => st !== after[i - 1]), ['down', 'recovering', 'ready'], `states: ${states.join(', ')}`);
    assert.ok(Date.now() - recoveringAt <= 5000);
    // The replica had the write (replication on loopback is quick); the connection writes to the new master.
    assert.equal(await coord.run((r) => r.get(coord.key('before'))), 'written before the failover');
    await coord.run((r) => r.set(coord.key('after'), 'written after the failover'));
  });

  it('three approvers deciding while the master is killed: each action decided once, approvals within the velocity count limit, all decided', async () => {
    const N = 45;
    const LIMIT = 20;
    const rules: ApprovalRule[] = [{ name: `${LIMIT} per day`, decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityCount: String(LIMIT), velocityWindowHours: '24' }];
    const nodes: Array<{ coord: Coordinator; approver: Approver }> = [];
    for (let i = 0; i < 3; i++) {
      const coord = coordinator(`instance-${i}`, 'cf-s2:');
      const client = accountClient(s.sim);
      const approver = await Approver.open({ rules: compileRules(rules), defaultDecision: 'reject', auditFile: path.join(dir(), `s2-${i}.jsonl`), client: async () => client, approverId: 'approver-sentinel', coordinator: coord });
      open.push(coord, { close: async () => client.close() }, approver);
      nodes.push({ coord, approver });
    }
    await Promise.all(nodes.map((n) => n.coord.whenReady()));
    const actions = await pendingActions(N);

    // Each instance is handed every action, one after the other in its own order (as its feed
    // delivers them); the master is killed once a third of the actions were called.
    const outcomes: ApproverOutcome[] = [];
    /** When each call's outcome came back, epoch ms. */
    const calledAt: number[] = [];
    const called = () => calledAt.length;
    const work = nodes.map(async (n, i) => {
      for (let k = 0; k < N; k++) {
        const o = await n.approver.decide(actions[(k + i * 13) % N]);
        outcomes.push(o);
        if (o.statusCode !== undefined || o.error) calledAt.push(Date.now());
      }
    });
    while (called() < N / 3) await sleep(5);
    const calledAtKill = called();
    await setup.killMaster();
    await setup.waitForNewMaster();
    await Promise.all(work);

    const made = outcomes.filter((o) => o.statusCode !== undefined || o.error);
    const ids = made.map((o) => o.decision.action_id);
    const st = await statuses(actions);
    const resumed = calledAt.find((at) => at > setup.promotedAt);
    console.error(`      ${N} actions, limit ${LIMIT}: ${calledAtKill} called when the master was killed; promoted ${setup.promotedAt - setup.killedAt} ms after the kill, first call answered after it ${resumed ? resumed - setup.killedAt : '-'} ms after the kill; ${made.length} calls, ${made.filter((o) => o.output === 'approved').length} approvals; failovers seen ${nodes.map((n) => n.coord.failovers).join(', ')}`);
    assert.equal(made.filter((o) => o.error).length, 0, `no call failed: ${made.filter((o) => o.error).map((o) => o.error!.message).join('; ')}`);
    assert.equal(new Set(ids).size, ids.length, `an action called twice: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);
    assert.equal(ids.length, N, 'every action called once');
    assert.equal(st.filter((x) => x === 'pending').length, 0, 'nothing left pending');
    assert.ok(st.filter((x) => x === 'approved').length <= LIMIT, `approved ${st.filter((x) => x === 'approved').length}, at most the limit ${LIMIT}`);
    assert.ok(nodes.every((n) => n.coord.failovers === 1 && n.coord.master === `127.0.0.1:${setup.masterPort}`), 'every coordinator is on the new master');
  });

  /** Create `n` transfers that need demo-approver's decision; their pending actions with details (as the feed sends them). */
  async function pendingActions(n: number): Promise<Array<Record<string, unknown>>> {
    const client = accountClient(s.sim);
    try {
      return await pendingTransferActions(client, s.sim, n, 1000, CLIENT);
    } finally {
      await client.close();
    }
  }

  /** The status of each action at the simulator. */
  async function statuses(actions: Array<Record<string, unknown>>): Promise<string[]> {
    const client = accountClient(s.sim);
    try {
      return await Promise.all(actions.map(async (a) => String((await getAction(client, { client_id: CLIENT, action_id: String(a.action_id) })).data.status)));
    } finally {
      await client.close();
    }
  }
});

/** Poll `check` every 20 ms until true. @throws after `ms`, with what `seen` says. */
async function until(check: () => boolean, what: string, ms: number, seen: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}${seen() ? `; ${seen()}` : ''}`);
    await sleep(20);
  }
}
