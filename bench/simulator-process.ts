/**
 * The simulator in a process of its own for the benchmark, so the client side and the server
 * side do not share one event loop. Sends `{baseUrl, apiKey, privateKeyPem, demo}` to the
 * parent over IPC once listening; stops on `stop` or when the parent goes away. A second
 * argument `persist` keeps the simulator's persistence on (state.json, group commit).
 */
import { Simulator } from '../simulator';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('usage: simulator-process <dataDir>');
  // In memory unless asked: the throughput benchmark measures the clients, not the simulator's disk writes.
  const sim = await Simulator.start({ dataDir, port: 0, persist: process.argv[3] === 'persist' });
  process.send!({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKeyPem: sim.account.privateKeyPem, demo: sim.demo });
  const stop = () => sim.stop().finally(() => process.exit(0));
  process.on('message', (m) => m === 'stop' && stop());
  process.on('disconnect', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
