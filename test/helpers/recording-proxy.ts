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
  constructor(private readonly target: string) {}
  /** The proxy's origin, e.g. `http://127.0.0.1:PORT`. */
  origin = '';
  async start(): Promise<void> {
    const target = new URL(this.target);
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
 * `before` starts one to the origin of `simulator().baseUrl` (so call this after the hook that
 * starts the simulator, e.g. `useRedRuntime`), `beforeEach` forgets what it saw, `after` stops it.
 * @param simulator a getter of the started simulator.
 * @returns a getter of the started proxy (undefined before the `before` hook ran).
 */
export function useRecordingProxy(simulator: () => { baseUrl: string }): () => RecordingProxy {
  let proxy: RecordingProxy | undefined;
  before(async () => {
    proxy = new RecordingProxy(new URL(simulator().baseUrl).origin);
    await proxy.start();
  });
  beforeEach(() => {
    if (proxy) proxy.seen.length = 0;
  });
  after(() => proxy?.stop());
  return () => proxy!;
}
