/**
 * Every payment exactly once under faults (docs/testing.md, "Exactly-once payments"): a fault
 * proxy (fault-proxy.ts) between the clients and the simulator answers 503 or drops the
 * connection before forwarding, drops the connection or answers 502 after the simulator
 * committed, holds the answer past the client's timeout, and arms the simulator's own 500/503
 * injection. Real simulator, real sockets, real RSA keys; lib and the nodes in a Node-RED runtime
 * (node-red-node-test-helper). The runs are in fault-runs.ts (shared with `npm run
 * bench:exactly-once`); this file asserts their figures. No timing is asserted.
 *
 * The proxy's seed is printed; `FAULT_SEED=<n>` repeats it (as far as the order of concurrent
 * requests allows).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { Simulator } from '../../simulator';
import { CustodyClient, SubmissionJournal, createTransfer, SubmissionConflictError, OUTCOME_UNKNOWN_CODE } from '../../lib';
import { FaultProxy, FAULT_KINDS } from '../helpers/fault-proxy';
import {
  FAULT_RULES,
  NodeDriver,
  censusOf,
  faultFlow,
  faultTransfer,
  figuresOf,
  nodeAnswer,
  resolveFiguresOf,
  resolveUnknownWithdrawals,
  runLibTransfers,
  runNodePayments,
  type CallRecord,
  type Figures,
  type NodeRun,
  type SimulatorUnderTest,
} from '../helpers/fault-runs';
import { startHelperServer, stopHelperServer } from '../helpers/node-flows';
import { redNodes } from '../helpers/red-setup';

const nodeModules = redNodes(['custody-config', 'custody-transfer', 'custody-withdraw']);

/** The client's timeout (ms) and the proxy's hold: the held answer always comes too late. */
const TIMEOUT_MS = 400;
const HOLD_MS = 800;
const CONCURRENCY = 24;

/** A one-line account of a run's figures, for the log. */
function line(name: string, f: Figures): string {
  return `${name}: ${f.calls} calls, ${f.requests} requests, ${f.definite} definite at once, ${f.errorsMarked} outcome-unknown errors (${f.errorsThatMovedMoney} errors had moved money), ${f.errorsUnmarked} other errors, ${f.movedMoneyAnswerLost} created by a request whose answer was lost, ${f.duplicates} duplicates, ${f.finalDefinite} definite in the end`;
}

