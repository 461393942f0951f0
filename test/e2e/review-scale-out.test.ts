/**
 * `custody-review` on two real `node-red` instances sharing one real Redis (docs/nodes.md
 * "custody-review", docs/scale-out.md): both run the same flow (core client feed -> approver, no
 * rule -> review, quorum 2) with coordination on, against one simulator behind a proxy that records
 * every request. The approver holds the action on one instance (the other skips it); the review
 * shows on both instances' `GET /custody/reviews`; alice votes on instance A and bob on instance B
 * (adminAuth users), alice's second vote on B is refused; the action is approved with exactly one
 * PUT and the transfer reaches `approved_transfer`. The parts: a {@link ReviewRig} of instances a
 * and b with Redis (test/helpers/review-rig.ts).
 */
import assert from 'node:assert/strict';
import { ReviewRig } from '../helpers/review-rig';
import { demoTransfer } from '../helpers/support';
import { adminCall } from '../helpers/admin-auth';
import { createTransfer } from '../../lib';

describe('custody-review on two Node-RED instances sharing one Redis', function () {
  this.timeout(180000);
  let rig: ReviewRig;

  before(async () => {
    rig = await ReviewRig.start({ prefix: 'cf-review-so-', instances: ['a', 'b'], quorum: 2, redis: true, defaultAuditFile: true, review: { escalateMargin: '60' } });
  });
  after(() => rig?.stop());

  /** An admin API call to instance `i` as `user`. */
  const call = (i: number, user: string, method: string, p: string, body?: unknown) => adminCall(rig.instances[i].red.base, rig.instances[i].tokens[user], method, p, body);
  const list = async (i: number): Promise<any[]> => ((await (await call(i, 'alice', 'GET', '/custody/reviews')).json()) as { reviews: any[] }).reviews;

  it('one review shows on both, votes count across instances, alice cannot vote twice on the other instance, exactly one PUT, approved_transfer', async () => {
    const tx_id = (await createTransfer(rig.s.client, demoTransfer(rig.s.sim, { send: { symbol: 'BTC-TESTNET', amount: 10_000_000 } }))).data.tx_id;
    let actionId = '';
    for (let i = 0; i < 600 && !actionId; i++) {
      const r = (await list(0)).find((x) => x.details.txID === tx_id);
      if (r) actionId = r.action_id;
      else await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(actionId, `the review never showed on instance a\n${rig.logTails()}`);
    const onB = (await list(1)).find((x) => x.action_id === actionId);
    assert.ok(onB, 'the same review shows on instance b');
    let res = await call(0, 'alice', 'POST', `/custody/reviews/${actionId}`, { decision: 'approve' });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual((await list(1)).find((x) => x.action_id === actionId).votes.map((v: any) => v.reviewer), ['alice'], 'alice\'s vote counts on b');
    res = await call(1, 'alice', 'POST', `/custody/reviews/${actionId}`, { decision: 'approve' });
    assert.equal(res.status, 409);
    assert.match(((await res.json()) as { error: string }).error, /already approved by you/);
    assert.equal(rig.proxy.decisionCalls().length, 0, 'no PUT yet');
    res = await call(1, 'bob', 'POST', `/custody/reviews/${actionId}`, { decision: 'approve' });
    const body = (await res.json()) as { state: string };
    assert.equal(res.status, 200);
    assert.equal(body.state, 'calling', 'the deciding vote answers at once; the PUT runs in the background');
    const status = await rig.transferStatus(tx_id, 'approved_transfer', 15000);
    assert.equal(status, 'approved_transfer');
    const puts = rig.proxy.decisionCalls().filter((d) => d.method === 'PUT' && d.action_id === actionId);
    assert.equal(puts.length, 1, 'exactly one PUT');
    assert.equal(puts[0].instance, 'b', 'made by the instance whose vote reached the quorum');
    let still = true;
    for (let i = 0; i < 100 && still; i++) {
      still = (await list(0)).some((x) => x.action_id === actionId);
      if (still) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(!still, 'decided: off the queue on a too');
  });
});
