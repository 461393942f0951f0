/**
 * The parts of the approval-outcome runs (approval-outcomes.test.ts): the standalone simulator
 * as a child process with its key files read ({@link startStandaloneSimulator}), `node-red`
 * processes running core client feed -> custody-approver against it through an
 * {@link ApprovalProxy} port each ({@link startApproverInstance}), redeployed, killed and
 * restarted on the same user directory, transfers created at a pace ({@link createTransfers}),
 * and what a run is judged on: the approvals the API holds ({@link approvalsAtApi}) and what the
 * audit files say ({@link readAuditFolder}, {@link auditConfirms}).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type WebSocket from 'ws';
import { CustodyClient, createTransfer, getTransfer, listActions } from '../../lib';
import { RedProcess, sleep, watchDebug } from './red-process';
import { spawnCliSimulator, signalAndWait, type CliSimulator } from './sim-cli';
import { catchNode, fileNode, functionNode } from './flow-nodes';
import { deployFull, waitForGreen, withEnv } from './red-fleet';

/** The simulator's fixed demo ids (simulator/demo.ts DEMO_IDS) the runs use. */
export const DEMO = {
  company_id: 'demo-company',
  core_client_id: 'demo-approver',
  btcWallet: 'demo-btc-testnet',
  counterpartyBtcWallet: 'demo-counterparty-btc-testnet',
} as const;

/** The command-line simulator of a run, with what its banner and key files give. */
export interface StandaloneSimulator {
  /** The v1 base URL, e.g. `http://127.0.0.1:PORT/api/v1/p`. */
  baseUrl: string;
  apiKey: string;
  privateKeyPem: string;
  cli: CliSimulator;
  /** Stop it (SIGTERM) and remove its data folder. */
  stop(): Promise<void>;
}

/**
 * Start `dist/simulator/cli.js --in-memory` on a fresh data folder (test/helpers/sim-cli.ts) and read its
 * base URL from the banner and its API key and private key from the files it names.
 * @throws {Error} with its output when the banner does not come within 20 s.
 */
