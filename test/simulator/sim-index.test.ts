/**
 * The simulator's read paths answer through the engine's indexes (docs/architecture.md "The
 * simulator", indexes have one keeper): this test builds a varied history on a real simulator over
 * real sockets (several companies, funds, wallets and core clients; transfers approved, rejected,
 * left pending and expired; withdrawals, one chain-rejected; swap quotes in the liquidity hub; an
 * exchange connection) and checks that every indexed read equals a brute-force scan of the state
 * document, computed here the way the simulator computed it before it had indexes: fund ledger
 * pages (every filter, paging), wallet history, pending-action lists, the core client feed's
 * catch-up on connect, the liquidity hub, fund details, holdings and connected wallets. It checks
 * again after a restart (indexes rebuilt from the state file) and after more activity on the
 * restarted simulator (indexes kept up to date on top of a rebuild).
 */
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Simulator } from '../../simulator';
import type { SimState } from '../../simulator/model';
import { sign } from '../../lib';
import { loadPrivateKey } from '../../lib/client/signing';
import { control, controlCall, until } from '../helpers/support';
import { accountClient, signedCall, startSimulated, stopSimulated, type Reply, type SimulatedAccount } from '../helpers/simulated';

let seq = 0;
const pid = (label: string) => `idx-${label}-${process.pid}-${Date.now()}-${++seq}`;

/** A deep copy of the simulator's in-memory state document (what the brute force scans). */
function snapshot(sim: Simulator): SimState {
  return JSON.parse(JSON.stringify(sim.engine.state)) as SimState;
}

const directionOf = (type: string) => (type === 'deposit' || type.endsWith('In') ? 'in' : 'out');

/** The fund ledger page as the simulator computed it before indexes: filter the whole fund ledger, newest first, then page. */
function bruteLedger(s: SimState, fundId: string, q: { wallet_id?: string; asset?: string; direction?: string; offset?: number; limit?: number }) {
  const list = (s.ledger[fundId] ?? [])
    .filter((r) => (!q.wallet_id || r.wallet_id === q.wallet_id) && (!q.asset || r.entry.asset === q.asset))
    .filter((r) => !q.direction || q.direction === 'all' || directionOf(r.entry.type) === q.direction)
    .map((r) => r.entry)
    .reverse();
  const offset = q.offset ?? 0;
  const limit = q.limit ?? Number.MAX_SAFE_INTEGER;
  return { Total: list.length, List: list.slice(offset, offset + limit) };
}

/** A core client's pending actions as summaries, scanning every action (oldest first, stable by timestamp). */
function brutePending(s: SimState, clientId: string) {
  return Object.values(s.actions)
    .filter((a) => a.custodianID === clientId && a.status === 'pending')
    .sort((a, b) => a.timestamp - b.timestamp)
    .map((a) => ({ id: a.id, type: a.type, status: a.status, timestamp: a.timestamp, expireTime: a.expireTime }));
}

/** A wallet's history scanning the whole fund ledger. */
function bruteHistory(s: SimState, walletId: string) {
  const w = s.wallets[walletId];
  const neg = (n: number) => (n === 0 ? 0 : -n);
  return (s.ledger[w.fund_id] ?? [])
    .filter((r) => r.wallet_id === walletId && (r.entry.type === 'deposit' || r.entry.status === 'approved'))
    .map((r) => {
      const e = r.entry;
      const out = directionOf(e.type) === 'out';
      return { wallet_id: walletId, tx_id: e.TxID, chain_tx_id: e.chainTxID, asset: e.asset, amount: out ? neg(e.amount) : e.amount, fee: neg(e.fees), net_amount: out ? neg(e.netAmount) : e.netAmount, timestamp: e.timestamp };
    })
    .reverse();
}

/** The liquidity hub listing (tx ids) scanning every quote. */
function bruteHub(s: SimState, now: number): string[] {
  return Object.values(s.swaps)
    .filter((q) => q.txStatus === 'taker_pending' && q.hubAdded > 0 && !q.takeID && q.expires > now)
    .sort((a, b) => a.hubAdded - b.hubAdded)
    .map((q) => q.txID);
}

/** Wallet ids of a fund in creation order, scanning every wallet. */
function bruteFundWallets(s: SimState, fundId: string): string[] {
  return Object.values(s.wallets)
    .filter((w) => w.fund_id === fundId)
    .sort((a, b) => a.created - b.created)
    .map((w) => w.wallet_id);
}

/** Holdings of a company, scanning every wallet. */
function bruteHoldings(s: SimState, companyId: string) {
  const sums = new Map<string, number>();
  for (const w of Object.values(s.wallets)) if (w.company_id === companyId) sums.set(w.asset, (sums.get(w.asset) ?? 0) + w.balance);
  return [...sums].map(([code, amount]) => ({ code, amount }));
}

