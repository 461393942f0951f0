/**
 * Velocity windows (lib/approver/velocity.ts, lib/approver/velocity-redis.ts) proven equal
 * to a brute-force sum over randomized histories (a seeded PRNG): adds in and out of time order,
 * releases, restores, the clock moving forward and a little backward; for Redis also several
 * instances (several RedisVelocityWindows on one real redis-server), concurrent reserves,
 * restarts (a new instance reading from scratch) and data losses (FLUSHALL, then each instance
 * writes back what it knows). At every step, `usage(windowMs, now)` of a fresh read equals the
 * sum and count of the entries that should be counted.
 */
import assert from 'node:assert/strict';
import { Coordinator } from '../../lib/coordination';
import { RedisServer } from '../helpers/redis-server';
import { mulberry32 } from '../helpers/fault-proxy';
import { LocalVelocityWindows, VelocityLedger, type VelocityEntry, type VelocityWindows, type WindowView } from '../../lib/approver/velocity';
import { RedisVelocityWindows } from '../../lib/approver/velocity-redis';

const HOUR = 3600_000;
const KEEP = 24 * HOUR;
const WINDOWS = [HOUR, 6 * HOUR, KEEP];
const ASSETS = ['BTC-TESTNET', 'ETH-TESTNET'];

/** The seeded PRNG of the fault proxy, [0, 1). */
const prng = mulberry32;

/** The brute-force model: per asset, action -> entry; what each operation should leave counted. */
class Model {
  readonly assets = new Map<string, Map<string, VelocityEntry>>();

  of(asset: string): Map<string, VelocityEntry> {
    let m = this.assets.get(asset);
    if (!m) this.assets.set(asset, (m = new Map()));
    return m;
  }

  /** A reserve: drop what is before `at - keepMs`, then count (replacing the action). */
  reserve(asset: string, e: VelocityEntry): void {
    const m = this.of(asset);
    for (const [action, x] of m) if (x.at < e.at - KEEP) m.delete(action);
    m.set(e.action, e);
  }

  restore(asset: string, entries: VelocityEntry[]): void {
    const m = this.of(asset);
    for (const e of entries) if (!m.has(e.action)) m.set(e.action, e);
  }

  /** Sum and count over `(now' - windowMs, now']`, now' the later of `now` and the newest entry. */
  usage(asset: string, windowMs: number, now: number): { sum: bigint; count: number } {
    const m = this.of(asset);
    let eff = now;
    for (const e of m.values()) if (e.at > eff) eff = e.at;
    let sum = 0n;
    let count = 0;
    for (const e of m.values()) {
      if (e.at > eff - windowMs && e.at <= eff) {
        sum += e.amount;
        count++;
      }
    }
    return { sum, count };
  }
}

/** A random amount in base units, sometimes above 2^53 (wei-sized). */
function amount(rnd: () => number): bigint {
  return rnd() < 0.2 ? BigInt(Math.floor(rnd() * 1e9)) * 10n ** 12n + BigInt(Math.floor(rnd() * 1e6)) : BigInt(1 + Math.floor(rnd() * 1e8));
}

/** The clock: mostly forward (up to 2 h), sometimes a little back (up to 1 min). */
function tick(rnd: () => number, now: number): number {
  return rnd() < 0.15 ? now - Math.floor(rnd() * 60_000) : now + Math.floor(rnd() * 2 * HOUR);
}

async function check(w: VelocityWindows, model: Model, now: number, where: string): Promise<void> {
  for (const asset of ASSETS) {
    const view = await w.read(asset, now);
    for (const windowMs of WINDOWS) assert.deepEqual(view.usage(windowMs, now), model.usage(asset, windowMs, now), `${where}: ${asset}, window ${windowMs / HOUR} h`);
  }
}

