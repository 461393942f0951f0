/**
 * One in-process simulator per Node-RED process (the config node's "built-in simulator"
 * environment). The first call starts it on an ephemeral loopback port with the given data
 * folder; later calls return the same instance, whatever data folder they name.
 */
import { Simulator } from './index';

let shared: Promise<Simulator> | null = null;

/**
 * The process-wide simulator, started on first call (`127.0.0.1`, ephemeral port).
 * @param dataDir data folder used by the first call; ignored afterwards.
 * @throws what {@link Simulator.start} throws; a failed start is forgotten so a later call retries.
 */
export function sharedSimulator(dataDir: string): Promise<Simulator> {
  if (!shared) {
    const p = Simulator.start({ dataDir, port: 0, host: '127.0.0.1' });
    shared = p;
    p.catch(() => {
      if (shared === p) shared = null;
    });
  }
  return shared;
}

/** Stop the process-wide simulator if one was started (for tests); the next call starts a new one. */
export async function stopSharedSimulator(): Promise<void> {
  const p = shared;
  shared = null;
  if (!p) return;
  try {
    const sim = await p;
    await sim.stop();
  } catch {
    // a start that failed has nothing to stop
  }
}
