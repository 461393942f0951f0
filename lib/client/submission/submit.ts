/**
 * Sending a money-moving request exactly once (docs/nodes.md "Money safety"; spec section 3 "Moves shown": a
 * repeated `partner_txID` on POST transfer answers `existing` with the original `tx_id`).
 *
 * {@link submitRequest} sends one payment request of a {@link TransactionKind}:
 * - With a journal ({@link PaymentJournal}: a {@link SubmissionJournal} file, or one shared by
 *   several instances through Redis, docs/scale-out.md), the key and body are recorded before the request leaves;
 *   a second request with a journaled key is answered from the journal (a transfer: re-sent
 *   safely, the API answers `existing`; when that re-send fails, the journal answers and its
 *   entry stays as it was), refused when its body differs
 *   ({@link SubmissionConflictError}, naming the fields), and refused while an earlier
 *   request's outcome is unknown (withdraw, swaps, sweep: {@link OutcomeUnknownError} until a
 *   `resolve` settles it).
 * - A transfer whose outcome is unknown (a timeout, a reset, a 5xx) is sent again, the same body
 *   with a fresh signature, until a definite answer (`new` or `existing`) or its `expires`
 *   (opt out with `resolveUnknown: false`). The other kinds are sent once: the spec promises
 *   nothing for a repeat of them, so their unknown outcome is reported at once.
 * - Every failure says what it tells: refused (4xx, nothing happened), not sent (safe to
 *   retry), or outcome unknown ({@link OutcomeUnknownError}, code `EOUTCOMEUNKNOWN`).
 */
import { ApiError, OutcomeUnknownError, SubmissionConflictError } from '../../api/errors';
import type { SubmissionRef } from '../../api/kinds';
import type { CustodyClient } from '../client';
import { abortableSleep, backoffDelay, type BackoffPolicy } from '../../support/backoff';
import { bodyHash, differingFields, type JournalEntry, type PaymentJournal, type SubmissionJournal } from './journal';
import type { ApiResponse } from '../transport';
import type { HttpMethod } from '../../api/spec';

/** How {@link submitRequest} behaves. */
export interface SubmitOptions {
  /**
   * The durable journal (a {@link SubmissionJournal}, or a journal shared through Redis); without
   * one, a key is only kept by the API (transfers) and this call.
   */
  journal?: PaymentJournal;
  /** Transfers only: send again after an unknown outcome until a definite answer or `expires` (default true). */
  resolveUnknown?: boolean;
  /** First wait before a re-send, ms (default 1000); ×1.5 per re-send with ±25% jitter. */
  resendDelayMs?: number;
  /** Longest wait between re-sends, ms (default 30000). */
  maxResendDelayMs?: number;
  /** Re-sends stop this many seconds before `expires` (default 5), so a re-send never arrives after it. */
  expiryMarginSeconds?: number;
}

/** How a payment request ended, when it ended well. */
export type SubmitOutcome = 'new' | 'existing';

/** A payment's answer: the API's status and body, and how it came. */
export interface SubmitResult<T> extends ApiResponse<T> {
  /** `new`: a new transaction; `existing`: the key was already used (the API said so, or the journal answered). */
  outcome: SubmitOutcome;
  /** True when the journal answered and nothing was sent. */
  fromJournal: boolean;
  /** Requests sent by this call (0 when the journal answered). */
  attempts: number;
}

/** One payment request, checked and ready to send. */
export interface PreparedSubmission {
  method: HttpMethod;
  /** Path below the base URL, ids encoded. */
  path: string;
  /** The body to send (its `partner_txID` is the key). */
  body: Record<string, unknown>;
  /** True when the transport may retry it by itself (a transfer: the API dedupes it). */
  idempotent: boolean;
}

/** The key word of a transfer's answer: `existing` when the API said so, else `new`. */
function outcomeOf(data: unknown): SubmitOutcome {
  return data && typeof data === 'object' && (data as { status?: unknown }).status === 'existing' ? 'existing' : 'new';
}

/** Epoch seconds now. */
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Send one payment request exactly once (see the module comment).
 * @param client the signed client; @param ref the payment; @param req the checked request.
 * @returns the answer, with `outcome` `new` or `existing`.
 * @throws {SubmissionConflictError} the key is journaled for another body (nothing sent).
 * @throws {OutcomeUnknownError} the request may have moved money and no answer says so; or an
 *   earlier request with this key is unresolved (withdraw, swaps, sweep; a transfer past its `expires`).
 * @throws {ApiError} refused (4xx, `failure` `refused`) or not sent (`failure` `notSent`): the key is free again.
 * @throws {Error} the journal cannot be read or written (nothing sent), e.g. a shared journal's
 *   `CoordinationUnavailableError` (code `ECOORDINATION`) while Redis is unavailable.
 */
