/**
 * A recording proxy in front of the simulator, for the runtime tests of the operation nodes:
 * what each request the nodes sent carried (method, path, JSON body).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request that reached the simulator through the proxy. */
export interface Seen {
  method: string;
  path: string;
  body: any;
}

/**
 * A loopback proxy to the simulator that records each request (method, path with query, JSON
 * body). The Host header is passed on as the client sent it: the simulator checks the signature
 * over the URL the client addressed.
 */
export class RecordingProxy {
  readonly seen: Seen[] = [];
  #server?: http.Server;
  /** The proxy's origin, e.g. `http://127.0.0.1:PORT` (empty until started). */
  origin = '';
  /** Listen on a free loopback port and pass each request on to `origin` (the simulator's, e.g. `http://127.0.0.1:PORT`). */
  async start(origin: string): Promise<void> {
    const target = new URL(origin);
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.seen.push({ method: req.method ?? '', path: req.url ?? '', body: body.length ? JSON.parse(body.toString()) : undefined });
        const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        out.on('error', () => res.destroy());
        out.end(body);
      });
    });
    await new Promise<void>((r) => this.#server!.listen(0, '127.0.0.1', () => r()));
    this.origin = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    await new Promise((r) => this.#server?.close(r));
  }
  /** The requests other than the asset list. */
  requests(): Seen[] {
    return this.seen.filter((s) => !/\/assets\/?(\?|$)/.test(s.path));
  }
}


/**
 * Register mocha hooks of a suite whose flows reach the simulator through a {@link RecordingProxy}:
 * `before` starts it to the origin of `simulator().baseUrl` (so call this after the hook that
 * starts the simulator, e.g. `useRedRuntime`), `beforeEach` forgets what it saw, `after` stops it.
 * @param simulator a getter of the started simulator.
 * @returns the proxy (its `origin` set once the `before` hook ran).
 */
export function useRecordingProxy(simulator: () => { baseUrl: string }): RecordingProxy {
  const proxy = new RecordingProxy();
  before(() => proxy.start(new URL(simulator().baseUrl).origin));
  beforeEach(() => {
    proxy.seen.length = 0;
  });
  after(() => proxy.stop());
  return proxy;
}
