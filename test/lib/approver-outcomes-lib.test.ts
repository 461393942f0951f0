/**
 * The approver's three failure kinds, in lib with real parts: the simulator over real sockets,
 * a loopback proxy (test/helpers/fault-proxy.ts) that loses the answer of an approve call after the
 * simulator applied it (`after502`, `dropAfter`) or refuses it before (`before503`), and real
 * audit files. What a user relies on:
 * - an approve whose answer is lost but which the API applied leaves by the approved output with
 *   `decision.outcome` `applied`, stays in the velocity window, and the audit says
 *   `outcome: "unknown"` then `resolved` `applied`;
 * - one that never reached the API is read back as still pending, and only once the pending
 *   read is definite (pendingSettlesAfterMs) is it `notApplied`: its reservation is freed, and a
 *   re-send decides it again;
 * - an approver closed while the outcome is unknown resolves it at the next open, and a re-send
 *   calls nothing again.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  verifyAuditChain,
  CustodyClient,
  getAction,
  type AuditLine,
} from '../../lib';
import { ActionNotAppliedError, Approver, OutcomeUnknownError, compileRules, type ApprovalRule } from '../../lib/approver';
import { Coordinator } from '../../lib/coordination';
import { accountClient, simulatedSuite } from '../helpers/simulated';
import { closedAfterEach, pendingTransferActions, tempDirPerTest, until } from '../helpers/support';
import { FaultProxy, type FaultKind } from '../helpers/fault-proxy';
import { RedisServer } from '../helpers/redis-server';
import { rotatedSegments } from '../../lib/audit';

const CLIENT = 'demo-approver';

describe('approver: a call whose outcome is unknown is resolved, never counted as failed (lib)', function () {
  this.timeout(60000);
  const s = simulatedSuite('cf-outcomes-sim-');
  const tempDir = tempDirPerTest('cf-outcomes-');
  const open = closedAfterEach();

  /** A proxy that applies `kind` to every approve call (PUT .../action/...) while `faults` is on. */
  async function proxyWith(kind: FaultKind): Promise<FaultProxy> {
    const p = new FaultProxy({ target: s.sim.baseUrl, controlUrl: s.sim.baseUrl.replace(/\/api\/v1\/p$/, '/_simulator'), rules: [{ method: 'PUT', path: /\/coreclient\/[^/]+\/action\//, rates: { [kind]: 1 } }], seed: 7, holdMs: 300 });
    await p.start();
    open.push({ close: () => p.stop() });
    return p;
  }

  function clientVia(p: FaultProxy): CustodyClient {
    const c = accountClient(s.sim, { baseUrl: p.baseUrl, attempts: 1, timeoutMs: 2000 });
    open.push({ close: () => c.close() });
    return c;
  }

  async function approver(client: CustodyClient, auditFile: string, rules: ApprovalRule[], extra: { pendingSettlesAfterMs?: number; reportUnknownAfterMs?: number } = {}): Promise<Approver> {
    const a = await Approver.open({ rules: compileRules(rules), auditFile, client: async () => client, approverId: 'approver-1', ...extra });
    open.push(a);
    return a;
  }

  /** `n` new transfers' pending actions of demo-approver, with details (as the feed and a read give them). */
  const pendingActions = (n: number) => pendingTransferActions(s.client, s.sim, n, 1000, CLIENT);

  const statusOf = async (a: any) => String((await getAction(s.client, { client_id: CLIENT, action_id: a.action_id })).data.status);
  const lines = (file: string): AuditLine[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const puts = (p: FaultProxy) => p.records.filter((r) => r.method === 'PUT').length;
  const countOne: ApprovalRule[] = [{ name: 'one per day', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityCount: '1', velocityWindowHours: '24' }];

  for (const kind of ['after502', 'dropAfter'] as const) {
    it(`applied, answer lost (${kind}): leaves by the approved output as applied, stays counted, audited unknown then resolved`, async () => {
      const proxy = await proxyWith(kind);
      const file = path.join(tempDir(), 'audit.jsonl');
      const a = await approver(clientVia(proxy), file, countOne);
      const [first, second] = await pendingActions(2);
      const o = await a.decide(first);
      assert.equal(o.error, undefined, o.error?.message);
      assert.equal(o.output, 'approved');
      assert.equal(o.decision.outcome, 'applied');
      assert.equal(await statusOf(first), 'approved');
      const kinds = lines(file).filter((l) => l.action_id === first.action_id).map((l) => `${l.kind}:${l.outcome ?? l.decision}`);
      assert.deepEqual(kinds, ['decision:approve', 'result:unknown', 'resolved:applied']);
      // Still counted: the count limit of 1 holds the next one.
      proxy.faults = false;
      const next = await a.decide(second);
      assert.equal(next.output, 'held');
      assert.equal(await statusOf(second), 'pending');
      assert.equal(puts(proxy), 1, 'one approve call in all');
    });
  }

  it('with Redis coordination: an applied approve whose answer was lost is resolved, recorded decided, and the other instance calls nothing', async () => {
    const redis = new RedisServer();
    await redis.start();
    open.push({ close: () => redis.stop() });
    const proxy = await proxyWith('after502');
    const client = clientVia(proxy);
    const dir = tempDir();
    const [first, second] = await pendingActions(2);
    const instances: Approver[] = [];
    for (const i of [0, 1]) {
      const coord = new Coordinator({ url: redis.url, keyPrefix: 'cf-outcome:', leaseMs: 3000, instance: `instance-${i}` });
      open.push(coord);
      await coord.whenReady();
      const a = await Approver.open({ rules: compileRules(countOne), auditFile: path.join(dir, `audit-${i}.jsonl`), client: async () => client, approverId: 'approver-1', coordinator: coord });
      open.push(a);
      instances.push(a);
    }
    const o = await instances[0].decide(first);
    assert.equal(o.output, 'approved', o.error?.message);
    assert.equal(o.decision.outcome, 'applied');
    proxy.faults = false;
    // The other instance sees it decided; the shared window holds the approval (limit 1).
    const elsewhere = await instances[1].decide(first);
    assert.equal(elsewhere.output, 'skipped');
    assert.equal((await instances[1].decide(second)).output, 'held');
    assert.equal(puts(proxy), 1, 'one approve call in all');
  });

  it('not applied (before503): read back pending until definite, then notApplied: the reservation is freed and a re-send decides it again', async () => {
    const proxy = await proxyWith('before503');
    const file = path.join(tempDir(), 'audit.jsonl');
    const a = await approver(clientVia(proxy), file, countOne, { pendingSettlesAfterMs: 400 });
    const [first] = await pendingActions(1);
    const o = await a.decide(first);
    assert.ok(o.error instanceof ActionNotAppliedError, `not applied: ${o.error?.message}`);
    assert.equal(o.decision.outcome, 'notApplied');
    assert.equal(await statusOf(first), 'pending');
    const resolved = lines(file).filter((l) => l.kind === 'resolved');
    assert.equal(resolved.length, 1);
    assert.equal(resolved[0].outcome, 'notApplied');
    assert.equal(resolved[0].status, 'pending');
    // The window was freed: the same action, sent again, is approved under the limit of 1.
    proxy.faults = false;
    const again = await a.decide(first);
    assert.equal(again.output, 'approved', again.error?.message);
    assert.equal(again.decision.outcome, 'applied');
    assert.match(again.decision.reasons[0], /decided again/);
    assert.equal(await statusOf(first), 'approved');
  });

  it('still unknown after reportUnknownAfterMs: returned as outcome unknown (Catch); closed, the next open resolves it and a re-send calls nothing', async () => {
    const proxy = await proxyWith('dropAfter');
    const file = path.join(tempDir(), 'audit.jsonl');
    const client = clientVia(proxy);
    const a = await approver(client, file, countOne, { reportUnknownAfterMs: 0 });
    const [first, second] = await pendingActions(2);
    // reportUnknownAfterMs 0: returned as unknown at once, whatever the resolution finds later.
    const o = await a.decide(first);
    assert.ok(o.error instanceof OutcomeUnknownError, `unknown: ${o.error?.message}`);
    assert.equal((o.error.cause as { outcomeUnknown?: boolean }).outcomeUnknown, true);
    assert.equal(o.error.code, 'EOUTCOMEUNKNOWN');
    assert.equal(o.error.action_id, first.action_id);
    assert.equal(o.decision.outcome, 'unknown');
    await a.close();
    // Whatever the first approver resolved before it closed, drop the resolved line to stand for a stop mid-resolution.
    const kept = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const cut = kept.findIndex((l) => JSON.parse(l).kind === 'resolved');
    if (cut >= 0) fs.writeFileSync(file, kept.slice(0, cut).map((l) => l + '\n').join(''));
    proxy.faults = false;
    const b = await approver(client, file, countOne);
    await until(() => (b.unknown === 0 ? true : undefined), 'the next open resolves the unknown outcome');
    const after = lines(file).filter((l) => l.action_id === first.action_id).map((l) => `${l.kind}:${l.outcome ?? l.decision}`);
    assert.deepEqual(after, ['decision:approve', 'result:unknown', 'resolved:applied']);
    const resent = await b.decide(first);
    assert.equal(resent.decision.redelivered, true);
    assert.equal(resent.output, 'approved');
    // Counted across the restart: the limit of 1 holds the second.
    assert.equal((await b.decide(second)).output, 'held');
    assert.equal(puts(proxy), 1, 'one approve call in all');
  });

  it('across audit segments: a restart reads the newest segment only, yet the velocity window and decided-once hold, and the chain verifies across files', async () => {
    const proxy = await proxyWith('after502');
    proxy.faults = false;
    const client = clientVia(proxy);
    const file = path.join(tempDir(), 'audit.jsonl');
    const five: ApprovalRule[] = [{ name: 'five per day', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityCount: '5', velocityWindowHours: '24' }];
    const small = { maxSegmentBytes: 1200, closeCheckpointBytes: Infinity };
    const a = await approver(client, file, five);
    await a.close();
    open.pop();
    const first = await Approver.open({ rules: compileRules(five), auditFile: file, client: async () => client, approverId: 'approver-1', auditOptions: small });
    const actions = await pendingActions(8);
    const outs = [];
    for (const x of actions.slice(0, 4)) outs.push((await first.decide(x)).output);
    assert.deepEqual(outs, ['approved', 'approved', 'approved', 'approved']);
    await first.close();
    assert.ok(rotatedSegments(file).length >= 2, `rotated: ${rotatedSegments(file).length} segments`);
    const second = await Approver.open({ rules: compileRules(five), auditFile: file, client: async () => client, approverId: 'approver-1', auditOptions: small });
    open.push(second);
    // Decided once across the restart, from the state the newest segment carries.
    const again = await second.decide(actions[0]);
    assert.equal(again.decision.redelivered, true);
    // The window counts the four earlier approvals: one more is approved, then held.
    assert.equal((await second.decide(actions[4])).output, 'approved');
    assert.equal((await second.decide(actions[5])).output, 'held');
    assert.equal(puts(proxy), 5);
    const v = verifyAuditChain(file);
    assert.ok(v.ok, JSON.stringify(v.bad));
  });
});
