/**
 * lib/review against the simulator over real sockets (docs/nodes.md "custody-review"): the quorum
 * of distinct approvers and its amount bands (decimal units, scale from GET /assets), one vote per
 * person, the initiator refused, a reject needs a reason of at most REASON_MAX_CHARS, no vote after
 * the deadline, escalation once at the deadline minus the margin and expiry, exactly one PUT or
 * DELETE (counted by a proxy in front of the simulator), an unknown outcome resolved by reading the
 * action (the answer of the PUT lost), the file store surviving a reopen, two queues on one real
 * Redis deciding once, and the audit chain verified by `custodyflow-audit verify`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CustodyClient, createTransfer, getAction, getTransfer, listActions } from '../../lib';
import { Coordinator } from '../../lib/coordination';
import { FileReviewStore, RedisReviewStore, REASON_MAX_CHARS, ReviewError, ReviewQueue, reviewStoreFile, type ReviewEvent, type ReviewStore } from '../../lib/review';
import { accountClient, simulatedSuite } from '../helpers/simulated';
import { closedAfterEach, control, demoTransfer, tempDirPerTest, until } from '../helpers/support';
import { FaultProxy, type FaultKind } from '../helpers/fault-proxy';
import { RedisServer } from '../helpers/redis-server';
import { root } from '../helpers/red-process';

const CLIENT = 'demo-approver';

/** Read the transfer until its txStatus is `status` (15 s at most). */
async function txReaches(client: CustodyClient, company_id: string, tx_id: string, status: string): Promise<string> {
  let last = '';
  for (let i = 0; i < 300; i++) {
    last = String(((await getTransfer(client, { company_id, tx_id })).data as any).txStatus);
    if (last === status) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}
const AUDIT_CLI = path.join(root, 'dist', 'lib', 'audit', 'cli.js');

describe('review queue (lib): rules, one final call, outcomes, stores', function () {
  this.timeout(90000);
  const s = simulatedSuite('cf-review-sim-');
  before(() => control(s.sim, '/faucet', { wallet_id: s.sim.demo.wallets['BTC-TESTNET'].wallet_id, amount: 100 * 100_000_000 }));
  const tempDir = tempDirPerTest('cf-review-');
  const open = closedAfterEach();

  /** A proxy in front of the simulator counting every request; `kind` applied to every PUT/DELETE of an action. */
  async function proxy(kind?: FaultKind): Promise<FaultProxy> {
    const p = new FaultProxy({ target: s.sim.baseUrl, controlUrl: s.sim.baseUrl.replace(/\/api\/v1\/p$/, '/_simulator'), rules: kind ? [{ path: /\/coreclient\/[^/]+\/action\//, method: 'PUT', rates: { [kind]: 1 } }] : [], seed: 7, holdMs: 300 });
    await p.start();
    open.push({ close: () => p.stop() });
    return p;
  }
  const decisionCalls = (p: FaultProxy, method: 'PUT' | 'DELETE') => p.records.filter((r) => r.method === method && /\/coreclient\/[^/]+\/action\//.test(r.path)).length;

  function clientVia(p: FaultProxy): CustodyClient {
    const c = accountClient(s.sim, { baseUrl: p.baseUrl, attempts: 1, timeoutMs: 2000 });
    open.push({ close: async () => c.close() });
    return c;
  }

  /** A new transfer's pending action of demo-approver, as the approver's held output gives it. */
  async function pending(amount = 200000000, expiresIn = 3600): Promise<any> {
    const tx_id = (await createTransfer(s.client, demoTransfer(s.sim, { send: { symbol: 'BTC-TESTNET', amount }, expires: Math.floor(Date.now() / 1000) + expiresIn }))).data.tx_id;
    for (let i = 0; i < 100; i++) {
      for (const a of (await listActions(s.client, { client_id: CLIENT })).data.actions) {
        const full = (await getAction(s.client, { client_id: CLIENT, action_id: a.id })).data as any;
        if (full.details?.txID === tx_id) return { ...full, client_id: CLIENT, action_id: full.id, tx_id };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no action for ${tx_id}`);
  }

  interface Opened {
    q: ReviewQueue;
    events: ReviewEvent[];
    audit: string;
    clock: { now: number };
  }

  async function queue(client: CustodyClient, opts: { approvers?: number; bands?: any[]; margin?: number; store?: ReviewStore; audit?: string; instance?: string; clock?: { now: number } } = {}): Promise<Opened> {
    const dir = tempDir();
    const audit = opts.audit ?? path.join(dir, 'custodyflow-audit', 'review-1.jsonl');
    const store = opts.store ?? (await FileReviewStore.open(reviewStoreFile(path.join(dir, 'review'), 'review-1')));
    const events: ReviewEvent[] = [];
    const clock = opts.clock ?? { now: 0 };
    const q = await ReviewQueue.open({ store, auditFile: audit, client: async () => client, rules: { approvers: opts.approvers ?? 2, bands: opts.bands }, escalateMarginMs: (opts.margin ?? 30) * 1000, reviewerNode: 'review-1', instance: opts.instance ?? 'local', now: () => (clock.now ? clock.now : Date.now()), timers: !opts.clock, onEvent: (e) => events.push(e) });
    open.push(q);
    return { q, events, audit, clock };
  }

  /** Two queues (instance-1, instance-2) of node review-1 on `redis`, each with its own coordinator, calling through proxy `p`. */
  async function twoInstances(redis: RedisServer, p: Parameters<typeof clientVia>[0], keyPrefix: string, approvers: number, leaseMs?: number): Promise<{ queues: Opened[]; coords: Coordinator[] }> {
    const queues: Opened[] = [];
    const coords: Coordinator[] = [];
    for (const i of [1, 2]) {
      const coord = new Coordinator({ url: redis.url, keyPrefix, instance: `instance-${i}`, ...(leaseMs ? { leaseMs } : {}) });
      open.push(coord);
      coords.push(coord);
      await coord.whenReady();
      queues.push(await queue(clientVia(p), { approvers, store: new RedisReviewStore(coord, 'review-1'), instance: `instance-${i}` }));
    }
    return { queues, coords };
  }

  async function refused(p: Promise<unknown>, status: number, text: RegExp): Promise<ReviewError> {
    const e = await p.then(
      () => assert.fail('expected a refusal'),
      (err) => err,
    );
    assert.ok(e instanceof ReviewError, String(e));
    assert.equal(e.status, status, e.message);
    assert.match(e.message, text);
    return e;
  }

  const auditLines = (file: string): any[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const verify = (file: string) => spawnSync(process.execPath, [AUDIT_CLI, 'verify', file], { encoding: 'utf8' });

  it('quorum 2: the first approval calls nothing, a second vote of the same person is refused, the second person makes one PUT; the transfer is approved; the audit names both and verifies', async () => {
    const p = await proxy();
    const { q, events, audit } = await queue(clientVia(p), { approvers: 2 });
    const action = await pending();
    const review = await q.add({ ...action, reasons: ['no rule approves 2 BTC-TESTNET'] });
    assert.deepEqual(review.amount, { asset: 'BTC-TESTNET', decimal: '2' });
    assert.equal(review.required, 2);
    assert.deepEqual(review.reasons, ['no rule approves 2 BTC-TESTNET']);
    const afterAlice = await q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api');
    assert.equal(afterAlice.state, 'open');
    assert.equal(afterAlice.approvals, 1);
    assert.equal(decisionCalls(p, 'PUT'), 0);
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api'), 409, /already approved by you/);
    const afterBob = await q.vote(action.action_id, { decision: 'approve', reviewer: 'bob', reason: 'checked the invoice' }, 'editor');
    assert.equal(afterBob.state, 'calling', 'the deciding vote answers at once; the call runs in the background');
    assert.deepEqual(afterBob.final?.votes.map((v) => v.reviewer), ['alice', 'bob']);
    await refused(q.vote(action.action_id, { decision: 'reject', reviewer: 'dave', reason: 'too late' }, 'api'), 409, /being decided|already decided/);
    await until(() => events[0], 'the review decided');
    assert.equal(decisionCalls(p, 'PUT'), 1);
    assert.equal(decisionCalls(p, 'DELETE'), 0);
    assert.deepEqual(events.map((e) => e.kind), ['approved']);
    assert.deepEqual(events[0].review.votes.map((v) => [v.reviewer, v.decision, v.via]), [['alice', 'approve', 'api'], ['bob', 'approve', 'editor']]);
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: 'carol' }, 'api'), 409, /already decided/);
    assert.equal(decisionCalls(p, 'PUT'), 1);
    assert.equal(await txReaches(s.client, s.sim.demo.company_id, action.tx_id, 'approved_transfer'), 'approved_transfer');
    const lines = auditLines(audit);
    assert.deepEqual(lines.filter((l) => l.event === 'vote').map((l) => [l.reviewer, l.decision, l.via]), [['alice', 'approve', 'api'], ['bob', 'approve', 'editor']]);
    assert.deepEqual(lines.filter((l) => l.event === 'call').map((l) => [l.method, l.reviewers, l.votes.map((v: any) => v.decision)]), [['PUT', ['alice', 'bob'], ['approve', 'approve']]]);
    assert.deepEqual(lines.filter((l) => l.event === 'result').map((l) => l.outcome), ['applied']);
    const v = verify(audit);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  it('any reject rejects with one DELETE and needs a reason within the bound; the initiator may not approve; bad fields are named; nothing is called for a refusal', async () => {
    const p = await proxy();
    const { q, events } = await queue(clientVia(p), { approvers: 3 });
    const action = await pending(100000000);
    await q.add({ ...action, details: { ...action.details, initiatedBy: 'carol', initiatorName: 'Carol' } });
    const sent = p.records.length;
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: 'carol' }, 'api'), 403, /initiator/);
    await refused(q.vote(action.action_id, { decision: 'maybe', reviewer: 'bob' }, 'api'), 400, /^decision: expected "approve" or "reject"/);
    await refused(q.vote(action.action_id, { decision: 'reject', reviewer: 'bob' }, 'api'), 400, /^reason: a reject needs a reason/);
    await refused(q.vote(action.action_id, { decision: 'reject', reviewer: 'bob', reason: 'x'.repeat(REASON_MAX_CHARS + 1) }, 'api'), 400, new RegExp(`^reason: at most ${REASON_MAX_CHARS} characters`));
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: '' }, 'api'), 400, /^reviewer:/);
    await refused(q.vote('no-such-action', { decision: 'approve', reviewer: 'bob' }, 'api'), 404, /^action_id: no review/);
    await refused(q.add({ client_id: CLIENT, action_id: 'a/b' }), 400, /^action_id:/);
    await refused(q.add({ action_id: 'x' }), 400, /^client_id:/);
    assert.equal(p.records.length, sent, 'nothing was sent for a refused vote or input');
    const done = await q.vote(action.action_id, { decision: 'reject', reviewer: 'bob', reason: 'unknown beneficiary' }, 'api');
    assert.equal(done.state, 'calling');
    await until(() => events[0], 'the review decided');
    assert.equal((await q.get(action.action_id)).state, 'rejected');
    assert.equal(decisionCalls(p, 'DELETE'), 1);
    assert.equal(decisionCalls(p, 'PUT'), 0);
    assert.deepEqual(events.map((e) => e.kind), ['rejected']);
    assert.equal(await txReaches(s.client, s.sim.demo.company_id, action.tx_id, 'custody_rejected_transfer'), 'custody_rejected_transfer');
  });

  it('amount bands in decimal units: 3 approvers from 1.5 BTC-TESTNET, 1 below', async () => {
    const { q } = await queue(s.client, { approvers: 1, bands: [{ asset: 'BTC-TESTNET', from: '1.5', approvers: 3 }] });
    const big = await q.add(await pending(150000000));
    const small = await q.add(await pending(149999999));
    assert.equal(big.required, 3);
    assert.equal(small.required, 1);
    await refused(ReviewQueue.open({ store: await FileReviewStore.open(path.join(tempDir(), 'x.json')), auditFile: path.join(tempDir(), 'a.jsonl'), client: async () => s.client, rules: { approvers: 6 }, escalateMarginMs: 0, reviewerNode: 'x' }), 400, /^approvers: expected a whole number from 1 to 5/);
  });

  it('escalates once at the deadline minus the margin (60 s before, 30 s margin), refuses votes after the deadline, then expires it off the queue and forgets it a day later; nothing called', async () => {
    const p = await proxy();
    const clock = { now: Date.now() };
    const { q, events, audit } = await queue(clientVia(p), { approvers: 2, margin: 30, clock });
    const action = await pending(100000000, 60);
    const deadline = action.expireTime * 1000;
    clock.now = deadline - 60_000;
    await q.add(action);
    await q.tick();
    assert.equal(events.length, 0);
    clock.now = deadline - 29_000;
    await q.tick();
    await q.tick();
    assert.deepEqual(events.map((e) => e.kind), ['escalated']);
    assert.equal((await q.list()).length, 1, 'an escalated review stays open');
    clock.now = deadline;
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api'), 409, /deadline passed/);
    await q.tick();
    await q.tick();
    assert.deepEqual(events.map((e) => e.kind), ['escalated', 'expired']);
    assert.equal((await q.list()).length, 0);
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api'), 409, /expired/);
    assert.equal(decisionCalls(p, 'PUT') + decisionCalls(p, 'DELETE'), 0);
    assert.deepEqual(auditLines(audit).map((l) => l.event), ['opened', 'escalated', 'expired']);
    // A day past its deadline the closed review is forgotten: an unknown id then.
    clock.now = deadline + 24 * 3600_000 + 1000;
    await q.tick();
    await refused(q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api'), 404, /no review/);
  });

  it('the PUT answer lost (502 after the simulator applied it): resolved by reading the action as applied, never counted as failed, one PUT', async () => {
    const p = await proxy('after502');
    const { q, events, audit } = await queue(clientVia(p), { approvers: 1 });
    const action = await pending(100000000);
    await q.add(action);
    await q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api');
    const ev = await until(() => events[0], 'the review resolved');
    assert.equal(ev.kind, 'approved');
    assert.equal(ev.review.final?.outcome, 'applied');
    assert.equal(decisionCalls(p, 'PUT'), 1);
    assert.deepEqual(auditLines(audit).map((l) => l.event), ['opened', 'vote', 'call', 'unknown', 'result']);
  });

  it('the file store keeps the queue and its votes across a reopen', async () => {
    const dir = tempDir();
    const file = reviewStoreFile(dir, 'review-1');
    const audit = path.join(dir, 'audit.jsonl');
    const first = await queue(s.client, { approvers: 2, store: await FileReviewStore.open(file), audit });
    const action = await pending(100000000);
    await first.q.add(action);
    await first.q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api');
    await first.q.close();
    const again = await queue(s.client, { approvers: 2, store: await FileReviewStore.open(file), audit });
    const [r] = await again.q.list();
    assert.equal(r.action_id, action.action_id);
    assert.deepEqual(r.votes.map((v) => v.reviewer), ['alice']);
    await refused(again.q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api'), 409, /already approved by you/);
    assert.equal((await again.q.vote(action.action_id, { decision: 'approve', reviewer: 'bob' }, 'api')).state, 'calling');
    await until(() => again.events[0], 'the review decided');
    assert.equal(again.events[0].kind, 'approved');
  });

  it('Redis restarted without its data mid-review: each instance writes back the review and the votes it took from its audit; no accepted vote lost, one PUT', async () => {
    const redis = new RedisServer();
    await redis.start();
    open.push({ close: () => redis.stop() });
    const p = await proxy();
    const { queues, coords } = await twoInstances(redis, p, 'cf-review-loss:', 3, 1000);
    const [a, b] = queues;
    const action = await pending(100000000);
    await a.q.add(action);
    await a.q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api');
    await b.q.vote(action.action_id, { decision: 'approve', reviewer: 'bob' }, 'api');
    await redis.restart();
    let back: unknown[] = [];
    for (let i = 0; i < 300 && !(coords.every((c) => c.state === 'ready') && back.length === 2); i++) {
      await new Promise((res) => setTimeout(res, 50));
      back = ((await b.q.list().catch(() => []))[0]?.votes ?? []) as unknown[];
    }
    assert.ok(coords.every((c) => c.state === 'ready'), 'both coordinators recovered');
    const [r] = await a.q.list();
    assert.deepEqual(r.votes.map((v) => v.reviewer).sort(), ['alice', 'bob'], 'both accepted votes are back, each from the instance that took it');
    await refused(a.q.vote(action.action_id, { decision: 'approve', reviewer: 'bob' }, 'api'), 409, /already approved by you/);
    assert.equal((await a.q.vote(action.action_id, { decision: 'approve', reviewer: 'carol' }, 'api')).state, 'calling');
    await until(() => (a.events.length ? true : undefined), 'the review decided');
    assert.equal(decisionCalls(p, 'PUT'), 1);
    assert.deepEqual(a.events[0].review.final?.votes.map((v) => v.reviewer), ['alice', 'bob', 'carol']);
  });

  it('two instances on one real Redis: one review shows on both, votes count across them, exactly one PUT', async () => {
    const redis = new RedisServer();
    await redis.start();
    open.push({ close: () => redis.stop() });
    const p = await proxy();
    const { queues } = await twoInstances(redis, p, 'cf-review:', 2);
    const [a, b] = queues;
    const action = await pending(100000000);
    await a.q.add(action);
    await b.q.add(action);
    assert.deepEqual((await b.q.list()).map((r) => r.action_id), [action.action_id]);
    await a.q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api');
    await refused(b.q.vote(action.action_id, { decision: 'approve', reviewer: 'alice' }, 'api'), 409, /already approved by you/);
    // Both at once: exactly one of them makes the call.
    const both = await Promise.allSettled([b.q.vote(action.action_id, { decision: 'approve', reviewer: 'bob' }, 'api'), a.q.vote(action.action_id, { decision: 'approve', reviewer: 'carol' }, 'api')]);
    assert.ok(both.some((r) => r.status === 'fulfilled'));
    await until(() => (a.events.length + b.events.length > 0 ? true : undefined), 'the review decided');
    assert.equal(decisionCalls(p, 'PUT'), 1);
    assert.equal(a.events.length + b.events.length, 1, 'decided by one instance');
    assert.equal(both.filter((r) => r.status === 'fulfilled').length, 1, 'the vote after the claim is refused (409), never answered 200');
    assert.equal((await a.q.list()).length, 0);
    assert.equal((await b.q.get(action.action_id)).state, 'approved');
  });
});
