/**
 * Review that people can trust across Node-RED instances sharing one real Redis (docs/nodes.md
 * "custody-review", docs/scale-out.md): every instance runs the flow core client feed ->
 * custody-approver (no rule, default decision hold) -> custody-review with `coordination: 'redis'`
 * on the config node; the simulator sits behind the ApprovalProxy that records every PUT and
 * DELETE per instance.
 *
 * - Concurrent votes on two instances: on each of 24 held transfers alice approves on instance a
 *   and bob rejects on instance b, 0-40 ms apart; every action called exactly once overall, every
 *   vote answered 200 counted by the final call (its audit `call` line, in either instance's audit
 *   file), every vote not counted answered 409.
 * - A Redis restart without data mid-review (quorum 2): alice's vote, Redis killed and started empty,
 *   both instances list the review again with her vote; bob's vote on the other instance makes
 *   exactly one PUT, approved.
 * - Idle cost: 100 open reviews on three instances; the Redis commands of 30 s without a vote
 *   (`INFO commandstats`), at most 1 per second per instance.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Redis as IORedis } from 'ioredis';
import { ReviewRig, judgeVotePairs, untilPairsDecided, votePairs } from '../helpers/review-rig';
import { sleep } from '../helpers/red-process';

/** Held transfers voted on concurrently. */
const PAIRS = 24;
/** Open reviews during the idle measure. */
const IDLE_REVIEWS = 100;
/** The idle measure, seconds. */
const IDLE_SECONDS = 30;

