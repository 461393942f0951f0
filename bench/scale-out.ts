/**
 * `npm run bench:scale-out` (docs/scale-out.md "Figures"), and the parts the scale-out test
 * (test/e2e/scale-out.test.ts, in `npm test`) shares with it: a counting proxy in
 * front of the simulator ({@link DecisionCounter}), the approver flow every instance runs
 * ({@link approverFlows}), and the Node-RED instances of a run ({@link startInstances}).
 *
 * All real parts: a `redis-server` (test/helpers/redis-server.ts), the simulator in a child process
 * (harness.ts `startSimulatorProcess`, state in memory), N `node-red` processes
 * (test/helpers/red-process.ts) with the same flows.json (core client feed -> approver, coordination
 * redis), each pointed at its own port of the counting proxy, so every approve (PUT) and reject
 * (DELETE) of `/coreclient/{client_id}/action/{action_id}` that reached the API is counted, and
 * by which instance.
 *
 * 1. Decisions per second with 1, 2 and 3 instances (and 1 instance without coordination, for
 *    reference): K transfers (BENCH_SCALE_ACTIONS, default 2,000) are created first, pending for
 *    the demo approver core client; then the credentials are deployed to every instance, each
 *    feed connects and its catch-up delivers every pending action. Timed from the first to the
 *    last decision call counted at the API.
 * 2. Added latency of a coordinated decision: lib's `Approver` in this process against the
 *    simulator, `decide()` of one pending action at a time (details read beforehand, as the feed
 *    node sends them), p50 and p99 with no coordinator and with a {@link Coordinator} on the same
 *    Redis (claim, shared velocity window, decided record, audit stream), and the difference.
 *    BENCH_SCALE_LATENCY (default 300) decisions each, after 20 uncounted.
 *
 * Rows are informative (goal `report`), except the ratio of 3 coordinated instances with a velocity
 * limit to 1 uncoordinated (goal at least 0.8x), measured in rounds of the two runs back to back
 * (BENCH_SCALE_ROUNDS, default 3; the median of the per-round ratios). Nothing is asserted.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createTransfer, CustodyClient, getAction, listActions } from '../lib';
import { Approver, compileRules, type ApprovalRule, type ApproverOptions } from '../lib/approver';
import { Coordinator } from '../lib/coordination/coordinator';
import type { DemoDataset } from '../simulator';
import { RedProcess, sleep, watchDebug } from '../test/helpers/red-process';
import { RedisServer } from '../test/helpers/redis-server';
import { catchNode, fileNode, functionNode } from '../test/helpers/flow-nodes';
import { closeProxy, deployFull, tunnelUpgrade, waitForGreen, withEnv } from '../test/helpers/red-fleet';
import { benchTransfer, faucet, readJsonLines, startSimulatorProcess, stopSimulatorProcess, type SimInfo } from './harness';
import { atLeast, median, percentile, printWhenMain, type BenchRow } from './table';

/** One approve (PUT) or reject (DELETE) of a core client action as it reached the simulator. */
export interface DecisionCall {
  /** The instance whose proxy port it came through. */
  instance: string;
  method: 'PUT' | 'DELETE';
  client_id: string;
  action_id: string;
  /** When it was forwarded, `performance.now()` ms. */
  at: number;
  /** The simulator's HTTP status, once it answered. */
  status?: number;
}

const DECISION_PATH = /\/coreclient\/([^/?]+)\/action\/([^/?]+)\/?(?:\?|$)/;

/**
 * A loopback proxy in front of the simulator that counts the decisions reaching the API. It
 * listens on one port per instance ({@link DecisionCounter.listen}), forwards every request
 * (the Host header unchanged: the signature covers the URL as the client addressed it) and every
 * websocket upgrade (a byte pipe, so the feeds go through it too), and records each PUT or
 * DELETE of `/coreclient/{client_id}/action/{action_id}` when it is forwarded, with the
 * simulator's status once answered. No dependency beyond node:http and node:net.
 */
export class DecisionCounter {
  /** Every decision call forwarded, in order. */
  readonly calls: DecisionCall[] = [];
  /** Requests forwarded per instance (all paths, upgrades included). */
  readonly requests = new Map<string, number>();
  /** Every request other than GET, as forwarded: instance, method, path (no query) and the simulator's status once answered. */
  readonly writes: Array<{ instance: string; method: string; path: string; status?: number }> = [];
  readonly #target: URL;
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  readonly #servers: http.Server[] = [];
  readonly #tunnels = new Set<net.Socket>();

