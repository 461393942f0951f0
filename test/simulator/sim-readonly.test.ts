/**
 * The simulator's read side (simulator/README.md "Read-only key"): the read-only API key (spec
 * section 4 "Read-only subset", sections 5 and 7), the read-only subset routes, wallet history and
 * the fund ledger filters. Real simulator over real sockets, lib's signed CustodyClient, real RSA
 * keys.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { ApiError, CustodyClient, sign } from '../../lib';
import { Simulator } from '../../simulator';
import { control, demoTransfer } from '../helpers/support';
import { accountClient } from '../helpers/simulated';

/** Assert that `p` fails with the section 7 403 of the read-only key. */
async function assertReadOnly403(p: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApiError, `${what}: ${String(err)}`);
    assert.equal(err.statusCode, 403, `${what}: ${err.message}`);
    assert.equal(err.code, 403, what);
    assert.equal(err.msg, 'Forbidden', what);
    assert.match(String(err.detail.reason), /read only/, what);
    return true;
  });
}

/** Assert that `p` fails with a 400 whose reason starts with `field:`. */
async function assert400(p: Promise<unknown>, field: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.statusCode, 400, err.message);
    assert.ok(String(err.detail.reason).startsWith(`${field}:`), `reason names ${field}: ${err.detail.reason}`);
    return true;
  });
}

