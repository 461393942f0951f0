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
 * - Opened again in a reloaded editor: the state line shows "Redis ready" with the mode, the
 *   master and since when, and the instance; the password box holds Node-RED's placeholder, and
 *   the test with the stored password is OK.
 * - The Redis mode (Standalone, Sentinel, Cluster) shows its own rows; TLS, password, key prefix
 *   and lease stay in every mode. A node stored without a mode opens as Standalone and is valid.
 *   A bad sentinel list (or cluster node list, or an empty master name) is invalid only in its
 *   mode, with a message naming the field.
 * - Sentinel against a real Sentinel setup (test/helpers/redis-sentinel.ts): "Test connection"
 *   names the master the sentinels gave (a wrong sentinel password: "Bad Redis password."); deployed,
 *   flows.json holds the sentinels and the master name, not the sentinel password, which is a
 *   stored credential (`has_redisSentinelPassword`); opened again, the state line names the master.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/editor/editor-coordination.test.js`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { sleep } from '../helpers/red-process';
import { assertCredentialKept, configNode, openConfigDialog, runConnectionTest, storedFlows, useRedProcess, withEditor } from '../helpers/editor-kit';
import { RedisServer } from '../helpers/redis-server';
import { RedisSentinelSetup } from '../helpers/redis-sentinel';
import { parseRedisAddresses } from '../../lib/coordination/coordinator';

const TAB = 'c0f0000000000f21';
const CFG = 'c0f0000000000c21';
/** A node saved before the Redis modes existed: coordination Redis by URL, no `redisMode`. */
const OLD = 'c0f0000000000c22';
const FLOWS = [
  { id: TAB, type: 'tab', label: 'coordination editor' },
  configNode(CFG, 'coordinated'),
  configNode(OLD, 'stored by URL', { coordination: 'redis', redisUrl: 'redis://127.0.0.1:1/0', redisTls: false, redisKeyPrefix: 'old:', claimLeaseSeconds: 60 }),
];

const PASSWORD = 'redis-editor-' + Math.random().toString(36).slice(2, 10);
const WRONG = 'wrong-editor-' + Math.random().toString(36).slice(2, 10);

/** Open the config dialog of `id` and wait until its form (and the coordination state line's request) is there. */
const openConfig = (page: Page, id: string): Promise<void> => openConfigDialog(page, id, ['#custody-config-coordination-state'], 300);

/** The inputs (by property) of each Redis mode's rows. */
const MODE_ROWS = { standalone: ['redisUrl'], sentinel: ['redisSentinels', 'redisMasterName', 'redisSentinelPassword'], cluster: ['redisClusterNodes'] } as const;
/** The Redis rows of every mode. */
const COMMON_ROWS = ['redisMode', 'redisTls', 'redisPassword', 'redisKeyPrefix', 'claimLeaseSeconds'];

/** Which of the Coordination inputs are visible, by property name. */
function visibleInputs(page: Page): Promise<string[]> {
  return page.$$eval('[id^="node-config-input-redis"], #node-config-input-claimLeaseSeconds', (inputs) =>
    inputs.filter((i) => (i.closest('.form-row') as HTMLElement | null)?.offsetParent).map((i) => i.id.replace('node-config-input-', '')),
  );
}

/** Whether the input of `property` is marked invalid. */
const invalid = (page: Page, property: string): Promise<boolean> => page.evaluate((p) => document.querySelector(`#node-config-input-${p}`)!.classList.contains('input-error'), property);

/** Type `value` into the input of `property` (set it, when its row is hidden) and let the dialog validate it. */
async function type(page: Page, property: string, value: string): Promise<void> {
  const input = `#node-config-input-${property}`;
  if (await page.isVisible(input)) await page.fill(input, value);
  else await page.evaluate(([selector, v]) => ((document.querySelector(selector) as HTMLInputElement).value = v), [input, value]);
  await page.dispatchEvent(input, 'change');
}

