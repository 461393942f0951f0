/**
 * A loopback HTTP server that stands in for a hosted partner API where the tests must count
 * what is sent (nothing for refused input; no second attempt after close) without the simulator.
 * It answers GET /assets with an asset list (the simulator's four assets by default), since every
 * operation with an asset code checks it against GET /assets before sending (lib/client/call.ts
 * `checkAssetCodes`): {@link CountingServer.sent} is what was sent other than that.
 */
import { ASSETS } from '../../simulator/assets';
import type { Asset } from '../../lib';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it (the body as text, read to its end). */
export interface SeenRequest {
  method: string;
  url: string;
  body: string;
}

/** The simulator's assets (simulator/assets.ts `ASSETS`): BTC and ETH, main and test networks. */
export const SIMULATOR_ASSETS: readonly Asset[] = ASSETS;

/** True for a GET of the asset list (`.../assets`, with or without a query string). */
export function isAssetListRequest(request: { method: string; url: string }): boolean {
  return request.method === 'GET' && /\/assets\/?(\?|$)/.test(request.url);
}

/** What to answer one request with. */
export interface CountingAnswer {
  /** HTTP status (default {@link CountingServer.status}). */
  status?: number;
  /** The JSON body text. */
  body: string;
  /** Extra response headers (Content-Type is always `application/json`). */
  headers?: Record<string, string>;
}

/** How a {@link CountingServer} answers and where its base URL points. */
export interface CountingServerOptions {
  /** Path appended to `http://127.0.0.1:<port>` to make {@link CountingServer.baseUrl} (default `/api/v1/p`). */
  path?: string;
  /**
   * Answer a request once its body is read. Default: GET /assets with
   * {@link CountingServer.assets} (status 200 whatever {@link CountingServer.status} is), any
   * other with {@link CountingServer.status} and {@link CountingServer.body} when that is 200,
   * else {@link CountingServer.errorBody}.
   */
  answer?: (request: SeenRequest, server: CountingServer) => CountingAnswer;
}

/**
 * A loopback HTTP server that counts requests as they arrive ({@link CountingServer.requests}),
 * records each once its body is read ({@link CountingServer.seen}), and answers JSON.
 * `await start()` before use, `await stop()` after (it closes every connection).
 */
export class CountingServer {
  /** Requests received so far (counted on arrival, before the body is read), GET /assets included. */
  requests = 0;
  /** GET /assets requests received so far (counted on arrival). */
  assetRequests = 0;
  /** The assets the default answer lists to GET /assets: `{"assets": [...]}`. */
  assets: Asset[] = SIMULATOR_ASSETS.map((a) => ({ ...a }));
  /** Requests whose body has been read, in order. */
  readonly seen: SeenRequest[] = [];
  /** The status the default answer uses (set 503 to see retries). */
  status = 200;
  /** The default answer's body when {@link CountingServer.status} is 200. */
  body = '{"tx_id":"counted","status":"new"}';
  /** The default answer's body otherwise (the spec's error body shape). */
  errorBody = '{"code":503,"msg":"busy"}';
  /** `http://127.0.0.1:<port>` + the path option; set by {@link CountingServer.start}. */
  baseUrl = '';
  readonly #server: http.Server;
  readonly #path: string;

  constructor(options: CountingServerOptions = {}) {
    const path = options.path ?? '/api/v1/p';
    const answer: (request: SeenRequest, server: CountingServer) => CountingAnswer =
      options.answer ??
      ((request, s) => (isAssetListRequest(request) ? { status: 200, body: JSON.stringify({ assets: s.assets }) } : { status: s.status, body: s.status === 200 ? s.body : s.errorBody }));
    this.#server = http.createServer((req, res) => {
      this.requests += 1;
      if (isAssetListRequest({ method: req.method ?? '', url: req.url ?? '' })) this.assetRequests += 1;
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        const request = { method: req.method!, url: req.url!, body: text };
        this.seen.push(request);
        const out = answer(request, this);
        res.statusCode = out.status ?? this.status;
        res.setHeader('Content-Type', 'application/json');
        for (const [name, value] of Object.entries(out.headers ?? {})) res.setHeader(name, value);
        res.end(out.body);
      });
    });
    this.#path = path;
  }

  /** The requests seen other than GET /assets (the asset list the asset check reads), in order. */
  sent(): SeenRequest[] {
    return this.seen.filter((r) => !isAssetListRequest(r));
  }

  /** Listen on a free loopback port and set {@link CountingServer.baseUrl}. */
  async start(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${this.#path}`;
  }

  /** Close every connection and the server. */
  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

/** A {@link CountingServer} whose error answers carry the spec's `detail` too (spec section 7 error body). */
export function countingServer(): CountingServer {
  const server = new CountingServer();
  server.errorBody = JSON.stringify({ code: 503, msg: 'busy', detail: {} });
  return server;
}
