/**
 * The `partner_txID` TypedInput of the money-moving nodes in a real editor: a `node-red` process
 * with the pack and headless Chromium. The transfer node's dialog shows the row for `create`
 * only, with the TypedInput (types template, msg, jsonata, str) and its placeholder; the
 * template type is picked from the TypedInput's menu, a template typed (a bad one is marked
 * and makes the node invalid), and the saved and deployed node holds `partnerTxId` and
 * `partnerTxIdType`.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/business-key-editor.test.js`.
 * Set BUSINESS_KEY_SCREENSHOT to a path to keep a screenshot of the open dialog with the template.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { deployedNode, importAndEdit, simulatorFlows, useRedProcess, withEditor } from '../helpers/editor-kit';

const TAB = 'b4e0000000000f01';
const CONFIG = 'b4e0000000000c01';
const TRANSFER = 'b4e000000000a001';

/** The text field of the partner_txID TypedInput (the original input is hidden behind it). */
const FIELD = '.custody-row[data-property="partnerTxId"] input.red-ui-typedInput-input';

/** The initial flow: one tab and a config node on the built-in simulator. */
const FLOWS = simulatorFlows(TAB, 'business key editor', CONFIG);

/** The open dialog's partner_txID TypedInput: its type, value, whether it is visible and marked invalid. */
function keyInput(page: Page): Promise<{ type: string; value: string; visible: boolean; invalid: boolean; placeholder: string | null }> {
  return page.evaluate(() => {
    const input = (window as any).$('#node-input-partnerTxId');
    const row = document.querySelector('.custody-row[data-property="partnerTxId"]') as HTMLElement | null;
    return {
      type: input.typedInput('type'),
      value: input.typedInput('value'),
      visible: !!row && row.offsetParent !== null,
      invalid: input.hasClass('input-error'),
      placeholder: row?.querySelector('input.red-ui-typedInput-input')?.getAttribute('placeholder') ?? null,
    };
  });
}

/** Pick `type` from the open dialog's partner_txID TypedInput menu, as a user does. */
async function pickType(page: Page, type: string): Promise<void> {
  await page.click('.custody-row[data-property="partnerTxId"] .red-ui-typedInput-type-select');
  await page.click(`.red-ui-typedInput-options:visible a[value="${type}"]`);
  await page.waitForTimeout(200);
}

