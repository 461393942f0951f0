/**
 * End to end: a real `node-red` process with the pack installed in its user directory (as
 * `npm start` does), the example flows deployed through the admin API, and the example
 * transfer seen reaching `approved_transfer` in the debug messages on `/comms`.
 *
 * By default it runs the project's Node-RED (4.1) on this Node. To check another pair, e.g.
 * Node-RED 5 on Node 22, set CUSTODYFLOW_E2E_NODE (a node binary) and CUSTODYFLOW_E2E_RED
 * (a red.js) and run `npx mocha dist/test/e2e/e2e.test.js`.
 */
import assert from 'node:assert/strict';
import { spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DebugMessage, freePort, root, waitUntilUp, watchDebug } from '../helpers/red-process';
import { useRedProcess, withEditor } from '../helpers/editor-kit';
import { rsaKeyPair } from '../helpers/red-setup';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { mergeExamples } = require(path.join(root, 'scripts', 'examples.js'));

/**
 * Run in the editor page (`page.evaluate(installDialogWalk)`): installs
 * `window.walkOperationDialogs(nodes, openMs)`, which opens each node's edit dialog, waits
 * `openMs` ms, selects each of its operations in turn (30 ms apart), reads the operation tip,
 * and cancels the dialog. It resolves to `[{ type, options: [{ operation, tip }] }]` in the
 * nodes' order (`options` empty for a node without an operation select).
 */
function installDialogWalk(): void {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  (window as any).walkOperationDialogs = async (nodes: any[], openMs: number) => {
    const RED = (window as any).RED;
    const walked: Array<{ type: string; options: Array<{ operation: string; tip: string }> }> = [];
    for (const n of nodes) {
      RED.editor.edit(n);
      await sleep(openMs);
      const options: Array<{ operation: string; tip: string }> = [];
      const select = document.querySelector('#node-input-operation') as HTMLSelectElement | null;
      for (const o of select ? Array.from(select.options) : []) {
        select!.value = o.value;
        select!.dispatchEvent(new Event('change', { bubbles: true }));
        await sleep(30);
        options.push({ operation: o.value, tip: document.querySelector('#custody-operation-tip')?.textContent ?? '' });
      }
      walked.push({ type: n.type, options });
      (document.querySelector('#node-dialog-cancel') as HTMLElement).click();
      await sleep(300);
    }
    return walked;
  };
}

