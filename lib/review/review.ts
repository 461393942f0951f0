/**
 * The review record (docs/nodes.md "custody-review"): one action held for people, its votes and
 * how it ended, as the stores (store.ts) keep it and the queue (queue.ts) works on it; the changes
 * a queue publishes; what a vote and a closing answer.
 */
import type { ReviewDecision, Vote } from './rules';

/**
 * A review's state: `open` (taking votes), `calling` (claimed for its final PUT or DELETE: no vote
 * is taken any more), then `approved`, `rejected`, `failed` (the call did not take effect),
 * `expired` (the deadline passed first) or `decidedElsewhere` (the action was approved, rejected or
 * expired at the API by someone else: nothing was called).
 */
export type ReviewState = 'open' | 'calling' | 'approved' | 'rejected' | 'expired' | 'failed' | 'decidedElsewhere';

/** The final call of a review, as claimed by the vote that decided it. */
export interface FinalCall {
  decision: ReviewDecision;
  /** The instance that makes the call. */
  instance: string;
  /** When it was claimed, ISO 8601 UTC. */
  at: string;
  /** Exactly the votes stored when the claim was taken: the decision rests on these. */
  votes: Vote[];
  /** `applied` / `notApplied`, once known. */
  outcome?: string;
  why?: string;
  statusCode?: number;
}

/** One review: an action held for people (spec section 2 "Action"), its rules' outcome and its votes. */
export interface Review {
  /** The action's id (spec section 2 "Action": `id`). */
  action_id: string;
  /** The core client whose action it is. */
  client_id: string;
  /** The action's type (ApproveTransfer, ...). */
  type?: string;
  /** The action's details (spec section 2), as read. */
  details: Record<string, unknown>;
  /** The amount moved (`details.netAmount`, else `amount`) in decimal units of the asset, e.g. `2` `BTC-TESTNET`, when known. */
  amount?: { asset: string; decimal: string };
  /** Net, fee and gross in decimal units of `asset` (details `netAmount`, `fees`, `amount`; spec section 2), when known. */
  amounts?: { asset: string; net?: string; fee?: string; gross?: string };
  /** Why it was held (`msg.decision.reasons` of custody-approver). */
  reasons: string[];
  /** `details.initiatedBy`: who initiated the transaction. */
  initiatedBy?: string;
  /** `details.initiatorName`. */
  initiatorName?: string;
  /** The action's `expireTime` (epoch seconds; 0: none). */
  expireTime: number;
  /** Distinct approvers needed. */
  required: number;
  /** The votes so far, oldest first. */
  votes: Vote[];
  state: ReviewState;
  /** The final call, once claimed. */
  final?: FinalCall;
  /** For `decidedElsewhere`: the action's status as read (`approved`, `rejected`, `expired`). */
  elsewhere?: { status: string; why: string };
  /** True once it went out escalated. */
  escalated?: boolean;
  /** When it was queued, epoch ms. */
  createdAt: number;
  /** When it left the queue (decided, expired, failed, decided elsewhere), epoch ms. */
  closedAt?: number;
  /**
   * Set when the review's facts were let go: it is closed and not among the
   * `RECENT_CLOSED_WITH_FACTS` most recently closed (closed.ts `trimClosed`). What is left answers a
   * late vote (409) and keeps the verdict; the facts are in the audit file.
   */
  trimmed?: true;
}

/** A change of a review queue, as published on its change stream. */
export interface ReviewChange {
  /** The review node's id. */
  node: string;
  action_id: string;
  event: 'opened' | 'vote' | 'calling' | 'approved' | 'rejected' | 'expired' | 'escalated' | 'failed' | 'decidedElsewhere' | 'restored';
  /** Who voted (for `vote` and `calling`). */
  by?: string;
}

/** What {@link ReviewStore.vote} did. */
export type VoteResult =
  /** Stored; `claimed` when this vote decided the review: the caller makes the final call. */
  | { kind: 'stored'; claimed?: FinalCall }
  /** Not stored: the person voted already. */
  | { kind: 'voted' }
  /** Not stored: the review is claimed for its final call, decided or closed. */
  | { kind: 'closed' }
  /** Not stored: no such review. */
  | { kind: 'missing' };

/** A review closed without a call: `expired` or `decidedElsewhere`. */
export interface ReviewClosing {
  state: 'expired' | 'decidedElsewhere';
  /** For `decidedElsewhere`. */
  elsewhere?: { status: string; why: string };
  /** Epoch ms. */
  closedAt: number;
}

