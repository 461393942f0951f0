/**
 * `npm run bench velocity`: the cost of a velocity window with 100,000 approvals in it against an
 * empty one, each ratio measured within one run (lib/approver/velocity.ts,
 * lib/approver/velocity-redis.ts).
 *
 * (a) RedisVelocityWindows, two instances (two coordinators) on one real redis-server
 *     (test/helpers/redis-server.ts) taking turns: read + reserve p50, full window against empty.
 * (b) LocalVelocityWindows: read + usage + reserve p50, full against empty.
 * (c') The coordinated steps of a decision through RedisVelocityWindows (claim, read, reserve,
 *     decided) without the Approver.
 * (c) A coordinated decision of lib's Approver (dry run: claim, shared window, audit line, the
 *     simulator in-process), a rule with a velocity count limit: p50, full window against empty;
 *     the 100,000 are written through RedisVelocityWindows.restore.
 *
 * Options (`run(opts)`): `approvals` in the full window (default 100,000), `n` read+reserve
 * rounds per side for (a) and (b) (default 3,000), `decisions` per side for (c) (default 200; it
 * stops after a minute once 20 are in).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustodyClient } from '../lib';
import { Approver, compileRules } from '../lib/approver';
import { Coordinator } from '../lib/coordination';
import { Simulator } from '../simulator';
import { RedisServer } from '../test/helpers/redis-server';
import { atMost, median, printWhenMain, type BenchRow } from './table';
import { LocalVelocityWindows, type VelocityEntry, type VelocityWindows } from '../lib/approver/velocity';
import { RedisVelocityWindows } from '../lib/approver/velocity-redis';

const GROUP = 'velocity';
const HOUR = 3600_000;
const KEEP = 24 * HOUR;

/** `count` approvals spread over the 20 hours before `now`. */
function seedEntries(count: number, now: number, prefix: string): VelocityEntry[] {
  const out: VelocityEntry[] = [];
  for (let i = 0; i < count; i++) out.push({ at: now - 20 * HOUR + Math.floor((i * 20 * HOUR) / count), action: `${prefix}-${i}`, amount: 1000n + BigInt(i % 97) });
  return out;
}

/**
 * Time `n` read + usage + reserve rounds on `asset`, the instances of `ws` taking turns; rounds
 * of the two sides interleaved in blocks of 50, so both see the same machine.
 * @returns ms per round, per side.
 */
async function readReserve(sides: Array<{ ws: VelocityWindows[]; asset: string }>, n: number, start: number): Promise<number[][]> {
  const times: number[][] = sides.map(() => []);
  let at = start;
  let seq = 0;
  for (let block = 0; block < n; block += 50) {
    for (let s = 0; s < sides.length; s++) {
      const { ws, asset } = sides[s];
      for (let i = block; i < Math.min(n, block + 50); i++) {
        const w = ws[i % ws.length];
        at++;
        const t0 = process.hrtime.bigint();
        const view = await w.read(asset, at);
        const u = view.usage(KEEP, at);
        if (!(await w.reserve(view, { at, action: `bench-${++seq}`, amount: 1n }))) throw new Error('velocity bench: a reserve conflicted with no other writer');
        times[s].push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (u.count < 0) throw new Error('unreachable');
      }
    }
  }
  return times;
}

const fmt = (ms: number) => (ms < 0.1 ? `${(ms * 1000).toFixed(1)} us` : `${ms.toFixed(3)} ms`);

