/**
 * custody-track: the lib Tracker on its own (one timer for 1,000 transactions, timeout, errors;
 * fake timers, no timing assertions), and the node in the real Node-RED runtime
 * (node-red-node-test-helper) against the built-in simulator over real sockets: each final state
 * of spec section 3, progress on output 2, a wake by the wallets feed, input refused naming the
 * field, a 404 to Catch, and a clean timeout.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { control, controlCall, until, demoTransfer } from '../helpers/support';
import { withdrawalRequest } from '../helpers/requests';
import { accountClient } from '../helpers/simulated';
import { CONFIG, Inbox, TAB, loadCollecting } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import {
  ApiError,
  isFinalState,
  listActions,
  getAction,
  approveAction,
  rejectAction,
  createTransfer,
  createWithdraw,
  makeSwap,
  takeSwap,
  approveSwapTake,
  type CustodyClient,
  type TransactionRead,
  type WalletFeedMessage,
} from '../../lib';
import { Tracker, type TrackTarget } from '../../lib/tracking';
import type { CustodyConfigNode } from '../../nodes/shared/types';

describe('lib Tracker (fake timers)', () => {
  /** Fake timers: a list of pending callbacks with due times; `now` moves only by `advance`. */
  function fakeTimers() {
    let now = 1_700_000_000_000;
    let nextId = 1;
    const pending = new Map<number, { at: number; fn: () => void }>();
    let setCalls = 0;
    let maxPending = 0;
    return {
      timers: {
        setTimeout(fn: () => void, ms: number) {
          setCalls++;
          const id = nextId++;
          pending.set(id, { at: now + ms, fn });
          maxPending = Math.max(maxPending, pending.size);
          return id;
        },
        clearTimeout(id: unknown) {
          pending.delete(id as number);
        },
        now: () => now,
      },
      get setCalls() {
        return setCalls;
      },
      get maxPending() {
        return maxPending;
      },
      get pending() {
        return pending.size;
      },
      /** Move the clock to the earliest pending timer and run it; false when none. */
      runNext(): boolean {
        let first: [number, { at: number; fn: () => void }] | undefined;
        for (const e of pending) if (!first || e[1].at < first[1].at) first = e;
        if (!first) return false;
        pending.delete(first[0]);
        now = Math.max(now, first[1].at);
        first[1].fn();
        return true;
      },
      nowSeconds: () => Math.floor(now / 1000),
    };
  }
  const flush = () => new Promise((r) => setImmediate(r));

  it('follows 1,000 transactions with one timer and at most 8 reads in flight', async () => {
    const clock = fakeTimers();
    const readsOf = new Map<string, number>();
    let inFlight = 0;
    let maxInFlight = 0;
    const read = async (t: TrackTarget): Promise<TransactionRead> => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await flush();
      inFlight--;
      const n = (readsOf.get(t.tx_id) ?? 0) + 1;
      readsOf.set(t.tx_id, n);
      const status = n >= 3 ? 'approved_transfer' : 'pending_transfer';
      return { answer: { txID: t.tx_id, txStatus: status }, statusCode: 200, status, expires: clock.nowSeconds() + 3600, final: isFinalState('transfer', status) };
    };
    const finals: string[] = [];
    let progress = 0;
    const tracker = new Tracker<null>(read, { progress: () => progress++, final: (t) => finals.push(t.target.tx_id), timedOut: () => assert.fail('no timeout'), error: (_t, e) => assert.fail(e) }, { timers: clock.timers });
    for (let i = 0; i < 1000; i++) tracker.track({ kind: 'transfer', tx_id: `tx-${i}`, company_id: 'c1' }, null);
    assert.equal(tracker.size, 1000);
    assert.equal(clock.pending, 1, 'one timer for 1,000 transactions');
    for (let guard = 0; finals.length < 1000 && guard < 100000; guard++) {
      if (!clock.runNext()) await flush();
      await flush();
    }
    assert.equal(finals.length, 1000);
    assert.equal(progress, 2000, 'pending then approved, per transaction');
    assert.equal(clock.maxPending, 1, 'never more than one timer pending');
    assert.ok(clock.setCalls < 1000, `setTimeout called ${clock.setCalls} times for 3,000 reads: re-armed per batch, not once per transaction or read`);
    assert.ok(maxInFlight <= 8, `at most 8 reads in flight (saw ${maxInFlight})`);
    assert.equal(tracker.size, 0);
    assert.equal(tracker.timerArmed, false, 'no timer left');
    assert.equal(clock.pending, 0);
    tracker.close();
  });

  it('times out at expires + margin with the last state, retries 5xx, ends on a 404, and wake reads at once', async () => {
    const clock = fakeTimers();
    const events: string[] = [];
    const answers: Record<string, () => TransactionRead> = {
      pending: () => ({ answer: {}, statusCode: 200, status: 'pending_transfer', expires: clock.nowSeconds() + 10, final: false }),
    };
    let failing = 2;
    const read = async (t: TrackTarget): Promise<TransactionRead> => {
      if (t.tx_id === 'missing') throw new ApiError(404, { code: 404, msg: 'Not Found' });
      if (t.tx_id === 'flaky' && failing-- > 0) throw new ApiError(503, { code: 503, msg: 'Service Unavailable' });
      if (t.tx_id === 'woken') return { answer: {}, statusCode: 200, status: 'approved', expires: clock.nowSeconds() + 10, final: true };
      return answers.pending();
    };
    const tracker = new Tracker<string>(
      read,
      {
        final: (t) => events.push(`final ${t.context} ${t.state} reads=${t.reads}`),
        timedOut: (t) => events.push(`timedOut ${t.context} ${t.state}`),
        error: (t, e) => events.push(`error ${t.context} ${(e as ApiError).statusCode}`),
        readError: (t) => events.push(`readError ${t.context}`),
      },
      { timers: clock.timers, marginMs: 0, firstDelayMs: 1000, maxDelayMs: 600000 },
    );
    tracker.track({ kind: 'transfer', tx_id: 'never', company_id: 'c1' }, 'never');
    tracker.track({ kind: 'transfer', tx_id: 'missing', company_id: 'c1' }, 'missing');
    tracker.track({ kind: 'transfer', tx_id: 'flaky', company_id: 'c1' }, 'flaky');
    const woken = tracker.track({ kind: 'transfer', tx_id: 'woken', company_id: 'c1' }, 'woken');
    assert.equal(tracker.wake('woken'), 1);
    assert.equal(tracker.wake('unknown'), 0);
    for (let guard = 0; tracker.size > 0 && guard < 1000; guard++) {
      if (!clock.runNext()) await flush();
      await flush();
    }
    assert.equal(woken.reads, 1, 'the wake read at once');
    assert.deepEqual(events.filter((e) => !e.startsWith('readError')).sort(), ['error missing 404', 'final woken approved reads=1', 'timedOut flaky pending_transfer', 'timedOut never pending_transfer']);
    assert.equal(events.filter((e) => e === 'readError flaky').length, 2, '503 retried');
    assert.equal(tracker.timerArmed, false, 'no timer left');
    assert.equal(clock.pending, 0);
    tracker.close();
    assert.throws(() => tracker.track({ kind: 'transfer', tx_id: 'x', company_id: 'c1' }, 'x'), /closed/);
  });
});

