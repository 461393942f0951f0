/**
 * A generated edit dialog in a real editor (docs/nodes.md "Fields: TypedInputs, look-ups, the
 * operation from the msg"): a `node-red` process with the pack and headless Chromium. The fund
 * node's dialog (written at build by scripts/generate-editors.ts) shows its field TypedInputs and
 * the Operation option "from msg.operation"; the Company id field is switched to the env type and
 * given a variable's name, the node is deployed, an inject is clicked, and the read reaches the
 * built-in simulator with the variable's value. Then the same field, typed into, completes the
 * simulator's company ids through the deployed connection's look-up (resources/custody-lookup.js).
 * Also: the editor lists each of the pack's icons once.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/editor-typedinput.test.js`.
 */
import assert from 'node:assert/strict';
import type WebSocket from 'ws';
import { sleep, watchDebug, type DebugMessage } from '../helpers/red-process';
import { openNodeDialog, simulatorFlows, useRedProcess, withEditor, type EditorPage } from '../helpers/editor-kit';

const TAB = 'e7d0000000000f01';
const CONFIG = 'e7d0000000000c01';
const INJECT = 'e7d0000000000101';
const FUND = 'e7d000000000a001';
const DEBUG = 'e7d0000000000d01';

/** The environment variable the dialog's Company id reads. */
const VARIABLE = 'CF_EDITOR_TYPEDINPUT_COMPANY';

/** One tab: an inject wired to a fund node (getFund, fund_id fixed, company_id empty) wired to a debug node. */
const FLOWS = simulatorFlows(TAB, 'typed input editor', CONFIG, [
  { id: INJECT, type: 'inject', z: TAB, name: 'read', props: [{ p: 'payload' }], payload: '{}', payloadType: 'json', repeat: '', once: false, x: 120, y: 80, wires: [[FUND]] },
  { id: FUND, type: 'custody-fund', z: TAB, connection: CONFIG, operation: 'getFund', company_id: '', fund_id: 'demo-fund', x: 320, y: 80, wires: [[DEBUG]] },
  { id: DEBUG, type: 'debug', z: TAB, name: 'fund', active: true, tosidebar: true, complete: 'true', x: 520, y: 80, wires: [] },
]);

/** The Company id row of the fund dialog. */
const COMPANY_ROW = '.custody-row[data-property="company_id"]';

/** Open the editor and the fund node's dialog, and once its Company id TypedInput shows, run `use` with the page (see {@link withEditor}). */
function withFundDialog(base: string, use: (editor: EditorPage) => Promise<void>): Promise<void> {
  return withEditor(base, { width: 1400, height: 1000 }, { types: ['custody-fund'], nodes: [FUND] }, async (editor) => {
    await openNodeDialog(editor.page, FUND, { selector: `${COMPANY_ROW} .red-ui-typedInput-container`, settleMs: 0 });
    await use(editor);
  });
}