describe('simulator read side: read-only key, read-only subset, wallet history, ledger filters', function () {
  this.timeout(60000);
  let dataDir: string;
  let sim: Simulator;
  let full: CustodyClient;
  let ro: CustodyClient;
  let roNonce: CustodyClient;
  /** the company of the simulated foreign API account: never part of "the account" */
  let foreignCompany: string;

  const get = async (client: CustodyClient, p: string, query?: Record<string, string | undefined>): Promise<any> => (await client.request('GET', p, { query })).data;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-read-'));
    sim = await Simulator.start({ dataDir, port: 0 });
    full = accountClient(sim);
    ro = accountClient(sim, { apiKey: sim.account.readOnlyApiKey });
    roNonce = accountClient(sim, { apiKey: sim.account.readOnlyApiKey, signingMode: 'nonce' });
    foreignCompany = (await control(sim, '/foreign/quote', { send: { symbol: 'BTC-TESTNET', amount: 1000 }, receive: { symbol: 'ETH-TESTNET', amount: 2000 } })).company_id;
  });

  after(async () => {
    full?.close();
    ro?.close();
    roNonce?.close();
    await sim?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe('the read-only API key', () => {
    it('is provisioned as a second key of the account, in its own 0600 file', () => {
      const key = sim.account.readOnlyApiKey;
      assert.ok(key.length >= 40, 'a long random key');
      assert.notEqual(key, sim.account.apiKey);
      assert.equal(path.basename(sim.readOnlyApiKeyPath), 'partner-readonly-api-key.txt');
      assert.equal(path.dirname(sim.readOnlyApiKeyPath), path.resolve(dataDir));
      assert.equal(fs.readFileSync(sim.readOnlyApiKeyPath, 'utf8').trim(), key);
      assert.equal(fs.statSync(sim.readOnlyApiKeyPath).mode & 0o077, 0, 'not readable by group or others');
    });

    it('reads with both signing modes: reference data, company, wallet', async () => {
      for (const client of [ro, roNonce]) {
        assert.ok((await get(client, '/assets')).assets.length >= 4);
        assert.equal((await get(client, `/company/${sim.demo.company_id}`)).company_id, sim.demo.company_id);
        const w = await get(client, `/wallet/${encodeURIComponent(sim.demo.wallets['BTC-TESTNET'].short_code)}`);
        assert.equal(w.wallet_id, sim.demo.wallets['BTC-TESTNET'].wallet_id);
      }
    });

    it('refuses every kind of write with 403 and the section 7 body, with no effect', async () => {
      const snapshot = async () => ({
        account: await get(full, '/account'),
        funds: await get(full, '/funds/'),
        trusted: await get(full, '/trustedparties'),
        balance: await get(full, '/balance'),
        company: await get(full, `/company/${sim.demo.company_id}`),
        clients: await get(full, '/coreclient', { company_id: sim.demo.company_id }),
        actions: await get(full, `/coreclient/${sim.demo.manual.core_client_id}/actions`),
      });
      // A pending action of the manual approver, so approve and reject have something to act on.
      const pendingTx = demoTransfer(sim, {
        wallet_id: sim.demo.manual.wallets['BTC-TESTNET'].wallet_id,
        send: { symbol: 'BTC-TESTNET', amount: 1000 },
      });
      const { company_id: cid, ...pendingBody } = pendingTx;
      const created = (await full.request<any>('POST', `/company/${cid}/transfer`, { body: pendingBody })).data;
      assert.equal(created.status, 'new');
      const actionId = (await get(full, `/coreclient/${sim.demo.manual.core_client_id}/actions`)).actions.find((a: any) => a.status === 'pending').id;
      const before = await snapshot();

      const c = sim.demo.company_id;
      const { company_id: _c, ...transferBody } = demoTransfer(sim);
      const walletMaker = { asset: 'BTC-TESTNET', name: 'ro wallet' };
      const writes: [('POST' | 'PUT' | 'DELETE'), string, unknown][] = [
        ['POST', '/company', { name: 'Read Only Ltd' }],
        ['PUT', `/company/${c}`, { name: 'Renamed by a read-only key' }],
        ['POST', `/company/${c}/trustedparty`, { address: 'bob@custody.example', type: 'user' }],
        ['DELETE', `/company/${c}/trustedparty/${sim.demo.counterparty.custodian_user_id}`, undefined],
        ['POST', `/company/${c}/fund`, { name: 'ro fund', custodygroup_withdraw: { threshold: 1, members: [sim.demo.core_client_id] }, custodygroup_tx: { threshold: 1, members: [sim.demo.core_client_id] } }],
        ['POST', `/company/${c}/fund/${sim.demo.fund_id}/wallet`, { wallets: [walletMaker] }],
        ['POST', `/company/${c}/fund/${sim.demo.fund_id}/whitelist`, { name: 'ext', asset: 'BTC-TESTNET', address: 'tb1qexample' }],
        ['POST', `/company/${c}/transfer`, transferBody],
        ['POST', `/company/${c}/withdraw`, { ...transferBody, address: 'tb1qexample' }],
        ['POST', `/company/${c}/atomicswap/make`, { send_wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id }],
        ['POST', `/company/${c}/liquidityhub`, { tx_id: 'x' }],
        ['PUT', `/company/${c}/action/${actionId}`, undefined],
        ['POST', '/coreclient', { name: 'ro client' }],
        ['PUT', `/coreclient/${sim.demo.manual.core_client_id}/action/${actionId}`, undefined],
        ['DELETE', `/coreclient/${sim.demo.manual.core_client_id}/action/${actionId}`, undefined],
        ['POST', `/coreclient/${sim.demo.core_client_id}/sweep`, { wallet_id: 'x' }],
        ['POST', '/fees', { type: 'transferOut', asset: 'BTC-TESTNET', amount: 1000 }],
        ['POST', '/no/such/route', {}],
      ];
      for (const client of [ro, roNonce]) {
        for (const [method, p, body] of writes) await assertReadOnly403(client.request(method, p, { body }), `${method} ${p}`);
      }
      assert.deepEqual(await snapshot(), before, 'nothing changed');
      // The refused transfer left no trace: its partner_txID is still new.
      const again = (await full.request<any>('POST', `/company/${c}/transfer`, { body: { ...transferBody, send: { symbol: 'BTC-TESTNET', amount: 1 } } })).data;
      assert.equal(again.status, 'new');
      // The full key still acts: reject the pending action the read-only key could not touch.
      await full.request('DELETE', `/coreclient/${sim.demo.manual.core_client_id}/action/${actionId}`);
      assert.equal((await get(full, `/company/${cid}/transfer/${created.tx_id}`)).txStatus, 'custody_rejected_transfer');
      const approverActions = (await get(full, `/coreclient/${sim.demo.core_client_id}/actions`)).actions;
      for (const a of approverActions) await full.request('PUT', `/coreclient/${sim.demo.core_client_id}/action/${a.id}`);
    });

    it('checks the signature before the permission: a bad signature is 401, not 403', async () => {
      const url = `${sim.baseUrl}/company`;
      const body = '{"name":"x"}';
      const ts = String(Math.floor(Date.now() / 1000));
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-KEY': sim.account.readOnlyApiKey, 'x-timestamp': ts, 'x-sign': sign(sim.account.privateKeyPem, { prefix: ts, url, body: '{"name":"y"}' }) },
        body,
      });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as any).detail.reason, 'signature');
    });

    it('keeps nonce marks per API key: the same nonce works once with each key', async () => {
      const url = `${sim.baseUrl}/assets`;
      // lib's scale (Date.now() * 1000), above the marks the nonce-mode client left; a later
      // nonce-mode request of lib moves past it (lib sends max(last + 1, Date.now() * 1000)).
      const nonce = String(Date.now() * 1000 + 999);
      const call = async (apiKey: string) =>
        (await fetch(url, { headers: { 'X-API-KEY': apiKey, 'x-nonce': nonce, 'x-sign': sign(sim.account.privateKeyPem, { prefix: nonce, url }) } })).status;
      assert.equal(await call(sim.account.readOnlyApiKey), 200);
      assert.equal(await call(sim.account.readOnlyApiKey), 401, 'replayed with the same key');
      assert.equal(await call(sim.account.apiKey), 200, 'the full key has its own mark');
      assert.equal(await call(sim.account.apiKey), 401);
    });

    it('opens a core client feed (feeds are reads)', async () => {
      const url = sim.baseUrl.replace(/^http/, 'ws') + `/coreclient/${sim.demo.core_client_id}/feed`;
      const ts = String(Math.floor(Date.now() / 1000));
      const ws = new WebSocket(url, { headers: { 'x-api-key': sim.account.readOnlyApiKey, 'x-timestamp': ts, 'x-sign': sign(sim.account.privateKeyPem, { prefix: ts, url }) } });
      const outcome = await new Promise<string>((resolve) => {
        ws.on('open', () => resolve('open'));
        ws.on('unexpected-response', (_req, res) => resolve(`HTTP ${res.statusCode}`));
        ws.on('error', (e) => resolve(e.message));
      });
      assert.equal(outcome, 'open');
      await new Promise<void>((resolve) => {
        ws.on('close', () => resolve());
        ws.close();
      });
    });

    it('refuses an unknown API key as before (401 api key)', async () => {
      const stranger = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: Buffer.alloc(32, 7).toString('base64'), privateKey: sim.account.privateKeyPem });
      try {
        await assert.rejects(stranger.request('GET', '/account'), (e: unknown) => e instanceof ApiError && e.statusCode === 401 && e.detail.reason === 'api key');
      } finally {
        stranger.close();
      }
    });
  });

  describe('read-only subset routes (both keys)', () => {
    it('GET /account: the organisation account and its companies', async () => {
      const a = await get(ro, '/account');
      assert.deepEqual(Object.keys(a).sort(), ['account_id', 'companies', 'name', 'type']);
      assert.match(a.account_id, /^[0-9A-Za-z]{27}$/);
      assert.equal(a.type, 'organisation');
      assert.ok(a.companies.some((c: any) => c.company_id === sim.demo.company_id && c.name === 'Demo Treasury Ltd'));
      assert.ok(a.companies.some((c: any) => c.company_id === sim.demo.taker.company_id), 'every company of the account');
      assert.ok(!a.companies.some((c: any) => c.company_id === foreignCompany), 'not the foreign account\'s company');
      assert.deepEqual(await get(full, '/account'), a);
    });

    it('GET /balance: base units per asset summed over every wallet of the account', async () => {
      const b = await get(ro, '/balance');
      assert.equal(b.total_count, b.balances.length);
      const funds = (await get(ro, '/funds/')).list;
      const sums: Record<string, number> = {};
      for (const f of funds) for (const w of f.wallets) sums[w.asset] = (sums[w.asset] ?? 0) + w.balance;
      assert.deepEqual(Object.fromEntries(b.balances.map((x: any) => [x.asset, x.balance])), sums);
      assert.ok(sums['BTC-TESTNET'] > 0 && Number.isInteger(sums['BTC-TESTNET']));
      // The same totals as the company holdings of every company of the account.
      const held: Record<string, number> = {};
      for (const c of (await get(ro, '/account')).companies) {
        for (const x of (await get(ro, `/company/${c.company_id}/holding`)).holdings) held[x.code] = (held[x.code] ?? 0) + x.amount;
      }
      assert.deepEqual(held, sums);
    });

    it('GET /funds/ and /funds/{fund_id}: funds with their wallets and short codes', async () => {
      const list = await get(ro, '/funds/');
      assert.equal(list.total_count, list.list.length);
      const demo = list.list.find((f: any) => f.fund_id === sim.demo.fund_id);
      assert.ok(list.list.some((f: any) => f.fund_id === sim.demo.taker.fund_id));
      assert.ok(!list.list.some((f: any) => f.company_id === foreignCompany), 'no fund of the foreign account');
      assert.equal(demo.company_id, sim.demo.company_id);
      assert.deepEqual(
        demo.wallets.map((w: any) => w.short_code).sort(),
        [sim.demo.wallets['BTC-TESTNET'].short_code, sim.demo.wallets['ETH-TESTNET'].short_code].sort(),
      );
      assert.deepEqual(await get(ro, `/funds/${sim.demo.fund_id}`), demo);
      assert.deepEqual(await get(ro, '/funds'), list, 'with or without the trailing slash');
      const { company_id: _c, ...detail } = demo;
      assert.deepEqual(await get(full, `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}`), detail);
      await assert.rejects(ro.request('GET', '/funds/no-such-fund'), (e: unknown) => e instanceof ApiError && e.statusCode === 404 && /^fund_id:/.test(String(e.detail.reason)));
    });

    it('GET /trustedparties: the trusted parties of every company, with company_id', async () => {
      const t = await get(ro, '/trustedparties');
      assert.equal(t.total_count, t.list.length);
      const mine = t.list.filter((x: any) => x.company_id === sim.demo.company_id).map(({ company_id: _c, ...rest }: any) => rest);
      assert.deepEqual(mine, (await get(full, `/company/${sim.demo.company_id}/trustedparty`)).list);
      assert.ok(mine.some((x: any) => x.trusted_entity_id === sim.demo.core_client_id && x.type === 'core-client'));
      assert.ok(mine.some((x: any) => x.trusted_entity_id === sim.demo.counterparty.custodian_user_id && x.type === 'user'));
      assert.ok(!t.list.some((x: any) => x.company_id === foreignCompany), 'not the foreign account\'s parties');
    });

    it('GET /funds/{fund_id}/ledger: the company fund ledger, filters included', async () => {
      const company = `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/ledger`;
      const readOnly = `/funds/${sim.demo.fund_id}/ledger`;
      for (const query of [undefined, { direction: 'in' }, { asset: 'ETH-TESTNET' }, { wallet_id: sim.demo.wallets['BTC-TESTNET'].short_code, direction: 'out' }]) {
        assert.deepEqual(await get(ro, readOnly, query), await get(full, company, query), JSON.stringify(query));
      }
      await assert400(ro.request('GET', readOnly, { query: { direction: 'sideways' } }), 'direction');
    });
  });

  describe('wallet history and ledger filters after a deposit, an approved transfer and withdrawals', () => {
    const btc = () => sim.demo.wallets['BTC-TESTNET'];
    const cpBtc = () => sim.demo.counterparty.wallets['BTC-TESTNET'];
    let txId: string;
    let fees: number;
    let withdrawId: string;
    let withdrawFees: number;
    let refusedId: string;
    const amount = 1234567;
    const deposit = 7654321;
    const withdrawn = 300000;

    /** Approve, as the demo core client, the pending action of transaction `id`. */
    const approveTx = async (id: string): Promise<void> => {
      const client = sim.demo.core_client_id;
      for (const a of (await get(full, `/coreclient/${client}/actions`)).actions) {
        if ((await get(full, `/coreclient/${client}/action/${a.id}`)).details.txID === id) {
          await full.request('PUT', `/coreclient/${client}/action/${a.id}`);
          return;
        }
      }
      throw new Error(`no pending action for ${id}`);
    };
    /** Make and approve a withdrawal of `net` base units from the demo BTC-TESTNET wallet. @returns its Transaction object. */
    const withdraw = async (net: number): Promise<any> => {
      const { company_id, counterparty_wallet_address: _to, ...body } = demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount: net } });
      const id = (await full.request<any>('POST', `/company/${company_id}/withdraw`, { body: { ...body, address: sim.demo.whitelist['BTC-TESTNET'] } })).data.tx_id;
      await approveTx(id);
      const tx = await get(ro, `/company/${company_id}/withdraw/${id}`);
      assert.equal(tx.txStatus, 'approved_withdrawal');
      return tx;
    };

    before(async () => {
      await control(sim, '/faucet', { wallet_id: btc().wallet_id, amount: deposit });
      const { company_id, ...body } = demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount } });
      txId = (await full.request<any>('POST', `/company/${company_id}/transfer`, { body })).data.tx_id;
      await approveTx(txId);
      const tx = await get(ro, `/company/${company_id}/transfer/${txId}`);
      assert.equal(tx.txStatus, 'approved_transfer');
      fees = tx.statusDetails.fees;
      assert.ok(fees > 0);
      const w = await withdraw(withdrawn);
      withdrawId = w.txID;
      withdrawFees = w.statusDetails.fees;
      // A second withdrawal that the chain refuses: its debit is refunded.
      refusedId = (await withdraw(400000)).txID;
      assert.equal((await control(sim, `/withdraw/${refusedId}/chain-reject`)).txStatus, 'chain_rejected_withdrawal');
    });

    it('GET /wallet/{wallet_id}/history of the origin: withdrawal and transfer out (negative), then the deposit, newest first', async () => {
      for (const p of [`/wallet/${encodeURIComponent(btc().short_code)}/history`, `/wallets/${btc().wallet_id}/history`]) {
        const h = (await get(ro, p)).history;
        assert.deepEqual(Object.keys(h[0]).sort(), ['amount', 'asset', 'chain_tx_id', 'fee', 'net_amount', 'timestamp', 'tx_id', 'wallet_id']);
        assert.deepEqual({ ...h[0], chain_tx_id: '', timestamp: 0 }, {
          wallet_id: btc().wallet_id, tx_id: withdrawId, chain_tx_id: '', asset: 'BTC-TESTNET', amount: -(withdrawn + withdrawFees), fee: -withdrawFees, net_amount: -withdrawn, timestamp: 0,
        });
        assert.deepEqual({ ...h[1], chain_tx_id: '', timestamp: 0 }, {
          wallet_id: btc().wallet_id, tx_id: txId, chain_tx_id: '', asset: 'BTC-TESTNET', amount: -(amount + fees), fee: -fees, net_amount: -amount, timestamp: 0,
        });
        assert.match(h[1].chain_tx_id, /^[0-9a-f]{64}$/);
        assert.deepEqual({ ...h[2], chain_tx_id: '', timestamp: 0 }, {
          wallet_id: btc().wallet_id, tx_id: '', chain_tx_id: '', asset: 'BTC-TESTNET', amount: deposit, fee: 0, net_amount: deposit, timestamp: 0,
        });
        assert.ok(h[0].timestamp >= h[1].timestamp && h[1].timestamp >= h[2].timestamp);
        assert.ok(!h.some((x: any) => x.tx_id === refusedId), 'the chain-rejected (refunded) withdrawal is left out');
        for (const item of h) assert.equal(item.wallet_id, btc().wallet_id);
        // The history adds up to the wallet's balance.
        const balance = (await get(ro, `/wallet/${btc().wallet_id}`)).balance;
        assert.equal(h.reduce((s: number, x: any) => s + x.amount, 0), balance);
      }
      assert.deepEqual(await get(full, `/wallet/${btc().wallet_id}/history`), await get(ro, `/wallets/${btc().wallet_id}/history`));
    });

    it('GET /wallet/{wallet_id}/history of the recipient: transfer in (positive, no fee)', async () => {
      const h = (await get(ro, `/wallet/${cpBtc().wallet_id}/history`)).history;
      const item = h.find((x: any) => x.tx_id === txId);
      assert.equal(item.amount, amount);
      assert.equal(item.net_amount, amount);
      assert.equal(item.fee, 0);
    });

    it('history: since keeps later entries only; bad since is 400; unknown wallet is 404', async () => {
      const h = (await get(ro, `/wallet/${btc().wallet_id}/history`)).history;
      const newest = h[0].timestamp;
      assert.deepEqual((await get(ro, `/wallet/${btc().wallet_id}/history`, { since: String(newest) })).history, []);
      for (const since of new Set<number>(h.map((x: any) => x.timestamp - 1))) {
        const later = (await get(ro, `/wallet/${btc().wallet_id}/history`, { since: String(since) })).history;
        assert.deepEqual(later, h.filter((x: any) => x.timestamp > since), `since ${since}`);
        assert.ok(later.length > 0);
      }
      assert.deepEqual((await get(ro, `/wallet/${btc().wallet_id}/history`, { since: '0' })).history, h);
      await assert400(ro.request('GET', `/wallet/${btc().wallet_id}/history`, { query: { since: 'yesterday' } }), 'since');
      await assert.rejects(ro.request('GET', '/wallet/no such wallet/history'), (e: unknown) => e instanceof ApiError && e.statusCode === 404 && /^wallet_id:/.test(String(e.detail.reason)));
    });

    it('ledger direction in/out follows one rule: deposit and *In are in, the rest out', async () => {
      const ledger = `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/ledger`;
      const all = await get(ro, ledger);
      const ins = await get(ro, ledger, { direction: 'in' });
      const outs = await get(ro, ledger, { direction: 'out' });
      assert.equal(ins.Total + outs.Total, all.Total);
      assert.ok(ins.List.length > 0 && ins.List.every((e: any) => e.type === 'deposit' || e.type.endsWith('In')));
      assert.ok(outs.List.length > 0 && outs.List.every((e: any) => e.type !== 'deposit' && !e.type.endsWith('In')));
      assert.ok(outs.List.some((e: any) => e.TxID === txId && e.type === 'transferOut'));
      assert.ok(outs.List.some((e: any) => e.TxID === withdrawId && e.type === 'withdraw'));
      assert.ok(ins.List.some((e: any) => e.type === 'deposit' && e.amount === deposit));
      assert.deepEqual(await get(ro, ledger, { direction: 'all' }), all);
      const cp = await get(ro, `/company/${sim.demo.company_id}/fund/${sim.demo.counterparty.fund_id}/ledger`, { direction: 'in' });
      assert.ok(cp.List.some((e: any) => e.TxID === txId && e.type === 'transferIn' && e.amount === amount));
      assert.equal((await get(ro, `/company/${sim.demo.company_id}/fund/${sim.demo.counterparty.fund_id}/ledger`, { direction: 'out' })).List.filter((e: any) => e.TxID === txId).length, 0);
    });

    it('ledger filters asset and wallet_id (id or short code); bad values are 400 naming the field', async () => {
      const ledger = `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/ledger`;
      const eth = await get(ro, ledger, { asset: 'ETH-TESTNET' });
      assert.ok(eth.Total > 0 && eth.List.every((e: any) => e.asset === 'ETH-TESTNET'));
      const byCode = await get(ro, ledger, { wallet_id: btc().short_code });
      assert.deepEqual(await get(ro, ledger, { wallet_id: btc().wallet_id }), byCode);
      assert.ok(byCode.List.every((e: any) => e.asset === 'BTC-TESTNET'));
      // the history lists the entries that moved the balance: deposits and approved entries
      const kept = byCode.List.filter((e: any) => e.type === 'deposit' || e.status === 'approved');
      assert.deepEqual(byCode.List.filter((e: any) => !kept.includes(e)).map((e: any) => [e.TxID, e.status]), [[refusedId, 'chain_rejected']], 'one chain-rejected withdrawal in the ledger');
      assert.deepEqual((await get(ro, `/wallet/${btc().wallet_id}/history`)).history.map((x: any) => x.tx_id), kept.map((e: any) => e.TxID));
      await assert400(ro.request('GET', ledger, { query: { direction: 'both' } }), 'direction');
      await assert400(ro.request('GET', ledger, { query: { asset: 'DOGE' } }), 'asset');
      await assert400(ro.request('GET', ledger, { query: { wallet_id: cpBtc().wallet_id } }), 'wallet_id');
      await assert400(ro.request('GET', `${ledger}?asset=BTC-TESTNET&asset=ETH-TESTNET`), 'asset');
    });

    it('a pending transfer is in both fund ledgers (every filter, paging) but not in the wallet history; rejected, the same entry says so', async () => {
      const ledger = `/funds/${sim.demo.fund_id}/ledger`;
      const companyLedger = `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/ledger`;
      const reference = `read side pending ${Date.now()}`;
      const { company_id, ...body } = demoTransfer(sim, { reference, send: { symbol: 'BTC-TESTNET', amount: 250000 } });
      const id = (await full.request<any>('POST', `/company/${company_id}/transfer`, { body })).data.tx_id;
      const mine = (l: any) => l.List.filter((e: any) => e.TxID === id).map((e: any) => [e.type, e.status, e.reference, e.amount, e.netAmount, e.fees]);
      const expected = [['transferOut', 'pending', reference, 250003, 250000, 3]];
      for (const query of [undefined, { direction: 'out' }, { direction: 'all' }, { wallet_id: btc().short_code }, { asset: 'BTC-TESTNET' }, { limit: '1' }]) {
        const l = await get(ro, ledger, query);
        assert.deepEqual(mine(l), expected, JSON.stringify(query));
        assert.deepEqual(l, await get(full, companyLedger, query), `the read-only route answers as the company route: ${JSON.stringify(query)}`);
      }
      for (const query of [{ direction: 'in' }, { asset: 'ETH-TESTNET' }, { offset: '1' }]) assert.deepEqual(mine(await get(ro, ledger, query)), [], JSON.stringify(query));
      const historyAddsUp = async () => {
        const h = (await get(ro, `/wallet/${btc().wallet_id}/history`)).history;
        assert.ok(!h.some((x: any) => x.tx_id === id), 'not in the wallet history');
        assert.equal(h.reduce((s: number, x: any) => s + x.amount, 0), (await get(ro, `/wallet/${btc().wallet_id}`)).balance);
      };
      await historyAddsUp();
      const client = sim.demo.core_client_id;
      for (const a of (await get(full, `/coreclient/${client}/actions`)).actions) {
        if ((await get(full, `/coreclient/${client}/action/${a.id}`)).details.txID === id) await full.request('DELETE', `/coreclient/${client}/action/${a.id}`);
      }
      assert.equal((await get(ro, `/company/${company_id}/transfer/${id}`)).txStatus, 'custody_rejected_transfer');
      assert.deepEqual(mine(await get(ro, ledger)), [['transferOut', 'rejected', reference, 250003, 250000, 3]]);
      await historyAddsUp();
    });

    it('holdings and GET /balance reflect the movements: the transfer fee left the company', async () => {
      const holding = async () => Object.fromEntries((await get(ro, `/company/${sim.demo.company_id}/holding`)).holdings.map((x: any) => [x.code, x.amount]));
      const balance = async () => Object.fromEntries((await get(ro, '/balance')).balances.map((x: any) => [x.asset, x.balance]));
      const [h0, b0] = [await holding(), await balance()];
      await control(sim, '/faucet', { wallet_id: cpBtc().wallet_id, amount: 500 });
      const { company_id, ...body } = demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount: 100000 } });
      const id = (await full.request<any>('POST', `/company/${company_id}/transfer`, { body })).data.tx_id;
      const action = (await get(full, `/coreclient/${sim.demo.core_client_id}/actions`)).actions.find((a: any) => a.status === 'pending');
      await full.request('PUT', `/coreclient/${sim.demo.core_client_id}/action/${action.id}`);
      const fee = (await get(ro, `/company/${company_id}/transfer/${id}`)).statusDetails.fees;
      const [h1, b1] = [await holding(), await balance()];
      assert.equal(h1['BTC-TESTNET'], h0['BTC-TESTNET'] + 500 - fee);
      assert.equal(b1['BTC-TESTNET'], b0['BTC-TESTNET'] + 500 - fee);
      assert.equal(h1['ETH-TESTNET'], h0['ETH-TESTNET']);
    });
  });

  describe('swap legs in the ledger and the wallet history', () => {
    /** Approve, as core client `client`, its pending action of transaction `id`. */
    const approveAs = async (client: string, id: string): Promise<void> => {
      for (const a of (await get(full, `/coreclient/${client}/actions`)).actions) {
        if ((await get(full, `/coreclient/${client}/action/${a.id}`)).details.txID === id) {
          await full.request('PUT', `/coreclient/${client}/action/${a.id}`);
          return;
        }
      }
      throw new Error(`no pending action of ${client} for ${id}`);
    };

    it('swapOut is out (negative in the history, with its fee), swapIn is in', async () => {
      const d = sim.demo;
      const stamp = `${process.pid}-${Date.now()}`;
      const made = (
        await full.request<any>('POST', `/company/${d.company_id}/atomicswap/make`, {
          body: {
            send_wallet_id: d.wallets['BTC-TESTNET'].wallet_id,
            receive_wallet_id: d.wallets['ETH-TESTNET'].short_code,
            expires: Math.floor(Date.now() / 1000) + 3600,
            reference: 'read side swap',
            partner_txID: `ro-make-${stamp}`,
            send: { symbol: 'BTC-TESTNET', amount: 10000000 },
            receive: { symbol: 'ETH-TESTNET', amount: 2000000000 },
            add_to_liquidity_hub: true,
          },
        })
      ).data;
      const swapId = made.tx_id;
      await approveAs(d.core_client_id, swapId);
      const taken = (
        await full.request<any>('POST', `/company/${d.taker.company_id}/atomicswap/take`, {
          body: { swap_id: swapId, send_wallet_id: d.taker.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: d.taker.wallets['BTC-TESTNET'].wallet_id, reference: 'read side take', partner_txID: `ro-take-${stamp}` },
        })
      ).data;
      await approveAs(d.taker.core_client_id, taken.tx_id);
      await full.request('PUT', `/company/${d.taker.company_id}/action/${taken.action_id}`);
      assert.equal((await get(ro, `/company/${d.company_id}/atomicswap/make/${swapId}`)).txStatus, 'approved_swap');

      const item = async (wallet: string, tx: string) => (await get(ro, `/wallet/${wallet}/history`)).history.find((x: any) => x.tx_id === tx);
      const out = await item(d.wallets['BTC-TESTNET'].wallet_id, swapId);
      assert.deepEqual([out.amount, out.fee, out.net_amount], [-10000100, -100, -10000000]);
      const inn = await item(d.wallets['ETH-TESTNET'].wallet_id, swapId);
      assert.deepEqual([inn.amount, inn.fee, inn.net_amount], [2000000000, 0, 2000000000]);
      const takerOut = await item(d.taker.wallets['ETH-TESTNET'].wallet_id, taken.tx_id);
      assert.deepEqual([takerOut.amount, takerOut.fee, takerOut.net_amount], [-2000020000, -20000, -2000000000]);

      const ledger = async (fund: string, direction: string) => (await get(ro, `/funds/${fund}/ledger`, { direction })).List;
      assert.deepEqual((await ledger(d.fund_id, 'out')).filter((e: any) => e.TxID === swapId).map((e: any) => e.type), ['swapOut']);
      assert.deepEqual((await ledger(d.fund_id, 'in')).filter((e: any) => e.TxID === swapId).map((e: any) => e.type), ['swapIn']);
      assert.deepEqual((await ledger(d.taker.fund_id, 'out')).filter((e: any) => e.TxID === taken.tx_id).map((e: any) => e.type), ['swapOut']);
      assert.deepEqual((await ledger(d.taker.fund_id, 'in')).filter((e: any) => e.TxID === taken.tx_id).map((e: any) => e.type), ['swapIn']);
      // Every history still adds up to its wallet's balance.
      for (const w of [d.wallets['BTC-TESTNET'], d.wallets['ETH-TESTNET'], d.taker.wallets['BTC-TESTNET'], d.taker.wallets['ETH-TESTNET']]) {
        const h = (await get(ro, `/wallet/${w.wallet_id}/history`)).history;
        assert.equal(h.reduce((sum: number, x: any) => sum + x.amount, 0), (await get(ro, `/wallet/${w.wallet_id}`)).balance, w.wallet_id);
      }
    });
  });

  describe('persistence and the command line', () => {
    it('keeps the same read-only key across a restart, and provisions one for a data folder that lacks it', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-read-restart-'));
      const running: Simulator[] = [];
      const start = async () => {
        const s = await Simulator.start({ dataDir: dir });
        running.push(s);
        return s;
      };
      try {
        const first = await start();
        const { apiKey, readOnlyApiKey } = first.account;
        await first.stop();
        const second = await start();
        assert.equal(second.account.readOnlyApiKey, readOnlyApiKey);
        assert.equal(second.account.apiKey, apiKey);
        const client = new CustodyClient({ baseUrl: second.baseUrl, apiKey: readOnlyApiKey, privateKey: second.account.privateKeyPem });
        try {
          assert.equal((await get(client, '/account')).type, 'organisation');
          await assertReadOnly403(client.request('POST', '/company', { body: { name: 'after restart' } }), 'POST /company after restart');
        } finally {
          client.close();
        }
        await second.stop();

        // An older data folder: no read-only key in state.json and no key file.
        const stateFile = path.join(dir, 'state.json');
        const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
        delete state.readOnlyApiKey;
        fs.writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 });
        fs.rmSync(path.join(dir, 'partner-readonly-api-key.txt'));
        const third = await start();
        const fresh = third.account.readOnlyApiKey;
        assert.ok(fresh.length >= 40);
        assert.notEqual(fresh, readOnlyApiKey);
        assert.equal(third.account.apiKey, apiKey);
        assert.equal(fs.readFileSync(third.readOnlyApiKeyPath, 'utf8').trim(), fresh);
        assert.equal(fs.statSync(third.readOnlyApiKeyPath).mode & 0o077, 0);
        await third.stop();
        assert.equal(JSON.parse(fs.readFileSync(stateFile, 'utf8')).readOnlyApiKey, fresh, 'written to state.json');
        const fourth = await start();
        assert.equal(fourth.account.readOnlyApiKey, fresh);
      } finally {
        for (const s of running) await s.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the command line prints the read-only key file path and never a key', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-read-cli-'));
      let child: ReturnType<typeof spawn> | undefined;
      try {
        const proc = spawn(process.execPath, [path.join(__dirname, '..', '..', 'simulator', 'cli.js'), '--port', '0', '--data', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
        child = proc;
        let out = '';
        proc.stdout.on('data', (d) => (out += d.toString()));
        proc.stderr.on('data', (d) => (out += d.toString()));
        const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
        await new Promise<void>((resolve, reject) => {
          const check = () => (out.includes('demo company') ? resolve() : undefined);
          proc.stdout.on('data', check);
          proc.on('exit', () => reject(new Error(`cli exited: ${out}`)));
        });
        proc.kill('SIGTERM');
        assert.equal(await exited, 0);
        const keyFile = path.join(dir, 'partner-readonly-api-key.txt');
        const roKey = fs.readFileSync(keyFile, 'utf8').trim();
        const apiKey = fs.readFileSync(path.join(dir, 'partner-api-key.txt'), 'utf8').trim();
        assert.match(out, /read-only key file: .*partner-readonly-api-key\.txt/);
        assert.ok(out.includes(path.resolve(keyFile)), out);
        assert.ok(!out.includes(roKey), 'the read-only key is not printed');
        assert.ok(!out.includes(apiKey), 'the API key is not printed');
        assert.ok(!out.includes('PRIVATE KEY'), 'no private key printed');
      } finally {
        if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
