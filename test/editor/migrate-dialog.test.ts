/**
 * The edit dialog runs the runtime's migrations (docs/architecture.md "Stored node properties and
 * migrations"), in a started `node-red` and headless Chromium: a custody-request and a custody-fund
 * saved before TypedInputs open with the types their text was read as, Done records the migration as
 * one edit (undone as one), and the flow the editor would deploy holds the new version.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { simulatorFlows, useRedProcess, withEditor } from '../helpers/editor-kit';

const TAB = 'a9920000000000f1';
const CONFIG = 'a9920000000000c1';
/** A custody-request saved before TypedInputs: an empty method (msg.method), body none. */
const REQUEST = 'a992000000000r01';
/** A custody-fund saved before TypedInputs: its ids as fixed text. */
const FUND = 'a992000000000f01';

const FLOWS = simulatorFlows(TAB, 'migrations', CONFIG, [
  { id: REQUEST, z: TAB, type: 'custody-request', name: 'old request', connection: CONFIG, method: '', path: '/company/c1/custom', body: 'none', x: 200, y: 100, wires: [[]] },
  { id: FUND, z: TAB, type: 'custody-fund', name: 'old fund', connection: CONFIG, operation: 'getFund', company_id: 'c1', fund_id: '', x: 200, y: 200, wires: [[]] },
]);

/** Open node `id`'s dialog, wait for its Done button and `selector`, let it settle. */
async function open(page: Page, id: string, selector: string): Promise<void> {
  await page.evaluate((nodeId) => (window as any).RED.editor.edit((window as any).RED.nodes.node(nodeId)), id);
  await page.waitForSelector(selector, { state: 'visible' });
  await page.waitForTimeout(400);
}

/** Press Done and wait for the dialog to close. */
async function done(page: Page): Promise<void> {
  await page.click('#node-dialog-ok');
  await page.waitForSelector('#dialog-form', { state: 'detached' });
}

/** Properties of node `id` as the editor holds them, and as it would deploy them (`createCompleteNodeSet`). */
function stored(page: Page, id: string, names: string[]): Promise<{ node: Record<string, unknown>; deployed: Record<string, unknown> }> {
  return page.evaluate(
    ([nodeId, props]) => {
      const RED = (window as any).RED;
      const n = RED.nodes.node(nodeId);
      const d = RED.nodes.createCompleteNodeSet().find((x: { id: string }) => x.id === nodeId);
      const pick = (o: Record<string, unknown>) => Object.fromEntries((props as string[]).map((p) => [p, o[p]]));
      return { node: pick(n), deployed: pick(d) };
    },
    [id, names] as const,
  );
}

describe('the edit dialog migrates a node saved in an earlier shape (real Chromium)', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-migrate-dialog-', flows: JSON.stringify(FLOWS) });

  it('custody-request and custody-fund open with the types their text was read as; Done stores schemaVersion 1 as one edit; undo restores the stored shape', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { types: ['custody-request', 'custody-fund'], nodes: [REQUEST, FUND] }, async ({ page, errors }) => {
      const requestProps = ['method', 'methodType', 'path', 'pathType', 'body', 'bodyType', 'schemaVersion'];
      assert.deepEqual((await stored(page, REQUEST, requestProps)).node, { method: '', methodType: undefined, path: '/company/c1/custom', pathType: undefined, body: 'none', bodyType: undefined, schemaVersion: undefined }, 'loaded as stored');

      await open(page, REQUEST, '#node-input-method + .red-ui-typedInput-container, .red-ui-typedInput-container');
      const shown = await page.evaluate(() => {
        const $ = (window as any).$;
        return { methodType: $('#node-input-method').typedInput('type'), method: $('#node-input-method').typedInput('value'), pathType: $('#node-input-path').typedInput('type'), bodyType: $('#node-input-body').typedInput('type'), version: $('#node-input-schemaVersion').val() };
      });
      assert.deepEqual(shown, { methodType: 'msg', method: 'method', pathType: 'str', bodyType: 'none', version: '1' });
      await done(page);
      const after = await stored(page, REQUEST, requestProps);
      assert.deepEqual(after.node, { method: 'method', methodType: 'msg', path: '/company/c1/custom', pathType: 'str', body: '', bodyType: 'none', schemaVersion: '1' });
      assert.deepEqual(after.deployed, after.node, 'the flow the editor deploys holds the new version');
      const edit = await page.evaluate(() => (window as any).RED.history.peek());
      assert.equal(edit?.t, 'edit');
      assert.deepEqual(Object.keys(edit.changes).sort(), ['body', 'bodyType', 'method', 'methodType', 'pathType', 'schemaVersion']);

      await page.evaluate(() => (window as any).RED.history.pop());
      assert.deepEqual((await stored(page, REQUEST, requestProps)).node, { method: '', methodType: undefined, path: '/company/c1/custom', pathType: undefined, body: 'none', bodyType: undefined, schemaVersion: undefined }, 'undone as one edit');

      await open(page, FUND, '#node-input-company_id + .red-ui-typedInput-container, .red-ui-typedInput-container');
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-company_id').typedInput('type')), 'str');
      assert.equal(await page.evaluate(() => (window as any).$('#node-input-company_id').typedInput('value')), 'c1');
      await done(page);
      const fund = await stored(page, FUND, ['company_id', 'company_idType', 'fund_idType', 'schemaVersion']);
      assert.deepEqual(fund.deployed, { company_id: 'c1', company_idType: 'str', fund_idType: 'str', schemaVersion: '1' });
      assert.deepEqual(errors, []);
    });
  });
});
