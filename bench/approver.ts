/**
 * `npm run bench:approver`: the `custody-approver` and `custody-track` nodes in a real Node-RED
 * runtime embedded in this process (the pack installed in a temporary user directory,
 * credentials in flows_cred.json as a user has them), against the simulator in a child
 * process with its persistence on (state.json written with group commit).
 *
 * 1. Decisions per second in dry run: 20 rules (the first 19 fail on their last condition, the
 *    20th approves under a velocity limit), 10,000 approvals already in the velocity window
 *    (written to the audit file before the start, rebuilt from it), actions with their details
 *    sent into the node; the audit line of each decision is on disk before its msg leaves.
 *    Measured through the node and, in the same run, through lib's Approver directly (ratio).
 * 2. Latency: POST transfer (lib) -> core client feed -> approver (live, approves) -> the
 *    transfer's `approved_transfer` seen by custody-track (woken by the wallets feed): p50 and
 *    p99 over BENCH_LATENCY_TRANSFERS (default 500), BENCH_LATENCY_CONCURRENCY (default 4) at a time.
 * Environment: BENCH_DECISIONS (per measured round, default 20000), BENCH_ROUNDS (default 3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog, CustodyClient, createTransfer } from '../lib';
import { Approver, compileRules, type ApprovalRule } from '../lib/approver';
import { benchTransfer, runMain, startEmbeddedRed, startSimulatorProcess, stopSimulatorProcess } from './harness';

const DECISIONS = Number(process.env.BENCH_DECISIONS) || 20000;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 3;
const LATENCY_N = Number(process.env.BENCH_LATENCY_TRANSFERS) || 500;
const LATENCY_CONCURRENCY = Number(process.env.BENCH_LATENCY_CONCURRENCY) || 4;
const WINDOW_APPROVALS = 10000;


/** 19 rules that each fail on their last condition, then one that approves under a velocity limit. */
function twentyRules(): ApprovalRule[] {
  const rules: ApprovalRule[] = [];
  for (let i = 0; i < 19; i++) {
    const base: ApprovalRule = { name: `rule ${i + 1}`, decision: i % 2 ? 'reject' : 'hold', actionTypes: ['ApproveTransfer', 'ApproveWithdraw'], assets: ['BTC-TESTNET', 'ETH-TESTNET'] };
    switch (i % 4) {
      case 0:
        rules.push({ ...base, maxAmount: '0.000001' });
        break;
      case 1:
        rules.push({ ...base, minAmount: '0.01', referencePattern: '^PAYROLL-' });
        break;
      case 2:
        rules.push({ ...base, destinations: ['wallet-a', 'wallet-b', 'tb1qexampleexampleexample'], velocityAmount: '5' });
        break;
      default:
        rules.push({ ...base, benefitOfPattern: '^Globex', velocityCount: '100000' });
    }
  }
  rules.push({ name: 'approve under the daily limit', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '1', velocityAmount: '1000000', velocityCount: '1000000', velocityWindowHours: '24' });
  return rules;
}

/** Write `n` accepted approvals of BTC-TESTNET spread over the last 20 hours into a new audit file. */
async function prefill(file: string, n: number): Promise<void> {
  const { log } = await AuditLog.open(file);
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const at = new Date(now - 20 * 3600_000 + Math.floor((i * 20 * 3600_000) / n)).toISOString();
    const id = `prefill-${i}`;
    void log.append({ kind: 'decision', decision: 'approve', rule: { index: 19, name: 'approve under the daily limit' }, reasons: [], action_id: id, client_id: 'bench', type: 'ApproveTransfer', asset: 'BTC-TESTNET', amount: '1000', amountDecimal: '0.00001', destination: 'w', velocity: null, mode: 'live', decidedAt: at });
    void log.append({ kind: 'result', mode: 'live', action_id: id, client_id: 'bench', ok: true, statusCode: 200, at });
  }
  await log.close();
}

