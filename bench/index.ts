/**
 * `npm run bench` (docs/performance.md): every performance figure the project is judged on, each ratio
 * measured within one run, printed as one table (bench/table.ts).
 *
 * Usage: `node dist/bench/index.js [group ...]` where a group is one of {@link GROUPS}' names
 * (default: all, in that order). `BENCH_QUICK=1` asks each benchmark for its small run (a quick
 * check that everything works; its figures are not the judged ones).
 *
 * Each group is a module of this folder exporting `run(opts): Promise<BenchRow[]>`. A group that
 * throws is reported as a MISS row naming the error, and the others still run.
 * Exit code: 0 when the table was printed (misses included: a benchmark reports, it does not
 * gate), 1 when no group could run at all.
 */
import path from 'node:path';
import { formatTable, type BenchRow } from './table';

/** A benchmark module as bench/index.ts loads it. */
export interface BenchModule {
  /**
   * Measure and return rows.
   * @param opts the module's own options; `{}` for its judged default run.
   */
  run(opts?: Record<string, unknown>): Promise<BenchRow[]>;
}

/** The groups `npm run bench` runs, in order: name -> module file in this folder. */
export const GROUPS: ReadonlyArray<{ name: string; module: string; what: string; quick: Record<string, unknown> }> = [
  { name: 'simulator', module: 'simulator-scale', what: 'simulator with persistence: p50 after 100,000 transfers vs empty, restart', quick: { n: 5000 } },
  { name: 'approval', module: 'approval', what: 'approval round trip POST -> feed -> approve -> approved, over 2,000 transfers', quick: { transfers: 600 } },
  { name: 'transport', module: 'transport', what: 'lib and node vs a minimal node:http + crypto client at concurrency 1, 8, 64', quick: { n: 100, rounds: 2 } },
  { name: 'dedupe', module: 'feed-dedupe', what: 'core-client feed duplicate check per action, 0 to 100,000 remembered ids', quick: {} },
  { name: 'velocity', module: 'velocity-window', what: 'velocity window read+reserve and a coordinated decision, 100,000 approvals in the window vs empty', quick: { approvals: 10000, n: 300, decisions: 30 } },
  { name: 'restart', module: 'restart', what: 'approver and custody-track start after 100,000 recorded actions: what each reads per entry it keeps', quick: { actions: 10000, runs: 3 } },
  { name: 'audit', module: 'audit-startup', what: 'approver start-up on a 1,000,000-line audit history (daily segments over 730 days) vs an empty audit file', quick: { lines: 20000, days: 30, runs: 5 } },
  { name: 'simulate', module: 'policy-simulate', what: 'a draft rule set simulated against 100,000 recorded decisions (all segments read, each decided again): decisions per second', quick: { decisions: 10000, runs: 1 } },
  { name: 'signing', module: 'signing-keysource', what: 'signatures/s on a PKCS#11 token vs the PEM source, event loop p99 delay and req/s with 64 signed requests in flight vs synchronous signing', quick: { n: 300, rounds: 1 } },
  { name: 'footprint', module: 'footprint', what: 'RSS and start time the pack adds to Node-RED without the built-in simulator', quick: { runs: 3 } },
];

/**
 * Run the named groups (all when `names` is empty) one after the other.
 * @returns every row, a failed group as one MISS row.
 */
export async function runAll(names: string[], quick: boolean): Promise<BenchRow[]> {
  const chosen = names.length === 0 ? GROUPS : GROUPS.filter((g) => names.includes(g.name));
  const unknown = names.filter((n) => !GROUPS.some((g) => g.name === n));
  if (unknown.length > 0) throw new Error(`unknown bench group(s): ${unknown.join(', ')}; known: ${GROUPS.map((g) => g.name).join(', ')}`);
  const rows: BenchRow[] = [];
  for (const g of chosen) {
    const started = Date.now();
    process.stderr.write(`\n== ${g.name}: ${g.what}\n`);
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(path.join(__dirname, g.module)) as BenchModule;
      const got = await mod.run(quick ? g.quick : {});
      rows.push(...got);
      process.stderr.write(`${formatTable(got)}\n(${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      process.stderr.write(`${g.name} failed: ${e instanceof Error ? e.stack : message}\n`);
      rows.push({ group: g.name, measure: 'the benchmark ran', figures: message.slice(0, 80), value: NaN, goal: 'runs', pass: false });
    }
  }
  return rows;
}

if (require.main === module) {
  const quick = process.env.BENCH_QUICK === '1';
  runAll(process.argv.slice(2), quick).then(
    (rows) => {
      process.stdout.write(`\nnpm run bench${quick ? ' (BENCH_QUICK=1: small runs, not the judged figures)' : ''}, Node ${process.version}, ${require('node:os').cpus().length} cores\n\n${formatTable(rows)}\n`);
      process.exit(0);
    },
    (e) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
