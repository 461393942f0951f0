/**
 * Errors raised by the client. Source: spec section 7 (error body `code`, `msg`, `detail`).
 *
 * No error text ever contains an API key, a private key or a token.
 */

/** The `detail` object of an error body (spec section 7); `reason` is not always present. */
export interface ApiErrorDetail {
  reason?: string;
  [key: string]: unknown;
}

/** The error body of spec section 7. `code` is a number or a string (the OpenAPI types it as string). */
export interface ApiErrorBody {
  code: number | string;
  msg: string;
  detail?: ApiErrorDetail;
}

/**
 * A non-2xx answer of the API, or a transport failure mapped onto the same shape.
 *
 * - `statusCode`: the HTTP status (0 when no answer arrived: timeout, connection refused).
 * - `code`: the body's `code` (for a bad signature 1020 or 401, spec section 7), else the status.
 * - `msg`: the body's `msg` (for a bad signature `errPartnerAuth`).
 * - `detail`: the body's `detail` (for a bad signature `{reason: 'signature'}`), `{}` when absent.
 *
 * The Error's `message` is `"<METHOD> <path>: <statusCode> <msg> (<reason>)"`; its `cause`
 * is `{statusCode, code, msg, detail}` so Node-RED Catch nodes see it in `msg.error.cause`.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  /** HTTP status of the answer; 0 when none came. */
  readonly statusCode: number;
  /** The body's `code` (1020 or 401 for a bad signature), or the socket error code when no answer came. */
  readonly code: number | string;
  /** The body's `msg`, e.g. `errPartnerAuth`. */
  readonly msg: string;
  /** The body's `detail`, e.g. `{reason: 'signature'}`; `{}` when absent. */
  readonly detail: ApiErrorDetail;

  constructor(statusCode: number, body: ApiErrorBody, context?: string) {
    const reason = body.detail && typeof body.detail.reason === 'string' ? ` (${body.detail.reason})` : '';
    super(`${context ? context + ': ' : ''}${statusCode || 'no response'} ${body.msg}${reason}`);
    this.statusCode = statusCode;
    this.code = body.code;
    this.msg = body.msg;
    this.detail = body.detail ?? {};
    Object.defineProperty(this, 'cause', {
      value: { statusCode, code: this.code, msg: this.msg, detail: this.detail },
      enumerable: false,
      writable: true,
      configurable: true,
    });
  }

  /** True for the bad-signature error of spec section 7 (`errPartnerAuth`, reason `signature`, code 1020 or 401). */
  get isSignatureError(): boolean {
    return this.msg === 'errPartnerAuth' && this.detail.reason === 'signature';
  }
}

/**
 * Input refused before anything was sent. `field` is the request field (API name, dotted for
 * nested fields, e.g. `send.amount`); the message names it and says what was expected.
 * `code` is `'EINPUT'`.
 */
export class ValidationError extends Error {
  override name = 'ValidationError';
  /** Always `EINPUT`: input refused before anything was sent. */
  readonly code = 'EINPUT';
  /** The request field, dotted for nested fields (`send.amount`). */
  readonly field: string;
  constructor(field: string, expected: string) {
    super(`${field}: ${expected}`);
    this.field = field;
  }
}

/** Characters of a bad value an error message may quote, at most (see {@link shortValue}). */
export const QUOTED_VALUE_MAX_LENGTH = 32;

/**
 * The length of a string in characters as the input bounds count them: Unicode code points
 * (as ajv's `maxLength` does), so an emoji is one character, not two UTF-16 units.
 */
export function characterCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * A bad value as an error message may quote it: never more than a short prefix, so that a
 * refused 1 MB field does not come back as a 1 MB message (in logs, on the msg, in the editor).
 * Strings are JSON-quoted, cut after {@link QUOTED_VALUE_MAX_LENGTH} characters with the full
 * length said (`"AAAA…" (5000 characters)`); numbers, booleans, null and undefined as written
 * (a number's text is short); a bigint as written when short, else by its count of digits;
 * arrays and objects by their kind only (`an array`, `an object`).
 */
export function shortValue(value: unknown): string {
  if (typeof value === 'string') {
    const head = Array.from(value.slice(0, QUOTED_VALUE_MAX_LENGTH * 2)).slice(0, QUOTED_VALUE_MAX_LENGTH).join('');
    return head.length === value.length ? JSON.stringify(value) : `${JSON.stringify(head + '…')} (${characterCount(value)} characters)`;
  }
  if (typeof value === 'bigint') return String(value).length <= QUOTED_VALUE_MAX_LENGTH ? String(value) : `a number of ${String(value).replace('-', '').length} digits`;
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  return String(value);
}

/**
 * A configuration that must not be used: plain HTTP to a non-loopback host, a missing
 * credential, an unknown environment. Raised before any connection is opened. `code` is `'ECONFIG'`.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  /** Always `ECONFIG`: the configuration cannot be used. */
  readonly code = 'ECONFIG';
}
