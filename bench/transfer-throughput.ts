/**
 * `npm run bench`: signed transfer requests per second against the simulator, made through a
 * `custody-transfer` node and made directly with lib, in one run, with the same concurrency.
 *
 * The node runs in a real Node-RED runtime embedded in this process (`RED.init` + `RED.start`,
 * the pack installed in a temporary user directory, credentials in flows_cred.json as a user
 * would have them); messages go in with `node.receive` and come out of a disabled debug node.
 * The simulator runs in a child process so it does not share this event loop. Rounds alternate
 * (lib, node, lib, node, ...) so both sides meet the same simulator state; the per-round ratio
 * and the medians are reported. Environment: BENCH_TRANSFERS (per round, default 300),
 * BENCH_ROUNDS (default 9), BENCH_CONCURRENCY (default 16).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustodyClient, createTransfer } from '../lib';
import { benchTransfer, measure, startEmbeddedRed, startSimulatorProcess, stopSimulatorProcess, type Measured } from './harness';

const N = Number(process.env.BENCH_TRANSFERS) || 300;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 9;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY) || 16;


/** What one measured round gives: requests per second, and this process's CPU time per request (µs). */

/** The median: the middle value, or the mean of the two middle values. */
function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-'));
  const { child, sim } = await startSimulatorProcess(dataDir, false);

  // lib, directly.
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
  const viaLib = () => createTransfer(client, benchTransfer(sim.demo)).then(() => undefined);

  // The custody-transfer node in a Node-RED runtime, configured as a user would: custom URL + credentials.
  const userDir = path.join(dataDir, 'node-red');
  const flows = [
    { id: 'tab', type: 'tab', label: 'bench' },
    { id: 'cfg', type: 'custody-config', environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: 30 },
    { id: 'tx', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', company_id: sim.demo.company_id, x: 100, y: 100, wires: [['out']] },
    { id: 'out', z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'payload', x: 300, y: 100, wires: [] },
  ];
  const RED = await startEmbeddedRed(userDir, flows, { cfg: { apiKey: sim.apiKey, privateKey: sim.privateKeyPem } });
  await new Promise((r) => setTimeout(r, 500));
  const txNode = RED.nodes.getNode('tx');
  const out = RED.nodes.getNode('out');
  if (!txNode || !out) throw new Error('the bench flow did not start');
  const waiting = new Map<string, () => void>();
  let failures = 0;
  out.on('input', (msg: { _msgid: string; payload: { status: string } }) => {
    if (msg.payload.status !== 'new') failures++;
    waiting.get(msg._msgid)?.();
    waiting.delete(msg._msgid);
  });
  // Errors reach Catch nodes through done(err); here a wrapped error() counts them and frees the slot.
  const error = txNode.error.bind(txNode);
  txNode.error = (err: unknown, msg?: { _msgid?: string }) => {
    failures++;
    if (failures === 1) console.error('first failure:', String(err));
    const id = msg?._msgid ?? '';
    waiting.get(id)?.();
    waiting.delete(id);
    return error(err, msg);
  };
  let msgSeq = 0;
  const viaNode = () =>
    new Promise<void>((resolve) => {
      const _msgid = `bench-msg-${++msgSeq}`;
      waiting.set(_msgid, resolve);
      const { company_id, ...payload } = benchTransfer(sim.demo);
      void company_id;
      txNode.receive({ _msgid, payload });
    });

  // Warm up both paths (connections, JIT), then alternate measured rounds.
  await measure(100, CONCURRENCY, viaLib);
  await measure(100, CONCURRENCY, viaNode);
  const lib: Measured[] = [];
  const node: Measured[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which side goes first, so neither always meets the fuller simulator state.
    if (r % 2 === 0) {
      lib.push(await measure(N, CONCURRENCY, viaLib));
      node.push(await measure(N, CONCURRENCY, viaNode));
    } else {
      node.push(await measure(N, CONCURRENCY, viaNode));
      lib.push(await measure(N, CONCURRENCY, viaLib));
    }
    ratios.push(node[r].rate / lib[r].rate);
    console.log(
      `round ${r + 1}: lib ${lib[r].rate.toFixed(0)} req/s (${lib[r].cpuMicros.toFixed(0)} µs CPU/request), ` +
        `node ${node[r].rate.toFixed(0)} req/s (${node[r].cpuMicros.toFixed(0)} µs CPU/request), ratio ${ratios[r].toFixed(3)}`,
    );
  }
  const libRate = median(lib.map((m) => m.rate));
  const nodeRate = median(node.map((m) => m.rate));
  const libCpu = median(lib.map((m) => m.cpuMicros));
  const nodeCpu = median(node.map((m) => m.cpuMicros));
  const ratio = median(ratios);
  const overhead = (1 / ratio - 1) * 100;
  console.log('');
  console.log(`signed transfer POSTs against the simulator, ${N} per round, ${ROUNDS} rounds, concurrency ${CONCURRENCY}, Node ${process.version}`);
  console.log(`lib directly:            ${libRate.toFixed(0)} req/s (median), ${libCpu.toFixed(0)} µs client CPU per request`);
  console.log(`custody-transfer node:   ${nodeRate.toFixed(0)} req/s (median), ${nodeCpu.toFixed(0)} µs client CPU per request`);
  console.log(`ratio node/lib:          ${ratio.toFixed(3)} (median of the per-round ratios): the node costs ${overhead.toFixed(1)}% over lib; target <= 10%`);
  console.log(`client CPU per request:  node/lib ${(nodeCpu / libCpu).toFixed(3)}`);
  if (failures) console.log(`failures: ${failures}`);

  await RED.stop();
  client.close();
  await stopSimulatorProcess(child);
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(failures ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
