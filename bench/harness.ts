/**
 * What the benchmarks share: the simulator in a child process (simulator-process.ts) and a
 * Node-RED runtime embedded in the bench process with the pack installed in a user directory,
 * as a user has it (flows.json, credentials in flows_cred.json).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { DedupeMode, DemoDataset } from '../simulator';
import type { CustodyClient, TransferRequest } from '../lib';
import type { SeedRequest, SeedResult } from './simulator-process';
import { transferRequest } from '../test/helpers/requests';

export type { SeedRequest, SeedResult } from './simulator-process';

/** What the simulator child process reports once listening. */
export interface SimInfo {
  baseUrl: string;
  /** The control endpoints, e.g. `http://127.0.0.1:PORT/_simulator`. */
  controlUrl: string;
  apiKey: string;
  privateKeyPem: string;
  demo: DemoDataset;
}

/**
 * Start the simulator in a child process with its data in `dataDir`.
 * @param persist keep its state file (group commit) instead of memory only.
 * @param dedupe `SimulatorOptions.dedupe`: which calls answer `existing` for a partner_txID
 *   already used; omitted: the simulator's default (`all`).
 * @returns the child and what it reported.
 * @throws {Error} when the child exits before reporting (rejects).
 */
export async function startSimulatorProcess(dataDir: string, persist: boolean, dedupe?: DedupeMode): Promise<{ child: ChildProcess; sim: SimInfo }> {
  const args = [dataDir, ...(persist ? ['persist'] : []), ...(dedupe ? [`--dedupe=${dedupe}`] : [])];
  const child = fork(path.join(__dirname, 'simulator-process.js'), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const sim = await new Promise<SimInfo>((resolve, reject) => {
    child.once('message', (m) => resolve(m as SimInfo));
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  return { child, sim };
}

/** One transaction as {@link simulatorCensus} lists it. */
export interface CensusRecord {
  txID: string;
  partner_txID: string;
  /** the transaction's status (spec section 3), e.g. `approved_transfer` */
  txStatus: string;
  /** its actions' ids, one per custodian (spec section 2, "Action") */
  actionIDs: string[];
}

let askSeq = 0;

/**
 * Send the simulator child (simulator-process.ts) a request `{[key]: id, ...fields}` with a fresh
 * id and wait for its answer: the first message whose `key` property is that id.
 * @returns that message.
 * @throws {Error} `exitMessage` when the child exits first (rejects).
 */
function askChild(child: ChildProcess, key: 'census' | 'seed', fields: object, exitMessage: string): Promise<Record<string, unknown>> {
  const id = ++askSeq;
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (!m || typeof m !== 'object' || (m as Record<string, unknown>)[key] !== id) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as Record<string, unknown>);
    };
    const onExit = () => {
      child.off('message', onMessage);
      reject(new Error(exitMessage));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ [key]: id, ...fields });
  });
}

/**
 * The transfers and withdrawals the simulator child holds whose partner_txID starts with `prefix`.
 * @returns `{transfers, withdrawals}`, each a list of {@link CensusRecord} (one per transaction).
 * @throws {Error} when the child exits first (rejects).
 */
export async function simulatorCensus(child: ChildProcess, prefix: string): Promise<{ transfers: CensusRecord[]; withdrawals: CensusRecord[] }> {
  return (await askChild(child, 'census', { prefix }, 'the simulator exited before answering the census')) as unknown as { transfers: CensusRecord[]; withdrawals: CensusRecord[] };
}

/** Stop a child started by {@link startSimulatorProcess} and wait for it to exit. */
export async function stopSimulatorProcess(child: ChildProcess): Promise<void> {
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
}

/**
 * Kill a child started by {@link startSimulatorProcess} with SIGKILL (no flush, no goodbye: what
 * a crash leaves on disk) and wait for it to exit.
 */
export async function killSimulatorProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/**
 * Seed transfers in the simulator child, in-process, through the domain functions the API uses
 * (simulator-process.ts `seedTransfers`: batches with a group commit each, a progress line per
 * batch on stderr). Top the wallets up first ({@link faucet}) when `n` transfers need more than
 * the demo balances.
 * @returns what was seeded ({@link SeedResult}).
 * @throws {Error} when the seeding fails in the child or the child exits first (rejects).
 */
