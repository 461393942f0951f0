/**
 * A loopback proxy in front of the simulator that makes approve and reject calls slow on the way
 * back: each `PUT` or `DELETE /coreclient/{client_id}/action/{action_id}` (spec section 4) is
 * forwarded, the simulator applies it and answers, and the proxy keeps that answer for
 * {@link ApprovalProxyOptions.holdMs} before passing it on (a slow network after the API has
 * applied the call). Every other request is forwarded as is, websocket upgrades included (a byte
 * pipe: the core client feed goes through the proxy too).
 *
 * It listens on one port per Node-RED instance ({@link ApprovalProxy.listen}), records every
 * request ({@link ProxiedRequest}: instance, method, path, the simulator's status, and for a
 * decision call when its answer was held and whether the client was still there to get it), and
 * emits `held` with the record when a decision call's answer starts being held: the moment a test
 * knows an approve call is in flight on the client's side though the API has applied it.
 * No dependency beyond node:http and node:net.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { closeProxy, tunnelUpgrade } from './red-fleet';

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  /** Arrival order, from 1. */
  seq: number;
  /** The instance whose port it came through ({@link ApprovalProxy.listen}). */
  instance: string;
  method: string;
  /** The path without its query, e.g. `/api/v1/p/coreclient/demo-approver/action/...`. */
  path: string;
  /** For a decision call (PUT/DELETE of an action): the action id (decoded). */
  action_id?: string;
  /** The simulator's HTTP status, once it answered (absent: not answered, or it could not be reached). */
  status?: number;
  /** Decision calls: the how-manyth answer held (1-based, in the order the simulator answered). */
  heldSeq?: number;
  /** Decision calls: when the simulator's answer started being held, epoch ms. */
  heldAt?: number;
  /** Decision calls: how long the answer is held, ms. */
  holdMs?: number;
  /** Decision calls: true once the answer was passed on, false when the client had gone (closed its connection) before. */
  delivered?: boolean;
  /** True when the client closed the connection before getting the answer. */
  clientGone?: boolean;
}

/** Options of an {@link ApprovalProxy}. */
export interface ApprovalProxyOptions {
  /** The simulator's v1 base URL, e.g. `http://127.0.0.1:PORT/api/v1/p` (loopback). */
  target: string;
  /** How long a decision call's answer is held after the simulator answered, ms: a number, or a function of the call (its `heldSeq` set). */
  holdMs: number | ((call: ProxiedRequest) => number);
}

/** The path of an approve (PUT) or reject (DELETE) call, spec section 4. */
const DECISION_PATH = /\/coreclient\/([^/?]+)\/action\/([^/?]+)\/?(?:\?|$)/;

/**
 * The proxy. `listen(name)` per instance after construction, `stop()` at the end. Emits
 * `held` (record) when a decision call's answer starts being held.
 */
export class ApprovalProxy extends EventEmitter {
  /** Every request, in arrival order. */
  readonly records: ProxiedRequest[] = [];
  readonly #target: URL;
  readonly #holdMs: (call: ProxiedRequest) => number;
  #held = 0;
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  readonly #servers: http.Server[] = [];
  readonly #tunnels = new Set<net.Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();

  /** @param options target and hold time ({@link ApprovalProxyOptions}). */
  constructor(options: ApprovalProxyOptions) {
    super();
    this.#target = new URL(options.target);
    const hold = options.holdMs;
    this.#holdMs = typeof hold === 'number' ? () => hold : hold;
  }

  /**
   * Listen on a new free loopback port for `instance`.
   * @returns the base URL that instance uses instead of the simulator's (same path).
   */
  async listen(instance: string): Promise<string> {
    const server = http.createServer((req, res) => this.#forward(instance, req, res));
    server.keepAliveTimeout = 30000;
    server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => tunnelUpgrade(this.#target, req, socket, head, this.#tunnels));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.#servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}${this.#target.pathname.replace(/\/+$/, '')}`;
  }

  /** The decision calls (PUT/DELETE of an action) so far. */
  decisionCalls(): ProxiedRequest[] {
    return this.records.filter((r) => r.action_id !== undefined);
  }

  /** The decision calls per action id. */
  callsPerAction(): Map<string, ProxiedRequest[]> {
    const map = new Map<string, ProxiedRequest[]>();
    for (const r of this.decisionCalls()) {
      const list = map.get(r.action_id!);
      if (list) list.push(r);
      else map.set(r.action_id!, [r]);
    }
    return map;
  }

  /** The decision calls whose answer is being held now (applied by the simulator, not yet passed on). */
  inHold(): ProxiedRequest[] {
    return this.decisionCalls().filter((r) => r.heldAt !== undefined && r.delivered === undefined);
  }

  /** The decision calls forwarded and not yet answered to the client (waiting for the simulator, or held). */
  inFlight(): ProxiedRequest[] {
    return this.decisionCalls().filter((r) => r.delivered === undefined && !(r.clientGone && r.status === undefined));
  }

  /**
   * Resolve with the next `held` record that `match` accepts (any when absent), or undefined after `timeoutMs`.
   */
  nextHeld(match: (r: ProxiedRequest) => boolean = () => true, timeoutMs = 60000): Promise<ProxiedRequest | undefined> {
    return new Promise((resolve) => {
      const on = (r: ProxiedRequest) => {
        if (!match(r)) return;
        clearTimeout(timer);
        this.off('held', on);
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.off('held', on);
        resolve(undefined);
      }, timeoutMs);
      this.on('held', on);
    });
  }

  /** Cancel the held answers, close every connection and tunnel and the servers. */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await closeProxy(this.#servers, this.#tunnels, this.#agent);
  }

  #forward(instance: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    const pathOnly = (req.url ?? '/').split('?')[0];
    const record: ProxiedRequest = { seq: this.records.length + 1, instance, method: req.method ?? 'GET', path: pathOnly };
    const m = (req.method === 'PUT' || req.method === 'DELETE') && DECISION_PATH.exec(req.url ?? '');
    if (m) record.action_id = decodeURIComponent(m[2]);
    this.records.push(record);
    const headers = { ...req.headers };
    delete headers.connection;
    delete headers['keep-alive'];
    // The Host header stays the client's: the signature covers the URL as the client addressed it (spec section 5).
    const out = http.request({ hostname: this.#target.hostname, port: this.#target.port, method: req.method, path: req.url, headers, agent: this.#agent });
    res.on('error', () => undefined);
    res.once('close', () => {
      if (!res.writableFinished) record.clientGone = true;
    });
    out.on('response', (answer) => {
      record.status = answer.statusCode;
      const back = { ...answer.headers };
      delete back.connection;
      delete back['keep-alive'];
      if (!m) {
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
        return;
      }
      // A decision call: read the whole answer (the simulator has applied the call), hold it, then pass it on.
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        record.heldSeq = ++this.#held;
        record.holdMs = Math.max(0, Math.round(this.#holdMs(record)));
        record.heldAt = Date.now();
        this.emit('held', record);
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          if (res.destroyed || record.clientGone) {
            record.delivered = false;
            return;
          }
          res.writeHead(answer.statusCode ?? 502, back);
          res.end(Buffer.concat(parts));
          record.delivered = true;
        }, record.holdMs);
        this.#timers.add(timer);
      });
    });
    out.on('error', () => req.socket.destroy());
    req.on('error', () => out.destroy());
    req.pipe(out);
  }
}
