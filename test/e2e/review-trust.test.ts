/**
 * Review that people can trust, on one real `node-red` process with the file store (docs/nodes.md
 * "custody-review"): adminAuth users alice and bob, the flow core client feed -> custody-approver
 * (no rule, default decision hold) -> custody-review (quorum 1, audit file at a known path), a Catch
 * node writing what it catches to a file; the simulator behind the ApprovalProxy that records every
 * PUT and DELETE and can hold their answers.
 *
 * - Concurrent votes: on each of 24 held transfers alice approves and bob rejects 0-40 ms apart;
 *   every action is called exactly once, and no vote answered 200 is contradicted by the final
 *   call (its audit `call` line lists the votes it counted; its method is their verdict; a vote not
 *   counted was answered 409).
 * - A slow final call (the PUT's answer held 8 s): alice's vote answers at once with `calling`; the
 *   PUT is made once and the review ends approved (`recent`), the transfer approved_transfer.
 * - Decided elsewhere: an action approved (or rejected) directly through the API closes as
 *   `decidedElsewhere` (by itself, and at once on a vote, which gets 409); nothing called, nothing
 *   caught.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { ReviewRig, RIG_CLIENT_ID, judgeVotePairs, untilPairsDecided, votePairs } from '../helpers/review-rig';
import { sleep } from '../helpers/red-process';
import { approveAction, getAction, rejectAction } from '../../lib';

/** Held transfers voted on concurrently. */
const PAIRS = 24;
/** How long the proxy holds the slow PUT's answer, ms. */
const SLOW_PUT_MS = 8000;

