/**
 * Express glue shared by the API routers (routes.ts, v2/routes.ts) and the control routers
 * (control.ts, v2/routes.ts): raw body reading, JSON parsing, request validation against the
 * registry, the group-commit-aware reply with the response check, section 7 error bodies, the
 * control endpoints' guard, and the registration of the API routes of route-table.ts.
 */
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { RegistryEntry } from '../lib/registry';
import type { Engine } from './engine';
import { badRequest, forbidden, notFound, toErrorResponse, unsupportedMediaType } from './errors';
import { checkAnswer } from './response-check';
import { apiRoutes, entryKey, routeEntry } from './route-table';
import { checkRequest } from './validation';

/** What a route handler receives. */
export interface RouteContext {
  req: Request;
  /** path ids, decoded: `{company_id, tx_id}` */
  params: Record<string, string>;
  /** the query string as parsed by express (text values) */
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

/** Handlers of the API routes of one version, by registry key (`custody-transfer.create`, see route-table.ts `entryKey`). */
export type OperationHandlers = Readonly<Record<string, RouteHandler>>;

/** The raw body bytes of a request read by `express.raw` (empty buffer when none). */
export function rawBody(req: Request): Buffer {
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
export function reply(eng: Engine, res: Response, status: number, body: unknown, entry?: RegistryEntry): void {
  eng.store.commit().then(
    () => send(res, status, body, entry),
    () => send(res, ...toErrorResponse(new Error('state write failed')), entry),
  );
}

function send(res: Response, status: number, body: unknown, entry: RegistryEntry | undefined): void {
  if (entry) checkAnswer(entry, status, body, res.req);
  if (!res.headersSent && !res.destroyed) res.status(status).json(body);
}

/** Options of {@link route}. */
export interface RouteOptions {
  /** the API operation served: its query and body are validated against it, its answer checked */
  entry?: RegistryEntry;
  /** run first, e.g. the control guard or the due expiries; may throw a SimError */
  before?: (req: Request) => void;
}

/**
 * The success status of an operation: the lowest 2xx its registry entry declares (202 for a swap
 * cancel, as the OpenAPI answers it), 200 when it declares none or for a control route.
 */
export function successStatus(entry: RegistryEntry | undefined): number {
  const declared = Object.keys(entry?.spec.responses ?? {}).map(Number).filter((s) => s >= 200 && s < 300);
  return declared.length ? Math.min(...declared) : 200;
}

/**
 * Wrap a handler: run `before`, parse the body, validate it and the query against the
 * operation's schemas, run the handler, then {@link reply} with the success status
 * ({@link successStatus}) and the returned body, or with the error's section 7 body.
 */
export function route(eng: Engine, fn: RouteHandler, opts: RouteOptions = {}): RequestHandler {
  return (req: Request, res: Response) => {
    void (async () => {
      let status = successStatus(opts.entry);
      let body: unknown;
      try {
        opts.before?.(req);
        const raw = rawBody(req);
        const parsed = parseJson(raw);
        const query = req.query as Record<string, unknown>;
        if (opts.entry) checkRequest(opts.entry.spec, query, parsed);
        body = await fn({ req, params: req.params as Record<string, string>, query, body: parsed, raw, locals: res.locals });
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
 * request names (route-table.ts `routeEntry`), and is checked as such.
 */
export function guard(eng: Engine, version: RegistryEntry['version'], check: (req: Request, res: Response) => void): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    try {
      check(req, res);
    } catch (err) {
      reply(eng, res, ...toErrorResponse(err), routeEntry(version, req.method, req.path));
      return;
    }
    next();
  };
}

/** Express path of a registry template: `{id}` becomes `:id`, a trailing `/` is dropped (express matches with or without it). */
export function expressPath(template: string): string {
  return template.replace(/\{(\w+)\}/g, ':$1').replace(/(.)\/$/, '$1');
}

/**
 * Register every API route of one version (route-table.ts `apiRoutes`) on `router`, each with the
 * one handler of `handlers` keyed by one of its entries, wrapped by {@link route} with that entry.
 * @throws {Error} at start, when a route has no handler or two, or a handler names no route:
 *   the simulator then serves exactly the registry.
 */
export function mountOperations(router: Router, eng: Engine, version: RegistryEntry['version'], handlers: OperationHandlers, opts: Omit<RouteOptions, 'entry'> = {}): void {
  const used = new Set<string>();
  for (const r of apiRoutes(version)) {
    const keys = r.entries.map(entryKey).filter((k) => handlers[k]);
    if (keys.length !== 1) throw new Error(`simulator: ${version} ${r.method} ${r.path} needs one handler, of ${r.entries.map(entryKey).join(' or ')}; has ${keys.length}`);
    used.add(keys[0]);
    const entry = r.entries.find((e) => entryKey(e) === keys[0])!;
    const method = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    router[method](expressPath(r.path), route(eng, handlers[keys[0]], { ...opts, entry }));
  }
  const unused = Object.keys(handlers).filter((k) => !used.has(k));
  if (unused.length) throw new Error(`simulator: handlers for no ${version} route: ${unused.join(', ')}`);
}

/**
 * The last handler of a router: 404 `path: no route ... in the simulator` (or
 * `path: no control endpoint ...`) for anything no route took, after `before` (a guard).
 */
export function noRoute(eng: Engine, prefix: string, what: 'no route' | 'no control endpoint' = 'no route', before?: (req: Request) => void): RequestHandler {
  return route(
    eng,
    ({ req }) => {
      throw notFound(`path: ${what} ${req.method} ${prefix}${req.path}${what === 'no route' ? ' in the simulator' : ''}`);
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
export function controlGuard(req: Request): void {
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

/** Final express error handler (body too large, unreadable body, ...): section 7 body. */
export function errorHandler(err: unknown, _req: Request, res: Response, _next: NextFunction): void {
  const [status, body] = toErrorResponse(err);
  res.status(status).json(body);
}

/** The origin a client addressed, from the Host header: `http://127.0.0.1:8780`. */
export function originOf(req: Request, tls: boolean): string {
  return `${tls ? 'https' : 'http'}://${req.headers.host ?? ''}`;
}
