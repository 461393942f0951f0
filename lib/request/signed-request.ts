/**
 * Any signed call by method and path: the escape hatch for calls the typed operations do not
 * cover (the request node, docs/nodes.md). Checking one before it is sent: the path is checked, so
 * that it can only name an endpoint below the configured base URL. A call that a declared v1
 * operation covers (same method, path matching its template) is also checked as that
 * operation checks its input (see {@link checkDeclaredOperation}), then sent as given.
 */
import { ValidationError, characterCount, shortValue } from '../api/errors';
import type { HttpMethod, OperationSpec } from '../api/spec';
import { pathParams } from '../api/spec';
import { API_OPERATIONS } from '../api/operations';
import { prepareOperation, tooLongError } from './prepare';

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

/**
 * Most characters of a signed call's path with its query string: 2048, the URL length that
 * servers and proxies commonly accept (a longer one is refused by them, or is a mistake).
 */
export const REQUEST_PATH_MAX_LENGTH = 2048;

/** Characters of a path or query: RFC 3986 unreserved, sub-delims, `:`, `@`, `/`, and `%` escapes. */
const URL_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/**
 * Check a signed call without sending it.
 * @param baseUrl when given, the resolved URL must also stay below it (same origin, path under its path).
 * @returns the method in upper case, the path as given, and the body (undefined for GET and DELETE).
 * @throws {ValidationError} `method` not GET/POST/PUT/DELETE; `path` missing, longer than
 *   {@link REQUEST_PATH_MAX_LENGTH}, an absolute URL,
 *   not starting with `/`, with `.` or `..` segments (also percent-encoded), empty segments,
 *   characters that are not URL-encoded (spaces, `#`, `\`, control characters), a bad `%`
 *   escape, or resolving outside the base URL; `payload` (the body) not an object or array, or
 *   given with GET or DELETE.
 */
export function prepareSignedRequest(req: SignedRequest, baseUrl?: string): { method: HttpMethod; path: string; body?: unknown } {
  const method = typeof req.method === 'string' ? req.method.trim().toUpperCase() : '';
  if (!method) throw new ValidationError('method', 'required (GET, POST, PUT or DELETE)');
  if (!(REQUEST_METHODS as readonly string[]).includes(method)) throw new ValidationError('method', `must be one of GET, POST, PUT, DELETE, got ${shortValue(req.method)}`);
  const path = req.path;
  if (typeof path !== 'string' || path.trim() === '') throw new ValidationError('path', 'required: a path below the base URL such as /company/<company_id>');
  const pathLength = characterCount(path);
  if (pathLength > REQUEST_PATH_MAX_LENGTH) throw tooLongError('path', REQUEST_PATH_MAX_LENGTH, pathLength);
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

/** A declared operation a signed call matches, with the path ids read from its path. */
export interface MatchedOperation {
  /** The declared operation (a v1 operation of lib/api/operations.ts `OPERATIONS`). */
  spec: OperationSpec;
  /** The path ids of its template, URL-decoded from the call's path: `{company_id: 'C1'}`. */
  ids: Record<string, string>;
}

/**
 * The declared v1 operation (lib/api/operations.ts `OPERATIONS`) that a call by method and path reaches, if
 * any: same method, same number of path segments, every literal segment equal (ignoring case
 * and one trailing `/`, as the service's routing may), each `{id}` matching one segment. When
 * several match, the one with the most literal segments wins (`/fund/{fund_id}/whitelist` over
 * `/fund/{fund_id}/{x}`). The query string is ignored.
 * @param method upper-case method, e.g. `POST`.
 * @param path a path already checked by {@link prepareSignedRequest}.
 * @returns the operation and its ids, or undefined for a call no typed operation covers.
 * @throws {ValidationError} `path` when a segment matching an id is not a valid % escape.
 */
export function matchV1Operation(method: string, path: string): MatchedOperation | undefined {
  const q = path.indexOf('?');
  const segments = (q === -1 ? path : path.slice(0, q)).replace(/\/$/, '').split('/').slice(1);
  let best: { match: MatchedOperation; literals: number } | undefined;
  for (const { version, spec } of API_OPERATIONS) {
    if (version !== 'v1' || spec.method !== method) continue;
    const template = spec.path.split('/').slice(1);
    if (template.length !== segments.length) continue;
    const ids: Record<string, string> = {};
    let literals = 0;
    const matches = template.every((t, i) => {
      const id = /^\{(\w+)\}$/.exec(t);
      if (id) {
        if (segments[i] === '') return false;
        ids[id[1]] = segments[i];
        return true;
      }
      literals++;
      return t.toLowerCase() === segments[i].toLowerCase();
    });
    if (matches && (!best || literals > best.literals)) best = { match: { spec, ids }, literals };
  }
  if (!best) return undefined;
  const ids: Record<string, string> = {};
  for (const name of pathParams(best.match.spec.path)) {
    try {
      ids[name] = decodeURIComponent(best.match.ids[name]);
    } catch {
      throw new ValidationError('path', `the ${name} segment is not a valid %XX escape`);
    }
  }
  return { spec: best.match.spec, ids };
}

/**
 * Check a signed call that a typed operation covers as that operation checks its input: the
 * path ids and the body go through `prepareOperation(spec, {...ids, ...body})` (its query is not
 * checked: the call's query string is sent as written). This refuses, for example, a transfer
 * without `partner_txID`, an amount that is not a positive integer of base units, an `expires`
 * in the past, a `reference` past its length bound. Nothing is changed: the caller's body is
 * what is sent, undeclared fields included. A call no declared operation covers passes
 * unchecked. Asset codes are checked apart, against GET /assets ({@link signedRequest} does).
 * @param method upper-case method; @param path as given; @param body the JSON body or undefined.
 * @returns the operation the call matched (see {@link matchV1Operation}), or undefined.
 * @throws {ValidationError} naming the first bad field (code EINPUT).
 */
export function checkDeclaredOperation(method: string, path: string, body: unknown): MatchedOperation | undefined {
  const matched = matchV1Operation(method, path);
  if (!matched) return undefined;
  if (matched.spec.body && Array.isArray(body)) throw new ValidationError('payload', `${matched.spec.method} ${matched.spec.path} takes a JSON object body, not an array`);
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  prepareOperation({ ...matched.spec, query: undefined }, { ...fields, ...matched.ids });
  return matched;
}

/**
 * The declared query fields of `spec` as a call's query string gives them: one value as text,
 * a repeated one as an array of texts (which an asset check refuses: the service would read one).
 */
export function declaredQueryFields(spec: OperationSpec, path: string): Record<string, unknown> {
  const q = path.indexOf('?');
  const out: Record<string, unknown> = {};
  if (q === -1 || !spec.query) return out;
  const params = new URLSearchParams(path.slice(q + 1));
  for (const name of Object.keys(spec.query.properties)) {
    const values = params.getAll(name);
    if (values.length) out[name] = values.length === 1 ? values[0] : values;
  }
  return out;
}
