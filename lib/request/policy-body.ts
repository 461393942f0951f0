/**
 * Building a v2 policy body (spec section 2 "Expression / rule node", section 4 "v2 endpoints"):
 * the member rules and the threshold expression from a definition ({@link PolicyDefinition},
 * lib/api/v2/policy.ts), and a policy with one more member. Checks what it builds; sends nothing.
 */
import type { MemberRule, PolicyMember, PolicyExpression, PolicyDefinition, PolicyBody, WorkspacePolicy } from '../api/v2/policy';
import { characterCount, ValidationError } from '../api/errors';
import { ID_MAX_LENGTH } from '../api/spec';
import { tooLongError } from './prepare';

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
export function definitionBody(def: PolicyDefinition, adminPolicyID: string): PolicyBody {
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
