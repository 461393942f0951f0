#!/usr/bin/env node
/**
 * `custodyflow-policy`: a custody-approver policy kept as code (docs/policies.md).
 *
 * - `custodyflow-policy simulate <audit file> --policy <policy.json> [--from <ISO>] [--to <ISO>]
 *   [--review <review audit file>]... [--json] [--fail-on-change]`: decide the approver's recorded
 *   actions of the period again under the policy file's rule set (lib `simulate`, docs/nodes.md
 *   "Simulating a draft"; the audit file is the approver's live segment, its rotated segments beside
 *   it are read too; default period the last 30 days). Prints the counts by change, the sums per
 *   asset, the not-replayable count with why, and each changed action with both decisions and the
 *   policy's reasons; `--json`: lib's SimulationResult as JSON instead.
 * - `custodyflow-policy check --policy <policy.json>`: check the file only.
 *
 * The policy file is `{"rules": [...], "defaultDecision": "hold" | "reject"}` (the node's properties;
 * schemas/approval-policy.schema.json). Reads only: no API call, nothing written.
 *
 * Exit 0 (no change, or changes without `--fail-on-change`), 1 with `--fail-on-change` when any
 * decision changes, 2 on a usage error, a bad policy (naming the field, e.g. `rules[0].maxAmount`),
 * a bad period or an unreadable file.
 */
import fs from 'node:fs';
import { parsePolicy } from './policy-file';
import { simulate, type SimulationResult } from './simulate';

const USAGE = [
  'usage: custodyflow-policy simulate <approver audit file> --policy <policy.json> [--from <ISO 8601>] [--to <ISO 8601>] [--review <review audit file>]... [--json] [--fail-on-change]',
  '       custodyflow-policy check --policy <policy.json>',
].join('\n');

/** Remove every `--<name> <value>` from `args`: their values (null for a value missing). */
function takeAll(args: string[], name: string): Array<string | null> {
  const out: Array<string | null> = [];
  for (let i = args.indexOf(name); i >= 0; i = args.indexOf(name)) {
    const value = args[i + 1];
    args.splice(i, value === undefined || value.startsWith('--') ? 1 : 2);
    out.push(value === undefined || value.startsWith('--') ? null : value);
  }
  return out;
}

/** Remove the flag `--<name>` from `args`: whether it was there. */
function takeFlag(args: string[], name: string): boolean {
  const i = args.indexOf(name);
  if (i < 0) return false;
  args.splice(i, 1);
  return true;
}

/** The summary of a simulation as lines of text. */
export function summaryLines(r: SimulationResult): string[] {
  const lines = [`period ${new Date(r.from).toISOString()} .. ${new Date(r.to).toISOString()}: ${r.actions} decisions, ${r.replayed} replayed, ${r.notReplayable.count} not replayable (${r.read.segments} segment(s), ${r.read.lines} lines read)`];
  const changed = Object.entries(r.counts).filter(([k]) => k !== 'unchanged');
  lines.push(`unchanged: ${r.counts.unchanged ?? 0}`);
  for (const [k, n] of changed) lines.push(`${k}: ${n}`);
  for (const [why, n] of Object.entries(r.notReplayable.why)) lines.push(`not replayable (${n}): ${why}`);
  for (const [asset, s] of Object.entries(r.assets)) {
    const shown = (x: { count: number; baseUnits: string; decimal: string | null }) => `${x.count} for ${x.decimal ?? `${x.baseUnits} base units`}`;
    lines.push(`${asset}: approved then ${shown(s.approvedThen)}, under the policy ${shown(s.approvedDraft)}${s.approvedByPeople.count ? `, by people ${shown(s.approvedByPeople)}` : ''}`);
  }
  if (r.decidedByPeople) lines.push(`held then and decided by people afterwards (review audit): ${r.decidedByPeople}`);
  for (const c of r.changes) {
    const amount = c.amountDecimal ?? (c.amount !== null ? `${c.amount} base units` : '');
    const rule = (x: { rule: { name: string } | null }) => (x.rule ? `rule "${x.rule.name}"` : 'no rule matched');
    lines.push(`${c.decidedAt} ${c.action_id} ${c.type} ${amount} ${c.asset ?? ''} to ${c.destination ?? '(none)'}: ${c.then.decision} (${rule(c.then)}) -> ${c.draft.decision} (${rule(c.draft)})${c.person ? `; a person decided ${c.person.decision}` : ''}`);
    for (const why of c.draft.reasons) lines.push(`    ${why}`);
  }
  if (r.changesLeftOff) lines.push(`... and ${r.changesLeftOff} more changed actions not listed`);
  return lines;
}

/**
 * Run the command.
 * @param argv the arguments after the program name.
 * @returns the exit code: 0, 1 (a change with `--fail-on-change`), 2 (usage, bad policy, unreadable).
 */
export async function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s + '\n'), err: (s: string) => void = (s) => process.stderr.write(s + '\n')): Promise<number> {
  const args = [...argv];
  const policies = takeAll(args, '--policy');
  const froms = takeAll(args, '--from');
  const tos = takeAll(args, '--to');
  const reviews = takeAll(args, '--review');
  const json = takeFlag(args, '--json');
  const failOnChange = takeFlag(args, '--fail-on-change');
  const [command, target] = args;
  const bad = [policies, froms, tos, reviews].some((l) => l.includes(null)) || policies.length !== 1 || froms.length > 1 || tos.length > 1;
  const shape = command === 'simulate' ? args.length === 2 : command === 'check' ? args.length === 1 : false;
  if (bad || !shape) {
    err(USAGE);
    return 2;
  }
  const policyFile = policies[0]!;
  let draft;
  try {
    draft = parsePolicy(fs.readFileSync(policyFile, 'utf8'));
  } catch (e) {
    const field = (e as { field?: unknown }).field;
    err(`${policyFile}: ${typeof field === 'string' ? `bad policy, field ${field}: ` : ''}${(e as Error).message}`);
    return 2;
  }
  if (command === 'check') {
    out(`${policyFile}: ok`);
    return 0;
  }
  if (!fs.existsSync(target!)) {
    err(`${target}: no such audit file`);
    return 2;
  }
  let r: SimulationResult;
  try {
    r = await simulate({ ...draft, auditFile: target!, from: froms[0] ?? undefined, to: tos[0] ?? undefined, reviewAuditFile: reviews as string[] });
  } catch (e) {
    const field = (e as { field?: unknown }).field;
    err(`${typeof field === 'string' ? `--${field}: ` : `${target}: `}${(e as Error).message}`);
    return 2;
  }
  if (json) out(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2));
  else summaryLines(r).forEach((l) => out(l));
  const changed = Object.entries(r.counts).some(([k, n]) => k !== 'unchanged' && n > 0);
  return failOnChange && changed ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e: Error) => {
      process.stderr.write(`${e.message}\n`);
      process.exitCode = 2;
    },
  );
}
