/**
 * A loopback HTTP proxy between a client and the simulator that injects faults before and after the
 * simulator commits, to check exactly-once payments (docs/testing.md): the fault test
 * (exactly-once.test.ts) and the fault benchmark (bench/exactly-once.ts) put it in front of the
 * simulator's v1 API.
 *
 * Per request whose method and path match a {@link FaultRule}, one fault kind (or none) is drawn
 * with a seeded PRNG ({@link mulberry32}; the seed is `FAULT_SEED` when set, so a run can be
 * repeated as far as the order of concurrent requests allows):
 *
 * | kind | what the client meets | reached the simulator |
 * |---|---|---|
 * | `before503` | a 503 answer | no |
 * | `dropBefore` | the connection closed before any answer | no |
 * | `dropAfter` | the connection closed before any answer | yes: committed (when the simulator said 2xx) |
 * | `after502` | a 502 answer instead of the simulator's | yes |
 * | `holdAfter` | no answer until its timeout (the socket is closed {@link FaultProxyOptions.holdMs} later) | yes |
 * | `sim500`, `sim503` | the simulator's own fault injection (`POST /_simulator/faults/http`), answered before authentication | yes, but nothing committed |
 *
 * Every request is recorded ({@link ProxyRecord}: method, path, `partner_txID` of its body, fault,
 * the simulator's status and `tx_id` when forwarded), so a test knows which calls reached the
 * simulator, and how many requests a step sent. `faults = false` stops drawing faults.
 * No dependency beyond node:http.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fault the proxy injects (see the module comment's table). */
export type FaultKind = 'before503' | 'dropBefore' | 'dropAfter' | 'after502' | 'holdAfter' | 'sim500' | 'sim503';

/** Every {@link FaultKind}, in the order the PRNG's draw is laid over the rates. */
export const FAULT_KINDS: readonly FaultKind[] = ['before503', 'dropBefore', 'dropAfter', 'after502', 'holdAfter', 'sim500', 'sim503'];

/** The faults that happen before the simulator sees the request: nothing can have happened. */
export const BEFORE_COMMIT: ReadonlySet<FaultKind> = new Set(['before503', 'dropBefore', 'sim500', 'sim503']);

/** Which requests a rate table applies to. The first matching rule decides. */
export interface FaultRule {
  /** HTTP method (upper case); any when absent. */
  method?: string;
  /** Matched against the request path (with the `/api/v1/p` prefix, without the query). */
  path: RegExp;
  /** Probability (0..1) of each kind per matching request; their sum at most 1; absent kinds 0. */
  rates: Partial<Record<FaultKind, number>>;
}

/** Options of a {@link FaultProxy}. */
export interface FaultProxyOptions {
  /** The simulator's v1 base URL, e.g. `http://127.0.0.1:PORT/api/v1/p` (loopback). */
  target: string;
  /** The simulator's control URL, e.g. `http://127.0.0.1:PORT/_simulator` (for `sim500`/`sim503`). */
  controlUrl: string;
  /** The rate tables; requests no rule matches are forwarded untouched. */
  rules: FaultRule[];
  /** PRNG seed (32-bit unsigned); default `FAULT_SEED` from the environment, else random. */
  seed?: number;
  /** How long a `holdAfter` answer is held before the connection is closed, ms (default 800): longer than the client's timeout. */
  holdMs?: number;
}

/** One request as the proxy saw it. */
export interface ProxyRecord {
  /** Arrival order, from 1. */
  seq: number;
  method: string;
  /** The path with its query, as sent (`/api/v1/p/company/.../transfer`). */
  path: string;
  /** `partner_txID` of the JSON body, when it has one. */
  partner_txID?: string;
  /** The fault applied; `none` when forwarded and answered as the simulator answered. */
  fault: FaultKind | 'none';
  /** The simulator's HTTP status, when the request was forwarded and answered (absent for `before503`, `dropBefore`). */
  simulatorStatus?: number;
  /** `tx_id` of the simulator's 2xx answer, when it has one. */
  tx_id?: string;
  /** `status` of the simulator's 2xx answer (`new`, `existing`), when it has one. */
  answerStatus?: string;
}