/** Run (a), (b), (c) and return their rows. */
export async function run(opts: Record<string, unknown> = {}): Promise<BenchRow[]> {
  const approvals = Number(opts.approvals ?? 100_000);
  const n = Number(opts.n ?? 3000);
  const decisions = Number(opts.decisions ?? 200);
  const rows: BenchRow[] = [];
  const now = Date.now();
  const label = `${approvals.toLocaleString('en-US')} vs empty`;

  // (b) local first: no Redis needed.
  {
    const local = new LocalVelocityWindows(KEEP);
    await local.restore('FULL', seedEntries(approvals, now, 'seed'));
    const [full, empty] = await readReserve([{ ws: [local], asset: 'FULL' }, { ws: [local], asset: 'EMPTY' }], n * 5, now);
    const [f, e] = [median(full), median(empty)];
    rows.push(atMost(GROUP, `LocalVelocityWindows read+reserve p50, ${label}`, `${fmt(f)} vs ${fmt(e)}`, f / e, 1.5));
  }

  const redis = new RedisServer();
  await redis.start();
  const coords: Coordinator[] = [];
  let sim: Simulator | undefined;
  let dataDir: string | undefined;
  let client: CustodyClient | undefined;
  const approvers: Approver[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const c = new Coordinator({ url: redis.url, keyPrefix: 'cf-bench-velocity:', instance: `bench-${i}` });
      coords.push(c);
      await c.whenReady();
    }

    // (a) two instances taking turns; each has read the full window once (a start) before the timing.
    {
      const seeder = new RedisVelocityWindows(coords[0], 'bench-a', 'live', KEEP);
      await seeder.restore('FULL', seedEntries(approvals, now, 'seed'));
      const ws = coords.map((c) => new RedisVelocityWindows(c, 'bench-a', 'live', KEEP));
      const started = process.hrtime.bigint();
      for (const w of ws) await w.read('FULL', now);
      const firstRead = Number(process.hrtime.bigint() - started) / 1e6 / ws.length;
      const [full, empty] = await readReserve([{ ws, asset: 'FULL' }, { ws, asset: 'EMPTY' }], n, now);
      const [f, e] = [median(full), median(empty)];
      const incremental = ws.reduce((s, w) => s + w.readsIncremental, 0);
      const whole = ws.reduce((s, w) => s + w.readsWhole, 0);
      rows.push(atMost(GROUP, `RedisVelocityWindows read+reserve p50, ${label}, 2 instances`, `${fmt(f)} vs ${fmt(e)}`, f / e, 1.5));
      rows.push({ group: GROUP, measure: `RedisVelocityWindows first (whole) read of ${label.split(' ')[0]} approvals, then ${incremental} incremental / ${whole} whole reads`, figures: fmt(firstRead), value: firstRead, goal: 'info', pass: true });
    }

    // (c') the coordinated steps the Approver's pipeline takes through these windows: claim,
    // read, rules' usage, reserve, decided; two instances taking turns.
    {
      const seeder = new RedisVelocityWindows(coords[0], 'bench-c', 'dryRun', KEEP);
      await seeder.restore('FULL', seedEntries(approvals, now, 'seed'));
      const ws = coords.map((c) => new RedisVelocityWindows(c, 'bench-c', 'dryRun', KEEP));
      for (const w of ws) await w.read('FULL', now);
      let seq = 0;
      const times: number[][] = [[], []];
      for (let block = 0; block < n; block += 50) {
        for (const [side, asset] of [[0, 'FULL'], [1, 'EMPTY']] as const) {
          for (let i = block; i < Math.min(n, block + 50); i++) {
            const k = i % 2;
            const id = `dryRun:bench:step-${++seq}`;
            const at = now + seq;
            const t0 = process.hrtime.bigint();
            const got = await coords[k].claim(id, `claim-${seq}`);
            if (got.kind !== 'claimed') throw new Error('velocity bench: a claim was not taken');
            const view = await ws[k].read(asset, at);
            if (view.usage(KEEP, at).count < 0) throw new Error('unreachable');
            if (!(await ws[k].reserve(view, { at, action: id, amount: 1n }))) throw new Error('velocity bench: a reserve conflicted with no other writer');
            await coords[k].complete(got.claim, '{}');
            times[side].push(Number(process.hrtime.bigint() - t0) / 1e6);
          }
        }
      }
      const [f, e] = [median(times[0]), median(times[1])];
      rows.push(atMost(GROUP, `claim + RedisVelocityWindows read + reserve + decided p50, ${label}`, `${fmt(f)} vs ${fmt(e)}`, f / e, 1.5));
    }

    // (c) a coordinated decision of lib's Approver, dry run.
    {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-velocity-'));
      sim = await Simulator.start({ port: 0, dataDir: path.join(dataDir, 'sim') });
      const c = (client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem }));
      const rule = (asset: string) => ({ name: `count ${asset}`, decision: 'approve' as const, actionTypes: ['ApproveTransfer'], assets: [asset], velocityCount: '10000000', velocityWindowHours: '24' });
      const open = async (name: string, asset: string, coord: Coordinator) => {
        const a = await Approver.open({ rules: compileRules([rule(asset)]), defaultDecision: 'hold', mode: 'dryRun', auditFile: path.join(dataDir!, `${name}.jsonl`), client: async () => c, approverId: name, coordinator: coord });
        approvers.push(a);
        return a;
      };
      const seed = seedEntries(approvals, Date.now(), 'seed');
      // The window the Approver reads (its scope is its approverId).
      await new RedisVelocityWindows(coords[0], 'approver-full', 'dryRun', KEEP).restore('BTC-TESTNET', seed);
      const full = await open('approver-full', 'BTC-TESTNET', coords[0]);
      const empty = await open('approver-empty', 'BTC-TESTNET', coords[1]);
      let seq = 0;
      const decideOne = async (a: Approver): Promise<number> => {
        const id = `bench-decision-${++seq}`;
        const action = { id, action_id: id, client_id: 'bench', type: 'ApproveTransfer', status: 'pending', timestamp: Math.floor(Date.now() / 1000), expireTime: Math.floor(Date.now() / 1000) + 3600, details: { txID: `tx-${id}`, asset: 'BTC-TESTNET', amount: 1000, reference: 'velocity-bench', recipientAddress: 'wallet-c' } };
        const t0 = process.hrtime.bigint();
        const out = await a.decide(action);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (out.decision.decision !== 'approve') throw new Error(`velocity bench: a decision was ${out.decision.decision} (${out.output}): ${out.decision.reasons.join('; ')}`);
        return ms;
      };
      for (let i = 0; i < 5; i++) {
        await decideOne(full);
        await decideOne(empty);
      }
      const [tf, te]: number[][] = [[], []];
      // At most `decisions` per side, and no more than a minute once 20 are in (a window read whole costs seconds).
      const until = Date.now() + 60_000;
      for (let i = 0; i < decisions && (i < 20 || Date.now() < until); i++) {
        tf.push(await decideOne(full));
        te.push(await decideOne(empty));
      }
      const [f, e] = [median(tf), median(te)];
      rows.push(atMost(GROUP, `coordinated Approver decision p50 (dry run, velocity count rule), ${label}`, `${fmt(f)} vs ${fmt(e)} (${tf.length} each)`, f / e, 1.5));
    }
  } finally {
    for (const a of approvers) await a.close().catch(() => undefined);
    await client?.close();
    for (const c of coords) await c.close();
    await sim?.stop();
    await redis.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

printWhenMain(module, () => run());
