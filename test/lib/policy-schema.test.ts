/**
 * The JSON Schema of a custody-approver rule set shipped with the package
 * (schemas/approval-policy.schema.json, docs/policies.md), checked with ajv as a user's CI would:
 * it accepts the rule set of every approver of the shipped examples and one using every field;
 * it refuses bad rule sets, naming (in the runtime's notation, lib/approver/policy-file.ts
 * `schemaErrorField`) the same field as the runtime's own check (`compileDraft`); and
 * `parsePolicy` (what `custodyflow-policy` reads) names that field too. The package ships the file.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { POLICY_SCHEMA_FILE, compileDraft, parsePolicy, schemaErrorField } from '../../lib/approver';
import { root } from '../helpers/red-process';

const schema = JSON.parse(fs.readFileSync(POLICY_SCHEMA_FILE, 'utf8')) as object;
const validate = new Ajv({ allErrors: false, strict: false }).compile(schema);

/** The field the runtime names for `draft` (compileDraft's ValidationError), or undefined when it accepts it. */
function runtimeField(draft: { rules: unknown; defaultDecision?: unknown }): string | undefined {
  try {
    compileDraft(draft);
    return undefined;
  } catch (e) {
    return (e as { field: string }).field;
  }
}

/** The rule sets of every custody-approver node of the shipped examples. */
function exampleRuleSets(): Array<{ where: string; draft: { rules: unknown; defaultDecision?: unknown } }> {
  const dir = path.join(root, 'examples');
  const out: Array<{ where: string; draft: { rules: unknown; defaultDecision?: unknown } }> = [];
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    for (const n of JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Array<Record<string, unknown>>) {
      if (n.type === 'custody-approver') out.push({ where: `${f} ${String(n.id)}`, draft: { rules: n.rules, defaultDecision: n.defaultDecision || 'hold' } });
    }
  }
  return out;
}

const FULL = {
  name: 'every field',
  decision: 'approve',
  actionTypes: ['ApproveTransfer'],
  assets: ['BTC-TESTNET'],
  minAmount: '0.001',
  maxAmount: '1.5',
  destinations: ['demo-counterparty-btc-testnet'],
  destinationWhitelisted: false,
  sources: ['demo-fund'],
  velocityAmount: '10',
  velocityCount: '20',
  velocityWindowHours: '24',
  days: ['mon', 'Tue', 'wed', 'thu', 'fri'],
  from: '08:00',
  to: '18:30',
  timeZone: 'Europe/Zurich',
  referencePattern: '^INV-\\d{4}-',
  benefitOfPattern: 'Acme',
};

describe('the approval policy JSON Schema (schemas/approval-policy.schema.json)', () => {
  it('is shipped: package.json files holds schemas/', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[]; bin: Record<string, string> };
    assert.ok(pkg.files.includes('schemas'));
    assert.ok(fs.existsSync(path.join(root, 'schemas', 'approval-policy.schema.json')));
    assert.equal(pkg.bin['custodyflow-policy'], 'dist/lib/approver/cli.js');
  });

  it("accepts every shipped example's approver rules, and a rule using every field; the runtime accepts them too", () => {
    const sets = exampleRuleSets();
    assert.ok(sets.length >= 4, `approvers in the examples: ${sets.length}`);
    for (const { where, draft } of [...sets, { where: 'every field', draft: { rules: [FULL], defaultDecision: 'reject' } }]) {
      assert.equal(validate(draft), true, `${where}: ${JSON.stringify(validate.errors)}`);
      assert.equal(runtimeField(draft), undefined, where);
      assert.deepEqual(parsePolicy(JSON.stringify(draft)), draft, where);
    }
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['an amount that is not a decimal', { rules: [{ ...FULL, maxAmount: '-1' }] }, 'rules[0].maxAmount'],
    ['an unknown decision', { rules: [FULL, { ...FULL, decision: 'maybe' }] }, 'rules[1].decision'],
    ['a rule without a name', { rules: [{ decision: 'hold' }] }, 'rules[0].name'],
    ['a velocity count that is not whole', { rules: [{ ...FULL, velocityCount: '2.5' }] }, 'rules[0].velocityCount'],
    ['a window of 0 hours', { rules: [{ ...FULL, velocityWindowHours: '0' }] }, 'rules[0].velocityWindowHours'],
    ['a bad weekday', { rules: [{ ...FULL, days: ['mon', 'someday'] }] }, 'rules[0].days'],
    ['a bad time', { rules: [{ ...FULL, from: '25:00' }] }, 'rules[0].from'],
    ['a list that is not one', { rules: [{ ...FULL, assets: 'BTC-TESTNET' }] }, 'rules[0].assets'],
    ['an unknown no-match decision', { rules: [], defaultDecision: 'approve' }, 'defaultDecision'],
    ['rules that are not a list', { rules: { name: 'x' } }, 'rules'],
  ];
  for (const [what, draft, field] of bad) {
    it(`refuses ${what}, naming ${field} as the runtime does`, () => {
      assert.equal(validate(draft), false);
      assert.equal(schemaErrorField(validate.errors![0]!), field, JSON.stringify(validate.errors));
      assert.equal(runtimeField(draft as { rules: unknown }), field);
      assert.throws(() => parsePolicy(JSON.stringify(draft)), (e: { field?: string }) => e.field === field);
    });
  }

  it('what only the runtime checks (a bad regular expression) is refused by parsePolicy, naming the field', () => {
    const draft = { rules: [{ ...FULL, referencePattern: '(' }] };
    assert.equal(validate(draft), true, 'a schema cannot compile a regular expression');
    assert.throws(() => parsePolicy(JSON.stringify(draft)), (e: { field?: string }) => e.field === 'rules[0].referencePattern');
    assert.throws(() => parsePolicy('{"rules": ['), (e: { field?: string }) => e.field === 'policy');
  });
});
