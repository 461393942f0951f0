/**
 * The custody-config dialog's Coordination section in a real editor (docs/scale-out.md): a
 * `node-red` process with the pack, headless Chromium, and a real `redis-server`
 * (test/helpers/redis-server.ts) that asks for a password.
 *
 * - The Redis rows (URL, TLS, password, key prefix, claim lease) show only when Redis is chosen;
 *   None hides them. The state line says the node is deployed without coordination.
 * - "Test connection" with Redis: a wrong password shows "Bad Redis password.", the right one OK;
 *   neither result shows the password.
 * - Update and deploy: flows.json holds the coordination settings and not the password, which is
 *   a stored credential (`has_redisPassword`); the deployed node connects to Redis.
 * - Opened again in a reloaded editor: the state line shows "Redis ready" with the instance, the
 *   password box holds Node-RED's placeholder, and the test with the stored password is OK.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/editor-coordination.test.js`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { sleep } from '../helpers/red-process';
import { openConfigDialog, runConnectionTest, useRedProcess, withEditor } from '../helpers/editor-kit';
import { RedisServer } from '../helpers/redis-server';

const TAB = 'c0f0000000000f21';
const CFG = 'c0f0000000000c21';
const FLOWS = [
  { id: TAB, type: 'tab', label: 'coordination editor' },
  { id: CFG, type: 'custody-config', name: 'coordinated', environment: 'simulator', signingMode: 'timestamp', timeout: 30 },
];

const PASSWORD = 'redis-editor-' + Math.random().toString(36).slice(2, 10);
const WRONG = 'wrong-editor-' + Math.random().toString(36).slice(2, 10);

/** Open the config dialog of `id` and wait until its form (and the coordination state line's request) is there. */
const openConfig = (page: Page, id: string): Promise<void> => openConfigDialog(page, id, ['#custody-config-coordination-state'], 300);

/** How many of the Redis rows are visible, of how many. */
function redisRows(page: Page): Promise<{ visible: number; all: number }> {
  return page.$$eval('.custody-config-redis', (rows) => ({ visible: rows.filter((r) => (r as HTMLElement).offsetParent !== null).length, all: rows.length }));
}

