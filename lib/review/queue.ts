/**
 * The review queue (docs/nodes.md "custody-review"): actions held for people, each voted on by
 * distinct reviewers under the rules of rules.ts, then approved (PUT) or rejected (DELETE
 * `/coreclient/{client_id}/action/{action_id}`, spec section 4) exactly once.
 *
 * - A vote is stored atomically with the check that the review is open, and the vote that decides
 *   claims the final call with exactly the votes stored (store.ts): a vote answered "stored"
 *   always counts, a later one is refused (409).
 * - The vote answers at once; the final call runs in the background, and a call whose outcome is
 *   unknown is resolved by reading the action (lib/actions: `readCallOutcome`, `resolveCallOutcome`, as the approver does), never
 *   counted as failed.
 * - A review whose action is no longer pending (approved, rejected or expired at the API by
 *   someone else) closes as `decidedElsewhere`: found at once when a vote arrives, and by reading
 *   the pending actions (GET /coreclient/{client_id}/actions, spec section 4) at least every
 *   {@link ReviewQueueOptions.checkEveryMs}; nothing is called.
 * - Every change is published once on the store's change stream; the queue keeps the reviews in
 *   memory from it and runs timers for the deadlines only (escalation, expiry): an idle queue costs
 *   no store read but a counter checked every {@link ReviewQueueOptions.missedCheckMs}.
 * - Redis lost its data (a restart without persistence, a failover): every instance writes back
 *   the reviews, the accepted votes and the final calls it knows, from its audit file.
 *
 * Every opening, vote, escalation, expiry, final call, result and closing is a line of a
 * hash-chained audit file (lib/audit/log.ts, docs/audit.md), which `custodyflow-audit
 * verify` checks.
 */
import { ApiError } from '../api/errors';
import { fromBaseUnits } from '../api/amounts';
import { PATH_ID } from '../request/prepare';
import { isPlainObject as isObject } from '../support/objects';
import type { CustodyClient } from '../client/client';
import { abortableSleep } from '../support/backoff';
import { approveAction, getAction, listActions, rejectAction } from '../client/v1/core-client';
import { assetScale } from '../client/v1/assets';
import { AuditLog, type AuditLogOptions } from '../audit/log';
import { readCallOutcome } from '../actions/outcome';
import { resolveCallOutcome } from '../actions/resolve';
import { checkQuorumRules, checkVote, checkVoteInput, requiredApprovers, ReviewError, type QuorumRules, type ReviewDecision, type Vote, type VoteInput, type VoteVia } from './rules';
import { CLOSED_REVIEW_KEEP_MS, type FinalCall, type Review, type ReviewChange, type ReviewStore } from './store';
import { trimClosed } from './closed';
import { factsOf, viewOf, type ReviewFacts, type ReviewView } from './facts';
import { reviewsFromAudit } from './write-back';

/** Default {@link ReviewQueueOptions.checkEveryMs}: 30 s. */
export const DEFAULT_CHECK_EVERY_MS = 30_000;

/** Default {@link ReviewQueueOptions.missedCheckMs}: 10 s. */
export const DEFAULT_MISSED_CHECK_MS = 10_000;

/** How long a vote waits for the read of its action (is it still pending?) before it is taken anyway, ms. */
const PENDING_READ_WAIT_MS = 1500;

