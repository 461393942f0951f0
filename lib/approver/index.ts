/**
 * The public entry of the approver service (`@custodyflow/node-red-custody/approver`; nodes import
 * it as `lib/approver`), loaded only by custody-approver's constructor, never by the package root.
 * The approver of core client actions by ordered rules, with a hash-chained audit file and
 * velocity windows rebuilt from it (the runtime of the approver node; no Node-RED import).
 * See approver.ts (the pipeline per action and the files of its stages), rules.ts, claims.ts,
 * outcome.ts, velocity.ts; the audit log is lib/audit (docs/audit.md).
 */
export * from './rules';
export * from './velocity';
export * from './claims';
export * from '../actions';
export { REPORT_UNKNOWN_AFTER_MS, PENDING_SETTLES_AFTER_MS, type ApproverMode, type ApproverOutput, type DecisionRecord, type ApproverOutcome, type ApproverOptions } from './types';
export { actionFacts } from './facts';
export { Approver } from './approver';
export type { BookRetained } from './book';
