/**
 * `custody-coreclient-feed` redelivery in the real Node-RED runtime (node-red-node-test-helper)
 * against the built-in simulator: every pending action is sent once unmarked; after a reload of
 * the flows (a restart of the runtime with the same user directory) and after each kind of
 * redeploy (modified nodes, modified flows, full) every action still pending comes again with
 * `msg.redelivered = true`, a new one without it, and no action id is ever sent twice unmarked.
 * The id is in the memory file before its msg arrives; a deleted node deletes its file;
 * CUSTODYFLOW_FEED_DIR moves the folder; a memory file that cannot be opened loses no action and
 * says so (warning naming the file, status).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { sharedSimulator, stopSharedSimulator } from '../../simulator/shared';
import type { Simulator } from '../../simulator';
import { until, control, demoTransfer, useEnv } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { startHelperServer, stopHelperServer } from '../helpers/node-flows';
import { CustodyClient, createTransfer, listActions, rejectAction } from '../../lib';
import { sentIdsFile } from '../../lib/feeds/sent-ids';

helper.init(require.resolve('node-red'));

const nodeModules = [require('../../nodes/custody-config/custody-config'), require('../../nodes/custody-coreclient-feed/custody-coreclient-feed')];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('custody-coreclient-feed: redelivery marked across reloads and redeploys', function () {
  this.timeout(120000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redelivery-sim-'));
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redelivery-user-'));
  // The shared simulator in this file's folder; test/helpers/isolated-dirs.ts moves every feed
  // memory to one folder per test process, here the folder below the user directory is under test.
  // Restored after these tests as they were when they started (other files set them at load).
  useEnv({ CUSTODYFLOW_SIMULATOR_DATA: dataDir, CUSTODYFLOW_FEED_DIR: undefined });
  const h = helper as any;
  let previousSettings: unknown;
  let sim: Simulator;
  let client: CustodyClient;
  let approver: string;
  let exchange: string;

  before(async () => {
    sim = await sharedSimulator(dataDir);
    client = accountClient(sim);
    approver = sim.demo.core_client_id;
    exchange = sim.demo.exchange.client_id;
    // Only this file's actions: clear what the demo left pending.
    for (const c of [approver, exchange]) for (const a of (await listActions(client, { client_id: c })).data.actions) await rejectAction(client, { client_id: c, action_id: a.id });
    await startHelperServer();
    previousSettings = h._settings;
  });
  afterEach(async () => {
    await helper.unload();
    h._settings = previousSettings; // the helper's settings are shared by every test file
  });
  after(async () => {
    client.close();
    await stopHelperServer();
    await stopSharedSimulator();
    for (const d of [dataDir, userDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  /** The flow: feed `feedA` (demo approver, details read) -> helper `outA`; feed `feedX` (exchange core client, no details) -> helper `outX`. */
  function flow(names: { feedA?: string; feedX?: string; outA?: string } = {}, withA = true): object[] {
    return [
      { id: 'tab', type: 'tab', label: 'redelivery' },
      { id: 'cfg', type: 'custody-config', z: 'tab', name: 'simulator', environment: 'simulator', signingMode: 'timestamp', timeout: 30 },
      ...(withA
        ? [
            { id: 'feedA', type: 'custody-coreclient-feed', z: 'tab', name: names.feedA ?? '', connection: 'cfg', clientId: approver, details: true, x: 100, y: 100, wires: [['outA']] },
            { id: 'outA', type: 'helper', z: 'tab', name: names.outA ?? '', x: 300, y: 100, wires: [] },
          ]
        : []),
      { id: 'feedX', type: 'custody-coreclient-feed', z: 'tab', name: names.feedX ?? '', connection: 'cfg', clientId: exchange, details: false, x: 100, y: 200, wires: [['outX']] },
      { id: 'outX', type: 'helper', z: 'tab', x: 300, y: 200, wires: [] },
    ];
  }

  /** What the helpers received, across every deployment: `[action id, redelivered]` per msg, in order. */
  const received = { outA: [] as Array<[string, boolean]>, outX: [] as Array<[string, boolean]> };
  /** Action ids whose id was not yet in the memory file when their msg arrived (must stay empty). */
  const unrecordedAtArrival: string[] = [];
  const attached = new WeakSet<object>();
  const fileOf = (feed: 'feedA' | 'feedX', dir = userDir): string => sentIdsFile(path.join(dir, 'custodyflow', 'feed'), feed, feed === 'feedA' ? approver : exchange);

  /** Collect from the helper nodes running now (a redeploy may have replaced them). */
  function collect(dir = userDir): void {
    for (const [out, feed] of [
      ['outA', 'feedA'],
      ['outX', 'feedX'],
    ] as const) {
      const n = helper.getNode(out);
      if (!n || attached.has(n)) continue;
      attached.add(n);
      n.on('input', (msg: any) => {
        assert.ok(msg.redelivered === undefined || msg.redelivered === true, `redelivered is true or absent, got ${JSON.stringify(msg.redelivered)}`);
        received[out].push([msg.payload.action_id, msg.redelivered === true]);
        const file = fileOf(feed, dir);
        if (!(fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes(JSON.stringify(msg.payload.action_id)))) unrecordedAtArrival.push(msg.payload.action_id);
      });
    }
  }

  /** The last status node `id` set. */
  function statusOf(id: string): { fill?: string; shape?: string; text?: string } | undefined {
    const node = helper.getNode(id) as any;
    const calls = node.status.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === node);
    return calls.length ? calls[calls.length - 1].args[0] : undefined;
  }

  async function connected(...ids: string[]): Promise<void> {
    for (const id of ids) await until(() => (statusOf(id)?.text === 'connected' ? true : undefined), `${id} connected`);
  }

  /** Deploy `nodes` as the editor does with deployment type `type` (full, flows, nodes). */
  async function deploy(nodes: object[], type: 'full' | 'flows' | 'nodes'): Promise<void> {
    // setFlows resolves once the old nodes stopped; the new ones have started at `runtime-deploy`.
    const started = new Promise<void>((resolve) => {
      const on = (e: { id?: string }): void => {
        if (e.id !== 'runtime-deploy') return;
        h._events.off('runtime-event', on);
        resolve();
      };
      h._events.on('runtime-event', on);
    });
    await h._redNodes.setFlows(nodes, null, type);
    await started;
    collect();
  }

  /** Wait until `out` has `count` msgs more than `from`, then a moment for any extra one; return the new ones. */
  async function next(out: 'outA' | 'outX', from: number, count: number, what: string): Promise<Array<[string, boolean]>> {
    await until(() => (received[out].length >= from + count ? true : undefined), what, 30000);
    await sleep(400);
    return received[out].slice(from);
  }

  const sorted = (xs: Array<[string, boolean]>): Array<[string, boolean]> => [...xs].sort((a, b) => a[0].localeCompare(b[0]));
  const marked = (ids: string[]): Array<[string, boolean]> => sorted(ids.map((id) => [id, true]));

  /** The pending action ids of a core client, from the API. */
  async function pending(clientId: string): Promise<string[]> {
    return (await listActions(client, { client_id: clientId })).data.actions.filter((a) => a.status === 'pending').map((a) => a.id);
  }

  async function newTransfer(): Promise<void> {
    await createTransfer(client, demoTransfer(sim, { reference: 'redelivery', send: { symbol: 'BTC-TESTNET', amount: 1000 } }));
  }

  it('sends each action once unmarked; after a reload and after nodes, flows and full redeploys the still pending ones come marked; a deleted node deletes its file', async () => {
    helper.settings({ userDir });
    await helper.load(nodeModules, flow());
    collect();
    await connected('feedA', 'feedX');

    // Four transfers (actions that expire) and a wallet connection request (expireTime 0).
    for (let i = 0; i < 4; i++) await newTransfer();
    const request = await control(sim, '/exchange/connect-request', { client_id: exchange, wallet_id: sim.demo.exchange.wallets['BTC-TESTNET'].wallet_id, customer_email: 'eve@exchange.example', customer_id: 'redelivery-1' });
    const first = await next('outA', 0, 4, 'four actions');
    assert.deepEqual(
      first.map(([, r]) => r),
      [false, false, false, false],
      'first deliveries are unmarked',
    );
    assert.deepEqual(await next('outX', 0, 1, 'the wallet connection request'), [[request.action_id, false]]);
    const recorded = fs.readFileSync(fileOf('feedX'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(
      recorded.map((r) => [r.action_id, r.expireTime]),
      [[request.action_id, 0]],
      'recorded with expireTime 0',
    );
    assert.equal(fs.readFileSync(fileOf('feedA'), 'utf8').trim().split('\n').length, 4);

    // One action is decided meanwhile: it is no longer pending and must not come again.
    await rejectAction(client, { client_id: approver, action_id: first[0][0] });
    let stillPending = await pending(approver);
    assert.equal(stillPending.length, 3);

    // 1. A reload (the runtime stopped and started on the same user directory).
    await helper.unload();
    let a = received.outA.length;
    let x = received.outX.length;
    await helper.load(nodeModules, flow());
    collect();
    assert.deepEqual(sorted(await next('outA', a, 3, 'the three pending actions again')), marked(stillPending));
    assert.deepEqual(await next('outX', x, 1, 'the connection request again'), [[request.action_id, true]]);

    // A new action after the reload: unmarked.
    a = received.outA.length;
    await newTransfer();
    const fresh = await next('outA', a, 1, 'a new action');
    assert.equal(fresh.length, 1);
    assert.equal(fresh[0][1], false, 'a new action comes without redelivered');
    stillPending = await pending(approver);
    assert.equal(stillPending.length, 4);

    // 2. Modified nodes: feedA is changed, feedX is not (it sends nothing again).
    a = received.outA.length;
    x = received.outX.length;
    await deploy(flow({ feedA: 'renamed' }), 'nodes');
    assert.deepEqual(sorted(await next('outA', a, 4, 'modified nodes: the pending actions again')), marked(stillPending));
    assert.equal(received.outX.length, x, 'the unchanged feed node sends nothing again');

    // 3. Modified flows: feedX and outA changed; the changed nodes and those wired to them
    // restart, so feedA (wired to outA) does too.
    a = received.outA.length;
    await deploy(flow({ feedA: 'renamed', feedX: 'renamed', outA: 'renamed' }), 'flows');
    assert.deepEqual(sorted(await next('outA', a, 4, 'modified flows: the pending actions again')), marked(stillPending));
    assert.deepEqual(await next('outX', x, 1, 'modified flows: the connection request again'), [[request.action_id, true]]);

    // 4. Full.
    a = received.outA.length;
    x = received.outX.length;
    await deploy(flow({ feedA: 'renamed', feedX: 'renamed', outA: 'renamed' }), 'full');
    assert.deepEqual(sorted(await next('outA', a, 4, 'full: the pending actions again')), marked(stillPending));
    assert.deepEqual(await next('outX', x, 1, 'full: the connection request again'), [[request.action_id, true]]);

    // A new one after all that: unmarked; then each id was sent exactly once unmarked in total.
    a = received.outA.length;
    await newTransfer();
    assert.equal((await next('outA', a, 1, 'a last new action'))[0][1], false);
    const unmarked = new Map<string, number>();
    for (const [id, r] of [...received.outA, ...received.outX]) if (!r) unmarked.set(id, (unmarked.get(id) ?? 0) + 1);
    assert.equal(unmarked.size, 7, 'four + one + one transfers and the connection request');
    assert.deepEqual([...unmarked.values()], [1, 1, 1, 1, 1, 1, 1], 'no action sent twice unmarked');
    const everSent = new Set([...received.outA, ...received.outX].map(([id]) => id));
    assert.equal(everSent.size, 7);
    assert.ok(!received.outA.slice(4).some(([id]) => id === first[0][0]), 'the decided action never came again');
    assert.deepEqual(unrecordedAtArrival, [], 'every id was in the memory file before its msg arrived');

    // 5. feedA deleted from the flows: its file goes; feedX's stays.
    assert.ok(fs.existsSync(fileOf('feedA')));
    await deploy(flow({ feedX: 'renamed', outA: 'renamed' }, false), 'nodes');
    await until(() => (!fs.existsSync(fileOf('feedA')) ? true : undefined), 'the deleted node’s file removed');
    assert.ok(fs.existsSync(fileOf('feedX')), 'the other node keeps its file');
  });

  it('CUSTODYFLOW_FEED_DIR moves the memory folder', async () => {
    const feedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redelivery-env-'));
    const otherUserDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redelivery-user2-'));
    process.env.CUSTODYFLOW_FEED_DIR = feedDir;
    try {
      helper.settings({ userDir: otherUserDir });
      await helper.load(nodeModules, flow());
      collect();
      await connected('feedA');
      const before = received.outA.length;
      await newTransfer();
      await until(() => (received.outA.length > before ? true : undefined), 'an action');
      assert.ok(fs.readFileSync(sentIdsFile(feedDir, 'feedA', approver), 'utf8').length > 0, 'the memory is in $CUSTODYFLOW_FEED_DIR');
      assert.ok(!fs.existsSync(path.join(otherUserDir, 'custodyflow')), 'nothing below the user directory');
    } finally {
      delete process.env.CUSTODYFLOW_FEED_DIR;
      await helper.unload();
      for (const d of [feedDir, otherUserDir]) fs.rmSync(d, { recursive: true, force: true });
    }
  });

  it('without a usable memory file it sends every action (unmarked), warns once naming the file and shows it in the status', async () => {
    const badDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redelivery-bad-'));
    try {
      fs.writeFileSync(path.join(badDir, 'custodyflow'), 'a file where the folder should be');
      helper.settings({ userDir: badDir });
      await helper.load(nodeModules, flow());
      collect(badDir);
      // Counted from the load: the catch-up may deliver the pending actions before the status below is seen.
      const before = received.outA.length;
      const feed = helper.getNode('feedA') as any;
      const status = await until(() => (statusOf('feedA')?.text?.startsWith('connected ·') ? statusOf('feedA') : undefined), 'feedA connected, with the note');
      const expected = { fill: 'yellow', shape: 'dot', text: status.text };
      assert.match(String(status.text), /^connected · memory file failed: (ENOTDIR|EEXIST)$/);
      assert.deepEqual(status, expected);
      const pendingBefore = await pending(approver);
      await newTransfer();
      const got = await next('outA', before, pendingBefore.length + 1, 'the actions without a memory');
      assert.equal(got.length, pendingBefore.length + 1, 'each pending action once');
      assert.ok(
        got.every(([, r]) => !r),
        'nothing can be marked without the memory',
      );
      const warnings = feed.warn.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === feed).map((c: { args: [string] }) => c.args[0]);
      assert.equal(warnings.length, 1, `one warning: ${JSON.stringify(warnings)}`);
      assert.ok(warnings[0].includes(fileOf('feedA', badDir)), 'the warning names the file');
      assert.match(warnings[0], /actions are still sent/);
    } finally {
      await helper.unload();
      fs.rmSync(badDir, { recursive: true, force: true });
    }
  });
});
