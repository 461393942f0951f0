/**
 * The lean lib transport (lib/client/transport.ts; docs/performance.md, the transport group): lib's
 * signed client against a minimal client written here (node:http keep-alive agent + node:crypto
 * sign, nothing else), and the custody-transfer node against lib, in one run, at concurrency 1, 8
 * and 64.
 *
 * Every side sends the same request: a signed POST /company/{id}/transfer (spec section 4) of
 * 1 base unit with a fresh partner_txID, timestamp-signed as spec section 5.3 says (timestamp +
 * full URL + body bytes, SHA-256, RSA PKCS#1 v1.5, URL-safe base64 without padding). The
 * simulator runs in a child process with persistence off (bench/harness.ts). Rounds alternate the
 * order of the sides; each figure is the median over rounds, each ratio the median of the
 * per-round ratios. CPU per request is `process.cpuUsage()` of this process (everything on the
 * client side: the bench, lib, Node-RED) divided by the requests of the round.
 *
 * Sides:
 * - `minimal`: the floor a client cannot go below (no validation, no retries, no journal).
 * - `lib`: `client.request('POST', '/company/{id}/transfer', {body, idempotent: true})` on a
 *   {@link CustodyClient}: lib's signed client, the request createTransfer sends.
 * - `operation`: `createTransfer(client, ...)`, what the node calls: lib's input validation, asset
 *   check and submission logic over the same client, no journal (reported, not judged).
 * - `journal`: the same with a submission journal file (`openSharedJournal`, fsync per commit),
 *   as the node has one (custody-config opens one per account): the node/lib rows compare the
 *   node with this side, so they measure Node-RED and the node's own code, not the journal.
 * - `node`: a custody-transfer node in an embedded Node-RED, messages in with `node.receive`.
 * - `nonce`: lib with `signingMode: 'nonce'` (compared with `lib`, timestamp mode, at 64).
 *
 * Environment / options: BENCH_TRANSPORT_N (requests per side per round, default 200),
 * BENCH_TRANSPORT_ROUNDS (default 7), BENCH_TRANSPORT_CONCURRENCY (comma list, default 1,8,64).
 * `BENCH_TRANSPORT_N=100 BENCH_TRANSPORT_ROUNDS=2` is a quick check.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { createPrivateKey, sign as rsaSign, type KeyObject } from 'node:crypto';
import { CustodyClient, createTransfer, openSharedJournal } from '../lib';
import { benchTransfer, measure, startSimulatorProcess, stopSimulatorProcess, transferNodePath, type Measured, type SimInfo } from './harness';
import { atLeast, atMost, median, printWhenMain, type BenchRow } from './table';

/** Options of {@link run}; each defaults to its environment variable, then to the documented default. */
export interface TransportBenchOptions {
  /** Requests per side per round (default 200). */
  n?: number;
  /** Measured rounds per concurrency (default 7). */
  rounds?: number;
  /** Concurrencies measured (default [1, 8, 64]). */
  concurrency?: number[];
}

/** One measured round of one side: requests per second and this process's CPU µs per request. */
/**
 * The minimal client: one keep-alive agent, the key parsed once, sign, send, read the JSON answer.
 * @returns a function sending one signed transfer; it rejects for a non-2xx answer.
 */
