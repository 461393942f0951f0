/**
 * `npm run bench:exactly-once`: the fault run of the exactly-once payments check (docs/testing.md,
 * "Exactly-once payments") as a benchmark printing its figures. A fault proxy
 * (test/helpers/fault-proxy.ts) between the clients and the simulator answers 503 or drops the
 * connection before forwarding, drops the connection or answers 502 after the simulator committed,
 * holds the answer past the client's timeout, and arms the simulator's own 500/503; then:
 *
 * 1. transfers through lib (`createTransfer` with a submission journal; every fifth with
 *    `resolveUnknown: false`, re-sent once the faults stop);
 * 2. transfers through the `custody-transfer` node and withdrawals through the `custody-withdraw`
 *    node in a Node-RED runtime embedded in this process (the pack installed in a temporary user
 *    directory; the journal in it);
 * 3. every outcome-unknown withdrawal sent again (refused), resolved with the node's `resolve`
 *    operation under GET faults and then without, and sent again.
 *
 * The simulator runs in a child process with `--dedupe=transfers` (it does not dedupe
 * withdrawals: no duplicate withdrawal is the client's doing). Printed: faults injected per
 * kind, and per run the calls, requests, definite answers, errors with and without the
 * outcome-unknown mark, errors of calls that had moved money, payments made by a request whose
 * answer the proxy withheld, duplicates, definite answers in the end, resolves found and not
 * found, and the time taken. Exits 1 when a figure that must be 0 is not.
 *
 * Arguments (all optional): `--lib=1000 --transfers=300 --withdrawals=300 --concurrency=24
 * --timeout-ms=400 --hold-ms=800`; the proxy's seed is `FAULT_SEED` when set (printed either way).
 * Shared with the fault test: test/helpers/fault-runs.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SubmissionJournal } from '../lib';
import { FaultProxy, FAULT_KINDS, type FaultKind } from '../test/helpers/fault-proxy';
import {
  FAULT_RULES,
  NodeDriver,
  censusOf,
  faultFlow,
  figuresOf,
  resolveFiguresOf,
  resolveUnknownWithdrawals,
  runLibTransfers,
  runNodePayments,
  type CallRecord,
  type Census,
  type Figures,
  type NodeLike,
  type SimulatorUnderTest,
} from '../test/helpers/fault-runs';
import { runMain, simulatorCensus, startEmbeddedRed, startSimulatorProcess, stopSimulatorProcess, type CensusRecord } from './harness';

const USAGE = 'usage: exactly-once [--lib=1000] [--transfers=300] [--withdrawals=300] [--concurrency=24] [--timeout-ms=400] [--hold-ms=800]';

/** The sizes and times of the run, from the command line. */
interface Settings {
  lib: number;
  transfers: number;
  withdrawals: number;
  concurrency: number;
  timeoutMs: number;
  holdMs: number;
}

/** The arguments, checked. @throws {Error} with the usage for an unknown option or a value that is not a whole number (>= 1 for concurrency and times). */
function readArgs(argv: string[]): Settings {
  const names = { lib: 1000, transfers: 300, withdrawals: 300, concurrency: 24, 'timeout-ms': 400, 'hold-ms': 800 } as const;
  const { values } = parseArgs({ args: argv, strict: true, options: Object.fromEntries(Object.keys(names).map((n) => [n, { type: 'string' as const }])) });
  const read = (name: keyof typeof names, least: number) => {
    const text = (values as Record<string, string | undefined>)[name];
    if (text === undefined) return names[name];
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < least) throw new Error(`--${name}: a whole number >= ${least}\n${USAGE}`);
    return n;
  };
  return { lib: read('lib', 0), transfers: read('transfers', 0), withdrawals: read('withdrawals', 0), concurrency: read('concurrency', 1), timeoutMs: read('timeout-ms', 1), holdMs: read('hold-ms', 1) };
}