/**
 * Mulberry32: a small seeded PRNG.
 * @param seed 32-bit unsigned seed.
 * @returns a function giving the next number in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed to use: `FAULT_SEED` from the environment when it is an integer, else a random one.
 * @returns a 32-bit unsigned integer.
 */
export function faultSeed(): number {
  const env = process.env.FAULT_SEED;
  if (env !== undefined && /^\d+$/.test(env.trim())) return Number(env.trim()) >>> 0;
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}

/** The fault-injecting proxy. `await start()` before use, `await stop()` after. */
export class FaultProxy {
  /** False stops drawing faults: every request is forwarded and answered as the simulator answers. */
  faults = true;
  /** The PRNG seed of this proxy. */
  readonly seed: number;
  /** Faults applied so far, per kind (`sim500`/`sim503`: answered by the simulator's injection). */
  readonly counts: Record<FaultKind, number>;
  /** Every request, in arrival order. */
  readonly records: ProxyRecord[] = [];
  /** `http://127.0.0.1:<port>` + the target's path: the base URL a client uses instead of the simulator's. */
  baseUrl = '';
  readonly #target: URL;
  readonly #controlUrl: string;
  readonly #rules: FaultRule[];
  readonly #holdMs: number;
  readonly #random: () => number;
  readonly #agent = new http.Agent({ keepAlive: true });
  readonly #server: http.Server;
  readonly #timers = new Set<NodeJS.Timeout>();

  /** @param options target, control URL, rules, seed and hold time (see {@link FaultProxyOptions}). */
  constructor(options: FaultProxyOptions) {
    this.#target = new URL(options.target);
    this.#controlUrl = options.controlUrl;
    this.#rules = options.rules;
    this.#holdMs = options.holdMs ?? 800;
    this.seed = options.seed ?? faultSeed();
    this.#random = mulberry32(this.seed);
    this.counts = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
    this.#server = http.createServer((req, res) => this.#handle(req, res));
    this.#server.keepAliveTimeout = 30000;
  }

  /** Listen on a free loopback port and set {@link FaultProxy.baseUrl}. */
  async start(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${this.#target.pathname.replace(/\/+$/, '')}`;
  }

  /** Close every connection (client and simulator side), cancel held answers, and close the server. */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
    this.#agent.destroy();
  }

  /** Total faults applied so far, all kinds. */
  get injected(): number {
    return FAULT_KINDS.reduce((n, k) => n + this.counts[k], 0);
  }

  /** The records of requests whose body carried `partnerTxId`. */
  recordsOf(partnerTxId: string): ProxyRecord[] {
    return this.records.filter((r) => r.partner_txID === partnerTxId);
  }

