/**
 * The rules of a review (docs/nodes.md "custody-review"): how many distinct approvers an action
 * needs (1 to {@link MAX_APPROVERS}, optionally more from an amount band in decimal units of the
 * asset, its `scale` from GET /assets, spec section 2 "Asset"), one vote per person, the
 * initiator (the action's `details.initiatedBy` / `initiatorName`, spec section 2 "Action") may
 * not approve, any reject rejects and needs a reason of at most {@link REASON_MAX_CHARS}
 * characters, and no vote once the action's `expireTime` (epoch seconds) has passed. Pure: no
 * I/O, no Node-RED.
 */
import { toBaseUnits } from '../api/amounts';

/** The most distinct approvers a review may need. */
export const MAX_APPROVERS = 5;

/** The longest reason a vote may carry, in characters (Unicode code points). */
export const REASON_MAX_CHARS = 500;

/** The longest reviewer name, in characters. */
export const REVIEWER_MAX_CHARS = 100;

/** A vote's decision. */
export type ReviewDecision = 'approve' | 'reject';

/** Where a vote came from: the editor's sidebar tab, the admin HTTP API, or a flow (`msg.review`, weaker: the flow asserts the name). */
export type VoteVia = 'editor' | 'api' | 'flow';

/** One vote of a review. */
export interface Vote {
  /** Who voted: the Node-RED user name (`anonymous` without adminAuth), or the name a flow asserts. */
  reviewer: string;
  decision: ReviewDecision;
  /** Why (required for a reject). */
  reason?: string;
  /** When, ISO 8601 UTC. */
  at: string;
  via: VoteVia;
}

/** An amount band: from `from` (decimal units of `asset`, inclusive) on, `approvers` are needed. */
export interface QuorumBand {
  /** Asset code, e.g. `BTC` (spec section 2 "Asset"). */
  asset: string;
  /** Decimal amount, e.g. `"10"`. */
  from: string;
  /** 1 to {@link MAX_APPROVERS}. */
  approvers: number;
}

/** The quorum rules a review node is set with. */
export interface QuorumRules {
  /** Distinct approvers needed below every band: 1 to {@link MAX_APPROVERS}. */
  approvers: number;
  /** Amount bands (the highest matching band counts). */
  bands?: QuorumBand[];
}

/** A vote refused, or a request about a review that cannot be served: `status` is the HTTP status the admin API answers (503: the shared store is unavailable for now, nothing was stored), `field` the input field at fault. */
export class ReviewError extends Error {
  override name = 'ReviewError';
  /** Always `EREVIEW`. */
  readonly code = 'EREVIEW';
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 503,
    message: string,
    readonly field?: string,
  ) {
    super(field ? `${field}: ${message}` : message);
  }
}

/**
 * Check quorum rules (the node's settings) before they are used.
 * @throws {ReviewError} (400) naming the field: `approvers`, `bands[i].asset|from|approvers`.
 */
export function checkQuorumRules(rules: QuorumRules): QuorumRules {
  const count = (v: unknown, field: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > MAX_APPROVERS) throw new ReviewError(400, `expected a whole number from 1 to ${MAX_APPROVERS}, got ${JSON.stringify(v)}`, field);
    return n;
  };
  const approvers = count(rules.approvers, 'approvers');
  const bands = (rules.bands ?? []).map((b, i) => {
    if (!b || typeof b.asset !== 'string' || !b.asset.trim()) throw new ReviewError(400, 'expected an asset code', `bands[${i}].asset`);
    const from = String(b.from ?? '').trim();
    try {
      toBaseUnits(from, 1e18, `bands[${i}].from`);
    } catch {
      throw new ReviewError(400, `expected a decimal amount, got ${JSON.stringify(b.from)}`, `bands[${i}].from`);
    }
    return { asset: b.asset.trim(), from, approvers: count(b.approvers, `bands[${i}].approvers`) };
  });
  return { approvers, bands };
}

/** The largest number of approvers any setting of `rules` can ask for. */
export function maxApprovers(rules: QuorumRules): number {
  return Math.max(rules.approvers, ...(rules.bands ?? []).map((b) => b.approvers));
}

/**
 * The distinct approvers an action needs.
 * @param amount the action's amount in base units and its asset's scale (absent: the base count).
 */