export async function seedSimulator(child: ChildProcess, req: SeedRequest): Promise<SeedResult> {
  const { result, error } = (await askChild(child, 'seed', req, 'the simulator exited while seeding')) as { result?: SeedResult; error?: string };
  if (error !== undefined) throw new Error(`seeding failed in the simulator: ${error}`);
  return result!;
}

/**
 * POST a control endpoint of the simulator (`/_simulator/...`, unsigned JSON, loopback only).
 * @param controlUrl `SimInfo.controlUrl`.
 * @param route below the control prefix, e.g. `/faucet`.
 * @returns the parsed JSON answer.
 * @throws {Error} on a non-2xx answer (rejects), with its body.
 */
export async function controlPost(controlUrl: string, route: string, body: unknown): Promise<unknown> {
  const res = await fetch(controlUrl + route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${route}: HTTP ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/**
 * A faucet deposit (`POST /_simulator/faucet`): credits `amount` base units to a wallet (id or
 * short code) and writes its deposit ledger entry.
 * @returns the wallet's new balance (base units).
 * @throws {Error} on a refusal (rejects).
 */
export async function faucet(controlUrl: string, walletId: string, amount: number): Promise<number> {
  const res = (await controlPost(controlUrl, '/faucet', { wallet_id: walletId, amount })) as { balance: number };
  return res.balance;
}

/**
 * Install the pack (a link to this checkout) in `userDir`, write `flows` and `credentials`, and
 * start Node-RED in this process (no editor, no HTTP nodes; warnings only).
 * @returns the Node-RED runtime (`RED.nodes.getNode`, `RED.stop`).
 */
export async function startEmbeddedRed(userDir: string, flows: object[], credentials: object): Promise<any> {
  const root = path.resolve(__dirname, '..', '..');
  const link = path.join(userDir, 'node_modules', '@custodyflow', 'node-red-custody');
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(root, link, 'dir');
  fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flows));
  fs.writeFileSync(path.join(userDir, 'flows_cred.json'), JSON.stringify(credentials));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RED = require('node-red');
  RED.init(http.createServer(), {
    userDir,
    flowFile: 'flows.json',
    credentialSecret: false,
    httpAdminRoot: false,
    httpNodeRoot: false,
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    diagnostics: { enabled: false },
    telemetry: { enabled: false },
  });
  await RED.start();
  return RED;
}

/** A way of sending one transfer, measured by {@link measure}, and how to end it. */
export interface TransferPath {
  /** Send one transfer; resolves once answered `new`, rejects otherwise (the error names the answer). */
  one: () => Promise<void>;
  /** Stop what the path started. */
  stop: () => Promise<void>;
}

/**
 * The `custody-transfer` node in a Node-RED runtime embedded in this process ({@link startEmbeddedRed}),
 * configured as a user would (custom URL, timestamp signing, credentials in flows_cred.json), its
 * output into a disabled debug node. `one` sends a {@link benchTransfer} (1 base unit) as
 * `msg.payload` with `node.receive` and waits for the node's output or its `error()` (a wrapped
 * `error` frees the waiting call, as Catch nodes would see it).
 * @param userDir the Node-RED user directory to create (the pack linked into it).
 * @param msgPrefix the `_msgid` prefix of the messages sent.
 * @throws {Error} when the flow's nodes did not start (rejects).
 */
