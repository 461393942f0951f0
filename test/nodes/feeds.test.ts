/**
 * The liquidity hub feed and the wallets feed (spec section 6), end to end over real sockets:
 * the simulator's websocket endpoints, lib HubFeed / WalletsFeed (signed handshake, reconnect
 * after a drop), and the custody-hub-feed / custody-wallets-feed nodes in the real Node-RED
 * runtime (node-red-node-test-helper).
 *
 * The messages are produced by emitting the simulator engine's `hub` and `walletTx` events
 * (Simulator.engine), exactly what the business rules emit when a quote is published or a
 * balance moves; the feeds send them after the state is written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import helper from 'node-red-node-test-helper';
import { sharedSimulator, stopSharedSimulator } from '../../simulator/shared';
import type { Simulator } from '../../simulator';
import { until, control } from '../helpers/support';
import { accountClient } from '../helpers/simulated';
import { loadCollecting } from '../helpers/node-flows';
import { redNodes, rsaKeyPair, useHelperServer } from '../helpers/red-setup';
import { CustodyClient, type HubFeedMessage, type WalletFeedMessage } from '../../lib';
import { HubFeed, WalletsFeed, CoreClientFeed, type FeedState } from '../../lib/feeds';

const nodeModules = redNodes(['custody-config', 'custody-hub-feed', 'custody-wallets-feed'], []);

/**
 * Every value `emitter` emits as `event` from now on, in order.
 * @returns the array they are pushed to.
 */
function collect<T>(emitter: { on(event: string, listener: (value: T) => void): unknown }, event: string): T[] {
  const seen: T[] = [];
  emitter.on(event, (value: T) => seen.push(value));
  return seen;
}

/** A hub feed message for a fresh swap id. */
function quote(): HubFeedMessage & { txID: string; status: string } {
  return { txID: `swap-${randomUUID()}`, status: 'taker_pending' };
}

/**
 * A wallets feed message (the shape observed on the real service, docs/nodes.md "The liquidity hub
 * and wallets feeds") of `walletId` with a fresh tx id; negative amounts: outgoing.
 */
function walletTx(walletId: string, amount = 1500, asset = 'BTC-TESTNET'): WalletFeedMessage {
  const fee = amount < 0 ? -2 : 0;
  return {
    Status: 'confirmed',
    amount,
    asset,
    chain_tx_id: `chain-${randomUUID()}`,
    fee,
    net_amount: amount - fee,
    sweep_tx: false,
    timestamp: Math.floor(Date.now() / 1000),
    tx_id: `tx-${randomUUID()}`,
    wallet_id: walletId,
  };
}

/** Open a raw websocket with `headers` and resolve with the refused handshake's HTTP status and body (rejects if it opens). */
function refusedHandshake(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.terminate();
      reject(new Error(`${url}: the handshake was accepted`));
    });
    ws.on('error', () => undefined);
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        ws.terminate();
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
      });
    });
  });
}

