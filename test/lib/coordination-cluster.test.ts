/**
 * Coordination on a Redis Cluster (docs/scale-out.md, "Redis Cluster"), in lib, with real parts: a
 * Redis Cluster of three masters from Debian's redis-server (test/helpers/redis-cluster.ts), the
 * simulator over real sockets, and lib Coordinators in Cluster mode (`clusterNodes`), each its own
 * connection and instance name, standing for Node-RED instances on one API key.
 * - The key prefix is wrapped as a hash tag (`{cfc1}:` for `cfc1:`): every key the coordination
 *   writes is in one hash slot, on one master; without the tag the same names spread over slots,
 *   and a script over them is refused (`CROSSSLOT`).
 * - Three approvers decide 100 actions under a velocity count limit: each decided once, approvals
 *   at most the limit, every audit line in the one stream.
 * - The shared submission journal: a withdrawal sent from two instances at once is sent once, the
 *   other instance reads the key; a journal's write-back (a pipeline of scripts) reaches the cluster.
 * - The decided message, published from a script, wakes a waiter on another connection and reaches
 *   a subscriber on every node.
 * - The review store (a `MULTI` over three keys) and the track store (a script over two keys).
 * No timing is asserted.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import {
  createWithdraw,
  getAction,
  SubmissionJournal,
  type CustodyClient,
  type SubmissionRef,
} from '../../lib';
import { Approver, compileRules, type ApproverOutcome } from '../../lib/approver';
import { Coordinator, SharedSubmissionJournal } from '../../lib/coordination';
import { RedisReviewStore } from '../../lib/review';
import { RedisTrackStore, type TrackRecord } from '../../lib/tracking';
import { RedisCluster } from '../helpers/redis-cluster';
import { accountClient, simulatedSuite } from '../helpers/simulated';
import { closedAfterEach, pendingTransferActions, tempDirPerSuite } from '../helpers/support';
import { sleep } from '../helpers/red-process';
import { journalKey } from '../../lib/client/submission/journal';

const CLIENT = 'demo-approver';

describe('coordination on a Redis Cluster (lib): three masters, every key of a prefix in one hash slot', function () {
  this.timeout(120000);
  const cluster = new RedisCluster();
  /** A plain cluster client for the checks (not the coordinators'). */
  let checker: Cluster;
  before(async () => {
    await cluster.start();
    checker = new Cluster(cluster.seeds);
  });
  after(async () => {
    checker?.disconnect();
    await cluster.stop();
  });
  // Withdrawals are not deduped by the simulator: one withdrawal per key is the journal's doing.
  const s = simulatedSuite('cf-coord-cluster-', { dedupe: 'transfers', persist: false });
  const dir = tempDirPerSuite('cf-coord-cluster-files-');
  const open = closedAfterEach();

  /** A coordinator in Cluster mode on the test cluster (closed after the test). */
  async function coordinator(prefix: string, instance: string, leaseMs = 5000): Promise<Coordinator> {
    const coord = new Coordinator({ clusterNodes: cluster.seeds, keyPrefix: prefix, leaseMs, instance });
    open.push(coord);
    await coord.whenReady();
    return coord;
  }

  /** The hash slot of each of `keys` (`CLUSTER KEYSLOT`, asked of the cluster). */
  function slots(keys: string[]): Promise<number[]> {
    return Promise.all(keys.map(async (k) => Number(await checker.call('CLUSTER', 'KEYSLOT', k))));
  }

  /** Every key matching `pattern` on each node, by node (`SCAN` runs per node in a cluster). */
  async function keysByNode(pattern: string): Promise<string[][]> {
    return Promise.all(
      cluster.nodes.map(async (n) => {
        const r = new Redis({ host: '127.0.0.1', port: n.port });
        try {
          const out: string[] = [];
          let cursor = '0';
          do {
            const [next, found] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
            out.push(...found);
            cursor = next;
          } while (cursor !== '0');
          return out;
        } finally {
          r.disconnect();
        }
      }),
    );
  }

  /** Create `n` transfers that need demo-approver's decision; return their pending actions with details, as the feed sends them. */
  async function approvalsNeeded(n: number): Promise<any[]> {
    const client = accountClient(s.sim);
    try {
      return await pendingTransferActions(client, s.sim, n, 1000, CLIENT);
    } finally {
      await client.close();
    }
  }

  it('the prefix is a hash tag: the coordination keys share one slot, and without the tag they spread and a script over them is refused (CROSSSLOT)', async () => {
    const coord = await coordinator('cfc1:', 'instance-0');
    assert.equal(coord.mode, 'cluster');
    assert.equal(coord.prefix, '{cfc1}:');
    const id = `live:${CLIENT}:a1`;
    const names = [coord.key('epoch'), coord.key('fence'), coord.key('claim', id), coord.key('decided', id), coord.key('audit'), coord.key('{velocity:approver-1:live:BTC-TESTNET}', 'meta'), coord.key('review', 'node-1'), coord.key('track', 'node-1', 'reported', 'r1'), coord.key('submission', 'ab'), coord.key('submission-tx', 'cd')];
    assert.deepEqual(new Set(await slots(names)), new Set(await slots(['cfc1'])), 'every key in the slot of the tag');
    const untagged = names.map((k) => k.replace(/^\{cfc1\}:/, 'cfc1:'));
    assert.ok(new Set(await slots(untagged)).size > 1, 'without the tag the same names hash to several slots');
    // A script over the claim, decided and fence keys (as the claim script takes them): refused untagged, run tagged.
    const script = "return redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3])";
    await assert.rejects(checker.eval(script, 3, untagged[2], untagged[3], untagged[1]), /CROSSSLOT/);
    assert.equal(await checker.eval(script, 3, names[2], names[3], names[1]), 0, 'run on the one node of the slot (no claim yet)');
  });

  it('three approvers decide 100 actions under a velocity count limit: each decided once, approvals at most the limit, every audit line in the stream, every key in the one slot', async () => {
    const limit = 25;
    const rules = compileRules([{ name: 'twenty-five per day', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityCount: String(limit), velocityWindowHours: '24' }]);
    const nodes: Array<{ coord: Coordinator; approver: Approver; audit: string }> = [];
    for (let i = 0; i < 3; i++) {
      const coord = await coordinator('cfc2:', `instance-${i}`);
      const client: CustodyClient = accountClient(s.sim);
      const audit = path.join(dir(), `cfc2-${i}.jsonl`);
      const approver = await Approver.open({ rules, defaultDecision: 'reject', auditFile: audit, client: async () => client, approverId: 'approver-1', coordinator: coord });
      open.push({ close: () => client.close() }, approver);
      nodes.push({ coord, approver, audit });
    }
    const actions = await approvalsNeeded(100);
    // Every instance is handed every action, in its own order, all at once (as three feeds deliver them).
    const outcomes: ApproverOutcome[] = await Promise.all(nodes.flatMap((n, i) => actions.map((_, k) => n.approver.decide(actions[(k + i * 37) % actions.length]))));
    const called = outcomes.filter((o) => o.statusCode !== undefined || o.error);
    assert.deepEqual(called.filter((o) => o.error).map((o) => o.error!.message), [], 'no call failed');
    assert.equal(called.length, actions.length, 'one approve-or-reject call per action');
    assert.equal(new Set(called.map((o) => o.decision.action_id)).size, actions.length, 'each action called once');
    const approved = called.filter((o) => o.output === 'approved').length;
    assert.ok(approved <= limit, `approvals (${approved}) at most the limit (${limit})`);
    assert.equal(approved, limit, 'the limit is reached (100 actions, 25 allowed)');
    const client = accountClient(s.sim);
    try {
      const st = await Promise.all(actions.map(async (a) => String((await getAction(client, { client_id: CLIENT, action_id: a.action_id })).data.status)));
      assert.equal(st.filter((x) => x === 'pending').length, 0, 'every action decided');
    } finally {
      await client.close();
    }
    // The one audit stream holds every line of the three audit files.
    const lines = nodes.reduce((n, x) => n + fs.readFileSync(x.audit, 'utf8').split('\n').filter(Boolean).length, 0);
    await Promise.all(nodes.map((n) => n.coord.drainAudit()));
    assert.equal(await nodes[0].coord.run((r) => r.xlen(nodes[0].coord.key('audit'))), lines, 'the stream holds every audit line of every instance');
    // Every key the run wrote (claims' decided records, fence, epoch, audit, velocity window) is on the one node of the tag's slot.
    const [slot] = await slots(['cfc2']);
    const byNode = await keysByNode('{cfc2}:*');
    const home = cluster.nodes.indexOf(await cluster.ownerOf(slot));
    assert.deepEqual(byNode.map((k, i) => (i === home ? 0 : k.length)), [0, 0, 0], 'no key of the prefix on another node');
    const keys = byNode[home];
    for (const part of ['epoch', 'fence', 'audit', '{velocity:', 'decided:live:']) assert.ok(keys.some((k) => k.startsWith(`{cfc2}:${part}`)), `a ${part} key was written`);
    assert.deepEqual(new Set(await slots(keys)), new Set([slot]), 'each in the slot of the tag');
  });

  it('the shared submission journal: a withdrawal sent from two instances at once is sent once, the other instance reads its key; a write-back reaches the cluster', async () => {
    const [coordA, coordB] = [await coordinator('cfc3:', 'a', 1000), await coordinator('cfc3:', 'b', 1000)];
    const [localA, localB] = [await SubmissionJournal.open(path.join(dir(), 'cfc3-a.jsonl')), await SubmissionJournal.open(path.join(dir(), 'cfc3-b.jsonl'))];
    const [sharedA, sharedB] = [new SharedSubmissionJournal(localA, coordA), new SharedSubmissionJournal(localB, coordB)];
    const [clientA, clientB] = [accountClient(s.sim), accountClient(s.sim)];
    open.push(localA, localB, { close: () => clientA.close() }, { close: () => clientB.close() }, sharedA, sharedB);
    const demo = s.sim.demo;
    const key = `cluster-w-${process.pid}-${Date.now()}`;
    const body = { company_id: demo.company_id, wallet_id: demo.wallets['ETH-TESTNET'].wallet_id, address: demo.whitelist['ETH-TESTNET'], expires: Math.floor(Date.now() / 1000) + 3600, benefit_of: 'Cluster', account_no: 'CLUSTER', reference: `ref ${key}`, partner_txID: key, send: { symbol: 'ETH-TESTNET', amount: 1000 } };
    const results = await Promise.all([createWithdraw(clientA, body, { journal: sharedA }), createWithdraw(clientB, body, { journal: sharedB })]);
    const withdrawals = Object.values(s.sim.engine.state.withdrawals as Record<string, { partner_txID: string }>).filter((w) => w.partner_txID === key);
    assert.equal(withdrawals.length, 1, 'one withdrawal in the simulator');
    assert.deepEqual(results.map((r) => r.fromJournal).sort(), [false, true], 'one call sent it, the other was answered from the journal');
    const txId = results[0].data.tx_id;
    assert.equal(results[1].data.tx_id, txId);
    const ref: SubmissionRef = { kind: 'withdrawal', company_id: demo.company_id, partner_txID: key };
    for (const shared of [sharedA, sharedB]) {
      const entry = await shared.get(ref);
      assert.deepEqual([entry?.state, entry?.tx_id], ['answered', txId], 'each instance reads the entry from the cluster');
      assert.ok(await shared.holderOf(txId), 'the transaction is indexed');
    }
    // A journal on another prefix writes back the local file's entries at its start (a pipeline of scripts, each over an entry key and a tx key).
    const coordC = await coordinator('cfc3b:', 'c', 1000);
    const coordD = await coordinator('cfc3b:', 'd', 1000);
    const sentBy = results[0].fromJournal ? localB : localA;
    const sharedC = new SharedSubmissionJournal(sentBy, coordC);
    open.push(sharedC);
    const localD = await SubmissionJournal.open(path.join(dir(), 'cfc3-d.jsonl'));
    const sharedD = new SharedSubmissionJournal(localD, coordD);
    open.push(localD, sharedD);
    let entry = await sharedD.get(ref);
    for (const deadline = Date.now() + 15000; !entry; entry = await sharedD.get(ref)) {
      if (Date.now() > deadline) assert.fail('the write-back did not reach the cluster');
      await sleep(20);
    }
    assert.deepEqual([entry.state, entry.tx_id], ['answered', txId], 'written back by one instance, read by another');
    assert.equal(await sharedD.holderOf(txId), journalKey(ref), 'with its transaction index (the second key of the script)');
  });

  it('the decided message, published from a script, wakes a waiter on another connection and reaches a subscriber on every node', async () => {
    const [a, b] = [await coordinator('cfc4:', 'a'), await coordinator('cfc4:', 'b')];
    const subscribers = cluster.nodes.map((n) => new Redis({ host: '127.0.0.1', port: n.port }));
    open.push(...subscribers.map((r) => ({ close: () => r.disconnect() })));
    const heard = subscribers.map(() => [] as string[]);
    await Promise.all(subscribers.map((r, i) => r.subscribe(a.key('decided')).then(() => r.on('message', (_c: string, m: string) => heard[i].push(m)))));
    const id = `live:${CLIENT}:pubsub-1`;
    const got = await a.claim(id, 'claim-a');
    assert.equal(got.kind, 'claimed');
    // The waiter's only way to end before the test's timeout is the published message (its own wait is longer).
    const woken = b.waitForClaim(id, 10 * 60_000);
    assert.equal(await a.complete((got as { claim: Parameters<Coordinator['complete']>[0] }).claim, 'approved'), true);
    assert.equal(await woken, 'approved', 'woken by the message, which carries the decided record (a timeout carries none)');
    const seen = await b.claim(id, 'claim-b');
    assert.deepEqual(seen, { kind: 'decided', record: 'approved' }, 'decided once, seen by the other instance');
    for (let i = 0; i < 100 && heard.some((h) => h.length === 0); i++) await sleep(20);
    assert.deepEqual(heard.map((h) => h.map((m) => m.split('\n')[0])), cluster.nodes.map(() => [a.key('decided', id)]), 'every node delivered the message (the decided key, then the record)');
  });

  it('the review store (scripts over five keys) and the track store (a script over two keys) work across two instances', async () => {
    const [a, b] = [await coordinator('cfc5:', 'a'), await coordinator('cfc5:', 'b')];
    const [reviewA, reviewB] = [new RedisReviewStore(a, 'review-node'), new RedisReviewStore(b, 'review-node')];
    const now = Date.now();
    await reviewA.add({ action_id: 'act-1', client_id: CLIENT, type: 'ApproveTransfer', details: {}, reasons: ['held'], expireTime: 0, required: 2, votes: [], state: 'open', createdAt: now });
    assert.deepEqual(await reviewB.vote('act-1', { reviewer: 'Alice', decision: 'approve', at: new Date(now).toISOString(), via: 'api' }, 2, 'b'), { kind: 'stored' });
    assert.deepEqual(await reviewA.vote('act-1', { reviewer: 'alice', decision: 'approve', at: new Date(now + 1).toISOString(), via: 'api' }, 2, 'a'), { kind: 'voted' }, 'one vote per person across the instances');
    const deciding = await reviewA.vote('act-1', { reviewer: 'bob', decision: 'approve', at: new Date(now + 2).toISOString(), via: 'api' }, 2, 'a');
    assert.equal(deciding.kind === 'stored' && deciding.claimed?.decision, 'approve', 'the deciding vote claims the final call');
    assert.deepEqual(await reviewB.vote('act-1', { reviewer: 'carol', decision: 'reject', reason: 'late', at: new Date(now + 3).toISOString(), via: 'api' }, 2, 'b'), { kind: 'closed' }, 'no vote after the claim');
    const seen = await reviewA.get('act-1');
    assert.deepEqual([seen?.state, seen?.votes.length, seen?.final?.votes.map((v) => v.reviewer)], ['calling', 2, ['Alice', 'bob']]);
    await reviewA.remove('act-1');
    assert.deepEqual(await reviewB.load(), [], 'removed for both');
    assert.ok((await a.run((r) => r.pttl(a.key('review', 'review-node', 'votes', 'act-1')))) > 0, 'its votes kept for a while (the MULTI ran whole)');

    const [trackA, trackB] = [new RedisTrackStore(a, 'track-node', 'a'), new RedisTrackStore(b, 'track-node', 'b')];
    const record: TrackRecord = { id: 'tx-1/msg-1', target: { kind: 'transfer', tx_id: 'tx-1' }, msg: { payload: 1 }, startedAt: now, deadline: now + 3600_000, reads: 0 };
    await trackA.put(record);
    assert.deepEqual((await trackB.load()).map((r) => r.id), [record.id], 'the other instance resumes it');
    assert.deepEqual([await trackB.markReported(record.id, 'final'), await trackA.markReported(record.id, 'final')], [true, false], 'reported once');
    await trackA.put({ ...record, reads: 5 });
    assert.deepEqual(await trackB.load(), [], 'a late update does not bring a reported record back');
  });
});