export async function transferNodePath(sim: SimInfo, userDir: string, msgPrefix: string): Promise<TransferPath> {
  const flows = [
    { id: 'tab', type: 'tab', label: 'bench' },
    { id: 'cfg', type: 'custody-config', environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: 30 },
    { id: 'tx', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', company_id: sim.demo.company_id, x: 100, y: 100, wires: [['out']] },
    { id: 'out', z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'payload', x: 300, y: 100, wires: [] },
  ];
  const RED = await startEmbeddedRed(userDir, flows, { cfg: { apiKey: sim.apiKey, privateKey: sim.privateKeyPem } });
  await new Promise((r) => setTimeout(r, 500));
  const txNode = RED.nodes.getNode('tx');
  const out = RED.nodes.getNode('out');
  if (!txNode || !out) throw new Error('the bench flow did not start');
  const waiting = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  out.on('input', (msg: { _msgid: string; payload: { status: string } }) => {
    const w = waiting.get(msg._msgid);
    waiting.delete(msg._msgid);
    if (msg.payload.status !== 'new') w?.reject(new Error(`node: status ${msg.payload.status}`));
    else w?.resolve();
  });
  const error = txNode.error.bind(txNode);
  txNode.error = (err: unknown, msg?: { _msgid?: string }) => {
    const id = msg?._msgid ?? '';
    waiting.get(id)?.reject(new Error(`node: ${String(err)}`));
    waiting.delete(id);
    return error(err, msg);
  };
  let seq = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const _msgid = `${msgPrefix}-${++seq}`;
      waiting.set(_msgid, { resolve, reject });
      const { company_id, ...payload } = benchTransfer(sim.demo);
      void company_id;
      txNode.receive({ _msgid, payload });
    });
  return { one, stop: () => RED.stop() };
}

/**
 * Run a bench's `main` as the process: exit with the code it resolves to, or print what it
 * threw and exit 1.
 */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

let transferSeq = 0;

/**
 * A transfer request from the demo BTC-TESTNET wallet to the counterparty's, with a fresh
 * `partner_txID` and `expires` an hour ahead (epoch seconds); `overrides` replace fields.
 * @param amount base units (default 1).
 */
export function benchTransfer(demo: DemoDataset, amount = 1, overrides: Partial<TransferRequest> = {}): TransferRequest & { company_id: string } {
  return transferRequest(demo, {
    benefit_of: 'Bench',
    account_no: 'BENCH',
    reference: 'benchmark',
    partner_txID: `bench-${process.pid}-${++transferSeq}`,
    send: { symbol: 'BTC-TESTNET', amount },
    ...overrides,
  });
}

/** Requests per second and the bench process's CPU per request of one {@link measure} run. */
export interface Measured {
  /** calls per second (wall clock) */
  rate: number;
  /** CPU time of this process (user + system) per call, in microseconds */
  cpuMicros: number;
}

/**
 * Run `n` calls of `one` with `concurrency` of them in flight at a time.
 * @returns the rate and CPU per call ({@link Measured}).
 * @throws the first call's failure (rejects).
 */
export async function measure(n: number, concurrency: number, one: () => Promise<void>): Promise<Measured> {
  let started = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  async function worker(): Promise<void> {
    while (started < n) {
      started++;
      await one();
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { rate: n / seconds, cpuMicros: (cpu.user + cpu.system) / n };
}

/**
 * A pending core client action as the core client feed sends it with `details: true` (spec section 2
 * "Action"), for benchmarks that feed an approver directly.
 * @param expireTime epoch seconds.
 */
export function pendingAction(id: string, clientId: string, details: Record<string, unknown>, expireTime: number): Record<string, unknown> {
  return { id, action_id: id, client_id: clientId, type: 'ApproveTransfer', status: 'pending', expireTime, details: { txID: `tx-${id}`, ...details } };
}

/**
 * A client that answers GET /assets only (the asset scales an approver reads, and records on
 * each decision line), with `scales` (asset code -> scale, a power of ten): for benchmarks that
 * must not reach any API.
 */
export function assetsOnlyClient(scales: Record<string, number>): CustodyClient {
  return {
    request: async (method: string, p: string) => {
      if (method === 'GET' && p === '/assets') return { statusCode: 200, data: { assets: Object.entries(scales).map(([code, scale]) => ({ code, scale })) } };
      throw new Error(`unexpected ${method} ${p}`);
    },
  } as unknown as CustodyClient;
}

/** The parsed lines of a JSON Lines file so far: none when it does not exist; a line cut short (a write in progress, a kill) is left out. */
export function readJsonLines<T>(file: string): T[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as T];
      } catch {
        return [];
      }
    });
}

/**
 * Run `fn` with a fresh folder under the OS temp folder (named with `prefix`), removed with its
 * content afterwards, whatever `fn` did.
 * @returns what `fn` returns.
 */
export async function inTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
