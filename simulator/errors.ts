/**
 * Error bodies of the simulator. Source: spec section 7: every error answers
 * `{code, msg, detail: {reason}}` with `code` equal to the HTTP status.
 *
 * Conventions used throughout the simulator:
 * - 400 `Bad Request`: bad input; `detail.reason` starts with the field name (dotted for nested
 *   fields, e.g. `send.amount: must be a positive integer (base units)`).
 * - 401 `errPartnerAuth`: authentication failed; `detail.reason` is `signature`, `api key`,
 *   `timestamp` or `nonce`.
 * - 403 `Forbidden`: not allowed (an action of another core client, a non-loopback caller of the
 *   control endpoints).
 * - 404 `Not Found`: an unknown resource (path id, or an id named in the body).
 * - 409 `Conflict`: the resource is in the wrong state (action no longer pending, duplicate
 *   trusted party, ...).
 */

/** The error body of spec section 7. */
export interface ErrorBody {
  code: number;
  msg: string;
  detail: { reason: string };
}

/** An error that the HTTP layer turns into a section 7 body with status {@link SimError.status}. */
export class SimError extends Error {
  override name = 'SimError';
  constructor(readonly status: number, readonly msg: string, readonly reason: string) {
    super(`${status} ${msg}: ${reason}`);
  }

  /** The JSON body to send. */
  toBody(): ErrorBody {
    return { code: this.status, msg: this.msg, detail: { reason: this.reason } };
  }
}

/** 400 Bad Request; `reason` names the field first (`field: what was expected`). */
export function badRequest(reason: string): SimError {
  return new SimError(400, 'Bad Request', reason);
}

/** 401 errPartnerAuth with the given reason (`signature` for a bad or missing signature). */
export function unauthorized(reason: string): SimError {
  return new SimError(401, 'errPartnerAuth', reason);
}

/** 403 Forbidden. */
export function forbidden(reason: string): SimError {
  return new SimError(403, 'Forbidden', reason);
}

/** 415 Unsupported Media Type (control endpoints take JSON only). */
export function unsupportedMediaType(reason: string): SimError {
  return new SimError(415, 'Unsupported Media Type', reason);
}

/** 404 Not Found. */
export function notFound(reason: string): SimError {
  return new SimError(404, 'Not Found', reason);
}

/** 409 Conflict. */
export function conflict(reason: string): SimError {
  return new SimError(409, 'Conflict', reason);
}

/** Map any thrown value to `[httpStatus, body]`; unknown errors become 500 without internals. */
export function toErrorResponse(err: unknown): [number, ErrorBody] {
  if (err instanceof SimError) return [err.status, err.toBody()];
  const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : 500;
  if (status === 413) return [413, { code: 413, msg: 'Payload Too Large', detail: { reason: 'body: larger than 1 MB' } }];
  if (status >= 400 && status < 500) return [status, { code: status, msg: 'Bad Request', detail: { reason: 'body: could not be read' } }];
  return [500, { code: 500, msg: 'Internal Server Error', detail: { reason: 'simulator error' } }];
}