describe('end to end: node-red with the pack and the example flows', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-e2e-', runtimeFromEnv: true });
  let base = '';

  before(() => {
    base = red().base;
  });

  it('loads every node of the pack', async () => {
    const settings = (await (await fetch(`${base}/settings`)).json()) as { version: string };
    console.log(`      (Node-RED ${settings.version} on Node ${process.env.CUSTODYFLOW_E2E_NODE ? 'from CUSTODYFLOW_E2E_NODE' : process.version})`);
    const res = await fetch(`${base}/nodes`, { headers: { accept: 'application/json' } });
    const sets = (await res.json()) as Array<{ module: string; types: string[]; enabled: boolean; err?: string }>;
    const ours = sets.filter((s) => s.module === '@custodyflow/node-red-custody');
    const types = ours.flatMap((s) => s.types).sort();
    assert.deepEqual(types, [
      'custody-action',
      'custody-approver',
      'custody-assets',
      'custody-company',
      'custody-config',
      'custody-core-client',
      'custody-coreclient-feed',
      'custody-fund',
      'custody-hub-feed',
      'custody-liquidity-hub',
      'custody-policy',
      'custody-portfolio',
      'custody-read',
      'custody-request',
      'custody-review',
      'custody-swap-make',
      'custody-swap-take',
      'custody-sweep',
      'custody-track',
      'custody-transfer',
      'custody-trusted-party',
      'custody-wallets-feed',
      'custody-withdraw',
    ]);
    for (const s of ours) assert.equal(s.err, undefined, `${s.types}: ${s.err}`);
  });

  it('deploys the examples and the transfer reaches approved_transfer through the automated approver', async () => {
    const { debug, ws } = await watchDebug(base);

    const flows = mergeExamples(path.join(root, 'examples'));
    const deployed = await fetch(`${base}/flows`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.status, 204, await deployed.text());
    // Click the example's inject, as a user does (nothing is sent on deploy).
    await new Promise((r) => setTimeout(r, 1000)); // the feed connects
    assert.equal((await fetch(`${base}/inject/02a5c0de0000000b`, { method: 'POST' })).status, 200);

    const deadline = Date.now() + 60000;
    let approved: DebugMessage | undefined;
    while (!approved && Date.now() < deadline) {
      approved = debug.find((d) => d.name === 'transfer final' && (d.msg ?? '').includes('approved_transfer'));
      if (!approved) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(approved, `no "transfer final" debug message; saw: ${debug.map((d) => d.name).join(', ')}\n${red().log.slice(-3000)}`);
    const msg = JSON.parse(approved.msg!);
    const tx = msg.payload ?? msg;
    assert.equal(tx.txStatus, 'approved_transfer');
    assert.equal(tx.approvedCount, tx.thresholdRequired);
    // The approver's own msg leaves after the API answered its PUT; the transfer can be seen
    // approved (wallets feed, then a read) before that msg reaches the debug sidebar.
    let decided: DebugMessage | undefined;
    const decidedBy = Date.now() + 10000;
    while (!decided && Date.now() < decidedBy) {
      decided = debug.find((d) => d.name === 'transfer approved (msg.decision)');
      if (!decided) await new Promise((r) => setTimeout(r, 100));
    }
    ws.close();
    assert.ok(decided, `the approver approved an action; saw: ${debug.map((d) => d.name).join(', ')}`);
    assert.equal(JSON.parse(decided.msg!).rule.name, 'up to 1 BTC-TESTNET to the counterparty, 1.5 a day');
    assert.ok(!debug.some((d) => /errPartnerAuth/.test(d.msg ?? '')), 'no signature error anywhere');
  });

  it('editor: every node is in the palette with help text, and every edit dialog opens without a script error', async function () {
    const types = [
      'custody-config', 'custody-assets', 'custody-company', 'custody-trusted-party', 'custody-fund',
      'custody-transfer', 'custody-core-client', 'custody-action', 'custody-coreclient-feed',
      'custody-hub-feed', 'custody-wallets-feed',
      'custody-policy', 'custody-portfolio',
      'custody-withdraw', 'custody-swap-make', 'custody-swap-take', 'custody-liquidity-hub', 'custody-sweep', 'custody-read', 'custody-request',
      'custody-track', 'custody-approver', 'custody-review',
    ];
    // Node definitions register as their scripts load (each .html loads resources/custody-editor.js first).
    await withEditor(base, { width: 1600, height: 1000 }, { types }, async ({ page, errors }) => {
      const palette = await page.evaluate((t: string[]) => {
        const RED = (window as any).RED;
        return t.map((type) => ({ type, category: RED.nodes.getType(type)?.category, help: (RED.nodes.getNodeHelp(type) || '').length }));
      }, types);
      for (const p of palette) {
        assert.equal(p.category, p.type === 'custody-config' ? 'config' : 'custody', p.type);
        assert.ok(p.help > 200, `${p.type} has help text`);
      }
      // Open the edit dialog of every custody node of the examples, switching through its operations.
      await page.evaluate(installDialogWalk);
      const opened = await page.evaluate(async () => {
        const RED = (window as any).RED;
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        const nodes: any[] = [];
        RED.nodes.eachNode((n: any) => {
          if (n.type.startsWith('custody-')) nodes.push(n);
        });
        const walked: Array<{ type: string }> = await (window as any).walkOperationDialogs(nodes, 400);
        const seen = walked.map((w) => w.type);
        // The rows and tip of an operation come from the runtime's declarations.
        const transferNode = nodes.find((n) => n.type === 'custody-transfer' && n.operation === 'create');
        RED.editor.edit(transferNode);
        await sleep(600);
        const shown = Array.from(document.querySelectorAll('.custody-row'))
          .filter((r) => (r as HTMLElement).offsetParent !== null)
          .map((r) => r.getAttribute('data-property'));
        const tip = document.querySelector('#custody-operation-tip')?.textContent ?? '';
        const label = RED.utils.getNodeLabel(transferNode);
        (document.querySelector('#node-dialog-cancel') as HTMLElement).click();
        await sleep(300);
        // The config node: credentials rows show for a hosted environment, hide for the simulator.
        RED.editor.editConfig('', 'custody-config', RED.nodes.node('c0ffee0000000001') ? 'c0ffee0000000001' : undefined, 'node-input');
        await sleep(500);
        const env = document.querySelector('#node-config-input-environment') as HTMLSelectElement;
        const visible = (id: string) => {
          const el = document.querySelector(id) as HTMLElement | null;
          return !!el && el.offsetParent !== null;
        };
        env.value = 'sandbox';
        env.dispatchEvent(new Event('change', { bubbles: true }));
        await sleep(100);
        const sandboxShowsKey = visible('#node-config-input-apiKey') && visible('#node-config-input-privateKey');
        env.value = 'simulator';
        env.dispatchEvent(new Event('change', { bubbles: true }));
        await sleep(100);
        const simulatorHidesKey = !visible('#node-config-input-apiKey') && !visible('#node-config-input-privateKey');
        return { seen, sandboxShowsKey, simulatorHidesKey, shown, tip, label };
      });
      assert.ok(opened.seen.length >= 8, `opened ${opened.seen.join(', ')}`);
      assert.deepEqual(opened.shown, ['company_id', 'wallet_id', 'counterparty_wallet_address', 'sendAsset', 'sendAmount', 'amountFormat', 'reference', 'benefit_of', 'account_no', 'partnerTxId', 'expiresAfter']);
      assert.match(opened.tip, /POST \/company\/\{company_id\}\/transfer/);
      assert.match(opened.tip, /send\.amount/);
      assert.match(opened.tip, /partner_txID is required/);
      assert.equal(opened.label, 'transfer: create');
      assert.ok(opened.sandboxShowsKey, 'a hosted environment asks for the API key and private key');
      assert.ok(opened.simulatorHidesKey, 'the simulator needs no credentials');
      assert.deepEqual(errors, []);
    });
  });

  it('editor: the dialog of every operation node opens on each operation with its tip (nodes not in the examples too)', async function () {
    const types = ['custody-fund', 'custody-core-client', 'custody-action', 'custody-withdraw', 'custody-swap-make', 'custody-swap-take', 'custody-liquidity-hub', 'custody-sweep', 'custody-read', 'custody-request'];
    await withEditor(base, { width: 1600, height: 1000 }, { types }, async ({ page, errors }) => {
      await page.evaluate(installDialogWalk);
      const result = await page.evaluate(async (t: string[]) => {
        const RED = (window as any).RED;
        const ids = t.map((_type, i) => `e2e0000000000${String(i).padStart(3, '0')}`);
        RED.view.importNodes(t.map((type, i) => ({ id: ids[i], type, x: 200, y: 100 + 60 * i, z: RED.workspaces.active(), wires: [[]] })));
        await new Promise((r) => setTimeout(r, 300));
        const nodes: any[] = ids.map((id) => RED.nodes.node(id)).filter(Boolean);
        const walked: Array<{ type: string; options: Array<{ operation: string; tip: string }> }> = await (window as any).walkOperationDialogs(nodes, 500);
        return walked.flatMap((w) => (w.options.length ? w.options.map((o) => ({ type: w.type, ...o })) : [{ type: w.type, operation: '', tip: '' }]));
      }, types);
      assert.deepEqual([...new Set(result.map((r) => r.type))].sort(), [...types].sort(), 'every dialog opened');
      for (const r of result.filter((x) => x.type !== 'custody-request')) {
        if (r.operation === 'msg.operation') assert.match(r.tip, /^Reads the operation from msg\.operation, one of: /, `${r.type}: from msg.operation lists the operations`);
        else assert.match(r.tip, /^Calls (GET|POST|PUT|DELETE) \//, `${r.type}.${r.operation} shows its call`);
      }
      const tipOf = (type: string, operation: string) => result.find((r) => r.type === type && r.operation === operation)?.tip ?? '';
      assert.match(tipOf('custody-sweep', 'status'), /POST \/coreclient\/\{client_id\}\/sweep\/tx_id/);
      assert.match(tipOf('custody-fund', 'ledger'), /direction=/);
      assert.match(tipOf('custody-swap-make', 'make'), /receive\.amount/);
      assert.deepEqual(errors, []);
    });
  });

  it('keeps credentials out of flows.json, and encrypted in flows_cred.json', async () => {
    const pem = rsaKeyPair('pkcs8').privateKey;
    const apiKey = 'ZTJlLWFwaS1rZXktbm90LXJlYWw=';
    const flows = [
      ...mergeExamples(path.join(root, 'examples')),
      { id: 'e2ec0f1900000001', type: 'custody-config', name: 'hosted', environment: 'custom', baseUrl: 'https://custody.example.test/api/v1/p', signingMode: 'timestamp', timeout: 30, credentials: { apiKey, privateKey: pem } },
    ];
    const deployed = await fetch(`${base}/flows`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.status, 204, await deployed.text());
    const flowsJson = fs.readFileSync(path.join(red().userDir, 'flows.json'), 'utf8');
    assert.ok(flowsJson.includes('e2ec0f1900000001'), 'the hosted config node was saved');
    assert.ok(!flowsJson.includes(apiKey) && !flowsJson.includes('PRIVATE KEY'), 'no credential in flows.json');
    const creds = JSON.parse(fs.readFileSync(path.join(red().userDir, 'flows_cred.json'), 'utf8'));
    assert.deepEqual(Object.keys(creds), ['$'], 'flows_cred.json holds one encrypted blob');
    assert.ok(!JSON.stringify(creds).includes(apiKey));
    // The editor gets "has a value" back for a password credential, never the value.
    const editorView = await (await fetch(`${base}/credentials/custody-config/e2ec0f1900000001`)).json();
    assert.ok(!JSON.stringify(editorView).includes(apiKey) && !JSON.stringify(editorView).includes('PRIVATE KEY'));
    assert.equal((editorView as { has_apiKey?: boolean }).has_apiKey, true);
    assert.ok(!red().log.includes(apiKey) && !red().log.includes('PRIVATE KEY'), 'no credential in the Node-RED log');
  });
});

describe('npm start (scripts/start.js), as the README runs it', function () {
  this.timeout(120000);
  let userDir: string;
  let started: ChildProcess | undefined;
  let log = '';

  after(async () => {
    if (started && started.exitCode === null) started.kill('SIGKILL');
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  it('installs the pack, deploys the examples, approves the example transfer, and stops on SIGINT', async () => {
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-start-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), NODE_RED_USER_DIR: userDir };
    delete env.CUSTODYFLOW_SIMULATOR_DATA;
    started = spawn(process.execPath, [path.join(root, 'scripts', 'start.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout!.on('data', (d) => (log += d));
    started.stderr!.on('data', (d) => (log += d));
    await waitUntilUp(`${base}/flows`, 'npm start did not come up', () => log);
    const flows = (await (await fetch(`${base}/flows`, { headers: { accept: 'application/json' } })).json()) as Array<{ type: string; label?: string }>;
    assert.equal(flows.filter((n) => n.type === 'tab').length, fs.readdirSync(path.join(root, 'examples')).filter((f) => f.endsWith('.json')).length, 'one tab per example');
    assert.ok(fs.lstatSync(path.join(userDir, 'node_modules', '@custodyflow', 'node-red-custody')).isSymbolicLink());
    assert.equal(fs.statSync(userDir).mode & 0o077, 0, 'the user directory (credentials and their key) is private');

    const { debug, ws } = await watchDebug(base);
    // Click the example's inject, as a user does (nothing is sent on start).
    assert.equal((await fetch(`${base}/inject/02a5c0de0000000b`, { method: 'POST' })).status, 200);
    const until = Date.now() + 30000;
    while (!debug.some((d) => d.name === 'transfer final') && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    ws.close();
    assert.ok(debug.some((d) => d.name === 'transfer final' && (d.msg ?? '').includes('approved_transfer')), `saw ${debug.map((d) => d.name).join(', ')}`);
    assert.ok(fs.existsSync(path.join(userDir, 'custodyflow-simulator', 'state.json')), 'the simulator keeps its state in the user directory');

    const exited = new Promise<number | null>((r) => started!.once('exit', (code) => r(code)));
    started.kill('SIGINT');
    assert.equal(await exited, 0);
  });
});
