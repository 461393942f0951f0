/**
 * The review queue (docs/nodes.md "custody-review"): actions held for people, each voted on by
 * distinct reviewers under the rules of rules.ts, then approved (PUT) or rejected (DELETE
 * `/coreclient/{client_id}/action/{action_id}`, spec section 4) exactly once: the final call is
 * claimed in the store (once across instances), and a call whose outcome is unknown is resolved
 * by reading the action (lib/approver/outcome.ts `readCallOutcome`), never counted as failed.
 * Every opening, vote, escalation, expiry, final call and result is a line of a hash-chained
 * audit file (lib/approver/audit-log.ts, docs/audit.md), which `custodyflow-audit verify` checks.
 */
import { ApiError } from '../api/errors';
import { fromBaseUnits } from '../api/amounts';
import { PATH_ID } from '../request/prepare';
import type { CustodyClient } from '../client/client';
import { abortableSleep } from '../client/transport';
import { approveAction, getAction, rejectAction } from '../client/v1/core-client';
import { assetScale } from '../client/v1/assets';
import { AuditLog } from '../approver/audit-log';
import { readCallOutcome } from '../approver/outcome';
import { PENDING_SETTLES_AFTER_MS } from '../approver/types';
import { checkQuorumRules, checkVote, checkVoteInput, requiredApprovers, ReviewError, verdict, type QuorumRules, type ReviewDecision, type Vote, type VoteInput, type VoteVia } from './rules';
import { CLOSED_REVIEW_KEEP_MS, type Review, type ReviewStore } from './store';

/** Delays between two reads of an action whose final call's outcome is unknown, ms. */
const RESOLVE_DELAYS_MS = [0, 500, 1000, 2000, 5000, 10_000, 30_000];


/** Options of {@link ReviewQueue.open}. */
export interface ReviewQueueOptions {
  store: ReviewStore;
  /** The audit file (the approver's naming: `<userDir>/custodyflow-audit/<node id>.jsonl`). */
  auditFile: string;
  client: () => Promise<CustodyClient>;
  rules: QuorumRules;
  /** Escalate a review still short of its quorum this long before its deadline (ms; 0: never). */
  escalateMarginMs: number;
  /** This queue's name in audit lines (the node id). */
  reviewerNode: string;
  /** This instance's name (claims, audit). */
  instance?: string;
  /** The clock, epoch ms (default Date.now). */
  now?: () => number;
  /** Called after any change of the queue (a vote, a new review, a review closed). */
  onChange?: () => void;
  /** Called once per review that ends here: `approved`, `rejected`, `escalated` (still open), `expired`, `failed` (with why). */
  onEvent?: (event: ReviewEvent) => void;
}

/** What {@link ReviewQueueOptions.onEvent} reports. */
export interface ReviewEvent {
  kind: 'approved' | 'rejected' | 'escalated' | 'expired' | 'failed';
  review: Review;
  /** For `failed`: why. */
  why?: string;
}

/** A review as the admin API and the sidebar show it. */
export type ReviewView = Review & { approvals: number };

/** An action to review: the approver's held msg payload (or any `{client_id, action_id}`), with `decision.reasons`. */
export interface ReviewRequest {
  client_id?: unknown;
  action_id?: unknown;
  type?: unknown;
  expireTime?: unknown;
  details?: unknown;
  reasons?: unknown;
}

/** The options as the queue keeps them (defaults filled in). */
type QueueSettings = Required<Omit<ReviewQueueOptions, 'onChange' | 'onEvent'>> & Pick<ReviewQueueOptions, 'onChange' | 'onEvent'>;

/** The review queue of one node. Open it with {@link ReviewQueue.open}. */
export class ReviewQueue {
  readonly #o: QueueSettings;
  readonly #audit: AuditLog;
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<unknown>>();

  private constructor(o: QueueSettings, audit: AuditLog) {
    this.#o = o;
    this.#audit = audit;
  }

