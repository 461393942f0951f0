/**
 * The public entry of the review service (`@custodyflow/node-red-custody/review`; nodes import it
 * as `lib/review`): the durable queue of actions held for people (docs/nodes.md "custody-review").
 * rules.ts (quorum rules, votes, {@link ReviewError}), store.ts (the queue's store in a file or in
 * Redis), queue.ts ({@link ReviewQueue}: votes, the final call, escalation, expiry), facts.ts (what
 * a reviewer decides on), write-back.ts (the reviews rebuilt from the audit). Loaded only by
 * custody-review's constructor and its admin routes' handlers, never by the package root.
 */
export * from './rules';
export * from './store';
export * from './closed';
export * from './queue';
export * from './facts';
export * from './write-back';
