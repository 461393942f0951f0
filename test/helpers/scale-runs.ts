/**
 * Steps shared by the scale-out runs of three Node-RED instances deciding one core client's
 * actions (test/e2e/scale-out.test.ts, test/e2e/scale-out-failover.test.ts): transfers created in
 * batches while the instances decide, the wait until every action is decided, and the transfers'
 * statuses at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { CustodyClient, getTransfer } from '../../lib';
import { startSimulatorProcess, stopSimulatorProcess, type SimInfo } from '../../bench/harness';
import type { DedupeMode } from '../../simulator';
import {
  createPendingTransfers,
  DecisionCounter,
  deployCredentials,
  FLOW_IDS,
  fundTransfers,
  pendingCount,
  startInstances,
  stopInstances,
  waitForFeeds,
  type DecisionCall,
  type Instance,
  type ScaleCredentials,
} from '../../bench/scale-out';
import { sleep } from './red-process';

/**
 * The figures of the three-instance scale-out runs (docs/testing.md, test/e2e/scale-out.test.ts and
 * test/e2e/scale-out-failover.test.ts): the transfers (actions) created, the approval rule's
 * velocityCount (approvals allowed across all instances), and the flow's claim lease in seconds
 * (a recovery after a failover lasts one lease).
 */
export const SCALE_OUT = { actions: 1000, limit: 650, leaseSeconds: 5 } as const;

/**
 * The parts of one scale-out run, started in order and stopped together: the simulator in a child
 * process (its own data folder), a client of it, the counting proxy, and the Node-RED instances.
 */
export class ScaleRun {
  /** The simulator's data folder (removed by {@link stop}). */
  readonly dataDir: string;
  child: ChildProcess | undefined;
  sim!: SimInfo;
  client: CustodyClient | undefined;
  counter!: DecisionCounter;
  instances: Instance[] = [];

  /** @param tmpPrefix the data folder's name prefix. */
  constructor(tmpPrefix: string) {
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  }

  /**
   * Start the simulator (state in memory), a client of it and the counting proxy, and fund the
   * demo wallet for `transfers` transfers.
   * @returns the simulator, the client and the counting proxy (also kept on the run).
   * @throws when the simulator does not start (rejects).
   */
  async startSimulator(transfers: number, dedupe?: DedupeMode): Promise<{ sim: SimInfo; client: CustodyClient; counter: DecisionCounter }> {
    ({ child: this.child, sim: this.sim } = await startSimulatorProcess(this.dataDir, false, dedupe));
    const client = new CustodyClient({ baseUrl: this.sim.baseUrl, apiKey: this.sim.apiKey, privateKey: this.sim.privateKeyPem });
    this.client = client;
    await fundTransfers(this.sim, transfers);
    this.counter = new DecisionCounter(this.sim.baseUrl);
    return { sim: this.sim, client, counter: this.counter };
  }

  /**
   * Start a `node-red` per name with `flows`, deploy the config node's credentials (the
   * simulator's keys and `redis`: the Redis and sentinel passwords) to each, and wait for every feed.
   * @throws when one does not start or deploy (rejects).
   */
  async startInstances(names: string[], flows: object[], redis: Pick<ScaleCredentials, 'redisPassword' | 'redisSentinelPassword'>): Promise<Instance[]> {
    this.instances = await startInstances(names, flows, this.counter);
    for (const i of this.instances) await deployCredentials(i, flows, { apiKey: this.sim.apiKey, privateKey: this.sim.privateKeyPem, ...redis });
    await waitForFeeds(this.instances);
    return this.instances;
  }

  /** Resolves once `n` decision calls reached the API; false when `going()` turned false first. */
  async whenCalls(n: number, going: () => boolean): Promise<boolean> {
    while (this.counter.calls.length < n) {
      if (!going()) return false;
      await sleep(20);
    }
    return true;
  }

