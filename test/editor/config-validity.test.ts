/**
 * A connection without keys is invalid in the editor (docs/configuration.md "Credentials"): a
 * `node-red` process with the pack and headless Chromium.
 *
 * - A custody-config node on Production with no API key and no private key (as loaded from
 *   flows.json, whose credentials Node-RED never sends to the editor until asked) is invalid:
 *   its entry in the Configuration nodes sidebar has the red triangle, the feed node using it has
 *   the red triangle on the canvas, and Deploy asks to confirm "invalid nodes", naming both.
 * - A built-in simulator connection needs no keys: valid, and so is the feed node using it.
 * - Typing an API key and a private key in the dialog makes it valid; deployed and loaded again in
 *   a fresh editor (the stored keys then known only as `has_apiKey` / `has_privateKey`), it stays
 *   valid; removing the stored key makes it invalid again.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/config-validity.test.js`.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { sleep } from '../helpers/red-process';
import { configNode, openConfigDialog, useRedProcess, withEditor } from '../helpers/editor-kit';
import { rsaKeyPair } from '../helpers/red-setup';

const TAB = 'c0f0000000000f71';
const CFG_PROD = 'c0f0000000000c71';
const CFG_SIM = 'c0f0000000000c72';
const FEED_PROD = 'c0f0000000000a71';
const FEED_SIM = 'c0f0000000000a72';

const FLOWS = [
  { id: TAB, type: 'tab', label: 'config validity' },
  configNode(CFG_PROD, 'production without keys', { environment: 'production' }),
  configNode(CFG_SIM, 'simulator'),
  { id: FEED_PROD, z: TAB, type: 'custody-coreclient-feed', name: 'feed on production', connection: CFG_PROD, clientId: 'demo-approver', details: false, x: 200, y: 100, wires: [[]] },
  { id: FEED_SIM, z: TAB, type: 'custody-coreclient-feed', name: 'feed on simulator', connection: CFG_SIM, clientId: 'demo-approver', details: false, x: 200, y: 200, wires: [[]] },
];

/** The `valid` flag and validation errors of each node in the page. */
function validity(page: Page, ids: string[]): Promise<Record<string, { valid: boolean | undefined; errors: string[] }>> {
  return page.evaluate((list) => {
    const out: Record<string, { valid: boolean | undefined; errors: string[] }> = {};
    for (const id of list) {
      const n = (window as any).RED.nodes.node(id);
      out[id] = { valid: n.valid, errors: n.validationErrors ?? [] };
    }
    return out;
  }, ids);
}

/** Wait until node `id` has `valid` === `expected` in the page (the stored credentials are read asynchronously). */
async function validIs(page: Page, id: string, expected: boolean): Promise<void> {
  await page.waitForFunction(([nodeId, want]) => (window as any).RED.nodes.node(nodeId)?.valid === want, [id, expected] as const, { timeout: 15000 });
}

/** Whether the canvas shows the red triangle (Node-RED's `red-ui-flow-node-error` annotation) on node `id`. */
function canvasTriangle(page: Page, id: string): Promise<boolean> {
  return page.evaluate((nodeId) => {
    const el = document.getElementById(nodeId)?.querySelector('.red-ui-flow-node-error') as SVGElement | null;
    return !!el && getComputedStyle(el).display !== 'none' && el.getAttribute('display') !== 'none';
  }, id);
}

/** The names of the config nodes the Configuration nodes sidebar marks invalid (red triangle). */
async function sidebarInvalid(page: Page): Promise<string[]> {
  await page.evaluate(() => {
    const RED = (window as any).RED;
    RED.sidebar.show('config');
    RED.sidebar.config.refresh();
  });
  await page.waitForTimeout(300);
  return page.$$eval('.red-ui-palette-node-config-invalid', (els) => els.map((e) => (e.querySelector('.red-ui-palette-label')?.textContent ?? '').trim()));
}

