/**
 * The approver of core client actions by ordered rules, with a hash-chained audit file and
 * velocity windows rebuilt from it (the runtime of the `custody-approver` node; no Node-RED
 * import). See approver.ts, rules.ts, claims.ts, outcome.ts, audit.ts, velocity.ts.
 */
export * from './rules';
export * from './audit';
export * from './velocity';
export * from './claims';
export * from './outcome';
export * from './approver';