describe('partner_txID TypedInput in the editor: the transfer dialog saves partnerTxId and partnerTxIdType', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-business-key-editor-', flows: JSON.stringify(FLOWS) });

  it('shows the row for create, picks the template type, types a template, and the deployed node holds it', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { types: ['custody-transfer'], nodes: [CONFIG] }, async ({ page, errors }) => {
      // The five money-moving nodes have the two properties, empty (msg.payload.partner_txID) and template by default; the help explains the key.
      const defs = await page.evaluate(() => {
        const RED = (window as any).RED;
        return ['custody-transfer', 'custody-withdraw', 'custody-swap-make', 'custody-swap-take', 'custody-sweep'].map((type) => {
          const t = RED.nodes.getType(type);
          return { type, value: t.defaults.partnerTxId?.value, kind: t.defaults.partnerTxIdType?.value, help: RED.nodes.getNodeHelp(type) || '' };
        });
      });
      for (const d of defs) {
        assert.deepEqual([d.value, d.kind], ['', 'template'], `${d.type}: defaults`);
        for (const phrase of ['the same key is the same payment', 'never from the msg id', 'inv-{{payload.invoice}}', 'msg.payload.partner_txID', 'a fixed key makes every msg the same payment']) {
          assert.ok(d.help.replace(/\s+/g, ' ').includes(phrase), `${d.type}: the help says "${phrase}"`);
        }
      }

      // The node's validate: empty is fine; a bad template, msg property or expression is refused, naming partner_txID.
      const verdicts = await page.evaluate(() => {
        const validate = (window as any).RED.nodes.getType('custody-transfer').defaults.partnerTxId.validate;
        const v = (value: string, type: string) => validate.call({ partnerTxIdType: type }, value, {});
        return {
          empty: v('', 'template'),
          template: v('inv-{{payload.invoice}}', 'template'),
          unclosed: v('inv-{{payload.invoice', 'template'),
          single: v('inv-{payload.invoice}', 'template'),
          fixed: v('INV-1001', 'template'),
          msg: v('payload.invoice', 'msg'),
          badMsg: v('payload..invoice', 'msg'),
          jsonata: v('"inv-" & payload.invoice', 'jsonata'),
          badJsonata: v('"inv-" & (', 'jsonata'),
          str: v('INV-1001', 'str'),
        };
      });
      assert.deepEqual([verdicts.empty, verdicts.template, verdicts.msg, verdicts.jsonata, verdicts.str], [true, true, true, true, true]);
      for (const k of ['unclosed', 'single', 'fixed', 'badMsg', 'badJsonata'] as const) {
        assert.equal(typeof verdicts[k], 'string', `${k} is refused`);
        assert.match(verdicts[k] as string, /^partner_txID: /, `${k}: ${verdicts[k]}`);
      }
      assert.match(verdicts.fixed as string, /every msg the same payment/);

      // Import a transfer node (as a drop from the palette does) and open its dialog.
      await importAndEdit(page, { id: TRANSFER, type: 'custody-transfer', connection: CONFIG, operation: 'create', x: 300, y: 120, z: TAB, wires: [[]] });
      await page.waitForSelector('.custody-row[data-property="partnerTxId"] .red-ui-typedInput-container', { state: 'visible' });
      await page.waitForFunction(() => (document.querySelector('#custody-operation-tip')?.textContent ?? '').includes('Calls'));
      let key = await keyInput(page);
      assert.deepEqual(key, { type: 'template', value: '', visible: true, invalid: false, placeholder: 'msg.payload.partner_txID' });
      assert.match((await page.textContent('.custody-partner-txid-tip')) ?? '', /same key is the same payment/);
      assert.match((await page.textContent('#custody-operation-tip')) ?? '', /partner_txID is required/);

      // The row is for the money-moving operation only.
      await page.selectOption('#node-input-operation', 'get');
      assert.equal((await keyInput(page)).visible, false, 'no partner_txID row for get');
      await page.selectOption('#node-input-operation', 'create');
      assert.equal((await keyInput(page)).visible, true);

      // The menu offers the four types; go through msg to template, as a user changing their mind.
      await page.click('.custody-row[data-property="partnerTxId"] .red-ui-typedInput-type-select');
      const offered = await page.$$eval('.red-ui-typedInput-options:visible a', (as) => as.map((a) => a.getAttribute('value')));
      assert.deepEqual(offered, ['template', 'msg', 'jsonata', 'str']);
      await page.click('.red-ui-typedInput-options:visible a[value="msg"]');
      await page.waitForTimeout(200);
      assert.equal((await keyInput(page)).type, 'msg');
      await pickType(page, 'template');
      assert.equal((await keyInput(page)).type, 'template');

      // A bad template is marked; then the template the user meant.
      await page.locator(FIELD).fill('inv-{{payload.invoice');
      await page.locator(FIELD).dispatchEvent('change');
      await page.waitForTimeout(200);
      assert.equal((await keyInput(page)).invalid, true, 'an unclosed placeholder is marked');
      await page.locator(FIELD).fill('inv-{{payload.invoice}}');
      await page.locator(FIELD).dispatchEvent('change');
      await page.waitForTimeout(200);
      key = await keyInput(page);
      assert.deepEqual([key.type, key.value, key.invalid], ['template', 'inv-{{payload.invoice}}', false]);
      if (process.env.BUSINESS_KEY_SCREENSHOT) await page.screenshot({ path: process.env.BUSINESS_KEY_SCREENSHOT });
      await page.click('#node-dialog-ok');
      await page.waitForSelector('#node-input-partnerTxId', { state: 'detached' });
      const saved = await page.evaluate((id) => {
        const n = (window as any).RED.nodes.node(id);
        return { partnerTxId: n.partnerTxId, partnerTxIdType: n.partnerTxIdType, valid: n.valid };
      }, TRANSFER);
      assert.deepEqual(saved, { partnerTxId: 'inv-{{payload.invoice}}', partnerTxIdType: 'template', valid: true });

      // Deploy from the editor and read the flow back.
      await page.click('#red-ui-header-button-deploy');
      const stored = await deployedNode(red().base, TRANSFER);
      assert.ok(stored, `the transfer node was deployed\n${red().log.slice(-2000)}`);
      assert.deepEqual([stored.type, stored.operation, stored.partnerTxId, stored.partnerTxIdType], ['custody-transfer', 'create', 'inv-{{payload.invoice}}', 'template']);
      assert.deepEqual(errors, []);
    });
  });
});
