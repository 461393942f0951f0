/**
 * Signing off the event loop (lib/client/key-source.ts; docs/performance.md, the signing group),
 * every figure measured within one run:
 * - signatures per second: a PKCS#11 token (SoftHSM2, `Pkcs11KeySource`: `C_SignAsync` on a pool
 *   of 4 sessions) against the PEM source (`crypto.sign` with a callback: libuv's thread pool)
 *   and against the synchronous `crypto.sign` on the main thread, 64 signatures in flight;
 * - the event loop's p99 delay (`perf_hooks.monitorEventLoopDelay`, resolution 1 ms: the
 *   lateness of a 1 ms timer, finer than the default 10 ms) during bursts of 64 signed
 *   `GET /assets` made at once (`client.request`) against the simulator, for the PEM source
 *   (goal <= 5 ms), the token, and the old synchronous signing (for comparison), beside the idle
 *   loop's p99 over 1 s (the machine's own noise);
 * - requests per second in those bursts (concurrency 64), the PEM source against the old
 *   synchronous signing (goal >= 1.2x), against the simulator (a child process verifying every
 *   signature) and against a minimal HTTP server (a child process answering `[]` at once, so that
 *   the client's signing is what limits it).
 *
 * The synchronous path is kept here only to compare: a {@link KeySource} whose `sign` runs
 * `crypto.sign` without a callback, on the main thread, as the client did before. Rounds
 * alternate the order of the sides; each figure is the median over rounds, each ratio the median
 * of the per-round ratios. The thread pool has `UV_THREADPOOL_SIZE` threads (4 unless set; the
 * row figures print it) and the machine `os.availableParallelism()` cores, shared with the
 * server's child process.
 *
 * The token is SoftHSM2's (`/usr/lib/softhsm/libsofthsm2.so`, Debian package softhsm2), made in a
 * temporary directory with the simulator's key imported (`softhsm2-util --import`), deleted
 * afterwards. Environment / options: BENCH_SIGNING_N (signatures or requests per side per round,
 * default 2000), BENCH_SIGNING_ROUNDS (default 3).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, sign as rsaSign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { CustodyClient, PemKeySource, Pkcs11KeySource, type KeySource } from '../lib';
import { createSoftHsm, importKey, initToken, PIN, removeSoftHsm, SOFTHSM_MODULE } from '../test/helpers/softhsm';
import { measure, startSimulatorProcess, stopSimulatorProcess } from './harness';
import { atLeast, atMost, median, printWhenMain, type BenchRow } from './table';

/** Options of {@link run}; each defaults to its environment variable, then to the documented default. */
export interface SigningBenchOptions {
  /** Signatures or requests per side per round (default 2000). */
  n?: number;
  /** Measured rounds (default 3). */
  rounds?: number;
}

/** In flight at once, for every measure. */
const CONCURRENCY = 64;

/** The old path, kept to compare: `crypto.sign` without a callback, on the main thread. */
class SyncKeySource implements KeySource {
  readonly kind = 'pem';
  readonly #key: KeyObject;
  constructor(pem: string) {
    this.#key = createPrivateKey(pem);
  }
  open(): Promise<void> {
    return Promise.resolve();
  }
  sign(payload: Buffer): Promise<Buffer> {
    return Promise.resolve(rsaSign('sha256', payload, this.#key));
  }
  publicKey(): Promise<KeyObject> {
    return Promise.reject(new Error('not used'));
  }
  fingerprint(): Promise<string> {
    return Promise.reject(new Error('not used'));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A loopback HTTP server in a child process answering every request `[]` at once; resolves with its port. */
async function startMinimalServer(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const code = `const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('[]'); }); });
s.keepAliveTimeout = 60000;
s.listen(0, '127.0.0.1', () => process.send(s.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve(m as number));
    child.once('exit', (c) => reject(new Error(`minimal server exited with ${c}`)));
  });
  return { child, baseUrl: `http://127.0.0.1:${port}/api/v1/p` };
}

/** Signatures per second of `source`, `n` signatures with {@link CONCURRENCY} in flight. */
async function signaturesPerSecond(source: KeySource, n: number): Promise<number> {
  let i = 0;
  return (await measure(n, CONCURRENCY, async () => void (await source.sign(Buffer.from(`1700000000https://api.example/api/v1/p/assets?i=${i++}`))))).rate;
}

/**
 * Bursts of {@link CONCURRENCY} signed `GET /assets` made at once through `client` (each burst
 * awaited before the next), `n` requests in all.
 * @returns requests per second and the event loop's p99 delay during the bursts, ms.
 */
async function bursts(client: CustodyClient, n: number): Promise<{ rate: number; p99: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  for (let done = 0; done < n; done += CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n - done) }, () => client.request('GET', '/assets')));
  }
  const seconds = (performance.now() - t0) / 1000;
  h.disable();
  return { rate: n / seconds, p99: h.percentile(99) / 1e6 };
}

