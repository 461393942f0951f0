/**
 * HTTP glue shared by the entry point (index.ts), the API routers (routes.ts, v2/routes.ts) and the
 * control routers (control.ts, v2/routes.ts): the routers themselves (`router` 2.x, the router
 * express 5 is built on, on plain node:http requests and responses), raw body reading with its
 * 1 MB limit, JSON answers, the request path and query, JSON parsing, request validation against
 * the operation's declaration, the group-commit-aware reply with the response check, section 7 error bodies,
 * the control endpoints' guard, and the registration of the API routes of route-table.ts.
 *
 * The simulator served express 5 before; the helpers below do what express did for it, with the
 * same answers (status, headers, bodies): `express.raw({limit: '1mb'})` is {@link rawBodyParser},
 * `res.status().json()` is {@link sendJson}, `req.path` and `req.query` are {@link pathOf} and
 * {@link queryOf}, `req.protocol` is {@link protocolOf}, `res.locals` is set by
 * {@link requestListener}, the app is a {@link createRouter} whose requests come from
 * {@link requestListener}. `router` itself sets `req.params`, `req.baseUrl` and `req.originalUrl`,
 * answers a HEAD with the GET route, and matches paths with or without a trailing `/` and in any
 * case, as express did (it was express's router).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString, type ParsedUrlQuery } from 'node:querystring';
import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import Router from 'router';
import type { ApiOperation, ApiVersion } from '../lib/api/operations';
import type { Engine } from './engine';
import { badRequest, forbidden, notFound, toErrorResponse, unsupportedMediaType } from './errors';
import { checkAnswer } from './response-check';
import { apiRoutes, routeOperation, type SimOperationId } from './route-table';
import { checkRequest } from './validation';

/**
 * A request as the simulator's handlers see it: node's IncomingMessage plus what `router` and
 * {@link rawBodyParser} set on it.
 */
export interface SimRequest extends IncomingMessage {
  /** path ids of the matched route, decoded (`router`; a bad `%` escape answers 400 before any handler) */
  params: Record<string, string>;
  /** the part of the path matched by the routers a request went through, e.g. `/api/v1/p` (`router`) */
  baseUrl: string;
  /** the request target as received, e.g. `/api/v1/p/company?query=x` (`router`; `req.url` is relative to `baseUrl` inside a router) */
  originalUrl: string;
  /** the raw body bytes ({@link rawBodyParser}); undefined when the request had no body */
  body?: Buffer;
}

/** A response as the simulator's handlers see it: node's ServerResponse with `locals` ({@link requestListener}). */
export interface SimResponse extends ServerResponse<IncomingMessage> {
  /** what a middleware in front of a route leaves for it, e.g. the v2 API key; empty at the start of every request */
  locals: Record<string, unknown>;
}

/** `next(err?)`: pass the request on to the next matching handler, or with an error to the error handler. */
export type NextFunction = (err?: unknown) => void;

/** A middleware or route handler. */
export type RequestHandler = (req: SimRequest, res: SimResponse, next: NextFunction) => void;

/** An error handler (four parameters, as `router` tells them apart). */
export type ErrorRequestHandler = (err: unknown, req: SimRequest, res: SimResponse, next: NextFunction) => void;

/**
 * A router (`router` 2.x): a middleware itself, with `get`/`post`/`put`/`delete` routes and `use`
 * middleware, tried in registration order. Paths use path-to-regexp 8 syntax (`/company/:company_id`).
 */
export interface SimRouter {
  (req: SimRequest, res: SimResponse, next: NextFunction): void;
  /** Dispatch a request; `done` is called when no handler answered (with the error, if any). */
  handle(req: SimRequest, res: SimResponse, done: NextFunction): void;
  /** Add middleware (or a router, or an error handler) for every request. */
  use(...handlers: Array<RequestHandler | ErrorRequestHandler | SimRouter>): this;
  /** Add middleware for the requests below `path` (a prefix; inside it `req.url` is relative to it and `req.baseUrl` is it). */
  use(path: string, ...handlers: Array<RequestHandler | ErrorRequestHandler | SimRouter>): this;
  /** Add a GET route (it answers HEAD too). */
  get(path: string, ...handlers: RequestHandler[]): this;
  /** Add a POST route. */
  post(path: string, ...handlers: RequestHandler[]): this;
  /** Add a PUT route. */
  put(path: string, ...handlers: RequestHandler[]): this;
  /** Add a DELETE route. */
  delete(path: string, ...handlers: RequestHandler[]): this;
}

