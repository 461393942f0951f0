/**
 * custody-track across restarts and redeploys (docs/nodes.md "custody-track", "Across restarts").
 *
 * - lib, no Node-RED: `storableMsg` (what a stored msg keeps), `FileTrackStore` (recorded, reported
 *   once, reopened, pruned, destroyed), `RedisTrackStore` on a real redis-server (the report claimed
 *   by one of two instances), and the Tracker's resume (a tracking past its deadline is read once
 *   before it times out).
 * - The judged check: a real `node-red` child process with the pack, the standalone simulator
 *   (dist/simulator/cli.js) over real sockets, and a flow inject -> transfer -> custody-track ->
 *   file. 10 transfers are followed while pending; Node-RED is SIGKILLed, 5 are approved while it
 *   is down, it restarts on the same user directory, the other 5 are approved: 10 final msgs, each
 *   exactly once, each with `msg.resumed === true`. Then the same across a full redeploy. Then the
 *   node is deleted from the flows and its file goes. The same again with the connection
 *   coordinated through Redis, with a second Node-RED instance following the same records: still
 *   each final msg exactly once across both.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TransactionRead } from '../../lib';
import { FileTrackStore, RedisTrackStore, Tracker, type TrackRecord } from '../../lib/tracking';
import { Coordinator } from '../../lib/coordination';
import { DATA_FILES } from '../../simulator';
import { RedProcess, sleep, watchDebug } from '../helpers/red-process';
import { spawnCliSimulator, type CliSimulator } from '../helpers/sim-cli';
import { RedisServer } from '../helpers/redis-server';
import { catchNode, fileNode, functionNode } from '../helpers/flow-nodes';
import { storableMsg, trackRecordId, trackStoreFile } from '../../lib/tracking/track-store';

/**
 * Poll `check` every 100 ms (it may be async) until it gives a value other than undefined.
 * @throws {Error} `timed out waiting for <what()>` after `timeoutMs`.
 */
async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, what: () => string, timeoutMs = 30000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await sleep(100);
  }
}

const record = (id: string, over: Partial<TrackRecord> = {}): TrackRecord => ({
  id,
  target: { kind: 'transfer', tx_id: id.split('/')[0], company_id: 'c1' },
  msg: { _msgid: 'm', payload: { tx_id: id.split('/')[0] } },
  startedAt: 1_700_000_000_000,
  deadline: 1_700_003_600_000,
  reads: 0,
  ...over,
});