const dataDir = simulatorDataDir('cf-track-');
const nodeModules = redNodes(['custody-config', 'custody-transfer', 'custody-track']);

/** Track node `track` (outputs to helpers `out` and `progress`), a Catch node to `caught`; with `op`, an operation node wired into `track`. */
function trackFlow(props: Record<string, unknown>, op?: Record<string, unknown>): object[] {
  return [
    TAB,
    { ...CONFIG, z: 'tab' },
    ...(op ? [{ id: 'op', z: 'tab', connection: 'cfg', wires: [['track']], x: 100, y: 100, ...op }] : []),
    { id: 'track', z: 'tab', type: 'custody-track', connection: 'cfg', kind: 'msg', progress: true, firstDelay: '0.2', maxDelay: '1', margin: '60', wires: [['out'], ['progress']], x: 100, y: 100, ...props },
    { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
    { id: 'progress', z: 'tab', type: 'helper', x: 100, y: 100 },
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
    { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
  ];
}

describe('custody-track in the Node-RED runtime with the simulator', function () {
  this.timeout(60000);
  let sim: Simulator;
  let client: CustodyClient;
  const inbox: Inbox = new Map();
  let seq = 0;
  const unique = (p: string) => `${p}-${process.pid}-${Date.now()}-${++seq}`;

  async function load(flow: object[]): Promise<void> {
    await loadCollecting(nodeModules, flow, {}, inbox, ['out', 'progress', 'caught']);
  }

  /** The simulator's business clock, epoch seconds (it moves ahead when a test advances it). */
  async function simNow(): Promise<number> {
    return (await controlCall(sim, 'GET', '/clock')).body.now;
  }

  /** Wait for the next msg on output 1 (or at the Catch node, which fails the wait). */
  async function final(n = 1): Promise<any> {
    const out = inbox.get('out')!;
    const caught = inbox.get('caught')!;
    await until(() => (out.length >= n || caught.length ? true : undefined), 'a msg on output 1', 30000);
    if (caught.length) throw new Error('caught: ' + caught[0].error?.message);
    return out[n - 1];
  }

  /** Approve or reject, as core client `clientId`, its pending action of `type` for `txId`. */
  async function decide(clientId: string, txId: string, type: string, approve: boolean): Promise<void> {
    for (const a of (await listActions(client, { client_id: clientId })).data.actions.filter((x) => x.type === type)) {
      if ((await getAction(client, { client_id: clientId, action_id: a.id })).data.details?.txID === txId) {
        await (approve ? approveAction : rejectAction)(client, { client_id: clientId, action_id: a.id });
        return;
      }
    }
    throw new Error(`no pending ${type} action of ${clientId} for ${txId}`);
  }

  /** Send the create payload through the transfer node into track; resolves once track has a first read (progress). */
  async function trackNewTransfer(overrides: Record<string, unknown> = {}): Promise<string> {
    const request = { ...demoTransfer(sim, { expires: (await simNow()) + 3600 }), ...overrides };
    helper.getNode('op').receive({ payload: request });
    const progress = inbox.get('progress')!;
    const first = await until(() => progress[0] ?? (inbox.get('caught')!.length ? null : undefined), 'the first read on output 2');
    if (!first) throw new Error('caught: ' + inbox.get('caught')![0].error?.message);
    return first.track.tx_id;
  }

  const transferOp = { type: 'custody-transfer', operation: 'create' };

  const simulator = useRedRuntime(dataDir);
  before(() => {
    sim = simulator();
    client = accountClient(sim);
  });
  after(() => client.close());

  it('approved_transfer: kind from msg.custody, progress on output 2, final answer once on output 1', async () => {
    await load(trackFlow({}, transferOp));
    const txId = await trackNewTransfer();
    await decide(sim.demo.core_client_id, txId, 'ApproveTransfer', true);
    const msg = await final();
    assert.equal(msg.payload.txStatus, 'approved_transfer');
    assert.equal(msg.statusCode, 200);
    assert.deepEqual(
      { kind: msg.track.kind, tx_id: msg.track.tx_id, company_id: msg.track.company_id, state: msg.track.state, final: msg.track.final, timedOut: msg.track.timedOut },
      { kind: 'transfer', tx_id: txId, company_id: sim.demo.company_id, state: 'approved_transfer', final: true, timedOut: false },
    );
    assert.ok(msg.track.reads >= 2 && msg.track.finishedAt >= msg.track.startedAt);
    assert.deepEqual(msg.custody, { type: 'custody-transfer', operation: 'create', company_id: sim.demo.company_id }, 'the operation node left its trace');
    const states = inbox.get('progress')!.map((m) => m.track.state);
    assert.deepEqual(states, ['pending_transfer', 'approved_transfer'], 'one progress msg per state change');
    assert.equal(inbox.get('out')!.length, 1);
  });

  it('Remember reports: the final report leaves a "reported" line (id, time, outcome; no msg) in the node\'s file, forgotten after that many hours; a bad value is refused naming keepReported', async () => {
    // 0.0005 h: 1.8 s.
    // A node id of its own: its file holds this test's records only.
    const remember = { id: 'remember', keepReported: '0.0005' };
    await load(trackFlow(remember, { ...transferOp, wires: [['remember']] }));
    const txId = await trackNewTransfer();
    await decide(sim.demo.core_client_id, txId, 'ApproveTransfer', true);
    assert.equal((await final()).payload.txStatus, 'approved_transfer');
    const file = path.join(process.env.CUSTODYFLOW_TRACK_DIR!, 'remember.jsonl');
    const lines = () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    await until(() => (lines().some((l) => l.reported) ? true : undefined), 'the reported line');
    const reported = lines().find((l) => l.reported);
    assert.deepEqual(Object.keys(reported).sort(), ['at', 'outcome', 'reported']);
    assert.equal(reported.outcome, 'final');
    assert.ok(String(reported.reported).startsWith(`${txId}/`));
    // After the keep time a restart of the node no longer remembers it: the file is compacted to nothing at open.
    const at = Date.now();
    await until(() => (Date.now() > at + 2000 ? true : undefined), 'the keep time passes', 10000);
    await helper.unload();
    await load(trackFlow(remember));
    await until(() => (fs.existsSync(file) && lines().length === 0 ? true : undefined), 'the file compacted at open');

    await helper.unload();
    await load(trackFlow({ keepReported: '-1' }));
    helper.getNode('track').receive({ payload: { tx_id: 't1', company_id: 'c1' }, kind: 'transfer' });
    const caught = inbox.get('caught')!;
    await until(() => (caught.length ? true : undefined), 'the refusal');
    assert.match(caught[0].error.message, /keepReported: expected hours above 0, got "-1"/);
  });

  it('custody_rejected_transfer', async () => {
    await load(trackFlow({}, transferOp));
    const txId = await trackNewTransfer();
    await decide(sim.demo.core_client_id, txId, 'ApproveTransfer', false);
    const msg = await final();
    assert.equal(msg.track.state, 'custody_rejected_transfer');
    assert.equal(msg.payload.txStatus, 'custody_rejected_transfer');
  });

  it('wakes on the wallets feed: with a one-hour backoff, only the wake can read the approval', async () => {
    await load(trackFlow({ kind: 'transfer', company_id: sim.demo.company_id, progress: false, firstDelay: '3600', maxDelay: '3600' }));
    const created = await createTransfer(client, demoTransfer(sim, { expires: (await simNow()) + 3600 }));
    const txId = created.data.tx_id;
    helper.getNode('track').receive({ payload: { tx_id: txId } });
    // The track node opened the config node's wallets feed; join the same socket and wait until it is connected.
    const cfg = helper.getNode('cfg') as unknown as CustodyConfigNode;
    let connected = false;
    const seen: WalletFeedMessage[] = [];
    const membership = cfg.subscribeWalletsFeed({ onHealth: (h) => (connected = connected || h.state === 'connected'), onMessage: (m) => seen.push(m) });
    try {
      await until(() => (connected ? true : undefined), 'the wallets feed connected');
      await decide(sim.demo.core_client_id, txId, 'ApproveTransfer', true);
      const msg = await final();
      assert.equal(msg.track.state, 'approved_transfer');
      assert.equal(msg.track.reads, 1, 'one read, made by the wake (the first scheduled read was an hour away)');
      assert.ok(seen.some((m) => m.tx_id === txId), 'the feed showed the move');
    } finally {
      await membership.leave();
    }
  });

  it('approved_withdrawal, custody_rejected_withdrawal and chain_rejected_withdrawal (kind set in the node)', async () => {
    await load(trackFlow({ kind: 'withdrawal', company_id: sim.demo.company_id }));
    const withdraw = async () =>
      (
        await createWithdraw(client, withdrawalRequest(sim.demo, { expires: (await simNow()) + 3600, reference: 'track', partner_txID: unique('twd'), send: { symbol: 'BTC-TESTNET', amount: 10000 } }))
      ).data.tx_id;
    const approved = await withdraw();
    const rejected = await withdraw();
    const chainRejected = await withdraw();
    await decide(sim.demo.core_client_id, chainRejected, 'ApproveWithdraw', true);
    await control(sim, `/withdraw/${chainRejected}/chain-reject`);
    for (const tx_id of [approved, rejected, chainRejected]) helper.getNode('track').receive({ payload: { tx_id } });
    await decide(sim.demo.core_client_id, approved, 'ApproveWithdraw', true);
    await decide(sim.demo.core_client_id, rejected, 'ApproveWithdraw', false);
    await final(3);
    const byTx = new Map(inbox.get('out')!.map((m) => [m.track.tx_id, m.track]));
    assert.equal(byTx.get(approved)?.state, 'approved_withdrawal');
    assert.equal(byTx.get(rejected)?.state, 'custody_rejected_withdrawal');
    assert.equal(byTx.get(chainRejected)?.state, 'chain_rejected_withdrawal');
    assert.ok([...byTx.values()].every((t) => t.kind === 'withdrawal' && t.final && !t.timedOut));
  });

  it('a swap: the quote (swapMake) and the take (swapTake) both reach their final states', async () => {
    const demo = sim.demo;
    const made = (
      await makeSwap(client, {
        company_id: demo.company_id,
        send_wallet_id: demo.wallets['BTC-TESTNET'].wallet_id,
        receive_wallet_id: demo.wallets['ETH-TESTNET'].wallet_id,
        expires: (await simNow()) + 3600,
        reference: 'track swap',
        partner_txID: unique('tsm'),
        send: { symbol: 'BTC-TESTNET', amount: 20000 },
        receive: { symbol: 'ETH-TESTNET', amount: 30000000 },
        add_to_liquidity_hub: true,
      })
    ).data;
    await load(trackFlow({}));
    helper.getNode('track').receive({ payload: { tx_id: made.tx_id, company_id: demo.company_id }, kind: 'swapMake' });
    await decide(demo.core_client_id, made.tx_id, 'ApproveSwap', true);
    await until(() => (inbox.get('progress')!.some((m) => m.track.state === 'taker_pending') ? true : undefined), 'the quote open for a taker');
    assert.equal(inbox.get('out')!.length, 0, 'taker_pending is not final');
    const taken = (
      await takeSwap(client, {
        company_id: demo.taker.company_id,
        swap_id: made.tx_id,
        send_wallet_id: demo.taker.wallets['ETH-TESTNET'].wallet_id,
        receive_wallet_id: demo.taker.wallets['BTC-TESTNET'].wallet_id,
        reference: 'track take',
        partner_txID: unique('tst'),
      })
    ).data;
    helper.getNode('track').receive({ payload: { tx_id: taken.tx_id }, custody: { type: 'custody-swap-take', operation: 'take', company_id: demo.taker.company_id } });
    await approveSwapTake(client, { company_id: demo.taker.company_id, action_id: taken.action_id! });
    await decide(demo.taker.core_client_id, taken.tx_id, 'ApproveSwapTake', true);
    await final(2);
    const byTx = new Map(inbox.get('out')!.map((m) => [m.track.tx_id, m.track]));
    assert.deepEqual([byTx.get(made.tx_id)?.kind, byTx.get(made.tx_id)?.state], ['swapMake', 'approved_swap']);
    assert.deepEqual([byTx.get(taken.tx_id)?.kind, byTx.get(taken.tx_id)?.state, byTx.get(taken.tx_id)?.company_id], ['swapTake', 'approved_swap_take', demo.taker.company_id]);
  });

  it('a sweep reaches approved_sweep (client_id, snake_case tx_status)', async () => {
    const demo = sim.demo;
    const clientId = demo.exchange.client_id;
    const walletId = demo.exchange.wallets['BTC-TESTNET'].wallet_id;
    const request = await control(sim, '/exchange/connect-request', { client_id: clientId, wallet_id: walletId, customer_email: 'track@exchange.example', customer_id: 'track-1' });
    await approveAction(client, { client_id: clientId, action_id: request.action_id });
    const swept = (await client.request<{ tx_id: string }>('POST', `/coreclient/${clientId}/sweep`, { body: { wallet_id: walletId, recipient_wallet_id: demo.wallets['BTC-TESTNET'].wallet_id, reference: 'track sweep', expires: (await simNow()) + 600, send: { symbol: 'BTC-TESTNET', amount: 2000 } } })).data;
    await load(trackFlow({ kind: 'sweep', client_id: clientId }));
    helper.getNode('track').receive({ payload: swept });
    const msg = await final();
    assert.deepEqual([msg.track.kind, msg.track.client_id, msg.track.state, msg.payload.tx_status], ['sweep', clientId, 'approved_sweep', 'approved_sweep']);
    assert.deepEqual(inbox.get('progress')!.map((m) => m.track.state), ['approved_sweep']);
  });

  it('refuses input naming the field (nothing tracked), and a 404 read reaches Catch with msg.statusCode', async () => {
    await load(trackFlow({}));
    const caught = inbox.get('caught')!;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ payload: { company_id: 'c1' }, kind: 'transfer' }, /tx_id: required/],
      [{ payload: { tx_id: 't1', company_id: 'c1' } }, /kind: set in the node/],
      [{ payload: { tx_id: 't1', company_id: 'c1' }, kind: 'deposit' }, /kind: expected one of transfer, withdrawal, swapMake, swapTake, sweep/],
      [{ payload: { tx_id: 't1' }, kind: 'transfer' }, /company_id: required/],
      [{ payload: { tx_id: 't1' }, kind: 'sweep' }, /client_id: required/],
    ];
    for (const [i, [msg, expected]] of cases.entries()) {
      helper.getNode('track').receive(msg);
      await until(() => (caught.length > i ? true : undefined), String(expected));
      assert.equal(caught[i].error.code, 'EINPUT');
      assert.match(caught[i].error.message, expected);
    }
    helper.getNode('track').receive({ payload: { tx_id: 'no-such-transfer', company_id: sim.demo.company_id }, kind: 'transfer' });
    await until(() => (caught.length > cases.length ? true : undefined), 'the 404');
    const missing = caught[cases.length];
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.error.cause.statusCode, 404);
    assert.equal(missing.track.final, false);
    assert.equal(inbox.get('out')!.length, 0);
  });

  it('times out cleanly at expires + margin: msg.track.timedOut with the last state, then closes', async () => {
    await load(trackFlow({ margin: '0' }, transferOp));
    const txId = await trackNewTransfer({ expires: (await simNow()) + 4 });
    // From now on every read of this transfer fails (503, retried): only the deadline can end it.
    await control(sim, '/faults/http', { method: 'GET', path: txId, status: 503, count: 1000 });
    try {
      const msg = await final();
      assert.deepEqual([msg.track.timedOut, msg.track.final, msg.track.state], [true, false, 'pending_transfer']);
      assert.equal(msg.payload.txStatus, 'pending_transfer', 'the last answer read');
      assert.equal(inbox.get('caught')!.length, 0, 'a timeout is not an error');
    } finally {
      await control(sim, '/faults/clear');
    }
    await helper.unload(); // closes without waiting on anything left behind
  });

  it('expired_transfer when the simulator clock passes expires', async () => {
    await load(trackFlow({}, transferOp));
    const txId = await trackNewTransfer({ expires: (await simNow()) + 600 });
    const advanced = await control(sim, '/clock/advance', { seconds: 700 });
    assert.ok(advanced.expired >= 1);
    const msg = await final();
    assert.deepEqual([msg.track.tx_id, msg.track.state, msg.track.final], [txId, 'expired_transfer', true]);
  });
});
