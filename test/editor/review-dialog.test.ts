/**
 * The edit dialog of `custody-review` in a real editor: a `node-red` process with the pack and
 * headless Chromium (docs/nodes.md "custody-review").
 *
 * - Its validators are Node-RED 4 ones, `(value, opt)` returning true or the message: a node
 *   loaded with bad settings (approvers 9, escalate -5, a core client id with a "/", a band
 *   with 7 approvers) is invalid in the editor, with each message.
 * - Amount bands are rows of an editableList: two rows typed, a bad one (from "abc", approvers 7)
 *   is marked red, and after Done the node has the red triangle and Deploy asks to confirm it;
 *   fixed, deployed, GET /flows holds `bands` as the JSON string of the rows.
 * - A flow of an earlier version with `bands` stored as a JSON string loads into the rows, and
 *   Done without a change to them keeps the stored string.
 * - The core client id is a TypedInput of str, env, global and flow, its type in `clientIdType`.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/review-dialog.test.js`.
 * Set REVIEW_DIALOG_SCREENSHOT to a path to keep a screenshot of the open dialog with a bad row.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { deployedNode, fillRow, openNodeDialog, simulatorFlows, useRedProcess, withEditor } from '../helpers/editor-kit';

const TAB = 'a9910000000000f1';
const CONFIG = 'a9910000000000c1';
/** A review node saved by an earlier version: bands a JSON string, no clientIdType. */
const OLD = 'a991000000000b01';
/** A review node with a bad value in each setting. */
const BAD = 'a991000000000b02';
/** The review node the test adds. */
const NEW = 'a991000000000b03';

const OLD_BANDS = '[{"asset": "BTC-TESTNET", "from": "1.5", "approvers": 3}, {"asset": "ETH-TESTNET", "from": "20", "approvers": "2"}]';

const FLOWS = simulatorFlows(TAB, 'review dialog', CONFIG, [
  { id: OLD, z: TAB, type: 'custody-review', name: 'old review', connection: CONFIG, clientId: 'demo-approver', approvers: '1', bands: OLD_BANDS, escalateMargin: '300', allowFlowVotes: false, auditFile: '', x: 200, y: 100, wires: [[], [], []] },
  { id: BAD, z: TAB, type: 'custody-review', name: 'bad review', connection: CONFIG, clientId: 'a/b', clientIdType: 'str', approvers: '9', bands: '[{"asset":"BTC","from":"10","approvers":7}]', escalateMargin: '-5', allowFlowVotes: false, auditFile: '', x: 200, y: 200, wires: [[], [], []] },
]);

/** The `n`th band row (1-based) of the open dialog. */
const row = (n: number) => `#node-input-bands-container > li:nth-child(${n}) .custody-band`;

/** The bands the open dialog's rows show, as [asset, from, approvers]. */
function rowValues(page: Page): Promise<string[][]> {
  return page.$$eval('#node-input-bands-container .custody-band', (rows) =>
    rows.map((r) => ['asset', 'from', 'approvers'].map((f) => (r.querySelector(`.custody-band-${f}`) as HTMLInputElement).value)),
  );
}

/** Open the edit dialog of node `id` and wait for its bands list. */
function openDialog(page: Page, id: string): Promise<void> {
  return openNodeDialog(page, id, { selector: '.node-input-bands-container-row .red-ui-editableList-addButton' });
}

/** Press Done and wait for the dialog to close. */
async function done(page: Page): Promise<void> {
  await page.click('#node-dialog-ok');
  await page.waitForSelector('#node-input-bands-container', { state: 'detached' });
}

/** The validity of node `id` in the editor. */
function validity(page: Page, id: string): Promise<{ valid: boolean; errors: string[]; bands: unknown }> {
  return page.evaluate((nodeId) => {
    const n = (window as any).RED.nodes.node(nodeId);
    return { valid: n.valid, errors: n.validationErrors ?? [], bands: n.bands };
  }, id);
}

