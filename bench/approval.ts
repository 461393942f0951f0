/**
 * The approval round trip (docs/performance.md, the approval group: p50 <= 10 ms with persistence
 * on, flat over 2,000 transfers), against the simulator in a child process with its persistence on
 * (the default), on a fresh data folder.
 *
 * One round trip, one transfer at a time, all through lib over real sockets:
 * 1. POST /company/{company_id}/transfer (`createTransfer`, demo BTC-TESTNET wallet ->
 *    counterparty; custodian: the demo approver core client, threshold 1);
 * 2. the core client feed (`CoreClientFeed` of the demo approver, open for the whole run)
 *    emits the transfer's action (`source` `feed`);
 * 3. PUT /coreclient/{client_id}/action/{action_id} (`approveAction`);
 * 4. the wallets feed (`WalletsFeed`, open for the whole run) delivers a movement with the
 *    transfer's tx_id: the transfer is seen approved (the simulator sends it only once the
 *    approval is written).
 * Timed from just before 1 to 4 (ms, `performance.now()`); each stage is recorded too (the POST
 * answer, the action after it, the PUT answer, the wallets message after it). The simulator
 * sends a feed message only after the state holding it is written, so a round trip waits for
 * at least two group commits: the disk's fsync latency is measured first (appends of 256 bytes
 * to a file in the benchmark's data folder, each followed by fsync) and shown with the figures.
 *
 * Rows: the overall p50 (goal <= 10 ms) and the p50 of the last {@link WINDOW} round trips over
 * the first {@link WINDOW} (goal <= 1.2x, "flat"). Warm-up round trips (20) are not counted.
 * Options / environment: `transfers` / BENCH_APPROVAL_TRANSFERS (default 2000; BENCH_QUICK=1:
 * 600). The data folder is removed at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { approveAction, CustodyClient, createTransfer, type Action, type WalletFeedMessage } from '../lib';
import { CoreClientFeed, WalletsFeed } from '../lib/feeds';
import { benchTransfer, killSimulatorProcess, startSimulatorProcess, stopSimulatorProcess } from './harness';
import { atMost, median, percentile, type BenchRow, printWhenMain } from './table';

/** Round trips compared at the start and at the end of the run ("flat": the p50 of the last 200 at
 * most 1.2x that of the first 200). */
export const WINDOW = 200;
const WARMUP = 20;
/** Longest wait for one stage of a round trip, ms. */
const STAGE_TIMEOUT_MS = 60000;

/** Options of {@link run}. */
export interface ApprovalOptions {
  /** measured round trips (default 2,000; BENCH_APPROVAL_TRANSFERS; BENCH_QUICK=1 makes it 600); at least 2 x {@link WINDOW} */
  transfers?: number;
  /** print progress on stderr (default true) */
  verbose?: boolean;
}

/** fsync latency of the disk under `dir`, ms per call. */
export interface FsyncLatency {
  /** median of write + fsync, ms */
  p50: number;
  /** 99th percentile of write + fsync, ms */
  p99: number;
  /** appends measured */
  count: number;
}

/**
 * The fsync latency of the disk holding `dir`: `count` appends of 256 bytes to a new file, each
 * followed by `fsync` (synchronous calls, after 5 uncounted). The file is removed.
 * @returns p50 and p99 in ms.
 * @throws {Error} when the file cannot be written (fs errors).
 */
