/**
 * The response check: when the environment variable {@link CHECK_ENV} names a file, every API
 * answer (status and body) is validated against its registry entry's response schema and every
 * feed message against its feed's schema, and each violation is appended to that file as one
 * JSON line ({@link Violation}). Off (nothing checked, nothing written) when the variable is
 * unset or empty. The test run sets it for every process (test/response-check.ts) and fails on
 * any line.
 *
 * The schemas and validators are lib's (the registry's `responses` of each OperationSpec,
 * `validateResponse(entry, status, body)` and `validateFeedMessage(kind, message)`, each
 * returning a list of violation texts). This adapter calls them when lib exports them; without
 * them it validates with ajv against `entry.spec.responses?.[status]` itself, and knows no feed
 * schema (no feed violations).
 */
import { appendFileSync } from 'node:fs';
import Ajv, { type ValidateFunction } from 'ajv';
import * as operation from '../lib/operation';
import * as registry from '../lib/registry';
import type { JsonSchema } from '../lib/operation';
import type { RegistryEntry } from '../lib/registry';

/** The environment variable that turns the check on: the path of the file violations are appended to. */
export const CHECK_ENV = 'CUSTODYFLOW_SIM_CHECK_RESPONSES';

/** A feed of spec section 6, as the check names it. */
export type FeedKind = 'coreclient' | 'liquidityhub' | 'wallets';

/** The validators lib exports (contract of the registry-lib branch); absent members fall back to ajv. */
interface LibValidators {
  /** Violations of an answer of `entry` with `status` and `body`; `[]` when it conforms or has no schema. */
  validateResponse?: (entry: RegistryEntry, status: number, body: unknown) => string[];
  /** Violations of a message of the feed `kind`; `[]` when it conforms. */
  validateFeedMessage?: (kind: FeedKind, message: unknown) => string[];
}

/** lib's validators, wherever lib puts them (lib/registry.ts or lib/operation.ts). */
const lib: LibValidators = { ...(operation as LibValidators), ...(registry as LibValidators) };

/** One line of the violations file. */
export interface Violation {
  /** ISO 8601 time of the answer or message */
  at: string;
  /** `v1 GET /company/{company_id}` (route template) or `feed wallets` */
  what: string;
  /** the registry key of the answered operation (`custody-company.get`), absent for feeds */
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

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** Violations of `body` against the entry's own response schema for `status` (ajv; none without a schema). */
function ajvViolations(entry: RegistryEntry, status: number, body: unknown): string[] {
  const schema = (entry.spec as { responses?: Record<number, JsonSchema> }).responses?.[status];
  if (!schema) return [];
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = ajv.compile(schema)));
  return check(body) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? 'is invalid'}`);
}

/**
 * Violations of an API answer: lib's `validateResponse` when lib has it, else ajv on the entry's
 * `responses[status]`. Never throws: a validator that throws is itself reported as a violation.
 */
export function responseViolations(entry: RegistryEntry, status: number, body: unknown): string[] {
  try {
    return lib.validateResponse ? lib.validateResponse(entry, status, body) : ajvViolations(entry, status, body);
  } catch (err) {
    return [`response validator failed: ${(err as Error).message}`];
  }
}

/** Violations of a feed message: lib's `validateFeedMessage` when lib has it, else none. Never throws. */
export function feedViolations(kind: FeedKind, message: unknown): string[] {
  try {
    return lib.validateFeedMessage ? lib.validateFeedMessage(kind, message) : [];
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
export function checkAnswer(entry: RegistryEntry, status: number, body: unknown, req?: { path: string; baseUrl?: string }): void {
  if (!process.env[CHECK_ENV]) return;
  const violations = responseViolations(entry, status, body);
  if (violations.length) {
    record({ at: new Date().toISOString(), what: `${entry.version} ${entry.spec.method} ${entry.spec.path}`, entry: `${entry.node}.${entry.operation}`, path: req ? (req.baseUrl ?? '') + req.path : undefined, status, violations, body });
  }
}

/** Check one feed message when the check is on ({@link CHECK_ENV} set), appending a line when it violates. */
export function checkFeedMessage(kind: FeedKind, message: unknown): void {
  if (!process.env[CHECK_ENV]) return;
  const violations = feedViolations(kind, message);
  if (violations.length) record({ at: new Date().toISOString(), what: `feed ${kind}`, violations, body: message });
}
