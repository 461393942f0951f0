/**
 * The one table `npm run bench` prints (docs/performance.md): every benchmark module returns rows of ratios
 * measured within one run, and bench/index.ts prints them together.
 */

/** One measured figure of a benchmark, compared with its goal. */
export interface BenchRow {
  /** which benchmark: `simulator`, `transport`, `approval`, `dedupe`, `footprint`, ... */
  group: string;
  /** what is measured, e.g. `POST transfer p50, 100k vs empty` */
  measure: string;
  /** the raw figures the ratio comes from, e.g. `4.1 ms vs 3.0 ms` */
  figures: string;
  /** the ratio (or the absolute figure when the goal is absolute), e.g. 1.37 */
  value: number;
  /** the goal as text, e.g. `<= 2x` or `>= 0.85x` or `<= 5 s` */
  goal: string;
  /** true when `value` meets the goal */
  pass: boolean;
}

/**
 * A row whose goal is an upper bound: pass when `value <= limit`.
 * @param unit appended to the limit in the goal text (`x` for ratios, ` s`, ` ms`, ` MB`).
 */
export function atMost(group: string, measure: string, figures: string, value: number, limit: number, unit = 'x'): BenchRow {
  return { group, measure, figures, value, goal: `<= ${limit}${unit}`, pass: value <= limit };
}

/**
 * A row whose goal is a lower bound: pass when `value >= limit`.
 * @param unit appended to the limit in the goal text.
 */
export function atLeast(group: string, measure: string, figures: string, value: number, limit: number, unit = 'x'): BenchRow {
  return { group, measure, figures, value, goal: `>= ${limit}${unit}`, pass: value >= limit };
}

/** The median of `xs` (NaN for none). Does not modify `xs`. */
export function median(xs: number[]): number {
  return percentile(xs, 50);
}

/**
 * The `p`th percentile of `xs` (nearest rank; NaN for none). Does not modify `xs`.
 * @param p 0..100
 */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Goals of rows that inform and judge nothing: their result column shows `-`. */
const INFORMATIVE = new Set(['info', 'report']);

/** The rows as a fixed-width text table (Markdown-compatible), with a PASS/MISS column (`-` for rows whose goal is `info` or `report`). */
export function formatTable(rows: BenchRow[]): string {
  const head = ['group', 'measure', 'figures', 'value', 'goal', 'result'];
  const body = rows.map((r) => [r.group, r.measure, r.figures, Number.isFinite(r.value) ? String(Math.round(r.value * 1000) / 1000) : String(r.value), r.goal, INFORMATIVE.has(r.goal) ? '-' : r.pass ? 'PASS' : 'MISS']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/**
 * When `mod` is the script node was started with, run `run`, print its rows as a table
 * ({@link formatTable}) and exit 0; on an error print it and exit 1. Otherwise do nothing (the
 * module was loaded by bench/index.ts).
 * @param mod the calling module's `module`.
 */
export function printWhenMain(mod: NodeJS.Module, run: () => Promise<BenchRow[]>): void {
  if (require.main !== mod) return;
  run().then(
    (rows) => {
      console.log(formatTable(rows));
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** Milliseconds `fn` takes (wall clock, `process.hrtime`). */
export async function timeMs(fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * The medians of `fn(a)` and of `fn(b)` (each answers its own figure, e.g. {@link timeMs} of a
 * start), measured alternately `runs` times each after `warmups` rounds of both, so a drift of the
 * machine falls on both alike.
 */
export async function alternatingMedians<T>(fn: (x: T) => Promise<number>, a: T, b: T, runs: number, warmups = 1): Promise<[number, number]> {
  for (let i = 0; i < warmups; i++) {
    await fn(a);
    await fn(b);
  }
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < runs; i++) {
    xs.push(await fn(a));
    ys.push(await fn(b));
  }
  return [median(xs), median(ys)];
}
