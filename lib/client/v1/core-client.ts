/**
 * The typed calls of the operations declared in lib/api/v1/core-client.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import type { ApiResponse, RequestOptions } from '../transport';
import { type CoreClient, coreClientOperations, type CoreClientList, type ActionList, type Action, type CoreClientWalletList, type ActionDecision, actionOperations } from '../../api/v1/core-client';
import { callOperation } from '../call';

/** Create a core client (an automated custodian). */
export function createCoreClient(client: CustodyClient, input: { name: string }): Promise<ApiResponse<CoreClient>> {
  return callOperation<CoreClient>(client, coreClientOperations.create, input);
}

/** List core clients; `company_id` is a required query parameter. */
export function listCoreClients(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<CoreClientList>> {
  return callOperation(client, coreClientOperations.list, input);
}

/** The pending actions of a core client. */
export function listActions(client: CustodyClient, input: { client_id: string }): Promise<ApiResponse<ActionList>> {
  return callOperation(client, coreClientOperations.actions, input);
}

/** One action with `coreClientID` and `details`. */
export function getAction(client: CustodyClient, input: { client_id: string; action_id: string }): Promise<ApiResponse<Action>> {
  return callOperation<Action>(client, coreClientOperations.action, input);
}

/**
 * The wallets connected to an exchange core client and those pending its approval:
 * `{wallets: [...]}` (spec section 4, GET /coreclient/{client_id}/wallets).
 * @throws {ValidationError} for a missing `client_id`. @throws {ApiError} on a non-2xx answer.
 */
export function listCoreClientWallets(client: CustodyClient, input: { client_id: string }): Promise<ApiResponse<CoreClientWalletList>> {
  return callOperation(client, coreClientOperations.wallets, input);
}

/**
 * One action with its details, if it is still `pending` (spec section 3: action statuses).
 * @returns the action, or undefined when it was approved, rejected or expired meanwhile.
 * @throws {ApiError} when it cannot be read.
 */
export async function getPendingAction(client: CustodyClient, input: { client_id: string; action_id: string }): Promise<Action | undefined> {
  const res = await getAction(client, input);
  return res.data.status === 'pending' ? res.data : undefined;
}

/**
 * Approve an action as the core client (PUT). Answers {@link ActionDecision}: `{code: 200, msg: "OK"}` or the action.
 * @param options `notAfter`: epoch ms after which it is not sent (ApiError `EDEADLINE`, failure `notSent`).
 */
export function approveAction(client: CustodyClient, input: { client_id: string; action_id: string }, options?: Pick<RequestOptions, 'notAfter'>): Promise<ApiResponse<ActionDecision>> {
  return callOperation<ActionDecision>(client, actionOperations.approve, input, options);
}

/**
 * Reject an action as the core client (DELETE). Answers {@link ActionDecision}: `{code: 200, msg: "OK"}` or the action.
 * @param options `notAfter`: epoch ms after which it is not sent (ApiError `EDEADLINE`, failure `notSent`).
 */
export function rejectAction(client: CustodyClient, input: { client_id: string; action_id: string }, options?: Pick<RequestOptions, 'notAfter'>): Promise<ApiResponse<ActionDecision>> {
  return callOperation<ActionDecision>(client, actionOperations.reject, input, options);
}