/** The validation message of the input of `property`: its tooltip, shown on hover. */
async function message(page: Page, property: string): Promise<string> {
  await page.hover(`#node-config-input-${property}`);
  const popover = page.locator('.red-ui-popover-content').last();
  await popover.waitFor({ state: 'visible', timeout: 5000 });
  const text = (await popover.textContent()) ?? '';
  await page.mouse.move(0, 0);
  await page.waitForFunction(() => !document.querySelector('.red-ui-popover'), undefined, { timeout: 5000 });
  return text;
}

/** How many of the Redis rows are visible, of how many. */
function redisRows(page: Page): Promise<{ visible: number; all: number }> {
  return page.$$eval('.custody-config-redis', (rows) => ({ visible: rows.filter((r) => (r as HTMLElement).offsetParent !== null).length, all: rows.length }));
}

/** The coordination status the admin API answers for a deployed config node (the fields these tests read). */
interface CoordinationStatus {
  coordination?: string;
  state?: string;
  instance?: string;
  mode?: string;
  master?: string;
}

/**
 * Press Update in the open config dialog, deploy, and read `GET <admin>/custodyflow/config/<id>/coordination`
 * of the `node-red` at `base` until the node's coordination is ready (30 s at most).
 * @returns the last status read (its `state` is not `ready` when the time ran out).
 */
