/**
 * `npm run bench`: signed transfer requests per second against the simulator, made through a
 * `custody-transfer` node (in the real Node-RED runtime, via node-red-node-test-helper) and
 * made directly with lib, in one run, with the same concurrency. Rounds alternate (lib, node,
 * lib, node, ...) so both see the same simulator state; the median of each side is reported
 * with the ratio. Environment: BENCH_TRANSFERS (per round, default 400), BENCH_ROUNDS
 * (default 3), BENCH_CONCURRENCY (default 16).
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { CustodyClient, createTransfer, TransferRequest } from '../lib';
import type { DemoDataset } from '../simulator';

const N = Number(process.env.BENCH_TRANSFERS) || 400;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 3;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY) || 16;

interface SimInfo {
  baseUrl: string;
  apiKey: string;
  privateKeyPem: string;
  demo: DemoDataset;
}

let seq = 0;
function body(demo: DemoDataset): TransferRequest & { company_id: string } {
  return {
    company_id: demo.company_id,
    wallet_id: demo.wallets['BTC-TESTNET'].wallet_id,
    counterparty_wallet_address: demo.counterparty.wallets['BTC-TESTNET'].wallet_id,
    expires: Math.floor(Date.now() / 1000) + 3600,
    benefit_of: 'Bench',
    account_no: 'BENCH',
    reference: 'benchmark',
    partner_txID: `bench-${process.pid}-${++seq}`,
    send: { symbol: 'BTC-TESTNET', amount: 1 },
  };
}

/** Run `n` calls of `one` with `CONCURRENCY` in flight; returns requests per second. */
async function measure(n: number, one: () => Promise<void>): Promise<number> {
  let started = 0;
  const t0 = process.hrtime.bigint();
  async function worker(): Promise<void> {
    while (started < n) {
      started++;
      await one();
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return n / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-'));
  const child = fork(path.join(__dirname, 'simulator-process.js'), [dataDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const sim = await new Promise<SimInfo>((resolve, reject) => {
    child.once('message', (m) => resolve(m as SimInfo));
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });

  // lib, directly.
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
  const viaLib = () => createTransfer(client, body(sim.demo)).then(() => undefined);

  // The custody-transfer node in the Node-RED runtime, configured like a user would: custom URL + credentials.
  helper.init(require.resolve('node-red'));
  await new Promise<void>((r) => helper.startServer(r));
  await helper.load(
    [require('../nodes/custody-config/custody-config'), require('../nodes/custody-transfer/custody-transfer')],
    [
      { id: 'tab', type: 'tab', label: 'bench' },
      { id: 'cfg', z: 'tab', type: 'custody-config', environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: 30 },
      { id: 'tx', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', company_id: sim.demo.company_id, wires: [['out']] },
      { id: 'out', z: 'tab', type: 'helper' },
    ],
    { cfg: { apiKey: sim.apiKey, privateKey: sim.privateKeyPem } },
  );
  const txNode = helper.getNode('tx');
  const out = helper.getNode('out');
  const waiting = new Map<string, () => void>();
  let failures = 0;
  out.on('input', (msg: { _msgid: string; payload: { status: string } }) => {
    if (msg.payload.status !== 'new') failures++;
    waiting.get(msg._msgid)?.();
    waiting.delete(msg._msgid);
  });
  txNode.on('call:error', (call: { args: [unknown, { _msgid?: string } | undefined] }) => {
    failures++;
    if (failures === 1) console.error('first failure:', String(call.args[0]));
    const id = call.args[1]?._msgid ?? '';
    waiting.get(id)?.();
    waiting.delete(id);
  });
  let msgSeq = 0;
  const viaNode = () =>
    new Promise<void>((resolve) => {
      const _msgid = `bench-msg-${++msgSeq}`;
      waiting.set(_msgid, resolve);
      const { company_id, ...payload } = body(sim.demo);
      void company_id;
      txNode.receive({ _msgid, payload });
    });

  // Warm up both paths (connections, JIT), then alternate measured rounds.
  await measure(50, viaLib);
  await measure(50, viaNode);
  const lib: number[] = [];
  const node: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    lib.push(await measure(N, viaLib));
    node.push(await measure(N, viaNode));
    console.log(`round ${r + 1}: lib ${lib[r].toFixed(0)} req/s, node ${node[r].toFixed(0)} req/s`);
  }
  const libRate = median(lib);
  const nodeRate = median(node);
  const overhead = (libRate / nodeRate - 1) * 100;
  console.log('');
  console.log(`signed transfer POSTs against the simulator, ${N} per round, ${ROUNDS} rounds, concurrency ${CONCURRENCY}, Node ${process.version}`);
  console.log(`lib directly:            ${libRate.toFixed(0)} req/s (median)`);
  console.log(`custody-transfer node:   ${nodeRate.toFixed(0)} req/s (median)`);
  console.log(`ratio node/lib:          ${(nodeRate / libRate).toFixed(3)}  (node costs ${overhead.toFixed(1)}% over lib; target <= 10%)`);
  if (failures) console.log(`failures: ${failures}`);

  await helper.unload();
  await new Promise<void>((r) => helper.stopServer(r));
  client.close();
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(failures ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
