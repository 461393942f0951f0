/**
 * Exactly-once payments in lib (docs/nodes.md "Retries: the three failure kinds"): the durable
 * submission journal, the three failure kinds, transfers re-sent after an unknown outcome, repeated
 * keys answered from the journal or refused, and resolve against the real simulator.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import {
  ApiError,
  CustodyClient,
  OutcomeUnknownError,
  SubmissionConflictError,
  SubmissionJournal,
  createTransfer,
  createWithdraw,
  SUBMISSION_KINDS,
  TRANSACTION_STATES,
  resolveSubmission,
  submitRequest,
  type SubmissionRef,
  type SubmitResult,
  type WithdrawRequest,
} from '../../lib';
import { CountingServer, SIMULATOR_ASSETS, isAssetListRequest } from '../helpers/counting-server';
import { startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';
import { demoTransfer } from '../helpers/support';
import { recordedTransfer, recordedWithdrawal } from '../helpers/requests';
import { bodyHash, differingFields } from '../../lib/client/submission/journal';

const now = () => Math.floor(Date.now() / 1000);
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cf-journal-'));

describe('submission journal (lib/client/submission/journal.ts)', () => {
  let dir: string;
  beforeEach(() => (dir = tmp()));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const ref: SubmissionRef = { kind: 'withdrawal', company_id: 'c1', partner_txID: 'inv-1' };
  const body = { wallet_id: 'w1', address: 'addr', expires: now() + 600, reference: 'r', partner_txID: 'inv-1', send: { symbol: 'BTC-TESTNET', amount: 5 } };

  it('keeps answers across a reopen, and a request recorded but never answered reopens as unknown', async () => {
    const file = path.join(dir, 'j.jsonl');
    let j = await SubmissionJournal.open(file);
    const answered = await j.reserve(ref, body);
    await j.answered(answered, 200, { tx_id: 't1', status: 'new' });
    await j.reserve({ ...ref, partner_txID: 'inv-2' }, { ...body, partner_txID: 'inv-2' });
    await j.close();
    j = await SubmissionJournal.open(file);
    assert.equal(j.get(ref)?.state, 'answered');
    assert.equal(j.get(ref)?.tx_id, 't1');
    assert.equal(j.holderOf('t1'), j.get(ref)?.key);
    assert.equal(j.get({ ...ref, partner_txID: 'inv-2' })?.state, 'unknown', 'crash between recorded and answered');
    await j.close();
  });

  it('a compaction while records are being written loses none of them', async () => {
    const file = path.join(dir, 'j.jsonl');
    let j = await SubmissionJournal.open(file);
    const refs = Array.from({ length: 300 }, (_, i) => ({ ...ref, partner_txID: `c${i}` }));
    const entries = await Promise.all(refs.map((r) => j.reserve(r, { ...body, partner_txID: r.partner_txID })));
    const fresh = Array.from({ length: 50 }, (_, i) => ({ ...ref, partner_txID: `n${i}` }));
    await Promise.all([...entries.map((e) => j.free(e, 'refused')), ...fresh.map((r) => j.reserve(r, { ...body, partner_txID: r.partner_txID }))]);
    await j.close();
    j = await SubmissionJournal.open(file);
    assert.equal(j.size, 50);
    assert.ok(fresh.every((r) => j.get(r)), 'every new reservation kept');
    assert.ok(refs.every((r) => !j.get(r)), 'every freed key stays free');
    await j.close();
  });

  it('drops a line cut off by a crash (never acknowledged) and keeps the rest', async () => {
    const file = path.join(dir, 'j.jsonl');
    const j = await SubmissionJournal.open(file);
    await j.reserve(ref, body);
    await j.close();
    fs.appendFileSync(file, '{"op":"answer","key":"withdraw\\nc1\\ninv-1","statusCo');
    const again = await SubmissionJournal.open(file);
    assert.equal(again.get(ref)?.state, 'unknown');
    await again.close();
    assert.ok(fs.readFileSync(file, 'utf8').endsWith('\n'));
  });

  describe('a journal written before the kinds took the spec\'s names (a withdrawal stored as "withdraw")', () => {
    const withdrawal: SubmissionRef = { kind: 'withdrawal', company_id: 'c1', partner_txID: 'inv-old' };
    const oldBody = { ...body, partner_txID: 'inv-old' };
    const key = 'withdraw\nc1\ninv-old';
    const reserved = () => ({ key, kind: 'withdraw', owner: 'c1', partner_txID: 'inv-old', bodyHash: bodyHash(oldBody), body: oldBody, expires: oldBody.expires });

    /** The journal of a file holding `lines` (written as they are). */
    const openFile = (lines: object[]): Promise<SubmissionJournal> => {
      const file = path.join(dir, 'j.jsonl');
      fs.writeFileSync(file, lines.map((l) => JSON.stringify(l) + '\n').join(''));
      return SubmissionJournal.open(file);
    };

    /** The same withdrawal submitted again through `journal`, with a client that counts what it is asked to send and sends nothing. */
    const submitAgain = async (journal: SubmissionJournal): Promise<{ result: unknown; sent: string[] }> => {
      const sent: string[] = [];
      const client = { signal: new AbortController().signal, request: async (method: string, p: string) => sent.push(`${method} ${p}`) && Promise.reject(new Error('nothing may be sent')) } as unknown as CustodyClient;
      const request = { method: 'POST' as const, path: '/company/c1/withdraw', body: oldBody, idempotent: false };
      const result = await submitRequest(client, withdrawal, request, { journal }).catch((e: unknown) => e);
      return { result, sent };
    };

    it('an answered withdrawal as an earlier version wrote it is the same payment: answered from the journal, nothing sent', async () => {
      const at = now();
      const j = await openFile([
        { op: 'reserve', ...reserved(), at },
        { op: 'answer', key, statusCode: 200, tx_id: 'tx-old', answer: { tx_id: 'tx-old', status: 'new' }, at },
      ]);
      try {
        assert.deepEqual([j.get(withdrawal)?.state, j.get(withdrawal)?.kind, j.get(withdrawal)?.tx_id, j.holderOf('tx-old')], ['answered', 'withdrawal', 'tx-old', key]);
        const { result, sent } = await submitAgain(j);
        const again = result as SubmitResult<{ tx_id: string }>;
        assert.deepEqual([again.fromJournal, again.outcome, again.data.tx_id], [true, 'existing', 'tx-old']);
        assert.deepEqual(sent, [], 'no second withdrawal');
      } finally {
        await j.close();
      }
    });

    it('a withdrawal with an unknown outcome in a compacted file of an earlier version is refused, nothing sent', async () => {
      const at = now();
      const j = await openFile([{ op: 'entry', ...reserved(), firstAttempt: at, state: 'unknown', updated: at }]);
      try {
        assert.equal(j.get(withdrawal)?.state, 'unknown');
        const { result, sent } = await submitAgain(j);
        assert.ok(result instanceof OutcomeUnknownError, String(result));
        assert.deepEqual(sent, [], 'no second withdrawal');
      } finally {
        await j.close();
      }
    });

    it('keeps writing the stored spelling, so an earlier version reading the file finds the payment too', async () => {
      const j = await openFile([]);
      await j.reserve(withdrawal, oldBody);
      await j.close();
      const written = fs.readFileSync(j.path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { key: string; kind: string });
      assert.deepEqual(written.map((l) => [l.key, l.kind]), [[key, 'withdraw']]);
    });
  });

  it('each kind is owned by the path id its transaction is read with (lib/api/states.ts)', () => {
    for (const info of Object.values(SUBMISSION_KINDS)) assert.equal(info.owner, TRANSACTION_STATES[info.transaction].owner, info.transaction);
  });

  it('names the fields that differ, leaving out expires', () => {
    assert.deepEqual(differingFields(body, { ...body, expires: body.expires + 60, reference: 'x', send: { symbol: 'BTC-TESTNET', amount: 6 } }), ['reference', 'send.amount']);
  });

  it('is bounded: entries past their retention are dropped and the file compacted', async () => {
    const file = path.join(dir, 'j.jsonl');
    let clock = Date.now();
    const j = await SubmissionJournal.open(file, { retentionSeconds: 60, now: () => clock });
    for (let i = 0; i < 600; i++) {
      const r = { ...ref, partner_txID: `k${i}` };
      const e = await j.reserve(r, { ...body, partner_txID: `k${i}` });
      await j.answered(e, 200, { tx_id: `t${i}` });
    }
    await j.close();
    clock += (600 + 61) * 1000; // past expires + retention
    const later = await SubmissionJournal.open(file, { retentionSeconds: 60, now: () => clock });
    assert.equal(later.size, 0);
    await later.close();
    assert.equal(fs.readFileSync(file, 'utf8'), '');
  });
});

