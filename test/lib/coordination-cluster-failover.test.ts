/**
 * A failover inside a Redis Cluster (docs/scale-out.md, "Redis Cluster"): the master of the
 * prefix's hash slot dies after writes its replica never got (asynchronous replication), and the
 * cluster promotes the replica. A real Redis Cluster of three masters with a replica each
 * (test/helpers/redis-cluster.ts); the lost write is made deterministic by cutting the replica off
 * before it (`cutReplica`). Two lib Coordinators in Cluster mode stand for two instances: the
 * failover must be seen by each ('failover', `failovers`, `master`) and handled as a data loss
 * (the loss handlers write back what was decided), so the action decided on the dead master is
 * never claimed again. No timing is asserted.
 */
import assert from 'node:assert/strict';
import { Coordinator, CoordinationUnavailableError, type ClaimResult, type FailoverInfo } from '../../lib/coordination/coordinator';
import { RedisCluster } from '../helpers/redis-cluster';
import { sleep } from '../helpers/red-process';

describe("coordination on a Redis Cluster (lib): a failover of the prefix's master that lost the last writes", function () {
  this.timeout(120000);
  const cluster = new RedisCluster(3, 1);
  const coords: Coordinator[] = [];

  before(() => cluster.start());
  after(async () => {
    for (const c of coords) await c.close();
    await cluster.stop();
  });

  /** Poll `check` every 50 ms until true; fails naming `what` after `ms`. */
  async function until(what: string, check: () => Promise<boolean>, ms = 30000): Promise<void> {
    for (const deadline = Date.now() + ms; !(await check()); await sleep(50)) if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
  }

  it('every instance sees the failover and handles it as a data loss: the action decided on the dead master is written back, not claimed again', async () => {
    const [a, b] = ['a', 'b'].map((instance) => new Coordinator({ clusterNodes: cluster.seeds, keyPrefix: 'cff:', leaseMs: 1500, instance }));
    coords.push(a, b);
    await Promise.all([a.whenReady(), b.whenReady()]);
    const seen: FailoverInfo[] = [];
    a.on('failover', (info: FailoverInfo) => seen.push(info));
    // What an approver does at a data loss: write back what it decided.
    const decided: Array<[string, string]> = [];
    a.onDataLoss(() => a.restoreDecided(decided));
    const decide = async (id: string) => {
      const got = await a.claim(id, `claim-${id}`);
      assert.equal(got.kind, 'claimed');
      assert.equal(await a.complete((got as Extract<ClaimResult, { kind: 'claimed' }>).claim, `approved ${id}`), true);
      decided.push([id, `approved ${id}`]);
    };
    const slot = Number(await a.run((r) => r.cluster('KEYSLOT', a.key('epoch'))));
    const master = await cluster.ownerOf(slot);
    const replica = cluster.replicaOf(master);
    await decide('live:c:replicated');
    await until('the replica has the first decision', async () => (await cluster.read(replica, (r) => r.exists(a.key('decided', 'live:c:replicated')))) === 1);

    const resume = await cluster.cutReplica(master);
    await decide('live:c:lost');
    await master.stop({ kill: true });
    resume();
    assert.equal(await cluster.read(replica, (r) => r.exists(a.key('decided', 'live:c:lost'))), 0, 'control: the replica never got the second decision');
    await until('the cluster promoted the replica', async () => (await cluster.ownerOf(slot).catch(() => undefined)) === replica);

    // The other instance is handed the lost action: refused while it recovers (fail closed), then found decided.
    let again: ClaimResult | undefined;
    await until('a claim answered after the failover', async () => {
      try {
        again = await b.claim('live:c:lost', 'claim-b');
        return true;
      } catch (e) {
        if (!(e instanceof CoordinationUnavailableError)) throw e;
        return false;
      }
    });
    assert.deepEqual(again, { kind: 'decided', record: 'approved live:c:lost' }, 'decided once: written back, not claimed again');
    const promoted = `127.0.0.1:${replica.port}`;
    assert.deepEqual([a.failovers, b.failovers, a.master, b.master], [1, 1, promoted, promoted], 'both saw one failover, to the promoted replica');
    assert.deepEqual(seen.map((f) => [f.from, f.to]), [[`127.0.0.1:${master.port}`, promoted]]);
  });
});