/** The event loop's p99 delay (ms) over `ms` milliseconds with nothing to do: the machine's own noise. */
async function idleDelay(ms: number): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await new Promise((r) => setTimeout(r, ms));
  h.disable();
  return h.percentile(99) / 1e6;
}

/** Run the benchmark. @returns its rows. @throws when SoftHSM2 is missing or a request fails. */
export async function run(opts: SigningBenchOptions = {}): Promise<BenchRow[]> {
  const n = opts.n ?? Number(process.env.BENCH_SIGNING_N ?? 2000);
  const rounds = opts.rounds ?? Number(process.env.BENCH_SIGNING_ROUNDS ?? 3);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-signing-'));
  const hsm = createSoftHsm();
  const { child: simChild, sim } = await startSimulatorProcess(dataDir, false);
  const minimal = await startMinimalServer();
  initToken(hsm, 'Bench');
  importKey(hsm, 'Bench', 'K', '01', sim.privateKeyPem);
  const sources = {
    token: () => new Pkcs11KeySource({ module: SOFTHSM_MODULE, tokenLabel: 'Bench', keyLabel: 'K', pin: PIN }),
    pem: () => new PemKeySource(sim.privateKeyPem),
    sync: () => new SyncKeySource(sim.privateKeyPem),
  };
  type Side = keyof typeof sources;
  const sides: Side[] = ['token', 'pem', 'sync'];
  const sigs: Record<Side, number[]> = { token: [], pem: [], sync: [] };
  const sim64: Record<Side, { rate: number; p99: number }[]> = { token: [], pem: [], sync: [] };
  const min64: Record<'pem' | 'sync', number[]> = { pem: [], sync: [] };
  const idle: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      idle.push(await idleDelay(1000));
      const order = r % 2 ? [...sides].reverse() : sides;
      for (const side of order) {
        const source = sources[side]();
        await source.open();
        sigs[side].push(await signaturesPerSecond(source, n));
        await source.close();
        const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, keySource: sources[side](), attempts: 1 });
        await client.request('GET', '/assets');
        sim64[side].push(await bursts(client, n));
        await client.close();
        if (side !== 'token') {
          const toMinimal = new CustodyClient({ baseUrl: minimal.baseUrl, apiKey: 'bench', keySource: sources[side](), attempts: 1 });
          await toMinimal.request('GET', '/ping');
          min64[side].push((await bursts(toMinimal, n)).rate);
          await toMinimal.close();
        }
      }
    }
  } finally {
    minimal.child.kill();
    await stopSimulatorProcess(simChild);
    fs.rmSync(dataDir, { recursive: true, force: true });
    removeSoftHsm(hsm);
  }
  const med = (xs: number[]): number => median(xs);
  const ratio = (a: number[], b: number[]): number => median(a.map((x, i) => x / b[i]));
  const pool = `UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}, ${os.availableParallelism()} cores`;
  const f = (x: number): string => String(Math.round(x));
  const ms = (x: number): string => `${x.toFixed(2)} ms`;
  const rates = (side: Side): number[] => sim64[side].map((m) => m.rate);
  const p99 = (side: Side): number => med(sim64[side].map((m) => m.p99));
  return [
    { group: 'signing', measure: `signatures/s, token (SoftHSM2) vs PEM source, ${CONCURRENCY} in flight`, figures: `${f(med(sigs.token))} vs ${f(med(sigs.pem))} sig/s (sync crypto.sign ${f(med(sigs.sync))}; ${pool})`, value: ratio(sigs.token, sigs.pem), goal: 'report', pass: true },
    atMost('signing', `event loop p99 delay, bursts of ${CONCURRENCY} signed requests (PEM source, simulator)`, `${ms(p99('pem'))} (token ${ms(p99('token'))}, old sync signing ${ms(p99('sync'))}; idle ${ms(med(idle))}; resolution 1 ms)`, p99('pem'), 5, ' ms'),
    atMost('signing', `event loop p99 delay, bursts of ${CONCURRENCY} signed requests (token, simulator)`, ms(p99('token')), p99('token'), 5, ' ms'),
    atLeast('signing', `req/s in bursts of ${CONCURRENCY}, PEM source vs sync signing (minimal server)`, `${f(med(min64.pem))} vs ${f(med(min64.sync))} req/s`, ratio(min64.pem, min64.sync), 1.2),
    atLeast('signing', `req/s in bursts of ${CONCURRENCY}, PEM source vs sync signing (simulator)`, `${f(med(rates('pem')))} vs ${f(med(rates('sync')))} req/s (token ${f(med(rates('token')))})`, ratio(rates('pem'), rates('sync')), 1.2),
  ];
}

printWhenMain(module, run);
