/**
 * What the pack adds to a Node-RED start (docs/performance.md, the footprint group: a palette that
 * loads nothing it does not use): Node-RED is started as a child process (node-red/red.js,
 * scripts/node-red-settings.js, a fresh user directory each run) in three set-ups, alternating,
 * `runs` times each:
 *
 * - `bare`: no pack installed, empty flows;
 * - `pack`: the pack linked into the user directory as bench/harness.ts and test/helpers/red-process.ts
 *   install it (`node_modules/@custodyflow/node-red-custody` -> this checkout), empty flows;
 * - `pack + built-in simulator` (for information): the pack and a flow holding a custody-config
 *   in the built-in simulator environment with a liquidity hub feed node using it, so the
 *   simulator starts.
 *
 * Start time: from spawn to the "Started flows" log line (milliseconds; with the built-in
 * simulator the simulator starts after that line, so its RSS counts but its start time mostly
 * does not). RSS: `VmRSS` of /proc/<pid>/status after a settle (default 1500 ms), in MB
 * (1 MB = 2^20 bytes). CPU: the process's user + system time when it logs "Started flows"
 * (/proc/<pid>/stat `utime` + `stime`, in clock ticks of 10 ms), which a loaded machine stretches
 * far less than the wall-clock start. Rows: the added RSS (median with the pack minus median
 * without) <= 8 MB, the added start time (same, medians) <= 60 ms, and the added CPU time (info).
 * Each round starts the set-ups in a rotated order, so that none always follows the same one.
 *
 * Run: `node dist/bench/footprint.js` (env FOOTPRINT_RUNS, default 8; FOOTPRINT_SETTLE_MS).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { atMost, median, type BenchRow, printWhenMain } from './table';

/** The project root (this file runs from dist/bench). */
const root = path.resolve(__dirname, '..', '..');

/** Options of {@link run}. */
export interface FootprintOptions {
  /** Starts per set-up (default `$FOOTPRINT_RUNS` or 8). */
  runs?: number;
  /** Milliseconds to wait after "Started flows" before reading RSS (default `$FOOTPRINT_SETTLE_MS` or 1500). */
  settleMs?: number;
}

/** One Node-RED start: milliseconds from spawn to "Started flows", the CPU milliseconds spent by then, and RSS in MB after the settle. */
export interface StartSample {
  startMs: number;
  cpuMs: number;
  rssMb: number;
}

/** The set-ups measured: a name, whether the pack is installed, and flows.json. */
interface Setup {
  name: string;
  pack: boolean;
  flows: object[];
}

const SETUPS: Setup[] = [
  { name: 'bare', pack: false, flows: [] },
  { name: 'pack', pack: true, flows: [] },
  {
    name: 'pack + built-in simulator',
    pack: true,
    flows: [
      { id: 'tab', type: 'tab', label: 'footprint' },
      { id: 'cfg', type: 'custody-config', name: 'sim', environment: 'simulator', signingMode: 'timestamp' },
      { id: 'hub', z: 'tab', type: 'custody-hub-feed', connection: 'cfg', x: 100, y: 100, wires: [[]] },
    ],
  },
];

/** A TCP port free on 127.0.0.1 a moment ago (listened on port 0, closed). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** VmRSS of process `pid`, in MB. @throws {Error} when /proc does not list it. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

/** Milliseconds per clock tick of /proc/<pid>/stat (`getconf CLK_TCK` is 100 on Linux). */
const TICK_MS = 10;

/** User + system CPU time of process `pid` so far, in ms (/proc/<pid>/stat fields 14 and 15). @throws {Error} when /proc does not list it. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (in parentheses, which may hold spaces): field 3 is the first.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/**
 * Start Node-RED once in a fresh user directory (removed afterwards), measure, stop it.
 * @throws {Error} when it does not log "Started flows" within 60 s (the log is in the message).
 */
