/**
 * Quick check of the simulator's read-path indexes (issue 11, "indexes for every read path"):
 * the p50 of a 10-entry fund ledger page, the history of a wallet whose fund's ledger grows (not
 * its own), the pending-action list of a core client, a core client feed connect (upgrade +
 * catch-up of its pending actions) and a POST transfer, on a simulator with an empty history and on a second one (same process) after N
 * transfers (seeded in-process through the domain functions, each approved by its core client,
 * so the fund ledgers grow by one entry each per transfer and `state.actions` by 1), sampled in
 * alternating rounds. Ratios are within one run. Persistence is off (in memory): the journal is
 * another part of issue 11; this measures the reads only.
 *
 *   node dist/bench/index-check.js                 # N = 100000 (about a minute here)
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
import { atMost, median, type BenchRow, printWhenMain } from './table';

/** Options of {@link run}. */
export interface IndexCheckOptions {
  /** transfers added to the history between the two measurements; default env `INDEX_CHECK_TRANSFERS` or 100000 */
  transfers?: number;
  /** samples per measure and phase; default 200 (feed connects: a quarter of it) */
  samples?: number;
}

type Measure = 'ledger' | 'history' | 'actions' | 'feed' | 'post';

/** One simulator under measurement, with its client and the requests measured on it. */
interface Subject {
  sim: Simulator;
  dataDir: string;
  client: CustodyClient;
  /** one timed sample (ms) of a measure */
  sample: Record<Measure, () => Promise<number>>;
}

/** Time `fn` in milliseconds. */
async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** A fresh in-memory simulator (demo data plus 5 pending actions of the demo's manual core client) and its measured requests. */
async function subject(): Promise<Subject> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-index-check-'));
  const sim = await Simulator.start({ dataDir, port: 0, persist: false });
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
  const key = loadPrivateKey(sim.account.privateKeyPem);
  const d = sim.demo;
  const eng = sim.engine;
  for (let i = 0; i < 5; i++) createTransfer(eng, d.company_id, transferBody(eng, d.manual.wallets['BTC-TESTNET'].wallet_id, d.counterparty.wallets['BTC-TESTNET'].wallet_id));
  await eng.store.commit();
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
  const transferPath = `/company/${d.company_id}/transfer`;
  return {
    sim,
    dataDir,
    client,
    sample: {
      ledger: () => time(() => client.request('GET', ledgerPath)),
      history: () => time(() => client.request('GET', historyPath)),
      actions: () => time(() => client.request('GET', actionsPath)),
      feed: () => time(() => feedConnect(d.manual.core_client_id, 5)),
      post: () => time(() => client.request('POST', transferPath, { body: transferBody(eng, d.wallets['BTC-TESTNET'].wallet_id, d.counterparty.wallets['BTC-TESTNET'].wallet_id) })),
    },
  };
}

let seq = 0;
/** A transfer of 1000 base units of BTC-TESTNET, expiring in a day, with a fresh partner_txID. */
function transferBody(eng: Engine, from: string, to: string) {
  return {
    wallet_id: from,
    counterparty_wallet_address: to,
    expires: eng.now() + 86400,
    benefit_of: 'bench',
    account_no: 'ACC-B',
    reference: 'index check',
    partner_txID: `index-check-${process.pid}-${++seq}`,
    send: { symbol: 'BTC-TESTNET', amount: 1000 },
  };
}

/** Add `n` transfers demo BTC -> counterparty BTC to a simulator's history, each approved by the demo core client (in-process, through the domain functions). */
async function seed(s: Subject, n: number): Promise<void> {
  const eng = s.sim.engine;
  const d = s.sim.demo;
  const from = d.wallets['BTC-TESTNET'].wallet_id;
  const to = d.counterparty.wallets['BTC-TESTNET'].wallet_id;
  for (let i = 0; i < n; i++) {
    if (i % 10000 === 0) faucetDeposit(eng, from, 1_000_000_000);
    const { tx_id } = createTransfer(eng, d.company_id, transferBody(eng, from, to));
    coreClientDecide(eng, d.core_client_id, eng.state.transfers[tx_id].actionIDs[0], true);
    if (i % 1000 === 999) await eng.store.commit(); // let queued events drain
  }
  await eng.store.commit();
}

/**
 * Two simulators in this process, one with an empty history and one seeded with N transfers;
 * every measure is sampled in alternating rounds on both, so a change of the machine's load
 * during the run weighs on both alike.
 * @returns one row per measure: `seeded / empty` p50 ratio, goal <= 2x (issue 11); and the index
 *   rebuild time of the seeded state.
 */
export async function run(opts: IndexCheckOptions = {}): Promise<BenchRow[]> {
  const n = opts.transfers ?? Number(process.env.INDEX_CHECK_TRANSFERS ?? 100000);
  const samples = opts.samples ?? 200;
  const subjects: Subject[] = [];
  try {
    const empty = await subject();
    subjects.push(empty);
    const full = await subject();
    subjects.push(full);
    await seed(full, n);
    const measures: Measure[] = ['ledger', 'history', 'actions', 'feed', 'post'];
    const times = new Map<Subject, Record<Measure, number[]>>(subjects.map((s) => [s, { ledger: [], history: [], actions: [], feed: [], post: [] }]));
    // Warm-up of every path on both (JIT), discarded.
    for (const s of subjects) for (const m of measures) for (let i = 0; i < 10; i++) await s.sample[m]();
    const rounds = 10;
    for (let r = 0; r < rounds; r++) {
      for (const m of measures) {
        const k = Math.ceil((m === 'feed' ? Math.max(10, samples >> 2) : samples) / rounds);
        for (const s of r % 2 === 0 ? subjects : [...subjects].reverse()) for (let i = 0; i < k; i++) times.get(s)![m].push(await s.sample[m]());
      }
    }
    const rebuildMs = await time(async () => new Engine(full.sim.engine.store));
    const f = (x: number) => `${x.toFixed(2)} ms`;
    const row = (label: string, m: Measure) => {
      const a = median(times.get(full)![m]);
      const b = median(times.get(empty)![m]);
      return atMost('simulator-index', `${label} p50, ${n} transfers vs empty`, `${f(a)} vs ${f(b)}`, a / b, 2);
    };
    return [
      row('10-entry ledger page', 'ledger'),
      row("wallet history (its fund's ledger grows)", 'history'),
      row('pending-action list (5 pending)', 'actions'),
      row('feed connect + 5 catch-up', 'feed'),
      row('POST transfer (memory only)', 'post'),
      atMost('simulator-index', `index rebuild on start (Engine constructor), ${n} transfers`, f(rebuildMs), rebuildMs / 1000, 5, ' s'),
    ];
  } finally {
    for (const s of subjects) {
      s.client.close();
      await s.sim.stop();
      fs.rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
}

printWhenMain(module, run);
