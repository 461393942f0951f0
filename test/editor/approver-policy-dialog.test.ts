/**
 * The "Test this policy" section of the custody-approver dialog (editor/src/approver-policy.ts,
 * docs/policies.md "In the dialog") in a real editor: a `node-red` process with the pack, the
 * simulator over real sockets, headless Chromium. A core client feed -> custody-approver decides
 * 12 real transfers (9 approved by "small BTC", 3 held by "large BTC"); then in its dialog, with
 * no Deploy:
 *
 * - a stricter daily count (5) on rule 1, Simulate: the changes table lists exactly the approvals
 *   past the 5th (read from the audit file's decision lines by a plain loop) as approve → hold;
 * - a bad amount on rule 1: the 400 names `rules[0].maxAmount`, row 1 is marked;
 * - Try an action of 0.7 BTC: decided by rule 2 "large BTC", with its reasons;
 * - Export, edit, Import of the exported file: the rules are back as exported; a file that breaks
 *   the schema is refused with a message naming the field and the rules stay;
 * - Cancel: the deployed node keeps its rules (GET /flows);
 * - a new approver not deployed yet: Simulate says so.
 *
 * Run alone with `npx mocha --no-config --timeout 180000 dist/test/editor/approver-policy-dialog.test.js`.
 * Set POLICY_SCREENSHOT to a path to keep a screenshot of the simulation's table.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { sleep } from '../helpers/red-process';
import { deployedNode, importAndEdit, openNodeDialog, useRedProcess, withEditor } from '../helpers/editor-kit';
import { startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';
import { control } from '../helpers/support';
import { decidedTransfers, decisionLines as decisionLinesOf } from '../helpers/policy-history';

const TAB = 'a9900000000000f2';
const CONFIG = 'a9900000000000c2';
const APPROVER = 'a990000000000a02';
const NEW_APPROVER = 'a990000000000a03';
const ACTIONS = 12;
const SMALL = { name: 'small BTC', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '0.5' };
const LARGE = { name: 'large BTC', decision: 'hold', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], minAmount: '0.5' };
const STRICTER = 5;

/** The `n`th rule row (1-based) of the open dialog. */
const row = (n: number) => `#node-input-rule-container > li:nth-child(${n}) .custody-rule`;

/** Open the "Test this policy" section of the open dialog. */
async function openSection(page: Page): Promise<void> {
  if ((await page.locator('#custody-approver-policy.custody-policy-open').count()) === 0) await page.click('#custody-approver-policy .custody-policy-toggle');
  await page.waitForSelector('#custody-policy-simulate', { state: 'visible' });
}

/** The names of the rule rows of the open dialog, in order. */
function dialogRules(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as any).$('#node-input-rule-container').editableList('items').map(function (this: any) {
    return (window as any).$(this).find('.custody-rule-name').val();
  }).get());
}

