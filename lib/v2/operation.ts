/**
 * Sending a declared operation ({@link OperationSpec}) over a {@link WorkspaceClient}: the same
 * validation as v1 (`prepareOperation`: bad input refused before sending, naming the field),
 * with `workspaceID` taken from the client's configured workspace when the input has none.
 */
import type { ApiResponse } from '../client';
import { prepareOperation, OperationSpec } from '../operation';
import type { WorkspaceClient } from './client';

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
 * Validate `input` against `spec` and send it with the `x-token` header.
 * @returns the 2xx status and parsed body.
 * @throws {ValidationError} before sending, for bad input (e.g. `workspaceID: required`).
 * @throws {ApiError} for a non-2xx answer or no answer.
 */
export async function callWorkspaceOperation<T = unknown>(client: WorkspaceClient, spec: OperationSpec, input: Record<string, unknown>): Promise<ApiResponse<T>> {
  const req = prepareOperation(spec, withWorkspace(client, input));
  return client.request<T>(spec.method, req.path, { query: req.query, body: req.body, idempotent: spec.idempotent });
}
