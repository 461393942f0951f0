/**
 * Errors raised by the client. Source: spec section 7 (error body `code`, `msg`, `detail`).
 *
 * No error text ever contains an API key, a private key or a token.
 */

import type { SubmissionRef, TransactionKind } from './kinds';
import type { OpenWire, ErrorBody, errorBodySchema } from './wire';

/**
 * The `detail` object of an error body (spec section 7; lib/api/wire.ts `errorBodySchema`): `reason`
 * is not always present; other fields are kept.
 */
export type ApiErrorDetail = OpenWire<typeof errorBodySchema>['detail'];

/**
 * The error body of spec section 7 as an {@link ApiError} is made from it: the wire body
 * (lib/api/wire.ts `ErrorBody`: `code` a number or a string, `msg`) with `detail` optional, since an
 * error the client makes itself (no answer, a closed client) or a body without one is made into an
 * ApiError too (its `detail` is then `{}`).
 */
export type ApiErrorBody = Omit<ErrorBody, 'detail'> & { detail?: ApiErrorDetail };

/**
 * What a failed request tells about its effect (docs/nodes.md "Retries: the three failure kinds"):
 * - `refused`: the API answered 4xx: nothing happened;
 * - `notSent`: the request failed before a byte of it left (connection refused, name not
 *   resolved, TLS handshake refused, the client closed before the attempt): safe to retry;
 * - `outcomeUnknown`: the request may have reached the server and the answer is not known: a
 *   timeout, a reset connection, a 5xx answer, the client closed while it was in flight. A
 *   money-moving call may have moved money.
 */
export type FailureKind = 'refused' | 'notSent' | 'outcomeUnknown';

/**
 * Socket error codes raised before anything of a request was written: the connection was never
 * made. Every other error without an answer counts as `outcomeUnknown`.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'ERR_INVALID_URL',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_UNSUPPORTED_PROTOCOL',
  'EPROTO',
]);

/**
 * The failure kind of an error answer or transport failure.
 * @param statusCode the HTTP status, 0 when no answer came.
 * @param code the socket error code when no answer came (e.g. `ECONNREFUSED`, `ETIMEDOUT`).
 * @returns `refused` for 4xx, `outcomeUnknown` for 5xx (and any other status), `notSent` for
 *   the connect-phase codes, `outcomeUnknown` for every other failure without an answer.
 */
