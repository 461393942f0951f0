/** The README's "Spec coverage" table, read by the tests that hold the runtime to it. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { HttpMethod } from '../lib';

/** One row of the table: the spec section, the call (`METHOD /path`), the node and operation that send it, and the simulator column. */
export interface SpecCoverageRow {
  spec: string;
  /** The call's first word. */
  method: HttpMethod;
  call: string;
  node: string;
  operation: string;
  simulator: string;
}

/**
 * The rows of the README section "Spec coverage" (table lines with six cells whose second
 * starts with a backtick; backticks removed).
 * @throws {AssertionError} when README.md has no such section.
 */
export function readSpecCoverageTable(): SpecCoverageRow[] {
  const root = path.resolve(__dirname, '..', '..');
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## Spec coverage');
  assert.ok(start >= 0, 'README.md has no "Spec coverage" section');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const rows: SpecCoverageRow[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length !== 7 || !cells[2].startsWith('`')) continue;
    const [, spec, call, node, operation, simulator] = cells.map((c) => c.replace(/`/g, ''));
    const method = call.split(' ')[0] as HttpMethod;
    rows.push({ spec, method, call, node, operation, simulator });
  }
  return rows;
}
