/**
 * The same payment sent from two Node-RED instances with one `partner_txID` makes one transaction
 * (docs/scale-out.md "What is shared, and what is not": the submission journal), with real parts: a
 * `redis-server` (with a password), the simulator in a child process deduping transfers only
 * (`--dedupe transfers`: a second withdrawal with the same partner_txID would be made, so one
 * withdrawal is the shared submission journal's doing), and two `node-red` processes with the same
 * flows.json (buttons -> custody-withdraw, coordination redis), each with its own user directory
 * and file journal, talking to the simulator through its own port of the counting proxy
 * (bench/scale-out.ts `DecisionCounter`), so every POST that reached the API is counted.
 *
 * - At once: the same button clicked on both instances together: one withdrawal; one instance
 *   answered `new`, the other `existing` with the same tx_id.
 * - One after the other: clicked on `a`, answered; then on `b`: `existing` from the journal,
 *   nothing sent.
 * Each instance's outputs and errors are appended to `payments.jsonl` in its user directory.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { simulatorCensus, startSimulatorProcess, stopSimulatorProcess, type SimInfo } from '../../bench/harness';
import { coordinationSettings, DecisionCounter, deployCredentials, startInstances, stopInstances, type Instance } from '../../bench/scale-out';
import { RedisServer } from '../helpers/redis-server';
import { sleep } from '../helpers/red-process';
import { clickPay, paymentFlows, paymentLines, type PaymentLine } from '../helpers/scale-payments';

const REDIS_PASSWORD = 'scale-out-payment-secret';

describe('scale-out: one payment sent from two Node-RED instances with one partner_txID', function () {
  // About 20 s on 2 cores (docs/testing.md).
  this.timeout(120000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-scale-pay-sim-'));
  const prefix = `scale-pay-${process.pid}-${Date.now()}`;
  const redis = new RedisServer();
  let child: ChildProcess | undefined;
  let sim: SimInfo;
  let counter: DecisionCounter | undefined;
  let instances: Instance[] = [];

  before(async () => {
    await redis.start(['--requirepass', REDIS_PASSWORD]);
    ({ child, sim } = await startSimulatorProcess(dataDir, false, 'transfers'));
    counter = new DecisionCounter(sim.baseUrl);
    const flows = paymentFlows(sim, coordinationSettings({ coordination: 'redis', redisUrl: redis.url }), prefix, ['together', 'after']);
    instances = await startInstances(['a', 'b'], flows, counter);
    for (const i of instances) await deployCredentials(i, flows, { apiKey: sim.apiKey, privateKey: sim.privateKeyPem, redisPassword: REDIS_PASSWORD });
    await sleep(500);
  });
  after(async () => {
    await stopInstances(instances);
    await counter?.stop();
    if (child) await stopSimulatorProcess(child);
    await redis.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The line of `key` on `instance`, once there (30 s at most). */
  async function lineOf(instance: Instance, key: string): Promise<PaymentLine> {
    const deadline = Date.now() + 30000;
    for (;;) {
      const line = paymentLines(instance).find((l) => l.button === key);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`no output of ${key} on ${instance.name}:\n${instance.red.log.slice(-3000)}`);
      await sleep(100);
    }
  }
  /** POSTs of a withdrawal that reached the simulator. */
  const withdrawPosts = () => counter!.writes.filter((w) => w.method === 'POST' && /\/withdraw\/?$/.test(w.path));
  const withdrawals = async (key: string) => (await simulatorCensus(child!, `${prefix}-${key}`)).withdrawals;

  it('clicked on both at once: one withdrawal, answered new on one instance and existing on the other', async () => {
    const [a, b] = instances;
    await Promise.all([clickPay(a, 'together'), clickPay(b, 'together')]);
    const lines = [await lineOf(a, 'together'), await lineOf(b, 'together')];
    const made = await withdrawals('together');
    console.log(`      at once: a ${JSON.stringify(lines[0])}; b ${JSON.stringify(lines[1])}; withdrawals ${made.length}; POSTs at the API ${withdrawPosts().length}`);
    assert.equal(made.length, 1, 'one withdrawal at the simulator');
    assert.equal(withdrawPosts().length, 1, 'one POST reached the API');
    assert.deepEqual(lines.map((l) => l.node), ['withdraw', 'withdraw'], JSON.stringify(lines));
    assert.deepEqual(lines.map((l) => l.outcome).sort(), ['existing', 'new']);
    assert.deepEqual(lines.map((l) => l.tx_id), [made[0].txID, made[0].txID]);
  });

  it('clicked on one, then on the other: existing from the shared journal, nothing sent again', async () => {
    const [a, b] = instances;
    await clickPay(a, 'after');
    const first = await lineOf(a, 'after');
    await clickPay(b, 'after');
    const second = await lineOf(b, 'after');
    const made = await withdrawals('after');
    console.log(`      one after the other: a ${JSON.stringify(first)}; b ${JSON.stringify(second)}; withdrawals ${made.length}; POSTs at the API ${withdrawPosts().length}`);
    assert.equal(made.length, 1, 'one withdrawal at the simulator');
    assert.deepEqual([first.node, first.outcome, first.tx_id], ['withdraw', 'new', made[0].txID]);
    assert.deepEqual([second.node, second.outcome, second.tx_id], ['withdraw', 'existing', made[0].txID]);
    assert.equal(withdrawPosts().length, 2, 'one POST per partner_txID in all');
  });
});