describe('custody-track durable: lib', () => {
  let dir = '';
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-track-store-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('storableMsg keeps the JSON-safe properties, never req/res or Node-RED internals, within the cap', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const msg = {
      _msgid: 'abc',
      _event: 'node:x',
      topic: 't',
      payload: { tx_id: 't1', status: 'pending' },
      custody: { type: 'custody-transfer', operation: 'create', company_id: 'c1' },
      req: { socket: {} },
      res: { _res: {} },
      invoice: { no: 7, lines: [1, 2] },
      fn: () => 1,
      big: 10n,
      cyclic,
      track: { old: true },
    };
    const { msg: kept, dropped } = storableMsg(msg, { tx_id: 't1' });
    assert.deepEqual(kept, { _msgid: 'abc', topic: 't', custody: msg.custody, payload: msg.payload, invoice: msg.invoice });
    assert.deepEqual(dropped.sort(), ['big', 'cyclic', 'fn']);
    const capped = storableMsg({ _msgid: 'a', payload: 'x'.repeat(2000), note: 'y'.repeat(2000) }, { tx_id: 't1', company_id: 'c1' }, 1000);
    assert.deepEqual(capped.msg, { _msgid: 'a', payload: { tx_id: 't1', company_id: 'c1' } });
    assert.deepEqual(capped.dropped, ['payload', 'note']);
    assert.ok(JSON.stringify(capped.msg).length <= 1000);
  });

  it('FileTrackStore: recorded, reported once, reopened without the reported ones, pruned after the keep time, destroyed', async () => {
    let now = 1_700_000_000_000;
    const file = trackStoreFile(dir, 'node/1');
    assert.equal(path.basename(file), 'node_1.jsonl');
    let store = await FileTrackStore.open(file, { now: () => now });
    await store.put(record('a/1'));
    await store.put(record('b/1'));
    await store.put(record('a/1', { state: 'pending_transfer', reads: 1 }));
    assert.equal(await store.markReported('b/1', 'final'), true);
    assert.equal(await store.markReported('b/1', 'final'), false, 'reported once');
    await store.put(record('b/1', { state: 'late' }));
    await store.close();

    store = await FileTrackStore.open(file, { now: () => now });
    const loaded = await store.load();
    assert.deepEqual(loaded.map((r) => [r.id, r.state, r.reads]), [['a/1', 'pending_transfer', 1]]);
    assert.equal(await store.markReported('b/1', 'final'), false, 'still reported after a reopen');
    assert.equal(store.size, 2);
    now += 24 * 3600_000 + 1;
    await store.load();
    assert.equal(store.size, 1, 'the reported one goes after 24 h');
    assert.equal(await store.markReported('a/1', 'timedOut'), true);
    await store.drop('a/1');
    await store.close();
    store = await FileTrackStore.open(file, { now: () => now });
    assert.equal(store.size, 0);
    assert.equal(fs.readFileSync(file, 'utf8'), '', 'compacted at open');
    await store.put(record('c/1'));
    await store.destroy();
    assert.equal(fs.existsSync(file), false);
  });

  it('Tracker resume: a tracking whose deadline passed while down is read once, final when it became final', async () => {
    const reads: string[] = [];
    const ended: string[] = [];
    const tracker = new Tracker<string>(
      async (t) => {
        reads.push(t.tx_id);
        const final = t.tx_id === 'done';
        return { answer: {}, statusCode: 200, status: final ? 'approved_transfer' : 'pending_transfer', final } as TransactionRead;
      },
      { final: (t) => ended.push(`final ${t.context}`), timedOut: (t) => ended.push(`timedOut ${t.context} reads=${t.reads}`), error: () => ended.push('error') },
      { firstDelayMs: 60_000 },
    );
    const past = { startedAt: Date.now() - 7200_000, deadline: Date.now() - 3600_000, reads: 4, state: 'pending_transfer' };
    tracker.track({ kind: 'transfer', tx_id: 'done', company_id: 'c' }, 'done', past);
    tracker.track({ kind: 'transfer', tx_id: 'still', company_id: 'c' }, 'still', past);
    await waitFor(() => ended.length === 2 || undefined, () => 'both ended');
    tracker.close();
    assert.deepEqual(ended.sort(), ['final done', 'timedOut still reads=5']);
    assert.deepEqual(reads.sort(), ['done', 'still']);
  });

  it('RedisTrackStore: two instances load the same records; the report is claimed by one', async () => {
    const redis = new RedisServer();
    await redis.start();
    const a = new Coordinator({ url: `${redis.url}/0`, keyPrefix: 'cf-track-test:', instance: 'a' });
    const b = new Coordinator({ url: `${redis.url}/0`, keyPrefix: 'cf-track-test:', instance: 'b' });
    try {
      await Promise.all([a.whenReady(), b.whenReady()]);
      const sa = new RedisTrackStore(a, 'trk', 'a');
      const sb = new RedisTrackStore(b, 'trk', 'b');
      await sa.put(record('x/1'));
      await sa.put(record('y/1'));
      assert.deepEqual((await sb.load()).map((r) => r.id).sort(), ['x/1', 'y/1']);
      const claims = await Promise.all([sa.markReported('x/1', 'final'), sb.markReported('x/1', 'final')]);
      assert.deepEqual(claims.sort(), [false, true], 'one instance reports');
      await sb.put(record('x/1', { state: 'late' }));
      assert.deepEqual((await sa.load()).map((r) => r.id), ['y/1'], 'a reported record does not come back');
      assert.ok((await a.run((r) => r.pttl(sa.reportedKey('x/1')))) > 23 * 3600_000, 'the report key lives 24 h');
      await sa.destroy();
      assert.deepEqual(await sb.load(), []);
    } finally {
      await a.close();
      await b.close();
      await redis.stop();
    }
  });
});

