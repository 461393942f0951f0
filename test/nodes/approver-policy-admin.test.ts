/**
 * The admin API of custody-approver (nodes/custody-approver/admin.ts, docs/policies.md) in a real
 * `node-red` with adminAuth, against the simulator over real sockets: the core client feed ->
 * custody-approver (live) decides 60 real transfer actions (approvals up to a daily count limit
 * reached, held above the amount limit and past the count limit); then
 * `POST /custody/approvers/{id}/simulate` with the deployed rules answers no change, with a
 * lower count limit exactly the changes a plain loop over the audit's decision lines computes;
 * `POST .../try` names the deciding rule and the reasons, the velocity windows read and not
 * consumed; the audit file is byte for byte unchanged by both; a user without
 * `custody.policy.read` and no login are refused; a bad draft, period or action gets 400 naming
 * the field; an unknown node 404. And `custodyflow-policy simulate` (the built CLI, spawned) on
 * that audit file: exit 0 on the deployed rules, 1 on the lower limit with `--fail-on-change`, 2
 * on a bad policy naming the field.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { adminCall, startAdminRed, type AdminRed } from '../helpers/admin-auth';
import { root, sleep } from '../helpers/red-process';
import { startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';
import { control } from '../helpers/support';
import { decidedTransfers, decisionLines as decisionLinesOf } from '../helpers/policy-history';

const USERS = { admin: ['*'], policy: ['read', 'custody.policy.read'], viewer: ['custody.review.read', 'custody.review.write'] };
const ACTIONS = 60;
const DAILY = 40;
const RULE = { name: 'small BTC transfers', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '0.5', velocityCount: String(DAILY), velocityWindowHours: '24' };
const DEPLOYED = { rules: [RULE], defaultDecision: 'hold' };
const LOWER = 25;
const LOWERED = { rules: [{ ...RULE, velocityCount: String(LOWER) }], defaultDecision: 'hold' };
const POLICY_CLI = path.join(root, 'dist', 'lib', 'approver', 'cli.js');

describe('custody-approver admin API: simulate and try a draft (real node-red, adminAuth, simulator)', function () {
  this.timeout(180000);
  let s: SimulatedAccount;
  let red: AdminRed;
  let settingsDir = '';
  let auditFile = '';
  let personApproved = '';

  const call = (user: keyof typeof USERS, p: string, body: unknown) => adminCall(red.red.base, red.tokens[user], 'POST', p, body);
  const json = async (res: Response): Promise<{ status: number; body: any }> => {
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: text };
    }
  };
  const decisionLines = (): any[] => decisionLinesOf(auditFile);
  const auditHash = () => crypto.createHash('sha256').update(fs.readFileSync(auditFile)).digest('hex');

  before(async () => {
    s = await startSimulated('cf-policy-admin-sim-');
    await control(s.sim, '/faucet', { wallet_id: s.sim.demo.wallets['BTC-TESTNET'].wallet_id, amount: 50 * 100_000_000 });
    settingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-policy-admin-settings-'));
    red = await startAdminRed('cf-policy-admin-', settingsDir, USERS);
    auditFile = path.join(red.red.userDir, 'custodyflow-audit', 'ap.jsonl');
    const flows = [
      { id: 'tab', type: 'tab', label: 'policy' },
      { id: 'cfg', type: 'custody-config', name: 'sim', environment: 'custom', baseUrl: s.sim.baseUrl, signingMode: 'timestamp', timeout: 30, credentials: { apiKey: s.sim.account.apiKey, privateKey: s.sim.account.privateKeyPem } },
      { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: 'demo-approver', details: true, x: 120, y: 100, wires: [['ap']] },
      { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', ...DEPLOYED, dryRun: false, auditFile: '', x: 320, y: 100, wires: [[], [], ['rv']] },
      { id: 'rv', z: 'tab', type: 'custody-review', connection: 'cfg', clientId: 'demo-approver', approvers: '1', escalateMargin: '0', auditFile: '', x: 520, y: 100, wires: [[], [], []] },
    ];
    const res = await adminCall(red.red.base, red.tokens.admin, 'POST', '/flows', flows);
    assert.ok(res.status === 200 || res.status === 204, `deploy: ${res.status} ${await res.text()}`);
    // Every fifth transfer is above the rule's 0.5 BTC (held); the others approved until the count limit, then held.
    await decidedTransfers(s, auditFile, ACTIONS, (i) => (i % 5 === 4 ? 60_000_000 : 100_000 * ((i % 3) + 1)), 'policy', () => red.red.log);
    const deadline = Date.now() + 120000;
    // A person approves one action held above the amount limit, in custody-review (same connection).
    personApproved = decisionLines().find((l) => l.decision === 'hold' && l.reasons.some((r: string) => /above 0\.5/.test(r))).action_id;
    const reviewAudit = path.join(red.red.userDir, 'custodyflow-audit', 'rv.jsonl');
    for (;;) {
      const listed = await json(await adminCall(red.red.base, red.tokens.admin, 'GET', '/custody/reviews'));
      if (listed.status === 200 && listed.body.reviews.some((r: any) => r.action_id === personApproved)) break;
      if (Date.now() > deadline) throw new Error(`the review queue: ${JSON.stringify(listed.body).slice(0, 2000)}`);
      await sleep(100);
    }
    const vote = await json(await adminCall(red.red.base, red.tokens.admin, 'POST', `/custody/reviews/${personApproved}`, { decision: 'approve', reason: 'checked by phone' }));
    assert.equal(vote.status, 200, JSON.stringify(vote.body));
    const called = () => fs.existsSync(reviewAudit) && fs.readFileSync(reviewAudit, 'utf8').split('\n').some((l) => l.includes('"event":"result"') && l.includes(personApproved));
    while (!called()) {
      if (Date.now() > deadline) throw new Error(`no call result in ${reviewAudit}`);
      await sleep(100);
    }
  });

  after(async () => {
    await red?.red.stop();
    if (s) await stopSimulated(s);
    if (settingsDir) fs.rmSync(settingsDir, { recursive: true, force: true });
  });

  it('the history: approvals up to the daily count, held above the amount and past the count', () => {
    const lines = decisionLines();
    assert.equal(lines.length, ACTIONS);
    const approved = lines.filter((l) => l.decision === 'approve');
    assert.equal(approved.length, DAILY, 'the count limit was reached');
    assert.equal(lines.filter((l) => l.decision === 'hold').length, ACTIONS - DAILY);
  });

  it('simulate the deployed rules: every action unchanged; the audit file byte for byte unchanged', async () => {
    const before = auditHash();
    const { status, body } = await json(await call('policy', '/custody/approvers/ap/simulate', { ...DEPLOYED, from: new Date(Date.now() - 3600_000).toISOString() }));
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.actions, ACTIONS);
    assert.equal(body.replayed, ACTIONS);
    assert.deepEqual(body.counts, { unchanged: ACTIONS });
    assert.deepEqual(body.changes, []);
    assert.equal(body.notReplayable.count, 0);
    assert.equal(body.assets['BTC-TESTNET'].approvedThen.count, DAILY);
    assert.equal(body.assets['BTC-TESTNET'].approvedDraft.count, DAILY);
    // The review node on the same connection: the action a person approved there is counted as such.
    assert.equal(body.decidedByPeople, 1);
    assert.equal(body.assets['BTC-TESTNET'].approvedByPeople.count, 1);
    assert.equal(body.assets['BTC-TESTNET'].approvedByPeople.baseUnits, decisionLines().find((l) => l.action_id === personApproved).amount, 'the amount the decision line recorded');
    assert.equal(typeof body.assets['BTC-TESTNET'].approvedThen.baseUnits, 'string');
    assert.equal(auditHash(), before);
  });

  it('simulate a lower daily count: exactly the approvals past the new limit, in recorded order, become holds', async () => {
    // The plain loop: the draft keeps the first LOWER approvals (all within 24 h); the rest are held.
    const expected = decisionLines()
      .filter((l) => l.decision === 'approve')
      .slice(LOWER)
      .map((l) => l.action_id);
    const before = auditHash();
    const { status, body } = await json(await call('policy', '/custody/approvers/ap/simulate', LOWERED));
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body.counts, { unchanged: ACTIONS - expected.length, 'approve→hold': expected.length });
    assert.deepEqual(
      body.changes.map((c: any) => c.action_id),
      expected,
    );
    for (const c of body.changes) {
      assert.equal(c.then.decision, 'approve');
      assert.equal(c.draft.decision, 'hold');
      assert.equal(c.draft.rule, null);
      assert.match(c.draft.reasons[0], new RegExp(`velocity: ${LOWER + 1} approvals of BTC-TESTNET in 24 h with this action, above ${LOWER}`));
    }
    assert.equal(body.assets['BTC-TESTNET'].approvedDraft.count, LOWER);
    assert.equal(auditHash(), before);
  });

  it('try an action: the deciding rule and why, the velocity read and not consumed', async () => {
    const before = auditHash();
    const action = { type: 'ApproveTransfer', asset: 'BTC-TESTNET', amountDecimal: '0.001', scale: 100_000_000, destination: 'demo-counterparty-btc-testnet' };
    const deployed = await json(await call('policy', '/custody/approvers/ap/try', { ...DEPLOYED, action }));
    assert.equal(deployed.status, 200, JSON.stringify(deployed.body));
    assert.equal(deployed.body.decision, 'hold');
    assert.equal(deployed.body.rule, null);
    assert.match(deployed.body.reasons[0], new RegExp(`velocity: ${DAILY + 1} approvals of BTC-TESTNET in 24 h with this action, above ${DAILY}`));
    const draft = { rules: [{ ...RULE, velocityCount: '100' }], defaultDecision: 'hold' };
    const tries = [];
    for (let i = 0; i < 2; i++) tries.push(await json(await call('policy', '/custody/approvers/ap/try', { ...draft, action })));
    for (const t of tries) {
      assert.equal(t.status, 200, JSON.stringify(t.body));
      assert.equal(t.body.decision, 'approve');
      assert.deepEqual(t.body.rule, { index: 0, name: 'small BTC transfers' });
      assert.equal(t.body.velocity.count, DAILY + 1, 'the approvals in the window, this one included');
      assert.equal(t.body.facts.amount, '100000');
    }
    assert.deepEqual(tries[1].body.velocity, tries[0].body.velocity, 'a trial consumes nothing');
    assert.equal(auditHash(), before);
  });

  // Node-RED's rule: `read` (and `*`) grant every `<x>.read` permission; a reviewer with only the review scopes has no policy read.
  it('refused: no login 401, a user without custody.policy.read 401/403', async () => {
    const anon = await fetch(`${red.red.base}/custody/approvers/ap/simulate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(DEPLOYED) });
    assert.equal(anon.status, 401);
    for (const p of ['simulate', 'try']) {
      const res = await call('viewer', `/custody/approvers/ap/${p}`, DEPLOYED);
      assert.ok(res.status === 401 || res.status === 403, `${p}: ${res.status}`);
    }
  });

  it('400 naming the field: a bad draft, a bad decision, a bad regex, a period ending before it starts, a bad action; nothing written', async () => {
    const before = auditHash();
    const cases: Array<[string, unknown, string]> = [
      ['simulate', { rules: [{ ...RULE, maxAmount: 'lots' }] }, 'rules[0].maxAmount'],
      ['simulate', { rules: [{ ...RULE, decision: 'maybe' }] }, 'rules[0].decision'],
      ['simulate', { rules: [{ ...RULE, referencePattern: '(' }] }, 'rules[0].referencePattern'],
      ['simulate', { ...DEPLOYED, defaultDecision: 'approve' }, 'defaultDecision'],
      ['simulate', { ...DEPLOYED, from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'to'],
      ['simulate', { ...DEPLOYED, from: 'yesterday-ish' }, 'from'],
      ['simulate', [1, 2], 'body'],
      ['try', { ...DEPLOYED, action: { type: 'ApproveTransfer', amount: '1.5' } }, 'action.amount'],
      ['try', { ...DEPLOYED }, 'action'],
      ['try', { rules: [{ ...RULE, velocityCount: 'x' }], action: { type: 'ApproveTransfer' } }, 'rules[0].velocityCount'],
    ];
    for (const [p, body, field] of cases) {
      const r = await json(await call('policy', `/custody/approvers/ap/${p}`, body));
      assert.equal(r.status, 400, `${p} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.field, field, JSON.stringify(r.body));
      assert.ok(r.body.error.includes(field), r.body.error);
    }
    assert.equal(auditHash(), before);
  });

  it('404 naming the node: an unknown id, a node that is not an approver', async () => {
    for (const id of ['no-such-node', 'feed']) {
      for (const p of ['simulate', 'try']) {
        const r = await json(await call('policy', `/custody/approvers/${id}/${p}`, { ...DEPLOYED, action: { type: 'ApproveTransfer' } }));
        assert.equal(r.status, 404, JSON.stringify(r.body));
        assert.equal(r.body.node, id);
        assert.ok(r.body.error.includes(id), r.body.error);
      }
    }
  });

  describe('custodyflow-policy simulate on that audit file (the built CLI)', () => {
    let dir = '';
    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-policy-cli-'));
      fs.writeFileSync(path.join(dir, 'deployed.json'), JSON.stringify(DEPLOYED));
      fs.writeFileSync(path.join(dir, 'lowered.json'), JSON.stringify(LOWERED));
      fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ rules: [{ ...RULE, maxAmount: '-1' }] }));
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const cli = (...args: string[]) => spawnSync(process.execPath, [POLICY_CLI, ...args], { encoding: 'utf8' });

    it('--fail-on-change: exit 0 on the deployed rules, 1 on the lower limit (the changes printed), 2 on a bad policy naming the field', () => {
      const before = auditHash();
      const same = cli('simulate', auditFile, '--policy', path.join(dir, 'deployed.json'), '--fail-on-change');
      assert.equal(same.status, 0, same.stdout + same.stderr);
      assert.match(same.stdout, new RegExp(`^unchanged: ${ACTIONS}$`, 'm'));
      assert.doesNotMatch(same.stdout, /→/);

      const lower = cli('simulate', auditFile, '--policy', path.join(dir, 'lowered.json'), '--fail-on-change');
      assert.equal(lower.status, 1, lower.stdout + lower.stderr);
      assert.match(lower.stdout, new RegExp(`^approve→hold: ${DAILY - LOWER}$`, 'm'));
      const ids = decisionLines()
        .filter((l) => l.decision === 'approve')
        .slice(LOWER)
        .map((l) => l.action_id);
      for (const id of ids) assert.ok(lower.stdout.includes(` ${id} `), `${id} listed`);

      const asJson = cli('simulate', auditFile, '--policy', path.join(dir, 'lowered.json'), '--json');
      assert.equal(asJson.status, 0, asJson.stderr);
      assert.equal(JSON.parse(asJson.stdout).counts['approve→hold'], DAILY - LOWER);

      const bad = cli('simulate', auditFile, '--policy', path.join(dir, 'bad.json'), '--fail-on-change');
      assert.equal(bad.status, 2, bad.stdout + bad.stderr);
      assert.match(bad.stderr, /rules\[0\]\.maxAmount/);

      const period = cli('simulate', auditFile, '--policy', path.join(dir, 'deployed.json'), '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-01T00:00:00Z');
      assert.equal(period.status, 2);
      assert.match(period.stderr, /^--to: /m);
      assert.equal(auditHash(), before);
    });
  });
});
