/**
 * What a closed review keeps (docs/performance.md, "What is kept in memory"): the facts and votes
 * of the {@link RECENT_CLOSED_WITH_FACTS} most recently closed reviews (the "recently decided"
 * list shows them), and for every older closed one only its state and verdict
 * ({@link trimmedReview}), until it is forgotten a day past its deadline (store.ts
 * `CLOSED_REVIEW_KEEP_MS`). Used by the file store and by the queue's cache.
 */
import type { Review, ReviewState } from './review';

/** How many closed reviews keep their facts and votes: the "recently decided" list shows them (lib/review/queue.ts). */
export const RECENT_CLOSED_WITH_FACTS = 20;

/** States in which a review is still on the queue (its facts are always kept). */
const OPEN_STATES: ReadonlySet<ReviewState> = new Set(['open', 'calling']);

/**
 * What a closed review keeps once it is no longer among the recently closed: its ids, state,
 * deadline, times and verdict (the final call's decision, instance, time and outcome; no votes,
 * no details, no reasons), marked `trimmed`. About 300 bytes instead of the action's details.
 */
export function trimmedReview(r: Review): Review {
  const { action_id, client_id, type, expireTime, required, state, final, elsewhere, escalated, createdAt, closedAt } = r;
  return {
    action_id,
    client_id,
    ...(type !== undefined ? { type } : {}),
    details: {},
    reasons: [],
    expireTime,
    required,
    votes: [],
    state,
    ...(final ? { final: { decision: final.decision, instance: final.instance, at: final.at, votes: [], ...(final.outcome !== undefined ? { outcome: final.outcome } : {}), ...(final.why !== undefined ? { why: final.why } : {}) } } : {}),
    ...(elsewhere ? { elsewhere } : {}),
    ...(escalated ? { escalated } : {}),
    createdAt,
    ...(closedAt !== undefined ? { closedAt } : {}),
    trimmed: true,
  };
}

/**
 * Keep the facts of the {@link RECENT_CLOSED_WITH_FACTS} most recently closed reviews of
 * `reviews` only: every other closed one is replaced by its {@link trimmedReview} (in place).
 * Open and calling reviews keep everything. O(n) in the reviews plus a sort of the untrimmed
 * closed ones (at most one more than the limit, after the first call).
 */
export function trimClosed(reviews: Map<string, Review>, keep = RECENT_CLOSED_WITH_FACTS): void {
  const full: Review[] = [];
  for (const r of reviews.values()) if (!OPEN_STATES.has(r.state) && !r.trimmed) full.push(r);
  if (full.length <= keep) return;
  full.sort((a, b) => (b.closedAt ?? b.createdAt) - (a.closedAt ?? a.createdAt));
  for (const r of full.slice(keep)) reviews.set(r.action_id, trimmedReview(r));
}

