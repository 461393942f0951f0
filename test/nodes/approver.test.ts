/**
 * `custody-approver` in the real Node-RED runtime (node-red-node-test-helper) against the
 * built-in simulator over real sockets: each condition kind matching and not (on real pending
 * actions, their details, whitelist, scale and short code read through the API); first match;
 * default hold and default reject; dry run sends nothing (a counting server); an expired
 * action is not approved; a restart (the flow stopped and loaded again) re-sends the pending
 * actions and none is decided twice, the velocity window kept; the audit file's chain checked
 * by `custodyflow-audit verify` (good file, edited line, deleted line) and a node that refuses
 * to decide on a file that does not verify.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { control, demoTransfer, until } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useCountingServer, useRedRuntime } from '../helpers/red-setup';
import { CustodyClient, createTransfer, getAction, getTransfer, listActions } from '../../lib';
import { type ApprovalRule } from '../../lib/approver';
import { root } from '../helpers/red-process';
import { FaultProxy } from '../helpers/fault-proxy';

const dataDir = simulatorDataDir('cf-approver-', 'sim');
const nodeModules = redNodes(['custody-config', 'custody-approver', 'custody-coreclient-feed']);

const inbox: Inbox = new Map();
const OUTS = ['approved', 'rejected', 'held', 'caught'] as const;
let fileSeq = 0;
/** A fresh audit file path in the test's folder. */
const freshAudit = () => path.join(dataDir, `audit-${++fileSeq}.jsonl`);

/** The approver `ap` (outputs to helpers approved, rejected, held) and a Catch node to `caught`; `feed` adds a core client feed for `client` wired into it. */
function approverFlow(props: Record<string, unknown>, opts: { feed?: string; config?: Record<string, unknown> } = {}): object[] {
  const flow: object[] = [
    TAB,
    { ...CONFIG, z: 'tab', ...opts.config },
    { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: false, wires: [['approved'], ['rejected'], ['held']], x: 100, y: 100, ...props },
    ...OUTS.map((id) => ({ id, z: 'tab', type: 'helper', x: 100, y: 100 })),
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
  ];
  if (opts.feed) flow.push({ id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: opts.feed, details: true, wires: [['ap']], x: 100, y: 100 });
  return flow;
}

async function load(flow: object[], credentials: object = {}): Promise<void> {
  await loadCollecting(nodeModules, flow, credentials, inbox, [...OUTS]);
}

/** Every msg the approver sent or the Catch node caught since the flow was loaded. */
const received = () => OUTS.reduce((n, id) => n + inbox.get(id)!.length, 0);

/** Send `payload` into the approver; resolve with the output it went to and the msg. */
async function decide(payload: Record<string, unknown>): Promise<{ port: (typeof OUTS)[number]; msg: any }> {
  const before = Object.fromEntries(OUTS.map((id) => [id, inbox.get(id)!.length]));
  helper.getNode('ap').receive({ payload });
  const port = await until(() => OUTS.find((id) => inbox.get(id)!.length > before[id]), 'a msg from the approver');
  return { port, msg: inbox.get(port)![before[port]] };
}

