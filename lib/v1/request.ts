/**
 * Any signed call by method and path: the escape hatch for calls the typed operations do not
 * cover (DESIGN.md palette, `custody-request`). The path is checked before anything is sent, so
 * that it can only name an endpoint below the configured base URL.
 */
import { CustodyClient, ApiResponse, HttpMethod } from '../client';
import { ValidationError } from '../errors';

/** The methods a signed call may use (spec section 4 uses these four). */
export const REQUEST_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** A signed call: `path` relative to the base URL, with an optional query string. */
export interface SignedRequest {
  /** GET, POST, PUT or DELETE (case-insensitive). */
  method: string;
  /** Below the base URL, starting with `/`, segments URL-encoded: `/company/abc/fund/def?asset=BTC`. */
  path: string;
  /** JSON body for POST and PUT (an object or array); none for GET and DELETE. */
  body?: unknown;
}

/** Characters of a path or query: RFC 3986 unreserved, sub-delims, `:`, `@`, `/`, and `%` escapes. */
const URL_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/**
 * Check a signed call without sending it.
 * @param baseUrl when given, the resolved URL must also stay below it (same origin, path under its path).
 * @returns the method in upper case, the path as given, and the body (undefined for GET and DELETE).
 * @throws {ValidationError} `method` not GET/POST/PUT/DELETE; `path` missing, an absolute URL,
 *   not starting with `/`, with `.` or `..` segments (also percent-encoded), empty segments,
 *   characters that are not URL-encoded (spaces, `#`, `\`, control characters), a bad `%`
 *   escape, or resolving outside the base URL; `payload` (the body) not an object or array, or
 *   given with GET or DELETE.
 */
export function prepareSignedRequest(req: SignedRequest, baseUrl?: string): { method: HttpMethod; path: string; body?: unknown } {
  const method = typeof req.method === 'string' ? req.method.trim().toUpperCase() : '';
  if (!method) throw new ValidationError('method', 'required (GET, POST, PUT or DELETE)');
  if (!(REQUEST_METHODS as readonly string[]).includes(method)) throw new ValidationError('method', `must be one of GET, POST, PUT, DELETE, got ${JSON.stringify(req.method)}`);
  const path = req.path;
  if (typeof path !== 'string' || path.trim() === '') throw new ValidationError('path', 'required: a path below the base URL such as /company/<company_id>');
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(path) || path.startsWith('//')) throw new ValidationError('path', 'must be relative to the base URL (start with one "/"), not an absolute URL');
  if (!path.startsWith('/')) throw new ValidationError('path', 'must start with "/" (relative to the base URL)');
  const q = path.indexOf('?');
  const pathPart = q === -1 ? path : path.slice(0, q);
  const query = q === -1 ? '' : path.slice(q + 1);
  if (!URL_CHARS.test(pathPart) || !/^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/.test(query)) {
    throw new ValidationError('path', 'must be URL-encoded: no spaces, "#", "\\", quotes or control characters');
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(path)) throw new ValidationError('path', 'has a "%" that is not a %XX escape');
  if (/%(2e|2f|5c)/i.test(pathPart)) throw new ValidationError('path', 'must not hide ".", "/" or "\\" in % escapes');
  const segments = pathPart.split('/').slice(1);
  segments.forEach((s, i) => {
    if (s === '.' || s === '..') throw new ValidationError('path', 'must not have "." or ".." segments');
    if (s === '' && i !== segments.length - 1) throw new ValidationError('path', 'must not have empty segments ("//")');
  });
  if (baseUrl !== undefined) {
    const base = new URL(baseUrl);
    const resolved = new URL(baseUrl.replace(/\/+$/, '') + path);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (resolved.origin !== base.origin || !(resolved.pathname === basePath || resolved.pathname.startsWith(basePath + '/'))) {
      throw new ValidationError('path', 'resolves outside the base URL');
    }
  }
  let body: unknown;
  if (method === 'POST' || method === 'PUT') {
    if (req.body !== undefined && req.body !== null && (typeof req.body !== 'object' || Buffer.isBuffer(req.body))) {
      throw new ValidationError('payload', `the ${method} body must be a JSON object or array (or nothing), got ${typeof req.body}`);
    }
    body = req.body ?? undefined;
  } else if (req.body !== undefined && req.body !== null) {
    throw new ValidationError('payload', `${method} sends no body`);
  }
  return { method: method as HttpMethod, path, body };
}

/**
 * Send one signed call (spec section 5 headers and signature, as every operation). Only GET is
 * retried (timeouts, 429, 502, 503, 504): a repeated POST, PUT or DELETE could repeat its effect.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending (see {@link prepareSignedRequest}).
 * @throws {ApiError} for a non-2xx answer or no answer.
 */
export async function signedRequest<T = unknown>(client: CustodyClient, req: SignedRequest): Promise<ApiResponse<T>> {
  const r = prepareSignedRequest(req, client.baseUrl);
  return client.request<T>(r.method, r.path, { body: r.body, idempotent: r.method === 'GET' });
}