/** The longest a timer can wait (setTimeout's limit), ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Options of {@link ReviewQueue.open}. */
export interface ReviewQueueOptions {
  store: ReviewStore;
  /** The audit file (the approver's naming: `<userDir>/custodyflow-audit/<node id>.jsonl`). */
  auditFile: string;
  /** Options of the audit file (docs/audit.md): for example `onHead`, where its head is reported. */
  auditOptions?: AuditLogOptions;
  client: () => Promise<CustodyClient>;
  rules: QuorumRules;
  /** Escalate a review still short of its quorum this long before its deadline (ms; 0: never). */
  escalateMarginMs: number;
  /** This queue's name in audit lines and changes (the node id). */
  reviewerNode: string;
  /** This instance's name (claims, audit). */
  instance?: string;
  /** The clock, epoch ms (default Date.now). */
  now?: () => number;
  /**
   * Run the queue's own timers (default true): the deadlines, the check for actions decided
   * elsewhere, the check for missed changes. Off, {@link ReviewQueue.tick} does the deadlines.
   */
  timers?: boolean;
  /** Read the pending actions to find reviews decided elsewhere this often (ms; default 30 s). */
  checkEveryMs?: number;
  /** Check for a change published while the store's subscriber was away this often (ms; default 10 s). */
  missedCheckMs?: number;
  /** Called once per change of the queue, on every instance (a vote, a new review, a review closed): what the editors are told. */
  onChange?: (change: ReviewChange) => void;
  /** Called once per review that ends here: `approved`, `rejected`, `escalated` (still open), `expired`, `decidedElsewhere`, `failed` (with why). */
  onEvent?: (event: ReviewEvent) => void;
}

/** What {@link ReviewQueueOptions.onEvent} reports. */
export interface ReviewEvent {
  kind: 'approved' | 'rejected' | 'escalated' | 'expired' | 'decidedElsewhere' | 'failed';
  review: Review;
  /** For `failed` and `decidedElsewhere`: why. */
  why?: string;
}

/** A decided review as the "recently decided" list shows it. */
export interface RecentDecision {
  action_id: string;
  client_id: string;
  state: Review['state'];
  /** The reviewers whose votes the final call counted (empty for `expired` and `decidedElsewhere`). */
  decidedBy: string[];
  /** When it closed, ISO 8601 UTC. */
  at: string;
  /** Why (a failure, the status read for `decidedElsewhere`). */
  why?: string;
  facts: ReviewFacts;
}

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
type QueueSettings = Required<Omit<ReviewQueueOptions, 'onChange' | 'onEvent' | 'auditOptions'>> & Pick<ReviewQueueOptions, 'onChange' | 'onEvent' | 'auditOptions'>;

/** The states in which a review is still on the queue. */
const ON_QUEUE = new Set<Review['state']>(['open', 'calling']);

/** The review queue of one node. Open it with {@link ReviewQueue.open}. */
export class ReviewQueue {
  readonly #o: QueueSettings;
  readonly #audit: AuditLog;
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<unknown>>();
  /** Every stored review as last heard, by action id (kept from the change stream). */
  readonly #cache = new Map<string, Review>();
  /** The deadline timer of each open review. */
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #intervals: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | undefined;
  #undoDataLoss: (() => void) | undefined;

  private constructor(o: QueueSettings, audit: AuditLog) {
    this.#o = o;
    this.#audit = audit;
  }

