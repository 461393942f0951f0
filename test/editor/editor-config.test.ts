/**
 * The custody-config dialog in a real editor (docs/configuration.md): a `node-red` process with the
 * pack, headless Chromium, and a standalone simulator started here (its partner key pair generated
 * here) that a "Custom URL" connection points at.
 *
 * - The dialog's title reads "Edit custody connection node" (paletteLabel), and the type's
 *   definition has the literal category, color, icon, ports and the three credentials.
 * - "Test connection" shows OK with the built-in simulator; with the credentials typed in the
 *   dialog; the cause with a wrong private key and a wrong API key; and, after deploying and
 *   opening the dialog again (Node-RED then sends the placeholder `__PWRD__` for the stored
 *   credentials), OK with the stored ones.
 * - In the page, `CustodyLookup.autoComplete('company', ...)` passes the simulator's company ids
 *   to `done` (each entry's label an element: the name, then the id on a line of its own), and a
 *   real TypedInput with it as a custom type's `autoComplete` shows them.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/editor-config.test.js`.
 * Set CONFIG_SCREENSHOT to a path to keep a screenshot of the dialog with a test result.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator, DATA_FILES } from '../../simulator';
import { CustodyClient, createCompany } from '../../lib';
import { sleep } from '../helpers/red-process';
import { configNode, openConfigDialog, runConnectionTest, useRedProcess, withEditor } from '../helpers/editor-kit';
import { rsaKeyPair } from '../helpers/red-setup';

const TAB = 'c0f0000000000f01';
const CFG_SIM = 'c0f0000000000c01';
const CFG_CUSTOM = 'c0f0000000000c02';

const FLOWS = [
  { id: TAB, type: 'tab', label: 'config editor' },
  configNode(CFG_SIM, 'simulator'),
  configNode(CFG_CUSTOM, 'standalone', { timeout: 10 }),
];


describe('custody-config dialog in the editor: Test connection and company lookups', function () {
  this.timeout(120000);
  let sim: Simulator | undefined;
  let client: CustodyClient | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-editor-config-sim-'));
  const pair = rsaKeyPair('pkcs8');
  const wrong = rsaKeyPair('pkcs8');
  let companyId = '';
  const red = useRedProcess({ prefix: 'cf-editor-config-', flows: JSON.stringify(FLOWS) });

  before(async () => {
    fs.writeFileSync(path.join(dataDir, DATA_FILES.privateKey), pair.privateKey, { mode: 0o600 });
    fs.writeFileSync(path.join(dataDir, DATA_FILES.publicKey), pair.publicKey, { mode: 0o600 });
    sim = await Simulator.start({ dataDir, port: 0, persist: false });
    client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: pair.privateKey });
    companyId = (await createCompany(client, { name: 'Quokka Editor Holdings' })).data.company_id;
  });

  after(async () => {
    await client?.close();
    await sim?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('tests the connection from the dialog, deploys it, and looks companies up through it', async () => {
    await withEditor(red().base, { width: 1400, height: 1100 }, { nodes: [CFG_CUSTOM], globals: ['CustodyLookup'] }, async ({ page, errors }) => {
      const def = await page.evaluate(() => {
        const t = (window as any).RED.nodes.getType('custody-config');
        return { category: t.category, color: t.color, icon: t.icon, inputs: t.inputs, outputs: t.outputs, paletteLabel: t.paletteLabel, credentials: Object.keys(t.credentials).sort() };
      });
      assert.deepEqual(def, { category: 'config', color: '#a6bbcf', icon: 'custody.svg', inputs: 0, outputs: 0, paletteLabel: 'custody connection', credentials: ['apiKey', 'pin', 'privateKey', 'redisPassword', 'redisSentinelPassword', 'token'] });

      // The built-in simulator: nothing to fill in.
      await openConfigDialog(page, CFG_SIM);
      assert.equal((await page.textContent('.red-ui-tray-titlebar'))?.trim(), 'Edit custody connection node');
      const builtIn = await runConnectionTest(page);
      assert.equal(builtIn.state, 'ok', builtIn.text);
      assert.match(builtIn.text, /^ OK\. Connected to the built-in simulator: GET \/assets listed 4 assets .*v2 workspace/);
      await page.click('#node-config-dialog-cancel');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });

      // A Custom URL connection to the standalone simulator, typed in the dialog.
      await openConfigDialog(page, CFG_CUSTOM);
      await page.selectOption('#node-config-input-environment', 'custom');
      await page.fill('#node-config-input-baseUrl', sim!.baseUrl);
      await page.fill('#node-config-input-apiKey', sim!.account.apiKey);
      await page.fill('#node-config-input-privateKey', wrong.privateKey);
      const badSignature = await runConnectionTest(page);
      assert.deepEqual([badSignature.state, badSignature.cause], ['failed', 'badSignature'], badSignature.text);
      assert.match(badSignature.text, /^ Bad signature \(wrong private key\)\. The signature was refused/);

      await page.fill('#node-config-input-privateKey', pair.privateKey);
      await page.fill('#node-config-input-apiKey', 'd3JvbmcgYXBpIGtleQ==');
      const badKey = await runConnectionTest(page);
      assert.deepEqual([badKey.state, badKey.cause], ['failed', 'badApiKey'], badKey.text);

      await page.fill('#node-config-input-apiKey', sim!.account.apiKey);
      const typed = await runConnectionTest(page);
      assert.equal(typed.state, 'ok', typed.text);
      assert.match(typed.text, /Connected to the custom URL: GET \/assets listed 4 assets/);
      if (process.env.CONFIG_SCREENSHOT) await page.screenshot({ path: process.env.CONFIG_SCREENSHOT });
      for (const t of [badSignature.text, badKey.text, typed.text]) {
        assert.ok(!t.includes(sim!.account.apiKey) && !t.includes(pair.privateKey.split('\n')[1]), 'no secret in a result');
      }

      // Update and deploy; in a reloaded editor the dialog holds placeholders and the stored credentials are tested.
      await page.click('#node-config-dialog-ok');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      await page.click('#red-ui-header-button-deploy');
      const deadline = Date.now() + 30000;
      let deployed = false;
      while (!deployed && Date.now() < deadline) {
        const res = await fetch(`${red().base}/custodyflow/lookup/asset?connection=${CFG_CUSTOM}`, { headers: { accept: 'application/json' } });
        deployed = res.ok;
        if (!deployed) await sleep(250);
      }
      assert.ok(deployed, `the custom connection was deployed\n${red().log.slice(-2000)}`);
      // A fresh editor knows the stored credentials only as has_apiKey / has_privateKey.
      await page.reload();
      await page.waitForFunction((id) => (window as any).RED?.nodes?.node?.(id) && (window as any).CustodyLookup, CFG_CUSTOM, { timeout: 30000 });
      await page.waitForTimeout(500);
      await openConfigDialog(page, CFG_CUSTOM);
      assert.equal(await page.inputValue('#node-config-input-apiKey'), '__PWRD__', 'Node-RED sends a placeholder for the stored API key');
      assert.equal(await page.inputValue('#node-config-input-privateKey'), '', 'the stored key shows as an empty box');
      const stored = await runConnectionTest(page);
      assert.equal(stored.state, 'ok', stored.text);
      // Removing the stored key: the test has no key.
      await page.click('#custody-config-remove-key');
      const removed = await runConnectionTest(page);
      assert.deepEqual([removed.state, removed.cause], ['failed', 'config'], removed.text);
      assert.match(removed.text, /privateKey: set the RSA private key/);
      await page.click('#node-config-dialog-cancel');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });

      // CustodyLookup.autoComplete called as the TypedInput calls it: (value, done).
      const looked = await page.evaluate(
        ([cfg]) =>
          new Promise<{ arity: number; all: Array<{ value: string; lines: string[] }>; quo: Array<{ value: string; lines: string[] }> }>((resolve) => {
            // An entry's label is an element: its lines (the name, then the id inserted).
            const shown = (list: Array<{ value: string; label: any }>) => list.map((o) => ({ value: o.value, lines: Array.from((o.label as any)[0].children as HTMLCollection).map((c) => c.textContent ?? '') }));
            const search = (window as any).CustodyLookup.autoComplete('company', () => cfg);
            search('', (all: Array<{ value: string; label: any }>) => search('Quo', (quo: Array<{ value: string; label: any }>) => resolve({ arity: search.length, all: shown(all), quo: shown(quo) })));
          }),
        [CFG_CUSTOM],
      );
      assert.equal(looked.arity, 2, 'two parameters: the widget passes done');
      const ids = looked.all.map((o) => o.value);
      assert.ok(ids.includes(companyId), 'the company made in the simulator');
      assert.ok(ids.includes(sim!.demo.company_id), 'the demo company');
      assert.deepEqual(looked.quo, [{ value: companyId, lines: ['Quokka Editor Holdings', companyId] }]);

      // Not deployed: one entry that says why and keeps the typed text.
      const notDeployed = await page.evaluate(
        () => new Promise<Array<{ value: string; label: string }>>((resolve) => (window as any).CustodyLookup.autoComplete('fund', () => 'not-a-node')('abc', resolve)),
      );
      assert.equal(notDeployed.length, 1);
      assert.equal(notDeployed[0].value, 'abc');
      assert.match(notDeployed[0].label, /^⚠ connection: no deployed custody-config node/);

      // A real TypedInput with a custom "str" type using it: typing shows the company in the list.
      await page.evaluate((cfg) => {
        const $ = (window as any).$;
        $('<input type="text" id="custody-lookup-probe" style="width: 400px">').appendTo($('#red-ui-header'));
        $('#custody-lookup-probe').typedInput({
          types: [{ value: 'str', label: 'string', icon: 'red/images/typedInput/az.svg', autoComplete: (window as any).CustodyLookup.autoComplete('company', () => cfg) }],
        });
      }, CFG_CUSTOM);
      const field = page.locator('#custody-lookup-probe').locator('xpath=..').locator('input.red-ui-typedInput-input');
      await field.click();
      await field.pressSequentially('Quokka', { delay: 30 });
      await page.waitForSelector('.red-ui-autoComplete-container a', { timeout: 10000 });
      // Each entry shows its lines: the name, then the id inserted.
      const shown = await page.$$eval('.red-ui-autoComplete-container a .custody-lookup-option', (os) => os.map((o) => Array.from(o.children).map((c) => c.textContent)));
      assert.deepEqual(shown, [['Quokka Editor Holdings', companyId]]);
      await page.click('.red-ui-autoComplete-container a');
      assert.equal(await page.evaluate(() => (window as any).$('#custody-lookup-probe').typedInput('value')), companyId, 'choosing puts the id in the field');

      assert.deepEqual(errors, []);
    });
  });
});