describe('liquidity hub and wallets feeds (spec section 6)', function () {
  this.timeout(60000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-feeds-'));
  const previousDataEnv = process.env.CUSTODYFLOW_SIMULATOR_DATA;
  let sim: Simulator;
  let client: CustodyClient;

  before(async () => {
    // The config nodes below use the built-in (shared) simulator: this one.
    process.env.CUSTODYFLOW_SIMULATOR_DATA = dataDir;
    sim = await sharedSimulator(dataDir);
    client = accountClient(sim);
  });

  after(async () => {
    client.close();
    await stopSharedSimulator();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (previousDataEnv === undefined) delete process.env.CUSTODYFLOW_SIMULATOR_DATA;
    else process.env.CUSTODYFLOW_SIMULATOR_DATA = previousDataEnv;
  });

  describe('lib HubFeed and WalletsFeed against the simulator', () => {
    it('HubFeed emits one quote per published quote, WalletsFeed one transaction per movement, to every socket of the account', async () => {
      const hub = new HubFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
      const walletsA = new WalletsFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
      const walletsB = new WalletsFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
      const core = new CoreClientFeed(client, sim.demo.core_client_id, { minDelayMs: 50, maxDelayMs: 200 });
      const quotes = collect<HubFeedMessage>(hub, 'quote');
      const txA = collect<WalletFeedMessage>(walletsA, 'transaction');
      const txB = collect<WalletFeedMessage>(walletsB, 'transaction');
      const actions: unknown[] = [];
      const errors: Error[] = [];
      for (const f of [hub, walletsA, walletsB]) f.on('error', (e: Error) => errors.push(e));
      try {
        assert.equal(hub.url, sim.baseUrl.replace(/^http/, 'ws') + '/liquidityhub/feed');
        assert.equal(walletsA.url, sim.baseUrl.replace(/^http/, 'ws') + '/wallets/feed');
        for (const f of [hub, walletsA, walletsB, core]) f.start();
        await until(() => ([hub, walletsA, walletsB, core].every((f) => f.state === 'connected') ? true : undefined), 'all connected');
        // The core client feed may replay pending actions; count only from here.
        core.on('action', (a: unknown) => actions.push(a));

        const q1 = quote();
        const q2 = quote();
        const out = walletTx(sim.demo.wallets['BTC-TESTNET'].wallet_id, -250000);
        const inn = walletTx(sim.demo.wallets['ETH-TESTNET'].wallet_id, 40000, 'ETH-TESTNET');
        sim.engine.emit('hub', q1);
        sim.engine.emit('walletTx', out);
        sim.engine.emit('hub', q2);
        sim.engine.emit('walletTx', inn);

        await until(() => (quotes.length >= 2 && txA.length >= 2 && txB.length >= 2 ? true : undefined), 'two quotes and two transactions on each wallets feed');
        assert.deepEqual(quotes, [q1, q2], 'the hub feed sends {txID, status} as published, in order');
        assert.deepEqual(txA, [out, inn], 'the wallets feed sends each movement as is, in order');
        assert.deepEqual(txB, [out, inn], 'every wallets socket of the account gets every movement');
        assert.ok(txA[0].amount < 0 && txA[0].net_amount < 0, 'outgoing amounts are negative');
        assert.deepEqual(actions, [], 'hub and wallet messages do not reach the core client feed');
        assert.deepEqual(errors, []);
      } finally {
        await Promise.all([hub.stop(), walletsA.stop(), walletsB.stop(), core.stop()]);
      }
      assert.equal(hub.state, 'stopped');
    });

    it('reconnects after POST /_simulator/feeds/drop (which drops every kind of feed) and receives again; no catch-up of the gap', async () => {
      const hub = new HubFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
      const wallets = new WalletsFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
      const hubStates = collect<FeedState>(hub, 'state');
      const walletStates = collect<FeedState>(wallets, 'state');
      const quotes = collect<HubFeedMessage>(hub, 'quote');
      const txs = collect<WalletFeedMessage>(wallets, 'transaction');
      try {
        hub.start();
        wallets.start();
        await until(() => (hub.state === 'connected' && wallets.state === 'connected' ? true : undefined), 'connected');
        assert.equal((await control(sim, '/feeds/drop')).dropped, 2, 'the hub socket and the wallets socket');
        await until(() => (hubStates.includes('disconnected') && walletStates.includes('disconnected') ? true : undefined), 'disconnected');
        await until(
          () => (hubStates.lastIndexOf('connected') > hubStates.indexOf('disconnected') && walletStates.lastIndexOf('connected') > walletStates.indexOf('disconnected') ? true : undefined),
          'reconnected',
        );
        assert.deepEqual(quotes, [], 'nothing is replayed on reconnect');
        assert.deepEqual(txs, []);
        const q = quote();
        const t = walletTx(sim.demo.wallets['BTC-TESTNET'].wallet_id);
        sim.engine.emit('hub', q);
        sim.engine.emit('walletTx', t);
        await until(() => (quotes.length && txs.length ? true : undefined), 'messages after the reconnect');
        assert.deepEqual(quotes, [q]);
        assert.deepEqual(txs, [t]);
      } finally {
        await Promise.all([hub.stop(), wallets.stop()]);
      }
      await new Promise((r) => setTimeout(r, 300)); // time for a stale loop to reconnect
      assert.equal((await control(sim, '/feeds/drop')).dropped, 0, 'nothing reconnects after stop()');
    });

    it('sends nothing while the deliver fault is set', async () => {
      const hub = new HubFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
      const quotes = collect<HubFeedMessage>(hub, 'quote');
      try {
        hub.start();
        await until(() => (hub.state === 'connected' ? true : undefined), 'connected');
        await control(sim, '/feeds/faults', { deliver: false });
        sim.engine.emit('hub', quote());
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(quotes, [], 'the message was lost (fault injected)');
        await control(sim, '/feeds/faults', { deliver: true });
        const q = quote();
        sim.engine.emit('hub', q);
        await until(() => quotes[0], 'a message once delivery is back');
        assert.deepEqual(quotes, [q]);
      } finally {
        await control(sim, '/feeds/faults', { replayOnConnect: true, deliver: true });
        await hub.stop();
      }
    });

    it('refuses an unsigned or badly signed upgrade with 401 and a section 7 body; an unknown feed path with 404', async () => {
      const wsBase = sim.baseUrl.replace(/^http/, 'ws');
      for (const feedPath of ['/liquidityhub/feed', '/wallets/feed']) {
        const url = wsBase + feedPath;
        const unsigned = await refusedHandshake(url, {});
        assert.equal(unsigned.status, 401);
        assert.deepEqual(unsigned.body, { code: 401, msg: 'errPartnerAuth', detail: { reason: 'empty token' } });

        const noSign = await refusedHandshake(url, { 'x-api-key': sim.account.apiKey, 'x-timestamp': String(Math.floor(Date.now() / 1000)) });
        assert.equal(noSign.status, 401);
        assert.equal(noSign.body.detail.reason, 'signature');

        const otherKey = rsaKeyPair('pkcs8').privateKey;
        const wrong = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: otherKey });
        const badlySigned = await refusedHandshake(url, await wrong.feedHeaders(url));
        wrong.close();
        assert.equal(badlySigned.status, 401);
        assert.deepEqual(badlySigned.body, { code: 401, msg: 'errPartnerAuth', detail: { reason: 'signature' } });

        // Signed for another URL: the signature covers the feed URL.
        const forOther = await refusedHandshake(url, await client.feedHeaders(wsBase + '/coreclient/x/feed'));
        assert.equal(forOther.status, 401);
      }
      const unknown = await refusedHandshake(wsBase + '/swaps/feed', await client.feedHeaders(wsBase + '/swaps/feed'));
      assert.equal(unknown.status, 404);
    });

    it('a HubFeed with the wrong key reports the refused handshake and keeps retrying', async () => {
      const otherKey = rsaKeyPair('pkcs8').privateKey;
      const wrong = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: otherKey });
      const hub = new HubFeed(wrong, { minDelayMs: 20, maxDelayMs: 50 });
      const errors = collect<Error>(hub, 'error');
      const states = collect<FeedState>(hub, 'state');
      hub.start();
      try {
        await until(() => (errors.length >= 2 ? true : undefined), 'two refused attempts');
        assert.match(errors[0].message, /HTTP 401/);
        assert.ok(states.includes('disconnected'), 'a refused attempt shows as disconnected');
        assert.ok(!states.includes('connected'), 'never connected');
      } finally {
        await hub.stop();
        wrong.close();
      }
    });
  });

  describe('custody-hub-feed and custody-wallets-feed in the Node-RED runtime', () => {
    const TAB = { id: 'tab', type: 'tab', label: 'feeds' };
    const CONFIG = { id: 'cfg', type: 'custody-config', z: 'tab', name: 'simulator', environment: 'simulator', signingMode: 'timestamp', timeout: 30 };
    /** Every msg each helper node received since the flow was loaded, by helper node id. */
    const inbox = new Map<string, any[]>();

    useHelperServer();

    /** Load a flow (flow nodes get x/y) and collect what its helper nodes receive. */
    async function load(nodes: object[]): Promise<void> {
      const flow = [TAB, CONFIG, ...nodes.map((n) => ({ x: 100, y: 100, z: 'tab', ...n }))];
      await loadCollecting(nodeModules, flow, {}, inbox);
    }

    /** The last status node `id` set (the helper spies on Node.prototype.status, shared by all nodes). */
    function statusOf(id: string): { fill?: string; shape?: string; text?: string } | undefined {
      const node = helper.getNode(id) as any;
      const calls = node.status.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === node);
      return calls.length ? calls[calls.length - 1].args[0] : undefined;
    }

    it('send one msg per message, filter by wallet_id, share one socket per feed, show the state, and release the sockets on close', async () => {
      const btc = sim.demo.wallets['BTC-TESTNET'].wallet_id;
      const eth = sim.demo.wallets['ETH-TESTNET'].wallet_id;
      await load([
        { id: 'hub1', type: 'custody-hub-feed', connection: 'cfg', wires: [['quotes1']] },
        { id: 'hub2', type: 'custody-hub-feed', connection: 'cfg', wires: [['quotes2']] },
        { id: 'all', type: 'custody-wallets-feed', connection: 'cfg', walletId: '', wires: [['allTx']] },
        { id: 'btcOnly', type: 'custody-wallets-feed', connection: 'cfg', walletId: btc, wires: [['btcTx']] },
        { id: 'quotes1', type: 'helper' },
        { id: 'quotes2', type: 'helper' },
        { id: 'allTx', type: 'helper' },
        { id: 'btcTx', type: 'helper' },
      ]);
      for (const id of ['hub1', 'hub2', 'all', 'btcOnly']) {
        const s = await until(() => (statusOf(id)?.text === 'connected' ? statusOf(id) : undefined), `${id} connected`);
        assert.deepEqual(s, { fill: 'green', shape: 'dot', text: 'connected' });
      }

      const q = quote();
      const tBtc = walletTx(btc, -1000);
      const tEth = walletTx(eth, 5000, 'ETH-TESTNET');
      sim.engine.emit('hub', q);
      sim.engine.emit('walletTx', tBtc);
      sim.engine.emit('walletTx', tEth);
      const [quotes1, quotes2, allTx, btcTx] = ['quotes1', 'quotes2', 'allTx', 'btcTx'].map((id) => inbox.get(id)!);
      await until(() => (quotes1.length && quotes2.length && allTx.length >= 2 && btcTx.length ? true : undefined), 'the msgs');
      // A later marker on each feed: anything sent twice would arrive before it.
      const qEnd = quote();
      const tEnd = walletTx(btc, 1);
      sim.engine.emit('hub', qEnd);
      sim.engine.emit('walletTx', tEnd);
      await until(() => (quotes1.length >= 2 && quotes2.length >= 2 && allTx.length >= 3 && btcTx.length >= 2 ? true : undefined), 'the marker msgs');

      assert.deepEqual(
        quotes1.map((m) => [m.topic, m.payload]),
        [
          ['liquidityhub', q],
          ['liquidityhub', qEnd],
        ],
      );
      assert.deepEqual(
        quotes2.map((m) => m.payload),
        [q, qEnd],
        'each node sharing the feed sends every message',
      );
      assert.deepEqual(
        allTx.map((m) => [m.topic, m.payload]),
        [
          [btc, tBtc],
          [eth, tEth],
          [btc, tEnd],
        ],
      );
      assert.deepEqual(
        btcTx.map((m) => m.payload),
        [tBtc, tEnd],
        'the wallet_id filter passes only that wallet',
      );

      // One socket per feed kind for the whole config node; a drop shows red, then green again.
      assert.equal((await control(sim, '/feeds/drop')).dropped, 2, 'one hub socket and one wallets socket, shared');
      const statuses = (id: string): Array<{ fill?: string; shape?: string; text?: string }> =>
        (helper.getNode(id) as any).status
          .getCalls()
          .filter((c: { thisValue: unknown }) => c.thisValue === helper.getNode(id))
          .map((c: { args: [{ fill?: string; shape?: string; text?: string }] }) => c.args[0]);
      for (const id of ['hub1', 'all']) {
        const red = await until(() => {
          const i = statuses(id).findIndex((st) => st.text === 'disconnected (retrying)');
          return i >= 0 ? i : undefined;
        }, `${id} shows the drop`);
        assert.deepEqual(statuses(id)[red], { fill: 'red', shape: 'ring', text: 'disconnected (retrying)' });
        await until(() => (statuses(id).slice(red).some((st) => st.text === 'connected') ? true : undefined), `${id} reconnected`);
      }

      await helper.unload();
      await new Promise((r) => setTimeout(r, 300)); // time for a leaked feed to reconnect
      assert.equal((await control(sim, '/feeds/drop')).dropped, 0, 'closing the flow released both sockets');
    });

    it('the last node to leave closes the shared feed; the others keep it', async () => {
      await load([
        { id: 'hub1', type: 'custody-hub-feed', connection: 'cfg', wires: [['quotes1']] },
        { id: 'hub2', type: 'custody-hub-feed', connection: 'cfg', wires: [['quotes2']] },
        { id: 'quotes1', type: 'helper' },
        { id: 'quotes2', type: 'helper' },
      ]);
      await until(() => (statusOf('hub1')?.text === 'connected' && statusOf('hub2')?.text === 'connected' ? true : undefined), 'connected');
      // Close one node as a partial redeploy would.
      await new Promise<void>((resolve) => (helper.getNode('hub1') as any).close(false).then(resolve));
      const q = quote();
      sim.engine.emit('hub', q);
      await until(() => inbox.get('quotes2')![0], 'hub2 still receives');
      assert.deepEqual(inbox.get('quotes2')!.map((m) => m.payload), [q]);
      assert.deepEqual(inbox.get('quotes1'), [], 'a closed node sends nothing');
      assert.equal((await control(sim, '/feeds/drop')).dropped, 1, 'the feed stayed open for hub2');
    });
  });
});
