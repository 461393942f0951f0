/**
 * `custody-review` in the real Node-RED runtime (node-red-node-test-helper) against the built-in
 * simulator over real sockets (docs/nodes.md "custody-review"): custody-approver's held output
 * wired into the review; votes from flows (two people) reach the quorum and make one PUT, the
 * transfer reaches `approved_transfer`; a vote through the admin API (`POST /custody/reviews/{id}`,
 * anonymous without adminAuth) and its 400/404/409 answers, each naming the field, nothing called;
 * a restart (the flow stopped and loaded again) keeps the queue and its votes; a review 60 s before
 * its deadline with a 30 s margin goes out escalated once; a quorum above 1 without adminAuth is
 * refused at deploy; flow votes are refused while the node does not allow them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { control, demoTransfer, until } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { CONFIG, Inbox, TAB, loadCollecting } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { CustodyClient, createTransfer, getAction, getTransfer, listActions } from '../../lib';

const dataDir = simulatorDataDir('cf-review-node-', 'sim');
const nodeModules = redNodes(['custody-config', 'custody-approver', 'custody-review']);
const inbox: Inbox = new Map();
const OUTS = ['approved', 'rejected', 'escalated', 'held', 'caught'] as const;
const APPROVER = 'demo-approver';

/** approver `ap` (no rule: everything held) -> review `rv` (outputs approved, rejected, escalated) and a Catch node. */
function reviewFlow(props: Record<string, unknown>): object[] {
  return [
    TAB,
    { ...CONFIG, z: 'tab' },
    { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: false, rules: [], auditFile: path.join(dataDir, 'approver.jsonl'), wires: [[], [], ['rv', 'held']], x: 100, y: 100 },
    { id: 'rv', z: 'tab', type: 'custody-review', connection: 'cfg', approvers: '1', escalateMargin: '300', auditFile: path.join(dataDir, 'review.jsonl'), wires: [['approved'], ['rejected'], ['escalated']], x: 300, y: 100, ...props },
    ...OUTS.map((id) => ({ id, z: 'tab', type: 'helper', x: 100, y: 100 })),
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
  ];
}

