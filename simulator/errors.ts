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

/** A maker of the {@link SimError}s of one HTTP `status` and `msg` (spec section 7): each takes the `detail.reason`. */
function errorOf(status: number, msg: string): (reason: string) => SimError {
  return (reason) => new SimError(status, msg, reason);
}

/** 400 Bad Request; `reason` names the field first (`field: what was expected`). */
export const badRequest = errorOf(400, 'Bad Request');

/** 401 errPartnerAuth with the given reason (`signature` for a bad or missing signature). */
export const unauthorized = errorOf(401, 'errPartnerAuth');

/** 403 Forbidden. */
export const forbidden = errorOf(403, 'Forbidden');

/** 415 Unsupported Media Type (control endpoints take JSON only). */
export const unsupportedMediaType = errorOf(415, 'Unsupported Media Type');

/** 404 Not Found. */
export const notFound = errorOf(404, 'Not Found');

/** 409 Conflict. */
export const conflict = errorOf(409, 'Conflict');

/** Map any thrown value to `[httpStatus, body]`; unknown errors become 500 without internals. */
export function toErrorResponse(err: unknown): [number, ErrorBody] {
  if (err instanceof SimError) return [err.status, err.toBody()];
  const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : 500;
  if (status === 413) return [413, { code: 413, msg: 'Payload Too Large', detail: { reason: 'body: larger than 1 MB' } }];
  if (status >= 400 && status < 500) return [status, { code: status, msg: 'Bad Request', detail: { reason: 'body: could not be read' } }];
  return [500, { code: 500, msg: 'Internal Server Error', detail: { reason: 'simulator error' } }];
}