describe('exactly-once sending (lib/client/submission/submit.ts), against a scripted server', () => {
  let server: CountingServer;
  let client: CustodyClient;
  let dir: string;
  let journal: SubmissionJournal;
  /** Statuses to answer POSTs with, in order; then 200 with the default body. */
  let script: number[];

  beforeEach(async () => {
    script = [];
    server = new CountingServer({
      answer: (req, s) => {
        if (isAssetListRequest(req)) return { status: 200, body: JSON.stringify({ assets: SIMULATOR_ASSETS }) };
        const status = req.method === 'POST' ? script.shift() ?? 200 : 200;
        return { status, body: status === 200 ? s.body : '{"code":' + status + ',"msg":"scripted"}' };
      },
    });
    await server.start();
    client = new CustodyClient({ baseUrl: server.baseUrl, apiKey: 'k', unsigned: true, attempts: 1, timeoutMs: 2000 });
    dir = tmp();
    journal = await SubmissionJournal.open(path.join(dir, 'j.jsonl'));
  });
  afterEach(async () => {
    await client.close();
    await journal.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** What the tests send: invoice 1 (`inv-1`) of 5 base units. */
  const invoice = { reference: 'inv 1', partner_txID: 'inv-1', send: { symbol: 'BTC-TESTNET', amount: 5 } };
  const transfer = (over: Parameters<typeof recordedTransfer>[0] = {}) => recordedTransfer({ ...invoice, ...over });
  const withdraw = (over: Partial<WithdrawRequest> = {}) => recordedWithdrawal({ ...invoice, address: 'tb1qaddress', ...over });
  const posts = () => server.seen.filter((r) => r.method === 'POST');

  it('tells the three failure kinds apart', async () => {
    script = [400];
    const refused = await createWithdraw(client, withdraw(), { journal }).catch((e) => e);
    assert.ok(refused instanceof ApiError && refused.failure === 'refused' && !refused.outcomeUnknown);
    assert.equal(journal.size, 0, 'a refused key is free again');

    const port = await new Promise<number>((r) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => r(p));
      });
    });
    const closed = new CustodyClient({ baseUrl: `http://127.0.0.1:${port}/api/v1/p`, apiKey: 'k', unsigned: true, attempts: 1 });
    const notSent = await createWithdraw(closed, withdraw(), { journal }).catch((e) => e);
    await closed.close();
    assert.ok(notSent instanceof ApiError && notSent.failure === 'notSent', String(notSent));
    assert.equal(journal.size, 0, 'a key whose request was not sent is free again');

    script = [502];
    const unknown = await createWithdraw(client, withdraw(), { journal }).catch((e) => e);
    assert.ok(unknown instanceof OutcomeUnknownError);
    assert.equal(unknown.code, 'EOUTCOMEUNKNOWN');
    assert.equal(unknown.outcomeUnknown, true);
    assert.deepEqual([unknown.kind, unknown.company_id, unknown.partner_txID], ['withdrawal', 'c1', 'inv-1']);
    assert.match(unknown.message, /outcome unknown: withdrawal partner_txID "inv-1" of company c1/);
    assert.equal((unknown.cause as { last: { statusCode: number } }).last.statusCode, 502);
  });

  it('a withdrawal with an unknown outcome is refused until resolved, nothing sent; another body is refused naming the fields', async () => {
    script = [503];
    await assert.rejects(createWithdraw(client, withdraw(), { journal }), OutcomeUnknownError);
    assert.equal(posts().length, 1);
    const again = await createWithdraw(client, withdraw({ expires: now() + 900 }), { journal }).catch((e) => e);
    assert.ok(again instanceof OutcomeUnknownError && again.attempts === 0, String(again));
    assert.match(again.message, /run the resolve operation/);
    const other = await createWithdraw(client, withdraw({ send: { symbol: 'BTC-TESTNET', amount: 6 } }), { journal }).catch((e) => e);
    assert.ok(other instanceof SubmissionConflictError);
    assert.equal(other.code, 'ECONFLICT');
    assert.deepEqual(other.differs, ['send.amount']);
    assert.equal(posts().length, 1, 'nothing more was sent');
  });

  it('a transfer with an unknown outcome is sent again, same bytes, until a definite answer', async () => {
    script = [502, 503, 500];
    server.body = '{"tx_id":"t-real","status":"existing"}';
    const res = await createTransfer(client, transfer(), { journal, resendDelayMs: 20 });
    assert.equal(res.outcome, 'existing');
    assert.equal(res.data.tx_id, 't-real');
    assert.equal(res.attempts, 4);
    assert.equal(new Set(posts().map((r) => r.body)).size, 1, 'every attempt sent the same body bytes');
    assert.equal(journal.get({ kind: 'transfer', company_id: 'c1', partner_txID: 'inv-1' })?.state, 'answered');
  });

  it('a transfer gives up with one outcome-unknown error at its expires', async () => {
    script = Array(100).fill(502);
    const err = await createTransfer(client, transfer({ expires: now() + 7 }), { journal, resendDelayMs: 50, maxResendDelayMs: 200 }).catch((e) => e);
    assert.ok(err instanceof OutcomeUnknownError, String(err));
    assert.match(err.message, /no definite answer before its expires/);
    assert.ok((err.attempts ?? 0) > 1, String(err.attempts));
  });

  it('a repeated transfer is sent again with the first body (its expires), and answers existing', async () => {
    const first = transfer();
    await createTransfer(client, first, { journal });
    server.body = '{"tx_id":"counted","status":"existing"}';
    const second = await createTransfer(client, transfer({ expires: now() + 1200 }), { journal });
    assert.equal(second.outcome, 'existing');
    assert.equal(posts().length, 2);
    assert.equal(posts()[0].body, posts()[1].body, 'the second request carries the first body, expires included');
  });

  it('a repeated withdrawal is answered from the journal, nothing sent', async () => {
    await createWithdraw(client, withdraw(), { journal });
    const second = await createWithdraw(client, withdraw({ expires: now() + 1200 }), { journal });
    assert.equal(second.fromJournal, true);
    assert.equal(second.outcome, 'existing');
    assert.deepEqual(second.data, { tx_id: 'counted', status: 'existing' });
    assert.equal(posts().length, 1);
  });

  it('two concurrent requests with one key: one is sent, the other waits and is answered from the journal', async () => {
    const [a, b] = await Promise.all([createWithdraw(client, withdraw(), { journal }), createWithdraw(client, withdraw(), { journal })]);
    assert.deepEqual([a.fromJournal, b.fromJournal].sort(), [false, true]);
    assert.equal(posts().length, 1);
  });

  it('a journal that cannot be written sends nothing', async () => {
    await journal.close();
    const err = await createWithdraw(client, withdraw(), { journal }).catch((e) => e);
    assert.ok(err instanceof Error && /closed/.test(err.message));
    assert.equal(posts().length, 0);
  });
});