/** The census from the child's lists. */
function toCensus(lists: { transfers: CensusRecord[]; withdrawals: CensusRecord[] }): Census {
  const byId = (list: CensusRecord[]) => Object.fromEntries(list.map((r) => [r.txID, r]));
  return censusOf({ transfers: byId(lists.transfers), withdrawals: byId(lists.withdrawals) });
}

/** Faults per kind injected since `before`, as `kind n, ...`. */
function faultLine(proxy: FaultProxy, before: Record<FaultKind, number>): string {
  const parts = FAULT_KINDS.map((k) => `${k} ${proxy.counts[k] - before[k]}`);
  const total = FAULT_KINDS.reduce((n, k) => n + proxy.counts[k] - before[k], 0);
  return `${total} (${parts.join(', ')})`;
}

/** One run's figures, measured. */
interface Measured {
  name: string;
  figures: Figures;
  faults: string;
  seconds: number;
}

/** Print the figures of the runs as a table, one column per run. */
function printTable(runs: Measured[]): void {
  const rows: Array<[string, (f: Figures) => number]> = [
    ['calls', (f) => f.calls],
    ['requests that reached the proxy', (f) => f.requests],
    ['definite answer at once (new or existing)', (f) => f.definite],
    ['errors marked outcome unknown', (f) => f.errorsMarked],
    ['  of them without code EOUTCOMEUNKNOWN', (f) => f.markedWithoutCode],
    ['errors without the mark', (f) => f.errorsUnmarked],
    ['errors of calls that had moved money', (f) => f.errorsThatMovedMoney],
    ['  of them without the mark', (f) => f.unmarkedThatMovedMoney],
    ['payments made by a request whose answer was withheld', (f) => f.movedMoneyAnswerLost],
    ['duplicates (partner_txID with 2+ transactions)', (f) => f.duplicates],
    ['answers with a tx_id other than the simulator\'s', (f) => f.wrongTxId],
    ['definite answer in the end', (f) => f.finalDefinite],
  ];
  const width = Math.max(...rows.map(([label]) => label.length), 'time taken (s)'.length) + 2;
  const col = Math.max(16, ...runs.map((r) => r.name.length + 2));
  console.log(''.padEnd(width) + runs.map((r) => r.name.padStart(col)).join(''));
  for (const [label, value] of rows) console.log(label.padEnd(width) + runs.map((r) => String(value(r.figures)).padStart(col)).join(''));
  console.log('time taken (s)'.padEnd(width) + runs.map((r) => r.seconds.toFixed(1).padStart(col)).join(''));
}

