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
import { benchTransfer, measure, runMain, startSimulatorProcess, stopSimulatorProcess, transferNodePath, type Measured } from './harness';
import { median } from './table';

const N = Number(process.env.BENCH_TRANSFERS) || 300;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 9;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY) || 16;

/** The run: see the module comment. @returns the exit code (1 when a request failed). */
async function main(): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-'));
  const { child, sim } = await startSimulatorProcess(dataDir, false);

  // lib, directly.
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
  const viaLib = () => createTransfer(client, benchTransfer(sim.demo)).then(() => undefined);

  // The custody-transfer node in a Node-RED runtime, configured as a user would: custom URL + credentials.
  // A failed request (an error, or an answer other than `new`) is counted and frees its slot.
  const nodeSide = await transferNodePath(sim, path.join(dataDir, 'node-red'), 'bench-msg');
  let failures = 0;
  const viaNode = () =>
    nodeSide.one().catch((err: unknown) => {
      failures++;
      if (failures === 1) console.error('first failure:', String(err));
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

  await nodeSide.stop();
  client.close();
  await stopSimulatorProcess(child);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return failures ? 1 : 0;
}

runMain(main);