export async function startOnce(pack: boolean, flows: object[], settleMs: number): Promise<StartSample> {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-footprint-'));
  try {
    fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flows));
    if (pack) {
      const link = path.join(userDir, 'node_modules', '@custodyflow', 'node-red-custody');
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(root, link, 'dir');
    }
    const redJs = require.resolve('node-red/red.js', { paths: [root] });
    const port = await freePort();
    const t0 = performance.now();
    const child = spawn(process.execPath, [redJs, '--userDir', userDir, '--settings', path.join(root, 'scripts', 'node-red-settings.js')], {
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info', CUSTODYFLOW_SIMULATOR_DATA: path.join(userDir, 'simulator'), CUSTODYFLOW_JOURNAL_DIR: path.join(userDir, 'journal') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      let cpu = 0;
      const startMs = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`node-red did not log "Started flows" in 60 s:\n${log}`)), 60000);
        const onData = (d: Buffer) => {
          log += d;
          if (log.includes('Started flows')) {
            clearTimeout(timer);
            cpu = cpuMs(child.pid!);
            resolve(performance.now() - t0);
          }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', (d: Buffer) => (log += d));
        child.once('exit', (code) => reject(new Error(`node-red exited (${code}) before "Started flows":\n${log}`)));
      });
      await new Promise((r) => setTimeout(r, settleMs));
      return { startMs, cpuMs: cpu, rssMb: rssMb(child.pid!) };
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  } finally {
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

/** Measure every set-up `runs` times, alternating; rows as described in the module comment. */
export async function run(opts: FootprintOptions = {}): Promise<BenchRow[]> {
  const runs = opts.runs ?? (Number(process.env.FOOTPRINT_RUNS) || 8);
  const settleMs = opts.settleMs ?? (Number(process.env.FOOTPRINT_SETTLE_MS) || 1500);
  const samples = new Map<string, StartSample[]>(SETUPS.map((s) => [s.name, []]));
  // One unmeasured start of each first: file system caches warm for every set-up alike.
  for (const s of SETUPS) await startOnce(s.pack, s.flows, 0);
  for (let i = 0; i < runs; i++) {
    const order = [...SETUPS.slice(i % SETUPS.length), ...SETUPS.slice(0, i % SETUPS.length)];
    for (const s of order) samples.get(s.name)!.push(await startOnce(s.pack, s.flows, settleMs));
  }
  const med = (name: string, key: keyof StartSample) => median(samples.get(name)!.map((x) => x[key]));
  const f = (n: number) => n.toFixed(1);
  const bareRss = med('bare', 'rssMb');
  const bareMs = med('bare', 'startMs');
  const packRss = med('pack', 'rssMb');
  const packMs = med('pack', 'startMs');
  const simRss = med('pack + built-in simulator', 'rssMb');
  const simMs = med('pack + built-in simulator', 'startMs');
  const bareCpu = med('bare', 'cpuMs');
  const packCpu = med('pack', 'cpuMs');
  return [
    atMost('footprint', 'added RSS, pack without simulator (MB, medians)', `${f(packRss)} MB vs ${f(bareRss)} MB (${runs} runs)`, packRss - bareRss, 8, ' MB'),
    atMost('footprint', 'added start to "Started flows" (ms, medians)', `${f(packMs)} ms vs ${f(bareMs)} ms (${runs} runs)`, packMs - bareMs, 60, ' ms'),
    {
      group: 'footprint',
      measure: 'added CPU time to "Started flows", pack (ms, medians; info)',
      figures: `${f(packCpu)} ms vs ${f(bareCpu)} ms (${runs} runs)`,
      value: packCpu - bareCpu,
      goal: 'info',
      pass: true,
    },
    {
      group: 'footprint',
      measure: 'added RSS / start, pack + built-in simulator (info)',
      figures: `${f(simRss)} MB, ${f(simMs)} ms vs ${f(bareRss)} MB, ${f(bareMs)} ms`,
      value: simRss - bareRss,
      goal: 'info',
      pass: true,
    },
  ];
}

printWhenMain(module, run);