describe('custody-review people can trust: two Node-RED instances, one Redis', function () {
  this.timeout(240000);

  describe('concurrent votes on two instances', () => {
    let rig: ReviewRig;
    before(async () => {
      rig = await ReviewRig.start({ prefix: 'cf-trust-redis-', instances: ['a', 'b'], quorum: 1, redis: true });
    });
    after(async () => {
      await rig?.stop();
    });

    it(`${PAIRS} held transfers, alice approves on a and bob rejects on b 0-40 ms apart; each action called exactly once overall; every vote answered 200 counted by the final call, every vote not counted answered 409`, async () => {
      const held = await rig.heldTransfers(PAIRS, 0);
      // Listed on b too before anyone votes there.
      for (const deadline = Date.now() + 30000; ; ) {
        const { status, body } = await rig.reviewsAnswer(1);
        const listed = status === 200 ? new Set((body.reviews as any[]).map((r) => r.action_id)) : new Set();
        if (held.every((h) => listed.has(h.action_id))) break;
        assert.ok(Date.now() < deadline, `instance b lists ${listed.size} of the ${PAIRS} reviews after 30 s`);
        await sleep(200);
      }
      const pairs = await votePairs(rig, held, 0, 1);
      await untilPairsDecided(rig, held.map((h) => h.action_id));
      const problems = judgeVotePairs(rig, pairs);
      const byInstance: Record<string, number> = {};
      for (const c of rig.proxy.decisionCalls()) byInstance[`${c.method} via ${c.instance}`] = (byInstance[`${c.method} via ${c.instance}`] ?? 0) + 1;
      console.log(`      two instances: decision calls ${JSON.stringify(byInstance)}`);
      assert.ok(problems.length === 0, `${problems.length} contradictions over ${PAIRS} pairs:\n${problems.join('\n')}`);
      assert.deepEqual(rig.caught(0).concat(rig.caught(1)), [], 'nothing went to Catch');
    });
  });

  describe('a Redis restart without data mid-review', () => {
    let rig: ReviewRig;
    before(async () => {
      // A short lease: the instances trust an emptied Redis again one lease after it came back.
      rig = await ReviewRig.start({ prefix: 'cf-trust-restart-', instances: ['a', 'b'], quorum: 2, redis: true, leaseSeconds: 10 });
    });
    after(async () => {
      await rig?.stop();
    });

    it('quorum 2: alice approves on a (200), Redis restarts empty, both instances list the review again with her vote; bob approves on b (503 while the coordination recovers, then 200): exactly one PUT, approved', async function () {
      this.timeout(300000);
      const [h] = await rig.heldTransfers(1, 0);
      const first = await rig.vote(0, 'alice', h.action_id, 'approve');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.state, 'open');
      await rig.redis!.restart(0);
      const t0 = performance.now();
      const seen: string[] = [];
      for (let i = 0; i < 2; i++) {
        let votes: string[] | undefined;
        for (const deadline = Date.now() + 90000; !votes; ) {
          const { status, body } = await rig.reviewsAnswer(i);
          const listed = status === 200 ? (body.reviews as any[]).find((r) => r.action_id === h.action_id) : undefined;
          if (listed && listed.votes?.length) votes = listed.votes.map((v: any) => `${v.reviewer} ${v.decision}`);
          else {
            if (seen[seen.length - 1] !== `${i} ${status}`) seen.push(`${i} ${status}`);
            assert.ok(Date.now() < deadline, `instance ${rig.instances[i].name} does not list the review with alice's vote 90 s after the restart (answers seen: ${seen.join(', ')}; last ${status} ${JSON.stringify(body).slice(0, 300)})\n${rig.logTails()}`);
            await sleep(250);
          }
        }
        assert.deepEqual(votes, ['alice approve'], `instance ${rig.instances[i].name} after the restart`);
      }
      console.log(`      Redis restart: both instances list the review with alice's vote ${Math.round(performance.now() - t0)} ms after Redis was back (answers while recovering: ${seen.join(', ') || 'none'})`);
      assert.equal(rig.proxy.decisionCalls().length, 0, 'no call before the quorum');
      // While the coordination recovers (one claim lease after Redis came back) a vote is refused
      // with 503 and nothing stored, "vote again in a moment": bob does, as the answer asks.
      let second = await rig.vote(1, 'bob', h.action_id, 'approve');
      let refused = 0;
      for (const deadline = Date.now() + 90000; second.status === 503 && Date.now() < deadline; ) {
        refused++;
        assert.match(String(second.body.error), /Redis/, 'a 503 says why');
        await sleep(1000);
        second = await rig.vote(1, 'bob', h.action_id, 'approve');
      }
      console.log(`      Redis restart: bob's vote accepted ${Math.round(performance.now() - t0)} ms after Redis was back, after ${refused} answers 503 (recovering)`);
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.equal(second.body.state, 'calling');
      assert.equal(await rig.transferStatus(h.tx_id, 'approved_transfer'), 'approved_transfer');
      let item: any;
      for (const deadline = Date.now() + 20000; !item && Date.now() < deadline; ) {
        item = ((await rig.reviews(0)).recent ?? []).find((r: any) => r.action_id === h.action_id && r.state !== 'calling');
        if (!item) await sleep(250);
      }
      assert.equal(item?.state, 'approved', `recent: ${JSON.stringify(item)}`);
      assert.deepEqual([...item.decidedBy].sort(), ['alice', 'bob']);
      await sleep(3000);
      assert.deepEqual((rig.proxy.callsPerAction().get(h.action_id) ?? []).map((c) => c.method), ['PUT'], 'exactly one PUT');
      const calls = [0, 1].flatMap((i) => rig.auditLines(i)).filter((l) => l.action_id === h.action_id && l.event === 'call');
      assert.equal(calls.length, 1, 'one call line over both audit files');
      assert.deepEqual((calls[0].votes as any[]).map((v) => (typeof v === 'string' ? v : v.reviewer)).sort(), ['alice', 'bob']);
    });
  });

  describe('idle cost', () => {
    let rig: ReviewRig;
    before(async () => {
      rig = await ReviewRig.start({ prefix: 'cf-trust-idle-', instances: ['a', 'b', 'c'], quorum: 2, redis: true });
    });
    after(async () => {
      await rig?.stop();
    });

    it(`${IDLE_REVIEWS} open reviews on three instances: at most 1 Redis command per second per instance over ${IDLE_SECONDS} s without a vote`, async function () {
      this.timeout(360000);
      const redis = new IORedis(rig.redis!.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        const n = rig.instances.length;
        // Baseline: the same instances with no review open.
        await sleep(5000);
        const base = await commandsOver(redis, 10);
        const held = await rig.heldTransfers(IDLE_REVIEWS, 0, 120000);
        for (let i = 1; i < n; i++) {
          for (const deadline = Date.now() + 60000; ; ) {
            const { status, body } = await rig.reviewsAnswer(i);
            const listed = status === 200 ? new Set((body.reviews as any[]).map((r) => r.action_id)) : new Set();
            if (held.every((h) => listed.has(h.action_id))) break;
            assert.ok(Date.now() < deadline, `instance ${rig.instances[i].name} lists ${listed.size} of ${IDLE_REVIEWS} after 60 s`);
            await sleep(500);
          }
        }
        await sleep(5000);
        const idle = await commandsOver(redis, IDLE_SECONDS);
        const perInstance = idle.total / IDLE_SECONDS / n;
        const top = Object.entries(idle.byCommand)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 8)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        console.log(
          `      idle cost: ${idle.total} commands in ${IDLE_SECONDS} s with ${IDLE_REVIEWS} open reviews on ${n} instances = ${perInstance.toFixed(2)}/s per instance (no review open: ${(base.total / 10 / n).toFixed(2)}/s per instance); top: ${top}`,
        );
        assert.ok(perInstance <= 1, `${perInstance.toFixed(2)} Redis commands per second per instance while idle with ${IDLE_REVIEWS} open reviews (at most 1); top commands over ${IDLE_SECONDS} s: ${top}`);
      } finally {
        redis.disconnect();
      }
    });
  });
});

/**
 * The Redis commands run during `seconds` s, from `INFO commandstats` before and after (the INFO
 * calls themselves left out).
 * @returns the total and the count per command.
 */
async function commandsOver(redis: IORedis, seconds: number): Promise<{ total: number; byCommand: Record<string, number> }> {
  const before = parseCommandStats(await redis.info('commandstats'));
  await sleep(seconds * 1000);
  const after = parseCommandStats(await redis.info('commandstats'));
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [cmd, calls] of Object.entries(after)) {
    if (cmd === 'info') continue;
    const d = calls - (before[cmd] ?? 0);
    if (d > 0) {
      byCommand[cmd] = d;
      total += d;
    }
  }
  return { total, byCommand };
}

/** `cmdstat_<name>:calls=<n>,...` lines -> calls by command name. */
function parseCommandStats(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}