async function updateAndDeploy(page: Page, base: string, id: string): Promise<CoordinationStatus> {
  await page.click('#node-config-dialog-ok');
  await page.waitForSelector('#custody-config-test', { state: 'detached' });
  await page.click('#red-ui-header-button-deploy');
  const deadline = Date.now() + 30000;
  let status: CoordinationStatus = {};
  while (status.state !== 'ready' && Date.now() < deadline) {
    const res = await fetch(`${base}/custodyflow/config/${id}/coordination`, { headers: { accept: 'application/json' } });
    if (res.ok) status = (await res.json()) as CoordinationStatus;
    if (status.state !== 'ready') await sleep(250);
  }
  return status;
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
      await type(page, 'redisUrl', '');
      assert.equal(await invalid(page, 'redisUrl'), true, 'empty URL with Redis: invalid');
      await type(page, 'redisUrl', `redis://:${WRONG}@127.0.0.1:${redis.port}/0`);
      assert.equal(await invalid(page, 'redisUrl'), true, 'a password in the URL: invalid');
      await type(page, 'redisUrl', `${redis.url}/0`);
      assert.equal(await invalid(page, 'redisUrl'), false);

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
      const status = await updateAndDeploy(page, red().base, CFG);
      assert.equal(status.coordination, 'redis', `deployed with Redis\n${red().log.slice(-2000)}`);
      assert.equal(status.state, 'ready', `the deployed node connected with the stored password\n${red().log.slice(-2000)}`);

      const deployed = storedFlows(red().userDir);
      assert.ok(!deployed.text.includes(PASSWORD), 'the password is not in flows.json');
      const cfg = deployed.nodes.find((n) => n.id === CFG)!;
      assert.equal(cfg.coordination, 'redis');
      assert.equal(cfg.redisUrl, `${redis.url}/0`);
      assert.equal(cfg.redisTls, false);
      assert.equal(cfg.redisKeyPrefix, 'custodyflow:');
      assert.equal(Number(cfg.claimLeaseSeconds), 60);
      assert.equal(cfg.redisPassword, undefined);
      assert.equal(cfg.credentials, undefined);
      await assertCredentialKept(red().base, 'custody-config', CFG, 'redisPassword', PASSWORD);
      const credFile = path.join(red().userDir, 'flows_cred.json');
      assert.ok(!fs.existsSync(credFile) || !fs.readFileSync(credFile, 'utf8').includes(PASSWORD), 'encrypted in flows_cred.json');

      // A reloaded editor: the deployed state, the placeholder, and the stored password tested.
      await page.reload();
      await page.waitForFunction((id) => (window as any).RED?.nodes?.node?.(id), CFG, { timeout: 30000 });
      await page.waitForTimeout(500);
      await openConfig(page, CFG);
      assert.equal((await redisRows(page)).visible, none.all, 'Redis chosen: the rows show');
      assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-state'), 'ready');
      assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-mode'), 'standalone');
      assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-master'), `127.0.0.1:${redis.port}`);
      assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-failovers'), '0');
      // A local time: of today, else with its date (a test run across midnight).
      const shapes = await page.evaluate(() => [new Date().toLocaleTimeString(), new Date().toLocaleString()].map((x) => x.replace(/\d/g, '0')));
      const line = (await page.textContent('#custody-config-coordination-state')) ?? '';
      assert.match(line, /^Deployed: Redis ready; standalone, master 127\.0\.0\.1:\d+ since (.+); this instance: \S+\.$/, 'the mode, the master and since when; no failover');
      assert.ok(shapes.includes(/ since (.+); /.exec(line)![1].replace(/\d/g, '0')), `since: a local time (${line})`);
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

  it('shows the rows of the Redis mode, and opens a node stored without a mode as Standalone', async () => {
    await withEditor(red().base, { width: 1400, height: 1300 }, { nodes: [OLD] }, async ({ page, errors }) => {
      assert.equal(await page.evaluate((id) => (window as any).RED.nodes.node(id).valid, OLD), true, 'the stored node is valid as it was');
      await openConfig(page, OLD);
      assert.equal(await page.inputValue('#node-config-input-coordination'), 'redis');
      assert.equal(await page.inputValue('#node-config-input-redisMode'), 'standalone', 'no redisMode: Standalone');
      assert.equal(await page.inputValue('#node-config-input-redisUrl'), 'redis://127.0.0.1:1/0');
      assert.equal(await page.inputValue('#node-config-input-redisMasterName'), 'mymaster', 'the default master name, for a switch to Sentinel');
      assert.equal(await invalid(page, 'redisUrl'), false);
      for (const mode of ['standalone', 'sentinel', 'cluster'] as const) {
        await page.selectOption('#node-config-input-redisMode', mode);
        assert.deepEqual((await visibleInputs(page)).sort(), [...COMMON_ROWS, ...MODE_ROWS[mode]].sort(), `the rows of ${mode}`);
      }
      await page.selectOption('#node-config-input-coordination', 'none');
      assert.deepEqual(await visibleInputs(page), [], 'no Redis row without coordination');

      // The state line of a deployed Sentinel node after a failover (the node's catalog texts).
      const line = await page.evaluate(() => {
        const w = window as any;
        const t = (key: string, params?: object) => w.RED.nodes.getType('custody-config')._('custody-config.' + key, params);
        const since = new Date(2030, 0, 2, 3, 4, 5);
        const status = { coordination: 'redis', state: 'recovering', reason: 'Redis came back without its data', mode: 'sentinel', master: '127.0.0.1:6380', masterSince: since.getTime(), failovers: 2, instance: 'host/1' };
        return { text: w.CustodyCoordination.stateText(status, t), since: since.toLocaleString(), none: w.CustodyCoordination.stateText({ ...status, failovers: 0, state: 'ready' }, t) };
      });
      assert.equal(line.text, `Deployed: Redis recovering (Redis came back without its data: no new claim for one lease) (Redis came back without its data); Sentinel, master 127.0.0.1:6380 since ${line.since}; failovers since start: 2; this instance: host/1.`);
      assert.equal(line.none, `Deployed: Redis ready; Sentinel, master 127.0.0.1:6380 since ${line.since}; this instance: host/1.`, 'no failover count while there was none');
      await page.click('#node-config-dialog-cancel');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      assert.deepEqual(errors, []);
    });
  });

  it('marks a bad sentinel list, cluster node list or master name invalid in its mode only, naming the field', async () => {
    await withEditor(red().base, { width: 1400, height: 1300 }, { nodes: [OLD] }, async ({ page, errors }) => {
      await openConfig(page, OLD);
      // Standalone: the sentinel and cluster fields are not checked.
      await type(page, 'redisSentinels', 'not a list:x');
      await type(page, 'redisClusterNodes', '');
      assert.equal(await invalid(page, 'redisSentinels'), false, 'Standalone: the sentinels are not checked');
      assert.equal(await invalid(page, 'redisClusterNodes'), false);

      await page.selectOption('#node-config-input-redisMode', 'sentinel');
      assert.equal(await invalid(page, 'redisSentinels'), true, 'Sentinel: a bad list is invalid');
      assert.match(await message(page, 'redisSentinels'), /^Sentinels: entry 3, "list:x", is not host:port \(a host, then a port from 1 to 65535\)$/);
      assert.equal(await invalid(page, 'redisUrl'), false, 'Sentinel: the URL is not checked');
      await type(page, 'redisUrl', '');
      assert.equal(await invalid(page, 'redisUrl'), false);
      const cases: Array<[string, boolean, RegExp?]> = [
        ['', false, /^Sentinels: at least one host:port/],
        ['127.0.0.1:26379, 127.0.0.1:0', false, /^Sentinels: entry 2, "127\.0\.0\.1:0", is not host:port/],
        ['127.0.0.1:26379 127.0.0.1:65536', false, /^Sentinels: entry 2, "127\.0\.0\.1:65536"/],
        ['127.0.0.1:26379,,host:x', false, /^Sentinels: entry 2, "host:x"/],
        ['127.0.0.1:26379, 127.0.0.1:26380, 127.0.0.1:26381', true],
        ['sentinel-a.example:26379,[::1]:26380, sentinel-c', true],
      ];
      for (const [list, valid, text] of cases) {
        await type(page, 'redisSentinels', list);
        assert.equal(await invalid(page, 'redisSentinels'), !valid, JSON.stringify(list));
        if (text) assert.match(await message(page, 'redisSentinels'), text);
      }
      // The same rule as the runtime's (parseRedisAddresses), entry by entry.
      const lists = ['', ' , ', 'a', 'a:1', 'a:65535', 'a:65536', 'a:0', 'a:-1', 'a:b', 'a:1:2', '[::1]', '[::1]:7000', '::1', '[zz]:1', 'u:p@a:1', 'a/b:1', 'a:1,b:2 c:3', 'a:01'];
      for (const list of lists) {
        const editor = await page.evaluate((v) => (window as any).CustodyCoordination.checkAddresses(v, 'Sentinels', (k: string) => k, 26379) === true, list);
        let runtime = true;
        try {
          parseRedisAddresses(list, 'redisSentinels', 26379);
        } catch {
          runtime = false;
        }
        assert.equal(editor, runtime, `${JSON.stringify(list)}: the editor and the runtime agree`);
      }

      await type(page, 'redisMasterName', ' ');
      assert.equal(await invalid(page, 'redisMasterName'), true, 'an empty master name');
      assert.match(await message(page, 'redisMasterName'), /^Master name: required with Sentinel/);
      await type(page, 'redisMasterName', 'mymaster');
      assert.equal(await invalid(page, 'redisMasterName'), false);

      await page.selectOption('#node-config-input-redisMode', 'cluster');
      assert.equal(await invalid(page, 'redisClusterNodes'), true, 'Cluster: no node is invalid');
      assert.match(await message(page, 'redisClusterNodes'), /^Cluster nodes: at least one host:port/);
      await type(page, 'redisClusterNodes', '127.0.0.1:7000 127.0.0.1:7001');
      assert.equal(await invalid(page, 'redisClusterNodes'), false);
      await type(page, 'redisMasterName', '');
      assert.equal(await invalid(page, 'redisMasterName'), false, 'Cluster: the master name is not checked');

      // With coordination None nothing of Redis is checked.
      await page.selectOption('#node-config-input-redisMode', 'sentinel');
      await type(page, 'redisSentinels', 'bad:port');
      await page.selectOption('#node-config-input-coordination', 'none');
      assert.equal(await invalid(page, 'redisSentinels'), false, 'None: not checked');
      await page.click('#node-config-dialog-cancel');
      await page.waitForSelector('#custody-config-test', { state: 'detached' });
      assert.deepEqual(errors, []);
    });
  });

  it('tests and deploys Sentinel against a real Sentinel setup: the master named, the sentinel password a credential, never in flows.json', async () => {
    const sentinelPassword = 'sentinel-editor-' + Math.random().toString(36).slice(2, 10);
    const group = new RedisSentinelSetup({ masterName: 'custody-master', password: PASSWORD, sentinelPassword });
    await group.start();
    try {
      await withEditor(red().base, { width: 1400, height: 1300 }, { nodes: [OLD] }, async ({ page, errors }) => {
        await openConfig(page, OLD);
        await page.selectOption('#node-config-input-redisMode', 'sentinel');
        await type(page, 'redisSentinels', group.sentinelList);
        await type(page, 'redisMasterName', 'custody-master');
        await type(page, 'redisPassword', PASSWORD);
        await type(page, 'redisSentinelPassword', WRONG);
        const wrong = await runConnectionTest(page);
        assert.deepEqual([wrong.state, wrong.cause], ['failed', 'badPassword'], wrong.text);
        assert.match(wrong.text, /^ Bad Redis password\. The sentinels refused the password/);
        await type(page, 'redisSentinelPassword', sentinelPassword);
        const ok = await runConnectionTest(page);
        assert.equal(ok.state, 'ok', ok.text);
        assert.ok(ok.text.includes(`Redis ready through Sentinel: master "custody-master" at 127.0.0.1:${group.masterPort} (3 sentinels)`), ok.text);
        for (const t of [wrong.text, ok.text]) assert.ok(!t.includes(sentinelPassword) && !t.includes(PASSWORD) && !t.includes(WRONG), 'no password in a result');

        const status = await updateAndDeploy(page, red().base, OLD);
        assert.deepEqual([status.state, status.mode, status.master], ['ready', 'sentinel', `127.0.0.1:${group.masterPort}`], `the deployed node reached the master through the sentinels\n${red().log.slice(-2000)}`);

        const deployed = storedFlows(red().userDir);
        assert.ok(!deployed.text.includes(sentinelPassword), 'the sentinel password is not in flows.json');
        const cfg = deployed.nodes.find((n) => n.id === OLD)!;
        assert.equal(cfg.redisMode, 'sentinel');
        assert.equal(cfg.redisSentinels, group.sentinelList);
        assert.equal(cfg.redisMasterName, 'custody-master');
        assert.equal(cfg.redisUrl, 'redis://127.0.0.1:1/0', 'the URL of before, unused in Sentinel mode');
        assert.equal(cfg.redisSentinelPassword, undefined);
        assert.equal(cfg.credentials, undefined);
        await assertCredentialKept(red().base, 'custody-config', OLD, 'redisSentinelPassword', sentinelPassword);
        const credFile = path.join(red().userDir, 'flows_cred.json');
        assert.ok(fs.existsSync(credFile) && !fs.readFileSync(credFile, 'utf8').includes(sentinelPassword), 'encrypted in flows_cred.json');

        // Opened again: Sentinel, the state line names the master, the stored passwords test OK.
        await openConfig(page, OLD);
        assert.equal(await page.inputValue('#node-config-input-redisMode'), 'sentinel');
        assert.equal(await page.inputValue('#node-config-input-redisSentinelPassword'), '__PWRD__');
        assert.equal(await page.getAttribute('#custody-config-coordination-state', 'data-mode'), 'sentinel');
        assert.match((await page.textContent('#custody-config-coordination-state')) ?? '', new RegExp(`^Deployed: Redis ready; Sentinel, master 127\\.0\\.0\\.1:${group.masterPort} since .+; this instance: \\S+\\.$`));
        const stored = await runConnectionTest(page);
        assert.equal(stored.state, 'ok', stored.text);
        await page.click('#node-config-dialog-cancel');
        assert.ok(!red().log.includes(sentinelPassword), 'not in the log');
        assert.deepEqual(errors, []);
      });
    } finally {
      await group.stop();
    }
  });
});