export async function startStandaloneSimulator(): Promise<StandaloneSimulator> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-outcomes-sim-'));
  const cli = spawnCliSimulator(dataDir, ['--in-memory']);
  const deadline = Date.now() + 20000;
  while (!/private key file:\s+\S+/.test(cli.out())) {
    if (Date.now() > deadline || cli.cli.exitCode !== null) {
      cli.cli.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`the simulator did not start:\n${cli.out()}`);
    }
    await sleep(50);
  }
  const out = cli.out();
  const field = (label: string) => new RegExp(`^\\s*${label}:\\s+(\\S+)`, 'm').exec(out)![1];
  return {
    baseUrl: field('base URL'),
    apiKey: fs.readFileSync(field('API key file'), 'utf8').trim(),
    privateKeyPem: fs.readFileSync(field('private key file'), 'utf8'),
    cli,
    async stop() {
      if (cli.cli.exitCode === null && cli.cli.signalCode === null) await signalAndWait(cli.cli, 'SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The environment variable each instance's config node reads its base URL from (`${...}` in flows.json). */
export const BASE_URL_ENV = 'CUSTODYFLOW_OUTCOMES_BASE_URL';

/** The ids of the flow's nodes (the same on every instance: the approver's id scopes its shared velocity windows). */
export const IDS = { config: 'cfgoutcomes00001', feed: 'outcomesfeed', approver: 'outcomesapprover' } as const;

/** How {@link outcomeFlows} builds the flow. */
export interface OutcomeFlowOptions {
  /** The rule's `velocityCount`: approvals per 24 h, all instances together. */
  velocityCount: number;
  /** Coordination through this Redis URL (no password in it); absent: none. */
  redisUrl?: string;
  /** Claim lease with coordination, seconds (default 5). */
  leaseSeconds?: number;
}

/**
 * The flow: custody-config (environment `custom`, base URL from {@link BASE_URL_ENV},
 * timestamp signing, coordination per `options`) -> core client feed of the demo approver (with
 * details) -> custody-approver with one rule, approve ApproveTransfer BTC-TESTNET up to 0.5 with
 * at most `velocityCount` approvals per 24 h, default hold, live, the audit file at its default
 * place (`<userDir>/custodyflow-audit/`). Every msg of its outputs and every error (Catch) is
 * appended to `decisions.jsonl` in the working directory (the user directory). No credentials:
 * {@link deployFlows} adds them.
 */
export function outcomeFlows(options: OutcomeFlowOptions): object[] {
  const { config, feed, approver } = IDS;
  const coordination = options.redisUrl
    ? { coordination: 'redis', redisUrl: options.redisUrl, redisTls: false, redisKeyPrefix: 'custodyflow:outcomes:', claimLeaseSeconds: options.leaseSeconds ?? 5 }
    : { coordination: 'none' };
  const z = 'outcomestab';
  return [
    { id: z, type: 'tab', label: 'approval outcomes' },
    { id: config, type: 'custody-config', name: 'outcomes', environment: 'custom', baseUrl: '${' + BASE_URL_ENV + '}', signingMode: 'timestamp', timeout: 30, ...coordination },
    { id: feed, z, type: 'custody-coreclient-feed', connection: config, clientId: DEMO.core_client_id, details: true, x: 120, y: 80, wires: [[approver]] },
    {
      id: approver,
      z,
      type: 'custody-approver',
      connection: config,
      rules: [
        {
          name: `BTC-TESTNET transfers up to 0.5, ${options.velocityCount} a day`,
          decision: 'approve',
          actionTypes: ['ApproveTransfer'],
          assets: ['BTC-TESTNET'],
          maxAmount: '0.5',
          velocityCount: String(options.velocityCount),
          velocityWindowHours: '24',
        },
      ],
      defaultDecision: 'hold',
      dryRun: false,
      auditFile: '',
      x: 320,
      y: 80,
      wires: [['outcomesrecord'], ['outcomesrecord'], ['outcomesrecord']],
    },
    functionNode(
      'outcomesrecord',
      'decision line',
      'const d = msg.decision || {};\nmsg.payload = { kind: "msg", action_id: d.action_id, decision: d.decision, outcome: d.outcome, redelivered: d.redelivered === true, statusCode: msg.statusCode, at: Date.now() };\nreturn msg;',
      { z, x: 520, y: 80 },
      ['outcomesfile'],
    ),
    catchNode('outcomescatch', { z, x: 120, y: 160 }, ['outcomeserror']),
    functionNode(
      'outcomeserror',
      'error line',
      'const e = msg.error || {};\nmsg.payload = { kind: "error", code: e.code, message: e.message, outcomeUnknown: msg.outcomeUnknown === true || e.outcomeUnknown === true, action_id: msg.decision ? msg.decision.action_id : undefined, at: Date.now() };\nreturn msg;',
      { z, x: 320, y: 160 },
      ['outcomesfile'],
    ),
    fileNode('outcomesfile', 'decisions.jsonl', { z, x: 720, y: 80 }),
  ];
}

/** The config node's credentials (Node-RED password credentials). */
export interface OutcomeCredentials {
  apiKey: string;
  privateKey: string;
  redisPassword?: string;
}

/** A `node-red` process of a run, with its own port of the proxy and its node statuses. */
export interface ApproverInstance {
  name: string;
  red: RedProcess;
  /** What its process is started with: its base URL and its own journal and feed folders. */
  env: Record<string, string>;
  /** Node statuses by node id, as the editor sees them on `/comms` (since the last start). */
  status: Map<string, { text?: string; fill?: string; shape?: string }>;
  ws?: WebSocket;
  /** Times it was started (1 after the first start). */
  starts: number;
}

/**
 * Create an instance: a user directory with `flows` (no credentials), its base URL (a port of
 * the proxy) and its own submission journal and core client feed folders in the user directory
 * (the test process's own, test/helpers/isolated-dirs.ts, would be shared), and start it.
 * @throws {Error} when Node-RED does not start (the user directory is removed).
 */
export async function startApproverInstance(name: string, flows: object[], baseUrl: string): Promise<ApproverInstance> {
  const red = new RedProcess({ prefix: `cf-outcomes-${name}-`, flows: JSON.stringify(flows), cwdInUserDir: true });
  const instance: ApproverInstance = {
    name,
    red,
    env: { [BASE_URL_ENV]: baseUrl, CUSTODYFLOW_JOURNAL_DIR: path.join(red.userDir, 'custodyflow', 'journal'), CUSTODYFLOW_FEED_DIR: path.join(red.userDir, 'custodyflow', 'feed') },
    status: new Map(),
    starts: 0,
  };
  try {
    await restartInstance(instance);
  } catch (e) {
    await red.stop();
    throw e;
  }
  return instance;
}

/** Start (again) an instance's Node-RED on its user directory as it was left, and watch its statuses. */
export async function restartInstance(instance: ApproverInstance): Promise<void> {
  await withEnv(instance.env, () => instance.red.start());
  instance.status = new Map();
  instance.ws = (await watchDebug(instance.red.base, instance.status)).ws;
  instance.starts++;
}

/** Kill an instance's Node-RED with SIGKILL (a crash: no close handlers) and wait for its exit; the user directory stays. */
export async function killInstance(instance: ApproverInstance): Promise<void> {
  const child = instance.red.child;
  instance.ws?.close();
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** Stop an instance (SIGINT) and remove its user directory. */
export async function stopInstance(instance: ApproverInstance): Promise<void> {
  instance.ws?.close();
  // RedProcess.stop would wait 10 s for a child that a signal ended already.
  if (instance.red.child?.signalCode) fs.rmSync(instance.red.userDir, { recursive: true, force: true });
  else await instance.red.stop();
}

/**
 * Deploy `flows` to an instance (`POST /flows`, `Node-RED-Deployment-Type: full`, as the editor's
 * full deploy), with `credentials` on the config node when given (without: the ones deployed before stay).
 * @throws {Error} when the admin API refuses it.
 */
export function deployFlows(instance: ApproverInstance, flows: object[], credentials?: OutcomeCredentials): Promise<void> {
  return deployFull(instance, flows, IDS.config, credentials);
}

/**
 * Wait until the feed node of every instance shows a green dot (connected).
 * @throws {Error} after `ms` with the statuses seen.
 */
export function waitForFeeds(instances: ApproverInstance[], ms = 60000): Promise<void> {
  return waitForGreen(instances, IDS.feed, ms);
}

/**
 * Create `n` transfers of `amount` base units (demo BTC-TESTNET wallet -> the counterparty's; each
 * has one action pending for the demo approver core client), one at a time, `paceMs()` apart,
 * straight at the simulator (not through the proxy). Pushes each tx_id to `txIds` as it is made.
 * @param stop when it returns true, no more are created.
 * @throws the first refusal (rejects).
 */
export async function createTransfers(client: CustodyClient, n: number, prefix: string, paceMs: () => number, txIds: string[], stop: () => boolean = () => false, amount = 100000): Promise<void> {
  for (let i = 0; i < n && !stop(); i++) {
    const res = await createTransfer(client, {
      company_id: DEMO.company_id,
      wallet_id: DEMO.btcWallet,
      counterparty_wallet_address: DEMO.counterpartyBtcWallet,
      expires: Math.floor(Date.now() / 1000) + 3600,
      benefit_of: 'Outcomes test',
      account_no: 'OUT-1',
      reference: `approval outcomes ${prefix}${i}`,
      partner_txID: `${prefix}${i}`,
      send: { symbol: 'BTC-TESTNET', amount },
    });
    txIds.push(res.data.tx_id);
    await sleep(paceMs());
  }
}

/** What the API says of a run's transfers. */
export interface ApiApprovals {
  /** Ids of the actions the API holds as approved (the transfers' approver records, status `approved`). */
  approved: string[];
  /** Ids of the actions still pending for the core client. */
  pending: string[];
  /** Transfers per `txStatus`. */
  txStatuses: Record<string, number>;
}

/**
 * Read every transfer of `txIds` (GET /company/{company_id}/transfer/{tx_id}: its `status`
 * array of approver records, spec section 2) and the core client's pending actions (GET
 * /coreclient/{client_id}/actions).
 * @throws what the reads throw (rejects).
 */
export async function approvalsAtApi(client: CustodyClient, txIds: string[]): Promise<ApiApprovals> {
  const approved: string[] = [];
  const txStatuses: Record<string, number> = {};
  for (let i = 0; i < txIds.length; i += 10) {
    const answers = await Promise.all(txIds.slice(i, i + 10).map((tx_id) => getTransfer(client, { company_id: DEMO.company_id, tx_id })));
    for (const a of answers) {
      const data = a.data as { txStatus?: unknown; status?: Array<{ actionID?: string; status?: string }> };
      const s = String(data.txStatus);
      txStatuses[s] = (txStatuses[s] ?? 0) + 1;
      for (const r of data.status ?? []) if (r.status === 'approved' && r.actionID) approved.push(r.actionID);
    }
  }
  const pending = (await listActions(client, { client_id: DEMO.core_client_id })).data.actions.map((a) => a.id);
  return { approved, pending, txStatuses };
}

/** One line of an audit file, as parsed (a line cut short by a kill is left out). */
export type AuditRecord = Record<string, unknown> & { kind?: string; action_id?: string; file: string };

/**
 * Every line of every `*.jsonl` file under `dir` (rotated segments included, subfolders too),
 * each with the file it came from.
 */
export function readAuditFolder(dir: string): AuditRecord[] {
  if (!fs.existsSync(dir)) return [];
  const out: AuditRecord[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true } as { withFileTypes: true; recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
    const file = path.join((entry as unknown as { parentPath?: string; path?: string }).parentPath ?? (entry as unknown as { path: string }).path, entry.name);
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        out.push({ ...(JSON.parse(line) as Record<string, unknown>), file });
      } catch {
        /* a line cut short by a kill */
      }
    }
  }
  return out;
}

/** The audit folder of an instance (the approver's default audit file lives there). */
export function auditFolder(instance: ApproverInstance): string {
  return path.join(instance.red.userDir, 'custodyflow-audit');
}

/**
 * True when `line` says the API accepted the approval of its action: a `result` line with
 * `ok: true` of an action decided `approve`, or a `resolved` line with the API's answer: the
 * action's `status` read back is `approved` (spec section 3, action statuses), or its outcome is
 * `applied` for an action decided `approve`.
 * @param approveDecided the action ids with a `decision` line deciding `approve`.
 */
export function confirmsApproval(line: AuditRecord, approveDecided: Set<string>): boolean {
  if (typeof line.action_id !== 'string') return false;
  if (line.kind === 'result') return line.ok === true && approveDecided.has(line.action_id);
  if (line.kind !== 'resolved') return false;
  return line.status === 'approved' || (line.outcome === 'applied' && approveDecided.has(line.action_id));
}

/**
 * The action ids among `approved` that no audit line confirms ({@link confirmsApproval}), over
 * the lines of every instance.
 */
export function unconfirmedApprovals(approved: string[], lines: AuditRecord[]): string[] {
  const approveDecided = new Set(lines.filter((l) => l.kind === 'decision' && l.decision === 'approve' && typeof l.action_id === 'string').map((l) => l.action_id as string));
  const confirmed = new Set(lines.filter((l) => confirmsApproval(l, approveDecided)).map((l) => l.action_id as string));
  return approved.filter((id) => !confirmed.has(id));
}

/** The audit lines of one action, short (the facts every decision repeats left out), each with its file below the temporary folder, for a failure message. */
export function auditTrail(lines: AuditRecord[], actionId: string): string[] {
  const noise = new Set(['seq', 'prev', 'reasons', 'velocity', 'rule', 'file', 'approver', 'client_id', 'action_id', 'type', 'asset', 'amount', 'amountDecimal', 'destination', 'mode', 'error']);
  return lines
    .filter((l) => l.action_id === actionId)
    .map((l) => `${path.relative(os.tmpdir(), l.file)}: ${JSON.stringify(Object.fromEntries(Object.entries(l).filter(([k]) => !noise.has(k))))}`);
}