function minimalClient(sim: SimInfo): { one: () => Promise<void>; close: () => void } {
  const agent = new http.Agent({ keepAlive: true });
  const key: KeyObject = createPrivateKey(sim.privateKeyPem);
  const url = `${sim.baseUrl}/company/${sim.demo.company_id}/transfer`;
  const u = new URL(url);
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const { company_id, ...payload } = benchTransfer(sim.demo);
      void company_id;
      const body = Buffer.from(JSON.stringify(payload));
      const ts = String(Math.floor(Date.now() / 1000));
      const sig = rsaSign('sha256', Buffer.concat([Buffer.from(ts + url), body]), key).toString('base64url');
      const req = http.request(
        {
          agent,
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: { accept: 'application/json', 'content-type': 'application/json', 'content-length': body.length, 'x-api-key': sim.apiKey, 'x-timestamp': ts, 'x-sign': sig },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            if (res.statusCode !== 200) reject(new Error(`minimal: HTTP ${res.statusCode} ${JSON.stringify(parsed)}`));
            else resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { one, close: () => agent.destroy() };
}

/** Requests per second and CPU per request as `a vs b` text. */
function figures(a: number, b: number, unit: string): string {
  return `${a.toFixed(0)} vs ${b.toFixed(0)} ${unit}`;
}

/**
 * Measure the transport: see the module comment.
 * @returns rows: lib/minimal req/s (>= 0.85x) and CPU per request (<= 1.2x) at each concurrency,
 *   node/lib req/s (>= 0.95x; createTransfer with a journal file, as the node), createTransfer
 *   against minimal and with/without a journal file (report), warnings seen (0), nonce/timestamp req/s at the highest concurrency.
 * @throws {Error} when any request fails (rejects).
 */
export async function run(opts: TransportBenchOptions = {}): Promise<BenchRow[]> {
  const n = opts.n ?? (Number(process.env.BENCH_TRANSPORT_N) || 200);
  const rounds = opts.rounds ?? (Number(process.env.BENCH_TRANSPORT_ROUNDS) || 7);
  const levels = opts.concurrency ?? (process.env.BENCH_TRANSPORT_CONCURRENCY ? process.env.BENCH_TRANSPORT_CONCURRENCY.split(',').map(Number) : [1, 8, 64]);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-transport-'));
  const { child, sim } = await startSimulatorProcess(dataDir, false);
  const minimal = minimalClient(sim);
  const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem });
  const nonceClient = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem, signingMode: 'nonce' });
  const lease = await openSharedJournal(path.join(dataDir, 'lib-journal', 'journal.jsonl'));
  const viaLib = (c: CustodyClient) => () => {
    const { company_id, ...body } = benchTransfer(sim.demo);
    return c.request('POST', `/company/${company_id}/transfer`, { body, idempotent: true }).then(() => undefined);
  };
  const viaOperation = () => createTransfer(client, benchTransfer(sim.demo)).then(() => undefined);
  const viaJournal = () => createTransfer(client, benchTransfer(sim.demo), { journal: lease.journal }).then(() => undefined);
  const node = await transferNodePath(sim, path.join(dataDir, 'node-red'), 'bench-transport');
  const sides: Record<string, () => Promise<void>> = { minimal: minimal.one, lib: viaLib(client), operation: viaOperation, journal: viaJournal, node: node.one, nonce: viaLib(nonceClient) };
  const rows: BenchRow[] = [];
  try {
    // Warm up every side (connections, JIT).
    for (const one of Object.values(sides)) await measure(100, 8, one);
    const top = Math.max(...levels);
    for (const c of levels) {
      const names = c === top ? ['minimal', 'lib', 'operation', 'journal', 'node', 'nonce'] : ['minimal', 'lib', 'operation', 'journal', 'node'];
      const got: Record<string, Measured[]> = Object.fromEntries(names.map((s) => [s, []]));
      for (let r = 0; r < rounds; r++) {
        // Alternate the order so no side always meets the fuller simulator state.
        const order = r % 2 === 0 ? names : [...names].reverse();
        for (const s of order) got[s].push(await measure(n, c, sides[s]));
      }
      const ratio = (a: string, b: string, f: (m: Measured) => number) => median(got[a].map((m, i) => f(m) / f(got[b][i])));
      const med = (s: string, f: (m: Measured) => number) => median(got[s].map(f));
      const rate = (m: Measured) => m.rate;
      const cpu = (m: Measured) => m.cpuMicros;
      rows.push(atLeast('transport', `lib/minimal req/s, concurrency ${c}`, figures(med('lib', rate), med('minimal', rate), 'req/s'), ratio('lib', 'minimal', rate), 0.85));
      rows.push(atMost('transport', `lib/minimal CPU per request, concurrency ${c}`, figures(med('lib', cpu), med('minimal', cpu), 'µs'), ratio('lib', 'minimal', cpu), 1.2));
      rows.push(atLeast('transport', `node/lib req/s (createTransfer + journal file), concurrency ${c}`, figures(med('node', rate), med('journal', rate), 'req/s'), ratio('node', 'journal', rate), 0.95));
      const report = (measure: string, a: string, b: string, f: (m: Measured) => number, unit: string) =>
        rows.push({ group: 'transport', measure: `${measure}, concurrency ${c}`, figures: figures(med(a, f), med(b, f), unit), value: ratio(a, b, f), goal: 'report', pass: true });
      report('createTransfer/minimal req/s', 'operation', 'minimal', rate, 'req/s');
      report('createTransfer/minimal CPU per request', 'operation', 'minimal', cpu, 'µs');
      report('createTransfer with journal file/without req/s', 'journal', 'operation', rate, 'req/s');
      report('node/createTransfer without journal file req/s', 'node', 'operation', rate, 'req/s');
      if (c === top) rows.push({ group: 'transport', measure: `nonce/timestamp req/s (lib), concurrency ${c}`, figures: figures(med('nonce', rate), med('lib', rate), 'req/s'), value: ratio('nonce', 'lib', rate), goal: 'report', pass: true });
    }
  } finally {
    process.off('warning', onWarning);
    await node.stop();
    await client.close();
    await nonceClient.close();
    await lease.release();
    minimal.close();
    await stopSimulatorProcess(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  rows.push(atMost('transport', 'process warnings during the run', warnings.length ? [...new Set(warnings)].join('; ').slice(0, 120) : 'none', warnings.length, 0, ''));
  return rows;
}

printWhenMain(module, run);