export function failureKindOf(statusCode: number, code: unknown): FailureKind {
  if (statusCode >= 400 && statusCode < 500) return 'refused';
  if (statusCode > 0) return 'outcomeUnknown';
  return typeof code === 'string' && NOT_SENT_CODES.has(code) ? 'notSent' : 'outcomeUnknown';
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
 * is `{statusCode, code, msg, detail, failure}` so Node-RED Catch nodes see it in `msg.error.cause`.
 * `failure` says what the failure tells about the request's effect ({@link FailureKind}).
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
  /**
   * What the failure tells about the request's effect: `refused` (4xx), `notSent` (nothing left
   * the client) or `outcomeUnknown` (it may have had its effect). See {@link FailureKind}.
   */
  readonly failure: FailureKind;

  /**
   * @param statusCode the HTTP status; 0 when no answer came.
   * @param body the section 7 error body (or the transport failure shaped as one).
   * @param context the call, e.g. `POST /company/C/transfer`: the start of the message (never a secret).
   * @param failure the failure kind; default {@link failureKindOf}(statusCode, body.code).
   */
  constructor(statusCode: number, body: ApiErrorBody, context?: string, failure?: FailureKind) {
    const reason = body.detail && typeof body.detail.reason === 'string' ? ` (${body.detail.reason})` : '';
    super(`${context ? context + ': ' : ''}${statusCode || 'no response'} ${body.msg}${reason}`);
    this.statusCode = statusCode;
    this.code = body.code;
    this.msg = body.msg;
    this.detail = body.detail ?? {};
    this.failure = failure ?? failureKindOf(statusCode, body.code);
    Object.defineProperty(this, 'cause', {
      value: { statusCode, code: this.code, msg: this.msg, detail: this.detail, failure: this.failure },
      enumerable: false,
      writable: true,
      configurable: true,
    });
  }

  /** The restated reason, when {@link restateReason} gave one. */
  private restatedReason?: string;

  /**
   * The body's `detail.reason` as this error's message states it: the body's own, or its
   * restatement in the units the user chose ({@link restateReason}); undefined when the body has
   * no text reason.
   */
  get statedReason(): string | undefined {
    return this.restatedReason ?? (typeof this.detail.reason === 'string' ? this.detail.reason : undefined);
  }

  /**
   * State the reason in other words in the message (e.g. its base units amounts in decimals with
   * the asset, docs/nodes.md "The payment fields"): the message's trailing `(<reason>)` is
   * replaced. `cause` and `detail` keep the API's body as it came.
   * @param reason the reason as the user should read it.
   */
  restateReason(reason: string): void {
    const current = this.statedReason;
    if (current === undefined) return;
    const tail = ` (${current})`;
    if (!this.message.endsWith(tail)) return;
    this.message = `${this.message.slice(0, -tail.length)} (${reason})`;
    this.restatedReason = reason;
  }

  /** True when the request may have had its effect (`failure` is `outcomeUnknown`). */
  get outcomeUnknown(): boolean {
    return this.failure === 'outcomeUnknown';
  }

  /**
   * The same error with another failure kind: the transport uses it when a retry ends in
   * `refused` or `notSent` after an earlier attempt whose outcome is unknown.
   */
  withFailure(failure: FailureKind): ApiError {
    if (failure === this.failure) return this;
    const copy = new ApiError(this.statusCode, { code: this.code, msg: this.msg, detail: this.detail }, undefined, failure);
    copy.message = this.message;
    return copy;
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

/** The error code of {@link OutcomeUnknownError}. */
export const OUTCOME_UNKNOWN_CODE = 'EOUTCOMEUNKNOWN';

/**
 * An approve (PUT) or reject (DELETE) call of `/coreclient/{client_id}/action/{action_id}` (spec
 * section 4), as an {@link OutcomeUnknownError} names it.
 */
export interface ActionCallRef {
  /** What the call asked: `approve` (PUT) or `reject` (DELETE). */
  decision: 'approve' | 'reject';
  /** The core client of the action. */
  client_id: string;
  /** The action. */
  action_id: string;
}

/**
 * The last attempt of a call whose outcome is unknown: its HTTP status (0 when no answer came),
 * the body's `code` or the socket's error code (null when none), the body's `msg` ('' when none).
 * An {@link ApiError} is one.
 */
export interface LastAttempt {
  statusCode: number;
  code: unknown;
  msg: string;
}

/**
 * A call whose outcome is not known: it may have taken effect. The one "outcome unknown" error of
 * lib, for two kinds of call (docs/nodes.md "Retries: the three failure kinds" and "custody-approver"):
 *
 * - **a money-moving call** (a {@link SubmissionRef}): raised when a request of a
 *   {@link TransactionKind} ends `outcomeUnknown` (a transfer: only once its own re-sends reached
 *   the transfer's `expires` without a definite answer), and when a second request with the same
 *   key comes while that is unresolved (withdraw, swaps, sweep: until a `resolve` finds the
 *   transaction, or finds none after its `expires`). `kind`, `partner_txID` and `attempts` are
 *   set, with `company_id` or `client_id`. The message names the kind, the owner and
 *   `partner_txID` (never a secret): `outcome unknown: <kind> partner_txID "<key>" of company <id>:
 *   <explanation>`; `cause` is `{statusCode, code: 'EOUTCOMEUNKNOWN', msg, detail, failure:
 *   'outcomeUnknown', kind, company_id | client_id, partner_txID, attempts, last?: {statusCode,
 *   code, msg}}`.
 * - **an approve or reject call on a core client action** (an {@link ActionCallRef}; lib/actions,
 *   the approver): still unknown after the time its caller waits (the approver's
 *   `reportUnknownAfterMs`); the caller keeps resolving it. `decision`, `client_id` and
 *   `action_id` are set. The message is `<decision> of action <action_id>: outcome unknown
 *   (<the call's msg, else its code, else "no answer">): <explanation>`; `cause` is the call's
 *   `{outcomeUnknown: true, statusCode, code, msg}`.
 *
 * Either way `code` is `EOUTCOMEUNKNOWN`, `failure` is `outcomeUnknown` (so `outcomeUnknown` is
 * true) and `statusCode` is the last attempt's (0 when no answer came).
 */
export class OutcomeUnknownError extends ApiError {
  override name = 'OutcomeUnknownError';
  /** Always {@link OUTCOME_UNKNOWN_CODE}. */
  declare readonly code: string;
  /** The money-moving call (a payment only). */
  readonly kind?: TransactionKind;
  /** `company_id` of the call, when it has one (a payment only). */
  readonly company_id?: string;
  /** `client_id` of the call: a sweep's core client, or the action's core client. */
  readonly client_id?: string;
  /** The payment's key (a payment only). */
  readonly partner_txID?: string;
  /** Requests sent for this key by this call (a payment only; 0 when it was refused before sending, for an earlier unresolved attempt). */
  readonly attempts?: number;
  /** What the action call asked (an action call only). */
  readonly decision?: 'approve' | 'reject';
  /** The action (an action call only). */
  readonly action_id?: string;

  /**
   * @param subject the payment ({@link SubmissionRef}) or the action call ({@link ActionCallRef}).
   * @param explanation what happened, in words, e.g. `no answer within 30 s`.
   * @param last the last attempt's error or answer, when there was one.
   * @param attempts requests sent by this call (a payment; ignored for an action call).
   */
  constructor(subject: SubmissionRef | ActionCallRef, explanation: string, last: LastAttempt | undefined, attempts = 0) {
    const action = 'action_id' in subject ? subject : undefined;
    const payment = 'action_id' in subject ? undefined : subject;
    const owner = payment ? (payment.kind === 'sweep' ? `core client ${payment.client_id}` : `company ${payment.company_id}`) : '';
    const msg = payment
      ? `outcome unknown: ${payment.kind} partner_txID ${JSON.stringify(payment.partner_txID)} of ${owner}: ${explanation}`
      : `${action!.decision} of action ${action!.action_id}: outcome unknown (${last?.msg || last?.code || 'no answer'}): ${explanation}`;
    super(last?.statusCode ?? 0, { code: OUTCOME_UNKNOWN_CODE, msg, detail: { reason: OUTCOME_UNKNOWN_CODE } }, undefined, 'outcomeUnknown');
    this.message = this.msg;
    let cause: Record<string, unknown>;
    if (payment) {
      this.kind = payment.kind;
      if (payment.company_id !== undefined) this.company_id = payment.company_id;
      if (payment.client_id !== undefined) this.client_id = payment.client_id;
      this.partner_txID = payment.partner_txID;
      this.attempts = attempts;
      cause = {
        statusCode: this.statusCode,
        code: OUTCOME_UNKNOWN_CODE,
        msg: this.msg,
        detail: this.detail,
        failure: 'outcomeUnknown',
        kind: payment.kind,
        ...(payment.company_id !== undefined ? { company_id: payment.company_id } : {}),
        ...(payment.client_id !== undefined ? { client_id: payment.client_id } : {}),
        partner_txID: payment.partner_txID,
        attempts,
        ...(last ? { last: { statusCode: last.statusCode, code: last.code, msg: last.msg } } : {}),
      };
    } else {
      this.decision = action!.decision;
      this.client_id = action!.client_id;
      this.action_id = action!.action_id;
      cause = { outcomeUnknown: true, statusCode: last?.statusCode ?? 0, code: last ? last.code : null, msg: last?.msg ?? '' };
    }
    Object.defineProperty(this, 'cause', { value: cause, enumerable: false, writable: true, configurable: true });
  }
}

/**
 * A payment key already journaled for another request: refused before sending. `field` is
 * `partner_txID`; `differs` lists the request fields (dotted, e.g. `send.amount`) whose values
 * differ from the first request's. `code` is `ECONFLICT`.
 */
export class SubmissionConflictError extends Error {
  override name = 'SubmissionConflictError';
  /** Always `ECONFLICT`. */
  readonly code = 'ECONFLICT';
  /** Always `partner_txID`. */
  readonly field = 'partner_txID';
  /** The fields that differ, dotted. */
  readonly differs: string[];
  /** @param ref the payment; @param differs the differing fields. */
  constructor(ref: SubmissionRef, differs: string[]) {
    super(`partner_txID: ${JSON.stringify(ref.partner_txID)} was already used for another ${ref.kind} (${differs.join(', ')} differ${differs.length === 1 ? 's' : ''}); a new payment needs a new partner_txID`);
    this.differs = differs;
  }
}
