/**
 * Node-RED-free helpers of the config node `custody-config`: a client built on first use, the
 * built-in simulator loaded on first use, and where the simulator and the submission journals
 * keep their files (docs/configuration.md).
 */
import os from 'node:os';
import path from 'node:path';
import type { Simulator } from '../../simulator';

/**
 * A client built on first use and shared; a failed build is retried by the next caller (the
 * failure is reported to that caller).
 */
export interface LazyClient<T> {
  /** The client, building it first when needed. @throws the `closedError` once the config node is closed (rejects). */
  get(): Promise<T>;
  /** Forget the client (the next `get` builds a new one). @returns the one built or being built, if any, to close it. */
  take(): Promise<T> | undefined;
}

/**
 * A {@link LazyClient} over `build`.
 * @param isClosed true once the config node is closed: `get` then rejects without building.
 * @param closedError the error `get` rejects with once closed.
 */
export function lazyClient<T>(build: () => Promise<T>, isClosed: () => boolean, closedError: () => Error): LazyClient<T> {
  let promise: Promise<T> | undefined;
  return {
    get() {
      if (isClosed()) return Promise.reject(closedError());
      if (!promise) {
        promise = build();
        promise.catch(() => {
          promise = undefined;
        });
      }
      return promise;
    },
    take() {
      const p = promise;
      promise = undefined;
      return p;
    },
  };
}

/**
 * The process's built-in simulator (simulator/shared.ts `sharedSimulator`), loaded on the first
 * call: the simulator's modules (and `router`) are required here and nowhere else on the pack's
 * load path, so a Node-RED that never uses the built-in simulator does not load them and the pack
 * adds little to a Node-RED start (docs/performance.md, the footprint group;
 * test/nodes/lazy-simulator.test.ts).
 * @param userDir Node-RED's user directory, for the data folder ({@link simulatorDataDir}).
 * @throws what `Simulator.start` throws (rejects); a failed start is retried by the next call.
 */
export function builtInSimulator(userDir: string | undefined): Promise<Simulator> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { sharedSimulator } = require('../../simulator/shared') as typeof import('../../simulator/shared');
  return sharedSimulator(simulatorDataDir(userDir));
}

/** Global context key under which the built-in simulator's addresses are published (custody-config.ts `startSimulator`). */
export const SIMULATOR_CONTEXT_KEY = 'custodyflowSimulator';

/**
 * Where the built-in simulator keeps its state: `$CUSTODYFLOW_SIMULATOR_DATA`, else
 * `<userDir>/custodyflow-simulator`, else a folder in the OS temp dir.
 */
export function simulatorDataDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_SIMULATOR_DATA || path.join(userDir || os.tmpdir(), 'custodyflow-simulator');
}

/**
 * Where the submission journals live: `$CUSTODYFLOW_JOURNAL_DIR`, else
 * `<userDir>/custodyflow/journal`, else a folder in the OS temp dir. A file per API account.
 */
export function journalDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_JOURNAL_DIR || path.join(userDir || os.tmpdir(), 'custodyflow', 'journal');
}
