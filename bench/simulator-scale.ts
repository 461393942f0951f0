/**
 * The simulator at scale (docs/performance.md, the simulator group): with persistence on (the
 * simulator's default), the p50 of four API calls on an empty simulator and after N transfers
 * (default 100,000), and the restart time with N transfers.
 *
 * Two simulators in child processes (bench/simulator-process.ts), each on a fresh data folder:
 * - empty: the demo dataset only;
 * - seeded: N transfers seeded in the child, in-process, through the domain functions the API
 *   routes end in, a group commit per batch (simulator-process.ts `seedTransfers`): one in ten
 *   left pending on the Manual fund (custodian: the demo's *manual* core client), the rest from
 *   the demo fund, decided at once by the demo approver (one in fifty rejected, the others
 *   approved). The demo wallets are topped up by the faucet first when N needs it.
 *
 * Both then get the same preparation through the public surface: 10 faucet deposits on the demo
 * BTC-TESTNET wallet (so its ledger has at least 10 entries at empty too) and {@link BACKLOG}
 * transfers POSTed through lib and left pending: the measured core client (the demo approver)
 * has exactly that backlog at empty and at N. Both simulators stay up while measured; each
 * measure alternates between them in 5 rounds (which goes first alternates too), after 3
 * uncounted warm-up calls on each, so machine load and warm-up fall on both alike. Measured, in
 * this order, through lib's signed client over real sockets, one call at a time:
 * 1. ledger page: GET /company/{company_id}/fund/{fund_id}/ledger?wallet_id={demo BTC
 *    wallet}&limit=10 (spec section 4 "Funds, deposits, ledger, whitelist"; `limit` is the
 *    simulator's paging, network.ts `fundLedger`; lib's `getLedger` has no paging, so the signed
 *    `CustodyClient.request` sends it); the answer must hold 10 entries;
 * 2. pending-action list: lib `listActions` (GET /coreclient/{client_id}/actions); it must list
 *    exactly the backlog;
 * 3. feed connect: a new lib `CoreClientFeed` of the demo approver, from `start()` until the
 *    socket is open, its catch-up read (GET actions, which lib makes on every connect) has
 *    answered and every one of the backlog's actions has been emitted (the service's replay on
 *    connect and the catch-up deduplicated); then stopped. The same definition at empty and at N;
 * 4. POST transfer: lib `createTransfer` (demo BTC-TESTNET wallet -> counterparty), one at a time.
 *
 * Restart (seeded folder): the child killed with SIGKILL, then a new one started on the same
 * folder: the time from the fork until a signed API read (GET of the last transfer POSTed) has
 * answered 200; then the same after a clean stop. The empty folder's restart is shown beside.
 *
 * Options / environment: `n` / BENCH_SIM_TRANSFERS (default 100000; BENCH_QUICK=1: 5000),
 * `samples` / BENCH_SIM_SAMPLES (reads per measure, default 50), `posts` / BENCH_SIM_POSTS
 * (default 100), `feedConnects` / BENCH_SIM_FEEDS (default 20), `batch` (transfers per seeding
 * commit, default 2000). The data folders are removed at the end unless BENCH_KEEP=1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { CustodyClient, createTransfer, getTransfer, listActions } from '../lib';
import { CoreClientFeed } from '../lib/feeds';
import { benchTransfer, faucet, killSimulatorProcess, seedSimulator, startSimulatorProcess, stopSimulatorProcess, type SeedResult, type SimInfo } from './harness';
import { atMost, median, percentile, type BenchRow, printWhenMain } from './table';

/** Pending actions of the measured core client (the demo approver) at empty and at N. */
export const BACKLOG = 5;

/** Options of {@link run}; every field falls back to its environment variable, then its default. */
export interface SimulatorScaleOptions {
  /** transfers seeded (default 100,000; BENCH_SIM_TRANSFERS; BENCH_QUICK=1 makes it 5,000) */
  n?: number;
  /** calls per read measure (ledger page, pending list); default 50 */
  samples?: number;
  /** POST transfers measured; default 100 */
  posts?: number;
  /** feed connects measured; default 20 */
  feedConnects?: number;
  /** transfers per seeding commit; default 2,000 */
  batch?: number;
  /** print progress on stderr (default true) */
  verbose?: boolean;
}

