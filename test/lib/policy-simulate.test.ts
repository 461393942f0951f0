/**
 * Simulating a draft rule set against the recorded history (lib/approver/simulate.ts, draft.ts;
 * docs/nodes.md "Simulating a draft"), on real audit files written by a real dry-run Approver
 * whose segments rotate and carry checkpoint lines. What a user relies on:
 * - the deployed rules replayed over their own history change nothing;
 * - a draft with a lower velocity count changes exactly what a plain loop over the recorded facts
 *   computes (the draft's velocity counting the draft's own approvals), with per-asset sums and
 *   the rules' own reasons;
 * - a draft that adds a destination turns the held actions to it into approvals, and only those;
 *   actions a person decided in custody-review are shown as such;
 * - lines written before decision lines recorded facts replay with what they have, a condition on
 *   a fact they lack is counted not replayable;
 * - a bad draft is refused naming the field; simulating calls no API and changes no file;
 * - what the draft rejects or holds does not count in its velocity windows;
 * - a live history over real sockets (the simulator behind a proxy that refuses one approve
 *   call): the approval not applied stops counting for the draft as for the approver;
 * - trying an action reads the approver's velocity window without consuming it.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog, rotatedSegments } from '../../lib/audit';
import { createTransfer, getAction, listActions, type CustodyClient } from '../../lib';
import { startSimulated, stopSimulated, accountClient, type SimulatedAccount } from '../helpers/simulated';
import { demoTransfer } from '../helpers/support';
import { FaultProxy } from '../helpers/fault-proxy';
import { Approver, compileRules, simulate, tryAction, type ApprovalRule, type SimulationResult } from '../../lib/approver';

const CLIENT = 'cc-sim';
const BTC = 'BTC-TESTNET';
const ETH = 'ETH-TESTNET';
const SCALE: Record<string, bigint> = { [BTC]: 10n ** 8n, [ETH]: 10n ** 18n };
const HOUR = 3_600_000;
/** The history starts now and runs ahead of the wall clock (the book prunes its windows by the wall clock: a clock behind it would see them pruned). */
const T0 = Math.ceil(Date.now() / 60_000) * 60_000;
const N = 480;
const STEP = 12 * 60_000;

/** The rules deployed when the history was made. */
const DEPLOYED: ApprovalRule[] = [
  { name: 'reject big', decision: 'reject', minAmount: '1' },
  { name: 'btc daily', decision: 'approve', assets: [BTC], destinations: ['w-a', 'w-b'], maxAmount: '0.5', velocityCount: '8', velocityWindowHours: '24' },
  { name: 'eth invoices', decision: 'approve', assets: [ETH], destinations: ['w-a', 'w-b'], sources: ['fund-1'], referencePattern: '^INV-', maxAmount: '0.5' },
];

/** The i-th action: assets, destinations, amounts (0.01 to 1.2 units), references and funds varied. */
function action(i: number): Record<string, unknown> {
  const asset = i % 2 === 0 ? BTC : ETH;
  const hundredths = BigInt(1 + ((i * 37) % 120));
  const id = `act-${String(i).padStart(5, '0')}`;
  return {
    id,
    action_id: id,
    client_id: CLIENT,
    type: 'ApproveTransfer',
    status: 'pending',
    expireTime: Math.floor(T0 / 1000) + 365 * 86400,
    details: {
      txID: `tx-${i}`,
      asset,
      amount: ((SCALE[asset]! * hundredths) / 100n).toString(),
      recipientAddress: ['w-a', 'w-b', 'w-c'][Math.floor(i / 2) % 3],
      companyID: 'co-1',
      fundID: i % 5 === 0 ? 'fund-2' : 'fund-1',
      reference: i % 7 === 0 ? `X-${i}` : `INV-${i}`,
      benefitOf: 'Acme',
    },
  };
}

