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

/** One shared copy of each low-cardinality text a trimmed review holds (client ids, action types, states, decisions, instances, outcomes). */
const texts = new Map<string, string>();
/** Texts kept in {@link texts} at most: past it, texts are no longer shared (nothing else changes). */
const MAX_SHARED_TEXTS = 10_000;

function shared<T extends string | undefined>(v: T): T {
  if (v === undefined) return v;
  const known = texts.get(v);
  if (known !== undefined) return known as T;
  if (texts.size < MAX_SHARED_TEXTS) texts.set(v, v);
  return v;
}

/** The empty details, reasons and votes of every trimmed review (frozen: a trimmed review is closed, nothing adds to them). */
const NO_DETAILS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const NO_TEXTS: string[] = Object.freeze([]) as unknown as string[];
const NO_VOTES: Review['votes'] = Object.freeze([]) as unknown as Review['votes'];

/**
 * What a closed review keeps once it is no longer among the recently closed: its ids, state,
 * deadline, times and verdict (the final call's decision, instance, time and outcome; why only
 * for a failed one; no votes, no details, no reasons), marked `trimmed`. Its repeated texts (client
 * id, type, state, decision, instance, outcome) are shared between reviews, and its empty details,
 * reasons and votes are one frozen object each.
 */
export function trimmedReview(r: Review): Review {
  const { action_id, client_id, type, expireTime, required, state, final, elsewhere, escalated, createdAt, closedAt } = r;
  return {
    action_id,
    client_id: shared(client_id),
    ...(type !== undefined ? { type: shared(type) } : {}),
    details: NO_DETAILS,
    reasons: NO_TEXTS,
    expireTime,
    required,
    votes: NO_VOTES,
    state: shared(state),
    ...(final
      ? { final: { decision: shared(final.decision), instance: shared(final.instance), at: final.at, votes: NO_VOTES, ...(final.outcome !== undefined ? { outcome: shared(final.outcome) } : {}), ...(final.why !== undefined && state === 'failed' ? { why: final.why } : {}) } }
      : {}),
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

