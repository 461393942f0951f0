/**
 * The simulator in a process of its own for the benchmark, so the client side and the server
 * side do not share one event loop. Sends `{baseUrl, controlUrl, apiKey, privateKeyPem, demo}`
 * to the parent over IPC once listening; stops on `stop` or when the parent goes away. Answers
 * `{census: id, prefix}` with `{census: id, transfers, withdrawals}`: the `{txID, partner_txID,
 * txStatus, actionIDs}` of every transfer and withdrawal whose partner_txID starts with `prefix`
 * (the fault benchmark counts duplicates with it; the soak bench reads the final statuses).
 *
 *   simulator-process <dataDir> [persist] [--dedupe=all|transfers]
 *
 * `persist` keeps the simulator's persistence on (state.json, group commit); without it the
 * state stays in memory. `--dedupe` is `SimulatorOptions.dedupe` (default `all`).
 *
 * Answers `{seed: id, ...SeedRequest}` with `{seed: id, result: SeedResult}` (or
 * `{seed: id, error}`): history seeded in this process through the same domain functions the
 * API routes end in (see {@link seedTransfers}; for bench/simulator-scale.ts).
 */
import { parseArgs } from 'node:util';
import { Simulator, type DedupeMode } from '../simulator';
import { coreClientDecide, createTransfer } from '../simulator/transactions';
import type { ActionRecord } from '../simulator/model';

const USAGE = 'usage: simulator-process <dataDir> [persist] [--dedupe=all|transfers]';

/** The arguments, checked. @throws {Error} with the usage for a missing data folder, an unknown word or option, or a bad --dedupe. */
function readArgs(argv: string[]): { dataDir: string; persist: boolean; dedupe: DedupeMode } {
  const { values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { dedupe: { type: 'string', default: 'all' } } });
  const [dataDir, ...words] = positionals;
  if (!dataDir || words.some((w) => w !== 'persist')) throw new Error(USAGE);
  if (values.dedupe !== 'all' && values.dedupe !== 'transfers') throw new Error(`--dedupe must be all or transfers\n${USAGE}`);
  return { dataDir, persist: words.includes('persist'), dedupe: values.dedupe };
}

async function main(): Promise<void> {
  const { dataDir, persist, dedupe } = readArgs(process.argv.slice(2));
  // In memory unless asked: the throughput benchmark measures the clients, not the simulator's disk writes.
  const sim = await Simulator.start({ dataDir, port: 0, persist, dedupe });
  process.send!({ baseUrl: sim.baseUrl, controlUrl: sim.controlUrl, apiKey: sim.account.apiKey, privateKeyPem: sim.account.privateKeyPem, demo: sim.demo });
  const stop = () => sim.stop().finally(() => process.exit(0));
  const census = (records: Record<string, { txID: string; partner_txID: string; txStatus: string; actionIDs: string[] }>, prefix: string) =>
    Object.values(records)
      .filter((r) => r.partner_txID && r.partner_txID.startsWith(prefix))
      .map((r) => ({ txID: r.txID, partner_txID: r.partner_txID, txStatus: r.txStatus, actionIDs: [...r.actionIDs] }));
  process.on('message', (m: unknown) => {
    if (m === 'stop') return void stop();
    if (m && typeof m === 'object' && 'census' in m) {
      const { census: id, prefix } = m as { census: number; prefix: string };
      const state = sim.engine.state;
      process.send!({ census: id, transfers: census(state.transfers, prefix), withdrawals: census(state.withdrawals, prefix) });
    }
    if (m && typeof m === 'object' && 'seed' in m) {
      const { seed: id, ...req } = m as { seed: number } & SeedRequest;
      seedTransfers(sim, req).then(
        (result) => process.send!({ seed: id, result }),
        (err: Error) => process.send!({ seed: id, error: String(err?.stack ?? err) }),
      );
    }
  });
  process.on('disconnect', stop);
}

/**
 * What to seed ({@link seedTransfers}). Every count is a number of transfers.
 */
export interface SeedRequest {
  /** how many transfers to create */
  n: number;
  /** transfers per group commit (default 2,000) */
  batch?: number;
  /** one transfer in `pendingEvery` is left pending, on the Manual fund (custodian: the demo's manual core client); default 10 */
  pendingEvery?: number;
  /** one transfer in `rejectEvery` is rejected by the demo approver; default 50 */
  rejectEvery?: number;
  /** net amount of each transfer, base units (default 1000) */
  amount?: number;
  /** prefix of the `partner_txID`s (default `seed-`) */
  prefix?: string;
}

