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
import { BASE_URL_ENV, DecisionCounter, deployCredentials, FLOW_IDS, startInstances, stopInstances, type Instance } from '../../bench/scale-out';
import { RedisServer } from '../helpers/redis-server';
import { sleep } from '../helpers/red-process';
import { catchNode, fileNode, functionNode } from '../helpers/flow-nodes';

const REDIS_PASSWORD = 'scale-out-payment-secret';

/** What an instance recorded: one line per output (`withdraw`) or error (`error`). */
interface PaymentLine {
  node: 'withdraw' | 'error';
  button: string;
  outcome?: string;
  tx_id?: string;
  status?: string;
  code?: string;
  message?: string;
}

/**
 * The flow: a button per key (`pay-<key>`), each building the same withdrawal body (demo
 * ETH-TESTNET wallet to its whitelisted address, `partner_txID` `<prefix>-<key>`) into one
 * custody-withdraw node; outputs and errors as JSON lines in `payments.jsonl`.
 */
function paymentFlows(sim: SimInfo, redisUrl: string, prefix: string, keys: string[]): object[] {
  const demo = sim.demo;
  const buttons = keys.flatMap((key, i) => [
    { id: `pay-${key}`, z: 'paytab', type: 'inject', name: `pay ${key}`, props: [{ p: 'payload' }, { p: 'topic', vt: 'str' }], topic: key, payload: '', payloadType: 'date', x: 120, y: 80 + 60 * i, wires: [[`body-${key}`]] },
    functionNode(
      `body-${key}`,
      `withdrawal ${key}`,
      `msg.payload = ${JSON.stringify({
        wallet_id: demo.wallets['ETH-TESTNET'].wallet_id,
        address: demo.whitelist['ETH-TESTNET'],
        benefit_of: 'Scale-out',
        account_no: 'SCALE',
        reference: `scale-out payment ${key}`,
        partner_txID: `${prefix}-${key}`,
        send: { symbol: 'ETH-TESTNET', amount: 1000 },
      })};\nreturn msg;`,
      { z: 'paytab', x: 300, y: 80 + 60 * i },
      ['withdraw'],
    ),
  ]);
  return [
    { id: 'paytab', type: 'tab', label: 'scale-out payment' },
    { id: FLOW_IDS.config, type: 'custody-config', name: 'scale-out', environment: 'custom', baseUrl: '${' + BASE_URL_ENV + '}', signingMode: 'timestamp', timeout: 30, coordination: 'redis', redisUrl, redisTls: false, redisKeyPrefix: 'custodyflow:', claimLeaseSeconds: 5 },
    ...buttons,
    { id: 'withdraw', z: 'paytab', type: 'custody-withdraw', connection: FLOW_IDS.config, operation: 'create', company_id: demo.company_id, expiresAfter: '3600', amountFormat: 'baseUnits', x: 500, y: 80, wires: [['recordOut']] },
    functionNode('recordOut', 'output line', 'msg.payload = { node: "withdraw", button: msg.topic, outcome: msg.outcome, tx_id: msg.payload && msg.payload.tx_id, status: msg.payload && msg.payload.status };\nreturn msg;', { z: 'paytab', x: 700, y: 80 }, ['payfile']),
    catchNode('paycatch', { z: 'paytab', x: 120, y: 300 }, ['recordErr']),
    functionNode('recordErr', 'error line', 'const e = msg.error || {};\nmsg.payload = { node: "error", button: msg.topic, outcome: msg.outcome, code: e.code, message: e.message };\nreturn msg;', { z: 'paytab', x: 300, y: 300 }, ['payfile']),
    fileNode('payfile', 'payments.jsonl', { z: 'paytab', x: 900, y: 80 }),
  ];
}

/** The lines of an instance's payments.jsonl. */
function paymentLines(instance: Instance): PaymentLine[] {
  const file = path.join(instance.red.userDir, 'payments.jsonl');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as PaymentLine) : [];
}

describe('scale-out: one payment sent from two Node-RED instances with one partner_txID', function () {
  this.timeout(300000);
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
    const flows = paymentFlows(sim, redis.url, prefix, ['together', 'after']);
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

  async function click(instance: Instance, key: string): Promise<void> {
    const res = await fetch(`${instance.red.base}/inject/pay-${key}`, { method: 'POST' });
    assert.equal(res.status, 200, `click ${key} on ${instance.name}`);
  }
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
    await Promise.all([click(a, 'together'), click(b, 'together')]);
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
    await click(a, 'after');
    const first = await lineOf(a, 'after');
    await click(b, 'after');
    const second = await lineOf(b, 'after');
    const made = await withdrawals('after');
    console.log(`      one after the other: a ${JSON.stringify(first)}; b ${JSON.stringify(second)}; withdrawals ${made.length}; POSTs at the API ${withdrawPosts().length}`);
    assert.equal(made.length, 1, 'one withdrawal at the simulator');
    assert.deepEqual([first.node, first.outcome, first.tx_id], ['withdraw', 'new', made[0].txID]);
    assert.deepEqual([second.node, second.outcome, second.tx_id], ['withdraw', 'existing', made[0].txID]);
    assert.equal(withdrawPosts().length, 2, 'one POST per partner_txID in all');
  });
});
