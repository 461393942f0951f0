/**
 * The core client feed's duplicate check per action (docs/performance.md, the dedupe group: its
 * cost per action should not grow with the ids remembered), with 0, 1,000, 10,000, 50,000 and
 * 100,000 action ids already remembered, in one run:
 *
 * - `via CoreClientFeed`: the feed's real path for a message (`handleMessage`: the duplicate
 *   check, the bookkeeping in lib/support/expiring-ids.ts, the `action` event to one listener), on a
 *   CoreClientFeed that is never started (no socket). Every remembered id expires in the next
 *   hours, as pending actions do, so nothing is forgotten while measuring: the case in which the
 *   feed's former bookkeeping scanned every remembered id per action.
 * - `churn, ExpiringIdSet`: the structure alone under a steady state in which one remembered id
 *   expires per action (a clock of its own, one second per action), so each action also pays
 *   for forgetting one.
 * - `bare Map (info)`: a Map with one set and one delete per action at the same levels, the
 *   floor of any hash-based dedupe under churn: what grows with the level there is the memory
 *   hierarchy (a larger table misses the caches), not the algorithm.
 * - `former bookkeeping (info)`: the feed's former bookkeeping (a Map and, from 10,000 ids, a scan
 *   of all of them per action), reproduced here, at 0 and 100,000.
 *
 * Per action: nanoseconds, the median over repetitions (levels interleaved) and over 20 slices
 * of each batch of new ids (a slice's mean per action; short slices keep a preemption by another
 * process out of the median). Rows: the ratio at
 * 100,000 vs 0 remembered ids; the goal (<= 1.5x) is on the feed's path, the others are for
 * information.
 *
 * Run: `node dist/bench/feed-dedupe.js` (env DEDUPE_REPS, default 7; DEDUPE_BATCH, default 5000).
 */
import { generateKeyPairSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { CustodyClient } from '../lib';
import { CoreClientFeed } from '../lib/feeds';
import { ExpiringIdSet } from '../lib/support/expiring-ids';
import { atMost, median, type BenchRow, printWhenMain } from './table';

/** Options of {@link run}. */
export interface DedupeBenchOptions {
  /** Repetitions per level (default `$DEDUPE_REPS` or 7). */
  reps?: number;
  /** New ids timed per repetition (default `$DEDUPE_BATCH` or 5000). */
  batch?: number;
  /** Remembered ids before each batch (default 0, 1,000, 10,000, 50,000, 100,000). */
  levels?: number[];
}

const DEFAULT_LEVELS = [0, 1000, 10000, 50000, 100000];

/** Timed slices per batch: the median over short slices keeps a preemption by another process (a few ms) out of the figure. */
const SLICES = 20;

/**
 * Time `step(0)` ... `step(n - 1)` in {@link SLICES} consecutive slices.
 * @returns nanoseconds per step of each slice.
 */
function sliced(n: number, step: (i: number) => void): number[] {
  const per = Math.max(1, Math.floor(n / SLICES));
  const out: number[] = [];
  for (let from = 0; from < n; from += per) {
    const to = Math.min(n, from + per);
    const t0 = performance.now();
    for (let i = from; i < to; i++) step(i);
    out.push(((performance.now() - t0) * 1e6) / (to - from));
  }
  return out;
}

/** A feed message as the service sends it: an action id and its expiry (epoch seconds, hours ahead). */
interface Message {
  coreClientID: string;
  expireTime: number;
  id: string;
  status: 'pending';
  timestamp: number;
  type: 'ApproveTransfer';
}

let seq = 0;
/** `n` messages with fresh ids, expiring 1 to 3 hours from now in no particular order. */
function messages(n: number): Message[] {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: n }, () => {
    const i = ++seq;
    return { coreClientID: 'bench', expireTime: now + 3600 + ((i * 7919) % 7200), id: `bench-action-${i}`, status: 'pending', timestamp: now, type: 'ApproveTransfer' };
  });
}

/** The feed's message path, reached as the socket's message handler reaches it. */
type Feed = CoreClientFeed & { handleMessage(msg: unknown): void };

/** Nanoseconds per action through CoreClientFeed with `level` ids remembered, per slice. */
function viaFeed(client: CustodyClient, level: number, batch: number): number[] {
  const feed = new CoreClientFeed(client, 'bench') as Feed;
  let emitted = 0;
  feed.on('action', () => emitted++);
  for (const m of messages(level)) feed.handleMessage(m);
  const timed = messages(batch);
  const ns = sliced(batch, (i) => feed.handleMessage(timed[i]));
  if (emitted !== level + batch) throw new Error(`emitted ${emitted}, expected ${level + batch}`);
  return ns;
}

