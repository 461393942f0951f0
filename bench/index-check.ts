/**
 * Quick check of the simulator's read-path indexes (issue 11, "indexes for every read path"):
 * the p50 of a 10-entry fund ledger page, the history of a wallet whose fund's ledger grows (not
 * its own), the pending-action list of a core
 * client, a core client feed connect (upgrade + catch-up of its pending actions) and a POST
 * transfer, on a simulator with an empty history, then on the same simulator after N more
 * transfers (seeded in-process through the domain functions, each approved by its core client,
 * so the fund ledger grows by 2 entries per transfer and `state.actions` by 1). Ratios are
 * within one run. Persistence is off (in memory): the journal is another part of issue 11; this
 * measures the reads only.
 *
 *   node dist/bench/index-check.js                 # N = 100000 (about 40 s here)
 *   INDEX_CHECK_TRANSFERS=2000 node dist/bench/index-check.js   # a quick run
 *
 * The pending list and the feed catch-up carry the same 5 actions (of the demo's manual core
 * client) before and after, so the answer sizes do not change; only the history does. One more
 * row times the index rebuild a restart does (a second `Engine` built on the seeded state): a
 * part of issue 11's restart budget of 5 s.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { Simulator } from '../simulator';
import { Engine } from '../simulator/engine';
import { createTransfer, coreClientDecide } from '../simulator/transactions';
import { faucetDeposit } from '../simulator/network';
import { CustodyClient, sign } from '../lib';
import { loadPrivateKey } from '../lib/signing';
import { atMost, formatTable, median, type BenchRow } from './table';

/** Options of {@link run}. */
export interface IndexCheckOptions {
  /** transfers added to the history between the two measurements; default env `INDEX_CHECK_TRANSFERS` or 100000 */
  transfers?: number;
  /** samples per measure and phase; default 200 (feed connects: a quarter of it) */
  samples?: number;
}

interface Phase {
  ledger: number;
  history: number;
  actions: number;
  feed: number;
  post: number;
}

/**
 * Measure, seed, measure again.
 * @returns one row per measure: `after N / empty` p50 ratio, goal <= 2x (issue 11).
 */
export async function run(opts: IndexCheckOptions = {}): Promise<BenchRow[]> {
  const n = opts.transfers ?? Number(process.env.INDEX_CHECK_TRANSFERS ?? 100000);
  const samples = opts.samples ?? 200;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-index-check-'));
  const sim = await Simulator.start({ dataDir, port: 0, persist: false });
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
  const key = loadPrivateKey(sim.account.privateKeyPem);
  const d = sim.demo;
  const eng = sim.engine;
  let seq = 0;
  const transferBody = (from: string, to: string) => ({
    wallet_id: from,
    counterparty_wallet_address: to,
    expires: eng.now() + 86400,
    benefit_of: 'bench',
    account_no: 'ACC-B',
    reference: 'index check',
    partner_txID: `index-check-${process.pid}-${++seq}`,
    send: { symbol: 'BTC-TESTNET', amount: 1000 },
  });
  try {
    // 5 pending actions of the manual core client, the same before and after.
    for (let i = 0; i < 5; i++) createTransfer(eng, d.company_id, transferBody(d.manual.wallets['BTC-TESTNET'].wallet_id, d.counterparty.wallets['BTC-TESTNET'].wallet_id));
    await eng.store.commit();

    const time = async (fn: () => Promise<unknown>): Promise<number> => {
      const t0 = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const feedConnect = (clientId: string, expect: number) =>
      new Promise<void>((resolve, reject) => {
        const url = sim.baseUrl.replace(/^http/, 'ws') + `/coreclient/${clientId}/feed`;
        const ts = String(Math.floor(Date.now() / 1000));
        const ws = new WebSocket(url, { headers: { 'x-api-key': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(key, { prefix: ts, url }) } });
        let got = 0;
        ws.on('message', () => {
          if (++got === expect) {
            ws.terminate();
            resolve();
          }
        });
        ws.on('error', reject);
        ws.on('unexpected-response', (_q, res) => reject(new Error(`feed refused ${res.statusCode}`)));
      });
    const ledgerPath = `/company/${d.company_id}/fund/${d.fund_id}/ledger?limit=10`;
    const historyPath = `/wallet/${d.counterparty.wallets['ETH-TESTNET'].wallet_id}/history`;
    const actionsPath = `/coreclient/${d.manual.core_client_id}/actions`;

    const measure = async (): Promise<Phase> => {
      const m = async (k: number, fn: () => Promise<unknown>) => {
        for (let i = 0; i < 5; i++) await fn(); // warm-up
        const xs: number[] = [];
        for (let i = 0; i < k; i++) xs.push(await time(fn));
        return median(xs);
      };
      const ledger = await m(samples, () => client.request('GET', ledgerPath));
      const history = await m(samples, () => client.request('GET', historyPath));
      const actions = await m(samples, () => client.request('GET', actionsPath));
      const feed = await m(Math.max(10, samples >> 2), () => feedConnect(d.manual.core_client_id, 5));
      const post = await m(samples, () => client.request('POST', `/company/${d.company_id}/transfer`, { body: transferBody(d.wallets['BTC-TESTNET'].wallet_id, d.counterparty.wallets['BTC-TESTNET'].wallet_id) }));
      return { ledger, history, actions, feed, post };
    };

    await measure(); // warm-up of every path (JIT), discarded
    const empty = await measure();
    // Seed: N transfers demo BTC -> counterparty BTC, each approved by the demo core client (in-process).
    const from = d.wallets['BTC-TESTNET'].wallet_id;
    const to = d.counterparty.wallets['BTC-TESTNET'].wallet_id;
    for (let i = 0; i < n; i++) {
      if (i % 10000 === 0) faucetDeposit(eng, from, 1_000_000_000);
      const { tx_id } = createTransfer(eng, d.company_id, transferBody(from, to));
      coreClientDecide(eng, d.core_client_id, eng.state.transfers[tx_id].actionIDs[0], true);
      if (i % 1000 === 999) await eng.store.commit(); // let queued events drain
    }
    await eng.store.commit();
    const full = await measure();
    const rebuildMs = await time(async () => new Engine(eng.store));
    const f = (x: number) => `${x.toFixed(2)} ms`;
    const row = (measure: string, k: keyof Phase) => atMost('simulator-index', `${measure} p50, ${n} transfers vs empty`, `${f(full[k])} vs ${f(empty[k])}`, full[k] / empty[k], 2);
    return [
      row('10-entry ledger page', 'ledger'),
      row("wallet history (its fund's ledger grows)", 'history'),
      row('pending-action list (5 pending)', 'actions'),
      row('feed connect + 5 catch-up', 'feed'),
      row('POST transfer (memory only)', 'post'),
      atMost('simulator-index', `index rebuild on start (Engine constructor), ${n} transfers`, f(rebuildMs), rebuildMs / 1000, 5, ' s'),
    ];
  } finally {
    client.close();
    await sim.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run().then(
    (rows) => {
      console.log(formatTable(rows));
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