/** What {@link seedTransfers} did. */
export interface SeedResult {
  /** transfers created */
  created: number;
  /** approved by the demo approver (`approved_transfer`) */
  approved: number;
  /** rejected by the demo approver (`custody_rejected_transfer`) */
  rejected: number;
  /** left pending on the Manual fund (action of the manual core client) */
  pending: number;
  /** wall clock of the seeding, ms */
  ms: number;
}

/**
 * Seed `n` transfers in this process through the functions the API routes end in: POST
 * /company/{company_id}/transfer is `createTransfer`, PUT/DELETE
 * /coreclient/{client_id}/action/{action_id} is `coreClientDecide` (simulator/transactions.ts),
 * with a group commit of the store after every batch, so the history, the indexes and the
 * files on disk are what `n` API transfers would leave. The mix (bench/simulator-scale.ts's
 * seeding): one in `pendingEvery` from the Manual fund's BTC-TESTNET wallet, left pending
 * (its action belongs to the demo's manual core client, so the measured core client's backlog
 * does not grow); the rest from the demo fund (two in three BTC-TESTNET, one in three
 * ETH-TESTNET) to the counterparty fund's wallet of the same asset, decided at once by the demo
 * approver: one in `rejectEvery` rejected, the others approved (settled: balances moved, ledger
 * entries approved and written, wallets feed events). `expires` is 7 days ahead (epoch seconds),
 * so the pending ones stay pending through the benchmark. Prints a progress line per batch on
 * stderr.
 * @throws {Error} when a transfer or a decision is refused (e.g. insufficient balance: top up with the faucet first).
 */
export async function seedTransfers(sim: Simulator, req: SeedRequest): Promise<SeedResult> {
  const eng = sim.engine;
  const demo = sim.demo;
  if (!demo.manual) throw new Error('seed: the demo dataset has no manual fund');
  const n = req.n;
  const batch = Math.max(1, req.batch ?? 2000);
  const pendingEvery = req.pendingEvery ?? 10;
  const rejectEvery = req.rejectEvery ?? 50;
  const amount = req.amount ?? 1000;
  const prefix = req.prefix ?? 'seed-';
  const expires = eng.now() + 7 * 86400;
  const result: SeedResult = { created: 0, approved: 0, rejected: 0, pending: 0, ms: 0 };
  // The actions of each new transfer, as the engine announces them (synchronously, inside createTransfer).
  let announced: ActionRecord[] = [];
  const onAction = (a: ActionRecord) => announced.push(a);
  eng.on('action', onAction);
  const started = Date.now();
  try {
    for (let i = 0; i < n; ) {
      const end = Math.min(n, i + batch);
      for (; i < end; i++) {
        const pending = pendingEvery > 0 && i % pendingEvery === pendingEvery - 1;
        const asset = pending || i % 3 !== 2 ? 'BTC-TESTNET' : 'ETH-TESTNET';
        const origin = pending ? demo.manual.wallets['BTC-TESTNET'] : demo.wallets[asset];
        announced = [];
        const { tx_id, status } = createTransfer(eng, demo.company_id, {
          wallet_id: origin.wallet_id,
          counterparty_wallet_address: demo.counterparty.wallets[asset].wallet_id,
          expires,
          benefit_of: 'Seed',
          account_no: 'SEED',
          reference: `seed ${i}`,
          partner_txID: `${prefix}${i}`,
          send: { symbol: asset, amount },
        });
        if (status !== 'new') throw new Error(`seed: transfer ${prefix}${i} answered ${status}`);
        result.created++;
        if (pending) {
          result.pending++;
          continue;
        }
        const action = announced.find((a) => a.txID === tx_id && a.custodianID === demo.core_client_id);
        if (!action) throw new Error(`seed: no action of ${demo.core_client_id} announced for ${tx_id}`);
        const approve = !(rejectEvery > 0 && i % rejectEvery === rejectEvery - 2);
        coreClientDecide(eng, demo.core_client_id, action.id, approve);
        if (approve) result.approved++;
        else result.rejected++;
      }
      await eng.store.commit();
      console.error(`seed: ${i}/${n} transfers (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
  } finally {
    eng.off('action', onAction);
  }
  result.ms = Date.now() - started;
  return result;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
