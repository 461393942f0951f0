/**
 * `npm run bench:soak` (docs/performance.md "Soak bench"): memory of a real Node-RED under
 * sustained load. Not part of `npm test`; nothing is asserted on timings or slopes.
 *
 * Real parts only: the simulator in a child process (bench/simulator-process.ts, state in memory),
 * the decision counter of bench/scale-out.ts in front of it (every approve PUT and reject DELETE of
 * `/coreclient/{client_id}/action/{action_id}` that reached the API, per action id), and Node-RED in
 * a child process of its own (`node --expose-gc red.js`, bench/soak-rig.ts) running core client
 * feed → custody-approver (approve BTC-TESTNET transfers up to 0.5, under a velocity limit with
 * `--velocity` and in the shortened phase; no match: hold) → custody-track on the approved output, custody-review on the held one. So the
 * memory measured is Node-RED's alone.
 *
 * A phase creates N transfers at R per second through the simulator's API (each one pending
 * action of the demo approver core client): four in five of 0.001 BTC-TESTNET (approvable), one
 * in five of 0.6 (held). It samples heap used after two forced GCs, RSS and open fds before the
 * load and after every tenth of it, then waits until every approved transfer is reported final by
 * custody-track and every held one has left review, samples again, and prints the samples, the
 * least-squares slopes per 1,000 actions (whole run and second half) and the checks.
 *
 * - main phase (default): transactions expire in an hour, no velocity limit (with `--velocity`: a
 *   24 h window, whose approvals are then kept 24 h), the track node's defaults; the bench rejects each held action through the review admin API.
 * - shortened phase (`--shortened`; after the main phase with `--both`): transactions expire in
 *   `--expire-s` seconds, velocity window and the track node's `keepReported` `0.002` h (7.2 s);
 *   held actions are left to the review's deadline (their expiry); then Node-RED idles for
 *   `--idle-s` and the heap at idle is compared with the heap before the load (within 5 MB).
 *
 * Checks (exit 1 when one fails): 0 lost (each approvable action got exactly one approve call,
 * answered 2xx, its transfer is `approved_transfer` and custody-track reported it final once; each
 * held one got no approve call, is not approved, and left review once), 0 doubled (no action with
 * two approve or two reject calls or two decision lines in the audit, no transaction reported
 * twice), and `custodyflow-audit verify` of the approver's audit file exits 0.
 *
 *   soak [--actions N] [--rate R] [--velocity] [--shortened | --both] [--short-actions N] [--expire-s S] [--idle-s S] [--keep] [--heap-snapshots DIR]
 * `--heap-snapshots DIR` writes Node-RED's heap snapshot at 50% and 100% of each phase into DIR (`<phase>-50.heapsnapshot`, …).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CustodyClient, createTransfer } from '../lib';
import type { DemoDataset } from '../simulator';
import { benchTransfer, faucet, runMain, simulatorCensus, startSimulatorProcess, stopSimulatorProcess, type CensusRecord } from './harness';
import { DecisionCounter } from './scale-out';
import { heapSnapshot, readEvents, rejectReviews, sample, soakFlows, startSoakRed, type Sample, type SoakEvent } from './soak-rig';
import { sleep } from '../test/helpers/red-process';

const USAGE = 'usage: soak [--actions N] [--rate R] [--velocity] [--shortened | --both] [--short-actions N] [--expire-s S] [--idle-s S] [--keep] [--heap-snapshots DIR]';

/** Base units per BTC-TESTNET (simulator: 10^8). */
const UNITS = 100_000_000;
/** An approvable transfer: 0.001 BTC-TESTNET (base units). */
const SMALL = 100_000;
/** A held transfer: 0.6 BTC-TESTNET, above the 0.5 limit (base units). */
const LARGE = 60_000_000;
const MB = 1024 * 1024;

/** How one phase runs. */
export interface PhaseSettings {
  name: 'main' | 'shortened';
  actions: number;
  /** transfers created per second */
  rate: number;
  /** each transfer's `expires`, seconds after its creation */
  expiresSeconds: number;
  /** the approve rule's `velocityWindowHours`; undefined: the rule has no velocity limit */
  windowHours?: string;
  /** custody-track's `keepReported` (hours); undefined: the node's default */
  keepReportedHours?: string;
  /** `vote`: the bench rejects held actions through the review admin API; `expire`: the review's deadline closes them */
  reviews: 'vote' | 'expire';
  /** seconds of idle after the drain (0: none) */
  idleSeconds: number;
}

