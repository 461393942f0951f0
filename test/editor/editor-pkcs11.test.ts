/**
 * The custody-config dialog's key source "PKCS#11 token" in a real editor (docs/configuration.md
 * "Keys on a PKCS#11 token"): a `node-red` process with the pack and a credential secret,
 * headless Chromium, a real SoftHSM2 token made here, and a standalone simulator that knows only
 * the token's public key, reached as a Custom URL.
 *
 * - A stored PKCS#11 connection without a PIN is invalid. The dialog shows the PKCS#11 rows
 *   (module, token label, slot, key label, key id, PIN) when PKCS#11 is chosen and the PEM rows
 *   otherwise; with PKCS#11 the connection is valid only with module, token, key and PIN.
 * - Test connection: a wrong PIN is named; the right one is OK and shows the key's SHA-256
 *   fingerprint, equal to openssl's.
 * - Update and deploy: the deployed connection signs on the token (a look-up of the assets
 *   answers); flows.json holds the PKCS#11 fields and no PIN and no key material;
 *   flows_cred.json is encrypted (one `$` blob) and holds the PIN only in it; the editor gets
 *   `has_pin`, never the PIN; the Node-RED log holds no PIN.
 * - A reloaded editor: the connection is valid (`has_pin`), the PIN box holds Node-RED's
 *   placeholder, and Test connection with the stored PIN is OK.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/editor-pkcs11.test.js`.
 */
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { Simulator, DATA_FILES } from '../../simulator';
import { assertCredentialKept, openConfigDialog, runConnectionTest, storedFlows, useRedProcess, withEditor } from '../helpers/editor-kit';
import { changePin, createSoftHsm, generateOnToken, initToken, opensslFingerprint, removeSoftHsm, pkcs11ConfigNode, rsaPem, SOFTHSM_MODULE, type SoftHsm } from '../helpers/softhsm';

const TAB = 'c0f0000000000f91';
const CFG = 'c0f0000000000c91';
const TEST_PIN = 'pin-Edt4rQm8Lz';
const FLOWS = [
  { id: TAB, type: 'tab', label: 'pkcs11 editor' },
  pkcs11ConfigNode(CFG, 'http://127.0.0.1:9/api/v1/p'),
];

/** How many rows of `cls` are visible, of how many. */
function rows(page: Page, cls: string): Promise<{ visible: number; all: number }> {
  return page.$$eval(`.${cls}`, (els) => ({ visible: els.filter((r) => (r as HTMLElement).offsetParent !== null).length, all: els.length }));
}

/** Whether the environment field is marked invalid (its validator checks the key). */
function keyInvalid(page: Page): Promise<boolean> {
  return page.evaluate(() => document.querySelector('#node-config-input-environment')!.classList.contains('input-error'));
}

/** Type `value` into `#node-config-input-<name>` and fire its change. */
async function fill(page: Page, name: string, value: string): Promise<void> {
  await page.fill(`#node-config-input-${name}`, value);
  await page.dispatchEvent(`#node-config-input-${name}`, 'change');
}

