/**
 * The edit dialog of `custody-approver` in a real editor: a `node-red` process with the pack
 * and headless Chromium. Two rules are typed into the editableList, reordered by dragging,
 * a bad regular expression flags the node invalid until fixed, and the deployed flow (GET
 * /flows) holds exactly the typed `rules`, in the new order.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/approver-editor.test.js`
 * (with the config file, mocha adds the spec of .mocharc.json, i.e. every test file).
 * Set APPROVER_SCREENSHOT to a path to keep a screenshot of the open dialog with two rules.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { sleep } from '../helpers/red-process';
import { deployedNode, fillRow, importAndEdit, simulatorFlows, useRedProcess, withEditor } from '../helpers/editor-kit';

const TAB = 'a9900000000000f1';
const CONFIG = 'a9900000000000c1';
const APPROVER = 'a990000000000a01';

/** The initial flow: one tab and a config node on the built-in simulator. */
const FLOWS = simulatorFlows(TAB, 'approver editor', CONFIG);

/** A rule as the dialog stores it. */
interface Rule {
  name: string;
  decision: string;
  actionTypes: string[];
  assets: string[];
  minAmount: string;
  maxAmount: string;
  destinations: string[];
  destinationWhitelisted: boolean;
  sources: string[];
  velocityAmount: string;
  velocityCount: string;
  velocityWindowHours: string;
  days: string[];
  from: string;
  to: string;
  timeZone: string;
  referencePattern: string;
  benefitOfPattern: string;
}

const EMPTY_RULE: Rule = {
  name: '', decision: 'hold', actionTypes: [], assets: [], minAmount: '', maxAmount: '',
  destinations: [], destinationWhitelisted: false, sources: [],
  velocityAmount: '', velocityCount: '', velocityWindowHours: '24',
  days: [], from: '', to: '', timeZone: 'UTC', referencePattern: '', benefitOfPattern: '',
};

/** The `n`th rule row (1-based) of the open dialog. */
const row = (n: number) => `#node-input-rule-container > li:nth-child(${n}) .custody-rule`;

/** The names of the rule rows, in their order on screen. */
function rowNames(page: Page): Promise<string[]> {
  return page.$$eval('#node-input-rule-container .custody-rule-name', (els) => els.map((e) => (e as HTMLInputElement).value));
}

