/**
 * Scale-out through Redis Sentinel, with the master killed mid-run (docs/scale-out.md "Sentinel",
 * "What happens at a failover"), all real parts: Debian's `redis-server` master (with a password)
 * and one replica, three `redis-sentinel` processes (with their own password) on loopback ports
 * (test/helpers/redis-sentinel.ts); the simulator in a child process, deduping transfers only
 * (`--dedupe transfers`: a second withdrawal with one partner_txID would be made, so none is the
 * shared submission journal's doing); three `node-red` processes with the same flows.json (the
 * config node reaching Redis through the sentinels, claim lease 5 s): the approver flow of
 * bench/scale-out.ts (core client feed -> custody-approver under a velocity count limit) and the
 * payment flow of test/helpers/scale-payments.ts (buttons -> custody-withdraw), each instance
 * talking to the simulator through its own port of the counting proxy (`DecisionCounter`).
 *
 * 1,000 transfers are created in batches, each with one pending action of the demo approver core
 * client; the rule approves up to {@link LIMIT}, the default decision rejects the rest. Once
 * {@link KILL_AT} decision calls reached the API, payments start: every {@link PAY_EVERY_MS} one
 * key's button is clicked on instances a and b at once; one second later the master is killed
 * (SIGKILL) and the sentinels promote the replica.
 *
 * Judged at the end: no action called twice; approvals at most the limit; every action decided,
 * none pending (the withdrawals made are actions of the core client too: rejected); for every payment key at most one withdrawal made and one POST, and each click
 * answered either with the payment (`new` or `existing`, its tx_id the one made) or refused as not
 * sent (`notSent`); never `outcomeUnknown`. Measured and printed, not asserted: the time from the
 * kill to the sentinels' promotion and to the decisions resuming (the end of the longest pause
 * between two decision calls around the kill).
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { simulatorCensus } from '../../bench/harness';
import { approverFlows, type Instance } from '../../bench/scale-out';
import { RedisSentinelSetup } from '../helpers/redis-sentinel';
import { sleep } from '../helpers/red-process';
import { clickPay, paymentLines, paymentNodes, type PaymentLine } from '../helpers/scale-payments';
import { auditTrail, createInBatches, SCALE_OUT, ScaleRun, tally, transferStatuses, untilAllDecided } from '../helpers/scale-runs';

const { actions: ACTIONS, limit: LIMIT, leaseSeconds: LEASE_SECONDS } = SCALE_OUT;
/** The master is killed once this many decision calls reached the API (payments start a second before). */
const KILL_AT = 300;
/** Payment keys, each clicked on instances a and b at once, one key every PAY_EVERY_MS. */
const PAY_KEYS = 40;
const PAY_EVERY_MS = 250;
const REDIS_PASSWORD = 'scale-out-failover-redis-secret';
const SENTINEL_PASSWORD = 'scale-out-failover-sentinel-secret';

