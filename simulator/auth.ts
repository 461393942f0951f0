/**
 * Request authentication. Source: spec section 5 (headers, signature) and section 7 (errors);
 * NOTES.md "Signing".
 *
 * Rules (header names are case-insensitive; Node lower-cases them):
 * - `x-api-key` missing -> 401 errPartnerAuth reason `empty token` (the spec's example reason);
 *   unknown -> 401 errPartnerAuth reason `api key`.
 * - Both `x-timestamp` and `x-nonce` (non-empty) -> 400 Bad Request. An empty `x-nonce` (or
 *   `x-timestamp`) counts as absent. Neither -> 401 reason `timestamp`.
 * - `x-sign` missing or wrong -> 401 `{"code":401,"msg":"errPartnerAuth","detail":{"reason":"signature"}}`.
 *   The signature covers prefix + full URL as sent (scheme://Host header + original path and
 *   query) + raw body bytes; padded and unpadded URL-safe base64 are accepted (lib/signing verify).
 * - `x-timestamp`: decimal Unix seconds within +-`windowSeconds` (default 60) of the REAL wall
 *   clock (not the business clock), else 401 reason `timestamp`. A timestamp-signed request may be
 *   repeated inside the window (identical requests in the same second sign identically).
 * - `x-nonce`: a decimal integer strictly greater than the API key's high-water mark, else 401
 *   reason `nonce`. The mark is raised only after the signature verified, and is persisted.
 */
import type { KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { verify } from '../lib/signing';
import { SimError, unauthorized } from './errors';
import type { Engine } from './engine';

/** What is checked: header values, the full URL as sent and the raw body. */
export interface AuthRequest {
  headers: IncomingHttpHeaders;
  /** scheme://host[:port]/path?query exactly as the client addressed it */
  url: string;
  body: Buffer;
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/**
 * Authenticates requests for the single partner account.
 */
export class Authenticator {
  constructor(
    private readonly eng: Engine,
    private readonly publicKey: KeyObject,
    private readonly windowSeconds: number,
  ) {}

  /**
   * Check one request.
   * @throws {SimError} 400 or 401 as described in the module comment.
   */
  check(req: AuthRequest): void {
    const h = req.headers;
    const apiKey = header(h, 'x-api-key');
    if (!apiKey) throw unauthorized('empty token');
    if (apiKey !== this.eng.state.apiKey) throw unauthorized('api key');
    const ts = header(h, 'x-timestamp');
    const nonce = header(h, 'x-nonce');
    if (ts !== undefined && nonce !== undefined) throw new SimError(400, 'Bad Request', 'x-timestamp, x-nonce: send one of them, not both');
    const prefix = ts ?? nonce;
    if (prefix === undefined) throw unauthorized('timestamp');
    const sig = header(h, 'x-sign');
    if (!sig) throw unauthorized('signature');
    if (ts !== undefined) {
      if (!/^\d{1,15}$/.test(ts)) throw unauthorized('timestamp');
      const skew = Math.abs(Math.floor(Date.now() / 1000) - Number(ts));
      if (skew > this.windowSeconds) throw unauthorized('timestamp');
    } else if (!/^\d{1,40}$/.test(nonce!)) {
      throw unauthorized('nonce');
    }
    if (!verify(this.publicKey, { prefix, url: req.url, body: req.body }, sig)) throw unauthorized('signature');
    if (nonce !== undefined) {
      const mark = this.eng.state.nonceMarks[apiKey];
      const n = BigInt(nonce);
      if (mark !== undefined && n <= BigInt(mark)) throw unauthorized('nonce');
      this.eng.state.nonceMarks[apiKey] = n.toString();
      this.eng.changed();
    }
  }
}