/** The arguments, checked. @throws {Error} with the usage for an unknown option or a bad number. */
function readArgs(argv: string[]): { phases: PhaseSettings[]; keep: boolean; snapshots?: string } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      actions: { type: 'string' },
      rate: { type: 'string' },
      shortened: { type: 'boolean', default: false },
      both: { type: 'boolean', default: false },
      'short-actions': { type: 'string' },
      'expire-s': { type: 'string' },
      'idle-s': { type: 'string' },
      keep: { type: 'boolean', default: false },
      velocity: { type: 'boolean', default: false },
      'heap-snapshots': { type: 'string' },
    },
  });
  const num = (name: string, text: string | undefined, dflt: number, least: number) => {
    if (text === undefined) return dflt;
    const n = Number(text);
    if (!Number.isFinite(n) || n < least) throw new Error(`--${name}: a number >= ${least}\n${USAGE}`);
    return n;
  };
  if (values.shortened && values.both) throw new Error(`--shortened and --both: one of them\n${USAGE}`);
  const rate = num('rate', values.rate, 20, 0.1);
  const actions = Math.floor(num('actions', values.actions, values.shortened ? 3000 : 12000, 10));
  const main: PhaseSettings = { name: 'main', actions, rate, expiresSeconds: 3600, ...(values.velocity ? { windowHours: '24' } : {}), reviews: 'vote', idleSeconds: 0 };
  const shortened: PhaseSettings = {
    name: 'shortened',
    actions: values.shortened ? actions : Math.floor(num('short-actions', values['short-actions'], 3000, 10)),
    rate,
    expiresSeconds: num('expire-s', values['expire-s'], 30, 5),
    windowHours: '0.002',
    keepReportedHours: '0.002',
    reviews: 'expire',
    idleSeconds: num('idle-s', values['idle-s'], 60, 0),
  };
  return { phases: values.shortened ? [shortened] : values.both ? [main, shortened] : [main], keep: values.keep, snapshots: values['heap-snapshots'] };
}

/** Least-squares slope of `y` over `x` (NaN with fewer than two distinct x). */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

/** One check's result: its name, the figures it rests on, and whether it passed. */
interface Check {
  name: string;
  figures: string;
  pass: boolean;
}

/** What a phase measured. */
interface PhaseResult {
  settings: PhaseSettings;
  samples: Sample[];
  checks: Check[];
  notes: string[];
}

/** Transfers created by a phase: the transfer's index, whether it should be held, its tx_id. */
interface Created {
  i: number;
  held: boolean;
  txId: string;
}

/**
 * Create `s.actions` transfers at `s.rate` per second (at most 32 in flight), sampling Node-RED
 * after every tenth. @returns the transfers created and the refusals (as text).
 */
async function drive(s: PhaseSettings, client: CustodyClient, demo: DemoDataset, prefix: string, onStep: (created: number) => Promise<void>): Promise<{ created: Created[]; refused: string[] }> {
  const created: Created[] = [];
  const refused: string[] = [];
  const inflight = new Set<Promise<void>>();
  const step = Math.max(1, Math.round(s.actions / 10));
  const t0 = Date.now();
  for (let i = 0; i < s.actions; i++) {
    const wait = t0 + (i * 1000) / s.rate - Date.now();
    if (wait > 0) await sleep(wait);
    while (inflight.size >= 32) await Promise.race(inflight);
    const held = i % 5 === 4;
    const req = benchTransfer(demo, held ? LARGE : SMALL, { partner_txID: `${prefix}${i}`, reference: 'soak', expires: Math.floor(Date.now() / 1000) + s.expiresSeconds });
    const p: Promise<void> = createTransfer(client, req)
      .then((res) => void created.push({ i, held, txId: res.data.tx_id }))
      .catch((e: Error) => void refused.push(`${req.partner_txID}: ${e.message}`))
      .finally(() => inflight.delete(p));
    inflight.add(p);
    if ((i + 1) % step === 0 || i + 1 === s.actions) {
      await Promise.all(inflight);
      await onStep(i + 1);
    }
  }
  return { created, refused };
}

/** How often each key occurs in `keys`. */
function countBy(keys: Iterable<string>): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