async function main(): Promise<number> {
  const settings = readArgs(process.argv.slice(2));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-exactly-once-'));
  const { child, sim } = await startSimulatorProcess(path.join(dataDir, 'simulator'), false, 'transfers');
  const prefix = `eo-${process.pid}-${Date.now()}`;
  const target: SimulatorUnderTest = { ...sim, census: async () => toCensus(await simulatorCensus(child, prefix)) };
  const proxy = new FaultProxy({ target: sim.baseUrl, controlUrl: sim.controlUrl, rules: FAULT_RULES, holdMs: settings.holdMs });
  await proxy.start();
  proxy.faults = false;
  const runs: Measured[] = [];
  let failed = false;
  let RED: any;
  const journal = await SubmissionJournal.open(path.join(dataDir, 'lib-journal.jsonl'));
  try {
    console.log(`fault benchmark (exactly-once payments): seed ${proxy.seed} (FAULT_SEED=${proxy.seed} repeats it), client timeout ${settings.timeoutMs} ms, answers held ${settings.holdMs} ms, concurrency ${settings.concurrency}, Node ${process.version}`);
    console.log('the simulator in a child process, --dedupe=transfers (withdrawals are not deduplicated by it)');
    const measure = async (name: string, run: () => Promise<CallRecord[]>) => {
      const before = { ...proxy.counts };
      const t0 = process.hrtime.bigint();
      const calls = await run();
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const figures = figuresOf(calls, await target.census(), proxy);
      runs.push({ name, figures, faults: faultLine(proxy, before), seconds });
      return calls;
    };

    await measure('lib transfers', () => runLibTransfers(target, proxy, { count: settings.lib, concurrency: settings.concurrency, timeoutMs: settings.timeoutMs, journal, prefix: `${prefix}-lib`, optOutEvery: 5, resendDelayMs: 100 }));

    const userDir = path.join(dataDir, 'node-red');
    RED = await startEmbeddedRed(userDir, faultFlow(proxy.baseUrl, sim.demo.company_id, settings.timeoutMs / 1000, 'debug'), { cfg: { apiKey: sim.apiKey, privateKey: sim.privateKeyPem } });
    for (let i = 0; i < 200 && !RED.nodes.getNode('caught'); i++) await new Promise((r) => setTimeout(r, 25));
    if (!RED.nodes.getNode('transfer') || !RED.nodes.getNode('caught')) throw new Error('the fault flow did not start');
    const driver = new NodeDriver((id) => RED.nodes.getNode(id) as NodeLike);
    await measure('node transfers', async () => (await runNodePayments(target, proxy, driver, { kind: 'transfer', count: settings.transfers, concurrency: settings.concurrency, prefix: `${prefix}-nt`, stopFaultsWhenAllStarted: true })).calls);
    let withdrawals!: Awaited<ReturnType<typeof runNodePayments>>;
    await measure('node withdrawals', async () => {
      withdrawals = await runNodePayments(target, proxy, driver, { kind: 'withdraw', count: settings.withdrawals, concurrency: settings.concurrency, prefix: `${prefix}-nw`, stopFaultsWhenAllStarted: false });
      return withdrawals.calls;
    });
    const beforeResolve = { ...proxy.counts };
    const t0 = process.hrtime.bigint();
    const resolved = await resolveUnknownWithdrawals(proxy, driver, withdrawals, 8);
    const resolveSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const r = resolveFiguresOf(resolved, await target.census());

    console.log('');
    for (const run of runs) console.log(`faults injected, ${run.name}: ${run.faults}`);
    console.log(`faults injected, resolves (GETs): ${faultLine(proxy, beforeResolve)}`);
    console.log('');
    printTable(runs);
    console.log('');
    console.log(`resolves: ${r.resolved} outcome-unknown withdrawals, ${r.existing} of them exist in the simulator`);
    console.log(`  re-sent before resolving: ${r.resolved - r.beforeNotRefused} refused with EOUTCOMEUNKNOWN, ${r.sent} requests sent by all re-sends`);
    console.log(`  resolve under GET faults: ${r.underFaults.found} found, ${r.underFaults.notFound} not found, ${r.underFaults.failed} failed`);
    console.log(`  resolve without faults:   ${r.found} found (${r.foundRight} with the simulator's tx_id), ${r.notFound} not found, ${r.other} other; ${r.wrong} wrong answers`);
    console.log(`  re-sent after resolving:  ${r.found - r.afterFoundWrong} of ${r.found} found answered existing from the journal; ${r.notFound - r.afterNotFoundNotRefused} of ${r.notFound} not found still refused (before their expires)`);
    console.log(`  time taken: ${resolveSeconds.toFixed(1)} s`);

    const zero = (n: number) => n === 0;
    failed =
      !runs.every((m) => zero(m.figures.duplicates) && zero(m.figures.unmarkedThatMovedMoney) && zero(m.figures.markedWithoutCode) && zero(m.figures.wrongTxId)) ||
      runs.filter((m) => m.name !== 'node withdrawals').some((m) => m.figures.finalDefinite !== m.figures.calls) ||
      !(zero(r.wrong) && zero(r.beforeNotRefused) && zero(r.afterFoundWrong) && zero(r.afterNotFoundNotRefused) && zero(r.sent) && r.foundRight === r.existing);
    if (failed) console.log('\nFAILED: a figure that must be 0 is not (see above)');
  } finally {
    await RED?.stop();
    await journal.close();
    await proxy.stop();
    await stopSimulatorProcess(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

runMain(main);
