/**
 * `custody-approver` across a real Node-RED restart: a `node-red` process with the pack, the
 * built-in simulator and a flow (core client feed -> approver; inject -> transfer), three
 * transfers clicked, Node-RED stopped (SIGINT) and started again on the same user directory.
 * The feed re-sends the action still pending; the approver recognises it (`redelivered`) and
 * sends nothing; the velocity window rebuilt from the audit file holds a fourth transfer; the
 * audit file has each action decided once and verifies with `custodyflow-audit verify`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type WebSocket from 'ws';
import { DebugMessage, RedProcess, root, sleep, watchDebug } from '../helpers/red-process';

const CFG = 'cfg0000000000001';
/** The flow; every decision is appended to `decisionsFile` as a JSON line (a file node), so none is missed while no sidebar is connected. */
const flowsFor = (decisionsFile: string) => [
  { id: 'tab', type: 'tab', label: 'restart' },
  { id: CFG, type: 'custody-config', environment: 'simulator', signingMode: 'timestamp', timeout: 30 },
  { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: CFG, clientId: 'demo-approver', details: true, x: 100, y: 100, wires: [['ap']] },
  {
    id: 'ap',
    z: 'tab',
    type: 'custody-approver',
    connection: CFG,
    rules: [{ name: 'daily 0.035', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], velocityAmount: '0.035', velocityWindowHours: '24' }],
    defaultDecision: 'hold',
    dryRun: false,
    auditFile: '',
    x: 300,
    y: 100,
    wires: [['record'], ['record'], ['record']],
  },
  { id: 'record', z: 'tab', type: 'change', name: 'payload = decision', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'decision', tot: 'msg' }], x: 500, y: 100, wires: [['file']] },
  { id: 'file', z: 'tab', type: 'file', name: '', filename: decisionsFile, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'none', x: 700, y: 100, wires: [[]] },
  { id: 'send', z: 'tab', type: 'inject', name: 'send', props: [{ p: 'payload' }], payload: '', payloadType: 'date', x: 100, y: 200, wires: [['build']] },
  {
    id: 'build',
    z: 'tab',
    type: 'function',
    name: 'build transfer',
    func: 'msg.payload = { wallet_id: "demo-btc-testnet", counterparty_wallet_address: "demo-counterparty-btc-testnet", benefit_of: "t", account_no: "t", reference: "restart test", partner_txID: "restart-" + msg._msgid, send: { symbol: "BTC-TESTNET", amount: 1500000 } };\nreturn msg;',
    outputs: 1,
    x: 250,
    y: 200,
    wires: [['tx']],
  },
  { id: 'tx', z: 'tab', type: 'custody-transfer', connection: CFG, operation: 'create', company_id: 'demo-company', expiresAfter: '3600', amountFormat: 'baseUnits', x: 400, y: 200, wires: [[]] },
  { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, x: 100, y: 300, wires: [['errors']] },
  { id: 'errors', z: 'tab', type: 'debug', name: 'errors', active: true, tosidebar: true, complete: 'error', targetType: 'msg', x: 300, y: 300, wires: [] },
];

describe('custody-approver across a real Node-RED restart', function () {
  this.timeout(120000);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-approver-restart-out-'));
  const decisionsFile = path.join(outDir, 'decisions.jsonl');
  const red = new RedProcess({ prefix: 'cf-approver-restart-', flows: JSON.stringify(flowsFor(decisionsFile)) });
  let ws: WebSocket | undefined;
  after(async () => {
    ws?.close();
    await red.stop();
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  /** The decisions written so far, in order. */
  const decisions = (): any[] => (fs.existsSync(decisionsFile) ? fs.readFileSync(decisionsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

  async function waitFor(debug: DebugMessage[], what: string, check: () => boolean): Promise<void> {
    const deadline = Date.now() + 30000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; decisions ${JSON.stringify(decisions())}; debug ${debug.map((d) => `${d.name}: ${d.msg}`).join('\n')}\n${red.log.slice(-2000)}`);
      await sleep(100);
    }
  }

  it('re-sends the pending action and nothing is decided twice; the velocity window survives', async () => {
    await red.start();
    let watched = await watchDebug(red.base);
    ws = watched.ws;
    await sleep(1500); // the feed connects
    for (let i = 0; i < 3; i++) {
      assert.equal((await fetch(`${red.base}/inject/send`, { method: 'POST' })).status, 200);
      await sleep(300);
    }
    await waitFor(watched.debug, 'three decisions', () => decisions().length >= 3);
    assert.deepEqual(decisions().map((d) => d.decision).sort(), ['approve', 'approve', 'hold']);
    const held = decisions().find((d) => d.decision === 'hold');
    assert.equal(held.velocity.used, '0.04500045');

    ws.close();
    await red.stop({ keepUserDir: true });
    await red.start();
    watched = await watchDebug(red.base);
    ws = watched.ws;
    await waitFor(watched.debug, 'the re-sent pending action', () => decisions().length >= 4);
    const again = decisions()[3];
    assert.equal(again.redelivered, true);
    assert.equal(again.action_id, held.action_id);
    assert.equal(again.decidedAt, held.decidedAt, 'the earlier decision, not a new one');

    assert.equal((await fetch(`${red.base}/inject/send`, { method: 'POST' })).status, 200);
    await waitFor(watched.debug, 'the fourth transfer decided', () => decisions().length >= 5);
    const fourth = decisions()[4];
    assert.equal(fourth.decision, 'hold');
    assert.equal(fourth.redelivered, undefined);
    assert.equal(fourth.velocity.used, '0.04500045', 'the two approvals from before the restart still count');
    await sleep(500);
    assert.equal(decisions().length, 5, 'nothing else decided');
    assert.deepEqual(watched.debug.filter((d) => d.name === 'errors'), []);

    const file = path.join(red.userDir, 'custodyflow-audit', 'ap.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const decided = lines.filter((l) => l.kind === 'decision').map((l) => l.action_id);
    assert.equal(decided.length, 4);
    assert.equal(new Set(decided).size, 4, 'each action decided once');
    assert.match(execFileSync(process.execPath, [path.join(root, 'dist', 'lib', 'audit', 'cli.js'), 'verify', file], { encoding: 'utf8' }), /^ok: 6 lines/);
  });
});
