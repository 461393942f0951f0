/**
 * The embedded simulator as most lib tests use it: started on a free port in a fresh temporary
 * data directory, with a signed CustodyClient for its demo account, and stopped afterwards.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DATA_FILES, Simulator, type SimulatorOptions } from '../../simulator';
import { ApiError, CustodyClient, type ClientOptions } from '../../lib';

/** A running simulator, its data directory and a client signed with the account's API key. */
export interface SimulatedAccount {
  /** The temporary data directory (removed by {@link stopSimulated}). */
  dataDir: string;
  sim: Simulator;
  /** Signs with `sim.account.apiKey` and `sim.account.privateKeyPem`. */
  client: CustodyClient;
}

/**
 * A CustodyClient for the simulator's account: its v1 base URL, full API key and private key;
 * `options` replace any of those or add others (e.g. `signingMode`).
 */
export function accountClient(sim: Simulator, options: Partial<ClientOptions> = {}): CustodyClient {
  return new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, ...options });
}

/**
 * Create a data directory under the OS temp directory named with `prefix` (e.g. `cf-sim-`),
 * start a simulator there on a free port (persisting its state), and make an {@link accountClient}.
 * @param options further simulator options (e.g. `dedupe`).
 * @throws what Simulator.start throws, after removing the directory.
 */
export async function startSimulated(prefix: string, options: Partial<Omit<SimulatorOptions, 'dataDir'>> = {}): Promise<SimulatedAccount> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  let sim: Simulator;
  try {
    sim = await Simulator.start({ port: 0, ...options, dataDir });
  } catch (e) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return { dataDir, sim, client: accountClient(sim) };
}

/** Close the client, stop the simulator and remove the data directory; parts never started are skipped. */
export async function stopSimulated(s: Partial<SimulatedAccount>): Promise<void> {
  s.client?.close();
  await s.sim?.stop();
  if (s.dataDir) fs.rmSync(s.dataDir, { recursive: true, force: true });
}

/**
 * Register mocha hooks on the current suite: `before` its first test, {@link startSimulated}
 * (`prefix`, `options`) and then `onStart` with the account (to set the suite's own variables);
 * `after` its last test, {@link stopSimulated}.
 * @returns the account object, its fields set once `before` has run (read them in tests and hooks).
 */
export function simulatedSuite(prefix: string, options: Partial<Omit<SimulatorOptions, 'dataDir'>> = {}, onStart: (s: SimulatedAccount) => void = () => undefined): SimulatedAccount {
  const account = {} as SimulatedAccount;
  before(async () => {
    Object.assign(account, await startSimulated(prefix, options));
    onStart(account);
  });
  after(async () => {
    await stopSimulated(account);
  });
  return account;
}

/**
 * Start a simulator on a free port in the folder `dataDir` (made, mode 0700) whose partner account
 * has the key pair `keys` (PEM, written as its key files `DATA_FILES.privateKey` and
 * `DATA_FILES.publicKey`, mode 0600), its state in memory, served over TLS when `tls` is given.
 * @throws what Simulator.start throws (the folder stays: it belongs to the caller).
 */
export async function startSimulatorWithKeys(dataDir: string, keys: { privateKey: string; publicKey: string }, tls?: { cert: string; key: string }): Promise<Simulator> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dataDir, DATA_FILES.privateKey), keys.privateKey, { mode: 0o600 });
  fs.writeFileSync(path.join(dataDir, DATA_FILES.publicKey), keys.publicKey, { mode: 0o600 });
  return Simulator.start({ dataDir, port: 0, persist: false, ...(tls ? { tls } : {}) });
}

/** An answer of {@link signedCall}: the HTTP status and the body (the spec's error body for an API error). */
export interface Reply {
  status: number;
  data: any;
}

/**
 * A signed call through `client` (path below the v1 base URL; `body` sent as JSON when given).
 * An API error answer is returned as `{ status, data: { code, msg, detail } }`, not thrown.
 * @throws what the client throws for anything other than an ApiError (network, validation).
 */
export async function signedCall(client: CustodyClient, method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<Reply> {
  try {
    const res = await client.request<any>(method, p, body === undefined ? {} : { body });
    return { status: res.statusCode, data: res.data };
  } catch (e) {
    if (e instanceof ApiError) return { status: e.statusCode, data: { code: e.code, msg: e.msg, detail: e.detail } };
    throw e;
  }
}