describe('custody-config without keys is invalid in the editor', function () {
  this.timeout(120000);
  const pair = rsaKeyPair('pkcs8');
  const red = useRedProcess({ prefix: 'cf-config-validity-', flows: JSON.stringify(FLOWS) });

  it('flags a hosted environment without an API key or private key (triangle, deploy warning), not the simulator; keys make it valid, also once stored', async () => {
    await withEditor(red().base, { width: 1400, height: 1000 }, { nodes: [CFG_PROD, CFG_SIM, FEED_PROD, FEED_SIM] }, async ({ page, errors }) => {
      await validIs(page, CFG_PROD, false);
      await validIs(page, FEED_PROD, false);
      const v = await validity(page, [CFG_PROD, CFG_SIM, FEED_PROD, FEED_SIM]);
      assert.deepEqual(v[CFG_PROD].errors, ["Production needs the partner's credentials: set the API key, private key"]);
      assert.equal(v[CFG_SIM].valid, true, JSON.stringify(v[CFG_SIM]));
      assert.equal(v[FEED_SIM].valid, true, JSON.stringify(v[FEED_SIM]));
      assert.equal(await canvasTriangle(page, FEED_PROD), true, 'the feed on production has the red triangle');
      assert.equal(await canvasTriangle(page, FEED_SIM), false, 'the feed on the simulator has none');
      assert.deepEqual(await sidebarInvalid(page), ['production without keys'], 'the config sidebar marks the production connection only');

      // Deploy (after a change: a node moved): Node-RED asks to confirm the invalid nodes, naming them.
      await page.evaluate((id) => {
        const RED = (window as any).RED;
        const n = RED.nodes.node(id);
        n.x += 40;
        n.moved = true;
        n.dirty = true;
        RED.nodes.dirty(true);
        RED.view.redraw();
      }, FEED_SIM);
      await page.click('#red-ui-header-button-deploy');
      await page.waitForSelector('.red-ui-deploy-dialog-confirm-list', { state: 'visible', timeout: 15000 });
      const listed = await page.$$eval('.red-ui-deploy-dialog-confirm-list li', (els) => els.map((e) => e.textContent ?? ''));
      assert.ok(listed.some((t) => t.includes('production without keys')), `the connection is listed: ${JSON.stringify(listed)}`);
      assert.ok(listed.some((t) => t.includes('feed on production')), `the feed node is listed: ${JSON.stringify(listed)}`);
      assert.ok(!listed.some((t) => t.includes('simulator')), 'the simulator ones are not');
      // Deploy anyway: the keys are added next.
      await page.click('#red-ui-deploy-dialog-confirm-deploy-deploy');
      await page.waitForFunction(() => !(window as any).RED.nodes.dirty(), undefined, { timeout: 15000 });

      // Typing both keys in the dialog: valid.
      await openConfigDialog(page, CFG_PROD);
      await page.fill('#node-config-input-apiKey', 'cHJvZHVjdGlvbi1hcGkta2V5');
      await page.fill('#node-config-input-privateKey', pair.privateKey);
      await page.click('#node-config-dialog-ok');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      await validIs(page, CFG_PROD, true);
      await validIs(page, FEED_PROD, true);
      await page.click('#red-ui-header-button-deploy');
      await page.waitForFunction(() => !(window as any).RED.nodes.dirty(), undefined, { timeout: 15000 });
      // Stored: the runtime has the keys (the deploy wrote them before answering).
      await sleep(500);

      // A fresh editor knows the stored keys only as has_ flags: still valid.
      await page.reload();
      await page.waitForFunction((id) => (window as any).RED?.nodes?.node?.(id), CFG_PROD, { timeout: 30000 });
      await page.waitForTimeout(1000);
      const reloaded = await validity(page, [CFG_PROD, FEED_PROD]);
      assert.equal(reloaded[CFG_PROD].valid, true, JSON.stringify(reloaded));
      assert.equal(reloaded[FEED_PROD].valid, true, JSON.stringify(reloaded));
      assert.deepEqual(await sidebarInvalid(page), []);

      // Removing the stored key: invalid again.
      await openConfigDialog(page, CFG_PROD);
      await page.click('#custody-config-remove-key');
      await page.click('#node-config-dialog-ok');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      await validIs(page, CFG_PROD, false);
      assert.deepEqual((await validity(page, [CFG_PROD]))[CFG_PROD].errors, ["Production needs the partner's credentials: set the private key"]);
      assert.deepEqual(errors, [], 'no script error in the page');
    });
  });
});