  /**
   * Check the rules, open the audit file (verifying it), read the queue, listen to its changes,
   * start the timers and resume the resolution of any final call of this instance whose outcome
   * was unknown at the last stop.
   * @throws {ReviewError} for bad rules; {AuditFileError} when the audit file does not verify.
   */
  static async open(options: ReviewQueueOptions): Promise<ReviewQueue> {
    const rules = checkQuorumRules(options.rules);
    const { log } = await AuditLog.open(options.auditFile, options.auditOptions);
    const q = new ReviewQueue({ instance: 'local', now: Date.now, timers: true, checkEveryMs: DEFAULT_CHECK_EVERY_MS, missedCheckMs: DEFAULT_MISSED_CHECK_MS, ...options, rules } as QueueSettings, log);
    q.#unsubscribe = options.store.subscribe((change) => q.#heard(change));
    q.#undoDataLoss = options.store.onDataLoss?.(() => q.#writeBack());
    try {
      await q.#reload();
    } catch (e) {
      await q.close();
      throw e;
    }
    for (const r of q.#cache.values()) if (r.state === 'calling' && r.final && r.final.instance === q.#o.instance) q.#background(q.#resolve(r, r.final.decision));
    if (q.#o.timers) {
      q.#intervals.push(setInterval(() => q.#background(q.#sweep()), q.#o.checkEveryMs));
      q.#intervals.push(setInterval(() => q.#background(q.#checkMissed()), q.#o.missedCheckMs));
    }
    return q;
  }

  /** The file of the audit chain. */
  get auditFile(): string {
    return this.#audit.file;
  }

  /** How many reviews are on the queue (open or being decided), as last heard: no store read. */
  get openCount(): number {
    let n = 0;
    for (const r of this.#cache.values()) if (ON_QUEUE.has(r.state)) n++;
    return n;
  }

  /** The reviews on the queue (open, or `calling`: being decided), oldest first, read from the store. */
  async list(): Promise<ReviewView[]> {
    return (await this.overview(0)).open;
  }

  /**
   * The reviews on the queue (as {@link list}) and those that left it, newest first: approved,
   * rejected, failed, expired, decided elsewhere; from one read of the store.
   * @param limit at most this many of the decided ones (default 20).
   */
  async overview(limit = 20): Promise<{ open: ReviewView[]; recent: RecentDecision[] }> {
    const all = await this.#o.store.load();
    const recent = all
      .filter((r) => !ON_QUEUE.has(r.state))
      .sort((a, b) => (b.closedAt ?? b.createdAt) - (a.closedAt ?? a.createdAt))
      .slice(0, limit)
      .map((r) => ({
        action_id: r.action_id,
        client_id: r.client_id,
        state: r.state,
        decidedBy: r.final?.votes.map((v) => v.reviewer) ?? [],
        at: new Date(r.closedAt ?? r.createdAt).toISOString(),
        ...(r.elsewhere ? { why: r.elsewhere.why } : r.final?.why && r.state === 'failed' ? { why: r.final.why } : {}),
        facts: factsOf(r),
      }));
    return { open: all.filter((r) => ON_QUEUE.has(r.state)).map(viewOf), recent };
  }

  /** One review (any state). @throws {ReviewError} 404 when unknown. */
  async get(actionId: string): Promise<ReviewView> {
    const r = await this.#o.store.get(actionId);
    if (!r) throw new ReviewError(404, `no review of action ${JSON.stringify(actionId).slice(0, 60)}`, 'action_id');
    return viewOf(r);
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
    if (had) return viewOf(had);
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
    let amounts: Review['amounts'];
    let required = this.#o.rules.approvers;
    const asset = typeof details.asset === 'string' ? details.asset : '';
    const baseUnits = (v: unknown): string | undefined => ((typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'string' && /^\d+$/.test(v)) ? String(v) : undefined);
    // The amount moved: `netAmount` (the gross `amount` minus fees, spec section 2 "Transaction object"), else `amount`.
    const moved = baseUnits(details.netAmount ?? details.amount);
    if (asset && moved !== undefined) {
      const scale = await assetScale(await this.#o.client(), asset, 'details.asset');
      amount = { asset, decimal: fromBaseUnits(moved, scale) };
      const [net, fee, gross] = [details.netAmount, details.fees, details.amount].map((v) => {
        const b = baseUnits(v);
        return b === undefined ? undefined : fromBaseUnits(b, scale);
      });
      amounts = { asset, ...(net !== undefined ? { net } : {}), ...(fee !== undefined ? { fee } : {}), ...(gross !== undefined ? { gross } : {}) };
      required = requiredApprovers(this.#o.rules, { asset, baseUnits: BigInt(moved), scale });
    }
    const review: Review = {
      ...ids,
      ...(type ? { type } : {}),
      details,
      ...(amount ? { amount } : {}),
      ...(amounts ? { amounts } : {}),
      reasons: Array.isArray(req.reasons) ? req.reasons.map(String) : [],
      ...(typeof details.initiatedBy === 'string' ? { initiatedBy: details.initiatedBy } : {}),
      ...(typeof details.initiatorName === 'string' ? { initiatorName: details.initiatorName } : {}),
      expireTime,
      required,
      votes: [],
      state: 'open',
      createdAt: this.#o.now(),
    };
    const { review: stored, added } = await this.#o.store.add(review);
    if (added) {
      const { votes: _v, ...record } = review;
      await this.#line({ kind: 'review', event: 'opened', ...ids, required, expireTime, ...(amount ? { amount: `${amount.decimal} ${amount.asset}` } : {}), reasons: review.reasons, review: record });
      await this.#publish({ action_id: ids.action_id, event: 'opened' });
    }
    return viewOf(stored);
  }

  /**
   * Record a vote, atomically with the check that the review is open; when it decides the
   * review, the final call is claimed with it and made in the background (exactly once).
   * @param via where it came from (`flow` votes are the flow's word for who voted).
   * @returns the review with the vote: state `open`, or `calling` when this vote decided it (the
   *   call's outcome reaches {@link ReviewQueueOptions.onEvent} and the change stream).
   * @throws {ReviewError} 400 (a field, named), 404 (unknown id), 409 (being decided, decided,
   *   decided elsewhere, expired, the deadline passed, a second vote), 403 (the initiator
   *   approving), 503 (the shared store unavailable); nothing is stored or called then.
   */
  async vote(actionId: unknown, input: VoteInput, via: VoteVia): Promise<ReviewView> {
    if (typeof actionId !== 'string' || !PATH_ID.test(actionId)) throw new ReviewError(400, 'expected an action id', 'action_id');
    const v = checkVoteInput(input);
    const review = await this.get(actionId);
    checkVote(review, v, this.#o.now());
    await this.#checkPending(review);
    const vote: Vote = { ...v, at: new Date(this.#o.now()).toISOString(), via };
    const result = await this.#o.store.vote(actionId, vote, review.required, this.#o.instance);
    if (result.kind === 'missing') throw new ReviewError(404, `no review of action ${JSON.stringify(actionId).slice(0, 60)}`, 'action_id');
    if (result.kind !== 'stored') {
      checkVote(await this.get(actionId), v, this.#o.now());
      throw new ReviewError(409, result.kind === 'voted' ? 'already voted by you' : 'the review is already being decided');
    }
    await this.#line({ kind: 'review', event: 'vote', action_id: actionId, client_id: review.client_id, reviewer: vote.reviewer, decision: vote.decision, ...(vote.reason ? { reason: vote.reason } : {}), via, at: vote.at });
    const votes = [...review.votes, vote];
    if (result.claimed) {
      const claimed: Review = { ...review, votes, state: 'calling', final: result.claimed };
      this.#background(this.#finalCall(claimed, result.claimed));
      return viewOf(claimed);
    }
    return viewOf({ ...review, votes });
  }

  /**
   * Escalate and expire by the clock (what the timers do), and forget closed reviews a day past
   * their deadline; reads every review from the store. For a queue opened with `timers: false`.
   */
  async tick(): Promise<void> {
    for (const r of await this.#o.store.load()) await this.#due(r);
  }

  /** Stop: the timers, the change stream, the calls in flight settle (a resolution left unknown resumes at the next open), the audit file closes. */
  async close(): Promise<void> {
    this.#closing.abort();
    for (const t of this.#intervals) clearInterval(t);
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    this.#unsubscribe?.();
    this.#undoDataLoss?.();
    await Promise.allSettled(Array.from(this.#running));
    await this.#o.store.close();
    await this.#audit.close();
  }

  /** Escalate, expire or forget `r` when its time has come (each step claimed once across instances). */
  async #due(r: Review): Promise<void> {
    const now = this.#o.now();
    // A closed review stays a day past its deadline (a late vote is told 409, not 404), then goes.
    if (!ON_QUEUE.has(r.state) && now - Math.max(r.expireTime * 1000, r.closedAt ?? r.createdAt) > CLOSED_REVIEW_KEEP_MS) {
      await this.#o.store.remove(r.action_id);
      this.#cache.delete(r.action_id);
      return;
    }
    if (r.state !== 'open' || r.expireTime <= 0) return;
    const approvals = viewOf(r).approvals;
    if (now >= r.expireTime * 1000) {
      if (!(await this.#o.store.finish(r.action_id, { state: 'expired', closedAt: now }))) return;
      await this.#line({ kind: 'review', event: 'expired', action_id: r.action_id, client_id: r.client_id, approvals, required: r.required });
      this.#o.onEvent?.({ kind: 'expired', review: { ...r, state: 'expired', closedAt: now } });
      await this.#publish({ action_id: r.action_id, event: 'expired' });
      return;
    }
    if (this.#o.escalateMarginMs > 0 && !r.escalated && now >= r.expireTime * 1000 - this.#o.escalateMarginMs && approvals < r.required) {
      if (!(await this.#o.store.claimEscalation(r.action_id))) return;
      await this.#line({ kind: 'review', event: 'escalated', action_id: r.action_id, client_id: r.client_id, approvals, required: r.required, deadline: new Date(r.expireTime * 1000).toISOString() });
      this.#o.onEvent?.({ kind: 'escalated', review: { ...r, escalated: true } });
      await this.#publish({ action_id: r.action_id, event: 'escalated' });
    }
  }

  /** Set the timer of `r`'s next deadline (escalation, then expiry), replacing the one it had. */
  #schedule(r: Review): void {
    clearTimeout(this.#timers.get(r.action_id));
    this.#timers.delete(r.action_id);
    if (!this.#o.timers || this.#closing.signal.aborted || r.state !== 'open' || r.expireTime <= 0) return;
    const expiry = r.expireTime * 1000;
    const escalation = expiry - this.#o.escalateMarginMs;
    const now = this.#o.now();
    const at = this.#o.escalateMarginMs > 0 && !r.escalated && now < escalation && viewOf(r).approvals < r.required ? escalation : expiry;
    const timer = setTimeout(
      () => {
        this.#timers.delete(r.action_id);
        this.#background(
          (async () => {
            const fresh = await this.#o.store.get(r.action_id);
            if (!fresh) return;
            await this.#due(fresh);
            this.#remember((await this.#o.store.get(r.action_id)) ?? fresh);
          })(),
        );
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - now)),
    );
    timer.unref();
    this.#timers.set(r.action_id, timer);
  }

  /**
   * Keep `r` as last heard (closed ones beyond the recently closed without their facts: closed.ts
   * trimClosed) and set its timer.
   * @param trim trim the cache now (false: the caller trims once after a batch).
   */
  #remember(r: Review, trim = true): void {
    this.#cache.set(r.action_id, r);
    if (trim && !ON_QUEUE.has(r.state) && !r.trimmed) trimClosed(this.#cache);
    this.#schedule(r);
  }

  /** Read the whole queue from the store into memory. */
  async #reload(): Promise<void> {
    const all = await this.#o.store.load();
    const ids = new Set(all.map((r) => r.action_id));
    for (const id of Array.from(this.#cache.keys())) {
      if (ids.has(id)) continue;
      this.#cache.delete(id);
      clearTimeout(this.#timers.get(id));
      this.#timers.delete(id);
    }
    for (const r of all) this.#remember(r, false);
    trimClosed(this.#cache);
  }

  /** A change heard on the store's stream: read that review again (or all, after a write-back), then tell the editors. */
  #heard(change: ReviewChange): void {
    if (this.#closing.signal.aborted) return;
    this.#background(
      (async () => {
        if (!change.action_id) await this.#reload();
        else {
          const r = await this.#o.store.get(change.action_id);
          if (r) this.#remember(r);
          else {
            this.#cache.delete(change.action_id);
            clearTimeout(this.#timers.get(change.action_id));
          }
        }
      })().finally(() => this.#o.onChange?.(change)),
    );
  }

  /** Publish a change of this queue (to every instance, this one included). A failure is not thrown: the others find it by the counter. */
  async #publish(change: Omit<ReviewChange, 'node'>): Promise<void> {
    await this.#o.store.publish({ node: this.#o.reviewerNode, ...change }).catch(() => undefined);
  }

  /** A change published while the subscriber was away: read the whole queue again. */
  async #checkMissed(): Promise<void> {
    if (!(await this.#o.store.missedChanges())) return;
    await this.#reload();
    this.#o.onChange?.({ node: this.#o.reviewerNode, action_id: '', event: 'restored' });
  }

  /**
   * The timers' sweep (every `checkEveryMs`): deadlines of every review as last heard, closed
   * reviews to forget, and the reviews whose action is no longer pending (GET
   * /coreclient/{client_id}/actions once per core client, then GET of each missing action).
   */
  async #sweep(): Promise<void> {
    for (const r of Array.from(this.#cache.values())) await this.#due(r).catch(() => undefined);
    const open = Array.from(this.#cache.values()).filter((r) => r.state === 'open');
    if (open.length === 0) return;
    const client = await this.#o.client();
    for (const clientId of new Set(open.map((r) => r.client_id))) {
      let pending: Set<string>;
      try {
        pending = new Set((await listActions(client, { client_id: clientId })).data.actions.map((a) => String(a.id)));
      } catch {
        continue; // read again at the next sweep
      }
      for (const r of open) {
        if (r.client_id !== clientId || pending.has(r.action_id) || this.#closing.signal.aborted) continue;
        const status = await readStatus(client, r).catch(() => '');
        if (status && status !== 'pending') await this.#closeElsewhere(r, status);
      }
    }
  }

  /**
   * Before a vote: is the action still pending? Read at most {@link PENDING_READ_WAIT_MS}; a read
   * that fails or is late lets the vote go on (the final call reads it again).
   * @throws {ReviewError} 409 when the action was decided elsewhere (the review is closed then).
   */
  async #checkPending(review: Review): Promise<void> {
    const wait = new AbortController();
    const status = await Promise.race([
      this.#o
        .client()
        .then((c) => readStatus(c, review))
        .catch(() => ''),
      abortableSleep(PENDING_READ_WAIT_MS, AbortSignal.any([wait.signal, this.#closing.signal])).then(() => ''),
    ]);
    wait.abort();
    if (!status || status === 'pending') return;
    await this.#closeElsewhere(review, status);
    throw new ReviewError(409, `the action was decided elsewhere (${status}): nothing was called`);
  }

  /**
   * Close a review whose action is no longer pending (once across instances): audit line, output, change.
   * @param claimed the review's final call is this queue's claim (found before calling): close it as
   *   claimed; else close an open review unless another step claimed it first.
   */
  async #closeElsewhere(review: Review, status: string, claimed = false): Promise<void> {
    const elsewhere = { status, why: `the action is ${status}, not by this review${claimed ? ': nothing was called' : ''}` };
    const closedAt = this.#o.now();
    const closing = { state: 'decidedElsewhere', elsewhere, closedAt } as const;
    if (claimed) await this.#o.store.update(review.action_id, closing);
    else if (!(await this.#o.store.finish(review.action_id, closing))) return;
    await this.#line({ kind: 'review', event: 'decidedElsewhere', action_id: review.action_id, client_id: review.client_id, status });
    this.#o.onEvent?.({ kind: 'decidedElsewhere', review: { ...review, state: 'decidedElsewhere', elsewhere, closedAt }, why: elsewhere.why });
    await this.#publish({ action_id: review.action_id, event: 'decidedElsewhere' });
  }

  /**
   * The final call of a review this queue claimed, in the background: recorded (with every vote it
   * counts) before it is made; not made when the action is no longer pending; made once; its
   * outcome resolved when unknown.
   */
  async #finalCall(review: Review, final: FinalCall): Promise<void> {
    const { decision } = final;
    const ids = { client_id: review.client_id, action_id: review.action_id };
    await this.#line({ kind: 'review', event: 'call', ...ids, decision, method: decision === 'approve' ? 'PUT' : 'DELETE', reviewers: final.votes.map((v) => v.reviewer), votes: final.votes });
    const client = await this.#o.client();
    const status = await readStatus(client, review).catch(() => '');
    if (status && status !== 'pending') return this.#closeElsewhere(review, status, true);
    let statusCode = 0;
    try {
      const res = decision === 'approve' ? await approveAction(client, ids) : await rejectAction(client, ids);
      statusCode = res.statusCode;
    } catch (e) {
      if (e instanceof ApiError && e.failure === 'outcomeUnknown') {
        await this.#line({ kind: 'review', event: 'unknown', ...ids, decision, statusCode: e.statusCode, why: e.message.slice(0, 200) });
        return this.#resolve(review, decision, Date.now());
      }
      const why = e instanceof Error ? e.message : String(e);
      return this.#settle(review, decision, 'notApplied', why, e instanceof ApiError ? e.statusCode : 0);
    }
    return this.#settle(review, decision, 'applied', `answered ${statusCode}`, statusCode);
  }

  /** Read the action until the final call's outcome is definite (or the queue closes: resumed at the next open). */
  async #resolve(review: Review, decision: ReviewDecision, callEndedAt = Date.now()): Promise<void> {
    const ids = { client_id: review.client_id, action_id: review.action_id };
    const reading = await resolveCallOutcome(async () => readCallOutcome(await this.#o.client(), ids, decision, review.details), { callEndedAt, signal: this.#closing.signal });
    if (reading) await this.#settle(review, decision, reading.outcome, reading.why, 0);
  }

  async #settle(review: Review, decision: ReviewDecision, outcome: 'applied' | 'notApplied', why: string, statusCode: number): Promise<void> {
    const state = outcome === 'applied' ? (decision === 'approve' ? 'approved' : 'rejected') : 'failed';
    const final = { ...review.final!, outcome, why, ...(statusCode ? { statusCode } : {}) };
    const closedAt = this.#o.now();
    await this.#o.store.update(review.action_id, { state, final, closedAt });
    await this.#line({ kind: 'review', event: 'result', action_id: review.action_id, client_id: review.client_id, decision, outcome, why, ...(statusCode ? { statusCode } : {}) });
    const done = (await this.#o.store.get(review.action_id).catch(() => undefined)) ?? { ...review, state, final, closedAt };
    this.#o.onEvent?.(state === 'failed' ? { kind: 'failed', review: done, why } : { kind: state, review: done });
    await this.#publish({ action_id: review.action_id, event: state });
  }

  /**
   * After Redis lost its data: write back every review this instance knows, from its audit file
   * (the reviews it opened, the votes it took, its final calls and closings) and from memory (what
   * it heard of the others'), each only where nothing is stored (store.ts `restore`).
   */
  async #writeBack(): Promise<void> {
    const known = new Map<string, Review>();
    for (const r of this.#cache.values()) known.set(r.action_id, structuredClone(r));
    for (const r of await reviewsFromAudit(this.#audit.file, this.#o.reviewerNode)) {
      const had = known.get(r.action_id);
      if (!had) {
        known.set(r.action_id, r);
        continue;
      }
      for (const v of r.votes) if (!had.votes.some((h) => h.reviewer.toLowerCase() === v.reviewer.toLowerCase())) had.votes.push(v);
      if (ON_QUEUE.has(had.state) && r.state !== 'open') Object.assign(had, { state: r.state, final: r.final ?? had.final, closedAt: r.closedAt, elsewhere: r.elsewhere });
      if (r.escalated) had.escalated = true;
    }
    const now = this.#o.now();
    await this.#o.store.restore(Array.from(known.values()).filter((r) => ON_QUEUE.has(r.state) || now - (r.closedAt ?? r.createdAt) < CLOSED_REVIEW_KEEP_MS));
  }

  #background(job: Promise<unknown>): void {
    this.#running.add(job);
    void job.catch(() => undefined).finally(() => this.#running.delete(job));
  }

  #line(record: Record<string, unknown>): Promise<unknown> {
    return this.#audit.append({ ...record, node: this.#o.reviewerNode, instance: this.#o.instance, at: record.at ?? new Date(this.#o.now()).toISOString() });
  }
}

/** The action's status (spec section 3: pending, approved, rejected, expired) read with GET /coreclient/{client_id}/action/{action_id}. @throws what the read throws. */
async function readStatus(client: CustodyClient, r: Review): Promise<string> {
  return String((await getAction(client, { client_id: r.client_id, action_id: r.action_id })).data.status ?? '');
}