export function measureFsync(dir: string, count = 100): FsyncLatency {
  const file = path.join(dir, 'fsync-probe.bin');
  const fd = fs.openSync(file, 'a');
  const chunk = Buffer.alloc(256, 120);
  const out: number[] = [];
  try {
    for (let i = 0; i < count + 5; i++) {
      const t0 = performance.now();
      fs.writeSync(fd, chunk);
      fs.fsyncSync(fd);
      if (i >= 5) out.push(performance.now() - t0);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return { p50: median(out), p99: percentile(out, 99), count };
}

/** A queue whose `next()` waits for the next pushed value (rejects after `timeoutMs`). */
class Mailbox<T> {
  private readonly items: T[] = [];
  private waiter: ((v: T) => void) | undefined;

  push(v: T): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(v);
    } else this.items.push(v);
  }

  next(what: string, timeoutMs = STAGE_TIMEOUT_MS): Promise<T> {
    if (this.items.length) return Promise.resolve(this.items.shift()!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error(`approval: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = (v) => {
        clearTimeout(timer);
        resolve(v);
      };
    });
  }
}

/** Resolve when `feed` is connected (and, for a core client feed, its first catch-up listed). */
function opened(feed: CoreClientFeed | WalletsFeed, listing: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let listed = !listing;
    const timer = setTimeout(() => reject(new Error('approval: a feed did not open within 30 s')), 30000);
    const check = () => {
      if (connected && listed) {
        clearTimeout(timer);
        resolve();
      }
    };
    feed.on('state', (s: string) => {
      connected = s === 'connected';
      check();
    });
    if (listing)
      feed.once('listing', () => {
        listed = true;
        check();
      });
  });
}

/** One measured round trip, ms: the total and its stages. */
interface RoundTrip {
  total: number;
  post: number;
  feed: number;
  put: number;
  settled: number;
}

function ms(x: number): string {
  return `${x.toFixed(2)} ms`;
}

/**
 * Run the approval round-trip benchmark (see the module comment).
 * @returns rows of group `approval`: overall p50 (<= 10 ms) and last-window over first-window
 *   p50 (<= 1.2x); the fsync latency is in the first row's figures.
 * @throws {Error} when the simulator fails to start, a stage times out, or a call is refused.
 */
export async function run(opts: ApprovalOptions = {}): Promise<BenchRow[]> {
  const envN = Number(process.env.BENCH_APPROVAL_TRANSFERS);
  const n = Math.max(2 * WINDOW, opts.transfers ?? (Number.isFinite(envN) && envN > 0 ? envN : process.env.BENCH_QUICK === '1' ? 600 : 2000));
  const verbose = opts.verbose ?? true;
  const log = (s: string) => {
    if (verbose) console.error(`approval: ${s}`);
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-approval-'));
  let child: ChildProcess | undefined;
  let client: CustodyClient | undefined;
  const feeds: Array<CoreClientFeed | WalletsFeed> = [];
  try {
    const fsync = measureFsync(dataDir);
    log(`disk fsync p50 ${ms(fsync.p50)}, p99 ${ms(fsync.p99)} (${fsync.count} appends of 256 B)`);
    const started = await startSimulatorProcess(path.join(dataDir, 'sim'), true);
    child = started.child;
    const { sim } = started;
    const demo = sim.demo;
    client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem, attempts: 1 });

    const actions = new Mailbox<Action>();
    const actionFeed = new CoreClientFeed(client, demo.core_client_id, { heartbeatMs: 60000 });
    actionFeed.on('action', (a: Action, source: string) => {
      if (source === 'feed') actions.push(a);
    });
    actionFeed.on('error', (err: Error) => log(`core client feed: ${err.message}`));
    const walletsFeed = new WalletsFeed(client, { heartbeatMs: 60000 });
    // tx ids seen on the wallets feed, and the one round trip waiting for its tx id.
    const seen = new Set<string>();
    let waiting: { txId: string; resolve: () => void } | undefined;
    walletsFeed.on('transaction', (m: WalletFeedMessage) => {
      if (!m.tx_id) return;
      if (waiting && waiting.txId === m.tx_id) {
        const w = waiting;
        waiting = undefined;
        w.resolve();
      } else seen.add(m.tx_id);
    });
    walletsFeed.on('error', (err: Error) => log(`wallets feed: ${err.message}`));
    const settledOn = (txId: string): Promise<void> => {
      if (seen.delete(txId)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`approval: no wallets feed message for ${txId} within ${STAGE_TIMEOUT_MS} ms`)), STAGE_TIMEOUT_MS);
        waiting = {
          txId,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
    };
    feeds.push(actionFeed, walletsFeed);
    const open = Promise.all([opened(actionFeed, true), opened(walletsFeed, false)]);
    actionFeed.start();
    walletsFeed.start();
    await open;

    const once = async (): Promise<RoundTrip> => {
      const t0 = performance.now();
      const created = await createTransfer(client!, benchTransfer(demo, 1000));
      if (created.data.status !== 'new') throw new Error(`approval: POST transfer answered ${created.data.status}`);
      const txId = created.data.tx_id;
      const t1 = performance.now();
      const action = await actions.next(`core client feed action for ${txId}`);
      const t2 = performance.now();
      const settled = settledOn(txId);
      await approveAction(client!, { client_id: demo.core_client_id, action_id: action.id });
      const t3 = performance.now();
      await settled;
      const t4 = performance.now();
      return { total: t4 - t0, post: t1 - t0, feed: t2 - t1, put: t3 - t2, settled: t4 - t3 };
    };

    for (let i = 0; i < WARMUP; i++) await once();
    const trips: RoundTrip[] = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      trips.push(await once());
      if ((i + 1) % 500 === 0) log(`${i + 1}/${n} round trips (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }

    const totals = trips.map((t) => t.total);
    const first = totals.slice(0, WINDOW);
    const last = totals.slice(-WINDOW);
    const p50 = median(totals);
    const stage = (k: keyof RoundTrip) => ms(median(trips.map((t) => t[k])));
    return [
      atMost(
        'approval',
        `approval round trip p50, persistence on, ${n} transfers`,
        `p50 ${ms(p50)}, p99 ${ms(percentile(totals, 99))}; stages p50: POST ${stage('post')}, feed ${stage('feed')}, PUT ${stage('put')}, wallets feed ${stage('settled')}; disk fsync p50 ${ms(fsync.p50)}`,
        p50,
        10,
        ' ms',
      ),
      atMost('approval', `approval round trip p50, last ${WINDOW} vs first ${WINDOW} of ${n}`, `${ms(median(last))} vs ${ms(median(first))}`, median(last) / median(first), 1.2),
    ];
  } finally {
    for (const f of feeds) await f.stop();
    await client?.close();
    if (child) {
      const exited = child.exitCode !== null || child.signalCode !== null;
      if (!exited) await Promise.race([stopSimulatorProcess(child), new Promise((r) => setTimeout(r, 10000))]);
      await killSimulatorProcess(child);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

printWhenMain(module, run);