/** The flow: inject -> build transfer -> custody-transfer -> custody-track -> record -> file; every creation and error recorded too. */
function flowsFor(cfg: object, demo: any, outFile: string, withTrack = true): object[] {
  const at = (x: number, y: number) => ({ z: 'tab', x, y });
  const build = `msg.marker = 'm-' + msg._msgid;
msg.payload = { wallet_id: ${JSON.stringify(demo.counterparty.wallets['BTC-TESTNET'].wallet_id)}, counterparty_wallet_address: ${JSON.stringify(demo.wallets['BTC-TESTNET'].wallet_id)}, benefit_of: 'b', account_no: 'a', reference: 'durable track', partner_txID: 'dur-' + msg._msgid, send: { symbol: 'BTC-TESTNET', amount: 1000 } };
return msg;`;
  return [
    { id: 'tab', type: 'tab', label: 'durable track' },
    cfg,
    { id: 'send', z: 'tab', type: 'inject', name: 'send', props: [{ p: 'payload' }], payload: '', payloadType: 'date', x: 100, y: 100, wires: [['build']] },
    functionNode('build', 'build transfer', build, at(250, 100), ['tx']),
    { id: 'tx', z: 'tab', type: 'custody-transfer', connection: (cfg as any).id, operation: 'create', company_id: demo.company_id, expiresAfter: '3600', amountFormat: 'baseUnits', x: 400, y: 100, wires: [withTrack ? ['created', 'track'] : ['created']] },
    functionNode('created', 'record created', `msg.payload = { ev: 'created', tx_id: msg.payload.tx_id, marker: msg.marker };\nreturn msg;`, at(600, 50), ['file']),
    ...(withTrack ? [{ id: 'track', z: 'tab', type: 'custody-track', connection: (cfg as any).id, kind: 'msg', progress: false, firstDelay: '0.5', maxDelay: '2', margin: '60', x: 600, y: 100, wires: [['final'], []] }] : []),
    functionNode(
      'final',
      'record final',
      `msg.payload = { ev: 'final', tx_id: msg.track.tx_id, state: msg.track.state, final: msg.track.final, resumed: msg.resumed === true, marker: msg.marker, msgid: msg._msgid, port: env.get('PORT') };\nreturn msg;`,
      at(800, 100),
      ['file'],
    ),
    catchNode('catch', at(100, 200), ['err']),
    functionNode('err', 'record error', `msg.payload = { ev: 'error', message: msg.error && msg.error.message };\nreturn msg;`, at(300, 200), ['file']),
    fileNode('file', outFile, at(1000, 100)),
  ];
}

