/**
 * lib/support/expiring-ids.ts, the core client feed's memory of emitted action ids (a duplicate
 * check whose cost per action does not grow with the ids remembered; bench/feed-dedupe.ts):
 * duplicates suppressed until forgotten, forgotten past their horizon only from `pruneFrom` ids on
 * (as the feed always did), the cap evicting the earliest-expiring whatever the arrival order; and
 * the real CoreClientFeed against a real simulator emitting each action once with a small cap.
 */
import assert from 'node:assert/strict';
import { ExpiringIdSet, EXPIRING_IDS_PRUNE_FROM } from '../../lib/support/expiring-ids';
import { type Action } from '../../lib';
import { CoreClientFeed } from '../../lib/feeds';
import { startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';
import { control } from '../helpers/support';
import { bodyOf, transferRequest } from '../helpers/requests';

/** A settable clock (epoch seconds) for the set's `now` option. */
function clock(start: number): { now: () => number; set: (t: number) => void } {
  let t = start;
  return { now: () => t, set: (v) => (t = v) };
}

/** A deterministic shuffle (seeded linear congruential generator). */
function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe('ExpiringIdSet (the core client feed dedupe)', () => {
  it('suppresses a duplicate before its horizon and accepts the id again once it is forgotten past it', () => {
    const c = clock(1000);
    const set = new ExpiringIdSet({ pruneFrom: 1, now: c.now });
    assert.equal(set.add('a', 1010), true);
    assert.equal(set.add('a', 5000), false, 'a duplicate');
    assert.equal(set.horizonOf('a'), 1010, 'a duplicate does not move the horizon');
    c.set(1010);
    assert.equal(set.add('b', 2000), true);
    assert.equal(set.has('a'), true, 'at its horizon the id is still a duplicate (forgotten only after it)');
    c.set(1011);
    assert.equal(set.add('c', 2000), true);
    assert.equal(set.has('a'), false, 'past its horizon, once an id is added, it is forgotten');
    assert.equal(set.add('a', 3000), true, 'and is new again');
    assert.equal(set.size, 3);
  });

  it('forgets nothing below pruneFrom ids, even past the horizon (the feed\'s rule since the start); from there every id past its horizon at once', () => {
    const c = clock(1000);
    const set = new ExpiringIdSet({ now: c.now });
    assert.equal(EXPIRING_IDS_PRUNE_FROM, 10000);
    for (let i = 0; i < 9999; i++) set.add(`old-${i}`, 500 + (i % 400));
    assert.equal(set.size, 9999);
    assert.equal(set.has('old-0'), true, 'past its horizon but below 10,000 ids: still a duplicate');
    assert.equal(set.add('old-0', 2000), false);
    set.add('new', 2000);
    assert.equal(set.size, 1, 'the 10,000th id prunes every expired one');
    assert.equal(set.has('new'), true);
  });

  it('above maxSize evicts the earliest-expiring ids, not the first added', () => {
    const set = new ExpiringIdSet({ maxSize: 3, now: () => 0 });
    set.add('late', 400);
    set.add('early', 100);
    set.add('middle', 200);
    set.add('latest', 500);
    assert.deepEqual(['late', 'early', 'middle', 'latest'].filter((id) => set.has(id)), ['late', 'middle', 'latest']);
    set.add('earliest', 50);
    assert.equal(set.has('earliest'), false, 'an id that expires before all the others is the one evicted');
    assert.equal(set.size, 3);
    assert.equal(set.add('earliest', 50), true, 'and so it is not a duplicate');
  });

  it('keeps the same ids whatever the arrival order: the cap keeps the latest-expiring, pruning drops exactly the expired', () => {
    const ids = Array.from({ length: 500 }, (_, i) => ({ id: `id-${i}`, horizon: 1000 + ((i * 7919) % 500) }));
    const byHorizon = [...ids].sort((a, b) => b.horizon - a.horizon);
    const kept = (order: typeof ids, options: ConstructorParameters<typeof ExpiringIdSet>[0]) => {
      const set = new ExpiringIdSet(options);
      for (const { id, horizon } of order) set.add(id, horizon);
      return ids.filter(({ id }) => set.has(id)).map(({ id }) => id);
    };
    const capped = byHorizon.slice(0, 120).map(({ id }) => id).sort();
    const unexpired = ids.filter(({ horizon }) => horizon >= 1300).map(({ id }) => id).sort();
    for (const seed of [1, 2, 3, 42, 1234]) {
      const order = shuffled(ids, seed);
      assert.deepEqual(kept(order, { maxSize: 120, now: () => 0 }).sort(), capped, `cap, order ${seed}`);
      assert.deepEqual(kept(order, { pruneFrom: 1, now: () => 1300 }).sort(), unexpired, `expiry, order ${seed}`);
    }
    // Ascending and descending arrival too (a heap's worst cases).
    assert.deepEqual(kept([...byHorizon].reverse(), { maxSize: 120, now: () => 0 }).sort(), capped);
    assert.deepEqual(kept(byHorizon, { maxSize: 120, now: () => 0 }).sort(), capped);
  });

  it('equal horizons leave in the order they came; NaN horizons and a cap below 1 are refused', () => {
    const set = new ExpiringIdSet({ maxSize: 2, now: () => 0 });
    set.add('first', 100);
    set.add('second', 100);
    set.add('third', 100);
    assert.deepEqual(['first', 'second', 'third'].filter((id) => set.has(id)), ['second', 'third']);
    assert.throws(() => set.add('x', NaN), RangeError);
    assert.equal(set.has('x'), false);
    assert.throws(() => new ExpiringIdSet({ maxSize: 0 }), RangeError);
  });

  it('agrees with a plain model (a list scanned per step) over 20,000 random steps: adds, duplicates, a moving clock, the cap', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n; // the high bits: the low ones of this generator repeat
    };
    const c = clock(100);
    const set = new ExpiringIdSet({ maxSize: 150, pruneFrom: 40, now: c.now });
    const model = new Map<string, { horizon: number; order: number }>();
    const everAdded: string[] = [];
    let order = 0;
    for (let step = 0; step < 20000; step++) {
      const r = rand(10);
      // The clock moves slowly enough for the cap to bite (about 9,900 evictions, 2,000 prunes, 8,000 duplicates with this seed).
      if (r === 0 && rand(8) === 0) c.set(c.now() + 1 + rand(3));
      // Short ids over a small alphabet: many come back (duplicates, or new again once forgotten).
      const id = r < 4 && everAdded.length > 0 ? everAdded[rand(everAdded.length)] : `k${rand(400)}`;
      const horizon = c.now() + rand(60) - 10;
      const isNew = !model.has(id);
      assert.equal(set.add(id, horizon), isNew, `step ${step}: add ${id}`);
      if (isNew) {
        everAdded.push(id);
        model.set(id, { horizon, order: order++ });
        if (model.size >= 40) for (const [k, v] of model) if (v.horizon < c.now()) model.delete(k);
        while (model.size > 150) {
          let first: [string, { horizon: number; order: number }] | undefined;
          for (const e of model) if (!first || e[1].horizon < first[1].horizon || (e[1].horizon === first[1].horizon && e[1].order < first[1].order)) first = e;
          model.delete(first![0]);
        }
      }
      assert.equal(set.size, model.size, `step ${step}: size`);
      if (step % 97 === 0) for (let k = 0; k < 400; k++) assert.equal(set.has(`k${k}`), model.has(`k${k}`), `step ${step}: k${k}`);
    }
    for (const [k, v] of model) assert.equal(set.horizonOf(k), v.horizon);
  });

  it('stays bounded and correct over many ids arriving out of order with a moving clock', () => {
    const c = clock(0);
    const set = new ExpiringIdSet({ maxSize: 2000, pruneFrom: 100, now: c.now });
    const horizons = new Map<string, number>();
    for (let i = 0; i < 20000; i++) {
      c.set(i);
      const id = `a${i}`;
      const horizon = i + 50 + ((i * 7919) % 1000);
      horizons.set(id, horizon);
      assert.equal(set.add(id, horizon), true);
      assert.ok(set.size <= 2000);
      // An id is a duplicate exactly while its horizon is not past (the cap never bites here: about 1,000 live at most).
      if (i >= 200) for (const k of [i - 10, i - 199, i - 600, i - 1100]) if (k >= 0) assert.equal(set.has(`a${k}`), horizons.get(`a${k}`)! >= i, `a${k} at ${i}`);
    }
  });
});

