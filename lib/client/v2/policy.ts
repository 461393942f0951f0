/**
 * The typed calls of the v2 policy operations declared in lib/api/v2/policy.ts (sent over a
 * `WorkspaceClient`, lib/client/v2/call.ts).
 */
import { WorkspaceClient } from './client';
import type { ApiResponse } from '../transport';
import {
  type PolicyList,
  policyOperations,
  type WorkspacePolicy,
  type PolicyExpression,
  type PolicyMember,
  type PolicyBody,
  type PolicyCreated,
  type PolicyDefinition,
  type PolicyUpdateRequest,
  type WorkspaceAction,
} from '../../api/v2/policy';
import { callWorkspaceOperation, withWorkspace, requireSimulator } from './call';
import { ValidationError } from '../../api/errors';
import { definitionBody, memberRule, policyMembers, withExtraMember } from '../../request/policy-body';
import { prepareOperation } from '../../request/prepare';

/**
 * List the policies of a workspace (spec section 4, GET policies). `workspaceID` defaults to the
 * client's. Retried (a read).
 * @returns `{policies}`.
 * @throws {ValidationError} before sending, naming `workspaceID` when neither the input nor the client has one.
 * @throws {ApiError} for a non-2xx answer (401 for a bad token, 404 for an unknown workspace) or no answer.
 */
export function listPolicies(client: WorkspaceClient, input: { workspaceID?: string } = {}): Promise<ApiResponse<PolicyList>> {
  return callWorkspaceOperation<PolicyList>(client, policyOperations.list, input);
}

/**
 * The workspace's admin policy (`policyType` `admin`, spec section 4 rules).
 * @throws {ValidationError} naming `adminPolicyID` when the workspace has none or several.
 */
export async function findAdminPolicy(client: WorkspaceClient, input: { workspaceID?: string } = {}): Promise<WorkspacePolicy> {
  const list = await listPolicies(client, input);
  const admins = (list.data.policies ?? []).filter((p) => p.policyType === 'admin');
  if (admins.length !== 1) throw new ValidationError('adminPolicyID', admins.length ? `required: the workspace has ${admins.length} admin policies` : 'required: the workspace has no admin policy');
  return admins[0];
}

/**
 * Create a policy. Give either a definition (`name`, `threshold`, `members`, ...: the
 * expression is built here) or a whole body with `expression` (checked as given). An empty
 * `adminPolicyID` is filled with the workspace's admin policy (one GET first).
 * Not retried (a retry could create a second policy).
 * @returns `{policyID}`.
 * @throws {ValidationError} before sending, naming the field.
 * @throws {ApiError} on a non-2xx answer (e.g. 400 for an API key member that is not associated
 *   with a signing agent or key pairs).
 */
export async function createPolicy(
  client: WorkspaceClient,
  input: ({ expression: PolicyExpression } | { threshold: number; members: ReadonlyArray<string | PolicyMember> }) & Partial<Omit<PolicyBody, 'expression'>> & { workspaceID?: string },
): Promise<ApiResponse<PolicyCreated>> {
  const src = input as Record<string, unknown>;
  let body: Record<string, unknown>;
  if (src.expression !== undefined) {
    body = { expressionContentType: 'application/json', policyType: 'transaction', adminLocked: false, allowDuplicates: false, ...src };
    const expr = src.expression as PolicyExpression;
    if (expr && Array.isArray(expr.rules) && Number.isInteger(expr.threshold) && expr.threshold > expr.rules.length) {
      throw new ValidationError('expression.threshold', `must be at most the number of member rules (${expr.rules.length}), got ${expr.threshold}`);
    }
  } else {
    if (typeof src.name !== 'string' || !src.name.trim()) throw new ValidationError('name', 'required');
    const def = src as unknown as PolicyDefinition;
    // adminPolicyID may be empty here: filled with the workspace's admin policy below.
    body = { ...definitionBody(def, typeof def.adminPolicyID === 'string' ? def.adminPolicyID.trim() : def.adminPolicyID) };
  }
  if (!body.adminPolicyID) {
    // Refuse bad input before the GET that finds the admin policy: check the body with a stand-in id.
    prepareOperation(policyOperations.create, { ...withWorkspace(client, input), ...body, adminPolicyID: 'admin-policy' });
    body.adminPolicyID = (await findAdminPolicy(client, input)).policyID;
  }
  return callWorkspaceOperation<PolicyCreated>(client, policyOperations.create, { ...withWorkspace(client, input), ...body });
}

/**
 * Per (v2 base URL, workspace, policyID): the tail of the chain of {@link addPolicyMember} calls,
 * and the members this process asked to add whose update requests are not applied yet.
 */
interface AddMemberQueue {
  tail: Promise<unknown>;
  /** member ids sent in an update request of this process and not yet in the policy as read */
  carried: string[];
  /** calls queued or running */
  users: number;
}
const addMemberQueues = new Map<string, AddMemberQueue>();

