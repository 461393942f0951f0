/**
 * The setup the Node-RED runtime tests share (node-red-node-test-helper, the built-in simulator,
 * real keys): the node modules a test loads, the simulator's data folder, the mocha hooks that
 * start and stop the helper's server and the shared simulator, and RSA keys made for the test.
 * Mocha only: the `use…` functions register hooks, so call them inside a `describe`.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { sharedSimulator, stopSharedSimulator } from '../../simulator/shared';
import { startHelperServer, stopHelperServer } from './node-flows';
import { useEnv } from './support';
import type { CountingServer } from './counting-server';

/** Node-RED's core nodes a test flow may use, by type: their module in @node-red/nodes. */
export const CORE_NODES = {
  catch: '@node-red/nodes/core/common/25-catch.js',
  inject: '@node-red/nodes/core/common/20-inject.js',
  debug: '@node-red/nodes/core/common/21-debug.js',
  change: '@node-red/nodes/core/function/15-change.js',
  comment: '@node-red/nodes/core/common/90-comment.js',
} as const;

/** A core node type of {@link CORE_NODES}. */
export type CoreNode = keyof typeof CORE_NODES;

/**
 * Point node-red-node-test-helper at the project's Node-RED (`helper.init`) and load the node
 * modules a test flow needs.
 * @param types the pack's node types (e.g. `custody-config`): each one's compiled module
 *   `dist/nodes/<type>/<type>.js`, as Node-RED loads it.
 * @param core Node-RED core nodes to add after them (default: the Catch node).
 * @returns the modules, in that order, for `helper.load` or `loadCollecting`.
 * @throws the `require` error of a type that has no module.
 */
export function redNodes(types: string[], core: CoreNode[] = ['catch']): unknown[] {
  helper.init(require.resolve('node-red'));
  return [...types.map((type) => require(path.join(__dirname, '..', '..', 'nodes', type, type))), ...core.map((c) => require(CORE_NODES[c]))];
}

/**
 * A fresh temporary folder for the built-in simulator's data, named `<tmp>/<prefix>XXXXXX`, and
 * `CUSTODYFLOW_SIMULATOR_DATA` set to it (or to its folder `sub`): where a config node with
 * environment "simulator" starts the shared simulator.
 * @returns the temporary folder (remove it when done; {@link useRedRuntime} does).
 */
export function simulatorDataDir(prefix: string, sub?: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.env.CUSTODYFLOW_SIMULATOR_DATA = sub === undefined ? dir : path.join(dir, sub);
  return dir;
}

/** How {@link useRedRuntime} sets up the suite. */
export interface RedRuntimeOptions {
  /**
   * Start the shared simulator in `before` (default true); false leaves it to the first config
   * node that asks for it. It is stopped in `after` either way.
   */
  startSimulator?: boolean;
  /** The data folder the simulator is started on (default: `dataDir` itself). */
  simulatorDir?: string;
}

/**
 * Register mocha hooks of a suite whose config nodes of environment "simulator" start the shared
 * built-in simulator in a folder of its own, `dir`: `before` sets `CUSTODYFLOW_SIMULATOR_DATA` to it
 * and stops a shared simulator another suite left running; `after` stops the suite's and puts the
 * variable back. Register it before the hooks that load the flows.
 */
export function useSharedSimulatorIn(dir: string): void {
  useEnv({ CUSTODYFLOW_SIMULATOR_DATA: dir });
  before(() => stopSharedSimulator());
  after(() => stopSharedSimulator());
}

/**
 * Register the mocha hooks of a suite that loads flows in node-red-node-test-helper: `before`
 * starts the helper's HTTP server, `afterEach` unloads the flow, `after` stops the server.
 */
export function useHelperServer(): void {
  before(() => startHelperServer());
  afterEach(async () => {
    await helper.unload();
  });
  after(() => stopHelperServer());
}

/**
 * Register the mocha hooks of a suite that runs flows in node-red-node-test-helper against the
 * shared built-in simulator: `before` starts the simulator (see
 * {@link RedRuntimeOptions.startSimulator}), then those of {@link useHelperServer}; `after`
 * then stops the simulator and removes `dataDir`.
 * Hooks the suite registers after this call run after these.
 * @param dataDir the folder from {@link simulatorDataDir}.
 * @returns a getter of the started simulator; it throws before the `before` hook ran, or when
 *   the simulator is not started here.
 */
export function useRedRuntime(dataDir: string, options: RedRuntimeOptions = {}): () => Simulator {
  let sim: Simulator | undefined;
  before(async () => {
    if (options.startSimulator !== false) sim = await sharedSimulator(options.simulatorDir ?? dataDir);
  });
  useHelperServer();
  after(async () => {
    await stopSharedSimulator();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!sim) throw new Error('the shared simulator is not started (use it in a test or a later hook)');
    return sim;
  };
}

/**
 * A fresh 2048-bit RSA key pair made for the test (a partner key that no server knows, or one
 * handed to a simulator), both halves PEM text.
 * @param privateType the private key's encoding: `pkcs1` (PKCS#1 PEM armour, default) or `pkcs8`.
 * @returns the private key and the public key (SPKI).
 */
export function rsaKeyPair(privateType: 'pkcs1' | 'pkcs8' = 'pkcs1'): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: privateType, format: 'pem' } });
}

/** The partner API key the tests hand a config node pointed at a server that checks no signature. */
export const NOT_A_REAL_API_KEY = 'dGVzdC1hcGkta2V5LW5vdC1yZWFs';

/** What {@link useCountingServer} hands the suite: the credentials of a config node pointed at the server. */
export interface CountingServerCredentials {
  /** The partner API key. */
  apiKey: string;
  /** A fresh RSA private key, PKCS#1 PEM ({@link rsaKeyPair}). */
  pem: string;
  /** The credentials of the config node `cfg` for `helper.load`: `{ cfg: { apiKey, privateKey: pem } }`. */
  creds: { cfg: { apiKey: string; privateKey: string } };
}

/**
 * Register mocha hooks that start `server` (a {@link CountingServer}: it counts what is sent and
 * answers as told) in `before` and stop it in `after`; flows reach it at `server.baseUrl` (set
 * once started) with a config node of environment `custom`.
 * @param apiKey the API key of the credentials (default {@link NOT_A_REAL_API_KEY}).
 * @returns credentials for that config node, with a key made here.
 */
export function useCountingServer(server: CountingServer, apiKey = NOT_A_REAL_API_KEY): CountingServerCredentials {
  before(() => server.start());
  after(() => server.stop());
  const pem = rsaKeyPair().privateKey;
  return { apiKey, pem, creds: { cfg: { apiKey, privateKey: pem } } };
}