/** The `decision` lines of every audit segment in `folder`, as action ids. */
function auditDecisionIds(folder: string): string[] {
  const ids: string[] = [];
  for (const f of fs.readdirSync(folder).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of fs.readFileSync(path.join(folder, f), 'utf8').split('\n')) {
      if (!line) continue;
      const l = JSON.parse(line) as { kind?: string; action_id?: string };
      if (l.kind === 'decision' && l.action_id) ids.push(l.action_id);
    }
  }
  return ids;
}

/** Run one phase from a fresh simulator and a fresh Node-RED. */
async function runPhase(s: PhaseSettings, keep: boolean, snapshots?: string): Promise<PhaseResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cf-soak-${s.name}-`));
  const notes: string[] = [];
  const { child, sim } = await startSimulatorProcess(path.join(dir, 'simulator'), false);
  const counter = new DecisionCounter(sim.baseUrl);
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
  let red: Awaited<ReturnType<typeof startSoakRed>> | undefined;
  try {
    // Every held transfer may hold its amount at once; every approvable one moves its amount.
    await faucet(sim.controlUrl, sim.demo.wallets['BTC-TESTNET'].wallet_id, Math.ceil(s.actions * (0.2 * LARGE + 0.8 * SMALL) * 1.01) + UNITS);
    const auditFile = path.join(dir, 'audit', 'approver.jsonl');
    const flows = soakFlows({
      baseUrl: await counter.listen('soak'),
      demo: sim.demo,
      auditFile,
      reviewAuditFile: path.join(dir, 'review-audit', 'review.jsonl'),
      maxAmount: '0.5',
      // Never reached (0.001 per approval): the limit is there so the approver keeps its window.
      ...(s.windowHours !== undefined ? { velocityAmount: String(s.actions), velocityWindowHours: s.windowHours } : {}),
      keepReportedHours: s.keepReportedHours,
    });
    red = await startSoakRed(dir, flows, { apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
    const r = red;
    const t0 = Date.now();
    await sleep(2000);
    const samples: Sample[] = [await sample(r, 'start', 0, t0)];
    const reviewer = s.reviews === 'vote' ? rejectReviews(r) : undefined;
    const prefix = `soak-${process.pid}-${s.name}-`;
    console.error(`soak ${s.name}: ${s.actions} transfers at ${s.rate}/s (about ${Math.round(s.actions / s.rate)} s); Node-RED pid ${r.child!.pid}`);
    const { created, refused } = await drive(s, client, sim.demo, prefix, async (n) => {
      samples.push(await sample(r, `${Math.round((100 * n) / s.actions)}%`, n, t0));
      const last = samples[samples.length - 1];
      const pct = Math.round((100 * n) / s.actions);
      if (snapshots && (pct === 50 || pct === 100)) await heapSnapshot(r, path.resolve(snapshots, `${s.name}-${pct}.heapsnapshot`));
      console.error(`  ${n} created: heap ${(last.heap / MB).toFixed(1)} MB, rss ${(last.rss / MB).toFixed(1)} MB, ${last.fds} fds`);
    });
    const approvable = created.filter((c) => !c.held);
    const held = created.filter((c) => c.held);
    // Drain: every approved transfer reported by custody-track, every held action out of review.
    const drainMs = 120_000 + (s.reviews === 'expire' ? s.expiresSeconds * 1000 : 0);
    const drainEnd = Date.now() + drainMs;
    let events: SoakEvent[] = [];
    for (;;) {
      events = readEvents(r.userDir);
      const tracked = events.filter((e) => e.k === 'track').length;
      const reviewed = events.filter((e) => e.k === 'review').length;
      if (tracked >= approvable.length && reviewed >= held.length) break;
      if (Date.now() > drainEnd) {
        notes.push(`drain timed out after ${drainMs / 1000} s: ${tracked}/${approvable.length} tracked, ${reviewed}/${held.length} out of review`);
        break;
      }
      await sleep(1000);
    }
    await reviewer?.stop();
    samples.push(await sample(r, 'drained', created.length, t0));
    if (s.idleSeconds > 0) {
      console.error(`  idle ${s.idleSeconds} s (past the retention: expiry ${s.expiresSeconds} s, window ${s.windowHours} h, keepReported ${s.keepReportedHours} h)`);
      for (let waited = 0; waited < s.idleSeconds; ) {
        const chunk = Math.min(15, s.idleSeconds - waited);
        await sleep(chunk * 1000);
        waited += chunk;
        samples.push(await sample(r, `idle ${waited} s`, created.length, t0));
      }
    }
    events = readEvents(r.userDir);
    const census = (await simulatorCensus(child, prefix)).transfers;
    const checks = judge(s, { approvable, held, refused, events, census, counter, auditFile });
    if (reviewer) notes.push(`reviews: the bench rejected ${reviewer.voted()} held actions through POST /custody/reviews/{action_id}${reviewer.refused().length ? `; refused: ${reviewer.refused().length} (${reviewer.refused().slice(0, 3).join('; ')})` : ''}`);
    else notes.push(`reviews: no vote; each held action's review closes at its deadline (the transfer's expires, ${s.expiresSeconds} s)`);
    const errors = events.filter((e) => e.k === 'error');
    if (errors.length) notes.push(`caught errors: ${errors.length} (${errors.slice(0, 3).map((e) => JSON.stringify(e)).join('; ')})`);
    return { settings: s, samples, checks, notes };
  } finally {
    await red?.stop({ keepUserDir: keep });
    await counter.stop();
    await client.close();
    await stopSimulatorProcess(child);
    if (keep) console.error(`kept: ${dir}${red ? ` and ${red.userDir}` : ''}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The checks of a phase (module comment), each with its figures. */
