/**
 * The approver of core client actions by ordered rules, with a hash-chained audit file and
 * velocity windows rebuilt from it (the runtime of the approver node; no Node-RED import).
 * See approver.ts (the pipeline per action and the files of its stages), rules.ts, claims.ts,
 * outcome.ts, velocity.ts, and audit.ts (the audit log and its files).
 */
export * from './rules';
export * from './velocity';
export * from './claims';
export * from './outcome';
export * from './audit';
export { REPORT_UNKNOWN_AFTER_MS, PENDING_SETTLES_AFTER_MS, type ApproverMode, type ApproverOutput, type DecisionRecord, type ApproverOutcome, type ApproverOptions } from './types';
export { actionFacts } from './facts';
export { Approver } from './approver';
