/**
 * The public entry of the approver service (`@custodyflow/node-red-custody/approver`; nodes import
 * it as `lib/approver`), loaded only by custody-approver's constructor, never by the package root.
 * The approver of core client actions by ordered rules, with a hash-chained audit file and
 * velocity windows rebuilt from it (the runtime of the approver node; no Node-RED import).
 * See approver.ts (the pipeline per action and the files of its stages), rules.ts, claims.ts,
 * outcome.ts, velocity.ts; simulate.ts and draft.ts (a draft rule set replayed against the recorded
 * history, or tried on one action: docs/nodes.md "Simulating a draft"); policy-file.ts (a rule set
 * kept as a JSON file, checked against schemas/approval-policy.schema.json: docs/policies.md); the audit log is lib/audit
 * (docs/audit.md).
 */
export * from './rules';
export * from './velocity';
export * from './claims';
export * from '../actions';
export { REPORT_UNKNOWN_AFTER_MS, PENDING_SETTLES_AFTER_MS, type ApproverMode, type ApproverOutput, type DecisionRecord, type ApproverOutcome, type ApproverOptions } from './types';
export { actionFacts } from './facts';
export { Approver } from './approver';
export type { BookRetained } from './book';
export { compileDraft, decideUnderDraft, tryAction, type PolicyDraft, type CompiledDraft, type DraftDecision, type TriedAction, type TryResult, type VelocityRead } from './draft';
export { simulate, simulationPeriod, SIMULATE_DEFAULT_PERIOD_MS, SIMULATE_MAX_CHANGES, type SimulateOptions, type SimulationResult, type SimulatedChange, type AssetSums, type ApprovedSum, type PersonDecision } from './simulate';
export { recordedFacts, type DecisionFacts } from './decision-facts';
export { readHistory, type HistoryOptions, type HistoryRead } from './history';
export { parsePolicy, checkPolicySchema, schemaErrorField, POLICY_SCHEMA_FILE } from './policy-file';