describe('custody-approver editor: rules typed in the dialog are the rules deployed', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-approver-editor-', flows: JSON.stringify(FLOWS) });

  it('adds, fills, drags and validates two rules, deploys them, and GET /flows returns them', async () => {
    await withEditor(red().base, { width: 1500, height: 1250 }, { types: ['custody-approver'], nodes: [CONFIG] }, async ({ page, errors }) => {
      // The node's definition: palette, ports, defaults, help.
      const def = await page.evaluate(() => {
        const t = (window as any).RED.nodes.getType('custody-approver');
        const d: Record<string, unknown> = {};
        for (const k of Object.keys(t.defaults)) d[k] = t.defaults[k].value;
        return {
          category: t.category, inputs: t.inputs, outputs: t.outputs, icon: t.icon, paletteLabel: t.paletteLabel,
          inputLabels: t.inputLabels, outputLabels: t.outputLabels, defaults: d,
          label: t.label.call({ name: '' }), named: t.label.call({ name: 'treasury' }),
          help: (window as any).RED.nodes.getNodeHelp('custody-approver') || '',
        };
      });
      assert.equal(def.category, 'custody');
      assert.equal(def.inputs, 1);
      assert.equal(def.outputs, 3);
      assert.equal(def.icon, 'custody-approver.svg');
      assert.equal(def.paletteLabel, 'approver');
      assert.equal(def.inputLabels, 'action (client_id, action_id)');
      assert.deepEqual(def.outputLabels, ['approved', 'rejected', 'held']);
      assert.equal(def.label, 'approver');
      assert.equal(def.named, 'treasury');
      assert.deepEqual(def.defaults, {
        name: '', connection: '', schemaVersion: 1, clientId: '', clientIdType: 'str', rules: [], defaultDecision: 'hold', dryRun: false, auditFile: '', whitelistCacheSeconds: '60',
      });
      for (const phrase of ['first match wins', 'GET /coreclient/{client_id}/action/{action_id}', 'redelivered', 'fsync', 'custodyflow-audit verify', 'SHA-256', 'Whitelist cache']) {
        assert.ok(def.help.includes(phrase), `the help text mentions ${phrase}`);
      }

      // The node's validate refuses each kind of bad rule, and names the rule.
      const verdicts = await page.evaluate(() => {
        const validate = (window as any).RED.nodes.getType('custody-approver').defaults.rules.validate;
        const ok = {
          name: 'r', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], minAmount: '0.1', maxAmount: '0.5',
          destinations: ['alpha bravo charlie'], destinationWhitelisted: true, sources: [], velocityAmount: '2', velocityCount: '3',
          velocityWindowHours: '24', days: ['mon'], from: '22:00', to: '06:00', timeZone: 'Europe/Zurich', referencePattern: '^INV-\\d+$', benefitOfPattern: '',
        };
        const bad: Record<string, Record<string, unknown>> = {
          emptyName: { name: '  ' }, decision: { decision: 'allow' }, decimal: { maxAmount: '0.5.1' }, comma: { minAmount: '0,5' },
          minOverMax: { minAmount: '0.6' }, count: { velocityCount: '1.5' }, regex: { referencePattern: '([a-z' }, regex2: { benefitOfPattern: '*' },
          zone: { timeZone: 'Mars/Olympus' }, emptyZone: { timeZone: '' }, hhmm: { from: '24:00' }, hhmm2: { to: '9:00' }, oneEnd: { to: '' },
          type: { actionTypes: ['ApproveEverything'] }, day: { days: ['monday'] }, window: { velocityWindowHours: '0' },
        };
        const out: Record<string, unknown> = { ok: validate([ok, { ...ok, name: 'second' }]), empty: validate([]) };
        for (const k of Object.keys(bad)) out[k] = validate([ok, { ...ok, ...bad[k] }]);
        return out;
      });
      assert.equal(verdicts.ok, true);
      assert.equal(verdicts.empty, true);
      for (const [k, v] of Object.entries(verdicts)) {
        if (k === 'ok' || k === 'empty') continue;
        assert.equal(typeof v, 'string', `${k} is refused`);
        assert.match(v as string, /^Rule 2\b/, `${k}: the message names the rule: ${v}`);
      }

      // Import an approver (as a drop from the palette does) and open its dialog.
      await importAndEdit(page, { id: APPROVER, type: 'custody-approver', connection: CONFIG, x: 300, y: 120, z: TAB, wires: [[], [], []] });
      await page.waitForSelector('#node-input-rule-container', { state: 'attached' });
      await page.waitForTimeout(600);
      const addRule = page.locator('.node-input-rule-container-row .red-ui-editableList-addButton');
      await addRule.click();
      await addRule.click();
      await addRule.click();
      assert.deepEqual(await rowNames(page), ['rule 1', 'rule 2', 'rule 3']);
      // A rule that approves with no condition is allowed, with a warning; remove it.
      await page.selectOption(`${row(3)} .custody-rule-decision`, 'approve');
      assert.equal(await page.isVisible(`${row(3)} .custody-rule-warning`), true, 'an approve rule without conditions is pointed out');
      await page.click('#node-input-rule-container > li:nth-child(3) > .red-ui-editableList-item-remove');
      await page.waitForFunction(() => document.querySelectorAll('#node-input-rule-container > li').length === 2);
      assert.deepEqual(await rowNames(page), ['rule 1', 'rule 2']);
      assert.equal(await page.inputValue(`${row(1)} .custody-rule-decision`), 'hold', 'a new rule holds');
      assert.equal(await page.inputValue(`${row(1)} .custody-rule-timeZone`), 'UTC');
      assert.equal(await page.inputValue(`${row(1)} .custody-rule-velocityWindowHours`), '24');

      // Rule 1: small BTC transfers to known wallets, approved on weekdays in Zurich office hours.
      await fillRow(page, row(1), 'custody-rule-', { name: 'small BTC transfers', assets: 'BTC-TESTNET, ', maxAmount: '0.5', destinations: 'alpha bravo charlie\n\n  W-2f9c0a  \n', velocityAmount: '2', velocityCount: '10', from: '09:00', to: '17:30', timeZone: 'Europe/Zurich' });
      await page.selectOption(`${row(1)} .custody-rule-decision`, 'approve');
      await page.check(`${row(1)} .custody-rule-actionTypes input[value="ApproveTransfer"]`);
      await page.check(`${row(1)} .custody-rule-destinationWhitelisted`);
      for (const d of ['mon', 'tue', 'wed', 'thu', 'fri']) await page.check(`${row(1)} .custody-rule-days input[value="${d}"]`);

      // Rule 2: large amounts rejected at night in New York.
      await fillRow(page, row(2), 'custody-rule-', { name: 'large amounts', assets: 'BTC-TESTNET,ETH-TESTNET', minAmount: '10', sources: 'fund-7\n', velocityCount: '3', velocityWindowHours: '12', from: '22:00', to: '06:00', timeZone: 'America/New_York', benefitOfPattern: '^ACME' });
      await page.selectOption(`${row(2)} .custody-rule-decision`, 'reject');
      await page.check(`${row(2)} .custody-rule-actionTypes input[value="ApproveTransfer"]`);
      await page.check(`${row(2)} .custody-rule-actionTypes input[value="ApproveWithdraw"]`);
      assert.equal(await page.locator('#node-input-rule-container .input-error').count(), 0, 'no field is marked invalid');

      // Fold rule 2: its summary shows under its name.
      await page.click(`${row(2)} .custody-rule-toggle`);
      assert.equal(await page.textContent(`${row(2)} .custody-rule-summary`), 'ApproveTransfer | ApproveWithdraw · BTC-TESTNET, ETH-TESTNET · ≥ 10 · from 1 source · 3× / 12 h · every day 22:00–06:00 America/New_York · benefitOf /^ACME/');
      if (process.env.APPROVER_SCREENSHOT) {
        await page.evaluate(() => document.querySelector('#node-input-rule-container')!.closest('.red-ui-editableList-container')!.scrollTo(0, 0));
        await page.screenshot({ path: process.env.APPROVER_SCREENSHOT });
      }

      // Fold rule 1 too, and drag rule 2 above rule 1 by its handle.
      await page.click(`${row(1)} .custody-rule-toggle`);
      assert.match(await page.textContent(`${row(1)} .custody-rule-summary`) ?? '', /ApproveTransfer · BTC-TESTNET · ≤ 0\.5/);
      const handle2 = page.locator('#node-input-rule-container > li:nth-child(2) > .red-ui-editableList-item-handle');
      const first = await page.locator('#node-input-rule-container > li:nth-child(1)').boundingBox();
      const grip = await handle2.boundingBox();
      assert.ok(first && grip);
      await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
      await page.mouse.down();
      for (let i = 1; i <= 10; i++) {
        await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2 - ((grip.y - first.y + 10) * i) / 10);
        await sleep(30);
      }
      await page.mouse.up();
      await page.waitForTimeout(300);
      assert.deepEqual(await rowNames(page), ['large amounts', 'small BTC transfers'], 'the drag reordered the rules');
      assert.deepEqual(await page.$$eval('#node-input-rule-container .custody-rule-index', (els) => els.map((e) => e.textContent)), ['1', '2']);

      // A bad regular expression: the field is marked, and after Done the node is invalid.
      await page.click(`${row(2)} .custody-rule-toggle`);
      await page.fill(`${row(2)} .custody-rule-referencePattern`, '^INV-([0-9]+');
      assert.equal(await page.locator(`${row(2)} .custody-rule-referencePattern.input-error`).count(), 1, 'the bad regex is marked');
      assert.match((await page.textContent(`${row(2)} .custody-rule-problem`)) ?? '', /Reference pattern: not a valid JavaScript regular expression/);
      if (process.env.APPROVER_SCREENSHOT) await page.screenshot({ path: process.env.APPROVER_SCREENSHOT.replace(/\.png$/, '') + '-invalid.png' });
      await page.click('#node-dialog-ok');
      await page.waitForSelector('#node-input-rule-container', { state: 'detached' });
      const invalid = await page.evaluate((id) => {
        const n = (window as any).RED.nodes.node(id);
        return { valid: n.valid, errors: n.validationErrors, rules: n.rules.length };
      }, APPROVER);
      assert.equal(invalid.valid, false, 'the node is flagged invalid');
      assert.equal(invalid.rules, 2);
      assert.deepEqual(invalid.errors, ['Rule 2 (small BTC transfers): Reference pattern: not a valid JavaScript regular expression']);

      // Open it again: the invalid rule shows unfolded; fix it and press Done.
      await page.evaluate((id) => (window as any).RED.editor.edit((window as any).RED.nodes.node(id)), APPROVER);
      await page.waitForSelector('#node-input-rule-container .custody-rule', { state: 'visible' });
      await page.waitForTimeout(400);
      assert.deepEqual(await rowNames(page), ['large amounts', 'small BTC transfers'], 'the order was kept');
      assert.equal(await page.locator(`${row(1)}.custody-rule-open`).count(), 0, 'a valid stored rule is folded');
      assert.equal(await page.locator(`${row(2)}.custody-rule-open`).count(), 1, 'the invalid rule is unfolded');
      await page.fill(`${row(2)} .custody-rule-referencePattern`, '^INV-[0-9]+$');
      assert.equal(await page.locator('#node-input-rule-container .input-error').count(), 0);
      await page.click('#node-dialog-ok');
      await page.waitForSelector('#node-input-rule-container', { state: 'detached' });
      assert.equal(await page.evaluate((id) => (window as any).RED.nodes.node(id).valid, APPROVER), true, 'the node is valid again');

      // Deploy from the editor and read the flow back.
      await page.click('#red-ui-header-button-deploy');
      const stored = (await deployedNode(red().base, APPROVER)) as { rules?: Rule[]; [k: string]: unknown } | undefined;
      assert.ok(stored, `the approver was deployed\n${red().log.slice(-2000)}`);
      assert.deepEqual(stored.rules, [
        {
          ...EMPTY_RULE,
          name: 'large amounts', decision: 'reject', actionTypes: ['ApproveTransfer', 'ApproveWithdraw'], assets: ['BTC-TESTNET', 'ETH-TESTNET'],
          minAmount: '10', sources: ['fund-7'], velocityCount: '3', velocityWindowHours: '12', from: '22:00', to: '06:00',
          timeZone: 'America/New_York', benefitOfPattern: '^ACME',
        },
        {
          ...EMPTY_RULE,
          name: 'small BTC transfers', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '0.5',
          destinations: ['alpha bravo charlie', 'W-2f9c0a'], destinationWhitelisted: true, velocityAmount: '2', velocityCount: '10',
          days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:30', timeZone: 'Europe/Zurich', referencePattern: '^INV-[0-9]+$',
        },
      ]);
      assert.equal(stored.type, 'custody-approver');
      assert.equal(stored.connection, CONFIG);
      assert.equal(stored.clientId, '');
      assert.equal(stored.defaultDecision, 'hold');
      assert.equal(stored.dryRun, false);
      assert.equal(stored.auditFile, '');
      assert.equal(stored.whitelistCacheSeconds, '60');
      assert.deepEqual(errors, []);
    });
  });
});