/** A client that answers GET /assets only, counting every request. */
function countingClient(): { client: CustodyClient; calls: () => number } {
  let calls = 0;
  const client = {
    request: async (method: string, p: string) => {
      calls++;
      if (method === 'GET' && p === '/assets') return { statusCode: 200, data: { assets: [{ code: BTC, scale: 100000000 }, { code: ETH, scale: 1e18 }] } };
      throw new Error(`unexpected ${method} ${p}`);
    },
  } as unknown as CustodyClient;
  return { client, calls: () => calls };
}

/** Every line of every segment of `file`, in order. */
function allLines(file: string): any[] {
  const files = [...rotatedSegments(file).map((s) => s.file), file];
  return files.flatMap((f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));
}

/** SHA-256 of every file in `dir`, by name. */
function folderHash(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of fs.readdirSync(dir).sort()) out[n] = crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, n))).digest('hex');
  return out;
}

/** The recorded facts of a decision line, as a plain loop reads them. */
interface Rec {
  id: string;
  at: number;
  asset: string;
  amount: bigint;
  dest: string;
  fund: string;
  ref: string;
  decision: string;
}

describe('policy simulation: a draft replayed against the recorded history (lib)', function () {
  this.timeout(120000);
  let dir: string;
  let auditFile: string;
  let reviewFile: string;
  let approver: Approver;
  let clock = T0;
  let api: ReturnType<typeof countingClient>;
  let recs: Rec[];
  const period = { from: T0, to: T0 + N * STEP };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-policy-sim-'));
    auditFile = path.join(dir, 'audit', 'approver-1.jsonl');
    api = countingClient();
    // Small segments and checkpoints: the history spans rotated segments with checkpoint lines.
    approver = await Approver.open({
      rules: compileRules(DEPLOYED),
      mode: 'dryRun',
      auditFile,
      client: async () => api.client,
      approverId: 'approver-1',
      now: () => clock,
      auditOptions: { maxSegmentBytes: 60_000, rotateDaily: false, checkpointMinBytes: 8_000 } as any,
    });
    for (let i = 0; i < N; i++) {
      clock = T0 + i * STEP;
      await approver.decide(action(i));
    }
    recs = allLines(auditFile)
      .filter((l) => l.kind === 'decision')
      .map((l) => ({ id: l.action_id, at: Date.parse(l.decidedAt), asset: l.asset, amount: BigInt(l.amount), dest: l.destination, fund: l.facts.fundID, ref: l.facts.reference, decision: l.decision }));
    // A person decided four of the held ETH actions to w-c in custody-review.
    reviewFile = path.join(dir, 'audit', 'review-1.jsonl');
    const { log } = await AuditLog.open(reviewFile);
    const held = recs.filter((r) => r.asset === ETH && r.dest === 'w-c' && r.decision === 'hold' && r.amount * 2n <= SCALE[ETH]! && r.fund === 'fund-1' && /^INV-/.test(r.ref)).slice(0, 4);
    assert.equal(held.length, 4);
    for (const [k, r] of held.entries()) {
      const decision = k < 3 ? 'approve' : 'reject';
      await log.append({ kind: 'review', event: 'call', client_id: CLIENT, action_id: r.id, decision, method: decision === 'approve' ? 'PUT' : 'DELETE', reviewers: ['alice', 'bob'], votes: [] });
      await log.append({ kind: 'review', event: 'result', client_id: CLIENT, action_id: r.id, decision, outcome: 'applied', why: 'answered 200' });
    }
    await log.close();
  });

  after(async () => {
    await approver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the history spans rotated segments and checkpoint lines, and every facts field is on its decision lines', () => {
    assert.ok(rotatedSegments(auditFile).length >= 2, 'rotated segments');
    const lines = allLines(auditFile);
    assert.ok(lines.some((l) => l.kind === 'checkpoint'), 'a checkpoint line');
    assert.ok(lines.some((l) => l.kind === 'segment' && l.carried.length > 0), 'an opening line carrying state');
    assert.equal(recs.length, N);
    const d = lines.find((l) => l.kind === 'decision' && l.action_id === 'act-00007');
    assert.deepEqual(d.facts, { scale: 1e18, fundID: 'fund-1', walletID: null, companyID: 'co-1', reference: 'X-7', benefitOf: 'Acme', whitelisted: null, expires: null, details: true });
    assert.ok(recs.some((r) => r.decision === 'hold') && recs.some((r) => r.decision === 'approve') && recs.some((r) => r.decision === 'reject'));
  });

  it('the deployed rules replayed over their own history change nothing; no API call, no file changed', async () => {
    const before = folderHash(path.dirname(auditFile));
    const calls = api.calls();
    const r = await simulate({ auditFile, rules: DEPLOYED, defaultDecision: 'hold', ...period });
    assert.equal(r.actions, N, 'each decision once, the checkpoint and opening lines skipped');
    assert.equal(r.replayed, N);
    assert.deepEqual(r.counts, { unchanged: N });
    assert.equal(r.changes.length, 0);
    assert.equal(r.notReplayable.count, 0);
    for (const a of [BTC, ETH]) assert.equal(r.assets[a]!.approvedThen.baseUnits, r.assets[a]!.approvedDraft.baseUnits);
    assert.ok(allLines(auditFile).some((l) => l.kind === 'decision' && /velocity: 9 approvals of BTC-TESTNET in 24 h with this action, above 8/.test(l.reasons.join('\n'))), 'the BTC velocity limit was reached');
    assert.equal(api.calls(), calls, 'no API call');
    assert.deepEqual(folderHash(path.dirname(auditFile)), before, 'the audit folder is byte for byte unchanged');
  });

  it('a lower daily count limit changes exactly what a plain loop over the recorded facts computes', async () => {
    const draft = DEPLOYED.map((r) => (r.name === 'btc daily' ? { ...r, velocityCount: '5' } : r));
    const r = await simulate({ auditFile, rules: draft, defaultDecision: 'hold', ...period });
    // The plain loop: the draft's own approvals of BTC in the last 24 h.
    const approvedAt: number[] = [];
    const expected = new Map<string, string>();
    const sum = { then: 0n, draft: 0n };
    for (const x of recs.filter((y) => y.asset === BTC)) {
      let d: string;
      if (x.amount >= SCALE[BTC]!) d = 'reject';
      else if (['w-a', 'w-b'].includes(x.dest) && x.amount * 2n <= SCALE[BTC]! && approvedAt.filter((t) => t > x.at - 24 * HOUR).length + 1 <= 5) d = 'approve';
      else d = 'hold';
      if (d === 'approve') approvedAt.push(x.at);
      if (d !== x.decision) expected.set(x.id, `${x.decision}→${d}`);
      if (x.decision === 'approve') sum.then += x.amount;
      if (d === 'approve') sum.draft += x.amount;
    }
    assert.ok(expected.size > 0);
    assert.deepEqual(new Map(r.changes.map((c) => [c.action_id, `${c.then.decision}→${c.draft.decision}`])), expected);
    assert.equal(r.counts['approve→hold'], expected.size);
    assert.equal(r.counts.unchanged, N - expected.size);
    assert.equal(r.assets[BTC]!.approvedThen.baseUnits, sum.then.toString());
    assert.equal(r.assets[BTC]!.approvedDraft.baseUnits, sum.draft.toString());
    assert.equal(r.assets[BTC]!.approvedDraft.decimal, (Number(sum.draft) / 1e8).toString());
    assert.equal(r.assets[ETH]!.approvedThen.baseUnits, r.assets[ETH]!.approvedDraft.baseUnits);
    const c = r.changes[0]!;
    assert.equal(c.draft.rule, null);
    assert.equal(c.draft.reasons[0], 'rule 1 "reject big" did not match: amount ' + `${c.amountDecimal} ${BTC} is below 1`);
    assert.match(c.draft.reasons[1]!, /^rule 2 "btc daily" did not match: velocity: 6 approvals of BTC-TESTNET in 24 h with this action, above 5$/);
    assert.equal(c.draft.reasons.at(-1), 'no rule matched: default decision hold');
    assert.equal(c.then.rule?.name, 'btc daily');
  });

  it("what the draft rejects does not count in its velocity window: the room it leaves goes to later actions", async () => {
    const draft: ApprovalRule[] = [{ name: 'no BTC to w-b', decision: 'reject', assets: [BTC], destinations: ['w-b'] }, ...DEPLOYED];
    const r = await simulate({ auditFile, rules: draft, ...period });
    const approvedAt: number[] = [];
    const expected = new Map<string, string>();
    for (const x of recs.filter((y) => y.asset === BTC)) {
      let d: string;
      if (x.dest === 'w-b' || x.amount >= SCALE[BTC]!) d = 'reject';
      else if (x.dest === 'w-a' && x.amount * 2n <= SCALE[BTC]! && approvedAt.filter((t) => t > x.at - 24 * HOUR).length + 1 <= 8) d = 'approve';
      else d = 'hold';
      if (d === 'approve') approvedAt.push(x.at);
      if (d !== x.decision) expected.set(x.id, `${x.decision}→${d}`);
    }
    assert.ok([...expected.values()].includes('hold→approve'), 'held by velocity then, approved with the room the rejections leave');
    assert.deepEqual(new Map(r.changes.map((c) => [c.action_id, `${c.then.decision}→${c.draft.decision}`])), expected);
    const freed = r.changes.find((c) => c.then.decision === 'hold' && c.draft.decision === 'approve')!;
    assert.match(freed.then.reasons.join('\n'), /velocity: 9 approvals of BTC-TESTNET in 24 h with this action, above 8/);
    assert.deepEqual(freed.draft.rule, { index: 2, name: 'btc daily' });
  });

  it('a draft that adds a destination approves the held actions to it, only those; decisions of people shown as such', async () => {
    const draft = DEPLOYED.map((r) => (r.name === 'eth invoices' ? { ...r, destinations: ['w-a', 'w-b', 'w-c'] } : r));
    const r = await simulate({ auditFile, rules: draft, ...period, reviewAuditFile: reviewFile });
    const expected = recs.filter((x) => x.asset === ETH && x.dest === 'w-c' && x.amount * 2n <= SCALE[ETH]! && x.fund === 'fund-1' && /^INV-/.test(x.ref)).map((x) => x.id);
    assert.ok(expected.length > 0);
    assert.deepEqual(r.changes.map((c) => c.action_id), expected);
    assert.deepEqual(r.counts, { unchanged: N - expected.length, 'hold→approve': expected.length });
    for (const c of r.changes) assert.match(c.draft.reasons.join('\n'), /rule 3 "eth invoices" matched[\s\S]*destination w-c is in the allowlist/);
    assert.equal(r.decidedByPeople, 4);
    const shown = r.changes.filter((c) => c.person);
    assert.deepEqual(shown.map((c) => c.person!.decision), ['approve', 'approve', 'approve', 'reject']);
    for (const c of shown) assert.deepEqual(c.person, { decision: c.person!.decision, reviewers: ['alice', 'bob'], outcome: 'applied' });
    const approvedByPeople = recs.filter((x) => shown.slice(0, 3).some((c) => c.action_id === x.id));
    assert.equal(r.assets[ETH]!.approvedByPeople.count, 3);
    assert.equal(r.assets[ETH]!.approvedByPeople.baseUnits, approvedByPeople.reduce((s, x) => s + x.amount, 0n).toString());
  });

  it('lines written before decision lines recorded facts: a condition on a fact they lack is counted not replayable, never guessed', async () => {
    const oldFile = path.join(dir, 'old', 'approver-old.jsonl');
    const { log } = await AuditLog.open(oldFile);
    for (const l of allLines(auditFile).filter((x) => x.kind === 'decision' || x.kind === 'result')) {
      const { seq: _s, prev: _p, facts: _f, ...old } = l;
      await log.append(old);
    }
    await log.close();
    const r: SimulationResult = await simulate({ auditFile: oldFile, rules: DEPLOYED, ...period });
    // ETH actions that reach the source condition of "eth invoices": their fund is not on the line.
    const reachSource = recs.filter((x) => x.asset === ETH && x.amount < SCALE[ETH]! && ['w-a', 'w-b'].includes(x.dest) && x.amount * 2n <= SCALE[ETH]!);
    assert.equal(r.notReplayable.count, reachSource.length);
    assert.deepEqual(r.notReplayable.why, { 'rule 3 "eth invoices": fundID, walletID not recorded on the decision line': reachSource.length });
    // The rest replays (amount bounds with the scale the line shows by amount and amountDecimal): unchanged.
    assert.deepEqual(r.counts, { unchanged: N - reachSource.length });
    assert.equal(r.actions, N);
  });

  it('a bad draft or period is refused naming the field', async () => {
    const refused = async (opts: Record<string, unknown>, field: string) => {
      await assert.rejects(simulate({ auditFile, rules: DEPLOYED, ...period, ...opts } as any), (e: any) => e.code === 'EINPUT' && e.field === field);
    };
    await refused({ rules: [...DEPLOYED, { name: 'bad', decision: 'approve', maxAmount: '1.2.3' }] }, 'rules[3].maxAmount');
    await refused({ rules: [{ name: 'x', decision: 'allow' }] }, 'rules[0].decision');
    await refused({ rules: [{ name: 'x', decision: 'hold', referencePattern: '([' }] }, 'rules[0].referencePattern');
    await refused({ defaultDecision: 'approve' }, 'defaultDecision');
    await refused({ from: T0, to: T0 - 1 }, 'to');
    await refused({ from: 'yesterday' }, 'from');
    assert.throws(() => tryAction({ rules: DEPLOYED, action: { type: 'ApproveTransfer', amount: '-1' } as any }), (e: any) => e.field === 'action.amount');
  });

  it('trying an action reads the velocity window of the approver without consuming it', async () => {
    clock = T0 + N * STEP;
    const window = recs.filter((x) => x.asset === BTC && x.decision === 'approve' && x.at > clock - 24 * HOUR);
    const inWindow = window.length;
    const used = (Number(window.reduce((sum, x) => sum + x.amount, 1000000n)) / 1e8).toString();
    assert.ok(inWindow >= 3);
    const retained = approver.retained();
    const draft = { rules: DEPLOYED.map((r) => (r.name === 'btc daily' ? { ...r, velocityCount: String(inWindow) } : r)), defaultDecision: 'hold' };
    const tried = await approver.tryAction(draft, { type: 'ApproveTransfer', asset: BTC, amount: '1000000', destination: 'w-a' });
    assert.equal(tried.decision, 'hold');
    assert.deepEqual(tried.velocity, { used, limit: null, count: inWindow + 1, countLimit: inWindow, window: 86400 });
    assert.match(tried.reasons[1]!, new RegExp(`velocity: ${inWindow + 1} approvals of BTC-TESTNET in 24 h with this action, above ${inWindow}`));
    assert.equal(tried.facts.amountDecimal, '0.01');
    const higher = await approver.tryAction({ ...draft, rules: DEPLOYED.map((r) => (r.name === 'btc daily' ? { ...r, velocityCount: String(inWindow + 1) } : r)) }, { type: 'ApproveTransfer', asset: BTC, amount: '1000000', destination: 'w-a' });
    assert.equal(higher.decision, 'approve');
    assert.deepEqual(higher.rule, { index: 1, name: 'btc daily' });
    assert.deepEqual(approver.retained(), retained, 'nothing counted in the window');
    // The approver's own next decision counts the same window: the trials consumed nothing.
    const real = await approver.decide({ ...action(100000), details: { ...(action(100000).details as object), asset: BTC, amount: '1000000', recipientAddress: 'w-a' } });
    assert.equal(real.decision.velocity?.count, inWindow + 1);
    await assert.rejects(approver.tryAction({ rules: [{ name: 'x', decision: 'approve', maxAmount: 'lots' }] }, { type: 'ApproveTransfer' }), (e: any) => e.field === 'rules[0].maxAmount');
  });
});

