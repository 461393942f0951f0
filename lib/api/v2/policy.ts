/**
 * v2 policies (spec section 2 "v2 resources", section 4 "v2 endpoints"): list, create, add a
 * member (an update request that must be approved), and the update request (action) itself.
 *
 * A policy's `expression` is a tree of rule nodes. This pack builds the one shape the spec
 * describes: a top-level node `{type: 1, operation: 1, threshold: N, rules: [...]}` whose rules
 * are member rules `{type: 2, operation: 3, threshold: 0, arguments: {id}}`, one per member
 * (a human member or an API key). `threshold` approvals of those members are needed.
 */
import { W, CONFLICT_RESPONSE, type Wire } from '../wire';
import { objectSchema, arrayOf, listSchema, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S } from '../spec';

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