/** Whether the canvas shows the red triangle (`red-ui-flow-node-error`) on node `id`. */
function canvasTriangle(page: Page, id: string): Promise<boolean> {
  return page.evaluate((nodeId) => {
    const el = document.getElementById(nodeId)?.querySelector('.red-ui-flow-node-error') as SVGElement | null;
    return !!el && getComputedStyle(el).display !== 'none' && el.getAttribute('display') !== 'none';
  }, id);
}

describe('custody-review editor: amount bands as rows, typed core client id, Node-RED 4 validators', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-review-dialog-', flows: JSON.stringify(FLOWS) });

  it('a node loaded with a bad value in each setting is invalid, with each message', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { types: ['custody-review'], nodes: [OLD, BAD] }, async ({ page, errors }) => {
      const bad = await validity(page, BAD);
      assert.equal(bad.valid, false);
      assert.deepEqual([...bad.errors].sort(), [
        'Amount bands row 1: approvers must be a whole number from 1 to 5',
        'Approvers: a whole number from 1 to 5',
        'Core client id: no / ? # % \\, control characters or surrounding spaces, and not . or ..',
        'Escalate: seconds, 0 or more',
      ]);
      assert.equal(await canvasTriangle(page, BAD), true);
      const old = await validity(page, OLD);
      assert.equal(old.valid, true, JSON.stringify(old.errors));
      assert.equal(await canvasTriangle(page, OLD), false);

      // Each validator as Node-RED 4 calls it, (value, opt).
      const verdicts = await page.evaluate((oldBands) => {
        const d = (window as any).RED.nodes.getType('custody-review').defaults;
        const node = { clientIdType: 'str' };
        const v = (p: string, value: unknown) => d[p].validate.call(node, value, {});
        return {
          lengths: ['clientId', 'approvers', 'bands', 'escalateMargin'].map((p) => d[p].validate.length),
          approvers: ['1', '5', '0', '6', '1.5', ''].map((x) => v('approvers', x)),
          margin: ['0', '300', '-1', '', 'soon'].map((x) => v('escalateMargin', x)),
          bands: [
            '', '[]', [], oldBands, [{ asset: 'BTC', from: '0.5', approvers: 2 }], 'not json', '{"asset":"BTC"}',
            '[{"asset":"BTC","from":"10","approvers":2},{"asset":"BTC","from":"abc","approvers":2}]',
            '[{"asset":" ","from":"10","approvers":2}]', '[{"asset":"BTC","from":"-1","approvers":2}]',
            '[{"asset":"BTC","from":"1","approvers":0}]', '[{"asset":"BTC","from":"1","approvers":"x"}]', '[7]',
          ].map((x) => v('bands', x)),
          clientId: ['', 'demo-approver', 'a/b', '..'].map((x) => v('clientId', x)),
          clientIdEnv: d.clientId.validate.call({ clientIdType: 'env' }, 'CORE_CLIENT', {}),
          clientIdType: d.clientId.validate.call({ clientIdType: 'msg' }, 'x', {}),
        };
      }, OLD_BANDS);
      assert.deepEqual(verdicts.lengths, [2, 2, 2, 2], 'each validator takes (value, opt)');
      assert.deepEqual(verdicts.approvers, [true, true, ...Array(4).fill('Approvers: a whole number from 1 to 5')]);
      assert.deepEqual(verdicts.margin, [true, true, 'Escalate: seconds, 0 or more', 'Escalate: seconds, 0 or more', 'Escalate: seconds, 0 or more']);
      assert.deepEqual(verdicts.bands, [
        true, true, true, true, true,
        'Amount bands: expected a list of {asset, from, approvers}',
        'Amount bands: expected a list of {asset, from, approvers}',
        'Amount bands row 2: from must be a decimal amount, e.g. 10 or 0.5',
        'Amount bands row 1: asset is required, an asset code such as BTC',
        'Amount bands row 1: from must be a decimal amount, e.g. 10 or 0.5',
        'Amount bands row 1: approvers must be a whole number from 1 to 5',
        'Amount bands row 1: approvers must be a whole number from 1 to 5',
        'Amount bands row 1: expected {asset, from, approvers}',
      ]);
      assert.deepEqual(verdicts.clientId.slice(0, 2), [true, true]);
      assert.match(String(verdicts.clientId[2]), /^Core client id: /);
      assert.match(String(verdicts.clientId[3]), /^Core client id: /);
      assert.equal(verdicts.clientIdEnv, true);
      assert.equal(verdicts.clientIdType, 'Core client id: type msg is not one of str, env, global, flow');
      assert.deepEqual(errors, []);
    });
  });

  it('an earlier flow\'s bands (a JSON string) load into the rows; Done without a change keeps the stored string; the client id offers str, env, global, flow', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { types: ['custody-review'], nodes: [OLD] }, async ({ page, errors }) => {
      await openDialog(page, OLD);
      assert.deepEqual(await rowValues(page), [['BTC-TESTNET', '1.5', '3'], ['ETH-TESTNET', '20', '2']]);
      assert.equal(await page.locator('#node-input-bands-container .input-error').count(), 0);
      assert.equal(await page.isVisible('#custody-review-bands-unreadable'), false);
      // The core client id: a TypedInput, str (no stored type) with the stored id.
      assert.equal(await page.inputValue('#node-input-clientIdType'), 'str');
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-clientId').typedInput('value')), 'demo-approver');
      await page.click('#node-input-clientId + .red-ui-typedInput-container .red-ui-typedInput-type-select');
      const offered = await page.$$eval('.red-ui-typedInput-options:visible a', (as) => as.map((a) => a.getAttribute('value')));
      assert.deepEqual(offered, ['str', 'env', 'global', 'flow']);
      await page.keyboard.press('Escape');
      await page.waitForTimeout(200);
      await done(page);
      const after = await validity(page, OLD);
      assert.equal(after.bands, OLD_BANDS, 'the stored string is kept');
      assert.equal(after.valid, true);
      const edit = await page.evaluate(() => (window as any).RED.history.peek());
      assert.equal(edit?.t, 'edit');
      assert.equal(edit.node.id, OLD);
      assert.ok(!('bands' in edit.changes), `the edit did not change bands: ${JSON.stringify(edit.changes)}`);
      assert.deepEqual(errors, []);
    });
  });

  it('two rows typed, a bad one marked red and the node invalid (triangle, Deploy asks); fixed and deployed, GET /flows holds the rows as a JSON string and the typed client id', async () => {
    await withEditor(red().base, { width: 1400, height: 1100 }, { types: ['custody-review'], nodes: [CONFIG] }, async ({ page, errors }) => {
      await page.evaluate(
        ([id, z, cfg]) => {
          const RED = (window as any).RED;
          RED.workspaces.show(z);
          RED.view.importNodes([{ id, type: 'custody-review', connection: cfg, x: 420, y: 300, z, wires: [[], [], []] }], { notify: false, applyNodeDefaults: true });
        },
        [NEW, TAB, CONFIG],
      );
      await openDialog(page, NEW);
      assert.deepEqual(await rowValues(page), [], 'a new node has no band');
      const add = page.locator('.node-input-bands-container-row .red-ui-editableList-addButton');
      await add.click();
      await add.click();
      assert.equal(await page.locator('#node-input-bands-container .custody-band').count(), 2);
      assert.deepEqual(await page.$$eval('#node-input-bands-container .custody-band-index', (els) => els.map((e) => e.textContent)), ['1', '2']);
      await fillRow(page, row(1), 'custody-band-', { asset: 'BTC-TESTNET', from: '1.5', approvers: '3' });
      await fillRow(page, row(2), 'custody-band-', { asset: 'ETH-TESTNET', from: 'abc', approvers: '7' });
      assert.equal(await page.locator(`${row(1)} .input-error`).count(), 0, 'row 1 is valid');
      assert.equal(await page.locator(`${row(2)} .custody-band-from.input-error`).count(), 1, 'from "abc" is marked');
      assert.equal(await page.locator(`${row(2)} .custody-band-approvers.input-error`).count(), 1, 'approvers 7 is marked');
      assert.equal(await page.locator(`${row(2)} .custody-band-asset.input-error`).count(), 0);
      assert.equal(await page.textContent(`${row(2)} .custody-band-problem`), 'from must be a decimal amount, e.g. 10 or 0.5; approvers must be a whole number from 1 to 5');
      if (process.env.REVIEW_DIALOG_SCREENSHOT) await page.screenshot({ path: process.env.REVIEW_DIALOG_SCREENSHOT });
      // The core client id from an environment variable.
      await page.click('#node-input-clientId + .red-ui-typedInput-container .red-ui-typedInput-type-select');
      await page.click('.red-ui-typedInput-options:visible a[value="env"]');
      await page.fill('#node-input-clientId + .red-ui-typedInput-container input.red-ui-typedInput-input', 'CORE_CLIENT_ID');
      await done(page);

      const invalid = await validity(page, NEW);
      assert.equal(invalid.valid, false, 'the node is flagged invalid');
      assert.deepEqual(invalid.errors, ['Amount bands row 2: from must be a decimal amount, e.g. 10 or 0.5']);
      assert.deepEqual(JSON.parse(String(invalid.bands)), [
        { asset: 'BTC-TESTNET', from: '1.5', approvers: 3 },
        { asset: 'ETH-TESTNET', from: 'abc', approvers: 7 },
      ]);
      assert.equal(await canvasTriangle(page, NEW), true, 'the red triangle on the canvas');
      await page.click('#red-ui-header-button-deploy');
      await page.waitForSelector('.red-ui-deploy-dialog-confirm-list', { state: 'visible', timeout: 15000 });
      const listed = await page.$$eval('.red-ui-deploy-dialog-confirm-list li', (els) => els.map((e) => e.textContent ?? ''));
      assert.ok(listed.includes('[review dialog] review (1 approver) (custody-review)'), `Deploy names the invalid review node: ${JSON.stringify(listed)}`);
      await page.locator('.red-ui-notification').filter({ has: page.locator('.red-ui-deploy-dialog-confirm-list') }).getByRole('button', { name: 'Cancel' }).click();
      await page.waitForSelector('.red-ui-deploy-dialog-confirm-list', { state: 'detached', timeout: 15000 });

      // Open it again: the stored rows, the bad ones still marked; fix row 2 and remove nothing.
      await openDialog(page, NEW);
      assert.deepEqual(await rowValues(page), [['BTC-TESTNET', '1.5', '3'], ['ETH-TESTNET', 'abc', '7']]);
      assert.equal(await page.locator(`${row(2)} .input-error`).count(), 2);
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-clientId').typedInput('type')), 'env');
      await fillRow(page, row(2), 'custody-band-', { from: '100', approvers: '4' });
      assert.equal(await page.locator('#node-input-bands-container .input-error').count(), 0);
      assert.equal(await page.isVisible(`${row(2)} .custody-band-problem`), false);
      await done(page);
      assert.equal((await validity(page, NEW)).valid, true, 'the node is valid again');
      assert.equal(await canvasTriangle(page, NEW), false);

      // Deploy and read the flow back: Deploy still asks, for the bad node of the loaded flow only.
      await page.click('#red-ui-header-button-deploy');
      await page.waitForSelector('.red-ui-deploy-dialog-confirm-list', { state: 'visible', timeout: 15000 });
      const still = await page.$$eval('.red-ui-deploy-dialog-confirm-list li', (els) => els.map((e) => e.textContent ?? ''));
      assert.deepEqual(still, ['[review dialog] bad review (custody-review)']);
      await page.click('#red-ui-deploy-dialog-confirm-deploy-deploy');
      const stored = await deployedNode(red().base, NEW);
      assert.ok(stored, `the review node was deployed\n${red().log.slice(-2000)}`);
      assert.equal(typeof stored.bands, 'string', 'bands is stored as a JSON string');
      assert.deepEqual(JSON.parse(stored.bands as string), [
        { asset: 'BTC-TESTNET', from: '1.5', approvers: 3 },
        { asset: 'ETH-TESTNET', from: '100', approvers: 4 },
      ]);
      assert.equal(stored.clientId, 'CORE_CLIENT_ID');
      assert.equal(stored.clientIdType, 'env');
      assert.equal(stored.approvers, '1');
      assert.equal(stored.escalateMargin, '300');
      assert.deepEqual(errors, []);
    });
  });
});