describe('scale-out through Redis Sentinel: three Node-RED instances, the master killed mid-run', function () {
  // About 80 s on 2 cores (docs/testing.md); the wait for the last decisions ends after 120 s.
  this.timeout(240000);
  const run = new ScaleRun('cf-scale-failover-sim-');
  const prefix = `scale-failover-${process.pid}-${Date.now()}`;
  const setup = new RedisSentinelSetup({ password: REDIS_PASSWORD, sentinelPassword: SENTINEL_PASSWORD });

  after(async () => {
    await run.stop();
    await setup.stop();
  });

  it('decides each of 1,000 actions once within the velocity limit, and sends no payment twice, through a failover of the master', async () => {
    const t0 = Date.now();
    await setup.start();
    const { sim, counter, client } = await run.startSimulator(ACTIONS, 'transfers');
    const keys = Array.from({ length: PAY_KEYS }, (_, i) => `k${i}`);
    const approver = approverFlows({
      coordination: 'redis',
      redisMode: 'sentinel',
      redisSentinels: setup.sentinelList,
      redisMasterName: setup.masterName,
      leaseSeconds: LEASE_SECONDS,
      clientId: sim.demo.core_client_id,
      velocityCount: LIMIT,
    });
    const flows = [...approver, ...paymentNodes(sim, prefix, keys)];
    const instances = await run.startInstances(['a', 'b', 'c'], flows, { redisPassword: REDIS_PASSWORD, redisSentinelPassword: SENTINEL_PASSWORD });
    const ready = Date.now();

    // Payments from a second before the kill on; the kill once KILL_AT calls reached the API.
    const calls = counter.calls;
    const [a, b] = instances;
    let waiting = true;
    let callsAtKill = 0;
    let killedPerf = 0;
    const failover = (async () => {
      if (!(await run.whenCalls(KILL_AT, () => waiting))) return;
      const payments = (async () => {
        for (const key of keys) {
          await Promise.all([clickPay(a, key), clickPay(b, key)]);
          await sleep(PAY_EVERY_MS);
        }
      })();
      await sleep(1000);
      callsAtKill = calls.length;
      killedPerf = performance.now();
      await setup.killMaster();
      await setup.waitForNewMaster();
      await payments;
    })();
    failover.catch(() => undefined);

    const txIds = await createInBatches(client, sim, ACTIONS, 50, 200, `failover-${process.pid}-`);
    let pending = await untilAllDecided(counter, client, sim, instances, ACTIONS, 120_000);
    waiting = false;
    await failover;
    const decided = Date.now();
    // Every click answered on both instances (an output or an error line per key), 30 s at most.
    const answered = (i: Instance) => new Set(paymentLines(i).map((l) => l.button)).size >= keys.length;
    for (const deadline = Date.now() + 30000; !(answered(a) && answered(b)) && Date.now() < deadline; ) await sleep(200);
    // Late double calls would come within a lease or two: wait that long before counting.
    await sleep(2 * LEASE_SECONDS * 1000);
    pending = await untilAllDecided(counter, client, sim, instances, ACTIONS, 0);

    // Decisions.
    const statuses = await transferStatuses(client, sim, txIds);
    const { byAction, twice, approvals, rejections, refused } = tally(counter);
    // The pause around the kill: the longest gap between two calls from a second before the kill on.
    const around = calls.filter((c) => c.at >= killedPerf - 1000);
    let gap = { from: killedPerf, to: killedPerf };
    for (let k = 1; k < around.length; k++) if (around[k].at - around[k - 1].at > gap.to - gap.from) gap = { from: around[k - 1].at, to: around[k].at };
    const firstAfterKill = calls.find((c) => c.at > killedPerf);

    // Payments.
    const census = await simulatorCensus(run.child!, `${prefix}-`);
    const withdrawPosts = counter.writes.filter((w) => w.method === 'POST' && /\/withdraw\/?$/.test(w.path));
    const linesOf = new Map(instances.slice(0, 2).map((i) => [i.name, paymentLines(i)]));
    const kinds = new Map<string, number>();
    const wrong: string[] = [];
    for (const key of keys) {
      const made = census.withdrawals.filter((w) => w.partner_txID === `${prefix}-${key}`);
      const lines = instances.slice(0, 2).flatMap((i) => linesOf.get(i.name)!.filter((l) => l.button === key).map((l) => ({ instance: i.name, ...l })));
      const kind = lines.map((l) => (l.node === 'withdraw' ? l.outcome : `${l.outcome ?? ''}/${l.code ?? ''}`)).sort().join(' + ');
      kinds.set(`${made.length} made: ${kind}`, (kinds.get(`${made.length} made: ${kind}`) ?? 0) + 1);
      const sentOnce = (l: PaymentLine) => l.node === 'withdraw' && (l.outcome === 'new' || l.outcome === 'existing') && made.length === 1 && l.tx_id === made[0].txID;
      const notSent = (l: PaymentLine) => l.node === 'error' && (l.outcome === 'notSent' || l.code === 'ECOORDINATION');
      if (made.length > 1) wrong.push(`${key}: ${made.length} withdrawals`);
      if (lines.length !== 2) wrong.push(`${key}: ${lines.length} answers on a and b (one each expected): ${JSON.stringify(lines)}`);
      for (const l of lines) if (!sentOnce(l) && !notSent(l)) wrong.push(`${key} on ${l.instance}: neither sent once nor refused as not sent: ${JSON.stringify(l)} (withdrawals ${made.length})`);
      if (lines.filter((l) => l.outcome === 'new').length > 1) wrong.push(`${key}: answered new twice`);
    }

    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const summary = [
      `scale-out failover: ${ACTIONS} actions, limit ${LIMIT}, lease ${LEASE_SECONDS} s; master killed at ${callsAtKill} calls`,
      `kill -> promotion by the sentinels ${s(setup.promotedAt - setup.killedAt)}; kill -> first decision call after it ${firstAfterKill ? s(firstAfterKill.at - killedPerf) : '-'}; longest pause of the decisions ${s(gap.to - gap.from)}, from ${s(gap.from - killedPerf)} to ${s(gap.to - killedPerf)} after the kill (decisions resumed)`,
      `API: ${calls.length} decision calls on ${byAction.size} actions (${ACTIONS} transfers, ${census.withdrawals.length} withdrawals) (${approvals} approvals, ${rejections} rejections, ${refused.length} not 2xx); called twice or more: ${twice.length}; pending at the end: ${pending}`,
      `transfers: ${Array.from(statuses.entries()).map(([k, n]) => `${k} ${n}`).join(', ')}`,
      `payments: ${keys.length} keys clicked on a and b; ${census.withdrawals.length} withdrawals made, ${withdrawPosts.length} POSTs at the API; per key: ${Array.from(kinds.entries()).map(([k, n]) => `${n}x ${k}`).join('; ')}`,
      `time: start ${s(ready - t0)}, all decided ${s(decided - ready)} after the start, run ${s(Date.now() - t0)}`,
      ...instances.map((i) => `${i.name} said: ${i.red.log.split('\n').filter((l) => /coordination|failover|master/i.test(l)).slice(0, 8).join('\n        ')}`),
    ];
    console.error(`      ${summary.join('\n      ')}`);
    if (twice.length > 0) console.error(`      the audit stream on the actions called twice:\n        ${(await auditTrail(setup.masterPort, REDIS_PASSWORD, twice.slice(0, 3).map(([id]) => id))).join('\n        ')}`);

    assert.equal(txIds.length, ACTIONS);
    assert.equal(twice.length, 0, `actions called more than once: ${JSON.stringify(twice.slice(0, 5).map(([id, l]) => [id, l.map((c) => `${c.instance} ${c.method} ${c.status} at ${s(c.at - killedPerf)} after the kill`)]))}`);
    assert.ok(approvals <= LIMIT, `approvals at the API: ${approvals}, at most the velocity limit ${LIMIT}`);
    // Each withdrawal made is an action of the demo approver core client too (rejected by the rule).
    assert.equal(byAction.size, ACTIONS + census.withdrawals.length, `actions decided at the API: ${byAction.size} of ${ACTIONS} transfers and ${census.withdrawals.length} withdrawals`);
    assert.equal(refused.length, 0, `calls not accepted: ${JSON.stringify(refused.slice(0, 5))}`);
    assert.equal(pending, 0, 'no action left pending');
    assert.equal(rejections, ACTIONS + census.withdrawals.length - approvals);
    assert.deepEqual(Object.fromEntries(statuses), { approved_transfer: approvals, custody_rejected_transfer: ACTIONS - approvals });
    assert.ok(setup.promotedAt > setup.killedAt, 'the sentinels promoted the replica');
    assert.deepEqual(wrong, [], 'every payment sent once or refused as not sent');
    assert.equal(withdrawPosts.length, census.withdrawals.length, 'each withdrawal POST that reached the API made one withdrawal');
    assert.ok(withdrawPosts.every((w) => w.status !== undefined && w.status < 300), `withdrawal POSTs refused: ${JSON.stringify(withdrawPosts.filter((w) => !(w.status! < 300)))}`);
  });
});