/** Latencies of one simulator, ms per call. */
interface Point {
  ledger: number[];
  pending: number[];
  feed: number[];
  post: number[];
}

function envNumber(name: string): number | undefined {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

function label(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

function ms(x: number): string {
  return x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(2)} ms`;
}

/** Total size of the files below `dir`, bytes. */
function folderBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += folderBytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

function clientOf(sim: SimInfo): CustodyClient {
  return new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem, attempts: 1 });
}

/**
 * One feed connect (see the module comment): a new CoreClientFeed from start() until open,
 * catch-up answered and `backlog` actions emitted; then stopped.
 * @returns ms from start() to done.
 * @throws {Error} after 120 s, or when more or fewer actions than the backlog arrive.
 */
async function feedConnect(client: CustodyClient, clientId: string, backlog: number): Promise<number> {
  const feed = new CoreClientFeed(client, clientId, { heartbeatMs: 60000 });
  let actions = 0;
  let listed = false;
  let errors: Error[] = [];
  const t0 = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`feed connect: not done after 120 s (${actions} actions, listing ${listed}, errors: ${errors.map(String).join('; ')})`)), 120000);
      const check = () => {
        if (listed && actions >= backlog && feed.state === 'connected') {
          clearTimeout(timer);
          resolve();
        }
      };
      feed.on('error', (err: Error) => (errors = [...errors, err]));
      feed.on('action', () => {
        actions++;
        check();
      });
      feed.on('listing', () => {
        listed = true;
        check();
      });
      feed.on('state', check);
      feed.start();
    });
    const elapsed = performance.now() - t0;
    if (actions !== backlog) throw new Error(`feed connect: ${actions} actions emitted, expected the backlog of ${backlog}`);
    return elapsed;
  } finally {
    await feed.stop();
  }
}

/** A prepared simulator under measurement. */
interface Target {
  sim: SimInfo;
  client: CustodyClient;
  /** tx id of the last transfer POSTed through the API */
  lastTx: string;
  point: Point;
}

/**
 * Prepare a simulator as the module comment says: 10 faucet deposits on the demo BTC-TESTNET
 * wallet, {@link BACKLOG} transfers POSTed and left pending; check the backlog.
 * @throws {Error} when the demo approver's pending actions are not exactly the backlog.
 */
async function prepare(sim: SimInfo): Promise<Target> {
  const client = clientOf(sim);
  const demo = sim.demo;
  for (let i = 0; i < 10; i++) await faucet(sim.controlUrl, demo.wallets['BTC-TESTNET'].wallet_id, 1000);
  let lastTx = '';
  for (let i = 0; i < BACKLOG; i++) lastTx = (await createTransfer(client, benchTransfer(demo, 1000))).data.tx_id;
  const pending = await listActions(client, { client_id: demo.core_client_id });
  if (pending.data.count !== BACKLOG) throw new Error(`the demo approver has ${pending.data.count} pending actions, expected ${BACKLOG}`);
  return { sim, client, lastTx, point: { ledger: [], pending: [], feed: [], post: [] } };
}

/** The four measured calls of a target, each one call (see the module comment). */
function calls(t: Target): Record<keyof Point, () => Promise<void>> {
  const demo = t.sim.demo;
  const btc = demo.wallets['BTC-TESTNET'].wallet_id;
  const ledgerPath = `/company/${encodeURIComponent(demo.company_id)}/fund/${encodeURIComponent(demo.fund_id)}/ledger`;
  return {
    ledger: async () => {
      const res = await t.client.request<{ List: unknown[] }>('GET', ledgerPath, { query: { wallet_id: btc, limit: 10 }, idempotent: true });
      if (res.data.List.length !== 10) throw new Error(`ledger page: ${res.data.List.length} entries, expected 10`);
    },
    pending: async () => {
      const res = await listActions(t.client, { client_id: demo.core_client_id });
      if (res.data.count !== BACKLOG) throw new Error(`pending list: ${res.data.count} actions, expected ${BACKLOG}`);
    },
    feed: async () => {
      await feedConnect(t.client, demo.core_client_id, BACKLOG);
    },
    post: async () => {
      const res = await createTransfer(t.client, benchTransfer(demo, 1000));
      if (res.data.status !== 'new') throw new Error(`POST transfer answered ${res.data.status}`);
      t.lastTx = res.data.tx_id;
    },
  };
}

/** Rounds each measure is split into, alternating the two targets (and which goes first). */
const ROUNDS = 5;

/**
 * Measure `kind` on both targets: 3 uncounted warm-up calls each, then {@link ROUNDS} rounds of
 * `count / ROUNDS` calls per target, alternating which target goes first, so machine load and
 * warm-up fall on both alike. Latencies (ms) are appended to each target's point. The feed
 * connect is timed by {@link feedConnect} itself (start() to done).
 */
async function measureBoth(kind: keyof Point, count: number, targets: [Target, Target]): Promise<void> {
  const per = Math.max(1, Math.ceil(count / ROUNDS));
  const fns = targets.map(calls);
  for (const f of fns) for (let i = 0; i < 3; i++) await f[kind]();
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const t = targets[k];
      for (let i = 0; i < per; i++) {
        if (kind === 'feed') {
          t.point.feed.push(await feedConnect(t.client, t.sim.demo.core_client_id, BACKLOG));
          continue;
        }
        const t0 = performance.now();
        await fns[k][kind]();
        t.point[kind].push(performance.now() - t0);
      }
    }
  }
}

/**
 * Start a simulator on `dataDir` and time from the fork until a signed GET of transfer `txId`
 * answers 200 (retried every 20 ms while it fails).
 * @returns the child, its info and the seconds taken.
 * @throws {Error} when no read succeeds within 120 s.
 */
async function timedRestart(dataDir: string, txId: string): Promise<{ child: ChildProcess; sim: SimInfo; seconds: number }> {
  const t0 = performance.now();
  const { child, sim } = await startSimulatorProcess(dataDir, true);
  const client = clientOf(sim);
  try {
    let lastErr: unknown;
    while (performance.now() - t0 < 120000) {
      try {
        const res = await getTransfer(client, { company_id: sim.demo.company_id, tx_id: txId });
        if (res.statusCode === 200) return { child, sim, seconds: (performance.now() - t0) / 1000 };
      } catch (err) {
        lastErr = err;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`restart: no API read answered within 120 s: ${String(lastErr)}`);
  } finally {
    await client.close();
  }
}

/**
 * Run the simulator-at-scale benchmark (see the module comment).
 * @returns rows of group `simulator`: the four p50 ratios (N vs empty, goal <= 2x) and the two
 *   restart times (goal <= 5 s), as docs/performance.md lists them.
 * @throws {Error} when a simulator fails to start, the seeding fails, or an answer is not what
 *   the preparation should give (backlog, ledger page size).
 */
export async function run(opts: SimulatorScaleOptions = {}): Promise<BenchRow[]> {
  const o: Required<SimulatorScaleOptions> = {
    n: opts.n ?? envNumber('BENCH_SIM_TRANSFERS') ?? (process.env.BENCH_QUICK === '1' ? 5000 : 100000),
    samples: opts.samples ?? envNumber('BENCH_SIM_SAMPLES') ?? 50,
    posts: opts.posts ?? envNumber('BENCH_SIM_POSTS') ?? 100,
    feedConnects: opts.feedConnects ?? envNumber('BENCH_SIM_FEEDS') ?? 20,
    batch: opts.batch ?? 2000,
    verbose: opts.verbose ?? true,
  };
  const N = label(o.n);
  const log = (s: string) => {
    if (o.verbose) console.error(`simulator-scale: ${s}`);
  };
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-simscale-'));
  const emptyDir = path.join(root, 'empty');
  const seededDir = path.join(root, 'seeded');
  const children: ChildProcess[] = [];
  const targets: Target[] = [];
  try {
    // Both simulators are up during the measures, which alternate between them.
    log('empty simulator');
    const emptyStart = await startSimulatorProcess(emptyDir, true);
    children.push(emptyStart.child);
    const empty = await prepare(emptyStart.sim);
    targets.push(empty);

    log(`seeding ${o.n} transfers`);
    const fullStart = await startSimulatorProcess(seededDir, true);
    children.push(fullStart.child);
    const demo = fullStart.sim.demo;
    // Each seeded transfer sends `amount` 1000 base units + 1 fee; top up the wallets it debits.
    const need = Math.ceil(o.n * 1001 * 1.1);
    for (const w of [demo.wallets['BTC-TESTNET'].wallet_id, demo.wallets['ETH-TESTNET'].wallet_id, demo.manual.wallets['BTC-TESTNET'].wallet_id]) await faucet(fullStart.sim.controlUrl, w, need);
    const seeded: SeedResult = await seedSimulator(fullStart.child, { n: o.n, batch: o.batch, amount: 1000 });
    log(`seeded ${seeded.created} transfers in ${(seeded.ms / 1000).toFixed(1)} s: ${seeded.approved} approved, ${seeded.rejected} rejected, ${seeded.pending} pending (manual core client)`);
    const full = await prepare(fullStart.sim);
    targets.push(full);

    const pair: [Target, Target] = [empty, full];
    log('ledger page');
    await measureBoth('ledger', o.samples, pair);
    log('pending-action list');
    await measureBoth('pending', o.samples, pair);
    log('feed connect');
    await measureBoth('feed', o.feedConnects, pair);
    log('POST transfer');
    await measureBoth('post', o.posts, pair);
    for (const t of targets.splice(0)) await t.client.close();
    const bytes = folderBytes(seededDir);

    log('restart of the empty simulator');
    await stopSimulatorProcess(emptyStart.child);
    const emptyRestart = await timedRestart(emptyDir, empty.lastTx);
    children.push(emptyRestart.child);
    await stopSimulatorProcess(emptyRestart.child);
    log('restart after SIGKILL');
    await killSimulatorProcess(fullStart.child);
    const killRestart = await timedRestart(seededDir, full.lastTx);
    children.push(killRestart.child);
    log('restart after a clean stop');
    await stopSimulatorProcess(killRestart.child);
    const cleanRestart = await timedRestart(seededDir, full.lastTx);
    children.push(cleanRestart.child);
    await stopSimulatorProcess(cleanRestart.child);

    const row = (measure: string, a: number[], b: number[]): BenchRow => {
      const pa = median(a);
      const pb = median(b);
      return atMost('simulator', `${measure} p50, ${N} vs empty`, `${ms(pb)} vs ${ms(pa)} (p99 ${ms(percentile(b, 99))} vs ${ms(percentile(a, 99))})`, pb / pa, 2);
    };
    const mb = (bytes / 1e6).toFixed(1);
    return [
      row('POST transfer', empty.point.post, full.point.post),
      row('ledger page (10 entries)', empty.point.ledger, full.point.ledger),
      row('pending-action list', empty.point.pending, full.point.pending),
      row(`feed connect (backlog ${BACKLOG})`, empty.point.feed, full.point.feed),
      atMost('simulator', `restart with ${N} transfers after SIGKILL`, `${killRestart.seconds.toFixed(2)} s to an API read (empty: ${emptyRestart.seconds.toFixed(2)} s; data ${mb} MB; seeding ${(seeded.ms / 1000).toFixed(0)} s)`, killRestart.seconds, 5, ' s'),
      atMost('simulator', `restart with ${N} transfers after a clean stop`, `${cleanRestart.seconds.toFixed(2)} s to an API read (empty: ${emptyRestart.seconds.toFixed(2)} s)`, cleanRestart.seconds, 5, ' s'),
    ];
  } finally {
    for (const t of targets) await t.client.close();
    for (const c of children) await killSimulatorProcess(c);
    if (process.env.BENCH_KEEP === '1') console.error(`simulator-scale: data kept in ${root}`);
    else fs.rmSync(root, { recursive: true, force: true });
  }
}

printWhenMain(module, run);
