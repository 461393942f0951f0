/**
 * A policy kept as code (docs/policies.md): a JSON file holding a custody-approver rule set,
 * `{rules, defaultDecision}` (the node's `rules` and `defaultDecision` properties), checked by the
 * runtime's own compiler ({@link compileDraft}: the fields named as the deployed node names them)
 * and against the JSON Schema shipped with the package, `schemas/approval-policy.schema.json`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import { ValidationError } from '../api/errors';
import { compileDraft, type PolicyDraft } from './draft';

/** The shipped JSON Schema of a rule set (package root `schemas/`; from dist/lib/approver or lib/approver alike). */
export const POLICY_SCHEMA_FILE = path.resolve(__dirname, '..', '..', ...(path.basename(path.resolve(__dirname, '..', '..')) === 'dist' ? ['..'] : []), 'schemas', 'approval-policy.schema.json');

/**
 * The field an ajv error of the schema names, in the runtime's notation: `/rules/2/maxAmount` ->
 * `rules[2].maxAmount`; a missing property is named itself (`rules[0].name`); a bad weekday names
 * the list (`rules[0].days`), as compileRules does.
 */
export function schemaErrorField(e: Pick<ErrorObject, 'instancePath' | 'keyword' | 'params'>): string {
  const parts = e.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') parts.push(String((e.params as { missingProperty?: unknown }).missingProperty));
  if (parts.length === 4 && parts[0] === 'rules' && parts[2] === 'days' && e.keyword === 'pattern') parts.pop();
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || 'policy';
}

let validator: ((doc: unknown) => boolean) & { errors?: ErrorObject[] | null } | undefined;

/**
 * Check a policy against the shipped JSON Schema ({@link POLICY_SCHEMA_FILE}, ajv).
 * @throws {ValidationError} naming the first refused field ({@link schemaErrorField}).
 */
export function checkPolicySchema(doc: unknown): void {
  if (!validator) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Ajv = (require('ajv') as typeof import('ajv')).default;
    validator = new Ajv({ allErrors: false, strict: false }).compile(JSON.parse(fs.readFileSync(POLICY_SCHEMA_FILE, 'utf8')) as object);
  }
  if (validator(doc)) return;
  const e = validator.errors![0]!;
  throw new ValidationError(schemaErrorField(e), `${e.message ?? 'refused'} (schemas/approval-policy.schema.json)`);
}

/**
 * Read a policy file's text: JSON `{rules, defaultDecision}`, checked by the runtime
 * ({@link compileDraft}) and then by the schema ({@link checkPolicySchema}).
 * @returns the draft.
 * @throws {ValidationError} naming `policy` (not JSON, not an object) or the bad field (`rules[2].maxAmount`, `defaultDecision`).
 */
export function parsePolicy(text: string): PolicyDraft {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ValidationError('policy', `JSON text {"rules": [...], "defaultDecision": "hold"}: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ValidationError('policy', 'a JSON object {"rules": [...], "defaultDecision": "hold"}');
  const draft = doc as PolicyDraft;
  compileDraft(draft);
  checkPolicySchema(draft);
  return { rules: draft.rules, defaultDecision: draft.defaultDecision };
}
