/**
 * What the approver's book and the track store keep in memory, and for how long
 * (docs/performance.md, "What is kept in memory"), with real parts: the simulator over real
 * sockets, real audit and track files. The sizes of the structures are checked, not timings:
 * - a decided action is kept (compactly) until its action's `expireTime`, an approval only within
 *   the longest velocity window, nothing for velocity when no rule has a limit;
 * - after the times pass, the book holds nothing; a restart reads only what is kept (the audit's
 *   checkpoint carries `settled` records, no reasons or facts) and still decides nothing twice;
 * - a reported track record keeps its id, time and outcome only (a `reported` line, no msg), for
 *   the keep time, across a reopen;
 * - a closed review keeps its facts only while it is among the 20 most recently closed (the
 *   "recently decided" list); older ones keep their state and verdict, and a late vote is still
 *   refused.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createTransfer, getAction, listActions } from '../../lib';
import { Approver, compileRules, type ApprovalRule } from '../../lib/approver';
import { FileTrackStore, type TrackRecord } from '../../lib/tracking';
import { FileReviewStore, RECENT_CLOSED_WITH_FACTS, type Review } from '../../lib/review';
import { simulatedSuite } from '../helpers/simulated';
import { demoTransfer, tempDirPerTest, until } from '../helpers/support';

const CLIENT = 'demo-approver';

describe('memory bounds: what is kept per action, and for how long', function () {
  this.timeout(60000);
  const s = simulatedSuite('cf-bounds-sim-');
  const tempDir = tempDirPerTest('cf-bounds-');
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  async function approver(auditFile: string, rules: ApprovalRule[]): Promise<Approver> {
    const a = await Approver.open({ rules: compileRules(rules), auditFile, client: async () => s.client, approverId: 'approver-1', auditOptions: { closeCheckpointBytes: 0 } });
    open.push(a);
    return a;
  }

  /** `n` new transfers of `amount` base units whose transaction expires `expiresInS` seconds from now: their pending actions, with details. */
  async function pendingActions(n: number, amount: number, expiresInS: number): Promise<any[]> {
    const txIds = new Set<string>();
    const expires = Math.floor(Date.now() / 1000) + expiresInS;
    for (let i = 0; i < n; i++) txIds.add((await createTransfer(s.client, demoTransfer(s.sim, { send: { symbol: 'BTC-TESTNET', amount }, expires }))).data.tx_id);
    const found: any[] = [];
    for (const a of (await listActions(s.client, { client_id: CLIENT })).data.actions) {
      const full = (await getAction(s.client, { client_id: CLIENT, action_id: a.id })).data;
      if (txIds.has(String(full.details?.txID))) found.push({ ...full, client_id: CLIENT, action_id: full.id });
    }
    assert.equal(found.length, n, 'every transfer has its pending action');
    return found;
  }

  const small: ApprovalRule = { name: 'small', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '0.0001' };

  it('without a velocity limit: decided actions kept compactly until their expiry, no approvals kept; then nothing', async () => {
    const a = await approver(path.join(tempDir(), 'audit.jsonl'), [small]);
    const approve = await pendingActions(6, 1000, 4);
    const hold = await pendingActions(2, 50_000, 4);
    for (const x of [...approve, ...hold]) await a.decide(x);
    const kept = a.retained();
    assert.equal(kept.actions, 8, 'each decided action is remembered until it expires');
    assert.equal(kept.inHand, 0, 'settled: none keeps its full decision record');
    assert.deepEqual(kept.approvals, { live: 0, dryRun: 0 }, 'no rule has a velocity limit: no approval is kept for one');
    // A re-send is still recognised (from the compact form): not decided again.
    const again = await a.decide(approve[0]);
    assert.equal(again.decision.redelivered, true);
    assert.equal(again.output, 'approved');
    const expiry = Number(approve[0].expireTime) * 1000;
    await until(() => (Date.now() > expiry + 50 ? true : undefined), 'the actions expire', 10000);
    assert.deepEqual(a.retained(), { actions: 0, inHand: 0, approvals: { live: 0, dryRun: 0 } }, 'past their expiry, nothing is kept');
  });

  it('with a velocity limit: approvals kept within the window only; a restart reads the checkpoint (settled records) and decides nothing twice', async () => {
    const file = path.join(tempDir(), 'audit.jsonl');
    // A window of 2 s (0.0005 h) and a count limit that the first three reach.
    const limited: ApprovalRule[] = [{ ...small, velocityCount: '3', velocityWindowHours: '0.0005' }];
    let a = await approver(file, limited);
    const actions = await pendingActions(4, 1000, 30);
    const outs = [];
    for (const x of actions) outs.push((await a.decide(x)).output);
    assert.deepEqual(outs, ['approved', 'approved', 'approved', 'held']);
    assert.equal(a.retained().approvals.live, 3, 'the approvals inside the window');
    // A restart reads the checkpoint written at close: settled records, with their approvals.
    await a.close();
    open.pop();
    const opening = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]!);
    assert.equal(opening.kind, 'segment');
    assert.deepEqual(opening.carried.map((r: any) => r.kind), ['settled', 'settled', 'settled', 'settled']);
    for (const r of opening.carried) assert.equal(r.reasons, undefined, 'no reasons or facts are carried');
    assert.deepEqual(opening.carried.filter((r: any) => r.amount !== undefined).length, 3, 'the three approvals carry their amount for the window');
    a = await approver(file, limited);
    const restarted = a.retained();
    assert.deepEqual([restarted.actions, restarted.inHand, restarted.approvals.live], [4, 0, 3]);
    for (const x of actions) {
      const again = await a.decide(x);
      assert.equal(again.decision.redelivered, true, 'decided once, across the restart');
    }
    // The window passes: the approvals go; the decided actions stay until their expiry.
    const at = Date.now();
    await until(() => (Date.now() > at + 2100 ? true : undefined), 'the window passes', 10000);
    assert.deepEqual(a.retained().approvals, { live: 0, dryRun: 0 });
    assert.equal(a.retained().actions, 4);
  });

  it('the track store: a reported record keeps its id, time and outcome only, for the keep time, across a reopen', async () => {
    let now = 1_700_000_000_000;
    const file = path.join(tempDir(), 'track.jsonl');
    const record = (id: string): TrackRecord => ({ id, target: { kind: 'transfer', tx_id: id.split('/')[0]!, company_id: 'c1' }, msg: { _msgid: 'm', payload: { big: 'x'.repeat(2000) } }, startedAt: now, deadline: now + 3600_000, reads: 0 });
    let store = await FileTrackStore.open(file, { now: () => now, keepReportedMs: 60_000 });
    for (let i = 0; i < 50; i++) await store.put(record(`t${i}/m`));
    for (let i = 0; i < 40; i++) assert.equal(await store.markReported(`t${i}/m`, 'final'), true);
    assert.deepEqual(store.retained(), { live: 10, reported: 40 });
    await store.close();
    store = await FileTrackStore.open(file, { now: () => now, keepReportedMs: 60_000 });
    open.push(store);
    assert.deepEqual(store.retained(), { live: 10, reported: 40 }, 'the same after a reopen');
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(lines.filter((l) => l.put).length, 10, 'compacted: a put (with its msg) only for the records still followed');
    assert.deepEqual(Object.keys(lines.find((l) => l.reported)).sort(), ['at', 'outcome', 'reported']);
    assert.equal(await store.markReported('t0/m', 'final'), false, 'reported once, across the reopen');
    now += 60_001;
    assert.deepEqual(store.retained(), { live: 10, reported: 0 }, 'past the keep time the reports are forgotten');
  });

  it('the review store: closed reviews beyond the 20 most recent keep their state and verdict, not their facts; a late vote is still refused', async () => {
    const file = path.join(tempDir(), 'review.json');
    let store = await FileReviewStore.open(file, 'review-1');
    const review = (i: number): Review => ({ action_id: `a${i}`, client_id: 'c1', type: 'ApproveTransfer', details: { txID: `t${i}`, netAmount: 1000, recipientAddress: 'x'.repeat(500) }, reasons: ['held: above 0.5'], expireTime: 1_900_000_000, required: 1, votes: [], state: 'open', createdAt: 1_000 + i });
    for (let i = 0; i < 30; i++) {
      await store.add(review(i));
      assert.equal(await store.finish(`a${i}`, { state: 'expired', closedAt: 2_000 + i }), true);
    }
    await store.add(review(99));
    const check = async () => {
      const all = await store.load();
      const trimmed = all.filter((r) => r.trimmed);
      assert.equal(trimmed.length, 30 - RECENT_CLOSED_WITH_FACTS, 'all but the 20 most recently closed are trimmed');
      assert.deepEqual(trimmed.map((r) => r.action_id).sort(), Array.from({ length: 10 }, (_, i) => `a${i}`).sort(), 'the oldest closed ones');
      for (const r of trimmed) assert.deepEqual([r.state, r.details, r.reasons, r.closedAt], ['expired', {}, [], 2_000 + Number(r.action_id.slice(1))]);
      assert.equal((await store.get('a99'))!.details.txID, 't99', 'an open review keeps everything');
      assert.equal((await store.get('a29'))!.details.txID, 't29', 'a recently closed one keeps its facts');
    };
    await check();
    await store.close();
    store = await FileReviewStore.open(file, 'review-1');
    open.push(store);
    await check();
    assert.deepEqual(await store.vote('a0', { reviewer: 'alice', decision: 'approve', at: new Date().toISOString(), via: 'editor' } as any, 1, 'i1'), { kind: 'closed' }, 'a late vote on a trimmed review is refused');
  });
});
