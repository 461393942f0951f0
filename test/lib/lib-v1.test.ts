/**
 * The v1 operations added for spec section 4 (withdrawals, swaps, liquidity hub, sweeps, the
 * read-only subset, fund reads and whitelist, core client wallets, the signed request): bad
 * input refused before anything is sent (a counting server), what goes on the wire, which calls
 * are retried, and each operation against the real simulator over real sockets.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Simulator } from '../../simulator';
import { control, demoTransfer } from '../helpers/support';
import { simulatedSuite } from '../helpers/simulated';
import { CountingServer } from '../helpers/counting-server';
import { recordedSwapQuote, recordedWithdrawal, swapQuoteRequest, uniqueId, withdrawalRequest } from '../helpers/requests';
import {
  CustodyClient,
  ApiError,
  ValidationError,
  createTransfer,
  getHoldings,
  getDeposits,
  getLedger,
  getWalletHistory,
  addWhitelist,
  listWhitelist,
  createWithdraw,
  getWithdraw,
  makeSwap,
  getSwapMake,
  cancelSwap,
  takeSwap,
  getSwapTake,
  publishQuote,
  listLiquidityHub,
  approveSwapTake,
  listCoreClientWallets,
  listExchanges,
  startSweep,
  getSweep,
  readAccount,
  readBalance,
  readFunds,
  readFund,
  readFundLedger,
  readTrustedParties,
  readWalletHistory,
  signedRequest,
  prepareSignedRequest,
  listActions,
  getAction,
  approveAction,
  OPERATIONS,
  callOperation,
} from '../../lib';

const now = () => Math.floor(Date.now() / 1000);
let seq = 0;

describe('lib v1 operations (section 4, the rest)', function () {
  this.timeout(60000);

  describe('against a counting server', () => {
    /** Answers `server.status` (503 to see retries). */
    const server = new CountingServer();
    const seen = server.seen;
    let client: CustodyClient;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

    before(async () => {
      await server.start();
      client = new CustodyClient({ baseUrl: server.baseUrl, apiKey: 'dGVzdA==', privateKey: pem, retryDelayMs: 1 });
    });
    beforeEach(() => {
      seen.length = 0;
      server.status = 200;
    });
    after(async () => {
      client.close();
      await server.stop();
    });

    const withdraw = () => recordedWithdrawal();
    const make = () => recordedSwapQuote();
    const take = () => ({ company_id: 'c1', swap_id: 's1', send_wallet_id: 'w3', receive_wallet_id: 'w4', reference: 'r', partner_txID: 't-1' });
    const sweep = () => ({ client_id: 'cc1', wallet_id: 'w1', recipient_wallet_id: 'w2', reference: 'r', partner_txID: 'p-sweep', expires: now() + 600, send: { symbol: 'BTC-TESTNET', amount: 10 } });

    it('refuses bad input naming the field, sending nothing', async () => {
      const cases: Array<[() => Promise<unknown>, RegExp]> = [
        [() => createWithdraw(client, { ...withdraw(), address: '' }), /^address: must not be empty/],
        [() => createWithdraw(client, { ...withdraw(), partner_txID: undefined as unknown as string }), /^partner_txID: required/],
        [() => createWithdraw(client, { ...withdraw(), send: { symbol: 'BTC-TESTNET', amount: 0 } }), /^send\.amount/],
        [() => createWithdraw(client, { ...withdraw(), expires: now() - 10 }), /^expires: must be in the future/],
        [() => getWithdraw(client, { company_id: 'c1', tx_id: '..' }), /^tx_id: must be an id/],
        [() => makeSwap(client, { ...make(), receive: undefined as never }), /^receive: required/],
        [() => makeSwap(client, { ...make(), receive: { symbol: 'ETH-TESTNET', amount: '2' as unknown as number } }), /^receive\.amount: must be integer/],
        [() => makeSwap(client, { ...make(), add_to_liquidity_hub: 'yes' as unknown as boolean }), /^add_to_liquidity_hub: must be boolean/],
        [() => cancelSwap(client, { company_id: 'c1', tx_id: 'a/b' }), /^tx_id: must be an id/],
        [() => takeSwap(client, { ...take(), swap_id: '' }), /^swap_id: must not be empty/],
        [() => takeSwap(client, { ...take(), partner_txID: undefined as unknown as string }), /^partner_txID: required/],
        [() => getSwapTake(client, { company_id: 'c1', tx_id: '' }), /^tx_id: required/],
        [() => publishQuote(client, { company_id: 'c1', tx_id: undefined as unknown as string }), /^tx_id: required/],
        [() => approveSwapTake(client, { company_id: 'c1', action_id: '.' }), /^action_id: must be an id/],
        [() => listLiquidityHub(client, { company_id: '' }), /^company_id: required/],
        [() => listCoreClientWallets(client, { client_id: '' }), /^client_id: required/],
        [() => startSweep(client, { ...sweep(), send: { amount: 10 } as never }), /^send\.symbol: required/],
        [() => startSweep(client, { ...sweep(), recipient_wallet_id: undefined as unknown as string }), /^recipient_wallet_id: required/],
        [() => getSweep(client, { client_id: 'cc1', tx_id: ' ' }), /^tx_id: must not be empty/],
        [() => getLedger(client, { company_id: 'c1', fund_id: 'f1', direction: 'sideways' as never }), /^direction: must be one of "all", "in", "out"/],
        [() => getLedger(client, { company_id: 'c1', fund_id: 'f1', asset: 'btc' }), /^asset: must match/],
        [() => addWhitelist(client, { company_id: 'c1', fund_id: 'f1', name: 'n', asset: 'BTC-TESTNET', address: undefined as unknown as string }), /^address: required/],
        [() => getWalletHistory(client, { wallet_id: '' }), /^wallet_id: required/],
        [() => readFund(client, { fund_id: '..' }), /^fund_id: must be an id/],
        [() => readFundLedger(client, { fund_id: 'f1', direction: 'up' as never }), /^direction: must be one of/],
        [() => readWalletHistory(client, { wallet_id: '' }), /^wallet_id: required/],
      ];
      for (const [call, expected] of cases) {
        await assert.rejects(call, (e: unknown) => e instanceof ValidationError && e.code === 'EINPUT' && expected.test(e.message), String(expected));
      }
      assert.equal(seen.length, 0, 'nothing was sent');
    });

    it('sends what the spec names, on the spec paths', async () => {
      await createWithdraw(client, { ...withdraw(), note: 'not sent' } as never);
      await makeSwap(client, { ...make(), add_to_liquidity_hub: true });
      await takeSwap(client, take());
      await publishQuote(client, { company_id: 'c1', tx_id: 'q1' });
      await approveSwapTake(client, { company_id: 'c1', action_id: 'a1' });
      await cancelSwap(client, { company_id: 'c1', tx_id: 'q1' });
      await startSweep(client, sweep());
      await getSweep(client, { client_id: 'cc1', tx_id: 'sw1' });
      await getLedger(client, { company_id: 'c1', fund_id: 'f1', asset: 'BTC-TESTNET', direction: 'in' });
      await readFundLedger(client, { fund_id: 'f1', wallet_id: 'w1' });
      await readFunds(client);
      await listExchanges(client);
      await addWhitelist(client, { company_id: 'c1', fund_id: 'f1', name: 'cold', asset: 'BTC-TESTNET', address: 'addr1' });
      assert.deepEqual(
        seen.map((s) => `${s.method} ${s.url}`),
        [
          // The client's one GET /assets: the asset codes are checked before the first call that has one.
          'GET /api/v1/p/assets',
          'POST /api/v1/p/company/c1/withdraw',
          'POST /api/v1/p/company/c1/atomicswap/make',
          'POST /api/v1/p/company/c1/atomicswap/take',
          'POST /api/v1/p/company/c1/liquidityhub',
          'PUT /api/v1/p/company/c1/action/a1',
          'DELETE /api/v1/p/company/c1/atomicswap/make/q1',
          'POST /api/v1/p/coreclient/cc1/sweep',
          'POST /api/v1/p/coreclient/cc1/sweep/tx_id',
          'GET /api/v1/p/company/c1/fund/f1/ledger?asset=BTC-TESTNET&direction=in',
          'GET /api/v1/p/funds/f1/ledger?wallet_id=w1',
          'GET /api/v1/p/funds/',
          'GET /api/v1/p/exchanges',
          'POST /api/v1/p/company/c1/fund/f1/whitelist',
        ],
      );
      const body = (i: number) => JSON.parse(server.sent()[i].body);
      assert.deepEqual(Object.keys(body(0)).sort(), ['account_no', 'address', 'benefit_of', 'expires', 'partner_txID', 'reference', 'send', 'wallet_id']);
      assert.equal(body(1).add_to_liquidity_hub, true);
      assert.deepEqual(body(1).receive, { symbol: 'ETH-TESTNET', amount: 2000 });
      assert.deepEqual(body(2), { swap_id: 's1', send_wallet_id: 'w3', receive_wallet_id: 'w4', reference: 'r', partner_txID: 't-1' });
      assert.deepEqual(body(3), { tx_id: 'q1' });
      assert.equal(server.sent()[4].body, '', 'approve take sends no body');
      assert.deepEqual(body(7), { tx_id: 'sw1' }, 'sweep status: the tx_id in the body');
      assert.deepEqual(body(12), { name: 'cold', asset: 'BTC-TESTNET', address: 'addr1' });
    });

    it('never retries a money-moving call whose idempotency the spec does not promise: withdraw, swap make and take, sweep start, cancel, approve take, publish', async () => {
      server.status = 503;
      // The spec promises "existing, no new transaction" for a repeated partner_txID on POST transfer only (section 3).
      for (const call of [() => createWithdraw(client, withdraw()), () => makeSwap(client, make()), () => takeSwap(client, take()), () => startSweep(client, sweep()), () => cancelSwap(client, { company_id: 'c1', tx_id: 'q1' }), () => approveSwapTake(client, { company_id: 'c1', action_id: 'a1' }), () => publishQuote(client, { company_id: 'c1', tx_id: 'q1' })]) {
        seen.length = 0;
        await assert.rejects(call, (e: unknown) => e instanceof ApiError && e.statusCode === 503);
        assert.equal(seen.length, 1, 'sent once');
      }
    });

    it('signed request: refuses paths that leave the base URL, bad methods and bodies, sending nothing', async () => {
      const bad: Array<[Parameters<typeof signedRequest>[1], RegExp]> = [
        [{ method: 'GET', path: 'https://evil.example/api/v1/p/assets' }, /^path: must be relative to the base URL/],
        [{ method: 'GET', path: '//evil.example/assets' }, /^path: must be relative/],
        [{ method: 'GET', path: 'assets' }, /^path: must start with "\/"/],
        [{ method: 'GET', path: '/../admin' }, /^path: must not have "\." or "\.\." segments/],
        [{ method: 'GET', path: '/company/../../x' }, /^path: must not have "\." or "\.\." segments/],
        [{ method: 'GET', path: '/company/%2e%2e/x' }, /^path: must not hide/],
        [{ method: 'GET', path: '/company/%2E%2E%2Fx' }, /^path: must not hide/],
        [{ method: 'GET', path: '/a//b' }, /^path: must not have empty segments/],
        [{ method: 'GET', path: '/a b' }, /^path: must be URL-encoded/],
        [{ method: 'GET', path: '/a#b' }, /^path: must be URL-encoded/],
        [{ method: 'GET', path: '/a\\..\\b' }, /^path: must be URL-encoded/],
        [{ method: 'GET', path: '/a%zz' }, /^path: has a "%"/],
        [{ method: 'GET', path: '' }, /^path: required/],
        [{ method: 'PATCH', path: '/assets' }, /^method: must be one of GET, POST, PUT, DELETE/],
        [{ method: '', path: '/assets' }, /^method: required/],
        [{ method: 'GET', path: '/assets', body: { a: 1 } }, /^payload: GET sends no body/],
        [{ method: 'POST', path: '/company', body: 'name=x' }, /^payload: the POST body must be a JSON object or array/],
      ];
      for (const [req, expected] of bad) {
        await assert.rejects(() => signedRequest(client, req), (e: unknown) => e instanceof ValidationError && expected.test(e.message), `${JSON.stringify(req)} ${expected}`);
      }
      assert.equal(seen.length, 0, 'nothing was sent');
      // Resolution against a base URL: the path must stay below its path.
      assert.deepEqual(prepareSignedRequest({ method: 'get', path: '/x?y=1' }, 'http://127.0.0.1:1/api/v1/p'), { method: 'GET', path: '/x?y=1', body: undefined });
      assert.deepEqual(prepareSignedRequest({ method: 'PUT', path: '/coreclient/a/action/b' }), { method: 'PUT', path: '/coreclient/a/action/b', body: undefined }, 'no body given: none sent');
    });

    it('signed request: sends the path with its query string and the body; retries only GET', async () => {
      const got = await signedRequest(client, { method: 'get', path: '/company/c1/fund/f1/ledger?direction=in&asset=BTC-TESTNET' });
      assert.equal(got.statusCode, 200);
      await signedRequest(client, { method: 'POST', path: '/company', body: { name: 'X' } });
      await signedRequest(client, { method: 'PUT', path: '/coreclient/cc1/action/a1' });
      assert.deepEqual(seen.map((s) => `${s.method} ${s.url} ${s.body}`), [
        'GET /api/v1/p/company/c1/fund/f1/ledger?direction=in&asset=BTC-TESTNET ',
        'POST /api/v1/p/company {"name":"X"}',
        'PUT /api/v1/p/coreclient/cc1/action/a1 ',
      ]);
      server.status = 503;
      for (const [method, attempts] of [['GET', 3], ['POST', 1], ['PUT', 1], ['DELETE', 1]] as const) {
        seen.length = 0;
        await assert.rejects(() => signedRequest(client, { method, path: '/x' }), (e: unknown) => e instanceof ApiError && e.statusCode === 503);
        assert.equal(seen.length, attempts, `${method}: ${attempts} attempt(s)`);
      }
    });
  });

  describe('against the simulator', () => {
    let sim: Simulator;
    let client: CustodyClient;
    simulatedSuite('cf-v1-', {}, (s) => ({ sim, client } = s));

    it('reads holdings, deposit addresses and the filtered ledger of a fund', async () => {
      const { company_id, fund_id } = sim.demo;
      const btc = sim.demo.wallets['BTC-TESTNET'];
      const holdings = await getHoldings(client, { company_id });
      assert.equal(holdings.data.total_count, holdings.data.holdings.length);
      assert.ok(holdings.data.holdings.some((h) => h.code === 'BTC-TESTNET' && h.amount > 0));
      const deposits = await getDeposits(client, { company_id, fund_id });
      assert.ok(deposits.data.list.some((d) => d.asset === 'BTC-TESTNET' && typeof d.address === 'string' && d.address.length > 0));
      const out = await getLedger(client, { company_id, fund_id, direction: 'out', wallet_id: btc.wallet_id });
      const inbound = await getLedger(client, { company_id, fund_id, direction: 'in' });
      const all = await getLedger(client, { company_id, fund_id });
      assert.ok(out.data.List.every((e) => e.type === 'transferOut'));
      assert.ok(inbound.data.List.every((e) => e.type !== 'transferOut'));
      const allOut = await getLedger(client, { company_id, fund_id, direction: 'out' });
      assert.ok(inbound.data.List.some((e) => e.type === 'deposit'), 'the demo deposits are in');
      assert.equal(all.data.List.length, allOut.data.List.length + inbound.data.List.length, 'in and out make all');
      assert.ok(out.data.List.every((e) => allOut.data.List.some((o) => o.TxID === e.TxID)), 'the wallet filter narrows');
      const eth = await getLedger(client, { company_id, fund_id, asset: 'ETH-TESTNET' });
      assert.ok(eth.data.List.every((e) => e.asset === 'ETH-TESTNET'));
      await assert.rejects(() => getLedger(client, { company_id, fund_id: 'no-such-fund' }), (e: unknown) => e instanceof ApiError && e.statusCode === 404);
    });

    it('wallet history, all of it and since a time; also by the read-only path', async () => {
      const wallet_id = sim.demo.wallets['BTC-TESTNET'].wallet_id;
      const all = await getWalletHistory(client, { wallet_id });
      assert.ok(all.data.history.length > 0, 'the demo deposit at least');
      assert.ok(all.data.history.every((h) => h.wallet_id === wallet_id && h.asset === 'BTC-TESTNET'));
      const newest = Math.max(...all.data.history.map((h) => h.timestamp));
      const later = await getWalletHistory(client, { wallet_id, since: newest });
      assert.equal(later.data.history.length, 0, 'nothing after the newest item');
      assert.deepEqual((await readWalletHistory(client, { wallet_id })).data, all.data);
      await assert.rejects(() => getWalletHistory(client, { wallet_id, since: -1 }), (e: unknown) => e instanceof ValidationError && /^since: must be >= 0/.test(e.message));
    });

    it('whitelists an address, lists it, withdraws to it idempotently and reads the withdrawal', async () => {
      const { company_id, fund_id } = sim.demo;
      const address = 'tb1qexamplewhitelistedaddress' + (++seq);
      await addWhitelist(client, { company_id, fund_id, name: 'cold storage', asset: 'BTC-TESTNET', address });
      const list = await listWhitelist(client, { company_id, fund_id });
      assert.ok(list.data.list.some((w) => w.address === address && w.asset === 'BTC-TESTNET'));
      const request = withdrawalRequest(sim.demo, { address, expires: now() + 600, benefit_of: 'b', account_no: 'a', reference: 'lib v1 withdraw', partner_txID: uniqueId('wd'), send: { symbol: 'BTC-TESTNET', amount: 10000 } });
      const first = await createWithdraw(client, request);
      assert.equal(first.data.status, 'new');
      const again = await createWithdraw(client, request);
      assert.equal(again.data.tx_id, first.data.tx_id, 'the same partner_txID answers the original withdrawal');
      assert.equal(again.data.status, 'existing');
      const tx = await getWithdraw(client, { company_id, tx_id: first.data.tx_id });
      assert.match(tx.data.txStatus, /withdrawal$|^pending$/);
      await assert.rejects(
        () => createWithdraw(client, { ...request, address: 'tb1qnotwhitelisted', partner_txID: uniqueId('wd') }),
        (e: unknown) => e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500,
        'an address that is not whitelisted is refused',
      );
    });

    it('makes a swap quote (decimal-free), reads it, cancels another; lists the hub', async () => {
      const { company_id } = sim.demo;
      const quote = () => swapQuoteRequest(sim.demo, { expires: now() + 600, reference: 'lib v1 swap', partner_txID: uniqueId('mk') });
      const q = quote();
      const made = await makeSwap(client, q);
      assert.equal(made.data.status, 'new');
      assert.ok(made.data.tx_id);
      assert.equal((await makeSwap(client, q)).data.tx_id, made.data.tx_id, 'the same partner_txID makes no second quote');
      const read = await getSwapMake(client, { company_id, tx_id: made.data.tx_id });
      assert.equal(read.statusCode, 200);
      const other = await makeSwap(client, quote());
      const cancelled = await cancelSwap(client, { company_id, tx_id: other.data.tx_id });
      assert.ok(cancelled.statusCode >= 200 && cancelled.statusCode < 300);
      const hub = await listLiquidityHub(client, { company_id });
      assert.ok(Array.isArray(hub.data.items));
      await assert.rejects(() => takeSwap(client, { company_id, swap_id: 'no-such-swap', send_wallet_id: sim.demo.counterparty.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id, reference: 'r', partner_txID: uniqueId('tk') }), (e: unknown) => e instanceof ApiError && e.statusCode >= 400);
      await assert.rejects(() => getSwapTake(client, { company_id, tx_id: 'no-such-take' }), (e: unknown) => e instanceof ApiError && e.statusCode === 404);
      await assert.rejects(() => publishQuote(client, { company_id, tx_id: 'no-such-quote' }), (e: unknown) => e instanceof ApiError && e.statusCode >= 400);
      await assert.rejects(() => approveSwapTake(client, { company_id, action_id: 'no-such-action' }), (e: unknown) => e instanceof ApiError && e.statusCode === 404);
    });

    it('lists exchanges, the wallets of a core client, and refuses a sweep status for an unknown sweep', async () => {
      const ex = await listExchanges(client);
      assert.ok(Array.isArray(ex.data.exchanges));
      const wallets = await listCoreClientWallets(client, { client_id: sim.demo.core_client_id });
      assert.ok(Array.isArray(wallets.data.wallets));
      await assert.rejects(() => getSweep(client, { client_id: sim.demo.core_client_id, tx_id: 'no-such-sweep' }), (e: unknown) => e instanceof ApiError && e.statusCode === 404);
    });

    it('the read-only subset, with the read-only key', async () => {
      const ro = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.readOnlyApiKey, privateKey: sim.account.privateKeyPem });
      try {
        assert.equal((await readAccount(ro)).statusCode, 200);
        assert.equal((await readBalance(ro)).statusCode, 200);
        assert.equal((await readFunds(ro)).statusCode, 200);
        assert.equal((await readFund(ro, { fund_id: sim.demo.fund_id })).statusCode, 200);
        const ledger = await readFundLedger(ro, { fund_id: sim.demo.fund_id, direction: 'in' });
        assert.ok(Array.isArray(ledger.data.List));
        assert.ok(ledger.data.List.every((e) => e.type !== 'transferOut'));
        assert.ok((await readTrustedParties(ro)).statusCode < 500);
        assert.equal((await readWalletHistory(ro, { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id })).statusCode, 200);
        await assert.rejects(() => createTransfer(ro, demoTransfer(sim)), (e: unknown) => e instanceof ApiError && e.statusCode === 403, 'the read-only key cannot move money');
      } finally {
        ro.close();
      }
    });

    /** Approve, as core client `clientId`, its pending action on transaction `txId`. @returns the action. */
    async function approveAsCoreClient(clientId: string, txId: string, type: string) {
      const pending = (await listActions(client, { client_id: clientId })).data.actions.filter((a) => a.type === type);
      for (const a of pending) {
        const detail = await getAction(client, { client_id: clientId, action_id: a.id });
        if (detail.data.details?.txID === txId) {
          await approveAction(client, { client_id: clientId, action_id: a.id });
          return detail.data;
        }
      }
      throw new Error(`no pending ${type} action of ${clientId} for ${txId}`);
    }

    it('flow: withdrawal to the demo whitelisted address, approved by the core client', async () => {
      const demo = sim.demo;
      const { company_id } = sim.demo;
      const created = await createWithdraw(client, {
        company_id,
        wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id,
        address: demo.whitelist['BTC-TESTNET'],
        expires: now() + 600,
        benefit_of: 'b',
        account_no: 'a',
        reference: 'lib v1 flow',
        partner_txID: uniqueId('wdf'),
        send: { symbol: 'BTC-TESTNET', amount: 25000 },
      });
      assert.equal((await getWithdraw(client, { company_id, tx_id: created.data.tx_id })).data.txStatus, 'pending_withdrawal');
      await approveAsCoreClient(sim.demo.core_client_id, created.data.tx_id, 'ApproveWithdraw');
      const tx = await getWithdraw(client, { company_id, tx_id: created.data.tx_id });
      assert.equal(tx.data.txStatus, 'approved_withdrawal');
      assert.equal(tx.data.statusDetails.recipientAddress, demo.whitelist['BTC-TESTNET']);
      const ledger = await getLedger(client, { company_id, fund_id: sim.demo.fund_id, direction: 'out' });
      assert.ok(ledger.data.List.some((e) => e.TxID === created.data.tx_id));
    });

    it('flow: swap quote approved and published, taken by another company, approved on both sides', async () => {
      const demo = sim.demo;
      const maker = sim.demo.company_id;
      const taker = demo.taker.company_id;
      const made = await makeSwap(
        client,
        swapQuoteRequest(demo, { company_id: maker, expires: now() + 600, reference: 'lib v1 swap flow', partner_txID: uniqueId('swf'), send: { symbol: 'BTC-TESTNET', amount: 50000 }, receive: { symbol: 'ETH-TESTNET', amount: 7000000 } }),
      );
      await assert.rejects(() => publishQuote(client, { company_id: maker, tx_id: made.data.tx_id }), (e: unknown) => e instanceof ApiError && e.statusCode === 409, 'not before approval');
      await approveAsCoreClient(sim.demo.core_client_id, made.data.tx_id, 'ApproveSwap');
      await publishQuote(client, { company_id: maker, tx_id: made.data.tx_id });
      const seenByTaker = (await listLiquidityHub(client, { company_id: taker })).data.items.find((i) => i.tx_id === made.data.tx_id);
      assert.ok(seenByTaker, 'the taker sees the quote');
      assert.deepEqual([seenByTaker.send_asset, seenByTaker.send_amount, seenByTaker.receive_asset, seenByTaker.receive_amount, seenByTaker.owner], ['BTC-TESTNET', 50000, 'ETH-TESTNET', 7000000, false]);
      const take = { company_id: taker, swap_id: made.data.tx_id, send_wallet_id: demo.taker.wallets['ETH-TESTNET'].wallet_id, receive_wallet_id: demo.taker.wallets['BTC-TESTNET'].wallet_id, reference: 'take', partner_txID: uniqueId('tkf') };
      const taken = await takeSwap(client, take);
      assert.equal((await takeSwap(client, take)).data.tx_id, taken.data.tx_id, 'the same partner_txID takes once');
      const actionId = taken.data.action_id;
      assert.ok(actionId, 'the take names its company-level action');
      await approveSwapTake(client, { company_id: taker, action_id: actionId! });
      await approveAsCoreClient(demo.taker.core_client_id, taken.data.tx_id, 'ApproveSwapTake');
      const takeTx = await getSwapTake(client, { company_id: taker, tx_id: taken.data.tx_id });
      assert.equal((takeTx.data as { txStatus?: string }).txStatus, 'approved_swap_take');
    });

    it('flow: a wallet connection request approved by the exchange core client, then a sweep and its status', async () => {
      const demo = sim.demo;
      const clientId = demo.exchange.client_id;
      const walletId = demo.exchange.wallets['BTC-TESTNET'].wallet_id;
      const request = await control(sim, '/exchange/connect-request', { client_id: clientId, wallet_id: walletId, customer_email: 'eve@exchange.example', customer_id: 'cust-1' });
      const action = await getAction(client, { client_id: clientId, action_id: request.action_id });
      assert.equal(action.data.type, 'ApproveNewWalletConnect');
      await approveAction(client, { client_id: clientId, action_id: request.action_id });
      const wallets = await listCoreClientWallets(client, { client_id: clientId });
      assert.ok(wallets.data.wallets.some((w) => w.wallet_id === walletId && w.status === 'approved'));
      const swept = await startSweep(client, { client_id: clientId, wallet_id: walletId, recipient_wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, reference: 'sweep', partner_txID: `sweep-${Date.now()}`, expires: now() + 600, send: { symbol: 'BTC-TESTNET', amount: 1000 } });
      const status = await getSweep(client, { client_id: clientId, tx_id: swept.data.tx_id });
      assert.equal(status.data.tx_id, swept.data.tx_id);
      assert.equal(status.data.status_details.net_amount, 1000);
      assert.match(status.data.tx_status, /sweep/);
    });

    it('signed request: a GET, a POST and an API error, signed as every call', async () => {
      const assets = await signedRequest<{ assets: Array<{ code: string }> }>(client, { method: 'GET', path: '/assets' });
      assert.ok(assets.data.assets.some((a) => a.code === 'BTC-TESTNET'));
      const created = await signedRequest<{ company_id: string }>(client, { method: 'POST', path: '/company', body: { name: 'Request Node Ltd' } });
      assert.ok(created.data.company_id);
      const ledger = await signedRequest<{ List: unknown[] }>(client, { method: 'GET', path: `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/ledger?direction=in` });
      assert.ok(Array.isArray(ledger.data.List));
      await assert.rejects(() => signedRequest(client, { method: 'GET', path: `/company/${created.data.company_id}/transfer/nope` }), (e: unknown) => e instanceof ApiError && e.statusCode === 404);
      // the same operation through the declaration and through the escape hatch answer the same
      const viaOp = await callOperation(client, OPERATIONS.getHoldings.spec, { company_id: sim.demo.company_id });
      const viaRequest = await signedRequest(client, { method: 'GET', path: `/company/${sim.demo.company_id}/holding` });
      assert.deepEqual(viaRequest.data, viaOp.data);
      void control;
    });
  });
});
