/**
 * The simulator's indexes are derived from its state, and its store reads older data folders:
 * - after a mixed history on a real simulator over real sockets (every kind of custody
 *   transaction approved, rejected, left pending, expired, cancelled, chain-rejected; quotes in
 *   and out of the liquidity hub; a take settled; an exchange connection and a sweep; new
 *   companies, funds and wallets; faucet deposits), an engine built afresh from the stored state
 *   (the document in memory, and the data folder read back) has exactly the live engine's
 *   indexes: the engine's write methods keep them, and nothing else does;
 * - a data folder written before the money-moving kinds took lib's names (`swap` and `take` for
 *   `swapMake` and `swapTake`, in records and in partner_txID keys, in the snapshot and in the
 *   journal) loads with lib's names, and dedupe, the hub and the expiry work on it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DATA_FILES, Simulator } from '../../simulator';
import { Engine } from '../../simulator/engine';
import { Store } from '../../simulator/store';
import { JOURNAL_FILE } from '../../simulator/journal';
import { emptyState, type SimState } from '../../simulator/model';
import { control, controlCall, tempDirPerTest } from '../helpers/support';
import { bodyOf, swapQuoteRequest, transferRequest, uniqueId, withdrawalRequest } from '../helpers/requests';
import { accountClient, signedCall, startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';

/** An engine built from scratch on a copy of `state` (nothing persisted). */
function freshEngine(state: SimState, dataDir: string): Engine {
  return new Engine(new Store(JSON.parse(JSON.stringify(state)) as SimState, dataDir, false));
}