function judge(
  s: PhaseSettings,
  o: { approvable: Created[]; held: Created[]; refused: string[]; events: SoakEvent[]; census: CensusRecord[]; counter: DecisionCounter; auditFile: string },
): Check[] {
  const byTx = new Map(o.census.map((c) => [c.txID, c]));
  const calls = o.counter.byAction();
  const actionOf = (c: Created) => byTx.get(c.txId)?.actionIDs[0] ?? '';
  const puts = (id: string) => (calls.get(id) ?? []).filter((c) => c.method === 'PUT');
  const dels = (id: string) => (calls.get(id) ?? []).filter((c) => c.method === 'DELETE');
  const tracked = countBy(o.events.flatMap((e) => (e.k === 'track' && e.state === 'approved_transfer' && e.final ? [e.tx_id] : [])));
  const trackedAny = countBy(o.events.flatMap((e) => (e.k === 'track' ? [e.tx_id] : [])));
  const reviewed = countBy(o.events.flatMap((e) => (e.k === 'review' ? [e.action_id] : [])));
  const reviewStates = countBy(o.events.flatMap((e) => (e.k === 'review' ? [e.state] : [])));
  const onePut = o.approvable.filter((c) => {
    const p = puts(actionOf(c));
    return p.length === 1 && (p[0].status ?? 0) >= 200 && (p[0].status ?? 0) < 300;
  }).length;
  const approvedAtSim = o.approvable.filter((c) => byTx.get(c.txId)?.txStatus === 'approved_transfer').length;
  const trackedOnce = o.approvable.filter((c) => tracked.get(c.txId) === 1).length;
  const heldPut = o.held.filter((c) => puts(actionOf(c)).length > 0).length;
  const heldApproved = o.held.filter((c) => byTx.get(c.txId)?.txStatus === 'approved_transfer').length;
  const heldReviewed = o.held.filter((c) => reviewed.get(actionOf(c)) === 1).length;
  const heldStatuses = [...countBy(o.held.map((c) => byTx.get(c.txId)?.txStatus ?? 'missing'))].map(([k, n]) => `${k} ${n}`).join(', ');
  const all = [...o.approvable, ...o.held];
  const twoPuts = all.filter((c) => puts(actionOf(c)).length > 1).length;
  const twoDels = all.filter((c) => dels(actionOf(c)).length > 1).length;
  const decisionLines = countBy(auditDecisionIds(path.dirname(o.auditFile)));
  const ours = new Set(all.map(actionOf));
  const twoLines = [...decisionLines].filter(([id, n]) => ours.has(id) && n > 1).length;
  const decided = [...decisionLines.keys()].filter((id) => ours.has(id)).length;
  const twiceTracked = [...trackedAny.values()].filter((n) => n > 1).length;
  const verify = spawnSync(process.execPath, [path.resolve(__dirname, '..', 'lib', 'audit', 'cli.js'), 'verify', o.auditFile], { encoding: 'utf8' });
  const verifyText = (verify.stdout + verify.stderr).trim().split('\n')[0];
  const a = o.approvable.length;
  const h = o.held.length;
  return [
    { name: 'transfers created', figures: `${a + h} of ${s.actions} (${a} approvable, ${h} held)${o.refused.length ? `; refused ${o.refused.length}: ${o.refused.slice(0, 2).join('; ')}` : ''}`, pass: o.refused.length === 0 },
    {
      name: '0 lost, approvable',
      figures: `exactly one approve call answered 2xx ${onePut}/${a}; approved_transfer at the simulator ${approvedAtSim}/${a}; reported final once by custody-track ${trackedOnce}/${a}`,
      pass: onePut === a && approvedAtSim === a && trackedOnce === a,
    },
    {
      name: '0 lost, held',
      figures: `approve calls ${heldPut}; approved at the simulator ${heldApproved}; left review once ${heldReviewed}/${h} (${[...reviewStates].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}); statuses: ${heldStatuses || 'none'}`,
      pass: heldPut === 0 && heldApproved === 0 && heldReviewed === h,
    },
    {
      name: '0 doubled',
      figures: `actions with 2+ approve calls ${twoPuts}, 2+ reject calls ${twoDels}; audit: ${decided} actions decided, ${twoLines} with 2+ decision lines; transactions reported 2+ times by custody-track ${twiceTracked}`,
      pass: twoPuts === 0 && twoDels === 0 && twoLines === 0 && twiceTracked === 0 && decided === a + h,
    },
    { name: 'audit verifies', figures: `custodyflow-audit verify: exit ${verify.status}: ${verifyText}`, pass: verify.status === 0 },
  ];
}

