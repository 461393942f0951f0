/**
 * lib `resolveSubmission` against a counting server that plays the hosted API (no simulator):
 * a read that fails while a payment is being looked up must fail the lookup, never count as
 * "not there" (which, past the payment's expires, frees its key for a second payment).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { ApiError, CustodyClient, SubmissionJournal, resolveSubmission, type SubmissionRef } from '../../lib';
import { CountingServer } from '../helpers/counting-server';

const now = () => Math.floor(Date.now() / 1000);

describe('lib resolveSubmission: a failed read is not "not found"', function () {
  this.timeout(30000);
  let dataDir: string;
  let journal: SubmissionJournal;
  let client: CustodyClient;
  /** The status GET /company/c1/withdraw/t1 answers (the history item's transaction). */
  let txReadStatus = 503;
  const server = new CountingServer({
    answer: (request) => {
      const url = new URL(request.url, 'http://x');
      if (url.pathname.endsWith('/funds/')) return { status: 200, body: JSON.stringify({ list: [{ fund_id: 'f1', wallets: [{ wallet_id: 'w1', short_code: 'W1' }] }] }) };
      if (url.pathname.endsWith('/funds/f1/ledger')) return { status: 200, body: JSON.stringify({ List: [] }) };
      // The history names the payment's transaction t1 and another one, t2 (not a withdrawal: its read answers 404), without references (OpenAPI FundHistoryItem).
      if (url.pathname.endsWith('/wallets/w1/history')) return { status: 200, body: JSON.stringify({ history: [{ wallet_id: 'w1', tx_id: 't1', chain_tx_id: '', asset: 'ETH-TESTNET', amount: -1001, fee: 1, net_amount: -1000, timestamp: now() }, { wallet_id: 'w1', tx_id: 't2', chain_tx_id: '', asset: 'ETH-TESTNET', amount: -1001, fee: 1, net_amount: -1000, timestamp: now() }] }) };
      if (url.pathname.endsWith('/company/c1/withdraw/t1')) {
        return txReadStatus === 200
          ? { status: 200, body: JSON.stringify({ txID: 't1', reference: 'inv-1', statusDetails: { reference: 'inv-1' } }) }
          : { status: txReadStatus, body: JSON.stringify({ code: txReadStatus, msg: 'unavailable' }) };
      }
      return { status: 404, body: JSON.stringify({ code: 404, msg: 'Not Found' }) };
    },
  });

  before(async () => {
    await server.start();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-resolve-'));
    journal = await SubmissionJournal.open(path.join(dataDir, 'journal.jsonl'));
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    client = new CustodyClient({ baseUrl: server.baseUrl, apiKey: 'dGVzdA==', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), attempts: 1 });
  });
  after(async () => {
    await client.close();
    await journal.close();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a 503 reading a history item\'s transaction fails the resolve and keeps the key held, even past expires; once readable it is found', async () => {
    const ref: SubmissionRef = { kind: 'withdrawal', company_id: 'c1', partner_txID: 'inv-1' };
    // A withdrawal whose outcome is unknown, its expires long past.
    const entry = await journal.reserve(ref, { wallet_id: 'w1', address: 'a', expires: now() - 3600, benefit_of: '', account_no: '', reference: 'inv-1', partner_txID: 'inv-1', send: { symbol: 'ETH-TESTNET', amount: 1000 } });
    await journal.unknown(entry);
    txReadStatus = 503;
    await assert.rejects(resolveSubmission(client, ref, journal), (e: unknown) => e instanceof ApiError && e.statusCode === 503);
    assert.equal(journal.get(ref)?.state, 'unknown', 'the key stays held');
    txReadStatus = 200;
    const found = await resolveSubmission(client, ref, journal);
    assert.deepEqual([found.result, found.tx_id, journal.get(ref)?.state], ['found', 't1', 'found']);
  });

  it('a 404 reading a history item\'s transaction (not of this kind) is not a candidate', async () => {
    const ref: SubmissionRef = { kind: 'withdrawal', company_id: 'c1', partner_txID: 'inv-2' };
    const entry = await journal.reserve(ref, { wallet_id: 'w1', address: 'a', expires: now() + 3600, benefit_of: '', account_no: '', reference: 'inv-2', partner_txID: 'inv-2', send: { symbol: 'ETH-TESTNET', amount: 1000 } });
    await journal.unknown(entry);
    const result = await resolveSubmission(client, ref, journal);
    assert.deepEqual([result.result, result.keyFreed, journal.get(ref)?.state], ['notFound', false, 'unknown']);
  });
});
