/**
 * Simulator persistence whose cost per change is constant: the journal's cost at scale, measured
 * in one run in this process (simulator/store.ts, simulator/journal.ts).
 *
 * - (after a warm-up round at the empty state, not counted)
 * - group commit of 1 transfer (domain call + journal line + fdatasync), p50 at an empty state
 *   vs at `transfers` transfers (seeded in process through simulator/transactions.ts
 *   `createTransfer`, committed 1,000 at a time, so compactions happen as in a long run);
 * - signed POST transfer over HTTP (lib's CustodyClient, one at a time), p50 empty vs seeded
 *   (also depends on the read paths' indexes, simulator/indexes.ts);
 * - restart of a folder left as a crash leaves it (snapshot + journal tail) and of a folder
 *   after a clean stop (snapshot only): Simulator.start until listening;
 * - snapshot size, the time of `JSON.stringify` of the state (the event loop block of a
 *   compaction) and of a stop (full snapshot: stringify + write + fsync + rename).
 *
 * Options / environment: `transfers` (`BENCH_JOURNAL_TRANSFERS`, default 100000), `samples`
 * (`BENCH_JOURNAL_SAMPLES`, default 60). Quick check: `BENCH_JOURNAL_TRANSFERS=5000 node
 * dist/bench/journal-scale.js`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Simulator } from '../simulator';
import { createTransfer } from '../simulator/transactions';
import { CustodyClient } from '../lib';
import { atMost, median, percentile, type BenchRow, printWhenMain } from './table';

/** Options of {@link run}. */
export interface JournalBenchOptions {
  /** transfers seeded before the second measurement; default 100000 */
  transfers?: number;
  /** samples per measurement; default 60 */
  samples?: number;
}

const ms = (x: number): string => `${x.toFixed(2)} ms`;

/**
 * Run the benchmark (see the module comment).
 * @returns rows of group `journal`.
 */
export async function run(opts: JournalBenchOptions = {}): Promise<BenchRow[]> {
  const total = opts.transfers ?? (Number(process.env.BENCH_JOURNAL_TRANSFERS) || 100000);
  const samples = opts.samples ?? (Number(process.env.BENCH_JOURNAL_SAMPLES) || 60);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-journal-'));
  const dataDir = path.join(root, 'sim');
  const rows: BenchRow[] = [];
  let seq = 0;
  try {
    const sim = await Simulator.start({ dataDir, port: 0 });
    const eng = sim.engine;
    const d = sim.demo;
    const input = () => ({
      wallet_id: d.wallets['BTC-TESTNET'].wallet_id,
      counterparty_wallet_address: d.counterparty.wallets['BTC-TESTNET'].wallet_id,
      expires: Math.floor(Date.now() / 1000) + 30 * 86400,
      benefit_of: 'bench',
      account_no: 'ACC-B',
      reference: 'journal bench',
      partner_txID: `bench-${++seq}`,
      send: { symbol: 'BTC-TESTNET', amount: 1 },
    });
    const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
    const measure = async (): Promise<{ commit: number[]; post: number[] }> => {
      const commit: number[] = [];
      const post: number[] = [];
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        createTransfer(eng, d.company_id, input());
        await eng.store.commit();
        commit.push(performance.now() - t0);
      }
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        await client.request('POST', `/company/${d.company_id}/transfer`, { body: input() });
        post.push(performance.now() - t0);
      }
      return { commit, post };
    };
    await measure(); // warm-up (JIT, sockets, first journal open): not counted
    const empty = await measure();

    const seedStart = performance.now();
    while (seq < total) {
      for (let i = 0; i < 1000 && seq < total; i++) createTransfer(eng, d.company_id, input());
      await eng.store.commit();
    }
    const seedMs = performance.now() - seedStart;
    const full = await measure();
    client.close();

    // A folder as a crash leaves it: the files as they are now, while running.
    const crashDir = path.join(root, 'crash');
    fs.mkdirSync(crashDir, { mode: 0o700 });
    for (const f of fs.readdirSync(dataDir)) if (!f.endsWith('.tmp')) fs.copyFileSync(path.join(dataDir, f), path.join(crashDir, f));
    const journalBytes = fs.existsSync(path.join(crashDir, 'journal.jsonl')) ? fs.statSync(path.join(crashDir, 'journal.jsonl')).size : 0;

    let t0 = performance.now();
    const text = JSON.stringify(eng.store.raw);
    const stringifyMs = performance.now() - t0;
    const snapshotMB = Buffer.byteLength(text) / 1e6;
    t0 = performance.now();
    await sim.stop();
    const stopMs = performance.now() - t0;

    t0 = performance.now();
    const fromCrash = await Simulator.start({ dataDir: crashDir, port: 0 });
    const crashRestartMs = performance.now() - t0;
    const count = Object.keys(fromCrash.engine.state.transfers).length;
    await fromCrash.stop();
    t0 = performance.now();
    const clean = await Simulator.start({ dataDir, port: 0 });
    const cleanRestartMs = performance.now() - t0;
    await clean.stop();

    const k = `${Math.round(total / 1000)}k`;
    rows.push(atMost('journal', `group commit of 1 transfer p50, ${k} vs empty`, `${ms(median(full.commit))} vs ${ms(median(empty.commit))}`, median(full.commit) / median(empty.commit), 2));
    rows.push(atMost('journal', `group commit of 1 transfer p99, ${k} vs empty`, `${ms(percentile(full.commit, 99))} vs ${ms(percentile(empty.commit, 99))}`, percentile(full.commit, 99) / percentile(empty.commit, 99), 2));
    rows.push(atMost('journal', `POST transfer p50 (HTTP, one at a time), ${k} vs empty`, `${ms(median(full.post))} vs ${ms(median(empty.post))}`, median(full.post) / median(empty.post), 2));
    rows.push(atMost('journal', `restart after a crash at ${k} (snapshot + ${(journalBytes / 1e6).toFixed(1)} MB journal, ${count} transfers)`, `${(crashRestartMs / 1000).toFixed(2)} s`, crashRestartMs / 1000, 5, ' s'));
    rows.push(atMost('journal', `restart after a clean stop at ${k}`, `${(cleanRestartMs / 1000).toFixed(2)} s`, cleanRestartMs / 1000, 5, ' s'));
    rows.push({ group: 'journal', measure: `snapshot at ${k}: size; stringify (compaction's event loop block); stop (full snapshot)`, figures: `${snapshotMB.toFixed(1)} MB; ${ms(stringifyMs)}; ${ms(stopMs)}`, value: stringifyMs, goal: 'info', pass: true });
    rows.push({ group: 'journal', measure: `seeding ${k} transfers in process, 1,000 per commit`, figures: `${(seedMs / 1000).toFixed(1)} s`, value: seedMs / 1000, goal: 'info', pass: true });
    return rows;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

printWhenMain(module, run);
