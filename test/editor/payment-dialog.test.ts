/**
 * The new dialog fields in a real editor (a `node-red` process with the pack, headless Chromium;
 * docs/nodes.md "The payment fields", "The core client feed"): a transfer node saved before the
 * payment fields opens with Asset, Amount (the Amounts select right after it), Reference, Benefit
 * of and Account no as TypedInputs, and an amount is checked in the unit Amounts says; the core
 * client feed (palette label "core client feed") shows its Core client id as a TypedInput of str,
 * env, global and flow whose str type completes the simulator's core clients through the deployed
 * connection's look-up.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/payment-dialog.test.js`.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openNodeDialog, simulatorFlows, useRedProcess, withEditor } from '../helpers/editor-kit';

const TAB = 'e7d0000000000f31';
const CONFIG = 'e7d0000000000c31';
const TRANSFER = 'e7d000000000a031';
const FEED = 'e7d000000000a032';

const FLOWS = simulatorFlows(TAB, 'payment dialog', CONFIG, [
  { id: TRANSFER, type: 'custody-transfer', z: TAB, connection: CONFIG, operation: 'create', company_id: 'demo-company', amountFormat: 'baseUnits', expiresAfter: '3600', x: 320, y: 80, wires: [[]] },
  { id: FEED, type: 'custody-coreclient-feed', z: TAB, connection: CONFIG, clientId: 'demo-approver', details: true, x: 320, y: 160, wires: [[]] },
]);

/** The TypedInput types the menu of the row `row` offers; the menu is closed by choosing `current`, the field's type. */
async function offeredTypes(page: Page, row: string, current = 'str'): Promise<Array<string | null>> {
  await page.click(`${row} .red-ui-typedInput-type-select`);
  const offered = await page.$$eval('.red-ui-typedInput-options:visible a', (as) => as.map((a) => a.getAttribute('value')));
  // Close the menu by choosing the type the field has (nothing changes).
  await page.click(`.red-ui-typedInput-options:visible a[value="${current}"]`);
  await page.waitForTimeout(150);
  return offered;
}