describe('custody-approver dialog: Test this policy (simulate, try, export and import) in Chromium', function () {
  this.timeout(240000);
  let s: SimulatedAccount;
  before(async () => {
    s = await startSimulated('cf-policy-dialog-sim-');
    await control(s.sim, '/faucet', { wallet_id: s.sim.demo.wallets['BTC-TESTNET'].wallet_id, amount: 50 * 100_000_000 });
  });
  after(async () => {
    if (s) await stopSimulated(s);
  });
  const red = useRedProcess({ prefix: 'cf-policy-dialog-', flows: '[]' });
  let auditFile = '';

  const decisionLines = (): any[] => decisionLinesOf(auditFile);

  before(async () => {
    auditFile = path.join(red().userDir, 'custodyflow-audit', `${APPROVER}.jsonl`);
    const flows = [
      { id: TAB, type: 'tab', label: 'policy dialog' },
      { id: CONFIG, type: 'custody-config', name: 'sim', environment: 'custom', baseUrl: s.sim.baseUrl, signingMode: 'timestamp', timeout: 30, credentials: { apiKey: s.sim.account.apiKey, privateKey: s.sim.account.privateKeyPem } },
      { id: 'feedpolicy0001', z: TAB, type: 'custody-coreclient-feed', connection: CONFIG, clientId: 'demo-approver', details: true, x: 120, y: 100, wires: [[APPROVER]] },
      { id: APPROVER, z: TAB, type: 'custody-approver', name: 'treasury', connection: CONFIG, rules: [SMALL, LARGE], defaultDecision: 'hold', dryRun: false, auditFile: '', x: 360, y: 100, wires: [[], [], []] },
    ];
    const res = await fetch(`${red().base}/flows`, { method: 'POST', headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' }, body: JSON.stringify(flows) });
    assert.ok(res.status === 200 || res.status === 204, `deploy: ${res.status} ${await res.text()}`);
    // Every fourth transfer is above 0.5 BTC (held by "large BTC"); the others approved by "small BTC".
    await decidedTransfers(s, auditFile, ACTIONS, (i) => (i % 4 === 3 ? 60_000_000 : 100_000 * ((i % 3) + 1)), 'dialog', () => red().log);
  });

  it('simulates a stricter draft, tries an action, exports and imports the policy, refuses a bad file', async () => {
    const lines = decisionLines();
    assert.equal(lines.filter((l) => l.decision === 'approve').length, 9);
    assert.equal(lines.filter((l) => l.decision === 'hold').length, 3);
    // The plain loop: under a count limit of 5 per 24 h, the approvals after the 5th become holds.
    const expected = lines.filter((l) => l.decision === 'approve').slice(STRICTER).map((l) => l.action_id).sort();

    await withEditor(red().base, { width: 1600, height: 1300 }, { types: ['custody-approver'], nodes: [APPROVER], globals: ['CustodyApproverPolicy'] }, async ({ page, errors }) => {
      await openNodeDialog(page, APPROVER, { selector: `${row(2)}`, settleMs: 600 });
      await openSection(page);
      const fromValue = await page.inputValue('#custody-policy-from');
      const toValue = await page.inputValue('#custody-policy-to');
      assert.equal(Math.round((Date.parse(toValue) - Date.parse(fromValue)) / 86_400_000), 30, 'the period is the last 30 days by default');

      // The deployed rules: no change.
      await page.click('#custody-policy-simulate');
      await page.waitForSelector('#custody-policy-sim-result .custody-policy-counts');
      assert.equal(await page.locator('#custody-policy-sim-result .custody-policy-nochange').count(), 1, 'the deployed rules change nothing');

      // A stricter rule 1 (in the dialog only): the approvals past the 5th are held.
      if ((await page.locator(`${row(1)}.custody-rule-open`).count()) === 0) await page.click(`${row(1)} .custody-rule-toggle`);
      await page.fill(`${row(1)} .custody-rule-velocityCount`, String(STRICTER));
      await page.click('#custody-policy-simulate');
      await page.waitForSelector('#custody-policy-sim-result .custody-policy-changes');
      const changes = await page.$$eval('#custody-policy-sim-result .custody-policy-changes tbody tr', (trs) =>
        trs.map((tr) => ({ id: tr.querySelector('td span')!.getAttribute('title'), cells: Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? '') })),
      );
      assert.deepEqual(changes.map((c) => c.id).sort(), expected, 'exactly the approvals past the stricter limit');
      for (const c of changes) {
        assert.equal(c.cells[1], 'ApproveTransfer');
        assert.equal(c.cells[2], 'BTC-TESTNET');
        assert.match(c.cells[4], /^approve → hold/);
        assert.match(c.cells[5], /velocity/, 'the draft\'s reasons name the velocity limit');
      }
      const counts = await page.$$eval('#custody-policy-sim-result .custody-policy-counts tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)));
      assert.deepEqual(Object.fromEntries(counts as [string, string][]), { unchanged: String(ACTIONS - expected.length), 'approve→hold': String(expected.length) });
      assert.match((await page.textContent('#custody-policy-sim-result .custody-policy-assets')) ?? '', /BTC-TESTNET.*9 ×.*5 ×/s);
      assert.match((await page.textContent('#custody-policy-sim-result .custody-policy-notreplayable')) ?? '', /Not replayable: 0/);
      assert.match((await page.textContent('#custody-policy-sim-result .custody-policy-people')) ?? '', /: 0$/);
      if (process.env.POLICY_SCREENSHOT) {
        await page.waitForSelector('#custody-policy-simulate:enabled');
        await page.locator('#custody-approver-policy').scrollIntoViewIfNeeded();
        await page.locator('.red-ui-tray').first().screenshot({ path: process.env.POLICY_SCREENSHOT });
      }

      // A bad amount: the 400 names the field, and row 1 is marked.
      await page.fill(`${row(1)} .custody-rule-maxAmount`, '0.5.1');
      await page.click('#custody-policy-simulate');
      await page.waitForSelector('#custody-policy-sim-message.custody-policy-error');
      assert.match((await page.textContent('#custody-policy-sim-message')) ?? '', /rules\[0\]\.maxAmount/);
      assert.equal(await page.locator(`${row(1)}.custody-policy-refused`).count(), 1, 'row 1 is marked');
      await page.fill(`${row(1)} .custody-rule-maxAmount`, '0.5');

      // Try an action: 0.7 BTC is decided by rule 2.
      await page.selectOption('#custody-policy-try-type', 'ApproveTransfer');
      await page.fill('#custody-policy-try-asset', 'BTC-TESTNET');
      await page.fill('#custody-policy-try-amount', '0.7');
      await page.fill('#custody-policy-try-destination', 'demo-counterparty-btc-testnet');
      await page.click('#custody-policy-try');
      await page.waitForSelector('#custody-policy-try-result .custody-policy-decision, #custody-policy-try-message.custody-policy-error');
      assert.equal(await page.locator('#custody-policy-try-message.custody-policy-error').count(), 0, (await page.textContent('#custody-policy-try-message')) ?? '');
      assert.equal(await page.textContent('#custody-policy-try-result .custody-policy-decision'), 'hold by rule 2 "large BTC"');
      const reasons = await page.$$eval('#custody-policy-try-result .custody-policy-reasons li', (lis) => lis.map((li) => li.textContent ?? ''));
      assert.ok(reasons.some((r) => /rule 1 "small BTC"/.test(r)), `the reasons say why rule 1 did not match: ${JSON.stringify(reasons)}`);

      // Export, rename a rule, import the exported file: the rules are as exported.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#custody-policy-export')]);
      assert.equal(download.suggestedFilename(), 'treasury.policy.json');
      const exported = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
      assert.equal(exported.defaultDecision, 'hold');
      assert.deepEqual(exported.rules.map((r: any) => [r.name, r.velocityCount, r.maxAmount]), [['small BTC', String(STRICTER), '0.5'], ['large BTC', '', '']]);
      await page.fill(`${row(1)} .custody-rule-name`, 'renamed');
      assert.deepEqual(await dialogRules(page), ['renamed', 'large BTC']);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-policy-file-'));
      try {
        const good = path.join(dir, 'treasury.policy.json');
        fs.writeFileSync(good, JSON.stringify(exported));
        await page.setInputFiles('#custody-policy-import-file', good);
        await page.waitForFunction(() => /imported/.test(document.querySelector('#custody-policy-file-message')?.textContent ?? ''));
        assert.deepEqual(await dialogRules(page), ['small BTC', 'large BTC']);
        const again = await page.evaluate(() => (window as any).$('#node-input-rule-container .custody-rule-velocityCount').map(function (this: HTMLInputElement) { return this.value; }).get());
        assert.deepEqual(again, [String(STRICTER), '']);

        // A file that breaks the schema is refused, the rules stay.
        const bad = path.join(dir, 'bad.policy.json');
        fs.writeFileSync(bad, JSON.stringify({ rules: [{ name: 'x', decision: 'allow' }] }));
        await page.setInputFiles('#custody-policy-import-file', bad);
        await page.waitForFunction(() => /refused/.test(document.querySelector('#custody-policy-file-message')?.textContent ?? ''));
        assert.match((await page.textContent('#custody-policy-file-message')) ?? '', /rules\[0\]\.decision/);
        assert.deepEqual(await dialogRules(page), ['small BTC', 'large BTC']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }

      // Cancel: nothing was saved; the deployed node keeps its rules.
      await page.click('#node-dialog-cancel');
      await page.waitForSelector('#node-input-rule-container', { state: 'detached' });
      assert.deepEqual(await page.evaluate((id) => (window as any).RED.nodes.node(id).rules.map((r: any) => r.velocityCount ?? ''), APPROVER), ['', '']);
      const stored = (await deployedNode(red().base, APPROVER)) as { rules: unknown[] };
      assert.deepEqual(stored.rules, [SMALL, LARGE]);

      // An approver not deployed yet: Simulate says so.
      await importAndEdit(page, { id: NEW_APPROVER, type: 'custody-approver', connection: CONFIG, x: 300, y: 260, z: TAB, wires: [[], [], []] });
      await page.waitForSelector('#custody-approver-policy .custody-policy-toggle', { state: 'visible' });
      await openSection(page);
      await page.click('#custody-policy-simulate');
      await page.waitForSelector('#custody-policy-sim-message.custody-policy-error');
      assert.match((await page.textContent('#custody-policy-sim-message')) ?? '', /not deployed yet/);
      await page.click('#node-dialog-cancel');
      assert.deepEqual(errors, []);
    });
  });
});