describe('velocity windows: equal to a brute-force sum', function () {
  this.timeout(120000);

  it('VelocityLedger: adds in any order, removes, prunes and resets equal a brute-force sum', () => {
    const rnd = prng(7);
    const ledger = new VelocityLedger();
    const model = new Map<string, VelocityEntry>();
    let now = 1_700_000_000_000;
    for (let step = 0; step < 3000; step++) {
      const r = rnd();
      now += Math.floor(rnd() * HOUR) - 10 * 60_000;
      if (r < 0.55) {
        // Out of order about one in three: up to 3 h back.
        const e = { at: now - (rnd() < 0.3 ? Math.floor(rnd() * 3 * HOUR) : 0), action: `a${Math.floor(rnd() * 400)}`, amount: amount(rnd) };
        ledger.add('X', e.amount, e.at, e.action);
        model.set(e.action, e);
      } else if (r < 0.8) {
        const action = `a${Math.floor(rnd() * 400)}`;
        assert.equal(ledger.remove(action), model.delete(action));
      } else if (r < 0.95) {
        ledger.prune(now, KEEP);
        for (const [a, e] of model) if (e.at < now - KEEP) model.delete(a);
      } else {
        const list = ledger.entriesOf('X');
        ledger.reset('X', list.reverse());
      }
      for (const windowMs of WINDOWS) {
        let sum = 0n;
        let count = 0;
        for (const e of model.values()) if (e.at > now - windowMs && e.at <= now) (sum += e.amount), count++;
        assert.deepEqual(ledger.usage('X', windowMs, now), { sum, count }, `step ${step}`);
      }
      assert.equal(ledger.size('X'), model.size);
    }
    const listed = ledger.entriesOf('X');
    assert.deepEqual(listed.map((e) => e.at), listed.map((e) => e.at).sort((a, b) => a - b), 'entries oldest first');
  });

  it('LocalVelocityWindows: reserves, releases, restores over a random history, and two decisions on one version', async () => {
    for (const seed of [1, 2, 3]) {
      const rnd = prng(seed);
      const w = new LocalVelocityWindows(KEEP);
      const model = new Model();
      let now = 1_700_000_000_000;
      let n = 0;
      for (let step = 0; step < 1500; step++) {
        now = tick(rnd, now);
        const asset = ASSETS[Math.floor(rnd() * ASSETS.length)];
        const r = rnd();
        if (r < 0.5) {
          const view = await w.read(asset, now);
          const e = { at: now, action: `act-${seed}-${n++}`, amount: amount(rnd) };
          assert.equal(await w.reserve(view, e), true);
          model.reserve(asset, e);
        } else if (r < 0.6) {
          // Two decisions read one version: only the first reserve passes.
          const [v1, v2] = [await w.read(asset, now), await w.read(asset, now)];
          const e1 = { at: now, action: `act-${seed}-${n++}`, amount: amount(rnd) };
          const e2 = { at: now, action: `act-${seed}-${n++}`, amount: amount(rnd) };
          assert.deepEqual([await w.reserve(v1, e1), await w.reserve(v2, e2)], [true, false]);
          model.reserve(asset, e1);
        } else if (r < 0.8) {
          const known = [...model.of(asset).keys()];
          const action = known.length > 0 && rnd() < 0.9 ? known[Math.floor(rnd() * known.length)] : 'unknown';
          await w.release(asset, action);
          model.of(asset).delete(action);
        } else {
          // Audit replay: some known (stay as they are), some new, some from before.
          const known = [...model.of(asset).values()];
          const entries: VelocityEntry[] = [];
          for (let i = 0; i < 3; i++) {
            if (known.length > 0 && rnd() < 0.5) entries.push({ ...known[Math.floor(rnd() * known.length)], amount: 1n });
            else entries.push({ at: now - Math.floor(rnd() * 30 * HOUR), action: `act-${seed}-${n++}`, amount: amount(rnd) });
          }
          await w.restore(asset, entries);
          model.restore(asset, entries);
        }
        await check(w, model, now, `seed ${seed} step ${step}`);
        assert.deepEqual((await w.entries(-Infinity)).map((e) => `${e.asset}/${e.action}`).sort(), ASSETS.flatMap((a) => [...model.of(a).keys()].map((x) => `${a}/${x}`)).sort());
      }
    }
  });

  describe('RedisVelocityWindows on a real redis-server', () => {
    const redis = new RedisServer();
    const coords: Coordinator[] = [];

    before(async () => {
      await redis.start();
      for (let i = 0; i < 3; i++) {
        const c = new Coordinator({ url: redis.url, keyPrefix: 'cf-vw:', instance: `instance-${i}` });
        coords.push(c);
        await c.whenReady();
      }
    });
    after(async () => {
      for (const c of coords) await c.close();
      await redis.stop();
    });

    async function flushAll(): Promise<void> {
      await coords[0].run((r) => r.flushall());
    }

    it('two reads at one version: only one of their reserves passes, also at once', async () => {
      const a = new RedisVelocityWindows(coords[0], 'conflict', 'live', KEEP);
      const b = new RedisVelocityWindows(coords[1], 'conflict', 'live', KEEP);
      const now = 1_700_000_000_000;
      for (let round = 0; round < 5; round++) {
        const [va, vb] = [await a.read('BTC', now), await b.read('BTC', now)];
        assert.equal(va.version, vb.version);
        const got = await Promise.all([a.reserve(va, { at: now, action: `x${round}`, amount: 1n }), b.reserve(vb, { at: now, action: `y${round}`, amount: 1n })]);
        assert.equal(got.filter(Boolean).length, 1, `round ${round}: ${got}`);
      }
      assert.deepEqual((await a.read('BTC', now)).usage(HOUR, now), { sum: 5n, count: 5 });
      assert.deepEqual((await b.read('BTC', now)).usage(HOUR, now), { sum: 5n, count: 5 });
    });

    it('a random history over three instances, with restarts and data losses, equals a brute-force sum at every step', async () => {
      let whole = 0;
      let incremental = 0;
      for (const seed of [11, 12]) {
        const rnd = prng(seed);
        const scope = `scope-${seed}`;
        const make = (i: number) => new RedisVelocityWindows(coords[i], scope, 'live', KEEP);
        const inst = [make(0), make(1), make(2)];
        /** What each instance decided and did not release (its audit file): written back after a data loss. */
        const audit = [new Map<string, VelocityEntry & { asset: string }>(), new Map(), new Map()] as Array<Map<string, VelocityEntry & { asset: string }>>;
        const model = new Model();
        let now = 1_700_000_000_000;
        let n = 0;
        let losses = 0;
        const count = (w: RedisVelocityWindows) => {
          whole += w.readsWhole;
          incremental += w.readsIncremental;
        };
        for (let step = 0; step < 700; step++) {
          now = tick(rnd, now);
          const asset = ASSETS[Math.floor(rnd() * ASSETS.length)];
          const i = Math.floor(rnd() * 3);
          const r = rnd();
          if (r < 0.45) {
            const view = await inst[i].read(asset, now);
            const e = { at: now, action: `act-${seed}-${n++}`, amount: amount(rnd) };
            assert.equal(await inst[i].reserve(view, e), true, `step ${step}: nothing changed since the read`);
            model.reserve(asset, e);
            audit[i].set(e.action, { asset, ...e });
          } else if (r < 0.6) {
            // Every instance reads one version, then all reserve at once: exactly one passes.
            const views: WindowView[] = [];
            for (const w of inst) views.push(await w.read(asset, now));
            const es = inst.map(() => ({ at: now, action: `act-${seed}-${n++}`, amount: amount(rnd) }));
            const got = await Promise.all(inst.map((w, k) => w.reserve(views[k], es[k])));
            assert.equal(got.filter(Boolean).length, 1, `step ${step}: ${got}`);
            const k = got.indexOf(true);
            model.reserve(asset, es[k]);
            audit[k].set(es[k].action, { asset, ...es[k] });
          } else if (r < 0.75) {
            // A definite "not applied": the instance that decided it releases it.
            const mine = [...audit[i].values()].filter((e) => e.asset === asset);
            const action = mine.length > 0 && rnd() < 0.9 ? mine[Math.floor(rnd() * mine.length)].action : 'unknown';
            await inst[i].release(asset, action);
            model.of(asset).delete(action);
            audit[i].delete(action);
          } else if (r < 0.85) {
            // Audit replay of a few of its own (they stay as they are): the version does not move.
            const before = await inst[i].read(asset, now);
            await inst[i].restore(asset, [...audit[i].values()].filter((e) => e.asset === asset && model.of(asset).has(e.action)).slice(-3));
            assert.equal((await inst[i].read(asset, now)).version, before.version, `step ${step}: a restore of counted approvals changes nothing`);
          } else if (r < 0.93) {
            // A restart: a new instance, reading from scratch.
            count(inst[i]);
            inst[i] = make(i);
          } else {
            // A data loss: Redis comes back empty; each instance writes back what it knows (its windows and its audit).
            losses++;
            // What counts and some instance decided (a released one brought back by an earlier write-back is known to no audit).
            const before = new Model();
            const audited = (action: string) => audit.some((m) => m.has(action));
            for (const a of ASSETS) before.restore(a, [...model.of(a).values()].filter((e) => e.at >= now - KEEP && audited(e.action)));
            await flushAll();
            const after = new Model();
            for (let k = 0; k < 3; k++) {
              const known = new Map<string, VelocityEntry & { asset: string }>();
              for (const e of await inst[k].entries(now)) known.set(e.action, e);
              for (const e of audit[k].values()) if (e.at >= now - KEEP && !known.has(e.action)) known.set(e.action, e);
              for (const a of ASSETS) {
                const mine = [...known.values()].filter((e) => e.asset === a).map(({ at, action, amount: x }) => ({ at, action, amount: x }));
                await inst[k].restore(a, mine);
                after.restore(a, mine);
              }
            }
            // Nothing that counted is lost (a released one may come back: the safe side).
            for (const a of ASSETS) for (const action of before.of(a).keys()) assert.ok(after.of(a).has(action), `step ${step}: ${action} written back`);
            model.assets.clear();
            for (const a of ASSETS) model.restore(a, [...after.of(a).values()]);
          }
          const k = Math.floor(rnd() * 3);
          await check(inst[k], model, now, `seed ${seed} step ${step} (instance ${k})`);
          // Its mirror, just read, holds exactly what counts (what Redis dropped included).
          const mirrored = (await inst[k].entries(-Infinity)).map((e) => `${e.asset}/${e.action}/${e.at}/${e.amount}`).sort();
          assert.deepEqual(mirrored, ASSETS.flatMap((a) => [...model.of(a).values()].map((e) => `${a}/${e.action}/${e.at}/${e.amount}`)).sort(), `step ${step}: the mirror of instance ${k}`);
        }
        assert.ok(losses > 0);
        for (const w of inst) count(w);
      }
      assert.ok(whole > 0 && incremental > whole, `reads mostly incremental: ${incremental} incremental, ${whole} whole`);
    });

    it('a window recreated without a write-back (Redis emptied under a running instance): its next read writes back what it knew', async () => {
      const a = new RedisVelocityWindows(coords[0], 'lost', 'live', KEEP);
      const b = new RedisVelocityWindows(coords[1], 'lost', 'live', KEEP);
      const now = 1_700_000_000_000;
      for (let i = 0; i < 5; i++) assert.equal(await a.reserve(await a.read('BTC', now), { at: now - i, action: `a${i}`, amount: 10n }), true);
      await b.read('BTC', now);
      await flushAll();
      // b decides first on the empty window: a's view is of the old window, so its reserve fails...
      const stale = await b.read('BTC', now);
      assert.deepEqual(stale.usage(HOUR, now), { sum: 50n, count: 5 }, 'b wrote back the five it knew before reading');
      assert.equal(await b.reserve(stale, { at: now, action: 'b1', amount: 1n }), true);
      // ... and a, reading again, sees the window as b left it.
      assert.deepEqual((await a.read('BTC', now)).usage(HOUR, now), { sum: 51n, count: 6 });
    });

    it('a release of an action takes only the reservation of its own time: another instance that counted the action again keeps its count', async () => {
      const a = new RedisVelocityWindows(coords[0], 'retaken', 'live', KEEP);
      const b = new RedisVelocityWindows(coords[1], 'retaken', 'live', KEEP);
      const now = 1_700_000_000_000;
      // a counted X, lost its claim before the call; b took X over and counted it again (later).
      assert.equal(await a.reserve(await a.read('BTC', now), { at: now, action: 'X', amount: 7n }), true);
      const own = await b.read('BTC', now + 5000);
      assert.deepEqual(own.entry('X'), { at: now, action: 'X', amount: 7n }, 'b sees the earlier reservation of X');
      assert.equal(await b.reserve(own, { at: now + 5000, action: 'X', amount: 7n }), true);
      // a gives up its reservation: b's stays counted.
      await a.release('BTC', 'X', now);
      assert.deepEqual((await b.read('BTC', now + 5000)).usage(HOUR, now + 5000), { sum: 7n, count: 1 });
      // b's own release (its time) takes it.
      await b.release('BTC', 'X', now + 5000);
      assert.deepEqual((await a.read('BTC', now + 5000)).usage(HOUR, now + 5000), { sum: 0n, count: 0 });
    });
  });
});