/** Nanoseconds per action of ExpiringIdSet alone with `level` ids remembered, one expiring per action, per slice. */
function churn(level: number, batch: number): number[] {
  let now = 1_000_000;
  const set = new ExpiringIdSet({ now: () => now });
  // Remembered ids whose horizons are the next `level` seconds, in no particular order.
  for (let i = 0; i < level; i++) set.add(`old-${++seq}`, now + 1 + ((i * 7919) % level));
  const ids = Array.from({ length: batch }, () => `new-${++seq}`);
  const ns = sliced(batch, (i) => {
    now++;
    set.add(ids[i], now + level);
  });
  if (level >= 10000 && set.size > level + 1) throw new Error(`size ${set.size}: nothing was forgotten`);
  return ns;
}

/** Nanoseconds per action of the feed's former bookkeeping (Map + scan, reproduced), `level` ids remembered, per slice. */
function before(level: number, batch: number): number[] {
  const seen = new Map<string, number>();
  const add = (m: Message) => {
    if (seen.has(m.id)) return;
    seen.set(m.id, m.expireTime + 86400);
    if (seen.size < 10000) return;
    const now = Math.floor(Date.now() / 1000);
    for (const [id, horizon] of seen) if (horizon < now) seen.delete(id);
  };
  // Filled without the scan (with it, filling 100,000 would take minutes); then timed with it.
  for (const m of messages(level)) seen.set(m.id, m.expireTime + 86400);
  const timed = messages(batch);
  return sliced(batch, (i) => add(timed[i]));
}

/**
 * Nanoseconds per action of a bare Map holding `level` ids, one set and one delete per action:
 * the floor of any hash-based dedupe under churn (its growth with the level is the memory
 * hierarchy, not the algorithm).
 */
function mapFloor(level: number, batch: number): number[] {
  const map = new Map<string, number>();
  const old: string[] = [];
  for (let i = 0; i < level; i++) {
    const id = `old-${++seq}`;
    map.set(id, i);
    old.push(id);
  }
  const ids = Array.from({ length: batch }, () => `new-${++seq}`);
  return sliced(batch, (i) => {
    map.set(ids[i], i);
    if (level > 0) map.delete(old[i % level]);
  });
}

/** Measure as described in the module comment. */
export async function run(opts: DedupeBenchOptions = {}): Promise<BenchRow[]> {
  const reps = opts.reps ?? (Number(process.env.DEDUPE_REPS) || 7);
  const batch = opts.batch ?? (Number(process.env.DEDUPE_BATCH) || 5000);
  const levels = opts.levels ?? DEFAULT_LEVELS;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const client = new CustodyClient({ baseUrl: 'http://127.0.0.1:9/api/v1/p', apiKey: 'bench', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string });
  const feedNs = new Map<number, number[]>(levels.map((l) => [l, []]));
  const churnNs = new Map<number, number[]>(levels.map((l) => [l, []]));
  const floorNs = new Map<number, number[]>(levels.map((l) => [l, []]));
  const beforeNs = new Map<number, number[]>([0, 100000].map((l) => [l, []]));
  // Warm-up (JIT), not counted.
  viaFeed(client, 1000, batch);
  churn(1000, batch);
  for (let r = 0; r < reps; r++) {
    for (const l of levels) {
      feedNs.get(l)!.push(...viaFeed(client, l, batch));
      churnNs.get(l)!.push(...churn(l, batch));
      floorNs.get(l)!.push(...mapFloor(l, batch));
    }
    // The former scan costs ~100-260 us per action at 100,000: a short batch.
    if (r < 3) for (const l of beforeNs.keys()) beforeNs.get(l)!.push(...before(l, l >= 10000 ? 200 : batch));
    await new Promise((resolve) => setImmediate(resolve));
  }
  await client.close();
  const fmt = (m: Map<number, number[]>) => [...m].map(([l, xs]) => `${l >= 1000 ? `${l / 1000}k` : l}: ${Math.round(median(xs))} ns`).join(', ');
  const top = levels[levels.length - 1];
  const ratio = (m: Map<number, number[]>) => median(m.get(top)!) / median(m.get(levels[0])!);
  return [
    atMost('dedupe', `per action via CoreClientFeed, ${top / 1000}k vs ${levels[0]} remembered ids`, fmt(feedNs), ratio(feedNs), 1.5),
    {
      group: 'dedupe',
      measure: `per action, one id expiring per action (ExpiringIdSet), ${top / 1000}k vs ${levels[0]} (info)`,
      figures: fmt(churnNs),
      value: ratio(churnNs),
      goal: 'info',
      pass: true,
    },
    {
      group: 'dedupe',
      measure: `the same on a bare Map (set + delete: the floor of any hash dedupe), ${top / 1000}k vs ${levels[0]} (info)`,
      figures: fmt(floorNs),
      value: ratio(floorNs),
      goal: 'info',
      pass: true,
    },
    {
      group: 'dedupe',
      measure: `per action, the feed's former bookkeeping (Map + scan, reproduced), 100k vs 0 (info)`,
      figures: fmt(beforeNs),
      value: median(beforeNs.get(100000)!) / median(beforeNs.get(0)!),
      goal: 'info',
      pass: true,
    },
  ];
}

printWhenMain(module, run);
