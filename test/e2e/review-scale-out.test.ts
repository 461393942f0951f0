/**
 * `custody-review` on two real `node-red` instances sharing one real Redis (docs/nodes.md
 * "custody-review", docs/scale-out.md): both run the same flow (core client feed -> approver, no
 * rule -> review, quorum 2) with coordination on, against one simulator behind a proxy that records
 * every request. The approver holds the action on one instance (the other skips it); the review
 * shows on both instances' `GET /custody/reviews`; alice votes on instance A and bob on instance B
 * (adminAuth users), alice's second vote on B is refused; the action is approved with exactly one
 * PUT and the transfer reaches `approved_transfer`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RedProcess } from '../helpers/red-process';
import { startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';
import { ApprovalProxy } from '../helpers/approval-proxy';
import { RedisServer } from '../helpers/redis-server';
import { demoTransfer } from '../helpers/support';
import { OPERATOR, adminCall, loginToken, writeAdminAuthSettings } from '../helpers/admin-auth';
import { createTransfer, getTransfer } from '../../lib';

const USERS: Record<string, string[]> = { alice: OPERATOR, bob: OPERATOR, admin: ['*'] };

describe('custody-review on two Node-RED instances sharing one Redis', function () {
  this.timeout(180000);
  let s: SimulatedAccount;
  let proxy: ApprovalProxy;
  let redis: RedisServer;
  const reds: RedProcess[] = [];
  const tokens: Array<Record<string, string>> = [];
  const settingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-review-so-settings-'));

  before(async () => {
    s = await startSimulated('cf-review-so-sim-');
    redis = new RedisServer();
    await redis.start();
    proxy = new ApprovalProxy({ target: s.sim.baseUrl, holdMs: 0 });
    const settingsFile = writeAdminAuthSettings(settingsDir, USERS);
    for (const name of ['a', 'b']) {
      const baseUrl = await proxy.listen(name);
      const red = new RedProcess({ prefix: `cf-review-so-${name}-`, settingsFile });
      await red.start();
      reds.push(red);
      const t: Record<string, string> = {};
      for (const u of Object.keys(USERS)) t[u] = await loginToken(red.base, u);
      tokens.push(t);
      const flows = [
        { id: 'tab', type: 'tab', label: 'review' },
        { id: 'cfg', type: 'custody-config', name: 'sim', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: 30, coordination: 'redis', redisUrl: `${redis.url}/0`, redisKeyPrefix: 'cf-review-so:', claimLeaseSeconds: 60, credentials: { apiKey: s.sim.account.apiKey, privateKey: s.sim.account.privateKeyPem } },
        { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: 'demo-approver', details: true, x: 120, y: 100, wires: [['ap']] },
        { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: false, rules: [], x: 320, y: 100, wires: [[], [], ['rv']] },
        { id: 'rv', z: 'tab', type: 'custody-review', connection: 'cfg', approvers: '2', escalateMargin: '60', x: 520, y: 100, wires: [[], [], []] },
      ];
      const res = await adminCall(red.base, t.admin, 'POST', '/flows', flows);
      const text = await res.text();
      assert.ok(res.status === 200 || res.status === 204, `deploy ${name}: ${res.status} ${text}`);
    }
  });

  after(async () => {
    for (const red of reds) await red.stop();
    await proxy?.stop();
    await redis?.stop();
    await stopSimulated(s);
    fs.rmSync(settingsDir, { recursive: true, force: true });
  });

  const list = async (i: number): Promise<any[]> => ((await (await adminCall(reds[i].base, tokens[i].alice, 'GET', '/custody/reviews')).json()) as { reviews: any[] }).reviews;

  it('one review shows on both, votes count across instances, alice cannot vote twice on the other instance, exactly one PUT, approved_transfer', async () => {
    const tx_id = (await createTransfer(s.client, demoTransfer(s.sim, { send: { symbol: 'BTC-TESTNET', amount: 10_000_000 } }))).data.tx_id;
    let actionId = '';
    for (let i = 0; i < 600 && !actionId; i++) {
      const r = (await list(0)).find((x) => x.details.txID === tx_id);
      if (r) actionId = r.action_id;
      else await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(actionId, `the review never showed on instance a\n${reds.map((r) => r.log.slice(-1500)).join('\n---\n')}`);
    const onB = (await list(1)).find((x) => x.action_id === actionId);
    assert.ok(onB, 'the same review shows on instance b');
    let res = await adminCall(reds[0].base, tokens[0].alice, 'POST', `/custody/reviews/${actionId}`, { decision: 'approve' });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual((await list(1)).find((x) => x.action_id === actionId).votes.map((v: any) => v.reviewer), ['alice'], 'alice\'s vote counts on b');
    res = await adminCall(reds[1].base, tokens[1].alice, 'POST', `/custody/reviews/${actionId}`, { decision: 'approve' });
    assert.equal(res.status, 409);
    assert.match(((await res.json()) as { error: string }).error, /already approved by you/);
    assert.equal(proxy.decisionCalls().length, 0, 'no PUT yet');
    res = await adminCall(reds[1].base, tokens[1].bob, 'POST', `/custody/reviews/${actionId}`, { decision: 'approve' });
    const body = (await res.json()) as { state: string };
    assert.equal(res.status, 200);
    assert.equal(body.state, 'calling', 'the deciding vote answers at once; the PUT runs in the background');
    let status = '';
    for (let i = 0; i < 300 && status !== 'approved_transfer'; i++) {
      status = String(((await getTransfer(s.client, { company_id: s.sim.demo.company_id, tx_id })).data as any).txStatus);
      if (status !== 'approved_transfer') await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 'approved_transfer');
    const puts = proxy.decisionCalls().filter((d) => d.method === 'PUT' && d.action_id === actionId);
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
