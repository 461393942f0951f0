/**
 * The response check: when the environment variable {@link CHECK_ENV} names a file, every API
 * answer (status and body) is validated against its operation's response schema and every
 * feed message against its feed's schema, and each violation is appended to that file as one
 * JSON line ({@link Violation}). Off (nothing checked, nothing written) when the variable is
 * unset or empty. The test run sets it for every process (test/helpers/response-check.ts) and fails on
 * any line.
 *
 * The schemas and validators are lib's (lib/request/response-check.ts): the operations' `responses` of
 * each OperationSpec, `validateResponse(entry, status, body)` and `validateFeedMessage(kind,
 * message)`, each returning a list of violation texts.
 */
import { appendFileSync } from 'node:fs';
import { validateResponse, validateFeedMessage, type FeedKind } from '../lib/request/response-check';
import type { ApiOperation } from '../lib/api/operations';

/** The environment variable that turns the check on: the path of the file violations are appended to. */
export const CHECK_ENV = 'CUSTODYFLOW_SIM_CHECK_RESPONSES';

export type { FeedKind };

/** One line of the violations file. */
export interface Violation {
  /** ISO 8601 time of the answer or message */
  at: string;
  /** `v1 GET /company/{company_id}` (route template) or `feed wallets` */
  what: string;
  /** the operationId of the answered operation (`getCompany`), absent for feeds */
  entry?: string;
  /** the concrete request path, absent for feeds */
  path?: string;
  /** the HTTP status answered, absent for feeds */
  status?: number;
  /** the violation texts of the validator */
  violations: string[];
  /** the body or message that violated, as sent */
  body: unknown;
}

/** Violations of an API answer (lib's `validateResponse`). Never throws: a validator that throws is itself reported as a violation. */
export function responseViolations(entry: ApiOperation<string>, status: number, body: unknown): string[] {
  try {
    return validateResponse(entry, status, body);
  } catch (err) {
    return [`response validator failed: ${(err as Error).message}`];
  }
}

/** Violations of a feed message (lib's `validateFeedMessage`). Never throws. */
export function feedViolations(kind: FeedKind, message: unknown): string[] {
  try {
    return validateFeedMessage(kind, message);
  } catch (err) {
    return [`feed validator failed: ${(err as Error).message}`];
  }
}

function record(v: Violation): void {
  const file = process.env[CHECK_ENV];
  if (file) appendFileSync(file, JSON.stringify(v) + '\n');
}

/**
 * Check one API answer when the check is on ({@link CHECK_ENV} set), appending a line per
 * violating answer. Read per call, so a test may point it at a file of its own.
 */
export function checkAnswer(entry: ApiOperation<string>, status: number, body: unknown, req?: { path: string; baseUrl?: string }): void {
  if (!process.env[CHECK_ENV]) return;
  const violations = responseViolations(entry, status, body);
  if (violations.length) {
    record({ at: new Date().toISOString(), what: `${entry.version} ${entry.spec.method} ${entry.spec.path}`, entry: entry.id, path: req ? (req.baseUrl ?? '') + req.path : undefined, status, violations, body });
  }
}

/** Check one feed message when the check is on ({@link CHECK_ENV} set), appending a line when it violates. */
export function checkFeedMessage(kind: FeedKind, message: unknown): void {
  if (!process.env[CHECK_ENV]) return;
  const violations = feedViolations(kind, message);
  if (violations.length) record({ at: new Date().toISOString(), what: `feed ${kind}`, violations, body: message });
}
