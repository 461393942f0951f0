/**
 * v2 policies (spec section 2 "v2 resources", section 4 "v2 endpoints"): list, create, add a
 * member (an update request that must be approved), and the update request (action) itself.
 *
 * A policy's `expression` is a tree of rule nodes. This pack builds the one shape the spec
 * describes: a top-level node `{type: 1, operation: 1, threshold: N, rules: [...]}` whose rules
 * are member rules `{type: 2, operation: 3, threshold: 0, arguments: {id}}`, one per member
 * (a human member or an API key). `threshold` approvals of those members are needed.
 */
import type { ApiResponse } from '../client';
import { ValidationError, characterCount } from '../errors';
import { OperationSpec, S, ID_MAX_LENGTH, prepareOperation, tooLongError } from '../operation';
import type { WorkspaceClient } from './client';
import { callWorkspaceOperation, requireSimulator, withWorkspace } from './operation';
import { W, CONFLICT_RESPONSE, type Wire } from '../wire';
import { objectSchema, arrayOf, listSchema, answers, readOperation, operation } from '../schema-kit';

/**
 * A member rule node (spec section 2 "Expression / rule node") whose member id has the schema
 * `id`: `type` 2, `operation` 3, `threshold` 0, `arguments.id`. All required. Built once for the
 * answers ({@link memberRuleSchema}, `W.id`) and the request body (`S.id`, with its length bound).
 */
function memberRuleOf<const I extends object>(id: I) {
  return objectSchema(['type', 'operation', 'threshold', 'arguments'], { type: { const: 2 }, operation: { const: 3 }, threshold: { const: 0 }, arguments: objectSchema(['id'], { id }) });
}

/**
 * The top-level expression node (spec section 2) with the schema `rules` of its rule list: `type`
 * 1, `operation` 1, `threshold` approvals needed (>= 1), `rules`. All required. Built once for the
 * answers ({@link policyExpressionSchema}) and the request body (at least one rule).
 */
function expressionOf<const R extends object>(rules: R) {
  return objectSchema(['type', 'operation', 'threshold', 'rules'], { type: { const: 1 }, operation: { const: 1 }, threshold: { type: 'integer', minimum: 1 }, rules });
}

/**
 * A member rule node (spec section 2 "Expression / rule node"): `type` 2, `operation` 3,
 * `threshold` 0, `arguments.id` the member id (a human member or an API key). All required.
 */
export const memberRuleSchema = memberRuleOf(W.id);

/** A member rule node ({@link memberRuleSchema}). */
export type MemberRule = Wire<typeof memberRuleSchema>;

/**
 * The top-level expression node (spec section 2): `type` 1, `operation` 1, `threshold` approvals
 * needed (>= 1), `rules` the member rules ({@link memberRuleSchema}). All required.
 */
export const policyExpressionSchema = expressionOf(arrayOf(memberRuleSchema));

/** The top-level expression node ({@link policyExpressionSchema}). */
export type PolicyExpression = Wire<typeof policyExpressionSchema>;

/** Policy types (spec section 2). An admin policy governs changes; a transaction policy governs a wallet's transactions. */
export const POLICY_TYPES = ['admin', 'transaction'] as const;

/** A policy type: one of {@link POLICY_TYPES}. */
export type PolicyType = (typeof POLICY_TYPES)[number];

/** The body of POST and PUT policies ({@link policyBodySchema}). */
export type PolicyBody = Wire<typeof policyBodySchema>;

/**
 * A policy of a workspace as listed (spec section 2 "v2 resources" Policy): `policyID`, `name`,
 * `policyType` (`admin` or `transaction`), `systemType` (number), `actionsGoverned` (array),
 * `expressionContentType` (`application/json`) and `expression` required (the spec's list of a
 * policy's fields); `adminPolicyID`, `adminLocked`, `allowDuplicates` (spec: "on create also")
 * typed when present.
 */
export const workspacePolicySchema = objectSchema(['policyID', 'name', 'policyType', 'systemType', 'actionsGoverned', 'expressionContentType', 'expression'], {
  policyID: W.id,
  name: W.text,
  policyType: { type: 'string', enum: POLICY_TYPES },
  systemType: { type: 'number' },
  actionsGoverned: { type: 'array' },
  expressionContentType: { const: 'application/json' },
  expression: policyExpressionSchema,
  adminPolicyID: W.text,
  adminLocked: W.boolean,
  allowDuplicates: W.boolean,
});

/** A policy of a workspace as listed ({@link workspacePolicySchema}). */
export type WorkspacePolicy = Wire<typeof workspacePolicySchema>;

/**
 * GET policies answer: `{policies: [...]}` (spec section 4: "list of policies"; the key
 * `policies` is the pack's, the spec does not show the wrapper).
 */
export const policyListSchema = listSchema('policies', workspacePolicySchema);

/** GET policies answer ({@link policyListSchema}). */
export type PolicyList = Wire<typeof policyListSchema>;

/** POST policies answer: `policyID` (spec section 4), required. */
export const policyCreatedSchema = objectSchema(['policyID'], { policyID: W.id });

