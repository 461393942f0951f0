/**
 * Sending a declared operation ({@link OperationSpec}): {@link callOperation} validates a flat
 * input object against it (lib/request/prepare.ts), checks its asset codes against the client's
 * GET /assets list, builds the request and sends it; {@link submitOperation} sends a money-moving
 * one exactly once through the submission journal. Bad input is refused with a
 * {@link ValidationError} naming the field before anything is sent.
 */
import type { CustodyClient } from './client';
import { ValidationError } from '../api/errors';
import { submissionRef } from '../api/kinds';
import type { OperationSpec } from '../api/spec';
import { assetCodeValues, prepareOperation } from '../request/prepare';
import { findListedAsset, unknownAssetText } from './asset-list';
import { submitRequest, type SubmitOptions, type SubmitResult } from './submission/submit';
import type { ApiResponse, RequestOptions } from './transport';

/**
 * Refuse an asset code that GET /assets does not list, before anything else is sent: every
 * asset code field of `spec` ({@link assetCodeFields}) present in `request` must be a code of
 * the client's asset list (spec section 2 "Asset"; cached per client, fetched again when a code
 * is not in a list older than a minute: lib/client/asset-list.ts). Sends nothing when the operation has
 * no asset code field or the request none of them; else at most the one GET /assets of the
 * client (not one per request).
 *
 * `callOperation` calls it after {@link prepareOperation}; a caller that prepares requests itself
 * (lib/client/signed-request.ts `signedRequest`) calls it too.
 * @param request the prepared request (`query` and `body`), or any object with the input's
 *   fields under `body`.
 * @throws {ValidationError} naming the field: `send.symbol: unknown asset "XYZ"; GET /assets
 *   lists BTC, BTC-TESTNET, ...`; also for a code that is not text or is longer than
 *   {@link ASSET_CODE_MAX_LENGTH} (checked before any GET).
 * @throws {ApiError} when GET /assets fails (no answer, non-2xx, or no asset list in the
 *   answer): then the operation is not sent either.
 */
export async function checkAssetCodes(client: CustodyClient, spec: OperationSpec, request: { query?: Record<string, unknown>; body?: unknown }): Promise<void> {
  const codes = assetCodeValues(spec, request);
  for (const [field, code] of codes) {
    const { asset, listing } = await findListedAsset(client, code);
    if (!asset) throw new ValidationError(field, unknownAssetText(code, listing));
  }
}

/**
 * Validate `input` against `spec` and send the request. A money-moving operation (`submission`
 * set) goes through {@link submitOperation} with `options`.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending, for bad input (see {@link prepareOperation}) or an
 *   asset code GET /assets does not list (see {@link checkAssetCodes}).
 * @throws {ApiError} for a non-2xx answer or no answer (`failure` says what it tells); also when
 *   the GET /assets of the asset check fails, and then the operation itself is not sent.
 * @throws what {@link submitOperation} throws, for a money-moving operation.
 */
export async function callOperation<T = unknown>(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, options?: SubmitOptions & Pick<RequestOptions, 'notAfter'>): Promise<ApiResponse<T>> {
  if (spec.submission) return submitOperation<T>(client, spec, input, options);
  const req = prepareOperation(spec, input);
  await checkAssetCodes(client, spec, req);
  return client.request<T>(spec.method, req.path, { query: req.query, body: req.body, idempotent: spec.idempotent, ...(options?.notAfter !== undefined ? { notAfter: options.notAfter } : {}) });
}

/**
 * Validate `input` against a money-moving operation's `spec` (one with `submission`) and send it
 * exactly once through the submission journal (see lib/client/submission/submit.ts `submitRequest`).
 * @param options the journal, and for transfers whether to re-send after an unknown outcome (default yes).
 * @returns the answer with `outcome` (`new` or `existing`), `fromJournal` and `attempts`.
 * @throws {ValidationError} before sending, for bad input (an asset code GET /assets does not
 *   list included); `partner_txID` when it is missing (a sweep's is optional for the API, but the
 *   journal keys on it).
 * @throws {SubmissionConflictError} the key is journaled for another body; nothing sent.
 * @throws {OutcomeUnknownError} the request may have moved money (code `EOUTCOMEUNKNOWN`).
 * @throws {ApiError} refused (4xx) or not sent: nothing happened.
 */
export async function submitOperation<T = unknown>(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, options: SubmitOptions = {}): Promise<SubmitResult<T>> {
  if (!spec.submission) throw new ValidationError('operation', `${spec.method} ${spec.path} does not move money`);
  const req = prepareOperation(spec, input);
  await checkAssetCodes(client, spec, req);
  const body = req.body ?? {};
  const key = body.partner_txID;
  if (typeof key !== 'string' || !key.trim()) throw new ValidationError('partner_txID', 'required: the key of this payment (keep it the same when you retry the same payment)');
  const ref = submissionRef(spec.submission, input, key);
  return submitRequest<T>(client, ref, { method: spec.method, path: req.path, body, idempotent: Boolean(spec.idempotent) }, options);
}