describe('simulator store: indexes derived from the stored state; older data folders load', function () {
  this.timeout(120000);

  describe('indexes equal a rebuild from the stored state after a mixed history', () => {
    let acc: SimulatedAccount;
    const copies: string[] = [];
    before(async () => {
      acc = await startSimulated('cf-sim-store-');
    });
    after(async () => {
      await stopSimulated(acc);
      for (const d of copies) fs.rmSync(d, { recursive: true, force: true });
    });

    /** A signed call that must succeed (an API error is thrown). @returns the answer's body. */
    const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<any> => (await acc.client.request<any>(method, p, body === undefined ? {} : { body })).data;
    const now = async (): Promise<number> => (await controlCall(acc.sim, 'GET', '/clock')).body.now;
    /** The action of `clientId` deciding `txId` (pending). */
    async function actionOf(clientId: string, txId: string): Promise<string> {
      const list = (await ok('GET', `/coreclient/${clientId}/actions`)).actions as { id: string }[];
      for (const a of list) if ((await ok('GET', `/coreclient/${clientId}/action/${a.id}`)).details?.txID === txId) return a.id;
      throw new Error(`no pending action of ${clientId} for ${txId}`);
    }

    /** Compare the live engine's indexes with an engine built from the document in memory and from the data folder read back. */
    async function assertIndexesDerived(label: string): Promise<void> {
      const live = acc.sim.engine;
      const fromMemory = freshEngine(live.store.raw, acc.dataDir);
      assert.deepEqual(live.indexSnapshot(), fromMemory.indexSnapshot(), `${label}: indexes rebuilt from the document in memory`);
      await live.store.flush();
      const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-store-copy-'));
      copies.push(copy);
      for (const f of [DATA_FILES.state, JOURNAL_FILE]) {
        if (fs.existsSync(path.join(acc.dataDir, f))) fs.copyFileSync(path.join(acc.dataDir, f), path.join(copy, f));
      }
      const loaded = await Store.load(copy);
      assert.ok(loaded, `${label}: the data folder holds a state`);
      const fromDisk = new Engine(new Store(loaded, copy, false));
      assert.deepEqual(live.indexSnapshot(), fromDisk.indexSnapshot(), `${label}: indexes rebuilt from the data folder`);
    }

    it('keeps every index equal to a rebuild, with transactions pending and after they end', async () => {
      const d = acc.sim.demo;
      const t = await now();
      // The network: a company with a core client custodian, a fund with wallets, more wallets, deposits.
      const company = (await ok('POST', '/company', { name: 'Store Test Ltd', domain: 'store.example' })).company_id as string;
      const client = (await ok('POST', '/coreclient', { name: 'store approver' })).id as string;
      await ok('POST', `/company/${company}/trustedparty`, { address: client, type: 'core-client' });
      const group = { threshold: 1, members: [client] };
      const fund = await ok('POST', `/company/${company}/fund`, {
        name: 'store fund',
        custodygroup_withdraw: group,
        custodygroup_tx: group,
        wallets: [
          { name: 'btc', asset: 'BTC-TESTNET' },
          { name: 'eth', asset: 'ETH-TESTNET' },
        ],
      });
      const more = await ok('POST', `/company/${company}/fund/${fund.fund_id}/wallet`, { wallets: [{ name: 'btc 2', asset: 'BTC-TESTNET', type: 1 }] });
      const [btc, eth] = ((await ok('GET', `/company/${company}/fund/${fund.fund_id}`)).wallets as { wallet_id: string }[]).map((w) => w.wallet_id);
      await control(acc.sim, '/faucet', { wallet_id: btc, amount: 5_000_000_000 });
      await control(acc.sim, '/faucet', { wallet_id: eth, amount: 50_000_000_000 });
      await control(acc.sim, '/faucet', { wallet_id: more.wallets[0], amount: 1_000_000 });

      // Transfers: one approved, one rejected, one left pending, one that will expire.
      const transfer = (fields: Record<string, unknown> = {}) => ok('POST', `/company/${d.company_id}/transfer`, bodyOf(transferRequest(d, { partner_txID: uniqueId('st'), ...fields })));
      const approved = (await transfer()).tx_id;
      const rejected = (await transfer()).tx_id;
      const pending = (await transfer({ expires: t + 7200 })).tx_id;
      const expiring = (await transfer({ expires: t + 600 })).tx_id;
      await ok('PUT', `/coreclient/${d.core_client_id}/action/${await actionOf(d.core_client_id, approved)}`);
      await ok('DELETE', `/coreclient/${d.core_client_id}/action/${await actionOf(d.core_client_id, rejected)}`);
      // A transfer of the new company (its own custodian), left pending.
      await ok('POST', `/company/${company}/transfer`, bodyOf(transferRequest(d, { company_id: company, wallet_id: btc, counterparty_wallet_address: d.wallets['BTC-TESTNET'].wallet_id, expires: t + 3600, partner_txID: uniqueId('st'), send: { symbol: 'BTC-TESTNET', amount: 1000 } })));

      // A withdrawal approved then refused by the chain, another left pending.
      const wd = (await ok('POST', `/company/${d.company_id}/withdraw`, bodyOf(withdrawalRequest(d, { partner_txID: uniqueId('sw') })))).tx_id;
      await ok('PUT', `/coreclient/${d.core_client_id}/action/${await actionOf(d.core_client_id, wd)}`);
      await control(acc.sim, `/withdraw/${wd}/chain-reject`);
      await ok('POST', `/company/${d.company_id}/withdraw`, bodyOf(withdrawalRequest(d, { partner_txID: uniqueId('sw') })));

      // Swaps: a quote in the hub taken and settled, one published then cancelled, one pending custody, one published later by POST liquidityhub.
      const make = (fields: Record<string, unknown> = {}) => ok('POST', `/company/${d.company_id}/atomicswap/make`, bodyOf(swapQuoteRequest(d, { partner_txID: uniqueId('sm'), add_to_liquidity_hub: true, ...fields })));
      const taken = (await make()).tx_id;
      const cancelled = (await make()).tx_id;
      await make();
      const later = (await make({ add_to_liquidity_hub: false })).tx_id;
      for (const q of [taken, cancelled, later]) await ok('PUT', `/coreclient/${d.core_client_id}/action/${await actionOf(d.core_client_id, q)}`);
      await ok('POST', `/company/${d.company_id}/liquidityhub`, { tx_id: later });
      await ok('DELETE', `/company/${d.company_id}/atomicswap/make/${cancelled}`);
      const take = await ok('POST', `/company/${d.taker.company_id}/atomicswap/take`, {
        swap_id: taken,
        send_wallet_id: d.taker.wallets['ETH-TESTNET'].wallet_id,
        receive_wallet_id: d.taker.wallets['BTC-TESTNET'].wallet_id,
        reference: 'store take',
        partner_txID: uniqueId('stk'),
      });
      await ok('PUT', `/coreclient/${d.taker.core_client_id}/action/${await actionOf(d.taker.core_client_id, take.tx_id)}`);

      // An exchange connection request (pending), another approved, and a sweep.
      const ex = d.exchange;
      await control(acc.sim, '/exchange/connect-request', { client_id: ex.client_id, wallet_id: more.wallets[0], customer_email: 'store@example.com', customer_id: 'S-1' });
      const conn = await control(acc.sim, '/exchange/connect-request', { client_id: ex.client_id, wallet_id: ex.wallets['BTC-TESTNET'].wallet_id, customer_email: 'eve@example.com', customer_id: 'S-2' });
      await ok('PUT', `/coreclient/${ex.client_id}/action/${conn.action_id}`);
      await control(acc.sim, '/faucet', { wallet_id: ex.wallets['BTC-TESTNET'].wallet_id, amount: 1_000_000 });
      await ok('POST', `/coreclient/${ex.client_id}/sweep`, { wallet_id: ex.wallets['BTC-TESTNET'].wallet_id, recipient_wallet_id: d.wallets['BTC-TESTNET'].wallet_id, reference: 'store sweep', expires: t + 86400, partner_txID: uniqueId('ss'), send: { symbol: 'BTC-TESTNET', amount: 1000 } });

      await assertIndexesDerived('with transactions pending, quotes in the hub, a take pending');

      // The company approves the take: the swap settles (both legs), the quote leaves the hub.
      await ok('PUT', `/company/${d.taker.company_id}/action/${take.action_id}`);
      assert.equal((await ok('GET', `/company/${d.company_id}/atomicswap/make/${taken}`)).txStatus, 'approved_swap');
      // The clock passes `expiring`'s expires: it and the quotes of the first hour expire.
      const advanced = await control(acc.sim, '/clock/advance', { seconds: 3700 });
      assert.ok(advanced.expired >= 1);
      assert.match((await ok('GET', `/company/${d.company_id}/transfer/${expiring}`)).txStatus, /^expired_/);
      assert.equal((await ok('GET', `/company/${d.company_id}/transfer/${pending}`)).txStatus, 'pending_transfer');

      await assertIndexesDerived('after settlements, cancellations and expiries');
      const snap = acc.sim.engine.indexSnapshot();
      assert.ok(snap.expiryWatch.some(([id]) => id === pending), 'the pending transfer is still watched');
      assert.ok(!snap.expiryWatch.some(([id]) => id === expiring), 'the expired one is not');
      assert.ok(snap.hubSwaps.length === 0 || !snap.hubSwaps.includes(taken), 'a settled quote is not in the hub');
      assert.ok(snap.debitPositions.length > 0 && snap.pendingByCustodian.length > 0 && snap.connectionsByClient.length > 0);
    });
  });

  describe('a data folder with the older spellings swap and take', () => {
    const dir = tempDirPerTest('cf-sim-store-old-');

    /** A minimal state document as an older simulator wrote it: a published quote `q1`, its pending take `t1`, one transfer. */
    function oldState(now: number): Record<string, unknown> {
      const tx = (txID: string, kind: string | undefined, company_id: string, partner_txID: string, txStatus: string) => ({
        ...(kind === undefined ? {} : { kind }),
        txID,
        company_id,
        fund_id: 'f1',
        wallet_id: 'w1',
        partner_txID,
        asset: 'BTC-TESTNET',
        netAmount: 1000,
        fees: 1,
        amount: 1001,
        expires: now + 3600,
        initiatedTimestamp: now,
        reference: 'old',
        benefitOf: '',
        accountNo: '',
        thresholdRequired: 1,
        custodians: ['cc1'],
        actionIDs: [],
        approvals: [],
        txStatus,
        finished: 0,
        held: true,
      });
      return {
        ...emptyState('key', ''),
        transfers: { x1: tx('x1', undefined, 'c1', 'p-transfer', 'pending_transfer') },
        partnerTxIndex: { 'transfer\nc1\np-transfer': 'x1', 'swap\nc1\np-make': 'q1', 'take\nc2\np-take': 't1' },
        swaps: { q1: { ...tx('q1', 'swap', 'c1', 'p-make', 'taker_pending'), receive_wallet_id: 'w2', receive_asset: 'ETH-TESTNET', receive_amount: 5, add_to_liquidity_hub: true, hubAdded: now, takeID: 't1' } },
        swapTakes: { t1: { ...tx('t1', 'take', 'c2', 'p-take', 'pending_swap_take'), swap_id: 'q1', receive_wallet_id: 'w3', companyActionID: 'a1' } },
        journalSeq: 7,
      };
    }

    it('loads the snapshot and the journal of an older simulator with lib names for the kinds', async () => {
      const now = Math.floor(Date.now() / 1000);
      fs.writeFileSync(path.join(dir(), DATA_FILES.state), JSON.stringify(oldState(now)), { mode: 0o600 });
      // A journal line of the older simulator after the snapshot: a second quote, with its key.
      const q2 = { ...(oldState(now).swaps as Record<string, any>).q1, txID: 'q2', partner_txID: 'p-make-2', takeID: '', txStatus: 'pending_swap', hubAdded: 0 };
      fs.writeFileSync(path.join(dir(), JOURNAL_FILE), `{"seq":8,"ops":[[["swaps","q2"],${JSON.stringify(q2)}],[["partnerTxIndex","swap\\nc1\\np-make-2"],"q2"]]}\n`, { mode: 0o600 });

      const state = await Store.load(dir());
      assert.ok(state);
      assert.equal(state.swaps.q1.kind, 'swapMake');
      assert.equal(state.swaps.q2.kind, 'swapMake', 'a record of the journal too');
      assert.equal(state.swapTakes.t1.kind, 'swapTake');
      assert.equal(state.transfers.x1.kind, undefined, 'a transfer without kind stays so');
      assert.deepEqual(Object.keys(state.partnerTxIndex).sort(), ['swapMake\nc1\np-make', 'swapMake\nc1\np-make-2', 'swapTake\nc2\np-take', 'transfer\nc1\np-transfer']);

      const eng = new Engine(new Store(state, dir(), false));
      assert.equal(eng.txIdOfPartnerId('swapMake', 'c1', 'p-make'), 'q1', 'dedupe finds the quote');
      assert.equal(eng.txIdOfPartnerId('swapMake', 'c1', 'p-make-2'), 'q2', 'and the one of the journal');
      assert.equal(eng.txIdOfPartnerId('swapTake', 'c2', 'p-take'), 't1', 'and the take');
      assert.deepEqual(eng.hubQuoteIds(), ['q1'], 'the published quote is in the hub');
      const snap = eng.indexSnapshot();
      assert.deepEqual(snap.swapOrder, ['q1', 'q2']);
      assert.deepEqual(snap.expiryWatch.map(([id]) => id), ['q1', 'q2', 't1', 'x1'], 'every live transaction is watched');
      assert.deepEqual(eng.takeDueExpiries(now + 3600).sort(), ['q1', 'q2', 't1', 'x1']);
    });

    it('serves a simulator restarted on a folder rewritten to the older spellings: repeats answer existing, the quote is read and decided', async () => {
      const sim = await Simulator.start({ dataDir: dir(), port: 0 });
      const client = accountClient(sim);
      const d = sim.demo;
      const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown) => signedCall(client, method, p, body);
      const makeBody = bodyOf(swapQuoteRequest(d, { partner_txID: uniqueId('om'), add_to_liquidity_hub: true }));
      const quoted = (await api('POST', `/company/${d.company_id}/atomicswap/make`, makeBody)).data.tx_id as string;
      const pendingBody = bodyOf(swapQuoteRequest(d, { partner_txID: uniqueId('om') }));
      const pendingQuote = (await api('POST', `/company/${d.company_id}/atomicswap/make`, pendingBody)).data.tx_id as string;
      const actions = (await api('GET', `/coreclient/${d.core_client_id}/actions`)).data.actions as { id: string }[];
      for (const a of actions) {
        const detail = (await api('GET', `/coreclient/${d.core_client_id}/action/${a.id}`)).data;
        if (detail.details.txID === quoted) await api('PUT', `/coreclient/${d.core_client_id}/action/${a.id}`);
      }
      const takeBody = { swap_id: quoted, send_wallet_id: d.taker.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: d.taker.wallets['BTC-TESTNET'].wallet_id, reference: 'old take', partner_txID: uniqueId('ot') };
      const taken = (await api('POST', `/company/${d.taker.company_id}/atomicswap/take`, takeBody)).data;
      client.close();
      await sim.stop();

      // Rewrite the snapshot as an older simulator wrote it.
      const file = path.join(dir(), DATA_FILES.state);
      const text = fs.readFileSync(file, 'utf8');
      const old = text.replaceAll('"kind":"swapMake"', '"kind":"swap"').replaceAll('"kind":"swapTake"', '"kind":"take"').replaceAll('"swapMake\\n', '"swap\\n').replaceAll('"swapTake\\n', '"take\\n');
      assert.notEqual(old, text);
      assert.ok(!/"kind":"swap(Make|Take)"|"swap(Make|Take)\\n/.test(old), 'no new spelling left in the older file');
      fs.writeFileSync(file, old, { mode: 0o600 });

      const again = await Simulator.start({ dataDir: dir(), port: 0 });
      const c2 = accountClient(again);
      try {
        const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown) => signedCall(c2, method, p, body);
        assert.equal(again.engine.findTx(quoted)?.kind, 'swapMake');
        assert.equal(again.engine.findTx(taken.tx_id)?.kind, 'swapTake');
        assert.deepEqual((await call('POST', `/company/${d.company_id}/atomicswap/make`, makeBody)).data, { tx_id: quoted, tx_url: `${again.baseUrl}/company/${d.company_id}/atomicswap/make/${quoted}`, status: 'existing' });
        assert.deepEqual((await call('POST', `/company/${d.taker.company_id}/atomicswap/take`, takeBody)).data, { tx_id: taken.tx_id, status: 'existing', action_id: taken.action_id });
        assert.equal((await call('GET', `/company/${d.company_id}/atomicswap/make/${quoted}`)).data.txStatus, 'taker_pending');
        const pendingAction = (await call('GET', `/coreclient/${d.core_client_id}/actions`)).data.actions as { id: string }[];
        let found = false;
        for (const a of pendingAction) {
          const detail = (await call('GET', `/coreclient/${d.core_client_id}/action/${a.id}`)).data;
          if (detail.details.txID !== pendingQuote) continue;
          found = true;
          assert.equal(detail.details.txType, 'swap', 'a quote action still says txType swap');
          assert.equal((await call('DELETE', `/coreclient/${d.core_client_id}/action/${a.id}`)).status, 200);
        }
        assert.ok(found, 'the pending quote has its action');
        assert.equal((await call('GET', `/company/${d.company_id}/atomicswap/make/${pendingQuote}`)).data.txStatus, 'custody_rejected_swap');
        assert.equal((await call('PUT', `/company/${d.taker.company_id}/action/${taken.action_id}`)).status, 200);
        assert.deepEqual(again.engine.indexSnapshot(), freshEngine(again.engine.store.raw, dir()).indexSnapshot());
      } finally {
        c2.close();
        await again.stop();
      }
    });
  });
});