let actionSeq = 0;
/** A pending ApproveTransfer action with its details, as the core client feed node sends it. */
function action(): Record<string, unknown> {
  const id = `bench-action-${process.pid}-${++actionSeq}`;
  return {
    id,
    action_id: id,
    client_id: 'bench',
    type: 'ApproveTransfer',
    status: 'pending',
    timestamp: Math.floor(Date.now() / 1000),
    expireTime: Math.floor(Date.now() / 1000) + 3600,
    details: { txID: `tx-${id}`, asset: 'BTC-TESTNET', amount: 150000, fees: 2, netAmount: 149998, reference: 'INV-1', benefitOf: 'Acme', companyID: 'c', fundID: 'f', recipientAddress: 'wallet-c', expires: Math.floor(Date.now() / 1000) + 3600 },
  };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

function median(xs: number[]): number {
  return percentile(xs, 50);
}

async function main(): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-approver-'));
  const { child, sim } = await startSimulatorProcess(dataDir, true);
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
  const nodeAudit = path.join(dataDir, 'audit-node.jsonl');
  const libAudit = path.join(dataDir, 'audit-lib.jsonl');
  await prefill(nodeAudit, WINDOW_APPROVALS);
  await prefill(libAudit, WINDOW_APPROVALS);
  const rules = twentyRules();

  const userDir = path.join(dataDir, 'node-red');
  const flows = [
    { id: 'tab', type: 'tab', label: 'bench' },
    { id: 'cfg', type: 'custody-config', environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: 30 },
    { id: 'dry', z: 'tab', type: 'custody-approver', connection: 'cfg', rules, defaultDecision: 'hold', dryRun: true, auditFile: nodeAudit, x: 100, y: 100, wires: [['dryOut'], ['dryOut'], ['dryOut']] },
    { id: 'dryOut', z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'false', x: 300, y: 100, wires: [] },
    { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: sim.demo.core_client_id, details: true, x: 100, y: 200, wires: [['live']] },
    {
      id: 'live',
      z: 'tab',
      type: 'custody-approver',
      connection: 'cfg',
      rules: [{ name: 'bench transfers', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '0.001', referencePattern: '^latency-bench$' }],
      defaultDecision: 'hold',
      dryRun: false,
      auditFile: path.join(dataDir, 'audit-live.jsonl'),
      x: 300,
      y: 200,
      wires: [[], [], []],
    },
    { id: 'track', z: 'tab', type: 'custody-track', connection: 'cfg', kind: 'transfer', company_id: sim.demo.company_id, progress: false, x: 100, y: 300, wires: [['trackOut'], []] },
    { id: 'trackOut', z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'false', x: 300, y: 300, wires: [] },
  ];
  const RED = await startEmbeddedRed(userDir, flows, { cfg: { apiKey: sim.apiKey, privateKey: sim.privateKeyPem } });
  await new Promise((r) => setTimeout(r, 1000));
  const dry = RED.nodes.getNode('dry');
  const dryOut = RED.nodes.getNode('dryOut');
  const track = RED.nodes.getNode('track');
  const trackOut = RED.nodes.getNode('trackOut');
  if (!dry || !dryOut || !track || !trackOut) throw new Error('the bench flow did not start');

  // 1. Dry-run decisions per second, through the node and through lib.
  let outCount = 0;
  let wrongRule = 0;
  dryOut.on('input', (msg: { decision: { rule: { index: number } | null } }) => {
    outCount++;
    if (msg.decision.rule?.index !== 19) wrongRule++;
  });
  async function viaNode(n: number): Promise<number> {
    const target = outCount + n;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      dry.receive({ payload: action() });
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    while (outCount < target) await new Promise((r) => setTimeout(r, 1));
    return n / (Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const approver = await Approver.open({ rules: compileRules(rules), mode: 'dryRun', auditFile: libAudit, client: async () => client });
  async function viaLib(n: number): Promise<number> {
    const t0 = process.hrtime.bigint();
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) all.push(approver.decide(action()));
    await Promise.all(all);
    return n / (Number(process.hrtime.bigint() - t0) / 1e9);
  }
  await viaNode(2000);
  await viaLib(2000);
  const nodeRates: number[] = [];
  const libRates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    nodeRates.push(await viaNode(DECISIONS));
    libRates.push(await viaLib(DECISIONS));
    console.log(`round ${r + 1}: node ${nodeRates[r].toFixed(0)} decisions/s, lib ${libRates[r].toFixed(0)} decisions/s, ratio node/lib ${(nodeRates[r] / libRates[r]).toFixed(3)}`);
  }
  await approver.close();

  // 2. Latency: POST transfer -> feed -> approver -> approved_transfer seen by custody-track.
  const waiting = new Map<string, (state: string) => void>();
  trackOut.on('input', (msg: { payload: { txID?: string }; track?: { tx_id: string; state: string } }) => {
    const id = msg.track?.tx_id ?? msg.payload.txID ?? '';
    waiting.get(id)?.(msg.track?.state ?? '');
    waiting.delete(id);
  });
  const latencies: number[] = [];
  const notApproved: string[] = [];
  async function one(): Promise<void> {
    const t0 = process.hrtime.bigint();
    const res = await createTransfer(client, benchTransfer(sim.demo, 1000, { reference: 'latency-bench' }));
    const state = await new Promise<string>((resolve) => {
      waiting.set(res.data.tx_id, resolve);
      track.receive({ payload: { tx_id: res.data.tx_id, company_id: sim.demo.company_id } });
    });
    if (state !== 'approved_transfer') notApproved.push(state);
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  let started = 0;
  async function worker(n: number): Promise<void> {
    while (started < n) {
      started++;
      await one();
    }
  }
  await Promise.all(Array.from({ length: LATENCY_CONCURRENCY }, () => worker(20)));
  latencies.length = 0;
  started = 0;
  await Promise.all(Array.from({ length: LATENCY_CONCURRENCY }, () => worker(LATENCY_N)));

  const nodeRate = median(nodeRates);
  const libRate = median(libRates);
  console.log('');
  console.log(`Node ${process.version}, ${os.cpus().length} cores; simulator in a child process, persistence on`);
  console.log(`dry-run decisions, 20 rules, ${WINDOW_APPROVALS} approvals in the velocity window, ${DECISIONS} per round, ${ROUNDS} rounds:`);
  console.log(`  custody-approver node: ${nodeRate.toFixed(0)} decisions/s (median); goal >= 5000`);
  console.log(`  lib Approver:          ${libRate.toFixed(0)} decisions/s (median); ratio node/lib ${(nodeRate / libRate).toFixed(3)}`);
  console.log(`  decisions by another rule than the 20th: ${wrongRule}`);
  console.log(`POST transfer -> feed -> approver -> approved_transfer seen by custody-track, ${LATENCY_N} transfers, ${LATENCY_CONCURRENCY} at a time:`);
  console.log(`  p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
  if (notApproved.length) console.log(`  not approved_transfer: ${notApproved.length} (${notApproved.slice(0, 3).join(', ')})`);

  await RED.stop();
  client.close();
  await stopSimulatorProcess(child);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return wrongRule || notApproved.length ? 1 : 0;
}

runMain(main);
