/**
 * lib against the simulator over real sockets (no Node-RED): signature checks, nonces,
 * idempotent transfers, approval to threshold, rejection, expiry, fees and balances, the
 * self-healing feed, and state kept across a restart.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { Simulator } from '../../simulator';
import { until, control, demoTransfer } from '../helpers/support';
import { accountClient, startSimulated, stopSimulated } from '../helpers/simulated';
import {
  CustodyClient,
  ApiError,
  ConfigError,
  ValidationError,
  sign,
  listAssets,
  quoteFee,
  createCompany,
  getCompany,
  updateCompany,
  searchCompanies,
  addTrustedParty,
  listTrustedParties,
  createFund,
  addWallet,
  getFund,
  getWallet,
  createTransfer,
  getTransfer,
  createCoreClient,
  listCoreClients,
  listActions,
  getAction,
  approveAction,
  rejectAction,
  getLedger,
  getWalletHistory,
  Action,
  LedgerEntry,
  TransferRequest,
} from '../../lib';
import { CoreClientFeed } from '../../lib/feeds';

const now = () => Math.floor(Date.now() / 1000);
const execFileAsync = promisify(execFile);

describe('lib against the simulator', function () {
  this.timeout(60000);
  let dataDir: string;
  let sim: Simulator;
  let client: CustodyClient;

  const transfer = (overrides: Partial<TransferRequest> = {}) => demoTransfer(sim, { reference: 'lib test', ...overrides });
  /** The entries of transaction `txId` in the ledger of the demo fund (or `fundId`), any status. */
  const ledgerOf = async (txId: string, fundId = sim.demo.fund_id): Promise<LedgerEntry[]> =>
    (await getLedger(client, { company_id: sim.demo.company_id, fund_id: fundId })).data.List.filter((e) => e.TxID === txId);
  /** The demo core client's pending action for transaction `txId`. */
  async function actionOf(txId: string): Promise<string> {
    for (const a of (await listActions(client, { client_id: sim.demo.core_client_id })).data.actions) {
      if ((await getAction(client, { client_id: sim.demo.core_client_id, action_id: a.id })).data.details?.txID === txId) return a.id;
    }
    throw new Error(`no pending action for ${txId}`);
  }

  before(async () => {
    ({ dataDir, sim, client } = await startSimulated('cf-sim-'));
  });

  after(async () => {
    await stopSimulated({ dataDir, sim, client });
  });

  describe('authentication (spec section 5)', () => {
    it('provisions an account on first start with the key files readable only by the owner', () => {
      assert.ok(sim.account.apiKey.length > 10);
      const files = fs.readdirSync(dataDir);
      const keyFile = files.find((f) => /key/i.test(f) && f.endsWith('.pem'));
      assert.ok(keyFile, `a key file in ${files.join(', ')}`);
      for (const f of files.filter((name) => /key/i.test(name))) {
        assert.equal(fs.statSync(path.join(dataDir, f)).mode & 0o077, 0, `${f} is not readable by group or others`);
      }
    });

    async function raw(method: string, url: string, headers: Record<string, string>, body?: string) {
      const res = await fetch(url, { method, headers: { 'Content-Type': 'application/json', accept: 'application/json', ...headers }, body });
      return { status: res.status, body: JSON.parse((await res.text()) || '{}') };
    }

    function assertSignatureError(r: { status: number; body: any }) {
      assert.equal(r.status, 401);
      assert.equal(r.body.msg, 'errPartnerAuth');
      assert.equal(r.body.detail.reason, 'signature');
      assert.ok(r.body.code === 401 || r.body.code === 1020, `code ${r.body.code} is 401 or 1020`);
    }

    it('refuses a body changed by one byte after signing, and a missing signature', async () => {
      const url = `${sim.baseUrl}/fees`;
      const signed = '{"type":"transferOut","asset":"BTC-TESTNET","amount":200000}';
      const ts = String(now());
      const headers = { 'X-API-KEY': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(sim.account.privateKeyPem, { prefix: ts, url, body: signed }) };
      assert.equal((await raw('POST', url, headers, signed)).status, 200);
      assertSignatureError(await raw('POST', url, headers, signed.replace('200000', '200001')));
      assertSignatureError(await raw('POST', url, headers, signed + '\n'));
      assertSignatureError(await raw('POST', url, { 'X-API-KEY': sim.account.apiKey, 'x-timestamp': ts }, signed));
    });

    it('signs the query string: a changed query is refused', async () => {
      const url = `${sim.baseUrl}/company/search?query=Dem`;
      const ts = String(now());
      const headers = { 'X-API-KEY': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(sim.account.privateKeyPem, { prefix: ts, url }) };
      assert.equal((await raw('GET', url, headers)).status, 200);
      assertSignatureError(await raw('GET', url.replace('Dem', 'Dex'), headers));
    });

    it('refuses a replayed or lower nonce, and a timestamp outside the window', async () => {
      const url = `${sim.baseUrl}/assets`;
      const nonce = String(Date.now() * 1000 + 777);
      const headers = (n: string) => ({ 'X-API-KEY': sim.account.apiKey, 'x-nonce': n, 'x-sign': sign(sim.account.privateKeyPem, { prefix: n, url }) });
      assert.equal((await raw('GET', url, headers(nonce))).status, 200);
      const replay = await raw('GET', url, headers(nonce));
      assert.equal(replay.status, 401, JSON.stringify(replay.body));
      assert.equal(replay.body.msg, 'errPartnerAuth');
      assert.equal((await raw('GET', url, headers(String(Number(nonce) - 5)))).status, 401);
      const old = String(now() - 3600);
      const stale = await raw('GET', url, { 'X-API-KEY': sim.account.apiKey, 'x-timestamp': old, 'x-sign': sign(sim.account.privateKeyPem, { prefix: old, url }) });
      assert.equal(stale.status, 401);
      assert.equal(stale.body.msg, 'errPartnerAuth');
      const both = await raw('GET', url, { ...headers(String(Date.now() * 1000 + 999)), 'x-timestamp': String(now()) });
      assert.ok(both.status === 400 || both.status === 401, 'x-timestamp and x-nonce together are refused');
    });

    it('maps a bad signature to ApiError errPartnerAuth/signature through the client', async () => {
      const other = execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
      const wrong = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: other });
      await assert.rejects(listAssets(wrong), (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.statusCode, 401);
        assert.ok(e.isSignatureError);
        assert.ok(!e.message.includes(sim.account.apiKey));
        return true;
      });
      wrong.close();
    });

    it('keeps nonces increasing under concurrent requests (nonce mode)', async () => {
      const nonceClient = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, signingMode: 'nonce' });
      const results = await Promise.all(Array.from({ length: 25 }, () => listAssets(nonceClient)));
      assert.ok(results.every((r) => r.statusCode === 200));
      nonceClient.close();
    });

    it('never repeats a nonce across a restart of the client process', async () => {
      // Two separate processes in a row, each sending requests in nonce mode with the same key.
      const script = `
        const { CustodyClient, listAssets } = require(${JSON.stringify(path.resolve(__dirname, '..', '..', 'lib'))});
        const c = new CustodyClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY, privateKey: process.env.PEM, signingMode: 'nonce' });
        Promise.all([1, 2, 3, 4, 5].map(() => listAssets(c))).then(
          () => { c.close(); process.stdout.write('ok'); },
          (e) => { process.stdout.write(e.message); process.exit(1); });`;
      const env = { ...process.env, BASE: sim.baseUrl, KEY: sim.account.apiKey, PEM: sim.account.privateKeyPem };
      for (let run = 0; run < 3; run++) {
        // Asynchronous: the simulator answering the child runs in this process.
        const { stdout: out } = await execFileAsync(process.execPath, ['-e', script], { env });
        assert.equal(out, 'ok', `run ${run + 1}`);
      }
    });

    it('speaks HTTPS and WSS with a certificate, and refuses an untrusted one', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-tls-'));
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
        { stdio: 'ignore' },
      );
      const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
      const tlsSim = await Simulator.start({ dataDir: path.join(dir, 'data'), port: 0, tls: { cert, key: fs.readFileSync(path.join(dir, 'key.pem')) } });
      try {
        assert.match(tlsSim.baseUrl, /^https:\/\/127\.0\.0\.1:\d+\/api\/v1\/p$/);
        const trusted = new CustodyClient({ baseUrl: tlsSim.baseUrl, apiKey: tlsSim.account.apiKey, privateKey: tlsSim.account.privateKeyPem, ca: cert });
        assert.equal((await listAssets(trusted)).statusCode, 200);
        const feed = new CoreClientFeed(trusted, tlsSim.demo.core_client_id);
        assert.match(feed.url, /^wss:\/\//);
        feed.on('error', () => undefined);
        feed.start();
        await until(() => (feed.state === 'connected' ? true : undefined), 'a wss feed');
        await feed.stop();
        trusted.close();
        const untrusted = new CustodyClient({ baseUrl: tlsSim.baseUrl, apiKey: tlsSim.account.apiKey, privateKey: tlsSim.account.privateKeyPem, attempts: 1 });
        await assert.rejects(listAssets(untrusted), (e: unknown) => e instanceof ApiError && e.statusCode === 0 && /CERT/.test(String(e.code)));
        untrusted.close();
        // A server that offers only TLS 1.1 is refused by the client (minimum TLS 1.2), before any request.
        let served = 0;
        const old = https
          .createServer({ cert, key: fs.readFileSync(path.join(dir, 'key.pem')), minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }, (_req, res) => {
            served++;
            res.end('{}');
          })
          .listen(0, '127.0.0.1');
        await new Promise((r) => old.once('listening', r));
        const oldUrl = `https://127.0.0.1:${(old.address() as net.AddressInfo).port}/api/v1/p`;
        const strict = new CustodyClient({ baseUrl: oldUrl, apiKey: 'k', privateKey: tlsSim.account.privateKeyPem, ca: cert, attempts: 1 });
        await assert.rejects(listAssets(strict), (e: unknown) => e instanceof ApiError && e.statusCode === 0 && /PROTOCOL|VERSION|SSL/i.test(`${e.code} ${e.msg}`));
        assert.equal(served, 0);
        strict.close();
        old.close();
      } finally {
        await tlsSim.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('sends exactly the bytes it signed: openssl verifies what arrives on the wire', async () => {
      const captured: Array<{ method: string; url: string; headers: Record<string, string | string[] | undefined>; body: Buffer }> = [];
      const server = (await import('node:http')).createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          captured.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
          res.setHeader('Content-Type', 'application/json');
          // The transfer's asset is checked against GET /assets first (lib/client/call.ts checkAssetCodes).
          res.end(req.url!.endsWith('/assets') ? '{"assets":[{"code":"BTC-TESTNET","scale":100000000}]}' : '{"tx_id":"t","status":"new"}');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
      const wire = new CustodyClient({ baseUrl: origin + '/api/v1/p', apiKey: 'k', privateKey: sim.account.privateKeyPem });
      await createTransfer(wire, { ...transfer({ reference: 'tab\there, line\u2028sep, ünïcødé', wallet_id: 'buddy harsh stick' }), company_id: 'c+1' });
      await wire.request('GET', '/company/search', { query: { query: 'a&b', extra: '[]{}/?' } });
      wire.close();
      server.close();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-wire-'));
      fs.writeFileSync(path.join(dir, 'pub.pem'), sim.account.publicKeyPem);
      for (const c of captured) {
        assert.equal(c.headers['x-nonce'], undefined, 'timestamp mode sends no x-nonce');
        const payload = Buffer.concat([Buffer.from(String(c.headers['x-timestamp']) + origin + c.url), c.body]);
        fs.writeFileSync(path.join(dir, 'data'), payload);
        fs.writeFileSync(path.join(dir, 'sig'), Buffer.from(String(c.headers['x-sign']), 'base64url'));
        const out = execFileSync('openssl', ['dgst', '-sha256', '-verify', path.join(dir, 'pub.pem'), '-signature', path.join(dir, 'sig'), path.join(dir, 'data')]).toString();
        assert.match(out, /Verified OK/, `${c.method} ${c.url}`);
        assert.equal(c.headers['x-api-key'], 'k');
        assert.equal(c.headers['content-type'], 'application/json');
        assert.equal(c.headers['accept'], 'application/json');
      }
      // GET /assets (the asset check), the transfer, the search: each verified above.
      assert.deepEqual(captured.map((c) => c.method), ['GET', 'POST', 'GET']);
      assert.equal(captured[1].url, '/api/v1/p/company/c%2B1/transfer');
      assert.ok(!captured[1].body.toString().includes('undefined'));
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('refuses plain HTTP to a non-loopback host before connecting', () => {
      assert.throws(() => new CustodyClient({ baseUrl: 'http://api.example.test/api/v1/p', apiKey: 'k', privateKey: sim.account.privateKeyPem }), ConfigError);
      assert.throws(() => new CustodyClient({ baseUrl: 'ftp://127.0.0.1/api/v1/p', apiKey: 'k', privateKey: sim.account.privateKeyPem }), ConfigError);
    });

    it('times out a request that gets no answer', async () => {
      const sockets: net.Socket[] = [];
      const silent = net.createServer((s) => sockets.push(s)).listen(0, '127.0.0.1');
      await new Promise((r) => silent.once('listening', r));
      const port = (silent.address() as net.AddressInfo).port;
      const slow = new CustodyClient({ baseUrl: `http://127.0.0.1:${port}/api/v1/p`, apiKey: 'k', privateKey: sim.account.privateKeyPem, timeoutMs: 300, attempts: 1 });
      await assert.rejects(listAssets(slow), (e: unknown) => e instanceof ApiError && e.statusCode === 0 && e.code === 'ETIMEDOUT');
      slow.close();
      sockets.forEach((s) => s.destroy());
      silent.close();
    });
  });

  describe('reference data, companies and the trusted network', () => {
    it('lists the assets with their scales and quotes the 0.1 bps fee', async () => {
      const assets = (await listAssets(client)).data.assets;
      const scale = Object.fromEntries(assets.map((a) => [a.code, a.scale]));
      assert.deepEqual(
        { BTC: scale.BTC, 'BTC-TESTNET': scale['BTC-TESTNET'], ETH: scale.ETH, 'ETH-TESTNET': scale['ETH-TESTNET'] },
        { BTC: 1e8, 'BTC-TESTNET': 1e8, ETH: 1e9, 'ETH-TESTNET': 1e9 },
      );
      const fee = (await quoteFee(client, { type: 'transferOut', asset: 'BTC-TESTNET', amount: 200000000 })).data;
      assert.deepEqual(fee, { netAmount: 200000000, fees: 2000, amountToSend: 200002000 });
      const small = (await quoteFee(client, { type: 'transferOut', asset: 'BTC-TESTNET', amount: 150001 })).data;
      assert.equal(small.fees, 2, '1.50001 base units of fee round up to 2');
      assert.equal(small.amountToSend, small.netAmount + small.fees);
    });

    it('refuses bad input before sending, naming the field', async () => {
      await assert.rejects(quoteFee(client, { type: 'transferOut', asset: 'BTC-TESTNET', amount: 1.5 }), (e: unknown) => e instanceof ValidationError && e.field === 'amount');
      await assert.rejects(searchCompanies(client, { query: 'De' }), (e: unknown) => e instanceof ValidationError && e.field === 'query');
      const { send, ...noSend } = transfer();
      void send;
      await assert.rejects(createTransfer(client, noSend as never), (e: unknown) => e instanceof ValidationError && e.field === 'send');
      await assert.rejects(createTransfer(client, transfer({ send: { symbol: 'BTC-TESTNET', amount: -1 } })), (e: unknown) => e instanceof ValidationError && e.field === 'send.amount');
      await assert.rejects(getTransfer(client, { company_id: sim.demo.company_id, tx_id: '' }), (e: unknown) => e instanceof ValidationError && e.field === 'tx_id');
      // Ids that URL resolution would turn into another endpoint (GET /company/C/ ...) are refused.
      for (const tx_id of ['..', '.', '%2e%2e', 'a/b', ' x', 'x\n']) {
        await assert.rejects(getTransfer(client, { company_id: sim.demo.company_id, tx_id }), (e: unknown) => e instanceof ValidationError && e.field === 'tx_id', JSON.stringify(tx_id));
      }
      await assert.rejects(approveAction(client, { client_id: '..', action_id: 'x' }), (e: unknown) => e instanceof ValidationError && e.field === 'client_id');
      await assert.rejects(createTransfer(client, transfer({ partner_txID: '   ' })), (e: unknown) => e instanceof ValidationError && e.field === 'partner_txID');
      await assert.rejects(createTransfer(client, transfer({ expires: 1 })), (e: unknown) => e instanceof ValidationError && e.field === 'expires');
    });

    it('creates, reads, updates and searches a company', async () => {
      const created = (await createCompany(client, { name: 'Zebra Markets', city: 'Zurich', country: 'CH', domain: 'zebra.example', ref: 'z-1' })).data;
      assert.ok(created.company_id);
      const read = (await getCompany(client, { company_id: created.company_id })).data;
      assert.equal(read.name, 'Zebra Markets');
      assert.equal(read.country, 'CH');
      await updateCompany(client, { company_id: created.company_id, city: 'Geneva' });
      const updated = (await getCompany(client, { company_id: created.company_id })).data;
      assert.equal(updated.city, 'Geneva');
      assert.equal(updated.name, 'Zebra Markets', 'omitted fields stay unchanged');
      const found = (await searchCompanies(client, { query: 'Zeb' })).data;
      assert.ok(found.matches.some((m) => m.company_id === created.company_id));
      await assert.rejects(getCompany(client, { company_id: 'no-such-company' }), (e: unknown) => e instanceof ApiError && e.statusCode === 404);
    });

    it('control endpoints take JSON only (a web page cannot post a form or text to them)', async () => {
      const res = await fetch(sim.controlUrl + '/faucet', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, amount: 1 }) });
      assert.equal(res.status, 415);
    });

    it('adds a core client at once and a human user only after the invitation is accepted', async () => {
      const company = (await createCompany(client, { name: 'Trust Test Co' })).data;
      const cc = (await createCoreClient(client, { name: 'Trust approver' })).data;
      assert.match(cc.feed, /^ws:\/\/127\.0\.0\.1:\d+\/api\/v1\/p\/coreclient\/.+\/feed$/);
      await addTrustedParty(client, { company_id: company.company_id, address: cc.id, type: 'core-client', name: 'Trust approver' });
      await addTrustedParty(client, { company_id: company.company_id, address: 'bob@custody.example', type: 'user', name: 'Bob' });
      let list = (await listTrustedParties(client, { company_id: company.company_id })).data;
      assert.ok(list.list.some((p) => p.trusted_entity_id === cc.id));
      assert.ok(!list.list.some((p) => p.address === 'bob@custody.example'), 'Bob has not accepted yet');
      await control(sim, '/trustedparty/accept', { company_id: company.company_id, address: 'bob@custody.example' });
      list = (await listTrustedParties(client, { company_id: company.company_id })).data;
      assert.ok(list.list.some((p) => p.address === 'bob@custody.example' && p.trusted_entity_id));
      assert.equal(list.total_count, list.list.length);
      const clients = (await listCoreClients(client, { company_id: company.company_id })).data;
      assert.ok(clients.clients.some((c) => c.id === cc.id));
    });
  });

  describe('transfers (spec sections 3 and 4)', () => {
    it('is idempotent on partner_txID: the same request answers existing with the original tx_id', async () => {
      const req = transfer();
      const first = (await createTransfer(client, req)).data;
      assert.equal(first.status, 'new');
      const again = (await createTransfer(client, req)).data;
      assert.deepEqual(again, { tx_id: first.tx_id, status: 'existing' });
      const pending = (await listActions(client, { client_id: sim.demo.core_client_id })).data.actions;
      const mine: Action[] = [];
      for (const a of pending) {
        const full = (await getAction(client, { client_id: sim.demo.core_client_id, action_id: a.id })).data;
        if (full.details?.txID === first.tx_id) mine.push(full);
      }
      assert.equal(mine.length, 1, 'one action for one transfer, however often it was posted');
    });

    it('approves at the threshold: balances, fees and ledger move on both sides', async () => {
      const from = sim.demo.wallets['BTC-TESTNET'].wallet_id;
      const to = sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id;
      const before = [(await getWallet(client, { wallet_id: from })).data.balance, (await getWallet(client, { wallet_id: to })).data.balance];
      const amount = 2500000;
      const fee = (await quoteFee(client, { type: 'transferOut', asset: 'BTC-TESTNET', amount })).data.fees;
      const { tx_id } = (await createTransfer(client, transfer({ send: { symbol: 'BTC-TESTNET', amount } }))).data;
      let tx = (await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data;
      assert.equal(tx.txStatus, 'pending_transfer');
      assert.equal(tx.thresholdRequired, 1);
      assert.equal(tx.approvedCount, 0);
      const actions = (await listActions(client, { client_id: sim.demo.core_client_id })).data.actions;
      let actionId: string | undefined;
      for (const a of actions) if ((await getAction(client, { client_id: sim.demo.core_client_id, action_id: a.id })).data.details?.txID === tx_id) actionId = a.id;
      assert.ok(actionId, 'the core client has an action for the transfer');
      assert.notEqual(actionId, tx_id);
      const action = (await getAction(client, { client_id: sim.demo.core_client_id, action_id: actionId })).data;
      assert.equal(action.type, 'ApproveTransfer');
      assert.equal(action.details?.amount, amount + fee);
      assert.equal(action.details?.fees, fee);
      assert.equal(action.details?.netAmount, amount);
      const ok = await approveAction(client, { client_id: sim.demo.core_client_id, action_id: actionId });
      assert.equal(ok.statusCode, 200);
      tx = (await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data;
      assert.equal(tx.txStatus, 'approved_transfer');
      assert.equal(tx.approvedCount, tx.thresholdRequired);
      assert.equal(tx.status.length, tx.approvedCount);
      assert.equal(tx.status[0].userID, sim.demo.core_client_id);
      assert.equal(tx.status[0].username, '');
      assert.equal(tx.statusDetails.amount, amount + fee);
      assert.equal(tx.statusDetails.netAmount, amount);
      const after = [(await getWallet(client, { wallet_id: from })).data.balance, (await getWallet(client, { wallet_id: to })).data.balance];
      assert.equal(after[0], before[0] - amount - fee, 'amount + fees out');
      assert.equal(after[1], before[1] + amount, 'amount in');
      const ledger = await client.request<{ List: Array<Record<string, unknown>> }>('GET', `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/ledger`);
      assert.ok(ledger.data.List.some((e) => e.TxID === tx_id && e.type === 'transferOut'));
      const theirs = await client.request<{ List: Array<Record<string, unknown>> }>('GET', `/company/${sim.demo.company_id}/fund/${sim.demo.counterparty.fund_id}/ledger`);
      assert.ok(theirs.data.List.some((e) => e.TxID === tx_id));
      await assert.rejects(approveAction(client, { client_id: sim.demo.core_client_id, action_id: actionId }), ApiError, 'an action is approved once');
    });

    it('a pending transfer is in the fund ledger (status pending, its reference and amount), not in the wallet history; approved, that one entry is approved', async () => {
      const from = sim.demo.wallets['BTC-TESTNET'];
      const req = transfer({ reference: `pending ledger ${Date.now()}`, send: { symbol: 'BTC-TESTNET', amount: 4200000 } });
      const { tx_id } = (await createTransfer(client, req)).data;
      const tx = (await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data;
      const [pending, ...more] = await ledgerOf(tx_id);
      assert.equal(more.length, 0);
      assert.deepEqual(pending, {
        TxID: tx_id,
        chainTxID: '',
        fundID: sim.demo.fund_id,
        timestamp: tx.initiatedTimestamp,
        expireTime: Number(req.expires),
        status: 'pending',
        type: 'transferOut',
        asset: 'BTC-TESTNET',
        amount: 4200042,
        fees: 42,
        netAmount: 4200000,
        counterpartyID: sim.demo.company_id,
        counterpartyName: 'Demo Treasury Ltd',
        address: '',
        reference: req.reference,
        benefitOf: req.benefit_of,
        accountNo: req.account_no,
      });
      // found as a client resolving an unknown outcome would: by reference and amount, pending only
      const byReference = (await getLedger(client, { company_id: sim.demo.company_id, fund_id: sim.demo.fund_id, wallet_id: from.short_code, direction: 'out' })).data.List.filter((e) => e.reference === req.reference);
      assert.deepEqual(byReference.map((e) => [e.TxID, e.status, e.netAmount]), [[tx_id, 'pending', 4200000]]);
      assert.deepEqual(await ledgerOf(tx_id, sim.demo.counterparty.fund_id), [], 'the credit side is written at settlement');
      const history = async (walletId: string) => (await getWalletHistory(client, { wallet_id: walletId })).data.history;
      assert.ok(!(await history(from.wallet_id)).some((x) => x.tx_id === tx_id), 'nothing moved yet: not in the wallet history');

      await approveAction(client, { client_id: sim.demo.core_client_id, action_id: await actionOf(tx_id) });
      const settled = await ledgerOf(tx_id);
      assert.equal(settled.length, 1, 'one entry, updated in place');
      assert.match(settled[0].chainTxID, /^[0-9a-f]{64}$/);
      assert.deepEqual({ ...settled[0], chainTxID: '' }, { ...pending, status: 'approved' });
      const credit = await ledgerOf(tx_id, sim.demo.counterparty.fund_id);
      assert.deepEqual(credit.map((e) => [e.type, e.status, e.amount, e.chainTxID]), [['transferIn', 'approved', 4200000, settled[0].chainTxID]]);
      assert.equal((await history(from.wallet_id)).find((x) => x.tx_id === tx_id)?.amount, -4200042);
      for (const w of [from.wallet_id, sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id]) {
        assert.equal((await history(w)).reduce((s, x) => s + x.amount, 0), (await getWallet(client, { wallet_id: w })).data.balance, `the history of ${w} adds up to its balance`);
      }
    });

    it('needs every approval of a threshold-2 group, and accepts a short code for a wallet', async () => {
      const company = (await createCompany(client, { name: 'Threshold Two Ltd' })).data;
      const cc = (await createCoreClient(client, { name: 'Second approver' })).data;
      await addTrustedParty(client, { company_id: company.company_id, address: cc.id, type: 'core-client' });
      await addTrustedParty(client, { company_id: company.company_id, address: 'carol@custody.example', type: 'user', name: 'Carol' });
      await control(sim, '/trustedparty/accept', { company_id: company.company_id, address: 'carol@custody.example' });
      const carol = (await listTrustedParties(client, { company_id: company.company_id })).data.list.find((p) => p.address === 'carol@custody.example')!;
      const group = { threshold: 2, members: [cc.id, carol.trusted_entity_id] };
      const fund = (await createFund(client, { company_id: company.company_id, name: 'Two key fund', custodygroup_withdraw: group, custodygroup_tx: group })).data;
      const wallets = (await addWallet(client, { company_id: company.company_id, fund_id: fund.fund_id, wallets: [{ name: 'Two key BTC', asset: 'BTC-TESTNET' }] })).data.wallets;
      const detail = (await getFund(client, { company_id: company.company_id, fund_id: fund.fund_id })).data;
      const wallet = detail.wallets.find((w) => w.wallet_id === wallets[0])!;
      assert.equal(wallet.short_code.split(' ').length, 3);
      assert.equal((await getWallet(client, { wallet_id: wallet.short_code })).data.wallet_id, wallet.wallet_id, 'a short code works wherever a wallet id does');
      await control(sim, '/faucet', { wallet_id: wallet.wallet_id, amount: 100000000 });
      const { tx_id } = (
        await createTransfer(client, {
          ...transfer(),
          company_id: company.company_id,
          wallet_id: wallet.short_code,
          counterparty_wallet_address: sim.demo.counterparty.wallets['BTC-TESTNET'].short_code,
        })
      ).data;
      assert.equal((await getTransfer(client, { company_id: company.company_id, tx_id })).data.thresholdRequired, 2);
      const [action] = (await listActions(client, { client_id: cc.id })).data.actions;
      await approveAction(client, { client_id: cc.id, action_id: action.id });
      let tx = (await getTransfer(client, { company_id: company.company_id, tx_id })).data;
      assert.equal(tx.txStatus, 'pending_transfer');
      assert.equal(tx.approvedCount, 1);
      await control(sim, `/transfer/${tx_id}/approve`, { user_id: carol.trusted_entity_id });
      tx = (await getTransfer(client, { company_id: company.company_id, tx_id })).data;
      assert.equal(tx.txStatus, 'approved_transfer');
      assert.equal(tx.approvedCount, 2);
      assert.equal(tx.status.length, 2);
    });

    it('refuses a transfer the balance does not cover, an unknown wallet and a past expiry', async () => {
      await assert.rejects(createTransfer(client, transfer({ send: { symbol: 'BTC-TESTNET', amount: 10 ** 15 } })), (e: unknown) => e instanceof ApiError && e.statusCode === 400);
      await assert.rejects(createTransfer(client, transfer({ wallet_id: 'no-such-wallet' })), (e: unknown) => e instanceof ApiError && (e.statusCode === 404 || e.statusCode === 400));
      // A past expiry is refused by lib before sending; the simulator refuses it too.
      await assert.rejects(createTransfer(client, transfer({ expires: now() - 10 })), (e: unknown) => e instanceof ValidationError && e.field === 'expires');
      const past = await client.request('POST', `/company/${sim.demo.company_id}/transfer`, { body: { ...transfer({ expires: now() - 10 }), company_id: undefined } }).catch((e) => e);
      assert.ok(past instanceof ApiError && past.statusCode === 400, String(past));
    });

    it('rejects: a core client DELETE makes it custody_rejected_transfer and moves nothing', async () => {
      const from = sim.demo.wallets['BTC-TESTNET'].wallet_id;
      const before = (await getWallet(client, { wallet_id: from })).data.balance;
      const feedless = (await createTransfer(client, transfer())).data.tx_id;
      const actions = (await listActions(client, { client_id: sim.demo.core_client_id })).data.actions;
      for (const a of actions) {
        const full = (await getAction(client, { client_id: sim.demo.core_client_id, action_id: a.id })).data;
        if (full.details?.txID === feedless) await rejectAction(client, { client_id: sim.demo.core_client_id, action_id: a.id });
      }
      const tx = (await getTransfer(client, { company_id: sim.demo.company_id, tx_id: feedless })).data;
      assert.equal(tx.txStatus, 'custody_rejected_transfer');
      assert.equal((await getWallet(client, { wallet_id: from })).data.balance, before);
      assert.deepEqual((await ledgerOf(feedless)).map((e) => [e.type, e.status, e.chainTxID]), [['transferOut', 'rejected', '']], 'its pending ledger entry, rejected');
    });

    it('expires: past `expires` the transfer is expired_transfer and its actions expired', async () => {
      const { tx_id } = (await createTransfer(client, transfer({ expires: now() + 60 }))).data;
      let actionId = '';
      for (const a of (await listActions(client, { client_id: sim.demo.core_client_id })).data.actions) {
        if ((await getAction(client, { client_id: sim.demo.core_client_id, action_id: a.id })).data.details?.txID === tx_id) actionId = a.id;
      }
      await control(sim, '/clock/advance', { seconds: 120 });
      const tx = (await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data;
      assert.equal(tx.txStatus, 'expired_transfer');
      assert.deepEqual((await ledgerOf(tx_id)).map((e) => [e.type, e.status, e.chainTxID]), [['transferOut', 'expired', '']], 'its pending ledger entry, expired');
      assert.equal((await getAction(client, { client_id: sim.demo.core_client_id, action_id: actionId })).data.status, 'expired');
      assert.ok(!(await listActions(client, { client_id: sim.demo.core_client_id })).data.actions.some((a) => a.id === actionId));
      await assert.rejects(approveAction(client, { client_id: sim.demo.core_client_id, action_id: actionId }), ApiError);
    });
  });

  describe('the core client feed (spec section 6)', () => {
    it('emits new actions at once, reconnects after a drop and catches up, each action once', async () => {
      const feed = new CoreClientFeed(client, sim.demo.core_client_id, { minDelayMs: 50, maxDelayMs: 200 });
      const seen: Array<{ action: Action; source: string }> = [];
      const states: string[] = [];
      feed.on('action', (action: Action, source: string) => seen.push({ action, source }));
      feed.on('state', (s: string) => states.push(s));
      feed.on('error', () => undefined);
      feed.start();
      await until(() => (feed.state === 'connected' ? true : undefined), 'connected');
      await until(() => (seen.length > 0 || states.length > 1 ? true : undefined), 'catch-up', 2000).catch(() => undefined);
      const already = seen.length;

      const first = (await createTransfer(client, transfer())).data.tx_id;
      const live = await until(() => seen.slice(already).find((s) => s.source === 'feed'), 'a feed message');
      assert.equal(live.action.status, 'pending');
      assert.equal(live.action.coreClientID, sim.demo.core_client_id);
      assert.equal((await getAction(client, { client_id: sim.demo.core_client_id, action_id: live.action.id })).data.details?.txID, first);

      // Drop every feed socket; while the feed is away, submit another transfer.
      const count = seen.length;
      await control(sim, '/feeds/drop');
      await until(() => (states.includes('disconnected') ? true : undefined), 'disconnected');
      const second = (await createTransfer(client, transfer())).data.tx_id;
      await until(() => (feed.state === 'connected' && seen.length > count ? true : undefined), 'reconnect and catch up');
      await new Promise((r) => setTimeout(r, 300));
      const ids = seen.map((s) => s.action.id);
      assert.equal(new Set(ids).size, ids.length, 'no action is emitted twice, though the service re-sends pending ones');
      const fresh = seen.slice(count);
      assert.equal(fresh.length, 1);
      assert.equal((await getAction(client, { client_id: sim.demo.core_client_id, action_id: fresh[0].action.id })).data.details?.txID, second);
      await feed.stop();
      assert.equal(feed.state, 'stopped');
    });

    it('catches up through GET actions when the feed messages are lost', async () => {
      await control(sim, '/feeds/faults', { replayOnConnect: false, deliver: false });
      const feed = new CoreClientFeed(client, sim.demo.core_client_id, { minDelayMs: 50, maxDelayMs: 200 });
      const seen: Array<{ action: Action; source: string }> = [];
      feed.on('action', (action: Action, source: string) => seen.push({ action, source }));
      try {
        feed.start();
        await until(() => (feed.state === 'connected' ? true : undefined), 'connected');
        await new Promise((r) => setTimeout(r, 200));
        const before = seen.length;
        const tx = (await createTransfer(client, transfer())).data.tx_id;
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(seen.length, before, 'the simulator pushed nothing (fault injected)');
        await control(sim, '/feeds/drop');
        const caught = await until(() => seen.slice(before)[0], 'the catch-up after the reconnect');
        assert.equal(caught.source, 'catch-up');
        assert.equal((await getAction(client, { client_id: sim.demo.core_client_id, action_id: caught.action.id })).data.details?.txID, tx);
      } finally {
        await feed.stop();
        await control(sim, '/feeds/faults', { replayOnConnect: true, deliver: true });
      }
    });

    it('runs one connection after stop() and start(), and none after the last stop()', async () => {
      const feed = new CoreClientFeed(client, sim.demo.core_client_id, { minDelayMs: 50, maxDelayMs: 100 });
      feed.start();
      await until(() => (feed.state === 'connected' ? true : undefined), 'connected');
      await control(sim, '/feeds/drop'); // the loop is now waiting to reconnect
      await feed.stop();
      feed.start();
      await until(() => (feed.state === 'connected' ? true : undefined), 'connected again');
      await new Promise((r) => setTimeout(r, 400)); // time for a stale loop to connect too
      assert.equal((await control(sim, '/feeds/drop')).dropped, 1, 'one socket for one feed');
      await feed.stop();
      await new Promise((r) => setTimeout(r, 400));
      assert.equal((await control(sim, '/feeds/drop')).dropped, 0, 'nothing reconnects after stop()');
    });

    it('stop() then start() without waiting: connected, one socket, state and heartbeat right', async () => {
      const feed = new CoreClientFeed(client, sim.demo.core_client_id, { minDelayMs: 50, maxDelayMs: 100, heartbeatMs: 100 });
      feed.start();
      await until(() => (feed.state === 'connected' ? true : undefined), 'connected');
      void feed.stop();
      feed.start();
      await until(() => (feed.state === 'connected' ? true : undefined), 'connected again');
      await new Promise((r) => setTimeout(r, 500)); // several heartbeats; the old stop() has finished
      assert.equal(feed.state, 'connected', 'the old stop() does not report "stopped" over the new run');
      assert.equal((await control(sim, '/feeds/drop')).dropped, 1, 'one socket');
      await feed.stop();
      assert.equal(feed.state, 'stopped');
    });

    it('is refused a handshake with a bad signature, and keeps retrying', async () => {
      const other = execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
      const wrong = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: other });
      const feed = new CoreClientFeed(wrong, sim.demo.core_client_id, { minDelayMs: 20, maxDelayMs: 50 });
      const errors: Error[] = [];
      feed.on('error', (e: Error) => errors.push(e));
      feed.start();
      await until(() => (errors.length >= 3 ? true : undefined), 'three refused attempts');
      assert.match(errors[0].message, /401/);
      await feed.stop();
      wrong.close();
    });
  });

  describe('persistence', () => {
    it('keeps companies, transfers, balances and the account across a restart', async () => {
      const company = (await createCompany(client, { name: 'Restart Test' })).data;
      const { tx_id } = (await createTransfer(client, transfer())).data;
      const balance = (await getWallet(client, { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id })).data.balance;
      const account = { ...sim.account };
      const demo = sim.demo;
      await sim.stop();
      sim = await Simulator.start({ dataDir, port: 0 });
      assert.equal(sim.account.apiKey, account.apiKey);
      assert.deepEqual(sim.demo, demo);
      client.close();
      client = accountClient(sim);
      assert.equal((await getCompany(client, { company_id: company.company_id })).data.name, 'Restart Test');
      assert.equal((await getTransfer(client, { company_id: sim.demo.company_id, tx_id })).data.txStatus, 'pending_transfer');
      assert.equal((await getWallet(client, { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id })).data.balance, balance);
    });
  });
});