const auditLines = (): any[] =>
  fs
    .readFileSync(path.join(dataDir, 'review.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('custody-review in Node-RED with the simulator', function () {
  this.timeout(90000);
  let sim: Simulator;
  let client: CustodyClient;
  const simulator = useRedRuntime(dataDir, { simulatorDir: path.join(dataDir, 'sim') });
  before(async () => {
    sim = simulator();
    client = accountClient(sim);
    await control(sim, '/faucet', { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, amount: 20 * 100_000_000 });
  });
  after(() => client.close());

  async function load(props: Record<string, unknown>): Promise<void> {
    await loadCollecting(nodeModules, reviewFlow(props), {}, inbox, [...OUTS]);
  }

  /** A new transfer's pending action of demo-approver, with details. */
  async function pendingAction(amount = 1_000_000, expiresIn = 3600): Promise<any> {
    const tx_id = (await createTransfer(client, demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount }, expires: Math.floor(Date.now() / 1000) + expiresIn }))).data.tx_id;
    for (let i = 0; i < 200; i++) {
      for (const a of (await listActions(client, { client_id: APPROVER })).data.actions) {
        const full = (await getAction(client, { client_id: APPROVER, action_id: a.id })).data as any;
        if (full.details?.txID === tx_id) return { ...full, client_id: APPROVER, action_id: full.id, tx_id };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no action for transfer ${tx_id}`);
  }

  /** Send the action into the approver and wait until the review lists it. */
  async function held(action: any): Promise<void> {
    const { tx_id: _t, ...payload } = action;
    helper.getNode('ap').receive({ payload });
    await until(() => inbox.get('held')!.find((m) => m.payload.action_id === action.action_id), 'the held msg');
    for (let i = 0; i < 200; i++) {
      const res = await helper.request().get('/custody/reviews').expect(200);
      if (res.body.reviews.some((r: any) => r.action_id === action.action_id)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the review never listed the action');
  }

  const status = async (action: any) => String((await getAction(client, { client_id: APPROVER, action_id: action.action_id })).data.status);

  async function txStatus(action: any, want: string): Promise<string> {
    let last = '';
    for (let i = 0; i < 300 && last !== want; i++) {
      last = String(((await getTransfer(client, { company_id: sim.demo.company_id, tx_id: action.tx_id })).data as any).txStatus);
      if (last !== want) await new Promise((r) => setTimeout(r, 50));
    }
    return last;
  }

  /** The Catch node's msgs since `from`, waited for. */
  const caughtAfter = (from: number, what: string) => until(() => inbox.get('caught')![from], what);

  describe('with adminAuth in the settings (the quorum may be above 1)', () => {
    before(() => helper.settings({ adminAuth: { type: 'credentials', users: [] } }));
    after(() => helper.settings({}));

    it('quorum 2: alice votes (no PUT), a restart keeps the queue and her vote, alice again is refused, bob makes the one PUT; approved_transfer; msg.review carries both votes; audited', async () => {
      const props = { approvers: '2', allowFlowVotes: true };
      await load(props);
      const action = await pendingAction();
      await held(action);
      helper.getNode('rv').receive({ review: { action_id: action.action_id, decision: 'approve', reviewer: 'alice' } });
      await until(() => auditLines().find((l) => l.event === 'vote' && l.action_id === action.action_id), 'alice in the audit');
      assert.equal(await status(action), 'pending', 'one approval of two: nothing called');
      await helper.unload();
      await load(props);
      const listed = (await helper.request().get('/custody/reviews').expect(200)).body.reviews.find((r: any) => r.action_id === action.action_id);
      assert.deepEqual(listed.votes.map((v: any) => v.reviewer), ['alice'], 'the restart kept the queue and the vote');
      assert.equal(listed.approvals, 1);
      assert.equal(listed.required, 2);
      helper.getNode('rv').receive({ review: { action_id: action.action_id, decision: 'approve', reviewer: 'alice' } });
      const again = await caughtAfter(0, 'the second vote refused');
      assert.match(again.error.message, /already approved by you/);
      assert.equal(await status(action), 'pending');
      helper.getNode('rv').receive({ review: { action_id: action.action_id, decision: 'approve', reviewer: 'bob', reason: 'invoice checked' } });
      const approved = await until(() => inbox.get('approved')![0], 'the approved output');
      assert.equal(approved.payload.action_id, action.action_id);
      assert.deepEqual(approved.review.votes.map((v: any) => [v.reviewer, v.decision, v.via]), [['alice', 'approve', 'flow'], ['bob', 'approve', 'flow']]);
      assert.equal(approved.review.final.outcome, 'applied');
      assert.equal(await txStatus(action, 'approved_transfer'), 'approved_transfer');
      const mine = auditLines().filter((l) => l.action_id === action.action_id);
      assert.deepEqual(mine.map((l) => l.event), ['opened', 'vote', 'vote', 'call', 'result']);
      assert.equal(mine.filter((l) => l.event === 'call').length, 1, 'one PUT');
      assert.deepEqual(mine.find((l) => l.event === 'call').reviewers, ['alice', 'bob']);
    });
  });

  it('without adminAuth a quorum above 1 is refused at deploy, with a clear error on every msg', async () => {
    await load({ approvers: '2' });
    helper.getNode('rv').receive({ payload: { client_id: APPROVER, action_id: 'any' } });
    const caught = await caughtAfter(0, 'the refusal');
    assert.match(caught.error.message, /approvers: a quorum of 2 needs people who log in: without adminAuth/);
  });

  it('bad input refused naming the field, nothing called: a msg without action_id, a flow vote while flow votes are off, and through the admin API an unknown id, a bad decision, a reject without reason, a reason over 500 characters, a body that is not an object; then an anonymous approve decides it', async () => {
    await load({ approvers: '1' });
    const action = await pendingAction();
    await held(action);
    helper.getNode('rv').receive({ payload: { client_id: APPROVER } });
    assert.match((await caughtAfter(0, 'no action_id')).error.message, /action_id: expected an id/);
    helper.getNode('rv').receive({ review: { action_id: action.action_id, decision: 'approve', reviewer: 'mallory' } });
    assert.match((await caughtAfter(1, 'flow votes off')).error.message, /msg\.review: votes from flows are off/);
    const post = (id: string, body: unknown) => helper.request().post(`/custody/reviews/${id}`).set('content-type', 'application/json').send(body as object);
    let res = await post('no-such-action', { decision: 'approve' });
    assert.equal(res.status, 404);
    assert.equal(res.body.field, 'action_id');
    res = await post(action.action_id, { decision: 'yes' });
    assert.deepEqual([res.status, res.body.field], [400, 'decision']);
    assert.match(res.body.error, /expected "approve" or "reject"/);
    res = await post(action.action_id, { decision: 'reject' });
    assert.deepEqual([res.status, res.body.field], [400, 'reason']);
    assert.match(res.body.error, /a reject needs a reason/);
    res = await post(action.action_id, { decision: 'reject', reason: 'y'.repeat(501) });
    assert.deepEqual([res.status, res.body.field], [400, 'reason']);
    assert.match(res.body.error, /at most 500 characters, got 501/);
    res = await post(action.action_id, '["approve"]');
    assert.deepEqual([res.status, res.body.field], [400, 'body']);
    assert.equal(await status(action), 'pending', 'nothing called');
    assert.ok(!auditLines().some((l) => l.action_id === action.action_id && l.event !== 'opened'), 'no vote and no call in the audit');
    res = await post(action.action_id, { decision: 'approve', reason: 'ok' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.state, 'calling', 'the deciding vote answers at once; the PUT runs in the background');
    assert.deepEqual(res.body.votes.map((v: any) => [v.reviewer, v.via]), [['anonymous', 'api']]);
    assert.deepEqual(res.body.final.votes.map((v: any) => [v.reviewer, v.decision]), [['anonymous', 'approve']], 'the final call rests on exactly that vote');
    res = await post(action.action_id, { decision: 'approve' });
    assert.equal(res.status, 409);
  });

  it('a vote after the deadline is refused (409), nothing called; the review left the queue as expired', async () => {
    await load({ approvers: '1', escalateMargin: '0' });
    const action = await pendingAction(1_000_000, 2);
    await held(action);
    const expired = await until(() => inbox.get('escalated')![0], 'the expired output');
    assert.equal(expired.review.state, 'expired');
    const res = await helper.request().post(`/custody/reviews/${action.action_id}`).send({ decision: 'approve' });
    assert.equal(res.status, 409);
    assert.match(res.body.error, /expired|deadline/);
    assert.ok(!(await helper.request().get('/custody/reviews')).body.reviews.some((r: any) => r.action_id === action.action_id));
    assert.ok(!auditLines().some((l) => l.action_id === action.action_id && l.event === 'call'));
  });

  it('escalation: a review 60 s before its deadline with a 30 s margin goes out escalated once', async function () {
    this.timeout(120000);
    await load({ approvers: '1', escalateMargin: '30' });
    const action = await pendingAction(1_000_000, 60);
    await held(action);
    const escalated = await until(() => inbox.get('escalated')![0], 'the escalated output', 60000);
    assert.equal(escalated.review.state, 'escalated');
    assert.equal(escalated.payload.action_id, action.action_id);
    // A few more ticks: still once.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(inbox.get('escalated')!.filter((m) => m.payload.action_id === action.action_id).length, 1);
    assert.equal(auditLines().filter((l) => l.action_id === action.action_id && l.event === 'escalated').length, 1);
    assert.ok((await helper.request().get('/custody/reviews')).body.reviews.some((r: any) => r.action_id === action.action_id), 'still open until its deadline');
  });
});
