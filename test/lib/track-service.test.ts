/**
 * lib/tracking's TrackService without Node-RED (docs/nodes.md "custody-track"), against the
 * simulator over real sockets and a real track file: a transfer followed to `approved_transfer`
 * (progress on output 2, the final answer once on output 1, `done()`, the statuses, the feeds
 * joined then left), input refused naming its field with the node's texts, and a tracking resumed
 * by a second service on the same folder after the first closed (its msg rebuilt with
 * `resumed: true`, sent by the `send` option, its record reported so the next start finds nothing).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { approveAction, createTransfer, getAction, listActions, ValidationError } from '../../lib';
import { FileTrackStore, TrackService, trackStoreFile, type TrackMessage, type TrackServiceOptions, type TrackStatus } from '../../lib/tracking';
import { simulatedSuite } from '../helpers/simulated';
import { demoTransfer, tempDirPerTest, until } from '../helpers/support';

/** What a service sent, ended and showed. */
interface Seen {
  out: TrackMessage[];
  progress: TrackMessage[];
  done: Array<Error | undefined>;
  statuses: TrackStatus[];
  joined: number;
  left: number;
}

describe('TrackService (lib/tracking) against the simulator', function () {
  this.timeout(60000);
  const s = simulatedSuite('cf-track-service-');
  const folder = tempDirPerTest('cf-track-service-dir-');
  const services: TrackService[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.close(false);
  });

  /** A service of node `nodeId` on the test's folder; `seen` collects what it does. */
  function service(nodeId: string, seen: Seen, options: Partial<TrackServiceOptions> = {}): TrackService {
    const send = (outputs: [TrackMessage | null, TrackMessage | null]) => {
      if (outputs[0]) seen.out.push(outputs[0]);
      if (outputs[1]) seen.progress.push(outputs[1]);
    };
    const created = new TrackService({
      nodeId,
      folder: folder(),
      coordinator: async () => undefined,
      client: async () => s.client,
      kind: 'msg',
      traceKind: (type, operation) => (type === 'custody-transfer' && operation === 'create' ? 'transfer' : undefined),
      clientId: () => ({}),
      progress: true,
      firstDelayMs: 0,
      maxDelayMs: 200,
      marginMs: 60_000,
      joinFeeds: () => {
        seen.joined++;
        return async () => seen.left++;
      },
      util: { cloneMessage: (msg) => structuredClone(msg), generateId: () => randomUUID() },
      texts: {
        kindUnknown: (kinds) => `kind unknown (${kinds})`,
        kindExpected: (kinds, kind) => `expected one of ${kinds}, got ${kind}`,
        txIdRequired: () => 'tx_id required',
        clientIdRequired: () => 'client_id required',
        companyIdRequired: () => 'company_id required',
        notRecorded: (message) => `not recorded (${message})`,
      },
      send,
      error: (err) => seen.done.push(err),
      onStatus: (status) => seen.statuses.push(status),
      onProblem: ({ kind, error }) => assert.fail(`${kind}: ${error.message}`),
      ...options,
    });
    services.push(created);
    return created;
  }
  const fresh = (): Seen => ({ out: [], progress: [], done: [], statuses: [], joined: 0, left: 0 });

  /** A new transfer's id. */
  async function newTransfer(): Promise<string> {
    return (await createTransfer(s.client, demoTransfer(s.sim, { expires: Math.floor(Date.now() / 1000) + 3600 }))).data.tx_id;
  }

  /** Approve, as the demo core client, the pending transfer action of `txId`. */
  async function approve(txId: string): Promise<void> {
    const client_id = s.sim.demo.core_client_id;
    for (const a of (await listActions(s.client, { client_id })).data.actions) {
      if ((await getAction(s.client, { client_id, action_id: a.id })).data.details?.txID === txId) return void (await approveAction(s.client, { client_id, action_id: a.id }));
    }
    throw new Error(`no pending action for ${txId}`);
  }

  it('follows a transfer to approved_transfer: progress per status change, the final answer once, done, the feeds joined then left', async () => {
    const seen = fresh();
    const tracking = service('n1', seen);
    const tx_id = await newTransfer();
    const msg: TrackMessage = { _msgid: 'm1', payload: { tx_id }, custody: { type: 'custody-transfer', operation: 'create', company_id: s.sim.demo.company_id } };
    tracking.input(msg, (outputs) => {
      if (outputs[0]) seen.out.push(outputs[0]);
      if (outputs[1]) seen.progress.push(outputs[1]);
    }, (err) => seen.done.push(err));
    await until(() => seen.progress[0], 'the first read on output 2');
    assert.deepEqual(seen.statuses[0], { state: 'tracking', tracked: 1, resumed: 0 });
    await approve(tx_id);
    const out = await until(() => seen.out[0], 'the final answer on output 1');
    assert.equal(out, msg, 'the msg given is the one sent');
    assert.equal((out.payload as { txStatus: string }).txStatus, 'approved_transfer');
    assert.equal(out.statusCode, 200);
    assert.deepEqual({ ...out.track, startedAt: 0, finishedAt: 0, reads: 0 }, { kind: 'transfer', tx_id, company_id: s.sim.demo.company_id, state: 'approved_transfer', final: true, timedOut: false, reads: 0, startedAt: 0, finishedAt: 0 });
    assert.deepEqual(seen.progress.map((m) => m.track?.state), ['pending_transfer', 'approved_transfer']);
    await until(() => (seen.left ? true : undefined), 'the feeds left');
    assert.deepEqual(seen.done, [undefined]);
    assert.deepEqual(seen.statuses.at(-1), { state: 'ended', last: { outcome: 'final', state: 'approved_transfer' } });
    assert.equal(seen.joined, 1);
    assert.equal(seen.out.length, 1);
  });

  it('refuses input naming its field, with the texts given; nothing is followed', async () => {
    const seen = fresh();
    const tracking = service('n2', seen);
    const errors: Error[] = [];
    tracking.input({ payload: { tx_id: 't1' } }, () => assert.fail('nothing is sent'), (err) => errors.push(err!));
    tracking.input({ payload: {}, kind: 'transfer' }, () => assert.fail('nothing is sent'), (err) => errors.push(err!));
    tracking.input({ payload: { tx_id: 't1' }, kind: 'transfer' }, () => assert.fail('nothing is sent'), (err) => errors.push(err!));
    assert.ok(errors.every((e) => e instanceof ValidationError));
    assert.deepEqual(errors.map((e) => e.message), ['kind: kind unknown (transfer, withdrawal, swapMake, swapTake, sweep)', 'tx_id: tx_id required', 'company_id: company_id required']);
    assert.equal(seen.joined, 0);
  });

  it('resumes after a restart: the msg rebuilt with resumed: true, reported once, nothing left for the next start', async () => {
    const first = fresh();
    const before = service('n3', first);
    const tx_id = await newTransfer();
    before.input({ _msgid: 'm3', payload: { tx_id, company_id: s.sim.demo.company_id }, kind: 'transfer', topic: 'kept' }, () => undefined, (err) => first.done.push(err));
    await until(() => (first.statuses.some((st) => st.state === 'tracking') ? true : undefined), 'the msg followed');
    await services.splice(0)[0].close(false);
    assert.deepEqual(first.done, [undefined], 'close ends the msg; its record stays');
    await approve(tx_id);

    const second = fresh();
    service('n3', second);
    const out = await until(() => second.out[0], 'the resumed msg on output 1');
    assert.equal(out.resumed, true);
    assert.equal(out._msgid, 'm3');
    assert.equal(out.topic, 'kept');
    assert.equal(out.track?.state, 'approved_transfer');
    assert.ok(second.statuses.some((st) => st.state === 'tracking' && st.resumed === 1));
    await until(() => (second.statuses.some((st) => st.state === 'ended') ? true : undefined), 'the report written');
    await services.splice(0)[0].close(false);

    const store = await FileTrackStore.open(trackStoreFile(folder(), 'n3'));
    try {
      assert.deepEqual(await store.load(), [], 'the next start finds nothing unreported: nothing is sent again');
    } finally {
      await store.close();
    }
  });
});
