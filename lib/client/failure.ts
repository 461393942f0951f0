/**
 * Why a connection to the Custody Partner API failed, told apart for the person who has to mend
 * it: the cause of a failed call, of a client that cannot be built, or of a refused feed
 * handshake (lib/feeds). Used by the connection test of the config dialog and by the feeds'
 * health (the status and the log of the nodes that use a feed). Source: spec section 5
 * (authentication, TLS 1.2 or later), section 7 (the error body: `code`, `msg`, `detail.reason`;
 * a bad signature is `errPartnerAuth` with reason `signature`).
 */
import { ApiError, ConfigError, ValidationError } from '../api/errors';
import { KeyFormatError } from './signing';

/**
 * Why a connection failed:
 * - `config`: the settings cannot be used (missing or unparsable key, bad URL); nothing was sent;
 * - `badApiKey`: 401 (or 403 reason `api key`) other than a bad signature: the API key is wrong or unknown;
 * - `badSignature`: 401 `errPartnerAuth` reason `signature` (spec section 7): the private key is not the registered one;
 * - `badTimestamp`: 401 reason `timestamp` or `nonce`: the clock is off, or a nonce went backwards;
 * - `badToken`: a v2 call answered 401: the v2 token is wrong;
 * - `forbidden`: 403: the key lacks the permission, or the account is not set up;
 * - `tls`: the TLS handshake failed (untrusted or self-signed certificate, wrong host name, TLS < 1.2, not TLS);
 * - `unreachable`: the host name did not resolve, or the connection was refused / reset while connecting / had no route;
 * - `timeout`: no answer within the timeout;
 * - `network`: any other failure without an answer (a reset connection);
 * - `http`: any other HTTP status (404 for a wrong base path, 5xx).
 */
export type FailureCause = 'config' | 'badApiKey' | 'badSignature' | 'badTimestamp' | 'badToken' | 'forbidden' | 'tls' | 'unreachable' | 'timeout' | 'network' | 'http';

/** Socket error codes of a host that cannot be reached. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENETUNREACH', 'EHOSTUNREACH', 'EHOSTDOWN', 'EADDRNOTAVAIL']);
/** Socket error codes of a request that got no answer in time. */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ECONNABORTED', 'ESOCKETTIMEDOUT']);
/** Error codes of a failed TLS handshake (Node's and OpenSSL's). */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|EPROTO$|HOSTNAME_MISMATCH$|ERR_OSSL_)/;

/**
 * The cause of a failure.
 * @param err what a client call, a client builder or a feed connection threw or reported.
 * @param api which API failed: `v2` maps a 401 to `badToken`.
 */
export function failureCauseOf(err: unknown, api: 'v1' | 'v2' = 'v1'): FailureCause {
  if (err instanceof ConfigError || err instanceof KeyFormatError || err instanceof ValidationError) return 'config';
  if (!(err instanceof ApiError)) return 'network';
  const reason = typeof err.detail.reason === 'string' ? err.detail.reason.toLowerCase() : '';
  if (err.statusCode === 0) {
    const c = String(err.code);
    if (TIMEOUT_CODES.has(c)) return 'timeout';
    if (TLS_CODE.test(c) || /certificate|ssl|tls/i.test(err.msg)) return 'tls';
    // A reset while connecting: the server stopped taking connections (not a reset mid-answer).
    if (UNREACHABLE_CODES.has(c) || (c === 'ECONNRESET' && /^connect /.test(err.msg))) return 'unreachable';
    return 'network';
  }
  if (err.isSignatureError) return 'badSignature';
  if (err.statusCode === 401 && api === 'v2') return 'badToken';
  if (err.statusCode === 401 && (reason === 'timestamp' || reason === 'nonce')) return 'badTimestamp';
  if (err.statusCode === 401 || (err.statusCode === 403 && reason.startsWith('api key') && !reason.includes('read only'))) return 'badApiKey';
  if (err.statusCode === 403) return 'forbidden';
  return 'http';
}

/**
 * A connection failure in the words a status shows, with nothing secret in it: the cause and
 * what the answer (or the socket) said. Example for a refused API key:
 * `{cause: 'badApiKey', statusCode: 401, code: 401, msg: 'errPartnerAuth', reason: 'api key', key: 'badApiKey|401|401|errPartnerAuth|api key'}`.
 */
export interface ConnectionFailure {
  cause: FailureCause;
  /** The HTTP status of the answer; 0 when none came; absent for a `config` failure. */
  statusCode?: number;
  /** The body's `code`, or the socket error code (e.g. `ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`). */
  code?: number | string;
  /** The body's `msg` (e.g. `errPartnerAuth`); for a `config` failure the setting's message (no secret: the messages of ConfigError and KeyFormatError never quote a key). */
  msg?: string;
  /** The body's `detail.reason` (e.g. `signature`), when it has one. */
  reason?: string;
  /**
   * What "the cause changed" compares: equal for two failures of the same cause with the same
   * status, code, msg and reason; for a server that cannot be reached (`unreachable`, `timeout`)
   * just `unreachable`, whichever socket error said so (a server going down may answer a reset,
   * then refusals, then time-outs).
   */
  key: string;
}

/**
 * The {@link ConnectionFailure} of `err`.
 * @param err what a client call, a client builder or a feed connection threw or reported.
 * @param api which API failed (see {@link failureCauseOf}).
 */
export function connectionFailureOf(err: unknown, api: 'v1' | 'v2' = 'v1'): ConnectionFailure {
  const cause = failureCauseOf(err, api);
  const out: Omit<ConnectionFailure, 'key'> = { cause };
  if (err instanceof ApiError) {
    out.statusCode = err.statusCode;
    out.code = err.code;
    out.msg = err.msg;
    if (typeof err.detail.reason === 'string') out.reason = err.detail.reason;
  } else {
    out.msg = err instanceof Error ? err.message : String(err);
  }
  const key = cause === 'unreachable' || cause === 'timeout' ? 'unreachable' : [cause, out.statusCode ?? '', out.code ?? '', out.msg ?? '', out.reason ?? ''].join('|');
  return { ...out, key };
}