/** POST policies answer ({@link policyCreatedSchema}). */
export type PolicyCreated = Wire<typeof policyCreatedSchema>;

/** Update request (v2 action) statuses: `pending` until approved (or rejected). */
export const UPDATE_REQUEST_STATUSES = ['pending', 'approved', 'rejected'] as const;

/**
 * The answer of PUT policies/{policyID}: an update request that must be approved (spec
 * section 4). `actionID` identifies it (the service's developer guides name an update request
 * an action, with this id); `status` is `pending` until approved. All required (the spec shows no
 * field names: these are the pack's, and the simulator's).
 */
export const policyUpdateRequestSchema = objectSchema(['actionID', 'policyID', 'status'], { actionID: W.id, policyID: W.id, status: { type: 'string', enum: UPDATE_REQUEST_STATUSES } });

/** The answer of PUT policies/{policyID} ({@link policyUpdateRequestSchema}). */
export type PolicyUpdateRequest = Wire<typeof policyUpdateRequestSchema>;

/**
 * An update request (or transaction approval) as read with GET actions/{actionID} (simulator
 * only, not in the spec): `type` `policyUpdate` or `transaction`, `threshold` approvals needed (the
 * governing policy's), `approvers` the member ids that approved, `timestamp` epoch seconds. All required.
 */
export const workspaceActionSchema = objectSchema(['actionID', 'type', 'status', 'workspaceID', 'policyID', 'threshold', 'approvedCount', 'approvers', 'timestamp'], {
  actionID: W.id,
  type: W.text,
  status: { type: 'string', enum: UPDATE_REQUEST_STATUSES },
  workspaceID: W.id,
  policyID: W.id,
  threshold: W.count,
  approvedCount: W.count,
  approvers: arrayOf(W.id),
  timestamp: W.epochSeconds,
});

/** An update request as read with GET actions/{actionID} ({@link workspaceActionSchema}). */
export type WorkspaceAction = Wire<typeof workspaceActionSchema>;

/** A policy member as the editor keeps it: its id and whether it is a human member or an API key. */
export interface PolicyMember {
  id: string;
  kind?: 'human' | 'apiKey';
}

/** What {@link buildPolicyBody} needs; every field is an API field except `threshold` and `members`. */
export interface PolicyDefinition {
  name: string;
  /** approvals needed, 1 to the number of members */
  threshold: number;
  /** member ids (human members or API keys), or {@link PolicyMember}s */
  members: ReadonlyArray<string | PolicyMember>;
  /** id of the admin policy that governs this policy */
  adminPolicyID: string;
  /** default `transaction` */
  policyType?: PolicyType;
  /** default false */
  adminLocked?: boolean;
  /** default false */
  allowDuplicates?: boolean;
}