describe('the payment fields and the core client id look-up in the editor', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-editor-payment-', flows: JSON.stringify(FLOWS) });

  it('a transfer saved before the payment fields opens with them as TypedInputs, Amounts beside the amount, checked in its unit', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { types: ['custody-transfer'], nodes: [TRANSFER] }, async ({ page, errors }) => {
      await openNodeDialog(page, TRANSFER, { selector: '.custody-row[data-property="sendAmount"] .red-ui-typedInput-container', settleMs: 300 });
      const rows = await page.$$eval('.custody-row', (rs) => rs.filter((r) => (r as HTMLElement).offsetParent !== null).map((r) => r.getAttribute('data-property')));
      assert.deepEqual(rows, ['company_id', 'wallet_id', 'counterparty_wallet_address', 'sendAsset', 'sendAmount', 'amountFormat', 'reference', 'benefit_of', 'account_no', 'partnerTxId', 'expiresAfter']);
      const labels = await page.$$eval('.custody-row:visible label, .custody-row label', (ls) => ls.map((l) => (l.textContent ?? '').trim()));
      for (const label of ['Asset', 'Amount', 'Amounts', 'Reference', 'Benefit of', 'Account no']) assert.ok(labels.includes(label), `${label} in ${labels.join(' | ')}`);
      const amounts = await page.$$eval('#node-input-amountFormat option', (os) => os.map((o) => o.textContent ?? ''));
      assert.ok(/base units/.test(amounts[0]) && /decimal/.test(amounts[1]), amounts.join(' | '));
      assert.deepEqual(await offeredTypes(page, '.custody-row[data-property="sendAmount"]'), ['str', 'num', 'msg', 'flow', 'global', 'env', 'jsonata']);
      assert.deepEqual(await offeredTypes(page, '.custody-row[data-property="reference"]'), ['str', 'msg', 'flow', 'global', 'env', 'jsonata']);

      if (process.env.CF_SCREENSHOT) await page.locator('.red-ui-tray').screenshot({ path: process.env.CF_SCREENSHOT });
      // "0.015" is refused as base units and accepted as decimal; the asset and the texts are kept.
      const check = (format: string) =>
        page.evaluate(
          ([f, id]) => {
            const $ = (window as any).$;
            $('#node-input-amountFormat').val(f).trigger('change');
            $('#node-input-sendAmount').typedInput('value', '0.015');
            const def = (window as any).RED.nodes.getType('custody-transfer').defaults.sendAmount;
            return def.validate.call((window as any).RED.nodes.node(id), '0.015', {});
          },
          [format, TRANSFER],
        );
      assert.match(String(await check('baseUnits')), /Amount: a whole number of base units/);
      assert.equal(await check('decimal'), true);
      await page.evaluate(() => {
        const $ = (window as any).$;
        $('#node-input-sendAsset').typedInput('value', 'BTC-TESTNET');
        $('#node-input-reference').typedInput('type', 'msg');
        $('#node-input-reference').typedInput('value', 'payload.invoice');
        $('#node-input-benefit_of').typedInput('value', 'Demo customer');
      });
      await page.click('#node-dialog-ok');
      await page.waitForSelector('#node-input-sendAmount', { state: 'detached' });
      const saved = await page.evaluate((id) => {
        const n = (window as any).RED.nodes.node(id);
        return { sendAsset: n.sendAsset, sendAssetType: n.sendAssetType, sendAmount: n.sendAmount, sendAmountType: n.sendAmountType, amountFormat: n.amountFormat, reference: n.reference, referenceType: n.referenceType, benefit_of: n.benefit_of, account_no: n.account_no, valid: n.valid };
      }, TRANSFER);
      assert.deepEqual(saved, { sendAsset: 'BTC-TESTNET', sendAssetType: 'str', sendAmount: '0.015', sendAmountType: 'str', amountFormat: 'decimal', reference: 'payload.invoice', referenceType: 'msg', benefit_of: 'Demo customer', account_no: '', valid: true });
      assert.deepEqual(errors, []);
    });
  });

  it('the core client feed: palette label, a TypedInput of str, env, global and flow, completing core client ids from the connection', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { types: ['custody-coreclient-feed'], nodes: [FEED], globals: ['CustodyLookup'] }, async ({ page, errors }) => {
      const label = await page.evaluate(() => (window as any).RED.nodes.getType('custody-coreclient-feed').paletteLabel);
      assert.equal(typeof label === 'function' ? await page.evaluate(() => (window as any).RED.nodes.getType('custody-coreclient-feed').paletteLabel()) : label, 'core client feed');
      const palette = await page.$$eval('.red-ui-palette-node[data-palette-type="custody-coreclient-feed"] .red-ui-palette-label', (ls) => ls.map((l) => (l.textContent ?? '').replace(/\s+/g, ' ').trim()));
      assert.deepEqual(palette, ['core client feed'], 'the palette shows "core client feed"');
      const row = '.form-row:has(#node-input-clientId)';
      await openNodeDialog(page, FEED, { selector: `${row} .red-ui-typedInput-container`, settleMs: 300 });
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-clientId').typedInput('type')), 'str', 'a node saved without clientIdType opens as str');
      assert.deepEqual(await offeredTypes(page, row), ['str', 'env', 'global', 'flow']);
      await page.waitForFunction(() => {
        const v = (window as any).$('#node-input-connection').val();
        return typeof v === 'string' && v !== '' && v !== '_ADD_';
      }, undefined, { timeout: 15000 });
      const field = page.locator(`${row} input.red-ui-typedInput-input`);
      await field.fill('');
      await field.click();
      await field.pressSequentially('demo-', { delay: 60 });
      let shownMenu = false;
      for (let attempt = 0; attempt < 4 && !shownMenu; attempt++) {
        if (attempt > 0) await field.press('End');
        shownMenu = await page.waitForSelector('.red-ui-autoComplete-container a', { timeout: 5000 }).then(() => true, () => false);
      }
      assert.ok(shownMenu, `a suggestion list\n${red().log.slice(-1500)}`);
      const shown = await page.$$eval('.red-ui-autoComplete-container a', (as) => as.map((a) => a.textContent ?? ''));
      assert.ok(shown.some((t) => t.includes('demo-approver')), `suggestions: ${shown.join(' | ')}`);
      await page.locator('.red-ui-autoComplete-container a', { hasText: 'demo-approver' }).first().click();
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-clientId').typedInput('value')), 'demo-approver');
      await page.click('#node-dialog-cancel');
      assert.deepEqual(errors, []);
    });
  });
});
