/**
 * The lazy simulator (the palette loads nothing it does not use; docs/performance.md, the footprint
 * group): a started `node-red` process with the pack, preloaded with
 * test/helpers/loaded-modules-probe.ts (`NODE_OPTIONS=--require`), which writes every module the
 * process loaded when it exits.
 *
 * - Flows with a custody-config in custom-URL mode (a real simulator started by this test, on a
 *   real socket) and operation and feed nodes that work against it: no module under
 *   dist/simulator/ and not `router` is loaded.
 * - Flows with a custody-config using the built-in simulator: the simulator is loaded, starts,
 *   and answers the same operation.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type WebSocket from 'ws';
import { DebugMessage, RedProcess, sleep, watchDebug } from '../helpers/red-process';
import { deployFlows, probedRed, stopAndReadModules } from '../helpers/loaded-modules';
import { startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';

const CFG = 'cfg00000000lazy1';

/** A module path under the pack's compiled simulator folder. */
const SIMULATOR_MODULE = /[\\/]dist[\\/]simulator[\\/]/;
/**
 * A code module of the `router` package (the simulator's HTTP router). Its package.json alone
 * does not count: Node-RED's registry reads the package.json of every module it scans.
 */
const ROUTER_MODULE = /[\\/]node_modules[\\/]router[\\/].*\.js$/;

/**
 * The flows: `cfg` (the given settings), an inject -> custody-assets (list) -> debug, an inject ->
 * custody-core-client (list the core clients) -> debug, and a liquidity hub feed -> debug.
 */
function flowsFor(config: object): object[] {
  const debug = (id: string, y: number) => ({ id, z: 'tab', type: 'debug', name: id, active: true, tosidebar: true, console: false, complete: 'payload', targetType: 'msg', x: 500, y, wires: [] });
  return [
    { id: 'tab', type: 'tab', label: 'lazy simulator' },
    { id: CFG, type: 'custody-config', signingMode: 'timestamp', timeout: 30, ...config },
    { id: 'goAssets', z: 'tab', type: 'inject', name: 'assets', props: [{ p: 'payload' }], payload: '', payloadType: 'date', x: 100, y: 100, wires: [['assets']] },
    { id: 'assets', z: 'tab', type: 'custody-assets', connection: CFG, operation: 'assets', x: 300, y: 100, wires: [['dAssets']] },
    debug('dAssets', 100),
    { id: 'goClients', z: 'tab', type: 'inject', name: 'clients', props: [{ p: 'payload' }], payload: '', payloadType: 'date', x: 100, y: 200, wires: [['clients']] },
    { id: 'clients', z: 'tab', type: 'custody-core-client', connection: CFG, operation: 'list', company_id: 'demo-company', x: 300, y: 200, wires: [['dClients']] },
    debug('dClients', 200),
    { id: 'hub', z: 'tab', type: 'custody-hub-feed', connection: CFG, x: 100, y: 300, wires: [['dHub']] },
    debug('dHub', 300),
  ];
}

/** Press inject node `id`. */
async function click(red: RedProcess, id: string): Promise<void> {
  assert.equal((await fetch(`${red.base}/inject/${id}`, { method: 'POST' })).status, 200);
}

/** Wait (30 s at most) for a debug message of node `name` (not a log line). */
async function debugOf(red: RedProcess, debug: DebugMessage[], name: string): Promise<DebugMessage> {
  const deadline = Date.now() + 30000;
  for (;;) {
    const m = debug.find((d) => d.name === name && d.level === undefined);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`no debug message of ${name}; debug: ${JSON.stringify(debug).slice(0, 2000)}\n${red.log.slice(-2000)}`);
    await sleep(100);
  }
}

/** Wait (30 s at most) until `status` holds a status of node `id` whose text matches `re`. */
async function statusOf(red: RedProcess, status: Map<string, { text?: string }>, id: string, re: RegExp): Promise<void> {
  const deadline = Date.now() + 30000;
  while (!re.test(status.get(id)?.text ?? '')) {
    if (Date.now() > deadline) throw new Error(`status of ${id}: ${JSON.stringify(status.get(id))}\n${red.log.slice(-2000)}`);
    await sleep(100);
  }
}

describe('the built-in simulator is loaded only when a config node uses it', function () {
  this.timeout(120000);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-lazy-out-'));
  let account: SimulatedAccount;
  const reds: RedProcess[] = [];
  const sockets: WebSocket[] = [];

  before(async () => {
    account = await startSimulated('cf-lazy-sim-');
  });
  after(async () => {
    sockets.forEach((s) => s.close());
    for (const red of reds) await red.stop();
    if (account) await stopSimulated(account);
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  it('custom URL mode: the operations and the feed work, and no simulator module (nor router) is loaded', async () => {
    const probed = probedRed(path.join(outDir, 'custom.txt'), { prefix: 'cf-lazy-red-' });
    const { red } = probed;
    reds.push(red);
    await red.start();
    const status = new Map<string, { text?: string; fill?: string }>();
    const { debug, ws } = await watchDebug(red.base, status);
    sockets.push(ws);
    const { sim } = account;
    await deployFlows(red, flowsFor({ environment: 'custom', baseUrl: sim.baseUrl, credentials: { apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem } }));
    await sleep(300);
    await click(red, 'goAssets');
    await click(red, 'goClients');
    const assets = await debugOf(red, debug, 'dAssets');
    assert.match(String(assets.msg), /BTC-TESTNET/, `assets: ${assets.msg}`);
    const clients = await debugOf(red, debug, 'dClients');
    assert.match(String(clients.msg), /demo-approver/, `core clients: ${clients.msg}`);
    await statusOf(red, status, 'hub', /connected/);

    const modules = await stopAndReadModules(probed);
    // The probe saw the pack: its config node, lib, the transport and the feed's websocket.
    assert.ok(modules.some((m) => /[\\/]dist[\\/]nodes[\\/]custody-config[\\/]custody-config\.js$/.test(m)), 'the config node module is in the list');
    assert.ok(modules.some((m) => /[\\/]dist[\\/]lib[\\/]index\.js$/.test(m)), 'lib is in the list');
    assert.deepEqual(modules.filter((m) => SIMULATOR_MODULE.test(m)), [], 'no simulator module is loaded');
    assert.deepEqual(modules.filter((m) => ROUTER_MODULE.test(m)), [], 'router is not loaded');
  });

  it('built-in simulator mode: the simulator is loaded, starts and answers', async () => {
    const probed = probedRed(path.join(outDir, 'builtin.txt'), { prefix: 'cf-lazy-red-' });
    const { red } = probed;
    reds.push(red);
    await red.start();
    const { debug, ws } = await watchDebug(red.base);
    sockets.push(ws);
    await deployFlows(red, flowsFor({ environment: 'simulator' }));
    await sleep(300);
    await click(red, 'goAssets');
    const assets = await debugOf(red, debug, 'dAssets');
    assert.match(String(assets.msg), /BTC-TESTNET/, `assets: ${assets.msg}`);

    const modules = await stopAndReadModules(probed);
    assert.ok(modules.some((m) => /[\\/]dist[\\/]simulator[\\/]shared\.js$/.test(m)), 'simulator/shared is loaded');
    assert.ok(modules.some((m) => /[\\/]dist[\\/]simulator[\\/]index\.js$/.test(m)), 'simulator/index is loaded');
  });
});