describe('custody-review people can trust: one Node-RED, file store', function () {
  this.timeout(240000);
  let rig: ReviewRig;
  /** While true the proxy holds each PUT's answer SLOW_PUT_MS. */
  let slowPuts = false;

  before(async () => {
    rig = await ReviewRig.start({ prefix: 'cf-trust-file-', instances: ['a'], quorum: 1, holdMs: (c) => (slowPuts && c.method === 'PUT' ? SLOW_PUT_MS : 0) });
  });
  after(async () => {
    await rig?.stop();
  });

  it(`concurrent votes: ${PAIRS} held transfers, alice approves and bob rejects 0-40 ms apart; each action called exactly once, every vote answered 200 counted by the final call, every vote not counted answered 409`, async () => {
    const held = await rig.heldTransfers(PAIRS);
    const caughtBefore = rig.caught().length;
    const pairs = await votePairs(rig, held, 0, 0);
    await untilPairsDecided(rig, held.map((h) => h.action_id));
    const problems = judgeVotePairs(rig, pairs);
    assert.ok(problems.length === 0, `${problems.length} contradictions over ${PAIRS} pairs:\n${problems.join('\n')}`);
    // The API's end state is the call's: rejected after a DELETE, approved after a PUT.
    for (const p of pairs) {
      const call = rig.proxy.callsPerAction().get(p.action_id)![0];
      const status = (await getAction(rig.s.client, { client_id: RIG_CLIENT_ID, action_id: p.action_id })).data.status;
      assert.equal(status, call.method === 'PUT' ? 'approved' : 'rejected', `${p.action_id}: the action after a ${call.method}`);
    }
    // The recent list (the last 20 decided) names the counted votes of each review it shows.
    const { recent } = await rig.reviews(0);
    const lines = rig.auditLines(0);
    let shown = 0;
    for (const item of recent ?? []) {
      const p = pairs.find((x) => x.action_id === item.action_id);
      if (!p) continue;
      shown++;
      const call = lines.find((l) => l.action_id === p.action_id && l.event === 'call');
      const counted = (call.votes as any[]).map((v) => (typeof v === 'string' ? v : v.reviewer)).sort();
      assert.deepEqual([...item.decidedBy].sort(), counted, `recent ${p.action_id}: decidedBy is the counted votes`);
      assert.equal(item.state, call.method === 'PUT' ? 'approved' : 'rejected', `recent ${p.action_id}: state`);
    }
    assert.ok(shown >= Math.min(20, PAIRS), `recent shows ${shown} of the decided reviews, expected the last 20: ${JSON.stringify(recent)?.slice(0, 400)}`);
    assert.deepEqual(rig.caught().slice(caughtBefore), [], 'nothing went to Catch');
    const outcome = pairs.reduce((n, p) => n + (rig.proxy.callsPerAction().get(p.action_id)![0].method === 'DELETE' ? 1 : 0), 0);
    console.log(`      concurrent votes: ${PAIRS} pairs, ${outcome} rejected, ${PAIRS - outcome} approved; answers ${JSON.stringify(tallyAnswers(pairs))}`);
  });

  it(`a slow final call (its answer held ${SLOW_PUT_MS / 1000} s): alice's approve answers at once with state calling; one PUT; the review ends approved, the transfer approved_transfer`, async () => {
    const [h] = await rig.heldTransfers(1);
    slowPuts = true;
    try {
      const held = rig.proxy.nextHeld((c) => c.action_id === h.action_id, 30000);
      const vote = await rig.vote(0, 'alice', h.action_id, 'approve');
      const ms = Math.round(vote.answeredAt - vote.sentAt);
      console.log(`      slow final call: alice's vote answered ${vote.status} ${vote.body?.state} after ${ms} ms (the PUT's answer held ${SLOW_PUT_MS} ms)`);
      assert.equal(vote.status, 200, JSON.stringify(vote.body));
      assert.equal(vote.body.state, 'calling', `the vote that completes the quorum answers calling: ${JSON.stringify(vote.body)}`);
      assert.ok(ms < 2000, `the vote waited for the final call: answered after ${ms} ms while the PUT's answer was held ${SLOW_PUT_MS} ms (expected an answer at once; 2000 ms is a generous bound)`);
      const call = await held;
      assert.ok(call, 'the PUT was made');
      // While the PUT's answer is held: listed as calling, and a second vote is refused.
      const listed = (await rig.reviews(0)).reviews.find((r) => r.action_id === h.action_id);
      assert.equal(listed?.state, 'calling', `listed while its call runs: ${JSON.stringify(listed)}`);
      const late = await rig.vote(0, 'bob', h.action_id, 'reject', 'too late');
      assert.equal(late.status, 409, JSON.stringify(late.body));
      assert.match(String(late.body.error), /already being decided/);
      // The PUT's answer arrives: the review ends approved.
      let recentItem: any;
      for (const deadline = Date.now() + SLOW_PUT_MS + 20000; !recentItem && Date.now() < deadline; ) {
        const body = await rig.reviews(0);
        if (!body.reviews.some((r) => r.action_id === h.action_id)) recentItem = (body.recent ?? []).find((r: any) => r.action_id === h.action_id);
        if (!recentItem) await sleep(250);
      }
      assert.ok(recentItem, `the review never left the list for recent\n${rig.logTails()}`);
      assert.equal(recentItem.state, 'approved');
      assert.deepEqual(recentItem.decidedBy, ['alice']);
      assert.equal(await rig.transferStatus(h.tx_id, 'approved_transfer'), 'approved_transfer');
      const calls = rig.proxy.callsPerAction().get(h.action_id) ?? [];
      assert.deepEqual(calls.map((c) => c.method), ['PUT'], 'exactly one PUT');
      assert.equal(calls[0].delivered, true, 'the PUT\'s answer reached the node (it waited for it)');
      const lines = rig.auditLines(0).filter((l) => l.action_id === h.action_id);
      assert.deepEqual(lines.filter((l) => l.event === 'result').map((l) => l.outcome), ['applied']);
    } finally {
      slowPuts = false;
    }
  });

  it('decided elsewhere: an action approved through the API closes as decidedElsewhere within 60 s, a vote then gets 409; one rejected through the API closes at once on a vote (409); nothing called, nothing caught', async function () {
    this.timeout(180000);
    const [x, y] = await rig.heldTransfers(2);
    const caughtBefore = rig.caught().length;
    await approveAction(rig.s.client, { client_id: RIG_CLIENT_ID, action_id: x.action_id });
    const t0 = performance.now();
    let item: any;
    for (const deadline = Date.now() + 75000; !item && Date.now() < deadline; ) {
      const body = await rig.reviews(0);
      if (!body.reviews.some((r) => r.action_id === x.action_id)) item = (body.recent ?? []).find((r: any) => r.action_id === x.action_id) ?? { gone: true };
      if (!item) await sleep(250);
    }
    const closedMs = Math.round(performance.now() - t0);
    console.log(`      decided elsewhere: the review closed ${item ? `after ${closedMs} ms` : 'never (75 s)'}`);
    assert.ok(item, `the review of an action approved through the API was still listed after 75 s\n${rig.logTails()}`);
    assert.equal(item.state, 'decidedElsewhere', `recent: ${JSON.stringify(item)}`);
    assert.deepEqual(item.decidedBy, []);
    let vote = await rig.vote(0, 'alice', x.action_id, 'approve');
    assert.equal(vote.status, 409, JSON.stringify(vote.body));
    assert.match(String(vote.body.error), /decided elsewhere \(approved\)/);

    await rejectAction(rig.s.client, { client_id: RIG_CLIENT_ID, action_id: y.action_id });
    vote = await rig.vote(0, 'alice', y.action_id, 'approve');
    assert.equal(vote.status, 409, `a vote on an action rejected through the API: ${vote.status} ${JSON.stringify(vote.body)}`);
    assert.match(String(vote.body.error), /decided elsewhere \(rejected\)/);
    const body = await rig.reviews(0);
    assert.ok(!body.reviews.some((r) => r.action_id === y.action_id), 'closed at once on the vote');
    assert.equal((body.recent ?? []).find((r: any) => r.action_id === y.action_id)?.state, 'decidedElsewhere');

    await sleep(2000);
    for (const h of [x, y]) {
      assert.deepEqual((rig.proxy.callsPerAction().get(h.action_id) ?? []).map((c) => c.method), [], `${h.action_id}: the review node made no PUT or DELETE`);
      const lines = rig.auditLines(0).filter((l) => l.action_id === h.action_id);
      assert.ok(!lines.some((l) => l.event === 'call'), `${h.action_id}: no call line`);
      assert.equal(lines.filter((l) => l.event === 'decidedElsewhere').length, 1, `${h.action_id}: one decidedElsewhere line: ${JSON.stringify(lines.map((l) => l.event))}`);
    }
    assert.deepEqual(rig.caught().slice(caughtBefore), [], 'nothing went to Catch');
  });
});

/** How many answers of each status (and state or error) the pairs got. */
function tallyAnswers(pairs: Array<{ answers: Array<{ status: number; body: any }> }>): Record<string, number> {
  const t: Record<string, number> = {};
  for (const p of pairs)
    for (const a of p.answers) {
      const k = `${a.status} ${a.body?.state ?? a.body?.error ?? ''}`;
      t[k] = (t[k] ?? 0) + 1;
    }
  return t;
}
