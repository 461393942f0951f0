/** The "Spec coverage" table (docs/spec-coverage.md), read by the tests that hold the runtime to it. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { HttpMethod } from '../../lib';

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
 * The rows of the "Spec coverage" table in docs/spec-coverage.md (table lines with six cells
 * whose second starts with a backtick; backticks removed).
 * @throws {AssertionError} when docs/spec-coverage.md has no such heading.
 */
export function readSpecCoverageTable(): SpecCoverageRow[] {
  const root = path.resolve(__dirname, '..', '..', '..');
  const doc = fs.readFileSync(path.join(root, 'docs', 'spec-coverage.md'), 'utf8');
  const start = doc.indexOf('# Spec coverage');
  assert.ok(start >= 0, 'docs/spec-coverage.md has no "Spec coverage" heading');
  const section = doc.slice(start);
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