  /** Draw the fault of a request: none when faults are off or no rule matches. */
  #draw(method: string, pathName: string): FaultKind | 'none' {
    if (!this.faults) return 'none';
    const rule = this.#rules.find((r) => (!r.method || r.method === method) && r.path.test(pathName));
    if (!rule) return 'none';
    const x = this.#random();
    let sum = 0;
    for (const kind of FAULT_KINDS) {
      sum += rule.rates[kind] ?? 0;
      if (x < sum) return kind;
    }
    return 'none';
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://proxy');
      const record: ProxyRecord = { seq: this.records.length + 1, method: req.method ?? 'GET', path: req.url ?? '/', fault: 'none' };
      const key = partnerTxIdOf(body);
      if (key !== undefined) record.partner_txID = key;
      this.records.push(record);
      const fault = this.#draw(record.method, url.pathname);
      if (fault === 'before503') {
        this.#applied(record, fault);
        res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ code: 503, msg: 'Service Unavailable', detail: { reason: 'fault proxy' } }));
        return;
      }
      if (fault === 'dropBefore') {
        this.#applied(record, fault);
        req.socket.destroy();
        return;
      }
      const armed = fault === 'sim500' || fault === 'sim503' ? this.#armSimulatorFault(record.method, url.pathname, fault === 'sim500' ? 500 : 503) : Promise.resolve();
      armed
        .then(() => this.#forward(req, body))
        .then(
          (answer) => this.#answer(record, fault, answer, req, res),
          () => {
            // The simulator could not be reached (it stopped): nothing was answered.
            req.socket.destroy();
          },
        );
    });
    req.on('error', () => undefined);
    res.on('error', () => undefined);
  }

  /** Count a fault and mark its record. */
  #applied(record: ProxyRecord, fault: FaultKind): void {
    record.fault = fault;
    this.counts[fault]++;
  }

  /**
   * Arm the simulator's own fault for the next matching request (`POST /_simulator/faults/http`,
   * count 1, this method and path): this request, or a concurrent one of the same method and path
   * that reaches the simulator first. Either way it is used up by the time this request has been answered.
   */
  async #armSimulatorFault(method: string, pathName: string, status: number): Promise<void> {
    const below = pathName.startsWith(this.#target.pathname) ? pathName.slice(this.#target.pathname.replace(/\/+$/, '').length) : pathName;
    const res = await fetch(`${this.#controlUrl}/faults/http`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ method, path: below, status, count: 1 }) });
    await res.text();
    if (!res.ok) throw new Error(`arming a simulator fault: ${res.status}`);
  }

  /** Send the request on to the simulator and read its whole answer. */
  #forward(req: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      // The Host header stays the client's: the signature covers the URL as the client addressed it (spec section 5).
      const headers = { ...req.headers };
      delete headers.connection;
      const out = http.request({ protocol: this.#target.protocol, hostname: this.#target.hostname, port: this.#target.port, method: req.method, path: req.url, headers, agent: this.#agent }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: Buffer.concat(parts) }));
        answer.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });
  }

  /** Answer the client after forwarding: as the simulator answered, or with the drawn fault. */
  #answer(record: ProxyRecord, fault: FaultKind | 'none', answer: { status: number; headers: http.IncomingHttpHeaders; body: Buffer }, req: http.IncomingMessage, res: http.ServerResponse): void {
    record.simulatorStatus = answer.status;
    const parsed = parseJson(answer.body);
    if (answer.status >= 200 && answer.status < 300 && parsed && typeof parsed === 'object') {
      const { tx_id, status } = parsed as { tx_id?: unknown; status?: unknown };
      if (typeof tx_id === 'string') record.tx_id = tx_id;
      if (typeof status === 'string') record.answerStatus = status;
    }
    const injected = (parsed as { detail?: { reason?: unknown } } | undefined)?.detail?.reason === 'injected fault';
    if (injected) {
      // The simulator's injection answered this request (armed for it, or for a concurrent one).
      this.#applied(record, answer.status === 500 ? 'sim500' : 'sim503');
    } else if (fault !== 'none' && fault !== 'sim500' && fault !== 'sim503') {
      this.#applied(record, fault);
    }
    switch (injected ? 'none' : fault) {
      case 'dropAfter':
        req.socket.destroy();
        return;
      case 'after502':
        res.writeHead(502, { 'Content-Type': 'text/plain' }).end('Bad Gateway');
        return;
      case 'holdAfter': {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          req.socket.destroy();
        }, this.#holdMs);
        this.#timers.add(timer);
        return;
      }
      default: {
        const headers: http.OutgoingHttpHeaders = { 'Content-Type': String(answer.headers['content-type'] ?? 'application/json') };
        res.writeHead(answer.status, headers).end(answer.body);
      }
    }
  }
}

/** `partner_txID` of a JSON body, when it is a non-empty string there. */
function partnerTxIdOf(body: Buffer): string | undefined {
  const parsed = parseJson(body);
  const key = parsed && typeof parsed === 'object' ? (parsed as { partner_txID?: unknown }).partner_txID : undefined;
  return typeof key === 'string' ? key : undefined;
}

/** The JSON value of a body, `undefined` when it is empty or not JSON. */
function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