/** Open a core client feed and collect its messages. */
function openFeed(sim: Simulator, clientId: string): Promise<{ ws: WebSocket; messages: any[] }> {
  const url = sim.baseUrl.replace(/^http/, 'ws') + `/coreclient/${clientId}/feed`;
  const ts = String(Math.floor(Date.now() / 1000));
  const ws = new WebSocket(url, { headers: { 'x-api-key': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(loadPrivateKey(sim.account.privateKeyPem), { prefix: ts, url }) } });
  const messages: any[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  return new Promise((resolve, reject) => {
    ws.on('open', () => resolve({ ws, messages }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`feed refused: ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

describe('simulator indexes: every indexed read equals a scan of the state', function () {
  this.timeout(120000);
  let acc: SimulatedAccount;
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<Reply> => signedCall(acc.client, method, p, body);
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<any> => {
    const r = await api(method, p, body);
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
    return r.data;
  };
  const businessNow = async (): Promise<number> => (await controlCall(acc.sim, 'GET', '/clock')).body.now;

  /** Everything the history builder made: companies, funds and their wallets, core clients. */
  const world = {
    companies: [] as string[],
    funds: [] as { company_id: string; fund_id: string; wallets: { id: string; asset: string; short_code: string }[] }[],
    clients: [] as string[],
  };

  async function newCoreClient(companyIds: string[], name: string): Promise<string> {
    const c = await ok('POST', '/coreclient', { name });
    for (const cid of companyIds) await ok('POST', `/company/${cid}/trustedparty`, { address: c.id, type: 'core-client' });
    world.clients.push(c.id);
    return c.id;
  }

  type FundInfo = (typeof world.funds)[number];
  async function newFund(companyId: string, name: string, group: { threshold: number; members: string[] }, assets: string[]): Promise<FundInfo> {
    const f = await ok('POST', `/company/${companyId}/fund`, {
      name,
      custodygroup_withdraw: group,
      custodygroup_tx: group,
      wallets: assets.map((asset, i) => ({ name: `${name} ${asset} ${i}`, asset })),
    });
    const detail = await ok('GET', `/company/${companyId}/fund/${f.fund_id}`);
    const fund: FundInfo = { company_id: companyId, fund_id: f.fund_id as string, wallets: detail.wallets.map((w: any) => ({ id: w.wallet_id, asset: w.asset, short_code: w.short_code })) };
    world.funds.push(fund);
    for (const w of fund.wallets) await control(acc.sim, '/faucet', { wallet_id: w.id, amount: w.asset.startsWith('ETH') ? 50_000_000_000 : 5_000_000_000 });
    return fund;
  }

  /** The action ids of a transaction, from the in-memory state. */
  const actionsOf = (txId: string): string[] => acc.sim.engine.findTx(txId)?.actionIDs ?? [];
  const custodianOf = (actionId: string): string => acc.sim.engine.state.actions[actionId].custodianID;

  async function transfer(companyId: string, from: string, to: string, asset: string, amount: number, expiresIn: number): Promise<string> {
    const r = await ok('POST', `/company/${companyId}/transfer`, {
      wallet_id: from,
      counterparty_wallet_address: to,
      expires: (await businessNow()) + expiresIn,
      benefit_of: 'Index test',
      account_no: 'ACC-IDX',
      reference: `idx ${seq}`,
      partner_txID: pid('t'),
      send: { symbol: asset, amount },
    });
    return r.tx_id;
  }

  /** Approve (PUT) or reject (DELETE) every pending action of a transaction through its core clients. */
  async function decideAll(txId: string, approve: boolean): Promise<void> {
    for (const a of actionsOf(txId)) {
      if (acc.sim.engine.state.actions[a].status !== 'pending') continue;
      await ok(approve ? 'PUT' : 'DELETE', `/coreclient/${custodianOf(a)}/action/${a}`);
      if (!approve) return; // one rejection closes it
    }
  }

  /** Build the history (see the module comment). */
  async function buildHistory(): Promise<void> {
    const coA = (await ok('POST', '/company', { name: 'Index Alpha', domain: 'alpha.example' })).company_id as string;
    const coB = (await ok('POST', '/company', { name: 'Index Beta', domain: 'beta.example' })).company_id as string;
    world.companies.push(coA, coB);
    const cc1 = await newCoreClient([coA], 'idx approver 1');
    const cc2 = await newCoreClient([coA], 'idx approver 2');
    const cc3 = await newCoreClient([coB], 'idx approver 3');
    const fA1 = await newFund(coA, 'Alpha one', { threshold: 1, members: [cc1] }, ['BTC-TESTNET', 'BTC-TESTNET', 'ETH-TESTNET']);
    const fA2 = await newFund(coA, 'Alpha two', { threshold: 2, members: [cc1, cc2] }, ['BTC-TESTNET', 'ETH-TESTNET']);
    const fB1 = await newFund(coB, 'Beta one', { threshold: 1, members: [cc3] }, ['BTC-TESTNET', 'ETH-TESTNET']);
    const btc = (f: typeof fA1) => f.wallets.filter((w) => w.asset === 'BTC-TESTNET');
    const eth = (f: typeof fA1) => f.wallets.find((w) => w.asset === 'ETH-TESTNET')!;
    // Transfers in many shapes: inside a fund, across funds and companies, by id and short code.
    const routes: { co: string; from: string; to: string; asset: string }[] = [
      { co: coA, from: btc(fA1)[0].id, to: btc(fA1)[1].short_code, asset: 'BTC-TESTNET' },
      { co: coA, from: btc(fA1)[1].short_code, to: btc(fB1)[0].id, asset: 'BTC-TESTNET' },
      { co: coA, from: btc(fA2)[0].id, to: btc(fA1)[0].id, asset: 'BTC-TESTNET' },
      { co: coB, from: btc(fB1)[0].id, to: btc(fA2)[0].id, asset: 'BTC-TESTNET' },
      { co: coA, from: eth(fA1).id, to: eth(fB1).id, asset: 'ETH-TESTNET' },
    ];
    const fates = ['approve', 'reject', 'pending', 'expire', 'approve', 'approve'] as const;
    const plans = Array.from({ length: 30 }, (_, i) => ({ ...routes[i % routes.length], fate: fates[i % fates.length] }));
    for (const [i, p] of plans.entries()) {
      const tx = await transfer(p.co, p.from, p.to, p.asset, 1000 + i, p.fate === 'expire' ? 50 + i : 7200);
      if (p.fate === 'approve') await decideAll(tx, true);
      else if (p.fate === 'reject') await decideAll(tx, false);
    }
    // Withdrawals: one approved then chain-rejected, one pending, one rejected.
    const addr = 'tb1qindextestaddress0000000000000000000000';
    await ok('POST', `/company/${coA}/fund/${fA1.fund_id}/whitelist`, { name: 'index cold', asset: 'BTC-TESTNET', address: addr });
    const withdraw = async () =>
      (
        await ok('POST', `/company/${coA}/withdraw`, {
          wallet_id: btc(fA1)[0].id,
          address: addr,
          expires: (await businessNow()) + 7200,
          benefit_of: 'Index test',
          account_no: 'ACC-IDX',
          reference: 'idx withdrawal',
          partner_txID: pid('w'),
          send: { symbol: 'BTC-TESTNET', amount: 5000 },
        })
      ).tx_id as string;
    const w1 = await withdraw();
    await decideAll(w1, true);
    await control(acc.sim, `/withdraw/${w1}/chain-reject`);
    await withdraw();
    await decideAll(await withdraw(), false);
    // Swap quotes: two approved and published to the hub, one left pending custody.
    const swap = async (amount: number) =>
      (
        await ok('POST', `/company/${coA}/atomicswap/make`, {
          send_wallet_id: btc(fA1)[0].id,
          receive_wallet_id: eth(fA1).id,
          expires: (await businessNow()) + 7200,
          reference: 'idx swap',
          partner_txID: pid('s'),
          send: { symbol: 'BTC-TESTNET', amount },
          receive: { symbol: 'ETH-TESTNET', amount: amount * 10 },
          add_to_liquidity_hub: true,
        })
      ).tx_id as string;
    await decideAll(await swap(3000), true);
    await swap(3100);
    await decideAll(await swap(3200), true);
    // An exchange connection request of the demo, approved.
    const d = acc.sim.demo;
    const conn = await control(acc.sim, '/exchange/connect-request', { client_id: d.exchange.client_id, wallet_id: d.exchange.wallets['BTC-TESTNET'].wallet_id, customer_email: 'idx@example.com', customer_id: 'idx-1' });
    await ok('PUT', `/coreclient/${d.exchange.client_id}/action/${conn.action_id}`);
    // Let part of the history expire: the first 'expire' transfers are due, the later ones not yet.
    await control(acc.sim, '/clock/advance', { seconds: 60 });
  }

  /** Check every indexed read against the brute force over the state document. */
  async function checkReads(label: string, rich = true): Promise<void> {
    const now = await businessNow();
    // Fund ledgers: every filter and paging, company route and read-only route.
    const demo = acc.sim.demo;
    const funds = [...world.funds, { company_id: demo.company_id, fund_id: demo.fund_id, wallets: [] as { id: string; asset: string; short_code: string }[] }];
    for (const f of funds) {
      const queries: Record<string, string | number>[] = [{}, { direction: 'in' }, { direction: 'out' }, { asset: 'BTC-TESTNET' }, { asset: 'ETH-TESTNET', direction: 'out' }, { limit: 10 }, { offset: 3, limit: 5 }, { offset: 10_000 }, { limit: 0 }];
      for (const w of f.wallets) {
        queries.push({ wallet_id: w.id }, { wallet_id: w.short_code, direction: 'in', limit: 4 }, { wallet_id: w.id, direction: 'out', offset: 1, limit: 3 }, { wallet_id: w.id, asset: w.asset }, { wallet_id: w.id, asset: w.asset === 'BTC-TESTNET' ? 'ETH-TESTNET' : 'BTC-TESTNET' });
      }
      for (const q of queries) {
        const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
        const got = await ok('GET', `/company/${f.company_id}/fund/${f.fund_id}/ledger${qs ? '?' + qs : ''}`);
        const walletId = q.wallet_id === undefined ? undefined : acc.sim.engine.findWallet(String(q.wallet_id))!.wallet_id;
        const want = bruteLedger(snapshot(acc.sim), f.fund_id, { ...q, wallet_id: walletId } as any);
        assert.deepEqual(got, want, `${label}: ledger of fund ${f.fund_id} ${qs}`);
      }
      const ro = await ok('GET', `/funds/${f.fund_id}/ledger?direction=out&offset=2&limit=7`);
      assert.deepEqual(ro, bruteLedger(snapshot(acc.sim), f.fund_id, { direction: 'out', offset: 2, limit: 7 }), `${label}: read-only ledger of ${f.fund_id}`);
      // Fund detail lists its wallets in creation order.
      const detail = await ok('GET', `/company/${f.company_id}/fund/${f.fund_id}`);
      assert.deepEqual(detail.wallets.map((w: any) => w.wallet_id), bruteFundWallets(snapshot(acc.sim), f.fund_id), `${label}: wallets of fund ${f.fund_id}`);
      // Wallet histories.
      for (const w of f.wallets) {
        assert.deepEqual((await ok('GET', `/wallet/${w.id}/history`)).history, bruteHistory(snapshot(acc.sim), w.id), `${label}: history of ${w.id}`);
      }
    }
    assert.ok(world.funds.some((f) => (snapshot(acc.sim).ledger[f.fund_id] ?? []).length > 10), 'the history has more than a page');
    // Holdings per company.
    for (const c of world.companies) assert.deepEqual((await ok('GET', `/company/${c}/holding`)).holdings, bruteHoldings(snapshot(acc.sim), c), `${label}: holdings of ${c}`);
    // Pending-action lists, and the feed's catch-up on connect.
    for (const c of [...world.clients, demo.core_client_id, demo.manual.core_client_id, demo.exchange.client_id]) {
      const got = await ok('GET', `/coreclient/${c}/actions`);
      const want = brutePending(snapshot(acc.sim), c);
      assert.deepEqual(got, { count: want.length, actions: want }, `${label}: pending actions of ${c}`);
      const feed = await openFeed(acc.sim, c);
      try {
        // The catch-up is sent right after the upgrade; an extra message would come with it.
        await until(() => (feed.messages.length >= want.length ? true : undefined), `${label}: catch-up of ${c}`);
        await ok('GET', `/coreclient/${c}/actions`); // a round trip after the catch-up
        assert.deepEqual(
          feed.messages,
          want.map((a) => ({ coreClientID: c, expireTime: a.expireTime, id: a.id, status: 'pending', timestamp: a.timestamp, type: a.type })),
          `${label}: feed catch-up of ${c}`,
        );
      } finally {
        feed.ws.terminate();
      }
    }
    if (rich) assert.ok(world.clients.some((c) => brutePending(snapshot(acc.sim), c).length >= 3), 'some core client has several pending actions');
    // Liquidity hub (both listings).
    const hubAll = (await ok('GET', '/liquidityhub')).items.map((i: any) => i.tx_id);
    assert.deepEqual(hubAll, bruteHub(snapshot(acc.sim), now), `${label}: liquidity hub`);
    assert.deepEqual((await ok('GET', `/company/${world.companies[0]}/liquidityhub`)).items.map((i: any) => i.tx_id), hubAll, `${label}: company liquidity hub`);
    if (rich) assert.ok(hubAll.length >= 2, 'quotes in the hub');
    // Connected wallets of the exchange core client, and the wallet's connected list.
    const s = snapshot(acc.sim);
    const xc = demo.exchange.client_id;
    const wantConn = Object.values(s.connections)
      .filter((c) => c.client_id === xc && c.status !== 'rejected')
      .sort((a, b) => a.created - b.created)
      .map((c) => ({ wallet_id: c.wallet_id, action_id: c.action_id, status: s.actions[c.action_id]?.status ?? c.status, expires: 0 }));
    assert.deepEqual((await ok('GET', `/coreclient/${xc}/wallets`)).wallets, wantConn, `${label}: connected wallets`);
    const xw = await ok('GET', `/wallet/${demo.exchange.wallets['BTC-TESTNET'].wallet_id}`);
    assert.deepEqual(
      xw.connected?.map((c: any) => c.client_id),
      Object.values(s.connections)
        .filter((c) => c.wallet_id === demo.exchange.wallets['BTC-TESTNET'].wallet_id && c.status !== 'rejected')
        .map((c) => c.client_id),
      `${label}: the wallet's connected list`,
    );
    // Expiry: nothing live is past its expires.
    const live = [...Object.values(s.transfers), ...Object.values(s.withdrawals), ...Object.values(s.swaps), ...Object.values(s.swapTakes)].filter((t) => t.txStatus.startsWith('pending_') || t.txStatus === 'taker_pending');
    assert.deepEqual(live.filter((t) => t.expires <= now).map((t) => t.txID), [], `${label}: no live transaction past its expires`);
    if (rich) assert.ok(live.length > 0, 'some transactions are still pending');
  }

  /** Expire part of what is pending by advancing the clock; the count must be the brute-force count. */
  async function advanceAndCheckExpiry(seconds: number, label: string): Promise<number> {
    const before = snapshot(acc.sim);
    const target = (await businessNow()) + seconds;
    const due = [...Object.values(before.transfers), ...Object.values(before.withdrawals), ...Object.values(before.swaps)].filter(
      (t) => (t.txStatus.startsWith('pending_') || t.txStatus === 'taker_pending') && t.expires <= target,
    );
    const r = await control(acc.sim, '/clock/advance', { seconds });
    // The clock may tick a second between the two reads: count again against the answer's `now`.
    const dueAtAnswer = due.filter((t) => t.expires <= r.now).length;
    assert.ok(r.expired >= dueAtAnswer, `${label}: ${r.expired} expired, ${dueAtAnswer} were due`);
    const after = snapshot(acc.sim);
    for (const t of due) if (t.expires <= r.now) assert.match(acc.sim.engine.findTx(t.txID)!.txStatus, /^expired_/, `${label}: ${t.txID} expired`);
    assert.ok(Object.values(after.transfers).filter((t) => t.txStatus === 'expired_transfer').length > 0);
    return r.expired;
  }

  before(async () => {
    acc = await startSimulated('cf-sim-index-');
    await buildHistory();
  });

  after(async () => {
    await stopSimulated(acc);
  });

  it('answers every indexed read as a scan of the state would', async () => {
    await checkReads('first start');
  });

  it('expires through the expiry index exactly the transactions that are due', async () => {
    await advanceAndCheckExpiry(10, 'first start');
    await checkReads('after expiry');
  });

  it('rebuilds the indexes on restart and keeps them up to date afterwards', async () => {
    const { dataDir } = acc;
    acc.client.close();
    await acc.sim.stop();
    const sim = await Simulator.start({ port: 0, dataDir });
    acc = { dataDir, sim, client: accountClient(sim) };
    await checkReads('after restart');
    // More activity on the rebuilt indexes: new transfers (approved, pending), a rejection of an
    // old pending one, a new withdrawal entry, expiry of what was created before the restart.
    const fA1 = world.funds[0];
    const [b0, b1] = fA1.wallets.filter((w) => w.asset === 'BTC-TESTNET');
    await decideAll(await transfer(world.companies[0], b0.id, b1.id, 'BTC-TESTNET', 777, 7200), true);
    await transfer(world.companies[0], b1.id, b0.short_code, 'BTC-TESTNET', 778, 7200);
    const oldPending = Object.values(acc.sim.engine.state.transfers).find((t) => t.txStatus === 'pending_transfer' && t.fund_id === fA1.fund_id);
    assert.ok(oldPending, 'a transfer pending since before the restart');
    await decideAll(oldPending.txID, false);
    await checkReads('after restart and more activity');
    await advanceAndCheckExpiry(7300, 'after restart');
    await checkReads('after restart and expiry of everything', false);
  });
});
