/**
 * Mocha root hook plugin (.mocharc.json `require`): turns the simulator's response check on for
 * the whole run and fails the run when anything the simulator answered or sent on a feed
 * violated its schema (simulator/response-check.ts; the schemas are the registry's `responses`
 * and lib's feed message schemas).
 *
 * On load it points `CUSTODYFLOW_SIM_CHECK_RESPONSES` at a fresh temp file, unless already set;
 * every simulator of this process, and of every child process started from it (a Node-RED
 * started by a test inherits the environment), appends its violations there as JSON lines. The
 * `afterAll` root hook reads the file and fails the run, printing each violation.
 *
 * It also sets `CUSTODYFLOW_SIM_CHECK_JOURNAL` (simulator/journal.ts `JOURNAL_CHECK_ENV`): every
 * simulator with persistence, on stop, reloads its data folder (snapshot + journal) and reports
 * a difference with the state in memory as a violation line in the same file (a mutation that
 * bypassed the change tracking).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECK_ENV } from '../../simulator/response-check';
import { JOURNAL_CHECK_ENV } from '../../simulator/journal';

/** One violation line as the simulator writes it (simulator/response-check.ts `Violation`). */
interface ViolationLine {
  what: string;
  entry?: string;
  path?: string;
  status?: number;
  violations: string[];
}

/**
 * The violations recorded in `file`, each as one readable line
 * (`v1 GET /assets (listAssets) 200 /api/v1/p/assets: /assets must be string`).
 * No file or an empty file: none.
 */
export function violationReport(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      try {
        const v = JSON.parse(l) as ViolationLine;
        return `${v.what}${v.entry ? ` (${v.entry})` : ''}${v.status !== undefined ? ` ${v.status}` : ''}${v.path ? ` ${v.path}` : ''}: ${v.violations.join('; ')}`;
      } catch {
        return `unreadable line: ${l.slice(0, 200)}`;
      }
    });
}

if (!process.env[CHECK_ENV]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-response-check-'));
  process.env[CHECK_ENV] = path.join(dir, 'violations.jsonl');
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}

// The journal check (simulator/journal.ts): every simulator of the run, in this process or a
// child, reloads its data folder on stop and reports a difference with its memory to the same file.
process.env[JOURNAL_CHECK_ENV] ||= '1';

/** The file of this run, fixed at load (a test may point the variable elsewhere for a while). */
const runFile = process.env[CHECK_ENV]!;

/**
 * @throws {Error} listing every violation recorded in `file` ({@link violationReport}), when there is any.
 */
export function assertNoViolations(file: string): void {
  const report = violationReport(file);
  if (report.length) {
    throw new Error(`the simulator answered or sent ${report.length} message(s) that violate their schema (${file}):\n  ${report.join('\n  ')}`);
  }
}

/** The root hooks: after all tests, fail the run on any violation of this run. */
export const mochaHooks = {
  afterAll(): void {
    assertNoViolations(runFile);
  },
};
