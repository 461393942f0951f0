/**
 * Request authentication. Source: spec section 5 (headers, signature) and section 7 (errors);
 * simulator/README.md "Signing, errors, durability".
 *
 * Rules (header names are case-insensitive; Node lower-cases them):
 * - `x-api-key` missing -> 401 errPartnerAuth reason `empty token` (the spec's example reason);
 *   unknown -> 401 errPartnerAuth reason `api key`.
 * - Both `x-timestamp` and `x-nonce` (non-empty) -> 400 Bad Request. An empty `x-nonce` (or
 *   `x-timestamp`) counts as absent. Neither -> 401 reason `timestamp`.
 * - `x-sign` missing or wrong -> 401 `{"code":401,"msg":"errPartnerAuth","detail":{"reason":"signature"}}`.
 *   The signature covers prefix + full URL as sent (scheme://Host header + original path and
 *   query) + raw body bytes; padded and unpadded URL-safe base64 are accepted
 *   (lib/client/signing.ts `verify`).
 * - `x-timestamp`: decimal Unix seconds within +-`windowSeconds` (default 60) of the REAL wall
 *   clock (not the business clock), else 401 reason `timestamp`. A timestamp-signed request may be
 *   repeated inside the window (identical requests in the same second sign identically).
 * - `x-nonce`: a decimal integer strictly greater than the API key's high-water mark, else 401
 *   reason `nonce`. The mark is raised only after the signature verified, and is persisted.
 *   Marks are kept per API key, so the full and the read-only key count separately.
 *
 * Permissions (spec section 4 "Read-only subset", section 7 403): the account has two API keys
 * that sign with the same RSA key pair: the full key (`state.apiKey`) and the read-only key
 * (`state.readOnlyApiKey`). A request made with the read-only key whose method is not GET or
 * HEAD answers 403 `{"code":403,"msg":"Forbidden","detail":{"reason":"api key: read only ..."}}`
 * once its signature (and nonce) checked, before any route runs, so it has no effect on the
 * business state (a nonce it carried is used up, like any authenticated request's). Websocket
 * feed upgrades carry no method and are reads: both keys may open them.
 *
 * Registered partner keys (partners.ts, control endpoint `POST /_simulator/partners`): each is
 * one more API key of the account with the full permission, verified with the public key it was
 * registered with instead of the provisioned one. A request signed with another private key
 * than the API key's registered one answers 401 reason `signature`.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { verify } from '../lib/client/signing';
import { forbidden, SimError, unauthorized } from './errors';
import type { Engine } from './engine';

/** Request headers by lower-case name, as Node gives them (`IncomingMessage.headers`). */
export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** What is checked: header values, the full URL as sent and the raw body. */
export interface AuthRequest {
  headers: Headers;
  /** scheme://host[:port]/path?query exactly as the client addressed it */
  url: string;
  body: Buffer;
  /**
   * The HTTP method; a method other than GET or HEAD is a write, refused for the read-only key.
   * Absent for websocket upgrades (feeds are reads).
   */
  method?: string;
}

/** The permission of an API key: `full` for the account key, `read` for the read-only key. */
export type KeyPermission = 'full' | 'read';

/** The 403 reason given when the read-only key attempts a write (spec section 7). */
export const READ_ONLY_REASON = 'api key: read only; this API key may only read (GET)';

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/**
 * Authenticates requests for the single partner account and enforces the read-only permission.
 */
export class Authenticator {
  /** Parsed public keys of registered partner keys, by API key (parsed once). */
  private readonly registered = new Map<string, KeyObject>();

  constructor(
    private readonly eng: Engine,
    private readonly publicKey: KeyObject,
    private readonly windowSeconds: number,
  ) {}

  /**
   * The permission of an API key, or undefined when the key is not one of the account's.
   */
  permissionOf(apiKey: string): KeyPermission | undefined {
    if (apiKey === this.eng.state.apiKey) return 'full';
    if (this.eng.state.readOnlyApiKey !== undefined && apiKey === this.eng.state.readOnlyApiKey) return 'read';
    if (this.eng.state.partnerKeys && Object.hasOwn(this.eng.state.partnerKeys, apiKey)) return 'full';
    return undefined;
  }

  /** The public key that verifies requests of `apiKey` (one of the account's, see {@link permissionOf}). */
  private publicKeyOf(apiKey: string): KeyObject {
    const partner = this.eng.state.partnerKeys?.[apiKey];
    if (!partner || !Object.hasOwn(this.eng.state.partnerKeys!, apiKey)) return this.publicKey;
    let key = this.registered.get(apiKey);
    if (!key) this.registered.set(apiKey, (key = createPublicKey(partner.publicKeyPem)));
    return key;
  }

  /**
   * Check one request.
   * @throws {SimError} 400 or 401 as described in the module comment; 403 for a write
   *   (`req.method` other than GET or HEAD) made with the read-only key.
   */
  check(req: AuthRequest): void {
    const h = req.headers;
    const apiKey = header(h, 'x-api-key');
    if (!apiKey) throw unauthorized('empty token');
    const permission = this.permissionOf(apiKey);
    if (!permission) throw unauthorized('api key');
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
    if (!verify(this.publicKeyOf(apiKey), { prefix, url: req.url, body: req.body }, sig)) throw unauthorized('signature');
    if (nonce !== undefined) {
      const mark = this.eng.state.nonceMarks[apiKey];
      const n = BigInt(nonce);
      if (mark !== undefined && n <= BigInt(mark)) throw unauthorized('nonce');
      this.eng.state.nonceMarks[apiKey] = n.toString();
      this.eng.changed();
    }
    if (permission === 'read' && req.method !== undefined && req.method !== 'GET' && req.method !== 'HEAD') throw forbidden(READ_ONLY_REASON);
  }
}
