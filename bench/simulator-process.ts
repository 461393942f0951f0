/**
 * The simulator in a process of its own for the benchmark, so the client side and the server
 * side do not share one event loop. Sends `{baseUrl, controlUrl, apiKey, privateKeyPem, demo}`
 * to the parent over IPC once listening; stops on `stop` or when the parent goes away. Answers
 * `{census: id, prefix}` with `{census: id, transfers, withdrawals}`: the `{txID, partner_txID}`
 * of every transfer and withdrawal whose partner_txID starts with `prefix` (the fault benchmark
 * counts duplicates with it).
 *
 *   simulator-process <dataDir> [persist] [--dedupe=all|transfers]
 *
 * `persist` keeps the simulator's persistence on (state.json, group commit); without it the
 * state stays in memory. `--dedupe` is `SimulatorOptions.dedupe` (default `all`).
 */
import { parseArgs } from 'node:util';
import { Simulator, type DedupeMode } from '../simulator';

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
  const census = (records: Record<string, { txID: string; partner_txID: string }>, prefix: string) =>
    Object.values(records)
      .filter((r) => r.partner_txID && r.partner_txID.startsWith(prefix))
      .map((r) => ({ txID: r.txID, partner_txID: r.partner_txID }));
  process.on('message', (m: unknown) => {
    if (m === 'stop') return void stop();
    if (m && typeof m === 'object' && 'census' in m) {
      const { census: id, prefix } = m as { census: number; prefix: string };
      const state = sim.engine.state;
      process.send!({ census: id, transfers: census(state.transfers, prefix), withdrawals: census(state.withdrawals, prefix) });
    }
  });
  process.on('disconnect', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