describe('custody-config dialog in the editor: a key on a PKCS#11 token', function () {
  this.timeout(120000);
  let hsm: SoftHsm;
  let sim: Simulator;
  let dataDir: string;
  let spki: Buffer;
  before(async () => {
    // Before Node-RED starts: it inherits SOFTHSM2_CONF.
    hsm = createSoftHsm();
    initToken(hsm, 'T');
    spki = generateOnToken(hsm, 'T', 'K', '01');
    changePin(hsm, 'T', TEST_PIN);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-editor-pkcs11-'));
    fs.writeFileSync(path.join(dataDir, DATA_FILES.publicKey), createPublicKey({ key: spki, format: 'der', type: 'spki' }).export({ type: 'spki', format: 'pem' }), { mode: 0o600 });
    fs.writeFileSync(path.join(dataDir, DATA_FILES.privateKey), rsaPem(2048).privateKeyPem, { mode: 0o600 });
    sim = await Simulator.start({ port: 0, dataDir, persist: false });
  });
  const red = useRedProcess({ prefix: 'cf-editor-pkcs11-', flows: JSON.stringify(FLOWS), env: { NODE_RED_CREDENTIAL_SECRET: 'editor-pkcs11-credential-secret' } });
  after(async () => {
    await sim?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    removeSoftHsm(hsm);
  });

  it('shows the PKCS#11 rows or the PEM rows, validates the PKCS#11 fields, tests the token key, and stores the PIN only encrypted', async () => {
    await withEditor(red().base, { width: 1400, height: 1400 }, { nodes: [CFG] }, async ({ page, errors }) => {
      await page.waitForFunction((id) => (window as any).RED.nodes.node(id)?.valid === false, CFG, { timeout: 15000 });

      await openConfigDialog(page, CFG);
      assert.equal(await page.inputValue('#node-config-input-keySource'), 'pkcs11');
      const pkcs11 = await rows(page, 'custody-config-pkcs11');
      assert.ok(pkcs11.all >= 6, 'module, token label, slot, key label, key id, PIN');
      assert.equal(pkcs11.visible, pkcs11.all, 'PKCS#11 chosen: its rows show');
      assert.equal((await rows(page, 'custody-config-pem')).visible, 0, 'and not the PEM rows');
      assert.equal(await keyInvalid(page), true, 'no PIN: invalid');

      await page.selectOption('#node-config-input-keySource', 'pem');
      const pem = await rows(page, 'custody-config-pem');
      assert.ok(pem.all >= 2);
      assert.equal(pem.visible, pem.all, 'PEM chosen: the private key rows show');
      assert.equal((await rows(page, 'custody-config-pkcs11')).visible, 0, 'and not the PKCS#11 rows');
      await page.selectOption('#node-config-input-environment', 'simulator');
      assert.deepEqual([(await rows(page, 'custody-config-pem')).visible, (await rows(page, 'custody-config-pkcs11')).visible], [0, 0], 'the built-in simulator needs no key');
      await page.selectOption('#node-config-input-environment', 'custom');
      await page.selectOption('#node-config-input-keySource', 'pkcs11');

      await fill(page, 'baseUrl', sim.baseUrl);
      await fill(page, 'apiKey', sim.account.apiKey);
      await fill(page, 'pin', 'pin-wrong-222');
      assert.equal(await keyInvalid(page), false, 'module, token, key and PIN: valid');
      await fill(page, 'pkcs11Module', '');
      assert.equal(await keyInvalid(page), true, 'no module: invalid');
      await fill(page, 'pkcs11Module', SOFTHSM_MODULE);
      await fill(page, 'pkcs11KeyLabel', '');
      assert.equal(await keyInvalid(page), true, 'no key label nor id: invalid');
      await fill(page, 'pkcs11KeyId', '01');
      assert.equal(await keyInvalid(page), false, 'the key id alone names the key');
      await fill(page, 'pkcs11KeyLabel', 'K');

      const wrong = await runConnectionTest(page);
      assert.deepEqual([wrong.state, wrong.cause], ['failed', 'config'], wrong.text);
      assert.match(wrong.text, /refused the PIN/);
      await fill(page, 'pin', TEST_PIN);
      const ok = await runConnectionTest(page);
      assert.equal(ok.state, 'ok', ok.text);
      const fingerprint = opensslFingerprint(hsm.dir, spki);
      assert.ok(ok.text.includes(`SHA-256 fingerprint ${fingerprint}`), `${ok.text} shows ${fingerprint}`);
      for (const t of [wrong.text, ok.text]) assert.ok(!t.includes(TEST_PIN) && !t.includes('pin-wrong-'), 'no PIN in a result');

      await page.click('#node-config-dialog-ok');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      assert.equal(await page.evaluate((id) => (window as any).RED.nodes.node(id).valid, CFG), true);
      await page.click('#red-ui-header-button-deploy');
      // The deployed connection signs on the token: a look-up of the assets answers.
      let lookup: Response | undefined;
      for (let i = 0; i < 60 && lookup?.status !== 200; i++) {
        lookup = await fetch(`${red().base}/custodyflow/lookup/asset?connection=${CFG}`, { headers: { accept: 'application/json' } });
        if (lookup.status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      const listed = await lookup!.text();
      assert.equal(lookup!.status, 200, `${listed}\n${red().log.slice(-2000)}`);
      assert.ok((JSON.parse(listed) as unknown[]).length > 0, listed);

      const deployed = storedFlows(red().userDir);
      assert.ok(!deployed.text.includes(TEST_PIN), 'no PIN in flows.json');
      assert.ok(!/PRIVATE KEY|BEGIN/.test(deployed.text), 'no key material in flows.json');
      const cfg = deployed.nodes.find((n) => n.id === CFG)!;
      assert.deepEqual([cfg.keySource, cfg.pkcs11Module, cfg.pkcs11TokenLabel, cfg.pkcs11KeyLabel, cfg.pkcs11KeyId], ['pkcs11', SOFTHSM_MODULE, 'T', 'K', '01']);
      assert.equal(cfg.pin, undefined);
      assert.equal(cfg.credentials, undefined);
      const credText = fs.readFileSync(path.join(red().userDir, 'flows_cred.json'), 'utf8');
      assert.deepEqual(Object.keys(JSON.parse(credText)), ['$'], 'flows_cred.json holds one encrypted blob');
      assert.ok(!credText.includes(TEST_PIN), 'the PIN is encrypted');
      await assertCredentialKept(red().base, 'custody-config', CFG, 'pin', TEST_PIN);

      // A reloaded editor knows the stored PIN only as has_pin: valid, and Test connection uses the stored PIN.
      await page.reload();
      await page.waitForFunction((id) => (window as any).RED.nodes.node(id)?.valid === true, CFG, { timeout: 30000 });
      await openConfigDialog(page, CFG);
      assert.equal(await page.inputValue('#node-config-input-pin'), '__PWRD__', 'Node-RED sends a placeholder for the stored PIN');
      const stored = await runConnectionTest(page);
      assert.equal(stored.state, 'ok', stored.text);
      assert.ok(stored.text.includes(fingerprint), stored.text);
      await page.click('#node-config-dialog-cancel');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      assert.ok(!red().log.includes(TEST_PIN) && !red().log.includes('pin-wrong-'), 'no PIN in the Node-RED log');
      assert.deepEqual(errors, []);
    });
  });
});