/** Everything one scenario uses: the simulator, one or two Node-RED processes, the output file. */
describe('custody-track across a real SIGKILL and a full redeploy (node-red child process, standalone simulator)', function () {
  this.timeout(180000);
  const simDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-track-sim-'));
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-track-out-'));
  let sim: CliSimulator;
  let controlUrl = '';
  let baseUrl = '';
  let demo: any;
  let credentials: { apiKey: string; privateKey: string };
  const savedTrackDir = process.env.CUSTODYFLOW_TRACK_DIR;

  before(async () => {
    // The child Node-RED keeps its records in its own user directory, as a user's does.
    delete process.env.CUSTODYFLOW_TRACK_DIR;
    sim = spawnCliSimulator(simDir);
    baseUrl = await waitFor(() => /base URL:\s+(\S+)/.exec(sim.out())?.[1], () => 'the simulator base URL', 20000);
    controlUrl = await waitFor(() => /control URL:\s+(\S+)/.exec(sim.out())?.[1], () => 'the simulator control URL', 20000);
    credentials = { apiKey: fs.readFileSync(path.join(simDir, DATA_FILES.apiKey), 'utf8').trim(), privateKey: fs.readFileSync(path.join(simDir, DATA_FILES.privateKey), 'utf8') };
    demo = await (await fetch(`${controlUrl}/demo`)).json();
    await ctl('/faucet', { wallet_id: demo.counterparty.wallets['BTC-TESTNET'].wallet_id, amount: 100_000_000 });
  });
  after(async () => {
    if (savedTrackDir !== undefined) process.env.CUSTODYFLOW_TRACK_DIR = savedTrackDir;
    if (sim?.cli.exitCode === null) sim.cli.kill('SIGKILL');
    fs.rmSync(simDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  async function ctl(p: string, body: unknown): Promise<any> {
    const res = await fetch(controlUrl + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    assert.ok(res.ok, `control ${p}: ${res.status} ${text}`);
    return JSON.parse(text);
  }
  const approve = async (txIds: string[]) => {
    for (const tx_id of txIds) assert.equal((await ctl(`/transfer/${tx_id}/approve`, { user_id: 'alice@custody.example' })).txStatus, 'approved_transfer');
  };
  const lines = (file: string): any[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

  async function deploy(red: RedProcess, flows: object[]): Promise<void> {
    const res = await fetch(`${red.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' }, body: JSON.stringify(flows) });
    assert.ok(res.status === 200 || res.status === 204, `deploy: ${res.status} ${await res.text()}`);
  }

  /** Click `send` `n` times on `red`; resolves with the new tx ids once created. */
  async function sendTransfers(red: RedProcess, outFile: string, n: number): Promise<string[]> {
    const before = lines(outFile).filter((l) => l.ev === 'created').length;
    for (let i = 0; i < n; i++) assert.equal((await fetch(`${red.base}/inject/send`, { method: 'POST' })).status, 200);
    const created = await waitFor(
      () => {
        const c = lines(outFile).filter((l) => l.ev === 'created');
        return c.length >= before + n ? c.slice(before).map((l) => l.tx_id as string) : undefined;
      },
      () => `${n} transfers created; errors ${JSON.stringify(lines(outFile).filter((l) => l.ev === 'error'))}\n${red.log.slice(-1500)}`,
      30000,
    );
    assert.ok(created.every((id) => typeof id === 'string' && id));
    return created;
  }

  /** Resolves once every tx of `txIds` has a record with a status read (pending), in `read()`. */
  async function followedWhilePending(read: () => Promise<TrackRecord[]>, txIds: string[]): Promise<void> {
    await waitFor(
      async () => {
        const recs = await read();
        return txIds.every((id) => recs.some((r) => r.target.tx_id === id && r.state === 'pending_transfer' && r.reportedAt === undefined)) || undefined;
      },
      () => 'every transfer recorded with its pending status',
      30000,
    );
  }

  /** Resolves once `txIds` each have a final msg in `outFile`; then waits 3 s more for any duplicate, and returns the final msgs of `txIds`. */
  async function finals(outFile: string, txIds: string[], red: RedProcess[]): Promise<any[]> {
    const of = () => lines(outFile).filter((l) => l.ev === 'final' && txIds.includes(l.tx_id));
    await waitFor(() => txIds.every((id) => of().some((l) => l.tx_id === id)) || undefined, () => `final msgs of ${txIds.length}; got ${JSON.stringify(of())}\n${red.map((r) => r.log.slice(-1500)).join('\n---\n')}`, 60000);
    await sleep(3000); // a duplicate, if there were one, would come within a read or two (maxDelay 2 s)
    return of();
  }

  /** File records of `red`'s track node. */
  const fileRecords = (red: RedProcess) => async (): Promise<TrackRecord[]> => {
    const file = path.join(red.userDir, 'custodyflow', 'track', 'track.jsonl');
    const byId = new Map<string, TrackRecord>();
    for (const l of lines(file)) {
      if (l.put) byId.set(l.put.id, l.put);
      else if (l.drop) byId.delete(l.drop);
      else if (l.reported) byId.set(l.reported, { ...byId.get(l.reported)!, reportedAt: l.at, outcome: l.outcome });
    }
    return [...byId.values()];
  };

  /** Resolves once `red`'s track node shows `text` (its status, as the editor gets it on /comms). */
  async function statusShows(red: RedProcess, text: string): Promise<void> {
    const status = new Map<string, { text?: string }>();
    const { ws } = await watchDebug(red.base, status);
    try {
      await waitFor(() => status.get('track')?.text === text || undefined, () => `status "${text}", got ${JSON.stringify(status.get('track'))}`, 30000);
    } finally {
      ws.close();
    }
  }

  function assertOncePerTx(all: any[], txIds: string[], label: string): void {
    const count = new Map<string, number>();
    for (const l of all) count.set(l.tx_id, (count.get(l.tx_id) ?? 0) + 1);
    for (const id of txIds) assert.equal(count.get(id), 1, `${label}: ${id} reported ${count.get(id) ?? 0} times`);
    for (const l of all) {
      assert.equal(l.state, 'approved_transfer', `${label}: ${JSON.stringify(l)}`);
      assert.equal(l.final, true);
      assert.equal(l.resumed, true, `${label}: msg.resumed on ${JSON.stringify(l)}`);
      assert.match(l.marker, /^m-/, 'the user property came back from the stored msg');
      assert.equal(l.marker, 'm-' + l.msgid, 'the same _msgid as the msg followed before');
    }
  }

  it('file: 10 followed, SIGKILL, 5 approved while down, restart: 10 of 10 reported once, resumed; the same across a full redeploy; a deleted node drops its file', async () => {
    const outFile = path.join(outDir, 'file.jsonl');
    const cfg = { id: 'cfg', type: 'custody-config', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: 30, credentials };
    const red = new RedProcess({ prefix: 'cf-track-red-' });
    try {
      await red.start();
      await deploy(red, flowsFor(cfg, demo, outFile));
      await sleep(500);

      // (a) SIGKILL while 10 are pending.
      const first = await sendTransfers(red, outFile, 10);
      await followedWhilePending(fileRecords(red), first);
      assert.equal(lines(outFile).filter((l) => l.ev === 'final').length, 0, 'nothing final before the kill');
      red.child!.kill('SIGKILL');
      await new Promise((r) => red.child!.once('exit', r));
      await approve(first.slice(0, 5)); // final while Node-RED is down
      await red.start();
      await approve(first.slice(5)); // final just after the restart
      assertOncePerTx(await finals(outFile, first, [red]), first, 'after SIGKILL');

      // (b) a full redeploy while 10 are pending; approved once the new flow runs.
      const second = await sendTransfers(red, outFile, 10);
      await followedWhilePending(fileRecords(red), second);
      await deploy(red, flowsFor({ ...cfg, credentials: undefined }, demo, outFile));
      await statusShows(red, 'tracking 10 (10 resumed)');
      await approve(second);
      assertOncePerTx(await finals(outFile, [...first, ...second], [red]), [...first, ...second], 'after the redeploy');
      assert.deepEqual(lines(outFile).filter((l) => l.ev === 'error'), [], 'no error reached Catch');

      // (c) the node deleted from the flows: its records go.
      const file = path.join(red.userDir, 'custodyflow', 'track', 'track.jsonl');
      assert.ok(fs.existsSync(file));
      await deploy(red, flowsFor({ ...cfg, credentials: undefined }, demo, outFile, false));
      await waitFor(() => !fs.existsSync(file) || undefined, () => 'the track file removed', 10000);
    } finally {
      await red.stop();
    }
  });

  it('Redis, two instances on the same records: 10 followed, SIGKILL, approved, both running: 10 of 10 reported once across both', async () => {
    const redis = new RedisServer();
    await redis.start();
    const outFile = path.join(outDir, 'redis.jsonl');
    const cfg = { id: 'cfg', type: 'custody-config', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: 30, coordination: 'redis', redisUrl: `${redis.url}/0`, redisKeyPrefix: 'cf-track:', claimLeaseSeconds: 60, credentials };
    const a = new RedProcess({ prefix: 'cf-track-red-a-' });
    const b = new RedProcess({ prefix: 'cf-track-red-b-' });
    const coordinator = new Coordinator({ url: `${redis.url}/0`, keyPrefix: 'cf-track:', instance: 'test' });
    const redisRecords = async (): Promise<TrackRecord[]> => Object.values(await coordinator.run((r) => r.hgetall(coordinator.key('track', 'track')))).map((t) => JSON.parse(t));
    try {
      await coordinator.whenReady();
      await Promise.all([a.start(), b.start()]);
      await deploy(a, flowsFor(cfg, demo, outFile));
      await sleep(500);
      const txIds = await sendTransfers(a, outFile, 10);
      await followedWhilePending(redisRecords, txIds);
      assert.equal(fs.existsSync(path.join(a.userDir, 'custodyflow', 'track', 'track.jsonl')), false, 'in Redis, not in the user directory');
      a.child!.kill('SIGKILL');
      await new Promise((r) => a.child!.once('exit', r));
      // b deploys the same flow: it loads the 10 records from Redis; a restarts and loads them too.
      await deploy(b, flowsFor(cfg, demo, outFile));
      await a.start();
      // Both follow the 10 recorded transactions, so both race for each report.
      await Promise.all([statusShows(a, 'tracking 10 (10 resumed)'), statusShows(b, 'tracking 10 (10 resumed)')]);
      await approve(txIds);
      const all = await finals(outFile, txIds, [a, b]);
      assertOncePerTx(all, txIds, 'two instances');
      console.log(`      reports sent: ${[a, b].map((r, i) => `${'ab'[i]} ${all.filter((l) => l.port === String(r.port)).length}`).join(', ')}`);
      for (const id of txIds) assert.equal(await coordinator.run((r) => r.exists(coordinator.key('track', 'track', 'reported', trackRecordId(id, all.find((l) => l.tx_id === id).msgid)))), 1);
      assert.deepEqual(await redisRecords(), [], 'reported records leave the hash');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await coordinator.close();
      await redis.stop();
    }
  });
});