describe('exactly once under faults: fault proxy between the clients and the simulator', function () {
  this.timeout(120000);
  const prefix = `eo-${process.pid}-${Date.now()}`;
  let dataDir: string;
  let sim: Simulator;
  let target: SimulatorUnderTest;
  let proxy: FaultProxy;
  let journalEnv: string | undefined;
  /** Process warnings during the runs (expected none: e.g. no MaxListenersExceededWarning with 24 requests in flight). */
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-exactly-once-'));
    // dedupe 'transfers': the simulator does not dedupe withdrawals (the spec promises it for transfers only), so
    // 0 duplicate withdrawals is the client's doing, not the simulator's.
    sim = await Simulator.start({ dataDir: path.join(dataDir, 'simulator'), port: 0, persist: false, dedupe: 'transfers' });
    target = {
      baseUrl: sim.baseUrl,
      controlUrl: sim.controlUrl,
      apiKey: sim.account.apiKey,
      privateKeyPem: sim.account.privateKeyPem,
      demo: sim.demo,
      census: async () => censusOf(sim.engine.state, prefix),
    };
    proxy = new FaultProxy({ target: sim.baseUrl, controlUrl: sim.controlUrl, rules: FAULT_RULES, holdMs: HOLD_MS });
    await proxy.start();
    proxy.faults = false;
    console.log(`      fault proxy seed ${proxy.seed} (FAULT_SEED=${proxy.seed} repeats it)`);
    journalEnv = process.env.CUSTODYFLOW_JOURNAL_DIR;
    process.env.CUSTODYFLOW_JOURNAL_DIR = path.join(dataDir, 'journal');
    process.on('warning', onWarning);
  });

  after(async () => {
    process.off('warning', onWarning);
    if (journalEnv === undefined) delete process.env.CUSTODYFLOW_JOURNAL_DIR;
    else process.env.CUSTODYFLOW_JOURNAL_DIR = journalEnv;
    await proxy?.stop();
    await sim?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe('lib', () => {
    let journal: SubmissionJournal;
    let calls: CallRecord[];

    before(async () => {
      journal = await SubmissionJournal.open(path.join(dataDir, 'lib-journal.jsonl'));
    });
    after(() => journal?.close());

    it('1,000 transfers with faults before and after commit: 0 duplicates, no unmarked error of a transfer that exists, every transfer one definite answer with the real tx_id', async () => {
      const before = { ...proxy.counts };
      calls = await runLibTransfers(target, proxy, { count: 1000, concurrency: CONCURRENCY, timeoutMs: TIMEOUT_MS, journal, prefix: `${prefix}-lib`, optOutEvery: 5, resendDelayMs: 100 });
      const f = figuresOf(calls, await target.census(), proxy);
      console.log(`      ${line('lib transfers', f)}; faults: ${FAULT_KINDS.map((k) => `${k} ${proxy.counts[k] - before[k]}`).join(', ')}`);
      for (const k of FAULT_KINDS) assert.ok(proxy.counts[k] > before[k], `fault ${k} injected`);
      assert.ok(f.movedMoneyAnswerLost > 0, 'some transfers were made by a request whose answer was lost');
      assert.ok(f.errorsMarked > 0, 'the calls without re-sends met outcome-unknown errors');
      assert.equal(f.duplicates, 0, 'no partner_txID has two transfers');
      assert.equal(f.unmarkedThatMovedMoney, 0, 'an error without the outcome-unknown mark means no transfer');
      assert.equal(f.markedWithoutCode, 0, 'every outcome-unknown error has code EOUTCOMEUNKNOWN');
      assert.equal(f.wrongTxId, 0, 'every definite answer carries the tx_id the simulator holds');
      assert.equal(f.finalDefinite, 1000, 'every transfer has one definite answer once the faults stop');
      assert.equal(calls.filter((c, i) => i % 5 !== 0 && !c.first.ok).length, 0, 'a transfer that re-sends ends definite at once');
    });

    it('the same partner_txID with another amount is refused (ECONFLICT naming send.amount), nothing sent', async () => {
      const key = calls.find((c) => c.first.ok)!.partner_txID;
      // Payments sent so far (a new client's asset check reads GET /assets: a read, not counted).
      const posts = () => proxy.records.filter((r) => r.method === 'POST').length;
      const seen = posts();
      const client = new CustodyClient({ baseUrl: proxy.baseUrl, apiKey: target.apiKey, privateKey: target.privateKeyPem });
      try {
        await assert.rejects(
          createTransfer(client, { ...faultTransfer(target.demo, key), send: { symbol: 'BTC-TESTNET', amount: 2 } }, { journal }),
          (e: unknown) => e instanceof SubmissionConflictError && e.code === 'ECONFLICT' && e.differs.includes('send.amount') && /send\.amount/.test(e.message),
        );
      } finally {
        await client.close();
      }
      assert.equal(posts(), seen, 'nothing sent');
    });
  });

  describe('lib: a re-click of a transfer the journal holds as answered, while every request fails', () => {
    let journal: SubmissionJournal;
    let failing: FaultProxy;
    let client: CustodyClient;

    before(async () => {
      journal = await SubmissionJournal.open(path.join(dataDir, 'reclick-journal.jsonl'));
      // Every transfer POST answered 503 before it reaches the simulator.
      failing = new FaultProxy({ target: sim.baseUrl, controlUrl: sim.controlUrl, rules: [{ method: 'POST', path: /\/transfer$/, rates: { before503: 1 } }], seed: 1 });
      await failing.start();
      client = new CustodyClient({ baseUrl: failing.baseUrl, apiKey: target.apiKey, privateKey: target.privateKeyPem, timeoutMs: TIMEOUT_MS, retryDelayMs: 20 });
    });
    after(async () => {
      await client?.close();
      await failing?.stop();
      await journal?.close();
    });

    it('is answered from the journal (existing, the same tx_id), and the entry stays answered', async () => {
      // expires 8 s ahead: re-sends after an unknown outcome stop 5 s before it (lib default margin).
      const request = { ...faultTransfer(target.demo, `${prefix}-reclick`), expires: Math.floor(Date.now() / 1000) + 8 };
      failing.faults = false;
      const first = await createTransfer(client, request, { journal });
      assert.equal(first.outcome, 'new');
      failing.faults = true;
      const again = await createTransfer(client, request, { journal, resendDelayMs: 50 });
      assert.deepEqual([again.outcome, again.data.tx_id], ['existing', first.data.tx_id]);
      assert.ok(failing.counts.before503 > 0, 'the re-click was sent and refused by the failing service');
      const entry = journal.get({ kind: 'transfer', company_id: target.demo.company_id, partner_txID: request.partner_txID });
      assert.deepEqual([entry?.state, entry?.tx_id], ['answered', first.data.tx_id]);
    });
  });

  describe('nodes in a Node-RED runtime', () => {
    let driver: NodeDriver;
    let transfers: NodeRun;
    let withdrawals: NodeRun;

    before(async () => {
      await startHelperServer();
      await helper.load(nodeModules as any, faultFlow(proxy.baseUrl, target.demo.company_id, TIMEOUT_MS / 1000, 'helper'), { cfg: { apiKey: target.apiKey, privateKey: target.privateKeyPem } });
      driver = new NodeDriver((id) => helper.getNode(id));
    });
    after(async () => {
      await helper.unload();
      await stopHelperServer();
    });

    it('300 transfers through custody-transfer: 0 duplicates, every transfer one success (new or existing) with the real tx_id', async () => {
      const before = proxy.injected;
      transfers = await runNodePayments(target, proxy, driver, { kind: 'transfer', count: 300, concurrency: CONCURRENCY, prefix: `${prefix}-nt`, stopFaultsWhenAllStarted: true });
      const f = figuresOf(transfers.calls, await target.census(), proxy);
      console.log(`      ${line('node transfers', f)}; ${proxy.injected - before} faults`);
      assert.ok(proxy.injected > before, 'faults were injected');
      assert.equal(f.duplicates, 0);
      assert.equal(f.unmarkedThatMovedMoney, 0);
      assert.equal(f.markedWithoutCode, 0, 'every outcome-unknown error: msg.outcome outcomeUnknown and code EOUTCOMEUNKNOWN');
      assert.equal(f.wrongTxId, 0);
      assert.equal(f.definite, 300, 'every transfer ends in one success');
      assert.ok(transfers.calls.every((c) => c.first.ok && (c.first.outcome === 'new' || c.first.outcome === 'existing')), 'msg.outcome is new or existing');
    });

    it('300 withdrawals through custody-withdraw: 0 duplicates, each definite or outcome unknown (EOUTCOMEUNKNOWN on the msg)', async () => {
      const before = proxy.injected;
      withdrawals = await runNodePayments(target, proxy, driver, { kind: 'withdraw', count: 300, concurrency: CONCURRENCY, prefix: `${prefix}-nw`, stopFaultsWhenAllStarted: false });
      const f = figuresOf(withdrawals.calls, await target.census(), proxy);
      console.log(`      ${line('node withdrawals', f)}; ${proxy.injected - before} faults`);
      assert.ok(f.errorsMarked > 0 && f.errorsThatMovedMoney > 0, 'some withdrawals met an unknown outcome after the simulator made them');
      assert.equal(f.duplicates, 0, 'no partner_txID has two withdrawals (the simulator does not dedupe them: the journal does)');
      assert.equal(f.unmarkedThatMovedMoney, 0, 'an error without the outcome-unknown mark means no withdrawal');
      assert.equal(f.markedWithoutCode, 0, 'every outcome-unknown error: msg.outcome outcomeUnknown and code EOUTCOMEUNKNOWN');
      assert.equal(f.wrongTxId, 0);
      assert.equal(f.definite + f.errorsMarked, 300, 'every withdrawal is definite or outcome unknown');
    });

    it('outcome-unknown withdrawals: a re-send is refused (EOUTCOMEUNKNOWN, nothing sent); resolve (under GET faults, then without) finds each one that exists; after found the re-send answers existing from the journal', async () => {
      const resolved = await resolveUnknownWithdrawals(proxy, driver, withdrawals, 8);
      const f = resolveFiguresOf(resolved, await target.census());
      console.log(`      resolves: ${f.resolved} outcome-unknown withdrawals, ${f.existing} exist; under GET faults ${f.underFaults.found} found, ${f.underFaults.notFound} not found, ${f.underFaults.failed} failed; then ${f.found} found, ${f.notFound} not found, ${f.other} other`);
      assert.ok(f.resolved > 0 && f.existing > 0);
      assert.equal(f.beforeNotRefused, 0, 'a re-send before the resolve is refused with EOUTCOMEUNKNOWN');
      assert.equal(f.other, 0, 'each resolve answers found or not found');
      assert.equal(f.foundRight, f.existing, 'each one that exists is found, with its tx_id');
      assert.equal(f.wrong, 0, 'no resolve, under GET faults or not, answers not found for one that exists or found for one that does not');
      assert.equal(f.afterFoundWrong, 0, 'after found: existing with the found tx_id');
      assert.equal(f.afterNotFoundNotRefused, 0, 'not found before its expires: the key stays held');
      assert.equal(f.sent, 0, 'no re-send sent anything');
    });

    it('a msg with a used partner_txID and another amount is refused (ECONFLICT naming send.amount), nothing sent', async () => {
      for (const [node, run] of [['transfer', transfers], ['withdraw', withdrawals]] as const) {
        const i = run.calls.findIndex((c) => c.first.ok);
        const msg = run.msgs[i] as { payload: { partner_txID: string; send: { symbol: string; amount: number } } };
        const seen = proxy.records.length;
        const reply = await driver.send(node, { payload: { ...msg.payload, send: { ...msg.payload.send, amount: msg.payload.send.amount + 1 } } });
        const a = nodeAnswer(reply);
        assert.ok(!a.ok && a.code === 'ECONFLICT', `${node}: ${JSON.stringify(a)}`);
        assert.match(a.message, /send\.amount/);
        assert.equal(reply.caught.outcome, 'notSent');
        assert.notEqual(a.code, OUTCOME_UNKNOWN_CODE);
        assert.equal(proxy.records.length, seen, `${node}: nothing sent`);
      }
    });
  });

  describe('afterwards', () => {
    it('no process warning during the runs (24 requests in flight on one client)', () => {
      assert.deepEqual(warnings, []);
    });
  });
});