/** The lines of an audit file, parsed. */
const auditLines = (file: string): any[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

const AUDIT_CLI = path.join(root, 'dist', 'lib', 'audit', 'cli.js');

describe('custody-approver in Node-RED with the simulator', function () {
  this.timeout(60000);
  let sim: Simulator;
  let client: CustodyClient;
  const APPROVER = 'demo-approver';

  /** Create a transfer from the demo BTC-TESTNET wallet and return its pending action of demo-approver, with details. */
  async function pendingAction(overrides: Parameters<typeof demoTransfer>[1] = {}): Promise<{ tx_id: string; action: any }> {
    const created = await createTransfer(client, demoTransfer(sim, overrides));
    const tx_id = created.data.tx_id;
    for (let i = 0; i < 200; i++) {
      const list = (await listActions(client, { client_id: APPROVER })).data.actions;
      for (const a of list) {
        const full = (await getAction(client, { client_id: APPROVER, action_id: a.id })).data;
        if (full.details?.txID === tx_id) return { tx_id, action: { ...full, client_id: APPROVER, action_id: full.id } };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no action for transfer ${tx_id}`);
  }

  const simulator = useRedRuntime(dataDir, { simulatorDir: path.join(dataDir, 'sim') });
  before(() => {
    sim = simulator();
    client = accountClient(sim);
  });
  after(() => client.close());

  describe('conditions, on a real pending transfer action (dry run)', () => {
    let action: any;
    let today = '';
    before(async () => {
      ({ action } = await pendingAction({ send: { symbol: 'BTC-TESTNET', amount: 1500000 }, reference: 'INV-2026-0042', benefit_of: 'Acme Trading' }));
      today = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][new Date().getUTCDay()];
    });

    /** Decide `action` (payload as given, or only its ids) by one rule in dry run; return where it went and the decision. */
    async function byRule(rule: Partial<ApprovalRule>, payload?: Record<string, unknown>) {
      await load(approverFlow({ dryRun: true, auditFile: freshAudit(), rules: [{ name: 'under test', decision: 'approve', ...rule }] }));
      const r = await decide(payload ?? action);
      await helper.unload();
      return { port: r.port, decision: r.msg.decision, msg: r.msg };
    }

    const cases: Array<[string, Partial<ApprovalRule>, Partial<ApprovalRule>, RegExp]> = [
      ['action type', { actionTypes: ['ApproveTransfer'] }, { actionTypes: ['ApproveWithdraw'] }, /type ApproveTransfer is not one of ApproveWithdraw/],
      ['asset', { assets: ['BTC-TESTNET'] }, { assets: ['ETH-TESTNET'] }, /asset BTC-TESTNET is not one of ETH-TESTNET/],
      ['amount bounds (whole units, scale from GET /assets)', { minAmount: '0.01500015', maxAmount: '1' }, { maxAmount: '0.01499999' }, /amount 0\.01500015 BTC-TESTNET is above 0\.01499999/],
      ['minimum amount', { minAmount: '0.01' }, { minAmount: '0.02' }, /amount 0\.01500015 BTC-TESTNET is below 0\.02/],
      ['destination allowlist by wallet id', { destinations: ['x', 'COUNTERPARTY'] }, { destinations: ['some-other-wallet'] }, /is not in the allowlist/],
      ['destination allowlist by short code', { destinations: ['SHORTCODE'] }, { destinations: ['no such words'] }, /short codes not resolved: "no such words"/],
      ['destination in the fund whitelist', { destinationWhitelisted: true }, { destinationWhitelisted: true, assets: ['BTC-TESTNET'] }, /./],
      ['source fund', { sources: ['FUND'] }, { sources: ['demo-manual-fund'] }, /source fund .* is not in the allowlist/],
      ['velocity amount and count', { velocityAmount: '1', velocityCount: '5', velocityWindowHours: '24' }, { velocityAmount: '0.01' }, /velocity: 0\.01500015 BTC-TESTNET approved in 24 h with this action, above 0\.01/],
      ['velocity count', { velocityCount: '1' }, { velocityCount: '0' }, /velocity: 1 approvals of BTC-TESTNET in 24 h with this action, above 0/],
      ['weekly time window in a named time zone', { days: ['TODAY'], timeZone: 'UTC' }, { days: ['NOT_TODAY'], timeZone: 'UTC' }, /is outside/],
      ['reference pattern', { referencePattern: '^INV-\\d{4}-' }, { referencePattern: '^PO-' }, /reference "INV-2026-0042" does not match/],
      ['benefitOf pattern', { benefitOfPattern: 'Acme' }, { benefitOfPattern: '^Globex' }, /benefitOf "Acme Trading" does not match/],
    ];

    for (const [what, matching, failing, reason] of cases) {
      it(`${what}: matches, and does not`, async () => {
        const fill = (r: Partial<ApprovalRule>): Partial<ApprovalRule> => {
          const json = JSON.stringify(r)
            .replace(/COUNTERPARTY/g, sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id)
            .replace(/SHORTCODE/g, sim.demo.counterparty.wallets['BTC-TESTNET'].short_code)
            .replace(/"FUND"/g, JSON.stringify(sim.demo.fund_id))
            .replace(/"TODAY"/g, JSON.stringify(today))
            .replace(/"NOT_TODAY"/g, ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].filter((d) => d !== today).map((d) => JSON.stringify(d)).join(','));
          return JSON.parse(json);
        };
        // The whitelist case: an action to demo-fund's whitelisted BTC-TESTNET address (as a withdrawal's is).
        const toWhitelisted = { ...action, details: { ...action.details, recipientAddress: sim.demo.whitelist['BTC-TESTNET'] } };
        const yes = await byRule(fill(matching), what === 'destination in the fund whitelist' ? toWhitelisted : undefined);
        assert.equal(yes.port, 'approved', `${what} should match: ${yes.decision.reasons.join('; ')}`);
        assert.deepEqual(yes.decision.rule, { index: 0, name: 'under test' });
        assert.equal(yes.decision.mode, 'dryRun');
        if (what === 'destination in the fund whitelist') {
          // Not matching: a withdrawal-like action to an address the fund has not whitelisted.
          const other = { ...action, details: { ...action.details, recipientAddress: 'tb1qnotwhitelisted0000000000000000000000000' } };
          const no = await byRule(fill(failing), other);
          assert.equal(no.port, 'held');
          assert.match(no.decision.reasons.join('\n'), /is not in the whitelist of fund demo-fund/);
          return;
        }
        const no = await byRule(fill(failing));
        assert.equal(no.port, 'held', `${what} should not match`);
        assert.equal(no.decision.rule, null);
        assert.match(no.decision.reasons.join('\n'), reason);
        assert.match(no.decision.reasons.join('\n'), /no rule matched: default decision hold/);
      });
    }

    it('reads the details itself when the msg has only client_id and action_id', async () => {
      const r = await byRule({ actionTypes: ['ApproveTransfer'], maxAmount: '1' }, { client_id: APPROVER, action_id: action.action_id });
      assert.equal(r.port, 'approved');
      // details.amount is gross (spec section 2: amount = netAmount + fees): 0.015 sent + 0.1 bps fee.
      assert.equal(r.decision.amount, '1500015');
      assert.equal(r.decision.amountDecimal, '0.01500015');
      assert.equal(r.decision.asset, 'BTC-TESTNET');
      assert.equal(r.decision.destination, sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id);
      assert.equal(r.msg.payload.details.txID, action.details.txID);
    });

    it('missing data fails the condition and says which: unknown asset scale, no details, whitelist not readable', async () => {
      const unknownAsset = { ...action, details: { ...action.details, asset: 'NOPE-COIN' } };
      let r = await byRule({ maxAmount: '1' }, unknownAsset);
      assert.equal(r.port, 'held');
      assert.match(r.decision.reasons.join('\n'), /the scale of asset "NOPE-COIN" is unknown/);
      // Details that name no amount: the amount condition fails, naming details.amount.
      const noAmount = { ...action, details: { ...action.details, amount: undefined } };
      r = await byRule({ maxAmount: '1' }, noAmount);
      assert.equal(r.port, 'held');
      assert.match(r.decision.reasons.join('\n'), /details\.amount missing/);
      // A fund the whitelist cannot be read for.
      const badFund = { ...action, details: { ...action.details, fundID: 'no-such-fund' } };
      r = await byRule({ destinationWhitelisted: true }, badFund);
      assert.equal(r.port, 'held');
      assert.match(r.decision.reasons.join('\n'), /whitelist of fund no-such-fund could not be read/);
    });

    it('first match wins; no match gives the default decision', async () => {
      await load(
        approverFlow({
          dryRun: true,
          auditFile: freshAudit(),
          rules: [
            { name: 'hold ETH', decision: 'hold', assets: ['ETH-TESTNET'] },
            { name: 'reject big', decision: 'reject', minAmount: '0.01' },
            { name: 'approve BTC', decision: 'approve', assets: ['BTC-TESTNET'] },
          ],
        }),
      );
      const r = await decide(action);
      assert.equal(r.port, 'rejected');
      assert.deepEqual(r.msg.decision.rule, { index: 1, name: 'reject big' });
      assert.match(r.msg.decision.reasons[0], /rule 1 "hold ETH" did not match: asset BTC-TESTNET is not one of ETH-TESTNET/);
      await helper.unload();
      await load(approverFlow({ dryRun: true, auditFile: freshAudit(), rules: [] }));
      const d = await decide(action);
      assert.equal(d.port, 'held');
      assert.deepEqual(d.msg.decision.reasons, ['no rule matched: default decision hold']);
    });
  });

  describe('live', () => {
    it('approves by rule (PUT): the transfer is approved; rejects by default (DELETE): custody_rejected_transfer', async () => {
      const auditFile = freshAudit();
      await load(approverFlow({ auditFile, defaultDecision: 'reject', rules: [{ name: 'small BTC', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '1' }] }));
      const small = await pendingAction({ send: { symbol: 'BTC-TESTNET', amount: 1000000 } });
      const a = await decide(small.action);
      assert.equal(a.port, 'approved');
      assert.equal(a.msg.statusCode, 200);
      assert.equal((await getTransfer(client, { company_id: sim.demo.company_id, tx_id: small.tx_id })).data.txStatus, 'approved_transfer');
      const big = await pendingAction({ send: { symbol: 'BTC-TESTNET', amount: 200000000 } });
      const b = await decide(big.action);
      assert.equal(b.port, 'rejected');
      assert.match(b.msg.decision.reasons.join('\n'), /amount 2\.00002 BTC-TESTNET is above 1/);
      assert.equal((await getTransfer(client, { company_id: sim.demo.company_id, tx_id: big.tx_id })).data.txStatus, 'custody_rejected_transfer');
      // Audit: decision line, then result line, for each.
      const lines = auditLines(auditFile);
      assert.deepEqual(lines.map((l) => [l.kind, l.decision ?? l.ok]), [['decision', 'approve'], ['result', true], ['decision', 'reject'], ['result', true]]);
    });

    it('an expired action is not approved: nothing is sent, it is held with the reason', async () => {
      await load(approverFlow({ auditFile: freshAudit(), rules: [{ name: 'all', decision: 'approve' }] }));
      const { action } = await pendingAction();
      const r = await decide({ ...action, expireTime: Math.floor(Date.now() / 1000) - 5 });
      assert.equal(r.port, 'held');
      assert.equal(r.msg.decision.expired, true);
      assert.match(r.msg.decision.reasons.join('\n'), /expired: the action expired at .*: not approved/);
      assert.equal((await getAction(client, { client_id: APPROVER, action_id: action.id })).data.status, 'pending');
      // Leave nothing pending for the other tests' feeds.
      await client.request('DELETE', `/coreclient/${APPROVER}/action/${action.id}`);
    });

    it('an API failure goes to Catch with the decision attached, and the action is decided again when it comes back', async () => {
      await load(approverFlow({ auditFile: freshAudit(), rules: [{ name: 'all', decision: 'approve' }] }));
      const { action, tx_id } = await pendingAction();
      await control(sim, '/faults/http', { method: 'PUT', path: `/action/${action.id}`, status: 400, count: 1 });
      const first = await decide(action);
      assert.equal(first.port, 'caught');
      assert.equal(first.msg.decision.decision, 'approve');
      assert.equal(first.msg.decision.action_id, action.id);
      assert.equal(first.msg.statusCode, 400);
      const again = await decide(action);
      assert.equal(again.port, 'approved');
      assert.match(again.msg.decision.reasons[0], /decided again: the earlier call failed/);
      assert.equal((await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data.txStatus, 'approved_transfer');
    });
  });

  describe('an approve whose answer is lost after the API applied it (a proxy answering 502)', () => {
    let proxy: FaultProxy;
    before(async () => {
      proxy = new FaultProxy({ target: sim.baseUrl, controlUrl: sim.baseUrl.replace(/\/api\/v1\/p$/, '/_simulator'), rules: [{ method: 'PUT', path: /\/coreclient\/[^/]+\/action\//, rates: { after502: 1 } }], seed: 11 });
      await proxy.start();
    });
    after(() => proxy.stop());

    it('leaves by the approved output with msg.decision.outcome "applied": resolved by reading the action, called once, audited unknown then resolved', async () => {
      const auditFile = freshAudit();
      await load(approverFlow({ auditFile, rules: [{ name: 'all', decision: 'approve' }] }, { config: { environment: 'custom', baseUrl: proxy.baseUrl } }), { cfg: { apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem } });
      const { action, tx_id } = await pendingAction();
      const out = await decide(action);
      assert.equal(out.port, 'approved');
      assert.equal(out.msg.decision.outcome, 'applied');
      assert.equal(out.msg.outcomeUnknown, undefined);
      assert.equal((await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data.txStatus, 'approved_transfer');
      assert.equal(proxy.records.filter((r) => r.method === 'PUT' && r.path.includes(action.id)).length, 1);
      assert.deepEqual(auditLines(auditFile).map((l) => `${l.kind}:${l.outcome ?? l.decision}`), ['decision:approve', 'result:unknown', 'resolved:applied']);
    });
  });

  describe('dry run against a counting server', () => {
    const server = new CountingServer({
      answer: (request, s) =>
        request.url.endsWith('/assets') ? { status: 200, body: JSON.stringify({ assets: [{ code: 'BTC-TESTNET', scale: 100000000 }] }) } : { status: 200, body: s.body },
    });
    const { creds } = useCountingServer(server);

    it('decides, writes the audit line and sends the msg, and calls nothing (no PUT, no DELETE)', async () => {
      const auditFile = freshAudit();
      await load(
        approverFlow(
          { dryRun: true, auditFile, rules: [{ name: 'small', decision: 'approve', maxAmount: '1' }, { name: 'rest', decision: 'reject' }] },
          { config: { environment: 'custom', baseUrl: server.baseUrl } },
        ),
        creds,
      );
      const details = { txID: 't1', asset: 'BTC-TESTNET', amount: 1000000, recipientAddress: 'w2', fundID: 'f1', companyID: 'c1' };
      const a = await decide({ client_id: 'cc1', action_id: 'a1', id: 'a1', type: 'ApproveTransfer', status: 'pending', expireTime: 0, details });
      const b = await decide({ client_id: 'cc1', action_id: 'a2', id: 'a2', type: 'ApproveTransfer', status: 'pending', expireTime: 0, details: { ...details, amount: 500000000 } });
      assert.equal(a.port, 'approved');
      assert.equal(b.port, 'rejected');
      assert.equal(a.msg.decision.mode, 'dryRun');
      assert.equal(a.msg.statusCode, undefined);
      assert.deepEqual(server.seen.map((s) => `${s.method} ${s.url.replace(/^\/api\/v1\/p/, '')}`), ['GET /assets']);
      assert.deepEqual(auditLines(auditFile).map((l) => [l.kind, l.action_id, l.decision, l.mode]), [['decision', 'a1', 'approve', 'dryRun'], ['decision', 'a2', 'reject', 'dryRun']]);
    });
  });

  describe('a restart (the flow stopped and loaded again)', () => {
    it('re-sends the pending actions and none is decided twice; the velocity window is kept', async () => {
      const auditFile = freshAudit();
      // Approve transfers of demo-approver up to 0.035 BTC-TESTNET a day; the rest is held for a person.
      const props = { auditFile, rules: [{ name: 'daily 0.035', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityAmount: '0.035', velocityWindowHours: '24' }] };
      // Clear what earlier tests left pending, so only this test's actions come.
      for (const a of (await listActions(client, { client_id: APPROVER })).data.actions) await client.request('DELETE', `/coreclient/${APPROVER}/action/${a.id}`);
      await load(approverFlow(props, { feed: APPROVER }));
      const txs = [];
      for (let i = 0; i < 3; i++) txs.push((await createTransfer(client, demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount: 1500000 } }))).data.tx_id);
      await until(() => (received() >= 3 ? true : undefined), 'three decisions');
      assert.equal(inbox.get('approved')!.length, 2);
      assert.equal(inbox.get('held')!.length, 1);
      const heldMsg = inbox.get('held')![0];
      assert.match(heldMsg.msg?.decision?.reasons?.join('\n') ?? heldMsg.decision.reasons.join('\n'), /velocity: 0\.04500045 BTC-TESTNET approved in 24 h with this action, above 0\.035/);
      assert.deepEqual(heldMsg.decision.velocity, { used: '0.04500045', limit: '0.035', count: 3, countLimit: null, window: 86400 });

      await helper.unload();
      await load(approverFlow(props, { feed: APPROVER }));
      // The feed re-sends the held action (still pending): recognised, not decided again.
      await until(() => (inbox.get('held')!.length >= 1 ? true : undefined), 'the re-sent pending action');
      const again = inbox.get('held')![0];
      assert.equal(again.decision.redelivered, true);
      assert.equal(again.decision.action_id, heldMsg.decision.action_id);
      // The window survived: a new 0.015 is held too (0.03 approved + 0.015 > 0.035).
      const fourth = (await createTransfer(client, demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount: 1500000 } }))).data.tx_id;
      await until(() => (inbox.get('held')!.length >= 2 ? true : undefined), 'the fourth transfer decided');
      const held4 = inbox.get('held')![1];
      assert.equal(held4.decision.redelivered, undefined);
      assert.equal(held4.decision.velocity.used, '0.04500045');
      assert.equal(inbox.get('approved')!.length, 0);

      // Each action decided once in the audit file; statuses as decided.
      const decisions = auditLines(auditFile).filter((l) => l.kind === 'decision');
      const perAction = new Map<string, number>();
      for (const d of decisions) perAction.set(d.action_id, (perAction.get(d.action_id) ?? 0) + 1);
      assert.equal(perAction.size, 4);
      assert.ok([...perAction.values()].every((n) => n === 1));
      const statuses = await Promise.all([...txs, fourth].map(async (tx_id) => (await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data.txStatus));
      assert.deepEqual(statuses, ['approved_transfer', 'approved_transfer', 'pending_transfer', 'pending_transfer']);

      // The chain verifies with the shipped command; an edited line and a deleted line are named.
      assert.match(execFileSync(process.execPath, [AUDIT_CLI, 'verify', auditFile], { encoding: 'utf8' }), /^ok: \d+ lines, head [0-9a-f]{64}/);
      const lines = fs.readFileSync(auditFile, 'utf8').split('\n');
      const edited = path.join(dataDir, 'edited.jsonl');
      fs.writeFileSync(edited, lines.map((l, i) => (i === 2 ? l.replace('"mode":"live"', '"mode":"dryRun"') : l)).join('\n'));
      let res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', edited], { encoding: 'utf8' });
      assert.equal(res.status, 1);
      assert.match(res.stdout, /line 4: prev does not match the SHA-256 of line 3/);
      const deleted = path.join(dataDir, 'deleted.jsonl');
      fs.writeFileSync(deleted, lines.filter((_l, i) => i !== 1).join('\n'));
      res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', deleted], { encoding: 'utf8' });
      assert.equal(res.status, 1);
      assert.match(res.stdout, /line 2: seq is 3, expected 2/);

      // A node whose audit file does not verify decides nothing: errors to Catch, nothing sent.
      await helper.unload();
      await load(approverFlow({ ...props, auditFile: edited }));
      const refused = await decide({ client_id: APPROVER, action_id: heldMsg.decision.action_id });
      assert.equal(refused.port, 'caught');
      assert.match(refused.msg.error.message, /line 4: prev does not match/);
      for (const a of (await listActions(client, { client_id: APPROVER })).data.actions) await client.request('DELETE', `/coreclient/${APPROVER}/action/${a.id}`);
    });
  });
});