/** Print a phase's samples, slopes, idle comparison (shortened phase) and checks. */
function printPhase(r: PhaseResult): void {
  const s = r.settings;
  const f = (bytes: number) => (bytes / MB).toFixed(1);
  console.log(`\n== ${s.name} phase: ${s.actions} transfers at ${s.rate}/s; expires ${s.expiresSeconds} s, ${s.windowHours !== undefined ? `velocity window ${s.windowHours} h` : 'no velocity limit'}, track keepReported ${s.keepReportedHours !== undefined ? `${s.keepReportedHours} h` : 'the node default'}`);
  console.log(`${'sample'.padEnd(10)}${'actions'.padStart(9)}${'heap MB'.padStart(10)}${'RSS MB'.padStart(10)}${'fds'.padStart(6)}${'t s'.padStart(8)}`);
  for (const x of r.samples) console.log(`${x.label.padEnd(10)}${String(x.actions).padStart(9)}${f(x.heap).padStart(10)}${f(x.rss).padStart(10)}${String(x.fds).padStart(6)}${(x.at / 1000).toFixed(0).padStart(8)}`);
  // The load samples only (start and every tenth), in MB per 1,000 actions.
  const load = r.samples.filter((x) => x.label === 'start' || x.label.endsWith('%'));
  const half = load.filter((x) => x.actions >= s.actions / 2);
  const per = (xs: Sample[], key: 'heap' | 'rss') => slope(xs.map((x) => [x.actions / 1000, x[key] / MB])).toFixed(2);
  console.log(`slope per 1,000 actions (least squares over the load samples): heap after GC ${per(load, 'heap')} MB whole run, ${per(half, 'heap')} MB second half (${half.length} samples); RSS ${per(load, 'rss')} MB whole run, ${per(half, 'rss')} MB second half`);
  if (s.idleSeconds > 0) {
    const start = r.samples[0].heap;
    const peak = Math.max(...r.samples.map((x) => x.heap));
    const end = r.samples[r.samples.length - 1].heap;
    const back = end - start <= 5 * MB;
    console.log(`idle: heap after GC start ${f(start)} MB, peak ${f(peak)} MB, end of idle ${f(end)} MB (${f(end - start)} MB above the start): ${back ? 'returned to within 5 MB of the start' : 'did NOT return to within 5 MB of the start'}`);
  }
  for (const c of r.checks) console.log(`${c.pass ? 'ok  ' : 'FAIL'} ${c.name}: ${c.figures}`);
  for (const n of r.notes) console.log(`note: ${n}`);
}

async function main(): Promise<number> {
  const { phases, keep, snapshots } = readArgs(process.argv.slice(2));
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs; Node-RED in a child process with --expose-gc; samples: GET /_soak/memory (two GCs, then process.memoryUsage()), fds from /proc/<pid>/fd`);
  let failed = false;
  for (const s of phases) {
    const r = await runPhase(s, keep, snapshots);
    printPhase(r);
    failed ||= r.checks.some((c) => !c.pass);
  }
  return failed ? 1 : 0;
}

if (require.main === module) runMain(main);
