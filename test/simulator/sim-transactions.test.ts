/**
 * The simulator's withdrawals, atomic swaps with the liquidity hub, exchanges with wallet
 * connections and sweeps, and the hub and wallets feed events (spec sections 2-8), through the
 * real simulator over real sockets with the signed CustodyClient of lib. Engine events are read
 * back through the control endpoint `GET /_simulator/events`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator } from '../../simulator';
import { CustodyClient, sign, type Action, type HubFeedMessage, type SwapMakeRequest, type WalletFeedMessage, type WithdrawRequest } from '../../lib';
import { CoreClientFeed, HubFeed, WalletsFeed } from '../../lib/feeds';
import { loadPrivateKey } from '../../lib/client/signing';
import { controlCall, control, until } from '../helpers/support';
import { bodyOf, swapQuoteRequest, transferRequest, uniqueId, withdrawalRequest } from '../helpers/requests';
import { accountClient, signedCall, simulatedSuite, startSimulated, stopSimulated, type Reply, type SimulatedAccount } from '../helpers/simulated';

const wallClock = () => Math.floor(Date.now() / 1000);
/** The simulator's business clock (epoch seconds), read before each test: the tests advance it. */
let businessNow = wallClock();
const now = () => businessNow;

describe('simulator transactions: withdrawals, swaps, exchanges (spec sections 2-8)', function () {
  this.timeout(60000);
  let sim: Simulator;
  let client: CustodyClient;
  simulatedSuite('cf-sim-tx-', {}, (s) => ({ sim, client } = s));

  /** A signed call; an API error answer is returned, not thrown. */
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<Reply> => signedCall(client, method, p, body);

  const balance = async (walletId: string): Promise<number> => (await api('GET', `/wallet/${encodeURIComponent(walletId)}`)).data.balance;
  const lastSeq = async (): Promise<number> => {
    const ev = (await controlCall(sim, 'GET', '/events')).body.events as { seq: number }[];
    return ev.length ? ev[ev.length - 1].seq : 0;
  };
  const eventsAfter = async (after: number): Promise<{ seq: number; event: string; message: any }[]> => (await controlCall(sim, 'GET', `/events?after=${after}`)).body.events;
  const pendingActions = async (clientId: string): Promise<any[]> => (await api('GET', `/coreclient/${clientId}/actions`)).data.actions;
  /** The entries of a fund's ledger (company route, every status) of transaction `txId`. */
  const ledgerOf = async (companyId: string, fundId: string, txId: string): Promise<any[]> =>
    (await api('GET', `/company/${companyId}/fund/${fundId}/ledger`)).data.List.filter((e: any) => e.TxID === txId);
  /** A wallet's history (GET /wallet/{wallet_id}/history), newest first. */
  const historyOf = async (walletId: string): Promise<any[]> => (await api('GET', `/wallet/${encodeURIComponent(walletId)}/history`)).data.history;
  /** Assert that a wallet's history lists no item of `txId` and adds up to the wallet's balance. */
  async function assertHistoryBalanced(walletId: string, absentTxId?: string): Promise<void> {
    const h = await historyOf(walletId);
    if (absentTxId) assert.ok(!h.some((x) => x.tx_id === absentTxId), `${absentTxId} is not in the history of ${walletId}`);
    assert.equal(h.reduce((s, x) => s + x.amount, 0), await balance(walletId), `the history of ${walletId} adds up to its balance`);
  }
  /** The pending action of `clientId` for transaction `txId` (looked up through the action details). */
  async function actionFor(clientId: string, txId: string): Promise<any> {
    for (const a of await pendingActions(clientId)) {
      const d = (await api('GET', `/coreclient/${clientId}/action/${a.id}`)).data;
      if (d.details?.txID === txId) return d;
    }
    return undefined;
  }

  beforeEach(async () => {
    businessNow = (await controlCall(sim, 'GET', '/clock')).body.now;
  });

  describe('whitelist and withdrawals', () => {
    const withdrawal = (overrides: Partial<WithdrawRequest> = {}) =>
      bodyOf(withdrawalRequest(sim.demo, { wallet_id: sim.demo.wallets['BTC-TESTNET'].short_code, expires: now() + 3600, benefit_of: 'Beneficiary', account_no: 'ACC-9', reference: 'withdrawal test', partner_txID: uniqueId('wd'), send: { symbol: 'BTC-TESTNET', amount: 20000000 }, ...overrides }));

    it('whitelists an address for several funds of a company and lists it', async () => {
      const d = sim.demo;
      const address = 'tb1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
      // spec section 4: empty body, HTTP 200 (read raw: lib answers {} for an empty body)
      const url = `${sim.baseUrl}/company/${d.company_id}/fund/${d.fund_id}/whitelist`;
      const text = JSON.stringify({ name: 'cold store', asset: 'BTC-TESTNET', address });
      const ts = String(wallClock());
      const added = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'x-api-key': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(loadPrivateKey(sim.account.privateKeyPem), { prefix: ts, url, body: text }) },
        body: text,
      });
      assert.equal(added.status, 200);
      assert.equal(await added.text(), '', 'empty body');
      assert.equal((await api('POST', `/company/${d.company_id}/fund/${d.counterparty.fund_id}/whitelist`, { name: 'cold store', asset: 'BTC-TESTNET', address })).status, 200);
      const list = (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/whitelist`)).data;
      assert.equal(list.total_count, list.list.length);
      assert.deepEqual(
        list.list.find((e: any) => e.address === address),
        { name: 'cold store', asset: 'BTC-TESTNET', address },
      );
      assert.ok(list.list.some((e: any) => e.address === d.whitelist['BTC-TESTNET']), 'the demo whitelist entry');
      assert.equal((await api('GET', `/company/${d.company_id}/fund/${d.counterparty.fund_id}/whitelist`)).data.total_count, 1);
      const missing = await api('POST', `/company/${d.company_id}/fund/${d.fund_id}/whitelist`, { name: 'x', asset: 'BTC-TESTNET' });
      assert.equal(missing.status, 400);
      assert.match(missing.data.detail.reason, /^address:/);
    });

    it('refuses an address that is not whitelisted for the fund, with no effect', async () => {
      const d = sim.demo;
      const before = await balance(d.wallets['BTC-TESTNET'].wallet_id);
      const actionsBefore = (await pendingActions(d.core_client_id)).length;
      const body = withdrawal({ address: 'tb1qnotwhitelisted0000000000000000000000000' });
      const res = await api('POST', `/company/${d.company_id}/withdraw`, body);
      assert.equal(res.status, 400);
      assert.match(res.data.detail.reason, /^address: .* is not whitelisted for fund demo-fund/);
      // whitelisted for ETH-TESTNET, not for the BTC-TESTNET wallet's asset
      assert.equal((await api('POST', `/company/${d.company_id}/withdraw`, withdrawal({ address: d.whitelist['ETH-TESTNET'] }))).status, 400);
      assert.equal(await balance(d.wallets['BTC-TESTNET'].wallet_id), before);
      assert.equal((await pendingActions(d.core_client_id)).length, actionsBefore);
      // the refused partner_txID was not consumed
      assert.equal((await api('POST', `/company/${d.company_id}/withdraw`, { ...body, address: d.whitelist['BTC-TESTNET'], send: { symbol: 'BTC-TESTNET', amount: 1 } })).data.status, 'new');
    });

    it('is approved by the core client, debits amount + fees, writes a withdraw ledger entry and a wallets feed event; the chain can reject it', async () => {
      const d = sim.demo;
      const wallet = d.wallets['BTC-TESTNET'].wallet_id;
      const before = await balance(wallet);
      const mark = await lastSeq();
      const body = withdrawal();
      const created = await api('POST', `/company/${d.company_id}/withdraw`, body);
      assert.equal(created.status, 200);
      assert.equal(created.data.status, 'new');
      assert.deepEqual((await api('POST', `/company/${d.company_id}/withdraw`, body)).data, { tx_id: created.data.tx_id, status: 'existing' });
      const txId = created.data.tx_id;
      const pending = await api('GET', `/company/${d.company_id}/withdraw/${txId}`);
      assert.equal(pending.data.txStatus, 'pending_withdrawal');
      const action = await actionFor(d.core_client_id, txId);
      assert.equal(action.type, 'ApproveWithdraw');
      assert.equal(action.details.recipientAddress, d.whitelist['BTC-TESTNET']);
      assert.equal(action.details.fees, 200);
      assert.equal((await api('PUT', `/coreclient/${d.core_client_id}/action/${action.id}`)).status, 200);
      const tx = (await api('GET', `/company/${d.company_id}/withdraw/${txId}`)).data;
      assert.equal(tx.txStatus, 'approved_withdrawal');
      assert.equal(tx.approvedCount, 1);
      assert.equal(tx.status[0].userID, d.core_client_id);
      assert.equal(tx.statusDetails.recipientAddress, d.whitelist['BTC-TESTNET']);
      assert.equal(tx.statusDetails.amount, 20000200);
      assert.equal(tx.statusDetails.netAmount, 20000000);
      assert.equal(await balance(wallet), before - 20000200);
      const out = (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger?direction=out`)).data.List;
      const entry = out.find((e: any) => e.TxID === txId);
      assert.equal(entry.type, 'withdraw');
      assert.equal(entry.address, d.whitelist['BTC-TESTNET']);
      assert.equal(entry.status, 'approved');
      const ev = (await eventsAfter(mark)).filter((e) => e.event === 'walletTx' && e.message.tx_id === txId);
      assert.deepEqual(
        ev.map((e) => [e.message.wallet_id, e.message.amount, e.message.fee, e.message.net_amount, e.message.Status]),
        [[wallet, -20000200, -200, -20000000, 'approved_withdrawal']],
      );

      const rejected = await controlCall(sim, 'POST', `/withdraw/${txId}/chain-reject`, {});
      assert.equal(rejected.status, 200);
      assert.equal(rejected.body.txStatus, 'chain_rejected_withdrawal');
      assert.equal((await api('GET', `/company/${d.company_id}/withdraw/${txId}`)).data.txStatus, 'chain_rejected_withdrawal');
      assert.equal(await balance(wallet), before);
      const after = (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger`)).data.List.find((e: any) => e.TxID === txId);
      assert.equal(after.status, 'chain_rejected');
      const refund = (await eventsAfter(mark)).filter((e) => e.event === 'walletTx' && e.message.tx_id === txId).pop();
      assert.equal(refund!.message.amount, 20000200);
      assert.equal(refund!.message.Status, 'chain_rejected_withdrawal');
      assert.equal((await controlCall(sim, 'POST', `/withdraw/${txId}/chain-reject`, {})).status, 409);
    });

    it('a pending withdrawal is in the fund ledger (status pending, its reference and amount), not in the wallet history; approved, that one entry is approved', async () => {
      const d = sim.demo;
      const wallet = d.wallets['BTC-TESTNET'];
      const body = withdrawal({ reference: uniqueId('pending-withdrawal'), send: { symbol: 'BTC-TESTNET', amount: 3000000 } });
      const created = await api('POST', `/company/${d.company_id}/withdraw`, body);
      assert.equal(created.data.status, 'new');
      const txId = created.data.tx_id;
      const tx = (await api('GET', `/company/${d.company_id}/withdraw/${txId}`)).data;
      const pending = await ledgerOf(d.company_id, d.fund_id, txId);
      assert.deepEqual(pending, [
        {
          TxID: txId,
          chainTxID: '',
          fundID: d.fund_id,
          timestamp: tx.initiatedTimestamp,
          expireTime: body.expires,
          status: 'pending',
          type: 'withdraw',
          asset: 'BTC-TESTNET',
          amount: 3000030,
          fees: 30,
          netAmount: 3000000,
          counterpartyID: '',
          counterpartyName: 'Demo BTC-TESTNET withdrawal address',
          address: d.whitelist['BTC-TESTNET'],
          reference: body.reference,
          benefitOf: 'Beneficiary',
          accountNo: 'ACC-9',
        },
      ]);
      // the ledger filters see it: out, its wallet (short code), its asset; not in, not the other asset
      const filtered = async (q: string) => (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger?${q}`)).data.List.some((e: any) => e.TxID === txId);
      assert.deepEqual(
        [await filtered('direction=out'), await filtered(`wallet_id=${encodeURIComponent(wallet.short_code)}`), await filtered('asset=BTC-TESTNET'), await filtered('direction=in'), await filtered('asset=ETH-TESTNET')],
        [true, true, true, false, false],
      );
      await assertHistoryBalanced(wallet.wallet_id, txId);

      const action = await actionFor(d.core_client_id, txId);
      await control(sim, '/clock/advance', { seconds: 5 });
      assert.equal((await api('PUT', `/coreclient/${d.core_client_id}/action/${action.id}`)).status, 200);
      const settled = await ledgerOf(d.company_id, d.fund_id, txId);
      assert.equal(settled.length, 1, 'the pending entry was updated, not joined by a second one');
      assert.match(settled[0].chainTxID, /^[0-9a-f]{64}$/);
      assert.deepEqual({ ...settled[0], chainTxID: '' }, { ...pending[0], status: 'approved' }, 'status and chainTxID change; timestamp stays the creation time');
      const item = (await historyOf(wallet.wallet_id)).find((x) => x.tx_id === txId);
      assert.deepEqual([item.amount, item.fee, item.net_amount, item.chain_tx_id], [-3000030, -30, -3000000, settled[0].chainTxID]);
      await assertHistoryBalanced(wallet.wallet_id);
    });

    it('expires with the business clock and releases its hold', async () => {
      const d = sim.demo;
      const wallet = d.manual.wallets['BTC-TESTNET'].wallet_id;
      await api('POST', `/company/${d.company_id}/fund/${d.manual.fund_id}/whitelist`, { name: 'manual out', asset: 'BTC-TESTNET', address: d.whitelist['BTC-TESTNET'] });
      const all = await balance(wallet);
      const amount = Math.floor(all * 0.99);
      const w = await api('POST', `/company/${d.company_id}/withdraw`, withdrawal({ wallet_id: wallet, expires: now() + 120, send: { symbol: 'BTC-TESTNET', amount } }));
      assert.equal(w.data.status, 'new');
      const second = await api('POST', `/company/${d.company_id}/withdraw`, withdrawal({ wallet_id: wallet, send: { symbol: 'BTC-TESTNET', amount } }));
      assert.equal(second.status, 400, 'the first one holds the funds');
      assert.match(second.data.detail.reason, /^send\.amount: insufficient balance/);
      assert.deepEqual((await ledgerOf(d.company_id, d.manual.fund_id, w.data.tx_id)).map((e) => [e.type, e.status, e.amount]), [['withdraw', 'pending', amount + Math.ceil(amount / 100000)]]);
      await control(sim, '/clock/advance', { seconds: 121 });
      assert.equal((await api('GET', `/company/${d.company_id}/withdraw/${w.data.tx_id}`)).data.txStatus, 'expired_withdrawal');
      assert.deepEqual((await ledgerOf(d.company_id, d.manual.fund_id, w.data.tx_id)).map((e) => [e.status, e.chainTxID]), [['expired', '']], 'the same entry, expired');
      assert.equal(await actionFor(d.manual.core_client_id, w.data.tx_id), undefined);
      const third = await api('POST', `/company/${d.company_id}/withdraw`, withdrawal({ wallet_id: wallet, send: { symbol: 'BTC-TESTNET', amount } }));
      assert.equal(third.data.status, 'new', 'the hold was released');
      const a = await actionFor(d.manual.core_client_id, third.data.tx_id);
      assert.equal((await api('DELETE', `/coreclient/${d.manual.core_client_id}/action/${a.id}`)).status, 200);
      assert.equal((await api('GET', `/company/${d.company_id}/withdraw/${third.data.tx_id}`)).data.txStatus, 'custody_rejected_withdrawal');
      assert.deepEqual((await ledgerOf(d.company_id, d.manual.fund_id, third.data.tx_id)).map((e) => e.status), ['rejected']);
      assert.equal(await balance(wallet), all);
      await assertHistoryBalanced(wallet, w.data.tx_id);
      await assertHistoryBalanced(wallet, third.data.tx_id);
    });

    it('lets a human custodian approve a withdrawal through /_simulator/tx/{tx_id}/approve', async () => {
      const d = sim.demo;
      const wallet = d.counterparty.wallets['ETH-TESTNET'].wallet_id;
      await control(sim, '/faucet', { wallet_id: wallet, amount: 5000000000 });
      await api('POST', `/company/${d.company_id}/fund/${d.counterparty.fund_id}/whitelist`, { name: 'eth out', asset: 'ETH-TESTNET', address: d.whitelist['ETH-TESTNET'] });
      const w = await api('POST', `/company/${d.company_id}/withdraw`, withdrawal({ wallet_id: wallet, address: d.whitelist['ETH-TESTNET'], send: { symbol: 'ETH-TESTNET', amount: 1000000000 } }));
      assert.equal(w.data.status, 'new');
      assert.equal((await controlCall(sim, 'POST', `/tx/${w.data.tx_id}/approve`, { user_id: 'bob@custody.example' })).status, 403);
      const ok = await controlCall(sim, 'POST', `/tx/${w.data.tx_id}/approve`, { user_id: 'alice@custody.example' });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.txStatus, 'approved_withdrawal');
      assert.equal(ok.body.status[0].username, 'alice');
      assert.equal(await balance(wallet), 5000000000 - 1000010000);
    });
  });

  describe('atomic swaps and the liquidity hub', () => {
    const make = (overrides: Partial<SwapMakeRequest> = {}) =>
      bodyOf(swapQuoteRequest(sim.demo, { receive_wallet_id: sim.demo.wallets['ETH-TESTNET'].short_code, expires: now() + 3600, reference: 'swap test', partner_txID: uniqueId('make'), send: { symbol: 'BTC-TESTNET', amount: 10000000 }, receive: { symbol: 'ETH-TESTNET', amount: 2000000000 }, add_to_liquidity_hub: true, ...overrides }));
    const take = (swap_id: string, overrides: Record<string, unknown> = {}) => ({
      swap_id,
      send_wallet_id: sim.demo.taker.wallets['ETH-TESTNET'].wallet_id,
      receive_wallet_id: sim.demo.taker.wallets['BTC-TESTNET'].short_code,
      reference: 'take test',
      partner_txID: uniqueId('take'),
      ...overrides,
    });
    const hub = async (companyId?: string): Promise<any[]> => (await api('GET', companyId ? `/company/${companyId}/liquidityhub` : '/liquidityhub')).data.items;
    /** Make a quote and approve it by the demo approver. @returns its tx_id. */
    async function approvedQuote(overrides: Record<string, unknown> = {}): Promise<string> {
      const m = await api('POST', `/company/${sim.demo.company_id}/atomicswap/make`, make(overrides));
      assert.equal(m.data.status, 'new', JSON.stringify(m.data));
      const a = await actionFor(sim.demo.core_client_id, m.data.tx_id);
      assert.equal(a.type, 'ApproveSwap');
      assert.equal((await api('PUT', `/coreclient/${sim.demo.core_client_id}/action/${a.id}`)).status, 200);
      return m.data.tx_id;
    }

    it('make -> maker custody -> hub (owner flags, hub event) -> take -> both approvals -> both legs settle together', async () => {
      const d = sim.demo;
      const w = { mBtc: d.wallets['BTC-TESTNET'].wallet_id, mEth: d.wallets['ETH-TESTNET'].wallet_id, tBtc: d.taker.wallets['BTC-TESTNET'].wallet_id, tEth: d.taker.wallets['ETH-TESTNET'].wallet_id };
      const before = { mBtc: await balance(w.mBtc), mEth: await balance(w.mEth), tBtc: await balance(w.tBtc), tEth: await balance(w.tEth) };
      const mark = await lastSeq();

      const body = make();
      const made = await api('POST', `/company/${d.company_id}/atomicswap/make`, body);
      assert.equal(made.status, 200);
      assert.equal(made.data.status, 'new');
      assert.match(made.data.tx_url, new RegExp(`/atomicswap/make/${made.data.tx_id}$`));
      assert.equal((await api('POST', `/company/${d.company_id}/atomicswap/make`, body)).data.status, 'existing');
      const swapId = made.data.tx_id;
      assert.equal((await api('GET', `/company/${d.company_id}/atomicswap/make/${swapId}`)).data.txStatus, 'pending_swap');
      const makerPending = await ledgerOf(d.company_id, d.fund_id, swapId);
      assert.deepEqual(
        makerPending.map((e) => [e.type, e.status, e.asset, e.amount, e.fees, e.netAmount, e.counterpartyID, e.reference, e.expireTime, e.chainTxID]),
        [['swapOut', 'pending', 'BTC-TESTNET', 10000100, 100, 10000000, '', 'swap test', body.expires, '']],
        'the maker send wallet: pending swapOut, taker not known yet',
      );
      assert.ok(!(await hub(d.company_id)).some((i) => i.tx_id === swapId), 'not listed before approval');
      assert.equal((await api('POST', `/company/${d.company_id}/liquidityhub`, { tx_id: swapId })).status, 409, 'cannot publish before approval');

      const a = await actionFor(d.core_client_id, swapId);
      assert.equal(a.type, 'ApproveSwap');
      assert.equal((await api('PUT', `/coreclient/${d.core_client_id}/action/${a.id}`)).status, 200);
      const quote = (await api('GET', `/company/${d.company_id}/atomicswap/make/${swapId}`)).data;
      assert.equal(quote.txStatus, 'taker_pending');
      assert.deepEqual((await ledgerOf(d.company_id, d.fund_id, swapId)).map((e) => e.status), ['pending'], 'approved by its custodians, the quote has moved nothing yet');
      assert.deepEqual(quote.swap.send, { symbol: 'BTC-TESTNET', amount: 10000000 });
      assert.deepEqual(quote.swap.receive, { symbol: 'ETH-TESTNET', amount: 2000000000 });
      assert.ok(quote.swap.added > 0);

      const mine = (await hub(d.company_id)).find((i) => i.tx_id === swapId);
      assert.deepEqual(
        { ...mine, added: 0 },
        { tx_id: swapId, send_asset: 'BTC-TESTNET', send_amount: 10000000, receive_asset: 'ETH-TESTNET', receive_amount: 2000000000, owner: true, expires: body.expires, added: 0 },
      );
      assert.equal((await hub(d.taker.company_id)).find((i) => i.tx_id === swapId).owner, false);
      assert.equal((await hub()).find((i) => i.tx_id === swapId).owner, true, 'GET /liquidityhub: a company of the same account');
      const hubEvents = (await eventsAfter(mark)).filter((e) => e.event === 'hub');
      assert.deepEqual(hubEvents.map((e) => e.message), [{ txID: swapId, status: 'taker_pending' }]);

      // the taker's own quote cannot be taken by itself; a take needs the right assets
      assert.equal((await api('POST', `/company/${d.company_id}/atomicswap/take`, take(swapId, { send_wallet_id: w.mEth, receive_wallet_id: w.mBtc }))).status, 400);
      const wrong = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(swapId, { send_wallet_id: w.tBtc, receive_wallet_id: w.tEth }));
      assert.equal(wrong.status, 400);
      assert.match(wrong.data.detail.reason, /^send_wallet_id:/);

      const takeBody = take(swapId);
      const taken = await api('POST', `/company/${d.taker.company_id}/atomicswap/take/${swapId}`, takeBody);
      assert.equal(taken.status, 200);
      assert.equal(taken.data.status, 'new');
      assert.notEqual(taken.data.tx_id, swapId);
      assert.ok(taken.data.action_id);
      assert.deepEqual((await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, takeBody)).data, { ...taken.data, status: 'existing' }, 'idempotent on partner_txID');
      const takeId = taken.data.tx_id;
      assert.deepEqual(
        (await ledgerOf(d.taker.company_id, d.taker.fund_id, takeId)).map((e) => [e.type, e.status, e.asset, e.amount, e.fees, e.counterpartyID, e.counterpartyName, e.reference]),
        [['swapOut', 'pending', 'ETH-TESTNET', 2000020000, 20000, d.company_id, 'Demo Treasury Ltd', 'take test']],
        'the taker send wallet: pending swapOut, counterparty the maker',
      );
      await assertHistoryBalanced(w.tEth, takeId);
      assert.ok(!(await hub(d.company_id)).some((i) => i.tx_id === swapId), 'hidden while being taken');
      assert.equal((await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(swapId))).status, 409, 'one take at a time');

      const ta = await actionFor(d.taker.core_client_id, takeId);
      assert.equal(ta.type, 'ApproveSwapTake');
      assert.equal(ta.details.amount, 2000020000);
      assert.equal((await api('PUT', `/coreclient/${d.taker.core_client_id}/action/${ta.id}`)).status, 200);
      let t = (await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${takeId}`)).data;
      assert.equal(t.txStatus, 'pending_swap_take', 'the company approval is still missing');
      assert.equal(t.companyActionID, taken.data.action_id);
      assert.equal(t.companyActionStatus, 'pending');
      assert.equal(t.approvedCount, 1);
      assert.equal(await balance(w.tEth), before.tEth, 'nothing moved yet');
      assert.equal(await balance(w.mBtc), before.mBtc);

      assert.equal((await api('PUT', `/company/${d.company_id}/action/${taken.data.action_id}`)).status, 404, "another company cannot approve the taker's action");
      assert.equal((await api('PUT', `/company/${d.taker.company_id}/action/${taken.data.action_id}`)).status, 200);
      t = (await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${takeId}`)).data;
      assert.equal(t.txStatus, 'approved_swap_take');
      assert.equal(t.companyActionStatus, 'approved');
      const settled = (await api('GET', `/company/${d.company_id}/atomicswap/make/${swapId}`)).data;
      assert.equal(settled.txStatus, 'approved_swap');
      assert.equal(settled.swap.take_tx_id, takeId);

      assert.equal(await balance(w.mBtc), before.mBtc - 10000100);
      assert.equal(await balance(w.tBtc), before.tBtc + 10000000);
      assert.equal(await balance(w.tEth), before.tEth - 2000020000);
      assert.equal(await balance(w.mEth), before.mEth + 2000000000);

      const makerLedger = (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger`)).data.List.filter((e: any) => e.TxID === swapId);
      assert.deepEqual(makerLedger.map((e: any) => [e.type, e.asset, e.amount, e.fees]).sort(), [
        ['swapIn', 'ETH-TESTNET', 2000000000, 0],
        ['swapOut', 'BTC-TESTNET', 10000100, 100],
      ]);
      assert.ok(makerLedger.every((e: any) => e.counterpartyID === d.taker.company_id && e.status === 'approved'));
      const takerLedger = (await api('GET', `/company/${d.taker.company_id}/fund/${d.taker.fund_id}/ledger`)).data.List.filter((e: any) => e.TxID === takeId);
      assert.deepEqual(takerLedger.map((e: any) => [e.type, e.asset, e.amount, e.fees]).sort(), [
        ['swapIn', 'BTC-TESTNET', 10000000, 0],
        ['swapOut', 'ETH-TESTNET', 2000020000, 20000],
      ]);
      assert.ok(takerLedger.every((e: any) => e.counterpartyID === d.company_id && e.status === 'approved'));
      for (const wallet of Object.values(w)) await assertHistoryBalanced(wallet);
      const moves = (await eventsAfter(mark)).filter((e) => e.event === 'walletTx').map((e) => [e.message.wallet_id, e.message.amount]);
      assert.deepEqual(moves.sort(), [
        [w.mBtc, -10000100],
        [w.mEth, 2000000000],
        [w.tBtc, 10000000],
        [w.tEth, -2000020000],
      ].sort());
      assert.ok(!(await hub()).some((i) => i.tx_id === swapId), 'a settled quote leaves the hub');
      assert.equal((await api('PUT', `/company/${d.taker.company_id}/action/${taken.data.action_id}`)).status, 409);
    });

    it('settles when the company approves first and the custodian last', async () => {
      const d = sim.demo;
      const swapId = await approvedQuote({ send: { symbol: 'BTC-TESTNET', amount: 1000 }, receive: { symbol: 'ETH-TESTNET', amount: 3000 } });
      const taken = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(swapId));
      assert.equal((await api('PUT', `/company/${d.taker.company_id}/action/${taken.data.action_id}`)).status, 200);
      assert.equal((await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${taken.data.tx_id}`)).data.txStatus, 'pending_swap_take');
      const ta = await actionFor(d.taker.core_client_id, taken.data.tx_id);
      assert.equal((await api('PUT', `/coreclient/${d.taker.core_client_id}/action/${ta.id}`)).status, 200);
      assert.equal((await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${taken.data.tx_id}`)).data.txStatus, 'approved_swap_take');
      assert.equal((await api('GET', `/company/${d.company_id}/atomicswap/make/${swapId}`)).data.txStatus, 'approved_swap');
    });

    it('a rejected take frees the quote; cancel releases the hold and the quote', async () => {
      const d = sim.demo;
      const wallet = d.wallets['BTC-TESTNET'].wallet_id;
      const available = await balance(wallet); // nothing else is pending on this wallet here
      const big = Math.floor(available * 0.6);
      const m = await api('POST', `/company/${d.company_id}/atomicswap/make`, make({ send: { symbol: 'BTC-TESTNET', amount: big }, add_to_liquidity_hub: false }));
      assert.equal(m.data.status, 'new');
      const refused = await api('POST', `/company/${d.company_id}/atomicswap/make`, make({ send: { symbol: 'BTC-TESTNET', amount: big } }));
      assert.equal(refused.status, 400, 'the first quote holds its amount');
      const a = await actionFor(d.core_client_id, m.data.tx_id);
      await api('PUT', `/coreclient/${d.core_client_id}/action/${a.id}`);
      assert.equal((await api('GET', `/company/${d.company_id}/atomicswap/make/${m.data.tx_id}`)).data.txStatus, 'taker_pending');
      assert.ok(!(await hub(d.company_id)).some((i) => i.tx_id === m.data.tx_id), 'not published without add_to_liquidity_hub');
      const mark = await lastSeq();
      assert.equal((await api('POST', `/company/${d.company_id}/liquidityhub`, { tx_id: m.data.tx_id })).status, 200);
      assert.ok((await hub(d.company_id)).some((i) => i.tx_id === m.data.tx_id));
      assert.deepEqual((await eventsAfter(mark)).map((e) => e.message), [{ txID: m.data.tx_id, status: 'taker_pending' }]);

      const taken = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(m.data.tx_id, { send_wallet_id: d.taker.wallets['ETH-TESTNET'].wallet_id }));
      assert.equal(taken.data.status, 'new');
      assert.equal((await api('DELETE', `/company/${d.taker.company_id}/action/${taken.data.action_id}`)).status, 200);
      assert.equal((await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${taken.data.tx_id}`)).data.txStatus, 'custody_rejected_swap_take');
      assert.deepEqual((await ledgerOf(d.taker.company_id, d.taker.fund_id, taken.data.tx_id)).map((e) => e.status), ['rejected']);
      assert.equal(await actionFor(d.taker.core_client_id, taken.data.tx_id), undefined, "the taker custodian's action is no longer pending");
      assert.ok((await hub(d.company_id)).some((i) => i.tx_id === m.data.tx_id), 'back in the hub');

      const retake = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(m.data.tx_id));
      assert.equal(retake.data.status, 'new');
      assert.equal((await api('DELETE', `/company/${d.company_id}/atomicswap/make/${m.data.tx_id}`)).status, 202, 'a cancel answers 202 (OpenAPI)');
      assert.equal((await api('GET', `/company/${d.company_id}/atomicswap/make/${m.data.tx_id}`)).data.txStatus, 'cancelled_swap');
      assert.equal((await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${retake.data.tx_id}`)).data.txStatus, 'cancelled_swap_take');
      assert.deepEqual((await ledgerOf(d.company_id, d.fund_id, m.data.tx_id)).map((e) => e.status), ['cancelled']);
      assert.deepEqual((await ledgerOf(d.taker.company_id, d.taker.fund_id, retake.data.tx_id)).map((e) => e.status), ['cancelled']);
      assert.equal((await api('PUT', `/company/${d.taker.company_id}/action/${retake.data.action_id}`)).status, 409);
      assert.ok(!(await hub()).some((i) => i.tx_id === m.data.tx_id));
      assert.equal((await api('DELETE', `/company/${d.company_id}/atomicswap/make/${m.data.tx_id}`)).status, 409);
      assert.equal(await balance(wallet), available, 'nothing moved');
      assert.equal((await api('POST', `/company/${d.company_id}/atomicswap/make`, make({ send: { symbol: 'BTC-TESTNET', amount: big } }))).data.status, 'new', 'the hold was released');
      // leave no hold behind for the other tests
      const open = (await api('GET', `/coreclient/${d.core_client_id}/actions`)).data.actions;
      for (const x of open) await api('DELETE', `/coreclient/${d.core_client_id}/action/${x.id}`);
    });

    it('expiry closes the quote and its pending take and releases both holds', async () => {
      const d = sim.demo;
      const tEth = d.taker.wallets['ETH-TESTNET'].wallet_id;
      const swapId = await approvedQuote({ expires: now() + 300 });
      const taken = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(swapId));
      assert.equal(taken.data.status, 'new');
      const before = await balance(tEth);
      await control(sim, '/clock/advance', { seconds: 301 });
      assert.equal((await api('GET', `/company/${d.company_id}/atomicswap/make/${swapId}`)).data.txStatus, 'expired_swap');
      assert.equal((await api('GET', `/company/${d.taker.company_id}/atomicswap/take/${taken.data.tx_id}`)).data.txStatus, 'expired_swap_take');
      assert.deepEqual((await ledgerOf(d.company_id, d.fund_id, swapId)).map((e) => e.status), ['expired']);
      assert.deepEqual((await ledgerOf(d.taker.company_id, d.taker.fund_id, taken.data.tx_id)).map((e) => e.status), ['expired']);
      assert.equal((await api('PUT', `/company/${d.taker.company_id}/action/${taken.data.action_id}`)).status, 409);
      assert.equal(await actionFor(d.taker.core_client_id, taken.data.tx_id), undefined);
      assert.ok(!(await hub()).some((i) => i.tx_id === swapId));
      assert.equal(await balance(tEth), before);
      // the whole available ETH of the taker can be quoted again: its hold is gone
      const all = await balance(tEth);
      const again = await api('POST', `/company/${d.taker.company_id}/atomicswap/make`, {
        ...make({ send_wallet_id: tEth, receive_wallet_id: d.taker.wallets['BTC-TESTNET'].wallet_id, send: { symbol: 'ETH-TESTNET', amount: all - Math.ceil(all / 100000) }, receive: { symbol: 'BTC-TESTNET', amount: 1 } }),
      });
      assert.equal(again.data.status, 'new', JSON.stringify(again.data));
      await api('DELETE', `/company/${d.taker.company_id}/atomicswap/make/${again.data.tx_id}`);
    });

    it("refuses a take of another API account's quote (spec section 8)", async () => {
      const d = sim.demo;
      const mark = await lastSeq();
      const foreign = await control(sim, '/foreign/quote', { send: { symbol: 'BTC-TESTNET', amount: 5000 }, receive: { symbol: 'ETH-TESTNET', amount: 100000 } });
      // the hub feed shows the quote; the wallets feed (per API key) shows none of the other account's deposits
      assert.deepEqual((await eventsAfter(mark)).map((e) => [e.event, e.message]), [['hub', { txID: foreign.tx_id, status: 'taker_pending' }]]);
      const item = (await hub(d.taker.company_id)).find((i) => i.tx_id === foreign.tx_id);
      assert.equal(item.owner, false);
      assert.equal((await hub()).find((i) => i.tx_id === foreign.tx_id).owner, false, 'not a company of this account');
      const before = await balance(d.taker.wallets['ETH-TESTNET'].wallet_id);
      const refused = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take(foreign.tx_id));
      assert.equal(refused.status, 403);
      assert.match(refused.data.detail.reason, /^swap_id: .*another API account/);
      assert.equal(await balance(d.taker.wallets['ETH-TESTNET'].wallet_id), before);
      assert.equal((await api('GET', `/company/${foreign.company_id}`)).status, 403, "the foreign account's company is not ours");
      assert.equal((await api('GET', `/coreclient/${foreign.core_client_id}/actions`)).status, 403, 'nor its core client');
      assert.equal((await api('POST', `/company/${d.company_id}/trustedparty`, { address: foreign.core_client_id, type: 'core-client' })).status, 404);
    });
  });

  describe('exchanges, wallet connections and sweeps', () => {
    it('lists exchanges with their client fields', async () => {
      const ex = (await api('GET', '/exchanges')).data.exchanges;
      const demo = ex.find((x: any) => x.id === sim.demo.exchange.exchange_id);
      assert.equal(demo.name, 'Simulated Exchange');
      assert.ok(demo.url && demo.logourl);
      assert.deepEqual(
        demo.client.fields.map((f: any) => Object.keys(f).sort()),
        demo.client.fields.map(() => ['id', 'name', 'type']),
      );
      assert.ok(ex.length >= 2);
    });

    it('connect request -> action that never expires -> approve -> connected -> sweep without approval -> status object', async () => {
      const d = sim.demo;
      const clientId = d.exchange.client_id;
      const wallet = d.exchange.wallets['BTC-TESTNET'].wallet_id;
      const target = d.wallets['BTC-TESTNET'].wallet_id;
      assert.equal((await controlCall(sim, 'POST', '/exchange/connect-request', { client_id: clientId, wallet_id: d.wallets['BTC-TESTNET'].wallet_id, customer_email: 'x@example.com', customer_id: 'C-0' })).status, 400, 'a standard wallet cannot be connected');
      const req = await control(sim, '/exchange/connect-request', { client_id: clientId, wallet_id: wallet, customer_email: 'eve@example.com', customer_id: 'C-42' });
      assert.equal(req.status, 'pending');
      assert.equal((await controlCall(sim, 'POST', '/exchange/connect-request', { client_id: clientId, wallet_id: wallet, customer_email: 'eve@example.com', customer_id: 'C-42' })).status, 409);
      await control(sim, '/clock/advance', { seconds: 30 * 86400 });
      const listed = (await pendingActions(clientId)).find((a) => a.id === req.action_id);
      assert.equal(listed.type, 'ApproveNewWalletConnect');
      assert.equal(listed.status, 'pending', 'still pending 30 days later');
      assert.equal(listed.expireTime, 0);
      const detail = (await api('GET', `/coreclient/${clientId}/action/${req.action_id}`)).data;
      assert.deepEqual(detail.details.clientData, { customer_email: 'eve@example.com', customer_id: 'C-42' });
      assert.deepEqual(detail.details.wallet, { walletID: wallet, name: 'Exchange BTC-TESTNET wallet', asset: 'BTC-TESTNET', type: 1, typeCode: 'dedicated' });
      assert.deepEqual((await api('GET', `/coreclient/${clientId}/wallets`)).data.wallets, [{ wallet_id: wallet, action_id: req.action_id, status: 'pending', expires: 0 }]);

      const sweepBody = { wallet_id: wallet, recipient_wallet_id: target, reference: 'sweep test', expires: now() + 40 * 86400, send: { symbol: 'BTC-TESTNET', amount: 1000000 } };
      const early = await api('POST', `/coreclient/${clientId}/sweep`, sweepBody);
      assert.equal(early.status, 400, 'not connected yet');
      assert.match(early.data.detail.reason, /^wallet_id: neither wallet_id nor recipient_wallet_id is connected/);

      assert.equal((await api('PUT', `/coreclient/${clientId}/action/${req.action_id}`)).status, 200);
      assert.deepEqual((await api('GET', `/coreclient/${clientId}/wallets`)).data.wallets, [{ wallet_id: wallet, action_id: req.action_id, status: 'approved', expires: 0 }]);
      const view = (await api('GET', `/wallet/${wallet}`)).data;
      assert.deepEqual(view.connected, [{ client_id: clientId, counterparty_id: 'C-42', name: 'Simulated Exchange', status: 'Active' }]);
      assert.equal((await api('PUT', `/coreclient/${clientId}/action/${req.action_id}`)).status, 409);

      // another exchange's client may not sweep this wallet
      const other = await api('POST', `/coreclient/demo-exchange-2-client/sweep`, sweepBody);
      assert.equal(other.status, 400);

      const fromBefore = await balance(wallet);
      const toBefore = await balance(target);
      const mark = await lastSeq();
      const sweepOnce = { ...sweepBody, partner_txID: uniqueId('sweep') };
      const sweep = await api('POST', `/coreclient/${clientId}/sweep`, sweepOnce);
      assert.equal(sweep.status, 200);
      assert.ok(sweep.data.tx_id);
      assert.deepEqual((await api('POST', `/coreclient/${clientId}/sweep`, sweepOnce)).data, { tx_id: sweep.data.tx_id, status: 'existing' }, 'dedupe all (the default): a repeated partner_txID answers existing');
      assert.equal(await balance(wallet), fromBefore - 1000010);
      assert.equal(await balance(target), toBefore + 1000000);
      const viaPost = await api('POST', `/coreclient/${clientId}/sweep/tx_id`, { tx_id: sweep.data.tx_id });
      const viaGet = await api('GET', `/coreclient/${clientId}/sweep/${sweep.data.tx_id}`);
      assert.deepEqual(viaPost.data, viaGet.data);
      const s = viaGet.data;
      assert.equal(s.tx_id, sweep.data.tx_id);
      assert.equal(s.tx_status, 'approved_sweep');
      assert.equal(s.reference, 'sweep test');
      assert.equal(s.threshold_required, 1);
      assert.equal(s.approver_count, 1);
      assert.deepEqual(Object.keys(s.status[0]).sort(), ['action_id', 'entity', 'status', 'timestamp']);
      assert.equal(s.status[0].entity, clientId);
      assert.deepEqual(s.status_details, {
        amount: 1000010,
        asset: 'BTC-TESTNET',
        expires: sweepBody.expires,
        fees: 10,
        wallet_id: wallet,
        net_amount: 1000000,
        recipient_wallet_id: target,
        reference: 'sweep test',
        requested_by: 'Simulated Exchange',
      });
      assert.equal((await api('GET', `/coreclient/demo-exchange-2-client/sweep/${sweep.data.tx_id}`)).status, 404);
      const ev = (await eventsAfter(mark)).filter((e) => e.event === 'walletTx');
      assert.deepEqual(
        ev.map((e) => [e.message.wallet_id, e.message.amount, e.message.sweep_tx]),
        [
          [wallet, -1000010, true],
          [target, 1000000, true],
        ],
      );
      const ledger = (await api('GET', `/company/${d.company_id}/fund/${d.exchange.fund_id}/ledger`)).data.List;
      assert.equal(ledger.find((e: any) => e.TxID === sweep.data.tx_id).type, 'transferOut');

      // into the connected wallet, then everything out of it (send.amount omitted)
      const into = await api('POST', `/coreclient/${clientId}/sweep`, { ...sweepBody, wallet_id: target, recipient_wallet_id: wallet, send: { symbol: 'BTC-TESTNET', amount: 5000 } });
      assert.equal(into.status, 200);
      const all = await api('POST', `/coreclient/${clientId}/sweep`, { ...sweepBody, send: { symbol: 'BTC-TESTNET' } });
      assert.equal(all.status, 200);
      const rest = await balance(wallet);
      assert.ok(rest === 0 || rest === 1, `at most one base unit left, ${rest} left`);
      const drained = (await api('GET', `/coreclient/${clientId}/sweep/${all.data.tx_id}`)).data.status_details;
      assert.equal(drained.amount, fromBefore - 1000010 + 5000 - rest);
      assert.equal(drained.amount, drained.net_amount + drained.fees);
    });

    it('an exchange core client can reject a connection request', async () => {
      const d = sim.demo;
      const req = await control(sim, '/exchange/connect-request', { client_id: 'demo-exchange-2-client', wallet_id: d.exchange.wallets['BTC-TESTNET'].wallet_id, customer_email: 'm@example.com', customer_id: 'M-1' });
      assert.equal((await api('DELETE', `/coreclient/demo-exchange-2-client/action/${req.action_id}`)).status, 200);
      assert.deepEqual((await api('GET', '/coreclient/demo-exchange-2-client/wallets')).data.wallets, []);
    });
  });

  it('sends a published quote on the liquidity hub feed, every swap leg on the wallets feed, and a connection request on the exchange core client feed (real websockets)', async () => {
    const d = sim.demo;
    const opts = { minDelayMs: 50, maxDelayMs: 200 };
    const hubFeed = new HubFeed(client, opts);
    const walletsFeed = new WalletsFeed(client, opts);
    const exchangeFeed = new CoreClientFeed(client, 'demo-exchange-2-client', opts);
    const quotes: HubFeedMessage[] = [];
    const moves: WalletFeedMessage[] = [];
    const actions: Action[] = [];
    hubFeed.on('quote', (m: HubFeedMessage) => quotes.push(m));
    walletsFeed.on('transaction', (m: WalletFeedMessage) => moves.push(m));
    exchangeFeed.on('action', (a: Action) => actions.push(a));
    try {
      for (const f of [hubFeed, walletsFeed, exchangeFeed]) f.start();
      await until(() => ([hubFeed, walletsFeed, exchangeFeed].every((f) => f.state === 'connected') ? true : undefined), 'the feeds connected');
      const m = await api(
        'POST',
        `/company/${d.company_id}/atomicswap/make`,
        bodyOf(swapQuoteRequest(d, { send_wallet_id: d.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: d.wallets['BTC-TESTNET'].wallet_id, expires: now() + 3600, reference: 'feed test', partner_txID: uniqueId('feed-make'), send: { symbol: 'ETH-TESTNET', amount: 100000 }, receive: { symbol: 'BTC-TESTNET', amount: 700 }, add_to_liquidity_hub: true })),
      );
      const a = await actionFor(d.core_client_id, m.data.tx_id);
      await api('PUT', `/coreclient/${d.core_client_id}/action/${a.id}`);
      await until(() => (quotes.length ? true : undefined), 'the hub feed message');
      assert.deepEqual(quotes, [{ txID: m.data.tx_id, status: 'taker_pending' }]);

      const t = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, {
        swap_id: m.data.tx_id,
        send_wallet_id: d.taker.wallets['BTC-TESTNET'].wallet_id,
        receive_wallet_id: d.taker.wallets['ETH-TESTNET'].wallet_id,
        reference: 'feed take',
        partner_txID: uniqueId('feed-take'),
      });
      const ta = await actionFor(d.taker.core_client_id, t.data.tx_id);
      await api('PUT', `/coreclient/${d.taker.core_client_id}/action/${ta.id}`);
      await api('PUT', `/company/${d.taker.company_id}/action/${t.data.action_id}`);
      await until(() => (moves.length >= 4 ? true : undefined), 'four wallets feed messages');
      assert.deepEqual(
        moves.map((x) => [x.wallet_id, x.amount]).sort(),
        [
          [d.wallets['ETH-TESTNET'].wallet_id, -100001],
          [d.wallets['BTC-TESTNET'].wallet_id, 700],
          [d.taker.wallets['BTC-TESTNET'].wallet_id, -701],
          [d.taker.wallets['ETH-TESTNET'].wallet_id, 100000],
        ].sort(),
      );

      const req = await control(sim, '/exchange/connect-request', { client_id: 'demo-exchange-2-client', wallet_id: d.exchange.wallets['BTC-TESTNET'].wallet_id, customer_email: 'f@example.com', customer_id: 'F-1' });
      await until(() => (actions.some((x) => x.id === req.action_id) ? true : undefined), 'the connection request on the exchange core client feed');
      const got = actions.find((x) => x.id === req.action_id)!;
      assert.equal(got.type, 'ApproveNewWalletConnect');
      assert.equal(got.expireTime, 0);
      await api('DELETE', `/coreclient/demo-exchange-2-client/action/${req.action_id}`);
    } finally {
      await Promise.all([hubFeed.stop(), walletsFeed.stop(), exchangeFeed.stop()]);
    }
  });

  it('emits wallets feed events for transfers and faucet deposits', async () => {
    const d = sim.demo;
    const mark = await lastSeq();
    await control(sim, '/faucet', { wallet_id: d.wallets['BTC-TESTNET'].wallet_id, amount: 7 });
    const t = await api('POST', `/company/${d.company_id}/transfer`, bodyOf(transferRequest(d, { expires: now() + 3600, benefit_of: 'b', account_no: 'a', reference: 'r', partner_txID: uniqueId('t'), send: { symbol: 'BTC-TESTNET', amount: 500 } })));
    const a = await actionFor(d.core_client_id, t.data.tx_id);
    await api('PUT', `/coreclient/${d.core_client_id}/action/${a.id}`);
    const ev = (await eventsAfter(mark)).filter((e) => e.event === 'walletTx').map((e) => e.message);
    assert.equal(ev[0].amount, 7);
    assert.equal(ev[0].Status, 'confirmed');
    assert.deepEqual(
      ev.slice(1).map((m) => [m.tx_id, m.wallet_id, m.amount, m.fee, m.net_amount, m.sweep_tx, m.Status]),
      [
        [t.data.tx_id, d.wallets['BTC-TESTNET'].wallet_id, -501, -1, -500, false, 'approved_transfer'],
        [t.data.tx_id, d.counterparty.wallets['BTC-TESTNET'].wallet_id, 500, 0, 500, false, 'approved_transfer'],
      ],
    );
  });
});

describe('simulator state files written before withdrawals, swaps and exchanges', function () {
  this.timeout(60000);

  it('still load: the new collections start empty and the new demo parts are added', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-old-'));
    try {
      let sim = await Simulator.start({ dataDir, port: 0 });
      const demo = sim.demo;
      await sim.stop();
      const file = path.join(dataDir, 'state.json');
      const state = JSON.parse(fs.readFileSync(file, 'utf8'));
      // Remove everything a simulator before this change did not write.
      for (const k of ['withdrawals', 'swaps', 'swapTakes', 'whitelists', 'exchanges', 'connections', 'sweeps']) delete state[k];
      for (const k of ['whitelist', 'taker', 'exchange']) delete state.demo[k];
      delete state.companies['demo-taker-company'];
      for (const id of ['demo-taker-approver', 'demo-exchange-client', 'demo-exchange-2-client']) delete state.coreClients[id];
      for (const id of ['demo-taker-fund', 'demo-exchange-fund']) {
        delete state.funds[id];
        delete state.ledger[id];
      }
      for (const id of Object.keys(state.wallets)) if (['demo-taker-fund', 'demo-exchange-fund'].includes(state.wallets[id].fund_id)) delete state.wallets[id];
      fs.writeFileSync(file, JSON.stringify(state));

      sim = await Simulator.start({ dataDir, port: 0 });
      try {
        assert.deepEqual(sim.demo.wallets, demo.wallets);
        assert.deepEqual(sim.demo.taker.wallets['BTC-TESTNET'].wallet_id, 'demo-taker-btc-testnet');
        assert.equal(sim.demo.exchange.client_id, 'demo-exchange-client');
        assert.equal(sim.demo.whitelist['BTC-TESTNET'], demo.whitelist['BTC-TESTNET']);
        const client = accountClient(sim);
        try {
          const wl = await client.request<any>('GET', `/company/${demo.company_id}/fund/${demo.fund_id}/whitelist`);
          assert.equal(wl.data.total_count, 2);
          const w = await client.request<any>('POST', `/company/${demo.company_id}/withdraw`, {
            body: bodyOf(withdrawalRequest(demo, { expires: wallClock() + 600, benefit_of: '', account_no: '', reference: 'after upgrade', partner_txID: 'upgrade-1', send: { symbol: 'BTC-TESTNET', amount: 1000 } })),
          });
          assert.equal(w.data.status, 'new');
        } finally {
          client.close();
        }
      } finally {
        await sim.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('simulator state files written before pending ledger entries', function () {
  this.timeout(60000);

  it('still load and behave: a transaction without a pending entry writes its entry when it settles, as before; entries kept are updated in place', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-oldledger-'));
    let sim: Simulator | undefined;
    let client: CustodyClient | undefined;
    try {
      sim = await Simulator.start({ dataDir, port: 0 });
      client = accountClient(sim);
      const d = sim.demo;
      const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown) => signedCall(client!, method, p, body);
      const ledgerOf = async (txId: string) => (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger`)).data.List.filter((e: any) => e.TxID === txId);
      const approve = async (txId: string, approve = true) => {
        for (const a of (await api('GET', `/coreclient/${d.core_client_id}/actions`)).data.actions) {
          if ((await api('GET', `/coreclient/${d.core_client_id}/action/${a.id}`)).data.details.txID === txId) {
            assert.equal((await api(approve ? 'PUT' : 'DELETE', `/coreclient/${d.core_client_id}/action/${a.id}`)).status, 200);
            return;
          }
        }
        throw new Error(`no pending action for ${txId}`);
      };
      const fields = (label: string) => ({ expires: wallClock() + 3600, benefit_of: 'b', account_no: 'a', reference: label, partner_txID: uniqueId(label), send: { symbol: 'BTC-TESTNET', amount: 1000 } });
      const transfer = (label: string) => bodyOf(transferRequest(d, fields(label)));
      const withdrawal = (label: string) => bodyOf(withdrawalRequest(d, fields(label)));
      const post = async (kind: 'transfer' | 'withdraw', body: unknown): Promise<string> => (await api('POST', `/company/${d.company_id}/${kind}`, body)).data.tx_id;

      const oldTransfer = await post('transfer', transfer('old pending transfer'));
      const oldWithdrawal = await post('withdraw', withdrawal('old pending withdrawal'));
      const oldRejected = await post('transfer', transfer('old rejected transfer'));
      const keptTransfer = await post('transfer', transfer('kept pending transfer'));
      const settledWithdrawal = await post('withdraw', withdrawal('settled withdrawal'));
      await approve(settledWithdrawal);
      client.close();
      await sim.stop();

      // What a simulator before this change wrote: no ledger entry for a pending transaction.
      const file = path.join(dataDir, 'state.json');
      const state = JSON.parse(fs.readFileSync(file, 'utf8'));
      const old = new Set([oldTransfer, oldWithdrawal, oldRejected]);
      state.ledger[d.fund_id] = state.ledger[d.fund_id].filter((r: any) => !old.has(r.entry.TxID));
      fs.writeFileSync(file, JSON.stringify(state));

      sim = await Simulator.start({ dataDir, port: 0 });
      client = accountClient(sim);
      for (const id of old) assert.deepEqual(await ledgerOf(id), [], 'nothing listed for an old pending transaction');
      await control(sim, '/clock/advance', { seconds: 7 });
      const settledAt = (await controlCall(sim, 'GET', '/clock')).body.now;
      await approve(oldTransfer);
      await approve(oldWithdrawal);
      await approve(oldRejected, false);
      await approve(keptTransfer);
      const t = await ledgerOf(oldTransfer);
      assert.deepEqual(t.map((e: any) => [e.type, e.status, e.amount, e.reference]), [['transferOut', 'approved', 1001, 'old pending transfer']]);
      assert.ok(t[0].timestamp >= settledAt, 'written at settlement, as before');
      assert.deepEqual((await ledgerOf(oldWithdrawal)).map((e: any) => [e.type, e.status, e.address]), [['withdraw', 'approved', d.whitelist['BTC-TESTNET']]]);
      assert.deepEqual(await ledgerOf(oldRejected), [], 'a rejection writes nothing, as before');
      const kept = await ledgerOf(keptTransfer);
      assert.deepEqual(kept.map((e: any) => [e.type, e.status]), [['transferOut', 'approved']], 'the pending entry of the state file was updated in place');
      assert.ok(kept[0].timestamp < settledAt, 'its creation time');
      // the index is rebuilt from the ledger on start: the chain rejects a withdrawal settled before the restart
      assert.equal((await control(sim, `/withdraw/${settledWithdrawal}/chain-reject`)).txStatus, 'chain_rejected_withdrawal');
      assert.deepEqual((await ledgerOf(settledWithdrawal)).map((e: any) => e.status), ['chain_rejected']);
      for (const w of [d.wallets['BTC-TESTNET'].wallet_id, d.counterparty.wallets['BTC-TESTNET'].wallet_id]) {
        const h = (await api('GET', `/wallet/${w}/history`)).data.history;
        assert.equal(h.reduce((s: number, x: any) => s + x.amount, 0), (await api('GET', `/wallet/${w}`)).data.balance, w);
      }
    } finally {
      client?.close();
      await sim?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("simulator option dedupe: 'transfers' (spec section 3 promises `existing` for POST transfer only)", function () {
  this.timeout(60000);
  let s: SimulatedAccount;
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<Reply> => signedCall(s.client, method, p, body);
  /** Approve, as core client `clientId`, its pending action of transaction `txId`. */
  async function approveAs(clientId: string, txId: string): Promise<void> {
    for (const a of (await api('GET', `/coreclient/${clientId}/actions`)).data.actions) {
      if ((await api('GET', `/coreclient/${clientId}/action/${a.id}`)).data.details.txID === txId) {
        assert.equal((await api('PUT', `/coreclient/${clientId}/action/${a.id}`)).status, 200);
        return;
      }
    }
    throw new Error(`no pending action of ${clientId} for ${txId}`);
  }

  before(async () => {
    s = await startSimulated('cf-sim-dedupe-', { dedupe: 'transfers' });
  });

  after(async () => {
    await stopSimulated(s ?? {});
  });

  it('refuses an unknown mode at start', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-dedupe-bad-'));
    try {
      await assert.rejects(Simulator.start({ dataDir, port: 0, dedupe: 'some' as never }), /dedupe must be 'all' or 'transfers'/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a repeated withdraw partner_txID makes a second withdrawal; a repeated transfer partner_txID answers existing', async () => {
    const d = s.sim.demo;
    const wallet = d.wallets['BTC-TESTNET'].wallet_id;
    const common = { wallet_id: wallet, expires: wallClock() + 3600, benefit_of: 'b', account_no: 'a', send: { symbol: 'BTC-TESTNET', amount: 5000 } };
    const w = { ...common, address: d.whitelist['BTC-TESTNET'], reference: 'dedupe withdrawal', partner_txID: uniqueId('dedupe-wd') };
    const first = await api('POST', `/company/${d.company_id}/withdraw`, w);
    const second = await api('POST', `/company/${d.company_id}/withdraw`, w);
    assert.equal(first.data.status, 'new');
    assert.equal(second.data.status, 'new', 'not deduped: a new withdrawal');
    assert.notEqual(second.data.tx_id, first.data.tx_id);
    for (const id of [first.data.tx_id, second.data.tx_id]) assert.equal((await api('GET', `/company/${d.company_id}/withdraw/${id}`)).data.txStatus, 'pending_withdrawal');
    const ledger = (await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger`)).data.List.filter((e: any) => e.reference === 'dedupe withdrawal');
    assert.deepEqual(ledger.map((e: any) => [e.TxID, e.status, e.amount]).sort(), [[first.data.tx_id, 'pending', 5001], [second.data.tx_id, 'pending', 5001]].sort(), 'two pending withdrawals with that reference and amount');

    const t = { ...common, counterparty_wallet_address: d.counterparty.wallets['BTC-TESTNET'].wallet_id, reference: 'dedupe transfer', partner_txID: uniqueId('dedupe-t') };
    const t1 = await api('POST', `/company/${d.company_id}/transfer`, t);
    assert.equal(t1.data.status, 'new');
    assert.deepEqual((await api('POST', `/company/${d.company_id}/transfer`, t)).data, { tx_id: t1.data.tx_id, status: 'existing' });
    assert.equal((await api('GET', `/company/${d.company_id}/fund/${d.fund_id}/ledger`)).data.List.filter((e: any) => e.reference === 'dedupe transfer').length, 1);
  });

  it('swap makes, swap takes and sweeps are not deduped either', async () => {
    const d = s.sim.demo;
    const make = bodyOf(swapQuoteRequest(d, { reference: 'dedupe make', partner_txID: uniqueId('dedupe-make'), receive: { symbol: 'ETH-TESTNET', amount: 2000 }, add_to_liquidity_hub: true }));
    const m1 = await api('POST', `/company/${d.company_id}/atomicswap/make`, make);
    const m2 = await api('POST', `/company/${d.company_id}/atomicswap/make`, make);
    assert.deepEqual([m1.data.status, m2.data.status], ['new', 'new']);
    assert.notEqual(m1.data.tx_id, m2.data.tx_id);

    await approveAs(d.core_client_id, m1.data.tx_id);
    const take = { swap_id: m1.data.tx_id, send_wallet_id: d.taker.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: d.taker.wallets['BTC-TESTNET'].wallet_id, reference: 'dedupe take', partner_txID: uniqueId('dedupe-take') };
    const k1 = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take);
    assert.equal(k1.data.status, 'new');
    const k2 = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, take);
    assert.equal(k2.status, 409, 'a new take of a quote being taken, not the existing one');
    await approveAs(d.core_client_id, m2.data.tx_id);
    const k3 = await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, { ...take, swap_id: m2.data.tx_id });
    assert.equal(k3.data.status, 'new', 'the same partner_txID takes another quote');
    assert.notEqual(k3.data.tx_id, k1.data.tx_id);

    const clientId = d.exchange.client_id;
    const wallet = d.exchange.wallets['BTC-TESTNET'].wallet_id;
    const req = (await control(s.sim, '/exchange/connect-request', { client_id: clientId, wallet_id: wallet, customer_email: 'd@example.com', customer_id: 'D-1' })) as { action_id: string };
    assert.equal((await api('PUT', `/coreclient/${clientId}/action/${req.action_id}`)).status, 200);
    const sweep = { wallet_id: wallet, recipient_wallet_id: d.wallets['BTC-TESTNET'].wallet_id, reference: 'dedupe sweep', expires: wallClock() + 3600, partner_txID: uniqueId('dedupe-sweep'), send: { symbol: 'BTC-TESTNET', amount: 1000 } };
    const s1 = await api('POST', `/coreclient/${clientId}/sweep`, sweep);
    const s2 = await api('POST', `/coreclient/${clientId}/sweep`, sweep);
    assert.deepEqual([s1.data.status, s2.data.status], ['new', 'new']);
    assert.notEqual(s1.data.tx_id, s2.data.tx_id);
  });
});