  /**
   * Check the rules, open the audit file (verifying it) and resume the resolution of any final call
   * whose outcome was unknown at the last stop.
   * @throws {ReviewError} for bad rules; {AuditFileError} when the audit file does not verify.
   */
  static async open(options: ReviewQueueOptions): Promise<ReviewQueue> {
    const rules = checkQuorumRules(options.rules);
    const { log } = await AuditLog.open(options.auditFile);
    const q = new ReviewQueue({ instance: 'local', now: Date.now, ...options, rules } as QueueSettings, log);
    for (const r of await options.store.load()) if (r.state === 'calling' && r.final) q.#background(q.#resolve(r, r.final.decision));
    return q;
  }

  /** The file of the audit chain. */
  get auditFile(): string {
    return this.#audit.file;
  }

  /** The open reviews, oldest first. */
  async list(): Promise<ReviewView[]> {
    return (await this.#o.store.load()).filter((r) => r.state === 'open').map(view);
  }

  /** One review (any state). @throws {ReviewError} 404 when unknown. */
  async get(actionId: string): Promise<ReviewView> {
    const r = await this.#o.store.get(actionId);
    if (!r) throw new ReviewError(404, `no review of action ${JSON.stringify(actionId).slice(0, 60)}`, 'action_id');
    return view(r);
  }

  /**
   * Queue an action for review (once: the same action id again answers the stored review). Its
   * details are read (GET /coreclient/{client_id}/action/{action_id}) when missing.
   * @throws {ReviewError} 400 naming `client_id` / `action_id` before anything is sent; an
   *   ApiError when the action cannot be read.
   */
  async add(req: ReviewRequest): Promise<ReviewView> {
    for (const field of ['client_id', 'action_id'] as const) {
      const v = req[field];
      if (typeof v !== 'string' || !PATH_ID.test(v)) throw new ReviewError(400, `expected an id (no '/', '?', '#', '%' or spaces at its ends), got ${JSON.stringify(v ?? null).slice(0, 40)}`, field);
    }
    const ids = { client_id: req.client_id as string, action_id: req.action_id as string };
    const had = await this.#o.store.get(ids.action_id);
    if (had) return view(had);
    let details = isObject(req.details) ? req.details : undefined;
    let type = typeof req.type === 'string' ? req.type : undefined;
    let expireTime = Number(req.expireTime) || 0;
    if (!details) {
      const action = (await getAction(await this.#o.client(), ids)).data as Record<string, unknown>;
      details = isObject(action.details) ? action.details : {};
      type = typeof action.type === 'string' ? action.type : type;
      expireTime = Number(action.expireTime) || expireTime;
    }
    if (!expireTime) expireTime = Number(details.expires) || 0;
    let amount: Review['amount'];
    let required = this.#o.rules.approvers;
    const asset = typeof details.asset === 'string' ? details.asset : '';
    // The amount moved: `netAmount` (the gross `amount` minus fees, spec section 2 "Transaction object"), else `amount`.
    const moved = details.netAmount ?? details.amount;
    if (asset && (typeof moved === 'number' || typeof moved === 'string') && /^\d+$/.test(String(moved))) {
      const scale = await assetScale(await this.#o.client(), asset, 'details.asset');
      amount = { asset, decimal: fromBaseUnits(String(moved), scale) };
      required = requiredApprovers(this.#o.rules, { asset, baseUnits: BigInt(String(moved)), scale });
    }
    const review: Review = {
      ...ids,
      ...(type ? { type } : {}),
      details,
      ...(amount ? { amount } : {}),
      reasons: Array.isArray(req.reasons) ? req.reasons.map(String) : [],
      ...(typeof details.initiatedBy === 'string' ? { initiatedBy: details.initiatedBy } : {}),
      ...(typeof details.initiatorName === 'string' ? { initiatorName: details.initiatorName } : {}),
      expireTime,
      required,
      votes: [],
      state: 'open',
      createdAt: this.#o.now(),
    };
    const stored = await this.#o.store.add(review);
    if (stored.createdAt === review.createdAt && stored.votes.length === 0) {
      await this.#line({ kind: 'review', event: 'opened', ...ids, required, expireTime, ...(amount ? { amount: `${amount.decimal} ${amount.asset}` } : {}), reasons: review.reasons });
    }
    this.#o.onChange?.();
    return view(stored);
  }

  /**
   * Record a vote; when it decides the review, make the final call (exactly once).
   * @param via where it came from (`flow` votes are the flow's word for who voted).
   * @returns the review's new state (after the final call, when this vote decided it).
   * @throws {ReviewError} 400 (a field, named), 404 (unknown id), 409 (decided, expired, the
   *   deadline passed, a second vote), 403 (the initiator approving); nothing is called then.
   */
  async vote(actionId: unknown, input: VoteInput, via: VoteVia): Promise<ReviewView> {
    if (typeof actionId !== 'string' || !PATH_ID.test(actionId)) throw new ReviewError(400, 'expected an action id', 'action_id');
    const v = checkVoteInput(input);
    const review = await this.get(actionId);
    checkVote(review, v, this.#o.now());
    const vote: Vote = { ...v, at: new Date(this.#o.now()).toISOString(), via };
    if (!(await this.#o.store.vote(actionId, vote))) {
      const again = await this.get(actionId);
      checkVote(again, v, this.#o.now());
      throw new ReviewError(409, 'already voted by you');
    }
    await this.#line({ kind: 'review', event: 'vote', action_id: actionId, client_id: review.client_id, reviewer: vote.reviewer, decision: vote.decision, ...(vote.reason ? { reason: vote.reason } : {}), via, at: vote.at });
    const now = await this.get(actionId);
    this.#o.onChange?.();
    const decided = verdict(now.votes, now.required);
    if (decided && now.state === 'open') {
      if (await this.#o.store.claim(actionId, 'final')) await this.#finalCall(now, decided);
      return this.get(actionId);
    }
    return now;
  }

  /** Escalate and expire by the clock, and forget closed reviews a day past their deadline: call it on a timer (the node does, every second). */
  async tick(): Promise<void> {
    const now = this.#o.now();
    for (const r of await this.#o.store.load()) {
      // A closed review stays a day past its deadline (a late vote is told 409, not 404), then goes.
      if (r.state !== 'open' && r.state !== 'calling' && now - Math.max(r.expireTime * 1000, r.createdAt) > CLOSED_REVIEW_KEEP_MS) {
        await this.#o.store.remove(r.action_id);
        continue;
      }
      if (r.state !== 'open' || r.expireTime <= 0) continue;
      if (now >= r.expireTime * 1000) {
        if (!(await this.#o.store.claim(r.action_id, 'final'))) continue;
        await this.#o.store.update(r.action_id, { state: 'expired' });
        await this.#line({ kind: 'review', event: 'expired', action_id: r.action_id, client_id: r.client_id, approvals: view(r).approvals, required: r.required });
        this.#o.onEvent?.({ kind: 'expired', review: { ...r, state: 'expired' } });
        this.#o.onChange?.();
        continue;
      }
      if (this.#o.escalateMarginMs > 0 && !r.escalated && now >= r.expireTime * 1000 - this.#o.escalateMarginMs && view(r).approvals < r.required) {
        if (!(await this.#o.store.claim(r.action_id, 'escalated'))) continue;
        await this.#o.store.update(r.action_id, { escalated: true });
        await this.#line({ kind: 'review', event: 'escalated', action_id: r.action_id, client_id: r.client_id, approvals: view(r).approvals, required: r.required, deadline: new Date(r.expireTime * 1000).toISOString() });
        this.#o.onEvent?.({ kind: 'escalated', review: { ...r, escalated: true } });
        this.#o.onChange?.();
      }
    }
  }

  /** Stop: wait for the calls in flight to settle (a resolution left unknown resumes at the next open), close the audit file. */
  async close(): Promise<void> {
    this.#closing.abort();
    await Promise.allSettled(Array.from(this.#running));
    await this.#o.store.close();
    await this.#audit.close();
  }

  /** The final call of a review this queue claimed: recorded before it is made, made once, its outcome resolved when unknown. */
  async #finalCall(review: Review, decision: ReviewDecision): Promise<void> {
    const final = { decision, instance: this.#o.instance, at: new Date(this.#o.now()).toISOString() };
    await this.#o.store.update(review.action_id, { state: 'calling', final });
    const ids = { client_id: review.client_id, action_id: review.action_id };
    await this.#line({ kind: 'review', event: 'call', ...ids, decision, method: decision === 'approve' ? 'PUT' : 'DELETE', reviewers: review.votes.map((v) => v.reviewer) });
    let statusCode = 0;
    try {
      const client = await this.#o.client();
      const res = decision === 'approve' ? await approveAction(client, ids) : await rejectAction(client, ids);
      statusCode = res.statusCode;
    } catch (e) {
      if (e instanceof ApiError && e.failure === 'outcomeUnknown') {
        await this.#line({ kind: 'review', event: 'unknown', ...ids, decision, statusCode: e.statusCode, why: e.message.slice(0, 200) });
        return this.#resolve({ ...review, final }, decision, Date.now());
      }
      const why = e instanceof Error ? e.message : String(e);
      return this.#settle({ ...review, final }, decision, 'notApplied', why, e instanceof ApiError ? e.statusCode : 0);
    }
    return this.#settle({ ...review, final }, decision, 'applied', `answered ${statusCode}`, statusCode);
  }

  /** Read the action until the final call's outcome is definite (or the queue closes: resumed at the next open). */
  async #resolve(review: Review, decision: ReviewDecision, endedAt = Date.now()): Promise<void> {
    const ids = { client_id: review.client_id, action_id: review.action_id };
    for (let attempt = 0; ; attempt++) {
      await abortableSleep(RESOLVE_DELAYS_MS[Math.min(attempt, RESOLVE_DELAYS_MS.length - 1)], this.#closing.signal);
      if (this.#closing.signal.aborted) return;
      let reading;
      try {
        reading = await readCallOutcome(await this.#o.client(), ids, decision, review.details);
      } catch {
        continue;
      }
      if (reading.outcome !== 'pending') return this.#settle(review, decision, reading.outcome, reading.why, 0);
      if (Date.now() - endedAt >= PENDING_SETTLES_AFTER_MS) return this.#settle(review, decision, 'notApplied', `${reading.why} after the call ended: it did not take effect`, 0);
    }
  }

  async #settle(review: Review, decision: ReviewDecision, outcome: 'applied' | 'notApplied', why: string, statusCode: number): Promise<void> {
    const state = outcome === 'applied' ? (decision === 'approve' ? 'approved' : 'rejected') : 'failed';
    const final = { ...review.final!, outcome, why, ...(statusCode ? { statusCode } : {}) };
    await this.#o.store.update(review.action_id, { state, final });
    await this.#line({ kind: 'review', event: 'result', action_id: review.action_id, client_id: review.client_id, decision, outcome, why, ...(statusCode ? { statusCode } : {}) });
    const done = (await this.#o.store.get(review.action_id)) ?? { ...review, state, final };
    this.#o.onEvent?.(state === 'failed' ? { kind: 'failed', review: done, why } : { kind: state, review: done });
    this.#o.onChange?.();
  }

  #background(job: Promise<unknown>): void {
    this.#running.add(job);
    void job.catch(() => undefined).finally(() => this.#running.delete(job));
  }

  #line(record: Record<string, unknown>): Promise<unknown> {
    return this.#audit.append({ ...record, node: this.#o.reviewerNode, instance: this.#o.instance, at: record.at ?? new Date(this.#o.now()).toISOString() });
  }
}

function view(r: Review): ReviewView {
  return { ...r, approvals: new Set(r.votes.filter((v) => v.decision === 'approve').map((v) => v.reviewer.toLowerCase())).size };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