/** A policy member id: no control characters or surrounding spaces (the editor scripts check with it too). */
export const MEMBER_ID = /^[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?$/;

/**
 * A member rule for one member id (spec section 2).
 * @throws {ValidationError} for an empty or malformed id, or one longer than `ID_MAX_LENGTH` (128).
 */
export function memberRule(id: string, field = 'memberID'): MemberRule {
  if (typeof id === 'string' && characterCount(id) > ID_MAX_LENGTH) throw tooLongError(field, ID_MAX_LENGTH, characterCount(id));
  if (typeof id !== 'string' || !MEMBER_ID.test(id)) throw new ValidationError(field, id === undefined || id === '' ? 'required' : 'must be a member id (a human member id or an API key id, no surrounding spaces)');
  return { type: 2, operation: 3, threshold: 0, arguments: { id } };
}

/**
 * Build the expression of spec section 2 from a threshold and member ids.
 * @param threshold approvals needed: an integer from 1 to `members.length`.
 * @param members member ids (each once).
 * @throws {ValidationError} naming `members` (none, or an id given twice), `members[i]` (bad
 *   id) or `threshold` (not an integer from 1 to the number of members).
 */
export function buildPolicyExpression(threshold: number, members: ReadonlyArray<string | PolicyMember>): PolicyExpression {
  if (!Array.isArray(members) || members.length === 0) throw new ValidationError('members', 'at least one member is required');
  const ids = members.map((m, i) => (typeof m === 'string' ? m : m && typeof m === 'object' ? m.id : undefined) as string);
  const rules = ids.map((id, i) => memberRule(typeof id === 'string' ? id.trim() : id, `members[${i}]`));
  const seen = new Set<string>();
  for (const r of rules) {
    if (seen.has(r.arguments.id)) throw new ValidationError('members', `${r.arguments.id} is listed twice`);
    seen.add(r.arguments.id);
  }
  if (typeof threshold !== 'number' || !Number.isInteger(threshold) || threshold < 1 || threshold > rules.length) {
    throw new ValidationError('threshold', `must be a whole number from 1 to the number of members (${rules.length}), got ${JSON.stringify(threshold)}`);
  }
  return { type: 1, operation: 1, threshold, rules };
}

/**
 * The full POST policies body from a definition (spec section 4): `expressionContentType`
 * `application/json`, `policyType` default `transaction`, flags default false.
 * @throws {ValidationError} naming the field: `name`, `adminPolicyID`, `policyType`, `threshold`, `members`.
 */
export function buildPolicyBody(def: PolicyDefinition): PolicyBody {
  if (typeof def.name !== 'string' || !def.name.trim()) throw new ValidationError('name', 'required');
  if (typeof def.adminPolicyID !== 'string' || !def.adminPolicyID.trim()) throw new ValidationError('adminPolicyID', 'required');
  const policyType = def.policyType ?? 'transaction';
  if (policyType !== 'transaction' && policyType !== 'admin') throw new ValidationError('policyType', 'must be one of "transaction", "admin"');
  return definitionBody(def, def.adminPolicyID.trim());
}

/**
 * The body of a definition with `adminPolicyID` as given: `name` trimmed, the expression built
 * ({@link buildPolicyExpression}), `expressionContentType` `application/json`, `policyType`
 * default `transaction`, flags default false. Checks nothing but the expression.
 * @throws {ValidationError} naming `threshold` or `members`.
 */
function definitionBody(def: PolicyDefinition, adminPolicyID: string): PolicyBody {
  return {
    name: def.name.trim(),
    expression: buildPolicyExpression(def.threshold, def.members),
    expressionContentType: 'application/json',
    adminPolicyID,
    policyType: def.policyType ?? 'transaction',
    adminLocked: def.adminLocked ?? false,
    allowDuplicates: def.allowDuplicates ?? false,
  };
}

/** Member ids of an expression, in order. */
export function policyMembers(expression: PolicyExpression): string[] {
  return (expression?.rules ?? []).map((r) => r.arguments?.id).filter((id): id is string => typeof id === 'string');
}

/**
 * The full PUT body of `policy` with one more member rule (spec section 4: "the full policy
 * body with an extra member rule"). The threshold is unchanged.
 * @throws {ValidationError} naming `memberID` when it is malformed or already a member.
 */
export function withExtraMember(policy: WorkspacePolicy, memberID: string): PolicyBody {
  const rule = memberRule(typeof memberID === 'string' ? memberID.trim() : memberID);
  if (policyMembers(policy.expression).includes(rule.arguments.id)) throw new ValidationError('memberID', `${rule.arguments.id} is already a member of policy ${policy.policyID}`);
  return {
    name: policy.name,
    expression: { ...policy.expression, rules: [...policy.expression.rules, rule] },
    expressionContentType: 'application/json',
    adminPolicyID: policy.adminPolicyID ?? '',
    policyType: policy.policyType,
    adminLocked: policy.adminLocked ?? false,
    allowDuplicates: policy.allowDuplicates ?? false,
  };
}

/** A member rule as sent: {@link memberRuleSchema} with the id's length bound (`S.id`). */
const memberRuleInput = memberRuleOf(S.id);
/** The expression as sent: {@link policyExpressionSchema} with at least one member rule. */
const expressionInput = expressionOf({ type: 'array', minItems: 1, items: memberRuleInput });
/**
 * The body of POST and PUT policies (spec section 4: name, expression, expressionContentType,
 * adminPolicyID, policyType, adminLocked, allowDuplicates; all required): the expression of spec
 * section 2, `expressionContentType` `application/json`, `policyType` `transaction` or `admin`.
 */
export const policyBodySchema = objectSchema(['name', 'expression', 'expressionContentType', 'adminPolicyID', 'policyType', 'adminLocked', 'allowDuplicates'], {
  name: S.name,
  expression: expressionInput,
  expressionContentType: { enum: ['application/json'] },
  adminPolicyID: S.id,
  policyType: { enum: ['transaction', 'admin'] },
  adminLocked: { type: 'boolean' },
  allowDuplicates: { type: 'boolean' },
});
/** Operation declarations of the policies group (spec section 4 "v2 endpoints"). */
export const policyOperations = {
  list: readOperation('/workspaces/{workspaceID}/policies', 'spec section 4, GET {base_url_v2}/workspaces/{workspaceID}/policies', policyListSchema),
  create: operation('POST', '/workspaces/{workspaceID}/policies', 'spec section 4, POST {base_url_v2}/workspaces/{workspaceID}/policies', answers(policyCreatedSchema), { body: policyBodySchema }),
  update: operation('PUT', '/workspaces/{workspaceID}/policies/{policyID}', 'spec section 4, PUT {base_url_v2}/workspaces/{workspaceID}/policies/{policyID}', answers(policyUpdateRequestSchema), { body: policyBodySchema }),
  getAction: readOperation('/actions/{actionID}', 'simulator only: read an update request (the service\'s developer guides name actions; this route is not in the spec)', workspaceActionSchema),
  approveAction: operation('PUT', '/actions/{actionID}', 'simulator only: approve an update request as the token\'s API key (the service signs approvals with BLS keys; not in the spec)', { ...answers(workspaceActionSchema), ...CONFLICT_RESPONSE }),
  rejectAction: operation('DELETE', '/actions/{actionID}', 'simulator only: reject an update request as the token\'s API key (not in the spec)', { ...answers(workspaceActionSchema), ...CONFLICT_RESPONSE }),
} satisfies Record<string, OperationSpec>;

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
