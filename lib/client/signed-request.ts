/**
 * Sending any signed call by method and path (the request node's escape hatch, docs/nodes.md),
 * after the checks of lib/request/signed-request.ts.
 */
import { CustodyClient } from './client';
import { type SignedRequest, prepareSignedRequest, checkDeclaredOperation, declaredQueryFields } from '../request/signed-request';
import type { ApiResponse } from './transport';
import { assetCodeFields } from '../request/prepare';
import { checkAssetCodes } from './call';

/**
 * Send one signed call (spec section 5 headers and signature, as every operation). Only GET is
 * retried (timeouts, 429, 502, 503, 504): a repeated POST, PUT or DELETE could repeat its effect.
 * A call that a declared v1 operation covers is checked first as that operation's typed node
 * checks it ({@link checkDeclaredOperation}), its asset codes too (body fields, and query fields
 * of its query string: `checkAssetCodes`, one cached GET /assets per client); the body is then
 * sent exactly as given.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending (see {@link prepareSignedRequest},
 *   {@link checkDeclaredOperation}; `send.symbol: unknown asset "XYZ"; GET /assets lists ...`).
 * @throws {ApiError} for a non-2xx answer or no answer; also when the GET /assets of the asset
 *   check fails, and then the call itself is not sent.
 */
export async function signedRequest<T = unknown>(client: CustodyClient, req: SignedRequest): Promise<ApiResponse<T>> {
  const r = prepareSignedRequest(req, client.baseUrl);
  const matched = checkDeclaredOperation(r.method, r.path, r.body);
  if (matched && assetCodeFields(matched.spec).length) await checkAssetCodes(client, matched.spec, { query: declaredQueryFields(matched.spec, r.path), body: r.body });
  return client.request<T>(r.method, r.path, { body: r.body, idempotent: r.method === 'GET' });
}
