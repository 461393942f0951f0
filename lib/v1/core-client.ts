/**
 * Core clients and their actions (spec section 2 "Core client", "Action"; section 4 "Core
 * clients and actions"; OpenAPI `/coreclient`, `/coreclient/{client_id}/actions`,
 * `/coreclient/{client_id}/action/{action_id}`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec, S } from '../operation';
import type { OkBody } from './trusted-party';

/** A core client; `feed` is its websocket URL, `timestamp` epoch seconds. */
export interface CoreClient {
  id: string;
  name: string;
  feed: string;
  timestamp: number | string;
}

/** Action types (spec section 2; `ApproveNewWalletConnect`, a wallet connection request to an exchange core client: NOTES.md). */
export type ActionType = 'ApproveWithdraw' | 'ApproveTransfer' | 'RejectWithdraw' | 'RejectTransfer' | 'ApproveSwap' | 'ApproveSwapTake' | 'ApproveNewWalletConnect';

/**
 * A wallet connected to an exchange core client, or pending its approval (OpenAPI
 * CoreClientWallet; payload "not shown" by the spec, fields beyond these passed through).
 */
export interface CoreClientWallet {
  wallet_id?: string;
  status?: string;
  [k: string]: unknown;
}

/** Action statuses (spec section 3). */
export type ActionStatus = 'pending' | 'expired' | 'approved' | 'rejected';

/** A pending approval item; `timestamp` and `expireTime` epoch seconds. */
export interface Action {
  id: string;
  type: ActionType | string;
  status: ActionStatus | string;
  timestamp: number;
  expireTime: number;
  /** Present in feed messages and single-action reads. */
  coreClientID?: string;
  /** Present in single-action reads (OpenAPI ActionDetails). */
  details?: Record<string, unknown>;
}

/** Operation declarations of this group, by id. */
export const coreClientOperations = {
  create: { method: 'POST', path: '/coreclient', source: 'spec section 4, POST /coreclient', body: { type: 'object', required: ['name'], properties: { name: S.name } } },
  list: {
    method: 'GET',
    path: '/coreclient',
    idempotent: true,
    source: 'spec section 4, GET /coreclient (company_id required)',
    query: { type: 'object', required: ['company_id'], properties: { company_id: S.id } },
  },
  actions: { method: 'GET', path: '/coreclient/{client_id}/actions', idempotent: true, source: 'spec section 4, GET /coreclient/{client_id}/actions' },
  action: { method: 'GET', path: '/coreclient/{client_id}/action/{action_id}', idempotent: true, source: 'spec section 4, GET /coreclient/{client_id}/action/{action_id}' },
  wallets: { method: 'GET', path: '/coreclient/{client_id}/wallets', idempotent: true, source: 'spec section 4, GET /coreclient/{client_id}/wallets; OpenAPI CoreClientWallet' },
} satisfies Record<string, OperationSpec>;

/** Approve or reject a core client's action (spec section 4), by operation name. */
export const actionOperations = {
  approve: { method: 'PUT', path: '/coreclient/{client_id}/action/{action_id}', source: 'spec section 4, PUT /coreclient/{client_id}/action/{action_id}' },
  reject: { method: 'DELETE', path: '/coreclient/{client_id}/action/{action_id}', source: 'spec section 4, DELETE /coreclient/{client_id}/action/{action_id}' },
} satisfies Record<string, OperationSpec>;

/** Create a core client (an automated custodian). */
export function createCoreClient(client: CustodyClient, input: { name: string }): Promise<ApiResponse<CoreClient>> {
  return callOperation<CoreClient>(client, coreClientOperations.create, input);
}

/** List core clients; `company_id` is a required query parameter. */
export function listCoreClients(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<{ count: number; clients: CoreClient[] }>> {
  return callOperation(client, coreClientOperations.list, input);
}

/** The pending actions of a core client. */
export function listActions(client: CustodyClient, input: { client_id: string }): Promise<ApiResponse<{ count: number; actions: Action[] }>> {
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
export function listCoreClientWallets(client: CustodyClient, input: { client_id: string }): Promise<ApiResponse<{ wallets: CoreClientWallet[] }>> {
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

/** Approve an action as the core client (PUT). Answers `{code: 200, msg: "OK"}`. */
export function approveAction(client: CustodyClient, input: { client_id: string; action_id: string }): Promise<ApiResponse<OkBody>> {
  return callOperation<OkBody>(client, actionOperations.approve, input);
}

/** Reject an action as the core client (DELETE). Answers `{code: 200, msg: "OK"}`. */
export function rejectAction(client: CustodyClient, input: { client_id: string; action_id: string }): Promise<ApiResponse<OkBody>> {
  return callOperation<OkBody>(client, actionOperations.reject, input);
}