describe('resolve (lib/client/submission/resolve.ts), against the simulator', () => {
  let s: SimulatedAccount;
  let dir: string;
  let journal: SubmissionJournal;
  before(async () => {
    s = await startSimulated('cf-resolve-');
  });
  after(() => stopSimulated(s));
  beforeEach(async () => {
    dir = tmp();
    journal = await SubmissionJournal.open(path.join(dir, 'j.jsonl'));
  });
  afterEach(async () => {
    await journal.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds a transfer that was made while its answer was lost, and the key then answers with it', async () => {
    const input = demoTransfer(s.sim, { reference: `lost answer ${Date.now()}` });
    const { company_id, ...body } = input;
    const ref: SubmissionRef = { kind: 'transfer', company_id, partner_txID: input.partner_txID };
    // What a lost answer leaves: the request recorded and made, its answer unknown.
    const entry = await journal.reserve(ref, body);
    const made = await s.client.request<{ tx_id: string }>('POST', `/company/${company_id}/transfer`, { body });
    await journal.unknown(entry);
    const found = await resolveSubmission(s.client, ref, journal);
    assert.equal(found.result, 'found', found.note);
    assert.equal(found.tx_id, made.data.tx_id);
    assert.equal(journal.get(ref)?.state, 'found');
  });

  it('finds a withdrawal still awaiting custody approval (a pending ledger entry)', async () => {
    const demo = s.sim.demo;
    const ref: SubmissionRef = { kind: 'withdrawal', company_id: demo.company_id, partner_txID: `wd-${Date.now()}` };
    const wallet = demo.wallets['BTC-TESTNET'];
    const address = 'tb1qresolvetestaddress0000000000000000000';
    await s.client.request('POST', `/company/${demo.company_id}/fund/${demo.fund_id}/whitelist`, { body: { name: 'resolve test', asset: 'BTC-TESTNET', address } });
    const body = { wallet_id: wallet.wallet_id, address, expires: now() + 3600, benefit_of: 'b', account_no: 'a', reference: `wd ${Date.now()}`, partner_txID: ref.partner_txID, send: { symbol: 'BTC-TESTNET', amount: 1000 } };
    const entry = await journal.reserve(ref, body);
    const made = await s.client.request<{ tx_id: string }>('POST', `/company/${demo.company_id}/withdraw`, { body });
    await journal.unknown(entry);
    const found = await resolveSubmission(s.client, ref, journal);
    assert.equal(found.result, 'found', found.note);
    assert.equal(found.tx_id, made.data.tx_id);
    const again = await createWithdraw(s.client, { company_id: demo.company_id, ...body }, { journal });
    assert.equal(again.fromJournal, true);
    assert.equal(again.data.tx_id, made.data.tx_id);
  });

  it('not found: the key stays held until the payment expires, then is freed', async () => {
    const input = demoTransfer(s.sim, { reference: `never made ${Date.now()}`, expires: now() + 2 });
    const { company_id, ...body } = input;
    const ref: SubmissionRef = { kind: 'withdrawal', company_id, partner_txID: input.partner_txID };
    await journal.unknown(await journal.reserve(ref, body));
    const early = await resolveSubmission(s.client, { ...ref, skewSeconds: 0 }, journal);
    assert.deepEqual([early.result, early.keyFreed], ['notFound', false]);
    assert.equal(journal.get(ref)?.state, 'unknown');
    await new Promise((r) => setTimeout(r, 3100));
    const late = await resolveSubmission(s.client, { ...ref, skewSeconds: 0 }, journal);
    assert.deepEqual([late.result, late.keyFreed], ['notFound', true]);
    assert.equal(journal.get(ref), undefined);
  });
});
