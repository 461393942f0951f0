/**
 * Sending a declared operation ({@link OperationSpec}) over a {@link WorkspaceClient}: the same
 * validation as v1 (`prepareOperation`: bad input refused before sending, naming the field),
 * with `workspaceID` taken from the client's configured workspace when the input has none.
 */
import { ConfigError } from '../../api/errors';
import { prepareOperation } from '../../request/prepare';
import type { WorkspaceClient } from './client';
import type { ApiResponse } from '../transport';
import type { OperationSpec } from '../../api/spec';

/**
 * The input with `workspaceID` filled from the client when absent or empty.
 * @returns a shallow copy.
 */
export function withWorkspace(client: WorkspaceClient, input: Record<string, unknown>): Record<string, unknown> {
  const out = { ...input };
  if ((out.workspaceID === undefined || out.workspaceID === '') && client.workspaceId) out.workspaceID = client.workspaceId;
  return out;
}

/**
 * Refuse a simulator-only operation on a client that may not send them. The v2 operations made up
 * for the simulator are not in the spec, so the hosted service does not have them in this form (an
 * approval there is signed with BLS keys in the signing app): policy `getAction` (GET
 * /actions/{actionID}), `approveAction` (PUT), `rejectAction` (DELETE); portfolio `get` (GET
 * accounts/{accountID}) and `getWallet` (GET accounts/{accountID}/wallets/{walletID}). Each of their
 * functions calls this first. A client may send them when {@link WorkspaceClient.simulatorOperations} is set (by default:
 * its base URL's host is loopback).
 * @param operation the operation's name as the nodes show it, e.g. `approveAction`.
 * @throws {ConfigError} (code ECONFIG) naming the operation; nothing is sent.
 */
export function requireSimulator(client: WorkspaceClient, operation: string): void {
  if (!client.simulatorOperations) {
    throw new ConfigError(`operation: ${operation} is simulator only (made up for the simulator, not in the spec); the connection's v2 address ${client.baseUrl} is not a simulator`);
  }
}

/**
 * Validate `input` against `spec` and send it with the `x-token` header.
 * @param extra `timeoutMs`: this request's timeout (ms), when not the client's.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending, for bad input (e.g. `workspaceID: required`).
 * @throws {ApiError} for a non-2xx answer or no answer.
 */
export async function callWorkspaceOperation<T = unknown>(client: WorkspaceClient, spec: OperationSpec, input: Record<string, unknown>, extra: { timeoutMs?: number } = {}): Promise<ApiResponse<T>> {
  const req = prepareOperation(spec, withWorkspace(client, input));
  return client.request<T>(spec.method, req.path, { query: req.query, body: req.body, idempotent: spec.idempotent, timeoutMs: extra.timeoutMs });
}