describe('CoreClientFeed with a small maxRememberedIds against the simulator', function () {
  this.timeout(60000);
  let account: SimulatedAccount;
  before(async () => {
    account = await startSimulated('cf-expiring-');
  });
  after(async () => {
    if (account) await stopSimulated(account);
  });

  it('emits each pending action once over reconnects (every catch-up re-lists them)', async () => {
    const { sim, client } = account;
    const demo = sim.demo;
    const feed = new CoreClientFeed(client, 'demo-approver', { maxRememberedIds: 50, minDelayMs: 20, maxDelayMs: 50 });
    const seen: string[] = [];
    feed.on('action', (a: Action) => seen.push(a.id));
    const listings: number[] = [];
    feed.on('listing', (l: { ids: string[] }) => listings.push(l.ids.length));
    try {
      feed.start();
      for (let i = 0; i < 5; i++) {
        await client.request('POST', `/company/${demo.company_id}/transfer`, {
          body: bodyOf(transferRequest(demo, { benefit_of: 't', account_no: 't', reference: 'expiring ids', partner_txID: `expiring-${process.pid}-${i}`, send: { symbol: 'BTC-TESTNET', amount: 1000 } })),
        });
      }
      const until = async (check: () => boolean, what: string) => {
        const deadline = Date.now() + 20000;
        while (!check()) {
          if (Date.now() > deadline) throw new Error(`timed out: ${what}; seen ${seen.length}, listings ${listings}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await until(() => seen.length >= 5, '5 actions');
      const before = listings.length;
      // Drop every feed socket: the feed reconnects, the service re-sends the pending actions and the catch-up lists them again.
      assert.ok((await control(sim, '/feeds/drop')).dropped >= 1, 'the feed socket was dropped');
      await until(() => listings.length > before, 'a catch-up after the reconnect');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(seen.length, new Set(seen).size, `each action once: ${seen.join(', ')}`);
      assert.ok(seen.length >= 5);
    } finally {
      await feed.stop();
    }
  });
});