  /** Stop the instances, the proxy, the client and the simulator; remove the data folder. */
  async stop(): Promise<void> {
    await stopInstances(this.instances);
    await this.counter?.stop();
    await this.client?.close();
    if (this.child) await stopSimulatorProcess(this.child);
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The decision calls of a run, counted: per action, those called twice, approvals and rejections answered 2xx, and those not answered 2xx. */
export function tally(counter: DecisionCounter): { byAction: Map<string, DecisionCall[]>; twice: Array<[string, DecisionCall[]]>; approvals: number; rejections: number; refused: DecisionCall[] } {
  const calls = counter.calls;
  const byAction = counter.byAction();
  const ok = (c: DecisionCall) => c.status !== undefined && c.status >= 200 && c.status < 300;
  return {
    byAction,
    twice: Array.from(byAction.entries()).filter(([, l]) => l.length > 1),
    approvals: calls.filter((c) => c.method === 'PUT' && ok(c)).length,
    rejections: calls.filter((c) => c.method === 'DELETE' && ok(c)).length,
    refused: calls.filter((c) => !ok(c)),
  };
}

/**
 * Create `total` pending transfers (bench/scale-out.ts `createPendingTransfers`, 4 at a time) in
 * batches of `batch`, `pauseMs` between batches, partner_txIDs starting with `prefix`.
 * @returns the tx_ids.
 * @throws the first refusal.
 */
export async function createInBatches(client: CustodyClient, sim: SimInfo, total: number, batch: number, pauseMs: number, prefix: string): Promise<string[]> {
  const txIds: string[] = [];
  for (let b = 0; b < total / batch; b++) {
    txIds.push(...(await createPendingTransfers(client, sim.demo, batch, `${prefix}${b}-`, 4)));
    await sleep(pauseMs);
  }
  return txIds;
}

/**
 * Poll every 500 ms until `counter` has seen a decision call for `actions` actions and none of
 * the core client's actions is pending, or `deadlineMs` passed; every 10 s, say on stderr how far
 * it is (calls, actions, each instance's approver status).
 * @returns the actions pending at the end (0: all decided).
 */
export async function untilAllDecided(counter: DecisionCounter, client: CustodyClient, sim: SimInfo, instances: Instance[], actions: number, deadlineMs: number): Promise<number> {
  const started = Date.now();
  const deadline = started + deadlineMs;
  let shown = started;
  for (;;) {
    await sleep(500);
    if (counter.byAction().size >= actions) {
      const pending = await pendingCount(client, sim.demo.core_client_id);
      if (pending === 0) return 0;
    }
    if (Date.now() > deadline) return pendingCount(client, sim.demo.core_client_id);
    if (Date.now() - shown > 10000) {
      shown = Date.now();
      const approvers = instances.map((i) => `${i.name} ${JSON.stringify(i.status.get(FLOW_IDS.approver)?.text ?? '')}`).join(', ');
      console.error(`      ... ${((Date.now() - started) / 1000).toFixed(0)} s: ${counter.calls.length} calls on ${counter.byAction().size} actions; ${approvers}`);
    }
  }
}

/** How many of the transfers `txIds` are in each `txStatus` (read 20 at a time). */
export async function transferStatuses(client: CustodyClient, sim: SimInfo, txIds: string[]): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  for (let i = 0; i < txIds.length; i += 20) {
    const answers = await Promise.all(txIds.slice(i, i + 20).map((tx_id) => getTransfer(client, { company_id: sim.demo.company_id, tx_id })));
    for (const a of answers) {
      const s = String((a.data as { txStatus?: unknown }).txStatus);
      statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
  }
  return statuses;
}

/**
 * What the shared audit stream (`custodyflow:audit` on the Redis at 127.0.0.1:`port`) says of
 * `actionIds`: one text per decision or result line, in order (instance, kind, decision, outcome,
 * fence, claim reason, time). For the message of a failed check: how two calls of one action came about.
 * @throws the connection's error.
 */
export async function auditTrail(port: number, password: string, actionIds: string[]): Promise<string[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const IORedis = require('ioredis') as typeof import('ioredis');
  const r = new IORedis.Redis(port, '127.0.0.1', { password, maxRetriesPerRequest: 1 });
  try {
    const wanted = new Set(actionIds);
    const out: string[] = [];
    for (const [, fields] of await r.xrange('custodyflow:audit', '-', '+')) {
      const line = JSON.parse(fields[fields.indexOf('line') + 1]) as Record<string, unknown>;
      if (!wanted.has(String(line.action_id))) continue;
      const at = line.at ?? line.decidedAt;
      out.push(`${String(line.action_id)} ${fields[fields.indexOf('instance') + 1]} ${String(line.kind)} ${String(line.decision ?? '')} ${String(line.outcome ?? '')} fence ${String(line.fence ?? '-')}${line.claim ? ` claim ${String(line.claim)}` : ''}${line.reasons ? ` reasons ${JSON.stringify(line.reasons)}` : ''} at ${String(at)}`);
    }
    return out;
  } finally {
    r.disconnect();
  }
}