describe('custody-config dialog in the editor: coordination through Redis', function () {
  this.timeout(120000);
  const redis = new RedisServer();
  before(() => redis.start(['--requirepass', PASSWORD]));
  const red = useRedProcess({ prefix: 'cf-editor-coordination-', flows: JSON.stringify(FLOWS) });
  after(() => redis.stop());

  it('shows the Redis rows only with Redis, tests Redis, and keeps the password out of flows.json', async () => {
    await withEditor(red().base, { width: 1400, height: 1300 }, { nodes: [CFG] }, async ({ page, errors }) => {
      await openConfig(page, CFG);
      assert.equal(await page.inputValue('#node-config-input-coordination'), 'none', 'the default');
      assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-coordination'), 'none');
      assert.equal((await page.textContent('#custody-config-coordination-state'))?.trim(), 'Deployed: no coordination.');
      const none = await redisRows(page);
      assert.ok(none.all >= 5, 'URL, TLS, password, key prefix, claim lease');
      assert.equal(none.visible, 0, 'hidden without coordination');

      await page.selectOption('#node-config-input-coordination', 'redis');
      assert.deepEqual(await redisRows(page), { visible: none.all, all: none.all });
      assert.equal(await page.inputValue('#node-config-input-redisKeyPrefix'), 'custodyflow:', 'the default prefix');
      assert.equal(await page.inputValue('#node-config-input-claimLeaseSeconds'), '60', 'the default lease');
      await page.selectOption('#node-config-input-coordination', 'none');
      assert.equal((await redisRows(page)).visible, 0, 'None hides them again');
      await page.selectOption('#node-config-input-coordination', 'redis');

      // The URL is required with Redis, and without a password in it.
      const invalid = () => page.evaluate(() => document.querySelector('#node-config-input-redisUrl')!.classList.contains('input-error'));
      await page.fill('#node-config-input-redisUrl', '');
      await page.dispatchEvent('#node-config-input-redisUrl', 'change');
      assert.equal(await invalid(), true, 'empty URL with Redis: invalid');
      await page.fill('#node-config-input-redisUrl', `redis://:${WRONG}@127.0.0.1:${redis.port}/0`);
      await page.dispatchEvent('#node-config-input-redisUrl', 'change');
      assert.equal(await invalid(), true, 'a password in the URL: invalid');
      await page.fill('#node-config-input-redisUrl', `${redis.url}/0`);
      await page.dispatchEvent('#node-config-input-redisUrl', 'change');
      assert.equal(await invalid(), false);

      await page.fill('#node-config-input-redisPassword', WRONG);
      const wrong = await runConnectionTest(page);
      assert.deepEqual([wrong.state, wrong.cause], ['failed', 'badPassword'], wrong.text);
      assert.match(wrong.text, /^ Bad Redis password\. Redis refused the password/);
      await page.fill('#node-config-input-redisPassword', PASSWORD);
      const ok = await runConnectionTest(page);
      assert.equal(ok.state, 'ok', ok.text);
      assert.match(ok.text, /Connected to the built-in simulator: .*Redis ready at redis:\/\/127\.0\.0\.1:\d+\/0, key prefix "custodyflow:"/);
      for (const t of [wrong.text, ok.text]) assert.ok(!t.includes(PASSWORD) && !t.includes(WRONG), 'no password in a result');

      // Update and deploy.
      await page.click('#node-config-dialog-ok');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      await page.click('#red-ui-header-button-deploy');
      const deadline = Date.now() + 30000;
      let status: { coordination?: string; state?: string; instance?: string } = {};
      while (status.state !== 'ready' && Date.now() < deadline) {
        const res = await fetch(`${red().base}/custodyflow/config/${CFG}/coordination`, { headers: { accept: 'application/json' } });
        if (res.ok) status = await res.json();
        if (status.state !== 'ready') await sleep(250);
      }
      assert.equal(status.coordination, 'redis', `deployed with Redis\n${red().log.slice(-2000)}`);
      assert.equal(status.state, 'ready', `the deployed node connected with the stored password\n${red().log.slice(-2000)}`);

      const flowsText = fs.readFileSync(path.join(red().userDir, 'flows.json'), 'utf8');
      assert.ok(!flowsText.includes(PASSWORD), 'the password is not in flows.json');
      const cfg = (JSON.parse(flowsText) as Array<Record<string, unknown>>).find((n) => n.id === CFG)!;
      assert.equal(cfg.coordination, 'redis');
      assert.equal(cfg.redisUrl, `${redis.url}/0`);
      assert.equal(cfg.redisTls, false);
      assert.equal(cfg.redisKeyPrefix, 'custodyflow:');
      assert.equal(Number(cfg.claimLeaseSeconds), 60);
      assert.equal(cfg.redisPassword, undefined);
      assert.equal(cfg.credentials, undefined);
      const creds = await (await fetch(`${red().base}/credentials/custody-config/${CFG}`, { headers: { accept: 'application/json' } })).json();
      assert.equal(creds.has_redisPassword, true, 'stored as a credential');
      assert.ok(!JSON.stringify(creds).includes(PASSWORD), 'never sent back to the editor');
      const credFile = path.join(red().userDir, 'flows_cred.json');
      assert.ok(!fs.existsSync(credFile) || !fs.readFileSync(credFile, 'utf8').includes(PASSWORD), 'encrypted in flows_cred.json');

      // A reloaded editor: the deployed state, the placeholder, and the stored password tested.
      await page.reload();
      await page.waitForFunction((id) => (window as any).RED?.nodes?.node?.(id), CFG, { timeout: 30000 });
      await page.waitForTimeout(500);
      await openConfig(page, CFG);
      assert.equal((await redisRows(page)).visible, none.all, 'Redis chosen: the rows show');
      assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-state'), 'ready');
      assert.match((await page.textContent('#custody-config-coordination-state')) ?? '', /^Deployed: Redis ready; this instance: \S+\.$/);
      assert.equal(await page.inputValue('#node-config-input-redisPassword'), '__PWRD__', 'Node-RED sends a placeholder for the stored password');
      const stored = await runConnectionTest(page);
      assert.equal(stored.state, 'ok', stored.text);
      // Nonce signing is refused with Redis: the field is marked invalid.
      await page.selectOption('#node-config-input-signingMode', 'nonce');
      assert.equal(await page.evaluate(() => document.querySelector('#node-config-input-signingMode')!.classList.contains('input-error')), true);
      await page.click('#node-config-dialog-cancel');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });

      assert.deepEqual(errors, []);
    });
  });
});