/**
 * Add a member to a policy: read the policy (GET policies), send its full body with one more
 * member rule (PUT). The policy is not changed yet: the answer is an update request that
 * must be approved (spec section 4), and an approved request replaces the whole policy body.
 * Not retried.
 *
 * Concurrent adds to the same policy (same v2 base URL, workspace and policyID) run one after
 * another in this process (a promise chain), and each body also carries the members of this
 * process's earlier update requests for that policy that are not in the policy yet: two
 * concurrent adds of A then B send `[..., A]` then `[..., A, B]`, so approving them in that
 * order (or approving only the last) keeps both members. Approving the earlier request after
 * the later one applies the earlier body (without B); a member whose request was rejected is
 * still carried by a later request of this process (reject that one too). Adds from other
 * processes or other tools are not seen until approved.
 * @param input `policyID`, `memberID` (a human member id or an API key id), optional `workspaceID`.
 * @returns the update request `{actionID, policyID, status: 'pending'}`.
 * @throws {ValidationError} naming `policyID` (missing, unknown in the workspace) or `memberID` (malformed, already a member).
 * @throws {ApiError} on a non-2xx answer.
 */
export async function addPolicyMember(client: WorkspaceClient, input: { policyID: string; memberID: string; workspaceID?: string }): Promise<ApiResponse<PolicyUpdateRequest>> {
  const memberID = memberRule(typeof input.memberID === 'string' ? input.memberID.trim() : input.memberID).arguments.id;
  if (typeof input.policyID !== 'string' || !input.policyID.trim()) throw new ValidationError('policyID', 'required');
  const policyID = input.policyID.trim();
  const key = JSON.stringify([client.baseUrl, String(withWorkspace(client, input).workspaceID ?? ''), policyID]);
  let queue = addMemberQueues.get(key);
  if (!queue) {
    queue = { tail: Promise.resolve(), carried: [], users: 0 };
    addMemberQueues.set(key, queue);
  }
  const q = queue;
  q.users += 1;
  const run = q.tail.then(() => addMemberOnce(client, input, policyID, memberID, q));
  q.tail = run.catch(() => undefined);
  try {
    return await run;
  } finally {
    q.users -= 1;
    if (q.users === 0 && q.carried.length === 0 && addMemberQueues.get(key) === q) addMemberQueues.delete(key);
  }
}

/** One add, its turn come: read, PUT the body with the carried members and `memberID`, remember `memberID`. */
async function addMemberOnce(client: WorkspaceClient, input: { workspaceID?: string }, policyID: string, memberID: string, q: AddMemberQueue): Promise<ApiResponse<PolicyUpdateRequest>> {
  const list = await listPolicies(client, input);
  const policy = (list.data.policies ?? []).find((p) => p.policyID === policyID);
  if (!policy) throw new ValidationError('policyID', `no policy ${policyID} in the workspace`);
  const current = policyMembers(policy.expression);
  q.carried = q.carried.filter((id) => !current.includes(id));
  const carried = q.carried.filter((id) => id !== memberID).map((id) => memberRule(id));
  const base: WorkspacePolicy = { ...policy, expression: { ...policy.expression, rules: [...policy.expression.rules, ...carried] } };
  const body = withExtraMember(base, memberID);
  const res = await callWorkspaceOperation<PolicyUpdateRequest>(client, policyOperations.update, { ...withWorkspace(client, input), policyID: policy.policyID, ...body });
  if (!q.carried.includes(memberID)) q.carried.push(memberID);
  return res;
}

/**
 * Read an update request (action). Simulator only (not in the spec): refused unless the client
 * may send simulator operations ({@link WorkspaceClient.simulatorOperations}).
 * @throws {ConfigError} naming `getAction` on a client that is not a simulator's, before sending.
 * @throws {ValidationError} before sending, naming `actionID` when missing.
 * @throws {ApiError} for a non-2xx answer (404 for an unknown action) or no answer.
 */
export async function getWorkspaceAction(client: WorkspaceClient, input: { actionID: string }): Promise<ApiResponse<WorkspaceAction>> {
  requireSimulator(client, 'getAction');
  return callWorkspaceOperation<WorkspaceAction>(client, policyOperations.getAction, input);
}

/**
 * Approve an update request as the token's API key, which must be a member of the governing
 * policy (the simulator's programmatic approval; the service itself expects a BLS signature).
 * Simulator only (not in the spec): refused unless the client may send simulator operations.
 * @returns the action after the approval; `status` is `approved` once the threshold is reached.
 * @throws {ConfigError} naming `approveAction` on a client that is not a simulator's, before sending.
 * @throws {ValidationError} before sending, naming `actionID` when missing.
 * @throws {ApiError} for a non-2xx answer (403 not a member or the requester, 404 unknown, 409 no longer pending) or no answer.
 */
export async function approveWorkspaceAction(client: WorkspaceClient, input: { actionID: string }): Promise<ApiResponse<WorkspaceAction>> {
  requireSimulator(client, 'approveAction');
  return callWorkspaceOperation<WorkspaceAction>(client, policyOperations.approveAction, input);
}

/**
 * Reject an update request as the token's API key (a member of the governing policy).
 * Simulator only (not in the spec): refused unless the client may send simulator operations.
 * @returns the action, `status` `rejected`.
 * @throws {ConfigError} naming `rejectAction` on a client that is not a simulator's, before sending.
 * @throws {ValidationError} before sending, naming `actionID` when missing.
 * @throws {ApiError} for a non-2xx answer (403 not a member, 404 unknown, 409 no longer pending) or no answer.
 */
export async function rejectWorkspaceAction(client: WorkspaceClient, input: { actionID: string }): Promise<ApiResponse<WorkspaceAction>> {
  requireSimulator(client, 'rejectAction');
  return callWorkspaceOperation<WorkspaceAction>(client, policyOperations.rejectAction, input);
}
