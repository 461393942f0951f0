/**
 * The submission journal shared through Redis (docs/scale-out.md "What is shared, and what is not",
 * "Redis down, Redis lost"): a key reserved on one instance is recognised on every other; with
 * Redis down, money-moving nodes do not send without a journal reservation. Two "instances": two
 * Coordinators (instance names `a` and `b`) on one real redis-server (test/helpers/redis-server.ts,
 * no persistence: a restart loses every key), each with its own file journal, sending through two
 * clients to one real simulator that dedupes transfers only (so one withdrawal per key is the
 * journal's doing, not the simulator's). No timing is asserted.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CustodyClient,
  SubmissionConflictError,
  SubmissionJournal,
  createTransfer,
  createWithdraw,
  resolveSubmission,
  type SubmissionRef,
  type TransferRequest,
  type WithdrawRequest,
} from '../../lib';
import { Coordinator, SharedSubmissionJournal } from '../../lib/coordination';
import { RedisServer } from '../helpers/redis-server';
import { accountClient, startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';
import { sleep } from '../helpers/red-process';
import { journalKey } from '../../lib/client/submission/journal';

const now = () => Math.floor(Date.now() / 1000);

/** Wait until `done()` holds (polling every 20 ms), at most `ms`; fails naming `what` otherwise. */
async function until(what: string, done: () => boolean | Promise<boolean>, ms = 20000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

describe('shared submission journal: two instances on one Redis, one simulator', function () {
  this.timeout(120000);
  const prefix = `shj-${process.pid}-${Date.now()}`;
  const redis = new RedisServer();
  let simulated: SimulatedAccount;
  let clientA: CustodyClient;
  let clientB: CustodyClient;
  let dir: string;
  let localA: SubmissionJournal;
  let localB: SubmissionJournal;
  let coordinatorA: Coordinator;
  let coordinatorB: Coordinator;
  let sharedA: SharedSubmissionJournal;
  let sharedB: SharedSubmissionJournal;

  before(async () => {
    await redis.start();
    simulated = await startSimulated('cf-shared-journal-', { dedupe: 'transfers', persist: false });
    clientA = simulated.client;
    clientB = accountClient(simulated.sim);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-shared-journal-files-'));
    localA = await SubmissionJournal.open(path.join(dir, 'a.jsonl'));
    localB = await SubmissionJournal.open(path.join(dir, 'b.jsonl'));
    const keyPrefix = `${prefix}:`;
    coordinatorA = new Coordinator({ url: redis.url, instance: 'a', keyPrefix, leaseMs: 1000 });
    coordinatorB = new Coordinator({ url: redis.url, instance: 'b', keyPrefix, leaseMs: 1000 });
    await Promise.all([coordinatorA.whenReady(), coordinatorB.whenReady()]);
    sharedA = new SharedSubmissionJournal(localA, coordinatorA);
    sharedB = new SharedSubmissionJournal(localB, coordinatorB);
  });

  after(async () => {
    await sharedA?.close();
    await sharedB?.close();
    await coordinatorA?.close();
    await coordinatorB?.close();
    await localA?.close();
    await localB?.close();
    clientB?.close();
    await stopSimulated(simulated ?? {});
    await redis.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A withdrawal from the demo ETH-TESTNET wallet to its whitelisted address (`amount` base units). */
  function withdrawal(partnerTxId: string, amount = 1000): WithdrawRequest & { company_id: string } {
    const demo = simulated.sim.demo;
    return {
      company_id: demo.company_id,
      wallet_id: demo.wallets['ETH-TESTNET'].wallet_id,
      address: demo.whitelist['ETH-TESTNET'],
      expires: now() + 3600,
      benefit_of: 'Shared journal',
      account_no: 'SHARED',
      reference: `ref ${partnerTxId}`,
      partner_txID: partnerTxId,
      send: { symbol: 'ETH-TESTNET', amount },
    };
  }

  /** A transfer of 1 base unit from the demo BTC-TESTNET wallet to the counterparty's. */
  function transfer(partnerTxId: string): TransferRequest & { company_id: string } {
    const demo = simulated.sim.demo;
    return {
      company_id: demo.company_id,
      wallet_id: demo.wallets['BTC-TESTNET'].wallet_id,
      counterparty_wallet_address: demo.counterparty.wallets['BTC-TESTNET'].wallet_id,
      expires: now() + 3600,
      benefit_of: 'Shared journal',
      account_no: 'SHARED',
      reference: `ref ${partnerTxId}`,
      partner_txID: partnerTxId,
      send: { symbol: 'BTC-TESTNET', amount: 1 },
    };
  }

  /** The simulator's withdrawals (or transfers) with `partnerTxId`. */
  function made(kind: 'withdrawals' | 'transfers', partnerTxId: string): number {
    const records = simulated.sim.engine.state[kind] as Record<string, { partner_txID: string }>;
    return Object.values(records).filter((r) => r.partner_txID === partnerTxId).length;
  }

  /** Every withdrawal and transfer the simulator holds. */
  function allPayments(): number {
    return Object.keys(simulated.sim.engine.state.withdrawals).length + Object.keys(simulated.sim.engine.state.transfers).length;
  }

  const withdrawRef = (partnerTxId: string): SubmissionRef => ({ kind: 'withdrawal', company_id: simulated.sim.demo.company_id, partner_txID: partnerTxId });

  it('(a) one withdrawal sent from both instances at once with one partner_txID: exactly one withdrawal; the other caller is answered existing from the journal', async () => {
    const key = `${prefix}-w1`;
    const body = withdrawal(key);
    const [a, b] = await Promise.all([createWithdraw(clientA, body, { journal: sharedA }), createWithdraw(clientB, body, { journal: sharedB })]);
    assert.equal(made('withdrawals', key), 1, 'one withdrawal in the simulator');
    const sent = [a, b].filter((r) => !r.fromJournal);
    const answered = [a, b].filter((r) => r.fromJournal);
    assert.equal(sent.length, 1, 'one call sent it');
    assert.equal(sent[0].outcome, 'new');
    assert.deepEqual([answered.length, answered[0]?.outcome, answered[0]?.data.tx_id], [1, 'existing', sent[0].data.tx_id], 'the other is answered from the journal with the same tx_id');
    // The instance that did not send knows it too (reads Redis), and a resolve there answers from the journal.
    for (const shared of [sharedA, sharedB]) {
      const entry = await shared.get(withdrawRef(key));
      assert.deepEqual([entry?.state, entry?.tx_id], ['answered', sent[0].data.tx_id]);
      assert.equal(await shared.holderOf(sent[0].data.tx_id), journalKey(withdrawRef(key)));
    }
    const resolved = await resolveSubmission(clientB, withdrawRef(key), sharedB);
    assert.deepEqual([resolved.result, resolved.tx_id], ['found', sent[0].data.tx_id]);
  });

  it('control: the two file journals alone (no Redis) send that withdrawal twice (the simulator does not dedupe withdrawals)', async () => {
    const key = `${prefix}-control`;
    const body = withdrawal(key);
    const results = await Promise.all([createWithdraw(clientA, body, { journal: localA }), createWithdraw(clientB, body, { journal: localB })]);
    assert.deepEqual([results.map((r) => r.outcome), made('withdrawals', key)], [['new', 'new'], 2]);
  });

  it('Redis key names carry hashes only: no partner_txID, owner id or body', async () => {
    const keys = await coordinatorA.run((r) => r.keys(`${prefix}:submission*`));
    assert.ok(keys.length > 0);
    for (const k of keys) assert.match(k.slice(prefix.length + 1), /^submission(-tx|-lock)?:[0-9a-f]{64}$/);
  });

  it('(a) many withdrawals, each sent three times from each instance at once: one withdrawal per partner_txID', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `${prefix}-many-${i}`);
    const calls = keys.flatMap((key, i) => {
      const body = withdrawal(key, 2000 + i);
      return [sharedA, sharedB, sharedA, sharedB, sharedA, sharedB].map((journal, n) => createWithdraw(n % 2 === 0 ? clientA : clientB, body, { journal }));
    });
    const results = await Promise.all(calls);
    for (const [i, key] of keys.entries()) {
      assert.equal(made('withdrawals', key), 1, `${key}: one withdrawal`);
      const mine = results.slice(i * 6, i * 6 + 6);
      assert.equal(mine.filter((r) => !r.fromJournal).length, 1, `${key}: sent once`);
      assert.equal(new Set(mine.map((r) => r.data.tx_id)).size, 1, `${key}: every caller has the same tx_id`);
    }
  });

  it('(b) one transfer sent from both instances at once with one partner_txID: one transaction, both callers have its tx_id', async () => {
    const key = `${prefix}-t1`;
    const body = transfer(key);
    const [a, b] = await Promise.all([createTransfer(clientA, body, { journal: sharedA }), createTransfer(clientB, body, { journal: sharedB })]);
    assert.equal(made('transfers', key), 1, 'one transfer in the simulator');
    assert.equal(a.data.tx_id, b.data.tx_id);
    assert.deepEqual([a.outcome, b.outcome].sort(), ['existing', 'new']);
  });

  it('(c) the same partner_txID with another body on the other instance: SubmissionConflictError naming send.amount, nothing sent', async () => {
    const key = `${prefix}-c1`;
    await createWithdraw(clientA, withdrawal(key, 1000), { journal: sharedA });
    const before = allPayments();
    await assert.rejects(
      createWithdraw(clientB, withdrawal(key, 1001), { journal: sharedB }),
      (e: unknown) => e instanceof SubmissionConflictError && e.code === 'ECONFLICT' && e.differs.includes('send.amount') && /send\.amount/.test(e.message),
    );
    assert.equal(allPayments(), before, 'nothing sent');
    assert.equal(made('withdrawals', key), 1);
  });

  it('a key freed on one instance (the API refused its request) is free on the other', async () => {
    const key = `${prefix}-f1`;
    const refused = { ...withdrawal(key), address: 'not-whitelisted-address' };
    await assert.rejects(createWithdraw(clientA, refused, { journal: sharedA }), (e: unknown) => (e as { failure?: string }).failure === 'refused');
    assert.equal(await sharedB.get(withdrawRef(key)), undefined, 'the other instance sees the key free');
    const sent = await createWithdraw(clientB, withdrawal(key), { journal: sharedB });
    assert.deepEqual([sent.outcome, sent.fromJournal, made('withdrawals', key)], ['new', false, 1]);
  });

  it('(d) Redis down: nothing is reserved or sent (ECOORDINATION); after a restart that lost every key, the entries written back from the local journal are recognised by the other instance', async () => {
    const keptKey = `${prefix}-kept`;
    const kept = withdrawal(keptKey);
    const first = await createWithdraw(clientA, kept, { journal: sharedA });

    await redis.stop();
    await until('both coordinators see Redis gone', () => coordinatorA.state !== 'ready' && coordinatorB.state !== 'ready');
    const before = allPayments();
    const downKey = `${prefix}-down`;
    await assert.rejects(createWithdraw(clientA, withdrawal(downKey), { journal: sharedA }), (e: unknown) => (e as { code?: string }).code === 'ECOORDINATION');
    await assert.rejects(createTransfer(clientB, transfer(`${prefix}-down-t`), { journal: sharedB }), (e: unknown) => (e as { code?: string }).code === 'ECOORDINATION');
    await assert.rejects(sharedB.reserve(withdrawRef(downKey), withdrawal(downKey)), (e: unknown) => (e as { code?: string }).code === 'ECOORDINATION');
    await assert.rejects(sharedB.get(withdrawRef(keptKey)), (e: unknown) => (e as { code?: string }).code === 'ECOORDINATION', 'no local answer while Redis is away');
    assert.equal(allPayments(), before, 'nothing reached the simulator');
    assert.equal(localA.get(withdrawRef(downKey)), undefined, 'no local reservation left behind');
    assert.equal(localB.get(withdrawRef(downKey)), undefined, 'no local reservation left behind');

    await redis.restart();
    await Promise.all([coordinatorA.whenReady(), coordinatorB.whenReady()]);
    assert.ok(coordinatorA.lostAt > 0 && coordinatorB.lostAt > 0, 'both saw the data loss');
    const entry = await sharedB.get(withdrawRef(keptKey));
    assert.deepEqual([entry?.state, entry?.tx_id], ['answered', first.data.tx_id], 'written back by instance a, seen by instance b');
    assert.equal(localB.get(withdrawRef(keptKey)), undefined, 'b knows it from Redis alone');
    const again = await createWithdraw(clientB, kept, { journal: sharedB });
    assert.deepEqual([again.outcome, again.fromJournal, again.data.tx_id], ['existing', true, first.data.tx_id]);
    assert.equal(made('withdrawals', keptKey), 1);
    // Redis is back: the key refused while it was away is sent now, once.
    const late = await createWithdraw(clientA, withdrawal(downKey), { journal: sharedA });
    assert.deepEqual([late.outcome, made('withdrawals', downKey)], ['new', 1]);
  });

  it('a change after sending while Redis is away is kept in the local file and written to Redis once it is back', async () => {
    const key = `${prefix}-later`;
    const ref = withdrawRef(key);
    const entry = await sharedA.reserve(ref, withdrawal(key));
    assert.equal((await sharedB.get(ref))?.state, 'sending', 'b sees the reservation');
    await redis.stop();
    await until('instance a sees Redis gone', () => coordinatorA.state !== 'ready');
    await sharedA.answered(entry, 200, { tx_id: `tx-${key}`, status: 'new' });
    assert.equal(localA.get(ref)?.state, 'answered', 'recorded in the local file');
    assert.equal(sharedA.pending, 1, 'waiting for Redis');

    await redis.restart();
    await Promise.all([coordinatorA.whenReady(), coordinatorB.whenReady()]);
    await until('the change is written', () => sharedA.pending === 0);
    const seen = await sharedB.get(ref);
    assert.deepEqual([seen?.state, seen?.tx_id], ['answered', `tx-${key}`]);
    assert.equal(await sharedB.holderOf(`tx-${key}`), journalKey(ref));
  });
});
