/**
 * Self-checks of the embedded simulator (simulator/): signing and errors of spec sections 5 and 7,
 * the transfer lifecycle of section 3, fees of section 8, the core client feed of section 6, the
 * control endpoints and persistence across a restart. No Node-RED involved.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import WebSocket from 'ws';
import { loadPrivateKey, sign } from '../../lib/client/signing';
import { Simulator } from '../../simulator';
import { controlCall, until } from '../helpers/support';
import { bodyOf, transferRequest, withdrawalRequest } from '../helpers/requests';
import { SIMULATOR_CLI, signalAndWait, withCliSimulator } from '../helpers/sim-cli';
import type { TransferRequest } from '../../lib';
import { sharedSimulator, stopSharedSimulator } from '../../simulator/shared';

interface Reply {
  status: number;
  body: any;
}

function signedClient(sim: Simulator) {
  const key = loadPrivateKey(sim.account.privateKeyPem);
  return async (method: string, p: string, body?: unknown, opts: { nonce?: bigint; sig?: string; headers?: Record<string, string> } = {}): Promise<Reply> => {
    const url = sim.baseUrl + p;
    const text = body === undefined ? '' : JSON.stringify(body);
    const prefix = opts.nonce !== undefined ? opts.nonce.toString() : String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = { 'X-API-KEY': sim.account.apiKey, 'Content-Type': 'application/json', accept: 'application/json' };
    headers[opts.nonce !== undefined ? 'x-nonce' : 'x-timestamp'] = prefix;
    headers['x-sign'] = opts.sig ?? sign(key, { prefix, url, body: text });
    Object.assign(headers, opts.headers ?? {});
    const res = await fetch(url, { method, headers, body: text || undefined });
    return { status: res.status, body: await res.json() };
  };
}


function openFeed(sim: Simulator, clientId: string, signature?: string): Promise<{ ws: WebSocket; messages: any[] } | number> {
  const url = sim.baseUrl.replace(/^http/, 'ws') + `/coreclient/${clientId}/feed`;
  const ts = String(Math.floor(Date.now() / 1000));
  const ws = new WebSocket(url, {
    headers: { 'x-api-key': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': signature ?? sign(loadPrivateKey(sim.account.privateKeyPem), { prefix: ts, url }) },
  });
  const messages: any[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  return new Promise((resolve, reject) => {
    ws.on('open', () => resolve({ ws, messages }));
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('simulator', function () {
  let dir: string;
  let sim: Simulator;
  let call: ReturnType<typeof signedClient>;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'custodyflow-sim-'));
    sim = await Simulator.start({ dataDir: dir });
    call = signedClient(sim);
  });
  after(async () => {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const transferBody = (partner_txID: string, amount: number, extra: Partial<TransferRequest> = {}) =>
    bodyOf(transferRequest(sim.demo, { wallet_id: sim.demo.wallets['BTC-TESTNET'].short_code, expires: Math.floor(Date.now() / 1000) + 600, benefit_of: 'Beneficiary', reference: 'REF-1', partner_txID, send: { symbol: 'BTC-TESTNET', amount }, ...extra }));

  it('provisions keys with mode 0600 and serves assets and fees', async () => {
    if (process.platform !== 'win32') {
      assert.equal(statSync(path.join(dir, 'partner-private-key.pem')).mode & 0o777, 0o600);
      assert.equal(statSync(path.join(dir, 'state.json')).mode & 0o777, 0o600);
    }
    const assets = await call('GET', '/assets');
    assert.equal(assets.status, 200);
    assert.equal(assets.body.assets.find((a: any) => a.code === 'ETH-TESTNET').scale, 1000000000);
    const fees = await call('POST', '/fees', { type: 'transferOut', asset: 'BTC-TESTNET', amount: 200001 });
    assert.deepEqual(fees.body, { netAmount: 200001, fees: 3, amountToSend: 200004 });
    for (const amount of [1.5, -1, 2 ** 60, '10']) {
      const bad = await call('POST', '/fees', { type: 'transferOut', asset: 'BTC-TESTNET', amount });
      assert.equal(bad.status, 400);
      assert.match(bad.body.detail.reason, /^amount:/);
    }
  });

  it('refuses bad signatures, unknown keys, stale timestamps and replayed nonces', async () => {
    assert.deepEqual((await call('GET', '/assets', undefined, { sig: 'AAAA' })).body, { code: 401, msg: 'errPartnerAuth', detail: { reason: 'signature' } });
    assert.equal((await call('GET', '/assets', undefined, { headers: { 'x-sign': '' } })).status, 401);
    const unknown = await call('GET', '/assets', undefined, { headers: { 'X-API-KEY': 'bm9wZQ==' } });
    assert.equal(unknown.status, 401);
    assert.notEqual(unknown.body.detail.reason, 'signature');
    assert.equal((await call('GET', '/assets', undefined, { headers: { 'x-nonce': '7' } })).status, 400);
    assert.equal((await call('GET', '/assets', undefined, { headers: { 'x-nonce': '' } })).status, 200);
    assert.equal((await call('GET', '/assets', undefined, { headers: { 'x-timestamp': String(Math.floor(Date.now() / 1000) - 3600) } })).status, 401);
    const n = BigInt(Date.now()) * 1000n;
    assert.equal((await call('GET', '/assets', undefined, { nonce: n })).status, 200);
    assert.equal((await call('GET', '/assets', undefined, { nonce: n })).body.detail.reason, 'nonce');
    assert.equal((await call('GET', '/assets', undefined, { nonce: n - 1n })).status, 401);
    assert.equal((await call('GET', '/assets', undefined, { nonce: n + 1n })).status, 200);
  });

  it('creates, updates and searches companies', async () => {
    const c = await call('POST', '/company', { name: 'Zyxwv Holdings', country: 'FR' });
    assert.equal(c.status, 200);
    assert.equal((await call('PUT', `/company/${c.body.company_id}`, { ref: 'R9' })).body.ref, 'R9');
    assert.equal((await call('GET', '/company/search?query=yxw')).body.total_count, 1);
    assert.equal((await call('GET', '/company/search?query=yx')).status, 400);
    assert.equal((await call('GET', '/company/unknown')).status, 404);
  });

  it('moves money when the core client approves, idempotently on partner_txID', async () => {
    const d = sim.demo;
    const feed = await openFeed(sim, d.core_client_id);
    assert.notEqual(typeof feed, 'number');
    const { ws, messages } = feed as { ws: WebSocket; messages: any[] };
    const created = await call('POST', `/company/${d.company_id}/transfer`, transferBody('t-1', 100000000));
    assert.equal(created.body.status, 'new');
    const again = await call('POST', `/company/${d.company_id}/transfer`, transferBody('t-1', 100000000));
    assert.deepEqual(again.body, { tx_id: created.body.tx_id, status: 'existing' });
    await sleep(100);
    assert.equal(messages.length, 1);
    assert.equal(messages[0].coreClientID, d.core_client_id);
    assert.equal(messages[0].status, 'pending');
    const actionId = messages[0].id;
    assert.notEqual(actionId, created.body.tx_id);
    const detail = await call('GET', `/coreclient/${d.core_client_id}/action/${actionId}`);
    assert.equal(detail.body.details.txID, created.body.tx_id);
    assert.equal(detail.body.details.fees, 1000);
    assert.deepEqual((await call('PUT', `/coreclient/${d.core_client_id}/action/${actionId}`)).body, { code: 200, msg: 'OK' });
    assert.equal((await call('PUT', `/coreclient/${d.core_client_id}/action/${actionId}`)).status, 409);
    const tx = await call('GET', `/company/${d.company_id}/transfer/${created.body.tx_id}`);
    assert.equal(tx.body.txStatus, 'approved_transfer');
    assert.equal(tx.body.approvedCount, 1);
    assert.equal(tx.body.status[0].userID, d.core_client_id);
    assert.equal((await call('GET', `/wallet/${d.wallets['BTC-TESTNET'].wallet_id}`)).body.balance, 500000000 - 100001000);
    assert.equal((await call('GET', `/wallet/${encodeURIComponent(d.counterparty.wallets['BTC-TESTNET'].short_code)}`)).body.balance, 100000000);
    const out = await call('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger?direction=out`);
    assert.equal(out.body.Total, 1);
    assert.equal(out.body.List[0].TxID, created.body.tx_id);
    assert.equal((await controlCall(sim, 'POST', '/feeds/drop')).body.dropped, 1);
    ws.terminate();
  });

  it('holds pending amounts, expires with the clock and rejects', async () => {
    const d = sim.demo;
    const big = await call('POST', `/company/${d.company_id}/transfer`, transferBody('t-hold', 390000000));
    assert.equal(big.body.status, 'new');
    const over = await call('POST', `/company/${d.company_id}/transfer`, transferBody('t-over', 10000000));
    assert.equal(over.status, 400);
    assert.match(over.body.detail.reason, /^send\.amount:/);
    assert.equal((await call('POST', `/company/${d.company_id}/transfer`, transferBody('t-past', 1, { expires: 5 }))).status, 400);
    const advanced = await controlCall(sim, 'POST', '/clock/advance', { seconds: 601 });
    assert.equal(advanced.body.expired, 1);
    assert.equal((await call('GET', `/company/${d.company_id}/transfer/${big.body.tx_id}`)).body.txStatus, 'expired_transfer');
    assert.equal((await call('GET', `/coreclient/${d.core_client_id}/actions`)).body.count, 0);
    const rej = await call('POST', `/company/${d.company_id}/transfer`, transferBody('t-rej', 5, { expires: Math.floor(Date.now() / 1000) + 7200 }));
    const actions = await call('GET', `/coreclient/${d.core_client_id}/actions`);
    assert.equal((await call('DELETE', `/coreclient/${d.core_client_id}/action/${actions.body.actions[0].id}`)).status, 200);
    assert.equal((await call('GET', `/company/${d.company_id}/transfer/${rej.body.tx_id}`)).body.txStatus, 'custody_rejected_transfer');
  });

  it('lets a human custodian approve through the control endpoints', async () => {
    const d = sim.demo;
    const t = await call('POST', `/company/${d.company_id}/transfer`, {
      ...transferBody('t-back', 1000, { expires: Math.floor(Date.now() / 1000) + 7200 }),
      wallet_id: d.counterparty.wallets['BTC-TESTNET'].wallet_id,
      counterparty_wallet_address: d.wallets['BTC-TESTNET'].wallet_id,
    });
    assert.equal((await controlCall(sim, 'POST', `/transfer/${t.body.tx_id}/approve`, { user_id: 'bob@custody.example' })).status, 403);
    const ok = await controlCall(sim, 'POST', `/transfer/${t.body.tx_id}/approve`, { user_id: 'alice@custody.example' });
    assert.equal(ok.body.txStatus, 'approved_transfer');
    assert.equal(ok.body.status[0].username, 'alice');
  });

  it('refuses unsigned feed upgrades', async () => {
    assert.equal(await openFeed(sim, sim.demo.core_client_id, 'AAAA'), 401);
  });

  it('keeps its state across a restart', async () => {
    const before = await call('GET', `/wallet/${sim.demo.wallets['BTC-TESTNET'].wallet_id}`);
    const demo = sim.demo;
    await sim.stop();
    sim = await Simulator.start({ dataDir: dir });
    call = signedClient(sim);
    assert.deepEqual(sim.demo, demo);
    assert.deepEqual((await call('GET', `/wallet/${demo.wallets['BTC-TESTNET'].wallet_id}`)).body, before.body);
  });

  it('shares one simulator per process', async () => {
    const other = mkdtempSync(path.join(tmpdir(), 'custodyflow-sim-shared-'));
    try {
      const a = await sharedSimulator(other);
      const b = await sharedSimulator(dir);
      assert.equal(a, b);
    } finally {
      await stopSharedSimulator();
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('the simulator command line (dist/simulator/cli.js)', function () {
  this.timeout(30000);

  it('starts on a port, prints the URLs and key file paths (never a key), serves signed requests, and flushes on SIGINT', async () => {
    const { readFileSync } = await import('node:fs');
    const { CustodyClient, createCompany, getCompany } = await import('../../lib');
    await withCliSimulator('cf-cli-', [], async ({ cli, out, dataDir }) => {
      const baseUrl = await until(() => /base URL:\s+(\S+)/.exec(out())?.[1], 'the base URL on stdout');
      await until(() => (/private key file:/.test(out()) ? true : undefined), 'the key file paths');
      const apiKeyFile = /API key file:\s+(\S+)/.exec(out())![1];
      const privateKeyFile = /private key file:\s+(\S+)/.exec(out())![1];
      const apiKey = readFileSync(apiKeyFile, 'utf8').trim();
      const privateKeyPem = readFileSync(privateKeyFile, 'utf8');
      assert.ok(!out().includes(apiKey), 'the API key is not printed');
      assert.ok(!out().includes('PRIVATE KEY'), 'the private key is not printed');
      const client = new CustodyClient({ baseUrl, apiKey, privateKey: privateKeyPem });
      const { company_id } = (await createCompany(client, { name: 'CLI Test' })).data;
      client.close();
      assert.equal(await signalAndWait(cli, 'SIGINT'), 0);
      // The state was flushed: a simulator on the same folder knows the company.
      const again = await Simulator.start({ dataDir, port: 0 });
      const c2 = new CustodyClient({ baseUrl: again.baseUrl, apiKey: again.account.apiKey, privateKey: again.account.privateKeyPem });
      assert.equal((await getCompany(c2, { company_id })).data.name, 'CLI Test');
      c2.close();
      await again.stop();
    });
  });

  it('--dedupe transfers is passed to the simulator and said in the banner; another value is refused before starting', async () => {
    const { spawnSync } = await import('node:child_process');
    const { CustodyClient } = await import('../../lib');
    const badDir = mkdtempSync(path.join(tmpdir(), 'cf-cli-dedupe-'));
    try {
      const bad = spawnSync(process.execPath, [SIMULATOR_CLI, '--port', '0', '--data', badDir, '--dedupe', 'sometimes'], { encoding: 'utf8' });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /--dedupe must be all or transfers/);
    } finally {
      rmSync(badDir, { recursive: true, force: true });
    }
    await withCliSimulator('cf-cli-dedupe-', ['--in-memory', '--dedupe', 'transfers'], async ({ cli, out }) => {
      await until(() => (/demo company:/.test(out()) ? true : undefined), 'the banner');
      assert.match(out(), /^Custody Partner API simulator \(state in memory only; partner_txID dedupes transfers only\)$/m);
      const baseUrl = /base URL:\s+(\S+)/.exec(out())![1];
      const { readFileSync } = await import('node:fs');
      const client = new CustodyClient({ baseUrl, apiKey: readFileSync(/API key file:\s+(\S+)/.exec(out())![1], 'utf8').trim(), privateKey: readFileSync(/private key file:\s+(\S+)/.exec(out())![1], 'utf8') });
      try {
        const demo = await (await fetch(`${/control URL:\s+(\S+)/.exec(out())![1]}/demo`)).json();
        const body = bodyOf(withdrawalRequest(demo, { expires: Math.floor(Date.now() / 1000) + 600, benefit_of: '', account_no: '', reference: 'cli dedupe', partner_txID: 'cli-dedupe-1', send: { symbol: 'BTC-TESTNET', amount: 1000 } }));
        const first = (await client.request<any>('POST', `/company/${demo.company_id}/withdraw`, { body })).data;
        const second = (await client.request<any>('POST', `/company/${demo.company_id}/withdraw`, { body })).data;
        assert.deepEqual([first.status, second.status], ['new', 'new']);
        assert.notEqual(first.tx_id, second.tx_id);
      } finally {
        client.close();
      }
      assert.equal(await signalAndWait(cli, 'SIGTERM'), 0);
    });
  });
});