/**
 * A new router, with express's defaults: paths match in any case and with or without a trailing
 * `/` (`caseSensitive` and `strict` false), `req.params` of its own routes only.
 */
export function createRouter(): SimRouter {
  return Router({ caseSensitive: false, strict: false, mergeParams: false }) as unknown as SimRouter;
}

/**
 * The request listener for `http.createServer` / `https.createServer` that serves `app`: gives
 * every response empty `locals` and dispatches to `app`. `app` must end with a catch-all handler
 * and an error handler ({@link errorHandler}), as index.ts's does; a request that still falls
 * through answers the section 7 body of its error, or 404 `path: no route`.
 */
export function requestListener(app: SimRouter): (req: IncomingMessage, res: ServerResponse) => void {
  return (request, response) => {
    const req = request as SimRequest;
    const res = response as SimResponse;
    res.locals = Object.create(null) as Record<string, unknown>;
    app.handle(req, res, (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err) {
        sendJson(res, ...toErrorResponse(err));
        return;
      }
      sendJson(res, 404, notFound(`path: no route ${req.method} ${pathOf(req)}`).toBody());
    });
  };
}

/**
 * The path of a request's URL, without the query: what express gave as `req.path` (parseurl's
 * `pathname`). Inside a router it is relative to the router's mount path (`req.baseUrl`), as
 * `router` rewrites `req.url` there. Not decoded. An absolute-form target
 * (`GET http://host/path`) gives its path.
 */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  if (!url.startsWith('/')) {
    try {
      return new URL(url).pathname;
    } catch {
      // `*` (OPTIONS *) and other non-URLs: the target up to `?` or `#`, below
    }
  }
  return url.replace(/[?#].*$/s, '');
}

/**
 * The query of a request's URL, parsed as express 5 did (its default `simple` query parser:
 * node:querystring's `parse`): a text value per key, an array of texts for a repeated key, `+`
 * and `%` escapes decoded (a bad escape stays as written), at most 1000 keys, no nesting
 * (`a[b]=1` is the key `a[b]`). `{}` without a query.
 */
export function queryOf(req: IncomingMessage): ParsedUrlQuery {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if (q < 0) return parseQueryString('');
  return parseQueryString(url.slice(q + 1).replace(/#.*$/s, ''));
}

/** `https` when the request came over TLS, else `http` (express's `req.protocol`; proxy headers are not trusted). */
export function protocolOf(req: IncomingMessage): 'http' | 'https' {
  return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
}

/**
 * Whether a GET or HEAD answer with `status` is fresh for the request's conditional headers, as
 * express's `req.fresh` judged it for an answer without ETag and Last-Modified (the simulator
 * sends neither): only `If-None-Match: *` without `If-Modified-Since` and without
 * `Cache-Control: no-cache`, for a 2xx or 304.
 */
function isFresh(req: IncomingMessage | undefined, status: number): boolean {
  if (!req || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  if (!((status >= 200 && status < 300) || status === 304)) return false;
  const h = req.headers;
  if (h['if-none-match'] !== '*' || h['if-modified-since']) return false;
  return !/(?:^|,)\s*?no-cache\s*?(?:,|$)/.test(h['cache-control'] ?? '');
}

/**
 * Answer `status` with `body` as JSON, as express's `res.status(status).json(body)` did:
 * `Content-Type: application/json; charset=utf-8` (unless already set), `Content-Length`, no
 * ETag. `undefined` sends no body (node adds `Content-Length: 0`). A HEAD answer carries the
 * headers only; a 204 or 304 (also a fresh GET, see `isFresh`) none of the content headers.
 * @throws {RangeError} when `status` is not an integer in 100..999.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (!Number.isInteger(status) || status < 100 || status > 999) throw new RangeError(`Invalid status code: ${JSON.stringify(status)}`);
  res.statusCode = status;
  const text: string | undefined = JSON.stringify(body);
  if (!res.getHeader('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  let chunk: Buffer | undefined;
  if (text !== undefined) {
    chunk = Buffer.from(text, 'utf8');
    res.setHeader('Content-Length', chunk.length);
  }
  if (isFresh(res.req, status)) res.statusCode = 304;
  if (res.statusCode === 204 || res.statusCode === 304) {
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.removeHeader('Transfer-Encoding');
    chunk = undefined;
  }
  if (res.req?.method === 'HEAD') res.end();
  else res.end(chunk);
}

/** The largest request body read: 1 MB (1,048,576 bytes), as `express.raw({limit: '1mb'})`. */
export const BODY_LIMIT = 1024 * 1024;

/** An error of reading a body, with the HTTP status that `toErrorResponse` (errors.ts) answers. */
class BodyError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * Read `stream` to its end, at most `limit` bytes, as raw-body does.
 * @param length the declared `Content-Length`, null when unknown (chunked, or a decompressed stream).
 * @throws status 413 when `length` or the bytes read pass `limit` (the rest is not kept);
 *   400 when the stream fails (a bad gzip, an aborted request) or ends short of `length`.
 */
function readStream(stream: Readable, length: number | null, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (length !== null && length > limit) {
      process.nextTick(() => reject(new BodyError(413, 'request entity too large')));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (err: Error | null, body?: Buffer): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('aborted', onAborted);
      stream.off('close', onClose);
      if (err) {
        stream.unpipe?.();
        stream.pause();
        reject(err);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) done(new BodyError(413, 'request entity too large'));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      if (length !== null && received !== length) done(new BodyError(400, 'request size did not match content length'));
      else done(null, Buffer.concat(chunks));
    };
    const onError = (err: Error): void => done(new BodyError(400, err.message));
    const onAborted = (): void => done(new BodyError(400, 'request aborted'));
    const onClose = (): void => done(new BodyError(400, 'request aborted'));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('aborted', onAborted);
    stream.once('close', onClose);
  });
}

/** Call `cb` once the request is read to its end (or gone), reading off and dropping what is left. */
function drain(req: IncomingMessage, cb: () => void): void {
  if (req.readableEnded || req.destroyed) {
    cb();
    return;
  }
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    cb();
  };
  req.once('end', once);
  req.once('close', once);
  req.resume();
}

/** The decompression stream of a `Content-Encoding` (gzip, deflate, br, and zstd where node has it). @throws status 415 for another encoding. */
function decompressor(encoding: string): NodeJS.ReadWriteStream & Readable {
  switch (encoding) {
    case 'deflate':
      return zlib.createInflate();
    case 'gzip':
      return zlib.createGunzip();
    case 'br':
      return zlib.createBrotliDecompress();
  }
  const zstd = (zlib as unknown as { createZstdDecompress?: () => zlib.Gzip }).createZstdDecompress;
  if (encoding === 'zstd' && zstd) return zstd();
  throw new BodyError(415, `unsupported content encoding "${encoding}"`);
}

/**
 * The first middleware of the app: reads the body of every request that has one (a
 * `Content-Length` or `Transfer-Encoding` header), whatever its content type, into `req.body`
 * (bytes); leaves `req.body` undefined for a request without one. A `Content-Encoding` of gzip,
 * deflate or br (zstd where node has it) is decompressed first. What `express.raw({type: () =>
 * true, limit: '1mb'})` did.
 *
 * Errors go to the error handler ({@link errorHandler}) after the rest of the request is read off:
 * status 413 when the body (decompressed) is larger than {@link BODY_LIMIT} (answered 413
 * `Payload Too Large`, `body: larger than 1 MB`); 415 for another content encoding (sent on at
 * once, answered 415 `body: could not be read`); 400 when it cannot be read (a bad gzip, an
 * aborted request).
 */
export function rawBodyParser(limit = BODY_LIMIT): RequestHandler {
  return (req, _res, next) => {
    if (req.complete && req.readableEnded) {
      next();
      return;
    }
    if (!('body' in req)) req.body = undefined;
    const te = req.headers['transfer-encoding'];
    const cl = req.headers['content-length'];
    if (te === undefined && (cl === undefined || Number.isNaN(Number(cl)))) {
      next();
      return;
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    let stream: Readable = req;
    let length: number | null = null;
    try {
      if (encoding === 'identity') {
        length = cl !== undefined && !Number.isNaN(Number(cl)) ? parseInt(cl, 10) : null;
      } else {
        stream = decompressor(encoding);
        req.pipe(stream as unknown as NodeJS.WritableStream);
      }
    } catch (err) {
      next(err);
      return;
    }
    readStream(stream, length, limit).then(
      (body) => {
        if (stream !== req) {
          req.unpipe(stream as unknown as NodeJS.WritableStream);
          stream.on('error', () => undefined);
          stream.destroy();
          req.resume();
        }
        req.body = body;
        next();
      },
      (err: BodyError) => {
        if (stream !== req) {
          req.unpipe();
          stream.on('error', () => undefined);
          stream.destroy();
        }
        drain(req, () => next(err));
      },
    );
  };
}

/** What a route handler receives. */
export interface RouteContext {
  req: SimRequest;
  /** path ids, decoded: `{company_id, tx_id}` */
  params: Record<string, string>;
  /** the query string ({@link queryOf}: text values, an array for a repeated key) */
  query: Record<string, unknown>;
  /** the parsed JSON body, undefined when the request had no body */
  body: unknown;
  /** raw body bytes (empty when none) */
  raw: Buffer;
  /** what a middleware in front of the route left for it (`res.locals`), e.g. the v2 API key */
  locals: Record<string, unknown>;
}

/**
 * A route handler: returns the 200 body (or a promise of it), or throws a SimError. State
 * changes are synchronous and atomic per request; only a wait (v2 wallet address) is async.
 */
export type RouteHandler = (ctx: RouteContext) => unknown;

/**
 * The handlers of the API routes of one version: exactly one per operationId the simulator serves
 * in that version (lib/api/operations.ts `OPERATIONS`, route-table.ts `EXTRA_OPERATIONS`), so a
 * missing or an extra handler fails to compile.
 */
export type OperationHandlers<V extends ApiVersion> = Readonly<Record<SimOperationId<V>, RouteHandler>>;

/** An operation an API answer is checked against (lib's or one of route-table.ts `EXTRA_OPERATIONS`). */
type Operation = ApiOperation<string>;

/** The raw body bytes of a request read by {@link rawBodyParser} (empty buffer when none). */
export function rawBody(req: SimRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** Parse raw JSON bytes. @throws 400 `body: invalid JSON`. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest('body: invalid JSON');
  }
}

/**
 * Answer once every state change is on disk (group commit): `status` and `body`, or 500 when the
 * write failed. An API answer (`entry` given) is checked against the entry's response schema
 * when the response check is on (response-check.ts).
 */
export function reply(eng: Engine, res: SimResponse, status: number, body: unknown, entry?: Operation): void {
  eng.store.commit().then(
    () => send(res, status, body, entry),
    () => send(res, ...toErrorResponse(new Error('state write failed')), entry),
  );
}

function send(res: SimResponse, status: number, body: unknown, entry: Operation | undefined): void {
  const req = res.req as SimRequest;
  if (entry) checkAnswer(entry, status, body, { path: pathOf(req), baseUrl: req.baseUrl });
  if (!res.headersSent && !res.destroyed) sendJson(res, status, body);
}

/** Options of {@link route}. */
export interface RouteOptions {
  /** the API operation served: its query and body are validated against it, its answer checked */
  entry?: Operation;
  /** run first, e.g. the control guard or the due expiries; may throw a SimError */
  before?: (req: SimRequest) => void;
}

/**
 * The success status of an operation: the lowest 2xx its declaration gives (202 for a swap
 * cancel, as the OpenAPI answers it), 200 when it declares none or for a control route.
 */
export function successStatus(entry: Operation | undefined): number {
  const declared = Object.keys(entry?.spec.responses ?? {}).map(Number).filter((s) => s >= 200 && s < 300);
  return declared.length ? Math.min(...declared) : 200;
}

/**
 * Wrap a handler: run `before`, parse the body, validate it and the query against the
 * operation's schemas, run the handler, then {@link reply} with the success status
 * ({@link successStatus}) and the returned body, or with the error's section 7 body.
 */
export function route(eng: Engine, fn: RouteHandler, opts: RouteOptions = {}): RequestHandler {
  return (req, res) => {
    void (async () => {
      let status = successStatus(opts.entry);
      let body: unknown;
      try {
        opts.before?.(req);
        const raw = rawBody(req);
        const parsed = parseJson(raw);
        const query: Record<string, unknown> = queryOf(req);
        if (opts.entry) checkRequest(opts.entry.spec, query, parsed);
        body = await fn({ req, params: req.params, query, body: parsed, raw, locals: res.locals });
      } catch (err) {
        [status, body] = toErrorResponse(err);
      }
      reply(eng, res, status, body, opts.entry);
    })();
  };
}

/**
 * Middleware that answers a thrown SimError of `check` with its section 7 body (after the state
 * is written, as every answer), or passes on. The one authentication step in front of every API
 * route of a version (v1 signature, v2 `x-token`). A refusal is an answer of the operation the
 * request names (route-table.ts `routeOperation`), and is checked as such.
 */
export function guard(eng: Engine, version: ApiVersion, check: (req: SimRequest, res: SimResponse) => void): RequestHandler {
  return (req, res, next) => {
    try {
      check(req, res);
    } catch (err) {
      reply(eng, res, ...toErrorResponse(err), routeOperation(version, req.method ?? '', pathOf(req)));
      return;
    }
    next();
  };
}

/** Router path of a path template: `{id}` becomes `:id`, a trailing `/` is dropped (the router matches with or without it). */
export function routerPath(template: string): string {
  return template.replace(/\{(\w+)\}/g, ':$1').replace(/(.)\/$/, '$1');
}

/**
 * Register every API route of one version (route-table.ts `apiRoutes`) on `router`, each with the
 * handler of its operationId, wrapped by {@link route} with that operation.
 * @throws {Error} at start, when an operation has no handler or a handler names no route (only
 *   possible past the type check, e.g. from JavaScript): the simulator then serves exactly the
 *   operations.
 */
export function mountOperations<V extends ApiVersion>(router: SimRouter, eng: Engine, version: V, handlers: OperationHandlers<V>, opts: Omit<RouteOptions, 'entry'> = {}): void {
  const byId = handlers as Readonly<Record<string, RouteHandler | undefined>>;
  const routes = apiRoutes(version);
  for (const r of routes) {
    const handler = byId[r.operation.id];
    if (!handler) throw new Error(`simulator: ${version} ${r.method} ${r.path} needs a handler of ${r.operation.id}`);
    const method = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    router[method](routerPath(r.path), route(eng, handler, { ...opts, entry: r.operation }));
  }
  const ids = new Set<string>(routes.map((r) => r.operation.id));
  const unused = Object.keys(handlers).filter((k) => !ids.has(k));
  if (unused.length) throw new Error(`simulator: handlers for no ${version} route: ${unused.join(', ')}`);
}

/**
 * The last handler of a router: 404 `path: no route ... in the simulator` (or
 * `path: no control endpoint ...`) for anything no route took, after `before` (a guard).
 */
export function noRoute(eng: Engine, prefix: string, what: 'no route' | 'no control endpoint' = 'no route', before?: (req: SimRequest) => void): RequestHandler {
  return route(
    eng,
    ({ req }) => {
      throw notFound(`path: ${what} ${req.method} ${prefix}${pathOf(req)}${what === 'no route' ? ' in the simulator' : ''}`);
    },
    { before },
  );
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback addresses. */
export function isLoopback(addr: string | undefined): boolean {
  if (!addr) return false;
  const a = addr.startsWith('::ffff:') ? addr.slice(7) : addr;
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

/**
 * The guard of every control endpoint (v1 in control.ts, v2 in v2/routes.ts): the caller must be
 * on loopback and name a loopback `Host`, and a POST must be `application/json`.
 * @throws 403 for a caller or a `Host` that is not loopback; 415 for a POST of another content type.
 */
export function controlGuard(req: IncomingMessage): void {
  if (!isLoopback(req.socket.remoteAddress)) throw forbidden('control endpoints answer loopback callers only');
  // A page that rebinds its own DNS name to 127.0.0.1 still sends its own name as Host.
  const host = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  if (!/^(localhost|127(\.\d{1,3}){3}|::1)$/i.test(host)) throw forbidden('Host: control endpoints answer loopback host names only');
  // A web page can POST text/plain or a form to loopback without asking; it cannot send
  // application/json cross-origin without a CORS preflight, which this server never grants.
  if (req.method === 'POST' && !/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    throw unsupportedMediaType('Content-Type: control endpoints take application/json only');
  }
}

/**
 * The app's last handler, its error handler (body too large, unreadable body, a bad `%` escape in
 * a path id, ...): the section 7 body of `toErrorResponse` (errors.ts), e.g. 413
 * `Payload Too Large` / `body: larger than 1 MB`, 400 `body: could not be read`.
 */
export function errorHandler(err: unknown, _req: SimRequest, res: SimResponse, _next: NextFunction): void {
  sendJson(res, ...toErrorResponse(err));
}

/** The origin a client addressed, from the Host header: `http://127.0.0.1:8780`. */
export function originOf(req: IncomingMessage, tls: boolean): string {
  return `${tls ? 'https' : 'http'}://${req.headers.host ?? ''}`;
}