describe('a generated dialog in the editor: a field set to the env type reaches the simulator', function () {
  this.timeout(120000);
  let ws: WebSocket | undefined;
  let debug: DebugMessage[] = [];

  // Node-RED is started with the variable set; the socket is closed before it stops.
  before(() => {
    process.env[VARIABLE] = 'demo-company';
  });
  after(() => {
    ws?.close();
    delete process.env[VARIABLE];
  });
  const red = useRedProcess({ prefix: 'cf-editor-typedinput-', flows: JSON.stringify(FLOWS) });
  before(async () => {
    ({ debug, ws } = await watchDebug(red().base));
  });

  it('lists each icon of the pack once (one icons folder)', async () => {
    const sets = (await (await fetch(`${red().base}/icons`, { headers: { accept: 'application/json' } })).json()) as Record<string, string[]>;
    const icons = sets['@custodyflow/node-red-custody'];
    assert.ok(icons && icons.includes('custody-transfer.svg'), JSON.stringify(sets));
    assert.equal(new Set(icons).size, icons.length, `each icon once: ${icons.join(', ')}`);
  });

  it('sets Company id to env in the fund dialog, deploys, and the read reaches the simulator with the value', async () => {
    await withFundDialog(red().base, async ({ page, errors }) => {
      const row = COMPANY_ROW;
      await page.waitForFunction(() => (document.querySelector('#custody-operation-tip')?.textContent ?? '').includes('Calls'));

      // A node saved without company_idType opens as a str field; the menu offers the field's types.
      const before = await page.evaluate(() => ({ type: (window as any).$('#node-input-company_id').typedInput('type'), fundRow: (window as any).$('.custody-row[data-property="fund_id"]').is(':visible'), directionRow: (window as any).$('.custody-row[data-property="direction"]').is(':visible') }));
      assert.deepEqual(before, { type: 'str', fundRow: true, directionRow: false });
      const options = await page.$$eval('#node-input-operation option', (os) => os.map((o) => (o as HTMLOptionElement).value));
      assert.ok(options.includes('msg.operation') && options.includes('getFund'), options.join(', '));
      await page.click(`${row} .red-ui-typedInput-type-select`);
      const offered = await page.$$eval('.red-ui-typedInput-options:visible a', (as) => as.map((a) => a.getAttribute('value')));
      assert.deepEqual(offered, ['str', 'msg', 'flow', 'global', 'env', 'jsonata']);
      await page.click('.red-ui-typedInput-options:visible a[value="env"]');
      await page.waitForTimeout(200);
      await page.locator(`${row} input.red-ui-typedInput-input`).fill(VARIABLE);
      await page.locator(`${row} input.red-ui-typedInput-input`).dispatchEvent('change');
      await page.click('#node-dialog-ok');
      await page.waitForSelector('#node-input-company_id', { state: 'detached' });
      const saved = await page.evaluate((id) => {
        const n = (window as any).RED.nodes.node(id);
        return { company_id: n.company_id, company_idType: n.company_idType, fund_id: n.fund_id, fund_idType: n.fund_idType, valid: n.valid };
      }, FUND);
      assert.deepEqual(saved, { company_id: VARIABLE, company_idType: 'env', fund_id: 'demo-fund', fund_idType: 'str', valid: true });

      // Deploy from the editor and wait until the runtime has the typed node.
      await page.click('#red-ui-header-button-deploy');
      const deadline = Date.now() + 20000;
      let stored: Record<string, unknown> | undefined;
      while (Date.now() < deadline) {
        const flows = (await (await fetch(`${red().base}/flows`, { headers: { accept: 'application/json' } })).json()) as Array<Record<string, unknown>>;
        stored = flows.find((n) => n.id === FUND);
        if (stored?.company_idType === 'env') break;
        await sleep(250);
      }
      assert.equal(stored?.company_idType, 'env', `deployed\n${red().log.slice(-2000)}`);
      await sleep(500);

      // Click the inject: the fund node reads company_id from the environment and the simulator answers.
      const from = debug.length;
      assert.equal((await fetch(`${red().base}/inject/${INJECT}`, { method: 'POST' })).status, 200);
      const until = Date.now() + 20000;
      let seen: DebugMessage | undefined;
      while (!seen && Date.now() < until) {
        seen = debug.slice(from).find((d) => d.id === DEBUG);
        if (!seen) await sleep(200);
      }
      assert.ok(seen, `a debug message\n${red().log.slice(-2000)}`);
      const msg = JSON.parse(seen.msg ?? '{}');
      assert.equal(msg.statusCode, 200, seen.msg);
      assert.deepEqual(msg.custody, { type: 'custody-fund', operation: 'getFund', company_id: 'demo-company' });
      assert.deepEqual(errors, []);
    });
  });

  it('completes a company id in the generated dialog from the deployed connection (the simulator\'s companies)', async () => {
    await withFundDialog(red().base, async ({ page, errors }) => {
      const row = COMPANY_ROW;
      // Back to a fixed value (the previous test saved the env type), then type the first letters.
      // (The type switch keeps the env variable's name in the field: empty it through the widget.)
      await page.evaluate(() => {
        const input = (window as any).$('#node-input-company_id');
        input.typedInput('type', 'str');
        input.typedInput('value', '');
      });
      // The dialog's connection select is filled before typing (an empty one suggests nothing).
      await page.waitForFunction(() => {
        const v = (window as any).$('#node-input-connection').val();
        return typeof v === 'string' && v !== '' && v !== '_ADD_';
      }, undefined, { timeout: 15000 });
      const lookups: string[] = [];
      page.on('response', (r) => {
        if (r.url().includes('custodyflow/lookup/')) lookups.push(`${r.status()} ${r.url()}`);
      });
      const field = page.locator(`${row} input.red-ui-typedInput-input`);
      await field.fill('');
      await field.click();
      await field.press('End');
      await field.pressSequentially('demo-c', { delay: 60 });
      // A keystroke that lands while the dialog is still sliding in may not reach the widget;
      // the End key asks again, as a user would by typing on.
      let shownMenu = false;
      for (let attempt = 0; attempt < 4 && !shownMenu; attempt++) {
        if (attempt > 0) await field.press('End');
        shownMenu = await page
          .waitForSelector('.red-ui-autoComplete-container a', { timeout: 5000 })
          .then(() => true, () => false);
      }
      assert.ok(shownMenu, `a suggestion list; lookups answered: ${lookups.join(' | ') || 'none'}\n${red().log.slice(-1500)}`);
      const shown = await page.$$eval('.red-ui-autoComplete-container a', (as) => as.map((a) => a.textContent ?? ''));
      assert.ok(shown.some((t) => t.includes('demo-company')), `suggestions: ${shown.join(' | ')}`);
      await page.locator('.red-ui-autoComplete-container a', { hasText: 'demo-company' }).first().click();
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-company_id').typedInput('value')), 'demo-company', 'choosing puts the id in the field');
      await page.click('#node-dialog-cancel');
      assert.deepEqual(errors, []);
    });
  });
});
