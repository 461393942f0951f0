/**
 * Express glue shared by the API routes and the control routes: raw body reading, JSON parsing,
 * the group-commit-aware reply and section 7 error bodies.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Engine } from './engine';
import { badRequest, toErrorResponse } from './errors';
import { applyExpiry } from './transactions';

/** What a route handler receives. */
export interface RouteContext {
  req: Request;
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** the parsed JSON body, undefined when the request had no body */
  body: unknown;
  /** raw body bytes (empty when none) */
  raw: Buffer;
}

/** A route handler: returns the 200 body, or throws a SimError. Synchronous by design (state changes are atomic per request). */
export type RouteHandler = (ctx: RouteContext) => unknown;

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
 * Wrap a handler: run `before` (authentication), apply due expiries, parse the body, run the
 * handler, wait until every state change is on disk (group commit), then answer 200 with the
 * returned body or the error body.
 */
export function route(eng: Engine, fn: RouteHandler, before?: (req: Request, raw: Buffer) => void): RequestHandler {
  return (req: Request, res: Response) => {
    let status = 200;
    let body: unknown;
    try {
      const raw = rawBody(req);
      before?.(req, raw);
      applyExpiry(eng);
      body = fn({ req, params: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body: parseJson(raw), raw });
    } catch (err) {
      [status, body] = toErrorResponse(err);
    }
    eng.store.commit().then(
      () => res.status(status).json(body),
      () => {
        const [s, b] = toErrorResponse(new Error('state write failed'));
        res.status(s).json(b);
      },
    );
  };
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