describe('policy simulation: a live history over real sockets, with a call not applied (lib)', function () {
  this.timeout(60000);
  const LIVE_CLIENT = 'demo-approver';
  let s: SimulatedAccount;
  let proxy: FaultProxy;
  let client: CustodyClient;
  let dir: string;

  before(async () => {
    s = await startSimulated('cf-policy-sim-live-');
    // Approve calls answered 503 before the simulator sees them while `faults` is on.
    proxy = new FaultProxy({ target: s.sim.baseUrl, controlUrl: s.sim.baseUrl.replace(/\/api\/v1\/p$/, '/_simulator'), rules: [{ method: 'PUT', path: /\/coreclient\/[^/]+\/action\//, rates: { before503: 1 } }], seed: 7, holdMs: 300 });
    await proxy.start();
    proxy.faults = false;
    client = accountClient(s.sim, { baseUrl: proxy.baseUrl, attempts: 1, timeoutMs: 2000 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-policy-sim-live-'));
  });
  after(async () => {
    client?.close();
    await proxy?.stop();
    await stopSimulated(s);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the deployed rules change nothing; an approval not applied stops counting for the draft as for the approver; a lower limit changes what a plain loop computes', async () => {
    for (const a of (await listActions(s.client, { client_id: LIVE_CLIENT })).data.actions) await s.client.request('DELETE', `/coreclient/${LIVE_CLIENT}/action/${a.id}`);
    const txIds = new Set<string>();
    for (let i = 0; i < 7; i++) txIds.add((await createTransfer(s.client, demoTransfer(s.sim, { send: { symbol: BTC, amount: 1000 + i } }))).data.tx_id);
    const pending: any[] = [];
    for (const a of (await listActions(s.client, { client_id: LIVE_CLIENT })).data.actions) {
      const full = (await getAction(s.client, { client_id: LIVE_CLIENT, action_id: a.id })).data;
      if (txIds.has(String(full.details?.txID))) pending.push({ ...full, client_id: LIVE_CLIENT, action_id: full.id });
    }
    assert.equal(pending.length, 7);
    const rules: ApprovalRule[] = [{ name: 'three a day', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: [BTC], velocityCount: '3', velocityWindowHours: '24' }];
    const auditFile = path.join(dir, 'approver-live.jsonl');
    const a = await Approver.open({ rules: compileRules(rules), auditFile, client: async () => client, approverId: 'approver-live', pendingSettlesAfterMs: 400 });
    try {
      const out: string[] = [];
      for (const [i, act] of pending.entries()) {
        proxy.faults = i === 2;
        const o = await a.decide(act);
        out.push(o.decision.outcome === 'notApplied' ? 'notApplied' : o.output);
      }
      proxy.faults = false;
      // The action whose call was not applied comes back and is decided again.
      out.push((await a.decide(pending[2])).output);
      assert.deepEqual(out, ['approved', 'approved', 'notApplied', 'approved', 'held', 'held', 'held', 'held']);
    } finally {
      await a.close();
    }
    const lines = allLines(auditFile);
    assert.ok(lines.some((l) => l.kind === 'resolved' && l.outcome === 'notApplied'));
    const deployed = await simulate({ auditFile, rules, from: Date.now() - HOUR, to: Date.now() });
    assert.deepEqual(deployed.counts, { unchanged: 8 });
    assert.deepEqual([deployed.assets[BTC]!.approvedThen.count, deployed.assets[BTC]!.approvedDraft.count], [3, 3]);

    const lower = [{ ...rules[0]!, velocityCount: '2' }];
    const r = await simulate({ auditFile, rules: lower, from: Date.now() - HOUR, to: Date.now() });
    // The plain loop: the draft's approvals, an approval whose call was not applied no longer counted.
    const approved = new Set<string>();
    const expected: string[] = [];
    for (const l of lines) {
      if (l.kind === 'decision') {
        const d = approved.size + 1 <= 2 ? 'approve' : 'hold';
        if (d === 'approve') approved.add(l.action_id);
        if (d !== l.decision) expected.push(`${l.action_id} ${l.decision}→${d}`);
      } else if ((l.kind === 'result' || l.kind === 'resolved') && l.outcome === 'notApplied') approved.delete(l.action_id);
    }
    assert.ok(expected.length > 0);
    assert.deepEqual(r.changes.map((c) => `${c.action_id} ${c.then.decision}→${c.draft.decision}`), expected);
  });
});