  /** @param target the simulator's v1 base URL (`SimInfo.baseUrl`). */
  constructor(target: string) {
    this.#target = new URL(target);
  }

  /**
   * Listen on a new free loopback port for `instance`.
   * @returns the base URL that instance uses instead of the simulator's (same path).
   */
  async listen(instance: string): Promise<string> {
    const server = http.createServer((req, res) => this.#forward(instance, req, res));
    server.keepAliveTimeout = 30000;
    server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      this.#count(instance);
      tunnelUpgrade(this.#target, req, socket, head, this.#tunnels);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.#servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}${this.#target.pathname.replace(/\/+$/, '')}`;
  }

  /** The calls per action id. */
  byAction(): Map<string, DecisionCall[]> {
    const map = new Map<string, DecisionCall[]>();
    for (const c of this.calls) {
      const list = map.get(c.action_id);
      if (list) list.push(c);
      else map.set(c.action_id, [c]);
    }
    return map;
  }

  /** Close every connection and tunnel and the servers. */
  async stop(): Promise<void> {
    await closeProxy(this.#servers, this.#tunnels, this.#agent);
  }

  #count(instance: string): void {
    this.requests.set(instance, (this.requests.get(instance) ?? 0) + 1);
  }

  #forward(instance: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    this.#count(instance);
    const headers = { ...req.headers };
    delete headers.connection;
    delete headers['keep-alive'];
    const out = http.request({ hostname: this.#target.hostname, port: this.#target.port, method: req.method, path: req.url, headers, agent: this.#agent });
    const m = (req.method === 'PUT' || req.method === 'DELETE') && DECISION_PATH.exec(req.url ?? '');
    let call: DecisionCall | undefined;
    const write = req.method !== 'GET' ? { instance, method: req.method ?? '', path: (req.url ?? '').split('?')[0] } : undefined;
    if (write) this.writes.push(write);
    if (m) {
      call = { instance, method: req.method as 'PUT' | 'DELETE', client_id: decodeURIComponent(m[1]), action_id: decodeURIComponent(m[2]), at: performance.now() };
      this.calls.push(call);
    }
    out.on('response', (answer) => {
      if (call) call.status = answer.statusCode;
      if (write) (write as { status?: number }).status = answer.statusCode;
      const back = { ...answer.headers };
      delete back.connection;
      delete back['keep-alive'];
      res.on('error', () => undefined);
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    });
    out.on('error', () => req.socket.destroy());
    req.on('error', () => out.destroy());
    req.pipe(out);
  }
}

/** The ids of the scale-out flow's nodes (the same on every instance: the approver's id scopes its shared velocity windows). */
export const FLOW_IDS = { config: 'cfgscaleout00001', feed: 'scalefeed', approver: 'scaleapprover' } as const;

/** The environment variable each instance's config node reads its base URL from (`${...}` in flows.json). */
export const BASE_URL_ENV = 'CUSTODYFLOW_SCALE_BASE_URL';

/** How {@link approverFlows} builds the flow. */
export interface ApproverFlowOptions {
  /** `redis` (coordinated) or `none`. */
  coordination: 'redis' | 'none';
  /** The Redis URL (with `redis`, mode `standalone`). */
  redisUrl?: string;
  /** How the config node reaches Redis (default `standalone`: by {@link ApproverFlowOptions.redisUrl}). */
  redisMode?: 'standalone' | 'sentinel';
  /** Sentinel: the sentinels, `host:port, host:port` (the config node's `redisSentinels`). */
  redisSentinels?: string;
  /** Sentinel: the master's name at the sentinels (default `mymaster`). */
  redisMasterName?: string;
  /** Key prefix in Redis (default `custodyflow:`). */
  keyPrefix?: string;
  /** Claim lease, seconds (default 5: a killed instance's claims are taken over quickly). */
  leaseSeconds?: number;
  /** The core client whose actions are decided. */
  clientId: string;
  /** Approvals allowed per 24 h (the rule's `velocityCount`), all instances together; 0: no limit. */
  velocityCount: number;
  /**
   * The feed node's Read details (default true). Off, the approver reads each action itself, after
   * its claim: on one instance (docs/scale-out.md "Throughput"); on, every instance's feed reads every action.
   */
  details?: boolean;
}

/**
 * The approval rules of the scale-out flow: approve BTC-TESTNET transfers under a count limit per
 * 24 h (`velocityCount`; 0: no limit); the default decision rejects the rest.
 */
export function scaleRules(velocityCount: number): ApprovalRule[] {
  const base: ApprovalRule = { name: 'BTC-TESTNET transfers', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'] };
  return [velocityCount > 0 ? { ...base, name: `BTC-TESTNET transfers, ${velocityCount} a day`, velocityCount: String(velocityCount), velocityWindowHours: '24' } : base];
}

/**
 * The coordination properties of the flow's custody-config node: `none`, or `redis` by URL or
 * through Sentinel (the Redis and sentinel passwords are credentials: {@link ScaleCredentials}).
 */
export function coordinationSettings(options: Omit<ApproverFlowOptions, 'clientId' | 'velocityCount'>): Record<string, unknown> {
  if (options.coordination !== 'redis') return { coordination: 'none' };
  const where =
    options.redisMode === 'sentinel'
      ? { redisMode: 'sentinel', redisSentinels: options.redisSentinels ?? '', redisMasterName: options.redisMasterName ?? 'mymaster' }
      : { redisUrl: options.redisUrl ?? '' };
  return { coordination: 'redis', ...where, redisTls: false, redisKeyPrefix: options.keyPrefix ?? 'custodyflow:', claimLeaseSeconds: options.leaseSeconds ?? 5 };
}

/**
 * The flow every instance runs (one flows.json for all): custody-config (environment `custom`,
 * base URL from the environment variable {@link BASE_URL_ENV}, coordination per `options`),
 * core client feed (with details) -> custody-approver ({@link scaleRules}, default reject);
 * every msg of the approver's three outputs and every error (Catch node) appended as a JSON
 * line to `decisions.jsonl` in the working directory (the instance's user directory).
 * Without credentials: deploy them with {@link deployCredentials}.
 */
export function approverFlows(options: ApproverFlowOptions): object[] {
  const { config, feed, approver } = FLOW_IDS;
  const coordination = coordinationSettings(options);
  return [
    { id: 'scaletab', type: 'tab', label: 'scale-out' },
    { id: config, type: 'custody-config', name: 'scale-out', environment: 'custom', baseUrl: '${' + BASE_URL_ENV + '}', signingMode: 'timestamp', timeout: 30, ...coordination },
    { id: feed, z: 'scaletab', type: 'custody-coreclient-feed', connection: config, clientId: options.clientId, details: options.details !== false, x: 120, y: 80, wires: [[approver]] },
    {
      id: approver,
      z: 'scaletab',
      type: 'custody-approver',
      connection: config,
      rules: scaleRules(options.velocityCount),
      defaultDecision: 'reject',
      dryRun: false,
      auditFile: '',
      x: 320,
      y: 80,
      wires: [['scalerecord'], ['scalerecord'], ['scalerecord']],
    },
    functionNode(
      'scalerecord',
      'decision line',
      'const d = msg.decision || {};\nmsg.payload = { kind: "decision", action_id: d.action_id, decision: d.decision, expired: d.expired === true, redelivered: d.redelivered === true, statusCode: msg.statusCode, at: Date.now() };\nreturn msg;',
      { z: 'scaletab', x: 520, y: 80 },
      ['scalefile'],
    ),
    catchNode('scalecatch', { z: 'scaletab', x: 120, y: 160 }, ['scaleerror']),
    functionNode(
      'scaleerror',
      'error line',
      'const e = msg.error || {};\nmsg.payload = { kind: "error", source: e.source && e.source.type, code: e.code, message: e.message, action_id: msg.decision ? msg.decision.action_id : undefined, at: Date.now() };\nreturn msg;',
      { z: 'scaletab', x: 320, y: 160 },
      ['scalefile'],
    ),
    fileNode('scalefile', 'decisions.jsonl', { z: 'scaletab', x: 720, y: 80 }),
  ];
}

/** One line of an instance's `decisions.jsonl` (see {@link approverFlows}). */
export interface DecisionLine {
  kind: 'decision' | 'error';
  action_id?: string;
  decision?: 'approve' | 'reject' | 'hold';
  expired?: boolean;
  redelivered?: boolean;
  statusCode?: number;
  code?: string;
  message?: string;
  source?: string;
  at: number;
}

/** A running Node-RED instance of a scale-out run. */
export interface Instance {
  name: string;
  red: RedProcess;
  /** Its base URL: its own port of the {@link DecisionCounter}. */
  baseUrl: string;
  /** Node statuses by node id, as the editor sees them on `/comms`. */
  status: Map<string, { text?: string; fill?: string; shape?: string }>;
  /** Closes the `/comms` socket. */
  unwatch(): void;
}

/**
 * Start a `node-red` process per name, one after the other (two cores), each with its own user
 * directory (working directory too), the same `flows`, its own port of `counter` as
 * {@link BASE_URL_ENV}, and its own submission journal and feed memory folders inside its user
 * directory (a test process sets CUSTODYFLOW_JOURNAL_DIR and CUSTODYFLOW_FEED_DIR for itself,
 * test/helpers/isolated-dirs.ts: inherited, they would make the instances share files that each
 * instance must have alone).
 * @throws {Error} when one does not start (after stopping the ones started).
 */
export async function startInstances(names: string[], flows: object[], counter: DecisionCounter): Promise<Instance[]> {
  const started: Instance[] = [];
  try {
    for (const name of names) {
      const red = new RedProcess({ prefix: `cf-scale-${name}-`, flows: JSON.stringify(flows), cwdInUserDir: true });
      const baseUrl = await counter.listen(name);
      try {
        await withEnv(
          {
            [BASE_URL_ENV]: baseUrl,
            CUSTODYFLOW_JOURNAL_DIR: path.join(red.userDir, 'custodyflow', 'journal'),
            CUSTODYFLOW_FEED_DIR: path.join(red.userDir, 'custodyflow', 'feed'),
          },
          () => red.start(),
        );
      } catch (e) {
        await red.stop();
        throw e;
      }
      const status = new Map<string, { text?: string; fill?: string; shape?: string }>();
      const { ws } = await watchDebug(red.base, status);
      started.push({ name, red, baseUrl, status, unwatch: () => ws.close() });
    }
  } catch (e) {
    await stopInstances(started);
    throw e;
  }
  return started;
}

/** Stop every instance (one killed already just loses its user directory). */
export async function stopInstances(instances: Instance[]): Promise<void> {
  for (const i of instances) i.unwatch();
  await Promise.all(
    instances.map(async (i) => {
      // RedProcess.stop waits 10 s for the exit of a child that a signal ended already (its exitCode stays null).
      if (i.red.child?.signalCode) fs.rmSync(i.red.userDir, { recursive: true, force: true });
      else await i.red.stop();
    }),
  );
}

/**
 * Kill an instance with SIGKILL (no close handlers, no goodbye: a crash) and wait for its exit.
 * Its user directory stays (its decisions.jsonl is read afterwards).
 */
export async function killInstance(instance: Instance): Promise<void> {
  const child = instance.red.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  instance.unwatch();
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** The credentials of the flow's config node (Node-RED password credentials, encrypted in each instance's flows_cred.json by the deploy). */
export interface ScaleCredentials {
  apiKey: string;
  privateKey: string;
  redisPassword?: string;
  /** The sentinels' own password (a config node reaching Redis through Sentinel). */
  redisSentinelPassword?: string;
}

/**
 * Deploy `flows` (full) to an instance with `credentials` on the config node, as the editor does.
 * @throws {Error} when the admin API refuses it.
 */
export function deployCredentials(instance: Instance, flows: object[], credentials: ScaleCredentials): Promise<void> {
  return deployFull(instance, flows, FLOW_IDS.config, credentials);
}

/**
 * Wait until the feed node of every instance shows a green dot (connected).
 * @throws {Error} after `ms` with the statuses seen.
 */
export function waitForFeeds(instances: Instance[], ms = 60000): Promise<void> {
  return waitForGreen(instances, FLOW_IDS.feed, ms);
}

/** The JSON lines of the file `name` in an instance's user directory so far (a line cut short by a kill is left out). */
export function jsonLines<T>(instance: Instance, name: string): T[] {
  return readJsonLines<T>(path.join(instance.red.userDir, name));
}

/** The lines of an instance's `decisions.jsonl` so far. */
export function decisionLines(instance: Instance): DecisionLine[] {
  return jsonLines<DecisionLine>(instance, 'decisions.jsonl');
}

/**
 * Create `n` transfers of `amount` base units (demo BTC-TESTNET wallet -> counterparty; the
 * demo approver core client must approve each: one pending action per transfer), `concurrency`
 * at a time, straight at the simulator (not through the counter).
 * @param prefix of the partner_txIDs.
 * @returns the tx_ids, in the order created.
 * @throws the first refusal (rejects).
 */
export async function createPendingTransfers(client: CustodyClient, demo: DemoDataset, n: number, prefix: string, concurrency = 4, amount = 1000): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < n) {
      const i = next++;
      const res = await createTransfer(client, benchTransfer(demo, amount, { partner_txID: `${prefix}${i}`, reference: `scale-out ${prefix}${i}` }));
      ids.push(res.data.tx_id);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

/** How many actions of `clientId` are pending at the simulator (GET /coreclient/{client_id}/actions). */
export async function pendingCount(client: CustodyClient, clientId: string): Promise<number> {
  return (await listActions(client, { client_id: clientId })).data.actions.length;
}

/** Top up the demo BTC-TESTNET wallet for `n` transfers of `amount` (plus fees). */
export async function fundTransfers(sim: SimInfo, n: number, amount = 1000): Promise<void> {
  await faucet(sim.controlUrl, sim.demo.wallets['BTC-TESTNET'].wallet_id, n * (amount + 1));
}

// ------------------------------------------------------------------ the benchmark

const ACTIONS = Number(process.env.BENCH_SCALE_ACTIONS) || 2000;
const LATENCY_N = Number(process.env.BENCH_SCALE_LATENCY) || 300;
/** How long one decisions-per-second run may take, ms (BENCH_SCALE_RUN_SECONDS, default 180). */
const RUN_DEADLINE_MS = (Number(process.env.BENCH_SCALE_RUN_SECONDS) || 180) * 1000;
const REDIS_PASSWORD = 'bench-scale-out';
/** Rounds of the compared pair (BENCH_SCALE_ROUNDS, default 3): 1 instance without coordination, then 3 coordinated with a velocity limit. */
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS) || 3;

/** One configuration of a decisions-per-second run. */
interface RunSpec {
  names: string[];
  coordination: 'redis' | 'none';
  velocity: boolean;
  /** The feed node's Read details (off: the approver reads each action after its claim). */
  details: boolean;
}

/** A `report` row (nothing judged). */
function report(measure: string, figures: string, value: number): BenchRow {
  return { group: 'scale-out', measure, figures, value, goal: 'report', pass: true };
}

/** What one {@link throughputRun} measured. */
interface ThroughputResult {
  /** decisions per second, first to last decision call at the API */
  rate: number;
  /** actions decided (called at least once) */
  decided: number;
  /** calls per instance, as text */
  perInstance: string;
  /** actions called more than once */
  doubles: number;
  seconds: number;
  /** false when the run's deadline came first (the rate is then over the decisions made) */
  complete: boolean;
}

/**
 * One decisions-per-second run: `names.length` instances, `ACTIONS` transfers created first,
 * then the credentials deployed; timed from the first to the last decision call at the API.
 * With `velocity`, the flow's rule has the velocity limit of the test (half the actions); without,
 * no limit (every action approved: claims only).
 * @param deadlineMs how long to wait for every action to be decided (the rate is reported over what was).
 */
async function throughputRun(sim: SimInfo, client: CustodyClient, redis: RedisServer, spec: RunSpec, run: number, deadlineMs: number): Promise<ThroughputResult> {
  const { names, coordination, velocity } = spec;
  const counter = new DecisionCounter(sim.baseUrl);
  const flows = approverFlows({ coordination, redisUrl: redis.url, keyPrefix: `custodyflow:bench${run}:`, leaseSeconds: 30, clientId: sim.demo.core_client_id, velocityCount: velocity ? Math.floor(ACTIONS / 2) : 0, details: spec.details });
  const instances = await startInstances(names, flows, counter);
  try {
    await fundTransfers(sim, ACTIONS);
    await createPendingTransfers(client, sim.demo, ACTIONS, `scale-bench-${process.pid}-${run}-`, 8);
    console.error(`run ${run}: ${names.length} instance(s), coordination ${coordination}, velocity limit ${velocity ? 'on' : 'off'}, feed details ${spec.details ? 'on' : 'off'}: ${ACTIONS} transfers pending; deploying`);
    await Promise.all(instances.map((i) => deployCredentials(i, flows, { apiKey: sim.apiKey, privateKey: sim.privateKeyPem, redisPassword: REDIS_PASSWORD })));
    const deadline = Date.now() + deadlineMs;
    let complete = false;
    // Until every action was called and none is pending (a run without coordination calls each several times).
    for (;;) {
      await sleep(500);
      if (counter.byAction().size >= ACTIONS && (await pendingCount(client, sim.demo.core_client_id)) === 0) {
        complete = true;
        break;
      }
      if (Date.now() > deadline) break;
    }
    await sleep(coordination === 'none' ? 3000 : 500); // late calls of the other instances
    if (process.env.BENCH_SCALE_DEBUG === '1') {
      // Where each instance stood: the approver's status and the end of its log.
      for (const i of instances) console.error(`  ${i.name}: approver ${JSON.stringify(i.status.get(FLOW_IDS.approver))}\n${i.red.log.slice(-1500)}`);
      const gaps = counter.calls.map((c, k, all) => (k === 0 ? 0 : c.at - all[k - 1].at));
      console.error(`  longest gap between two decision calls: ${(Math.max(...gaps) / 1000).toFixed(2)} s, after call ${gaps.indexOf(Math.max(...gaps))}`);
    }
    const calls = counter.calls;
    const decided = counter.byAction().size;
    const first = Math.min(...calls.map((c) => c.at));
    const last = Math.max(...calls.map((c) => c.at));
    const seconds = (last - first) / 1000;
    const perInstance = names.map((n) => `${n} ${calls.filter((c) => c.instance === n).length}`).join(', ');
    const doubles = Array.from(counter.byAction().values()).filter((l) => l.length > 1).length;
    console.error(`run ${run}: ${decided} of ${ACTIONS} decided, ${(decided / seconds).toFixed(1)} decisions/s over ${seconds.toFixed(1)} s; calls ${perInstance}; actions called more than once: ${doubles}${complete ? '' : ' (deadline reached)'}`);
    return { rate: decided / seconds, decided, perInstance, doubles, seconds, complete };
  } finally {
    await stopInstances(instances);
    await counter.stop();
  }
}

/** p50/p99 of `decide()` through lib's Approver, one pending action at a time, with or without `coordinator`. */
async function latencyRun(sim: SimInfo, client: CustodyClient, dir: string, coordinator: Coordinator | undefined, label: string): Promise<number[]> {
  const n = LATENCY_N + 20;
  await fundTransfers(sim, n);
  await createPendingTransfers(client, sim.demo, n, `scale-latency-${process.pid}-${label}-`, 8);
  const pending = (await listActions(client, { client_id: sim.demo.core_client_id })).data.actions;
  // With details, as the core client feed node sends them: the difference measured is the coordination.
  const actions: Record<string, unknown>[] = [];
  for (const a of pending.slice(0, n)) {
    const read = await getAction(client, { client_id: sim.demo.core_client_id, action_id: a.id });
    actions.push({ ...read.data, client_id: sim.demo.core_client_id, action_id: a.id });
  }
  const options: ApproverOptions = {
    rules: compileRules(scaleRules(1_000_000)),
    defaultDecision: 'reject',
    mode: 'live',
    auditFile: path.join(dir, `audit-${label}.jsonl`),
    approverId: `bench-latency-${label}`,
    client: async () => client,
    ...(coordinator ? { coordinator } : {}),
  };
  const approver = await Approver.open(options);
  const times: number[] = [];
  try {
    for (const [i, action] of actions.entries()) {
      const t0 = performance.now();
      const outcome = await approver.decide(action);
      const ms = performance.now() - t0;
      if (outcome.error) throw new Error(`${label}: ${String(action.action_id)}: ${outcome.error.message}`);
      if (i >= 20) times.push(ms);
    }
  } finally {
    await approver.close();
  }
  const left = await pendingCount(client, sim.demo.core_client_id);
  if (left > 0) console.error(`${label}: ${left} actions left pending`);
  return times;
}

/** The benchmark: the rows described in the module comment. */
export async function run(): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-scale-'));
  const redis = new RedisServer();
  let child: ChildProcess | undefined;
  let client: CustodyClient | undefined;
  const rows: BenchRow[] = [];
  try {
    await redis.start(['--requirepass', REDIS_PASSWORD]);
    const started = await startSimulatorProcess(path.join(dir, 'simulator'), false);
    child = started.child;
    const sim = started.sim;
    client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });

    // Each round runs the pair the goal compares, back to back (so the ratio is within one run of
    // the machine), then the other configurations once (BENCH_SCALE_ALL=0 leaves them out).
    // Feed details off: the approver reads each action once, after its claim (docs/scale-out.md "Throughput").
    const pair: RunSpec[] = [
      { names: ['a'], coordination: 'none', velocity: true, details: false },
      { names: ['a', 'b', 'c'].slice(0, Number(process.env.BENCH_SCALE_INSTANCES) || 3), coordination: 'redis', velocity: true, details: false },
    ];
    const others: RunSpec[] = process.env.BENCH_SCALE_ALL === '0' ? [] : [
      { names: ['a'], coordination: 'redis', velocity: true, details: false },
      { names: ['a', 'b'], coordination: 'redis', velocity: true, details: false },
      { names: ['a', 'b', 'c'], coordination: 'redis', velocity: false, details: false },
      { names: ['a'], coordination: 'none', velocity: true, details: true },
      { names: ['a', 'b', 'c'], coordination: 'redis', velocity: true, details: true },
    ];
    let n = 0;
    const ratios: number[] = [];
    const rates = new Map<RunSpec, number[]>();
    const lastOf = new Map<RunSpec, ThroughputResult>();
    const measure = async (r: RunSpec): Promise<number> => {
      const out = await throughputRun(sim, client!, redis, r, ++n, RUN_DEADLINE_MS);
      rates.set(r, [...(rates.get(r) ?? []), out.rate]);
      lastOf.set(r, out);
      return out.rate;
    };
    for (let round = 0; round < ROUNDS; round++) {
      const plain = await measure(pair[0]);
      const coordinated = await measure(pair[1]);
      ratios.push(coordinated / plain);
      console.error(`round ${round + 1}: 3 coordinated / 1 uncoordinated = ${(coordinated / plain).toFixed(2)}x`);
    }
    for (const r of others) await measure(r);
    for (const r of [...pair, ...others]) {
      const out = lastOf.get(r)!;
      const what = `decisions/s, ${r.names.length} instance${r.names.length > 1 ? 's' : ''}, coordination ${r.coordination}, velocity limit ${r.velocity ? 'on' : 'off'}, feed details ${r.details ? 'on' : 'off'}`;
      const done = out.complete ? `${ACTIONS} actions` : `${out.decided} of ${ACTIONS} actions (deadline)`;
      const all = rates.get(r)!;
      const runsText = all.length > 1 ? `median of ${all.length} runs (${all.map((x) => x.toFixed(0)).join(', ')}); last: ` : '';
      rows.push(report(what, `${runsText}${done} in ${out.seconds.toFixed(1)} s; calls ${out.perInstance}; called twice ${out.doubles}`, median(all)));
    }
    const ratio = median(ratios);
    rows.push(atLeast('scale-out', '3 coordinated instances (velocity limit) / 1 uncoordinated, decisions/s', `median of ${ratios.length} rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')}`, ratio, 0.8));

    const plain = await latencyRun(sim, client, dir, undefined, 'plain');
    const coordinator = new Coordinator({ url: redis.url, password: REDIS_PASSWORD, keyPrefix: 'custodyflow:latency:', leaseMs: 30_000, instance: 'bench' });
    let coordinated: number[];
    try {
      await coordinator.whenReady();
      coordinated = await latencyRun(sim, client, dir, coordinator, 'coordinated');
    } finally {
      await coordinator.close();
    }
    for (const p of [50, 99]) {
      const a = percentile(plain, p);
      const b = percentile(coordinated, p);
      rows.push(report(`Approver.decide() p${p}, coordinated - plain (ms)`, `${b.toFixed(2)} ms vs ${a.toFixed(2)} ms (${LATENCY_N} each)`, b - a));
    }
    console.error(`Node ${process.version}, ${os.cpus().length} cores; simulator in a child process, state in memory; redis-server on loopback`);
  } finally {
    await client?.close();
    if (child) await stopSimulatorProcess(child);
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

printWhenMain(module, run);