export function requiredApprovers(rules: QuorumRules, amount?: { asset: string; baseUnits: bigint; scale: number }): number {
  let need = rules.approvers;
  if (!amount) return need;
  for (const b of rules.bands ?? []) {
    if (b.asset !== amount.asset) continue;
    if (amount.baseUnits >= toBaseUnits(b.from, amount.scale, 'from')) need = Math.max(need, b.approvers);
  }
  return need;
}

/** A vote as it arrives (the admin API's body, `msg.review`): checked by {@link checkVoteInput}. */
export interface VoteInput {
  decision?: unknown;
  reason?: unknown;
  reviewer?: unknown;
}

/**
 * Check a vote's own fields (before anything is looked up or sent).
 * @throws {ReviewError} (400) naming `decision`, `reason` or `reviewer`.
 */
export function checkVoteInput(input: VoteInput): { decision: ReviewDecision; reason?: string; reviewer: string } {
  if (input.decision !== 'approve' && input.decision !== 'reject') throw new ReviewError(400, `expected "approve" or "reject", got ${JSON.stringify(input.decision ?? null).slice(0, 40)}`, 'decision');
  if (input.reason !== undefined && input.reason !== null && typeof input.reason !== 'string') throw new ReviewError(400, 'expected a string', 'reason');
  const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
  const length = Array.from(reason).length;
  if (length > REASON_MAX_CHARS) throw new ReviewError(400, `at most ${REASON_MAX_CHARS} characters, got ${length}`, 'reason');
  if (input.decision === 'reject' && !reason) throw new ReviewError(400, 'a reject needs a reason', 'reason');
  if (typeof input.reviewer !== 'string' || !input.reviewer.trim()) throw new ReviewError(400, 'expected the name of the person voting', 'reviewer');
  if (Array.from(input.reviewer).length > REVIEWER_MAX_CHARS) throw new ReviewError(400, `at most ${REVIEWER_MAX_CHARS} characters`, 'reviewer');
  return { decision: input.decision, reviewer: input.reviewer.trim(), ...(reason ? { reason } : {}) };
}

/** What {@link checkVote} needs of a review. */
export interface VoteTarget {
  state: string;
  expireTime: number;
  votes: Vote[];
  initiatedBy?: string;
  initiatorName?: string;
  /** For a review decided elsewhere: the action's status as read. */
  elsewhere?: { status: string };
}

/**
 * May `reviewer` cast `decision` on `review` now?
 * @param nowMs the clock, epoch ms.
 * @throws {ReviewError} 409 (being decided, decided, decided elsewhere, expired, the deadline
 *   passed, already voted: "already approved by you"), 403 (the initiator approving).
 */
export function checkVote(review: VoteTarget, vote: { reviewer: string; decision: ReviewDecision }, nowMs: number): void {
  if (review.state === 'expired') throw new ReviewError(409, 'the review expired');
  if (review.state === 'decidedElsewhere') throw new ReviewError(409, `the action was decided elsewhere (${review.elsewhere?.status ?? 'not pending'}): nothing was called`);
  if (review.state === 'calling') throw new ReviewError(409, 'the review is already being decided (calling): its final call counts the votes stored before it');
  if (review.state !== 'open') throw new ReviewError(409, `the review is already decided (${review.state})`);
  if (review.expireTime > 0 && nowMs >= review.expireTime * 1000) throw new ReviewError(409, `the deadline passed at ${new Date(review.expireTime * 1000).toISOString()}`, 'deadline');
  const mine = review.votes.find((v) => sameName(v.reviewer, vote.reviewer));
  if (mine) throw new ReviewError(409, `already ${mine.decision === 'approve' ? 'approved' : 'rejected'} by you`);
  if (vote.decision === 'approve' && [review.initiatedBy, review.initiatorName].some((n) => typeof n === 'string' && n && sameName(n, vote.reviewer))) {
    throw new ReviewError(403, 'the initiator of the action may not approve it');
  }
}

/** The review's verdict from its votes: `reject` on any reject, `approve` once `required` distinct approvers voted, else undefined. */
export function verdict(votes: Vote[], required: number): ReviewDecision | undefined {
  if (votes.some((v) => v.decision === 'reject')) return 'reject';
  const approvers = new Set(votes.filter((v) => v.decision === 'approve').map((v) => v.reviewer.toLowerCase()));
  return approvers.size >= required ? 'approve' : undefined;
}

function sameName(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}