export async function submitRequest<T = unknown>(client: CustodyClient, ref: SubmissionRef, req: PreparedSubmission, options: SubmitOptions = {}): Promise<SubmitResult<T>> {
  const journal = options.journal;
  if (!journal) return send<T>(client, ref, req, options, undefined);
  const release = await journal.lock(ref);
  try {
    const entry = await journal.get(ref);
    if (!entry) return await send<T>(client, ref, req, options, await journal.reserve(ref, req.body));
    if (entry.bodyHash !== bodyHash(req.body)) throw new SubmissionConflictError(ref, differingFields(entry.body, req.body));
    // The same payment again: what the journal knows decides.
    const again = { ...req, body: entry.body };
    const open = entry.expires === 0 || entry.expires > nowSeconds() + (options.expiryMarginSeconds ?? 5);
    if (entry.state === 'answered' || entry.state === 'found') {
      // A transfer is re-sent while it can be (the API answers `existing`); anything else is answered here.
      if (ref.kind === 'transfer' && open && entry.state === 'answered') return await confirm<T>(client, ref, again, options, entry);
      return fromJournal<T>(entry);
    }
    // 'unknown' (or 'sending': a crash between recorded and answered).
    if (ref.kind === 'transfer' && open && options.resolveUnknown !== false) return await send<T>(client, ref, again, options, entry, true);
    throw new OutcomeUnknownError(
      ref,
      `an earlier request with this partner_txID (first sent at ${new Date(entry.firstAttempt * 1000).toISOString()}) has no known outcome; run the resolve operation before sending it again (nothing was sent now)`,
      undefined,
      0,
    );
  } finally {
    await release();
  }
}

/**
 * A transfer the journal holds as answered, requested again: sent once more (the API answers
 * `existing` with its tx_id), without touching the journal. The journal's answer is known, so no
 * failure of this request can make it unknown or free its key: when the request fails in any way
 * (refused, not sent, outcome unknown, closed), the journal answers.
 */
async function confirm<T>(client: CustodyClient, ref: SubmissionRef, req: PreparedSubmission, options: SubmitOptions, entry: JournalEntry): Promise<SubmitResult<T>> {
  try {
    return await send<T>(client, ref, req, { ...options, journal: undefined, resolveUnknown: false }, undefined);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return fromJournal<T>(entry);
  }
}

/** The journal's answer to a repeated payment: the first answer, `status` `existing`. */
function fromJournal<T>(entry: JournalEntry): SubmitResult<T> {
  const data = { ...(entry.answer ?? {}), ...(entry.tx_id ? { tx_id: entry.tx_id } : {}), status: 'existing' } as T;
  return { statusCode: entry.statusCode ?? 200, data, outcome: 'existing', fromJournal: true, attempts: 0 };
}

/** Record in the journal without letting a failed write hide the answer the caller must get. */
async function note(p: Promise<void> | undefined): Promise<void> {
  try {
    await p;
  } catch {
    // The file failed: the journal refuses every later reservation, so nothing is sent unjournaled.
  }
}

/**
 * Send (and, for a transfer with an unknown outcome, send again) until a definite answer.
 * @param entry the journal entry (already reserved), when journaled.
 * @param unknownBefore true when an earlier request with this key has an unknown outcome.
 */
async function send<T>(client: CustodyClient, ref: SubmissionRef, req: PreparedSubmission, options: SubmitOptions, entry: JournalEntry | undefined, unknownBefore = false): Promise<SubmitResult<T>> {
  const journal = options.journal;
  const resend = ref.kind === 'transfer' && options.resolveUnknown !== false;
  const expires = typeof req.body.expires === 'number' ? req.body.expires : 0;
  const deadlineMs = (expires - (options.expiryMarginSeconds ?? 5)) * 1000;
  const resendPolicy: BackoffPolicy = { firstMs: options.resendDelayMs ?? 1000, factor: 1.5, maxMs: options.maxResendDelayMs ?? 30000, jitter: 'quarter' };
  let resends = 0;
  let unknown = unknownBefore;
  let attempts = 0;
  for (;;) {
    attempts++;
    let err: ApiError;
    try {
      const res = await client.request<T>(req.method, req.path, { body: req.body, idempotent: req.idempotent });
      const answer = (res.data && typeof res.data === 'object' ? res.data : {}) as Record<string, unknown>;
      if (entry) await note(journal!.answered(entry, res.statusCode, answer));
      return { ...res, outcome: outcomeOf(res.data), fromJournal: false, attempts };
    } catch (e) {
      if (!(e instanceof ApiError)) {
        // Not an answer: the request was not built (a signing failure), so nothing left.
        if (entry && !unknown) await note(journal!.free(entry, 'notSent'));
        throw e;
      }
      err = e;
    }
    const closed = client.signal.aborted;
    if (err.failure === 'outcomeUnknown') unknown = true;
    if (!unknown) {
      // Refused or not sent, and no earlier request may have had an effect: the key is free again.
      if (entry) await note(journal!.free(entry, err.failure === 'refused' ? 'refused' : 'notSent'));
      throw err;
    }
    if (entry) await note(journal!.unknown(entry));
    // A refusal after an unknown outcome is not proof of nothing: only 429 (try later) continues.
    const retryable = err.failure !== 'refused' || err.statusCode === 429;
    const wait = backoffDelay(resendPolicy, resends);
    if (resend && retryable && !closed && Date.now() + wait < deadlineMs) {
      await abortableSleep(wait, client.signal);
      resends++;
      if (!client.signal.aborted) continue;
    }
    const why = closed
      ? 'the connection was closed (a redeploy or a stop) while the request was in flight'
      : resend && retryable
        ? `no definite answer before its expires (${new Date(expires * 1000).toISOString()}) after ${attempts} request${attempts === 1 ? '' : 's'}; last: ${err.message}`
        : err.failure === 'refused'
          ? `a repeat was refused (${err.message}) after an earlier request whose outcome is unknown`
          : `${err.message}; run the resolve operation to learn whether it was made`;
    throw new OutcomeUnknownError(ref, why, err, attempts);
  }
}
