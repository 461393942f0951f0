/**
 * The decision engine of the approver node, with no Node-RED import. Each pending
 * action of a core client goes once through one pipeline:
 *
 *   read -> decide -> claim -> reserve -> audit -> call -> resolve
 *
 * - **read** (read.ts): the action's details (GET /coreclient/{client_id}/action/{action_id},
 *   spec section 4) when the msg lacks them, or when it may have been decided before (a takeover);
 * - **decide** (reserve.ts): the ordered rules (rules.ts, pure: their context is fetched first,
 *   rule-context.ts; the action's facts: facts.ts);
 * - **claim**: {@link DecisionClaims} (claims.ts): granted at once on one instance, a Redis claim
 *   with a lease across several;
 * - **reserve** (reserve.ts): {@link VelocityWindows} (velocity.ts; shared through Redis in
 *   lib/approver/velocity-redis.ts): an approval is counted before it is called, and only
 *   a definite "not applied" frees it;
 * - **audit**: the decision on disk (lib/audit, hash-chained) before anything is sent; the
 *   approval book (book.ts) keeps what each action id led to, rebuilt from that file on start;
 * - **call**: approve (PUT) or reject (DELETE), then a `result` line;
 * - **resolve** (resolution.ts, outcome.ts): a call whose outcome is unknown (an ApiError whose
 *   `failure` is `outcomeUnknown`: a timeout, a reset, a 5xx, the client closed mid-call) is
 *   never counted as failed: its `result` line says `outcome: "unknown"`, the action is read
 *   until the answer is definite, at once, then on a timer, and after a restart, and a
 *   `resolved` line records it.
 *
 * Source: spec section 2 "Action", section 3 (action statuses pending, expired, approved,
 * rejected), section 4 `GET`/`PUT`/`DELETE /coreclient/{client_id}/action/{action_id}`, section 6
 * (the core client feed re-sends every pending action after a reconnect: decide each action id
 * once). The audit lines are described in docs/audit.md. The stages share an {@link ApproverCore}
 * (core.ts: options, book, claims, windows, the audit writes); types.ts holds the options and the
 * decision record; write-back.ts what is written back after a data loss of Redis.
 */
import crypto from 'node:crypto';
import { CLOSE_GRACE_MS } from '../client/client';
import type { Claim } from '../coordination/coordinator';
import { ApiError, ValidationError, type FailureKind } from '../api/errors';
import { abortableSleep } from '../support/backoff';
import { acquireBook, entryKey, releaseBook, type ApprovalBook, type BookRetained, type Entry } from './book';
import { AGAIN, ApproverCore } from './core';
import { actionFacts, bareDecision, markExpired, str } from './facts';
import { decidedElsewhere, readAction } from './read';
import { decideAndReserve } from './reserve';
import { recordedFacts } from './decision-facts';
import { compileDraft, triedFacts, tryAction, type PolicyDraft, type TriedAction, type TryResult } from './draft';
import { assetScale } from '../client/v1/assets';
import { Resolver } from './resolution';
import { RuleContextReader } from './rule-context';
import { OUTPUT, type ApproverMode, type ApproverOptions, type ApproverOutcome, type ApproverOutput } from './types';
import { writeBack } from './write-back';
import { approveAction, rejectAction } from '../client/v1/core-client';

/** How long past `CLOSE_GRACE_MS` {@link Approver.close} waits for the calls in flight, ms: the client cuts its calls at `CLOSE_GRACE_MS`, and their result lines are written within this margin (12 s in all, within Node-RED's 15 s node close timeout). */
const CLOSE_MARGIN_MS = 2000;

/**
 * Decides the actions of core clients by rules, once each, with an audit trail. Open it with
 * {@link Approver.open}; close it with {@link Approver.close}.
 */
export class Approver {
  readonly mode: ApproverMode;
  readonly auditFile: string;
  readonly #core: ApproverCore;
  readonly #context: RuleContextReader;
  readonly #resolver: Resolver;
  readonly #inFlight = new Set<Promise<unknown>>();
  #unregisterLoss: (() => void) | undefined;

  private constructor(opts: ApproverOptions, book: ApprovalBook) {
    this.#core = new ApproverCore(opts, book);
    this.mode = this.#core.mode;
    this.auditFile = opts.auditFile;
    this.#context = new RuleContextReader(opts.rules, this.#core.opts.cacheMs, this.#core.opts.now);
    this.#resolver = new Resolver(this.#core);
  }

  /**
   * Open the audit file (verifying what it reads of its chain), rebuild what each action id led
   * to and the velocity windows from it, start resolving the calls whose outcome it leaves
   * unknown, and return an approver ready to decide.
   * @throws {AuditFileError} when the audit file does not verify (rejects): the approver then
   *   refuses to decide anything until the file is looked at.
   * @throws {ValidationError} naming `defaultDecision` when it is neither hold nor reject.
   */
  static async open(opts: ApproverOptions): Promise<Approver> {
    if (opts.defaultDecision !== undefined && opts.defaultDecision !== 'hold' && opts.defaultDecision !== 'reject') {
      throw new ValidationError('defaultDecision', `hold or reject, got ${JSON.stringify(opts.defaultDecision)}`);
    }
    // With coordination the shared audit stream holds every line the approver appends (docs/scale-out.md).
    // A checkpoint line is written by the log itself and would not reach the stream, leaving a gap in its
    // chain; so none is written, and the file rotates daily or by size as before.
    const auditOptions = opts.coordinator ? { checkpointMinBytes: Infinity, ...opts.auditOptions } : opts.auditOptions;
    const book = await acquireBook(opts.auditFile, auditOptions, opts.onAuditHead);
    const approver = new Approver(opts, book);
    const core = approver.#core;
    book.keepMs = Math.max(book.keepMs, core.longestWindowMs);
    approver.#unregisterLoss = core.claims.onDataLoss(() => writeBack(core));
    for (const [key, e] of book.unknownEntries(approver.mode)) approver.#resolver.start(key, e);
    return approver;
  }

  /** Calls of this approver's mode whose outcome is unknown (being resolved). */
  get unknown(): number {
    return this.#core.unknown;
  }

  /**
   * What the audit file's book holds in memory now (shared by the approvers of that file), once
   * what no decision needs is forgotten (decided actions past their `expireTime`, approvals past
   * the longest velocity window): actions remembered, of which in hand, and approvals counted
   * per mode. docs/performance.md, "What is kept in memory", states the bounds.
   */
  retained(): BookRetained {
    this.#core.book.prune(this.#core.opts.now());
    return this.#core.book.retained();
  }

  /**
   * Decide one action through the pipeline read -> decide -> claim -> reserve -> audit -> call ->
   * resolve (see the module comment).
   *
   * An action decided before (a feed re-send, a restart) is not decided again: its earlier
   * decision comes back with `redelivered`; one whose call's outcome is unknown waits for the
   * resolution (at most `reportUnknownAfterMs`) and is decided again only when that says "not
   * applied". With coordination, an action decided by another instance comes back `skipped`.
   * @param input an action as the core client feed sends it: `client_id` and `action_id`
   *   (or `id`), and `type`, `expireTime`, `details` when known.
   * @returns the outcome; a call that did not take effect, or whose outcome is still unknown, is
   *   returned in `error` (already audited), not thrown.
   * @throws {ValidationError} when `client_id` or `action_id` is missing (nothing is sent).
   * @throws {Error} when the approver is closed, or the audit file cannot be written (nothing is sent).
   */
  async decide(input: Record<string, unknown>): Promise<ApproverOutcome> {
    if (this.#core.closed) throw new Error('approver: closed');
    const clientId = str(input.client_id) ?? str(input.coreClientID);
    const actionId = str(input.action_id) ?? str(input.id);
    if (!clientId) throw new ValidationError('client_id', 'the core client id (msg.payload.client_id, or set in the node)');
    if (!actionId) throw new ValidationError('action_id', 'the action id (msg.payload.action_id or msg.payload.id)');
    const key = entryKey(this.mode, clientId, actionId);
    const action = { ...input, client_id: clientId, action_id: actionId };
    const type = str(input.type) ?? '';
    let known = this.#core.book.get(key, type);
    if (known?.state === 'unknown') {
      const waited = await this.#resolver.wait(key, known, action, true);
      if (waited) return waited;
      known = this.#core.book.get(key, type);
    }
    if (known && known.state !== 'failed') {
      const earlier = known.decision;
      if (!earlier) {
        // Being decided right now (the same action twice in one burst).
        const d = bareDecision(action, clientId, actionId, 'hold', ['redelivered while its first delivery is being decided: decided once, there'], this.mode, this.#core.opts.now());
        return { decision: { ...d, redelivered: true }, output: 'held', action };
      }
      if (known.elsewhere) return { decision: { ...earlier, redelivered: true }, output: 'skipped', action };
      return { decision: { ...earlier, redelivered: true }, output: earlier.expired ? 'held' : OUTPUT[earlier.decision], action };
    }
    const entry: Entry = { state: 'deciding' };
    this.#core.book.set(key, entry);
    const work = this.#pipeline(input, action, clientId, actionId, key, entry, known);
    this.#inFlight.add(work);
    try {
      return await work;
    } catch (e) {
      // Failed before the decision was on disk (client, audit write): as if it never came.
      if (entry.state === 'deciding' && this.#core.book.get(key) === entry) {
        if (known) this.#core.book.set(key, known);
        else this.#core.book.delete(key);
      }
      throw e;
    } finally {
      this.#inFlight.delete(work);
    }
  }

  /** Claim, then decide; again from the claim when it was lost or Redis went away before the call. */
  async #pipeline(input: Record<string, unknown>, action: Record<string, unknown>, clientId: string, actionId: string, key: string, entry: Entry, earlier: Entry | undefined): Promise<ApproverOutcome> {
    const onWait = (reason: string) => this.#core.opts.onCoordinationWait?.(reason);
    const claimId = crypto.randomUUID();
    for (;;) {
      const acquired = await this.#core.claims.acquire(`${this.mode}:${clientId}:${actionId}`, claimId, Number(input.expireTime) || 0, this.#core.closing.signal, onWait);
      if (acquired.kind === 'decided') return decidedElsewhere(this.#core, acquired.record, entry, action);
      if (acquired.kind === 'expired') {
        // Expired while it waited: nothing can approve it any more.
        const d = bareDecision(action, clientId, actionId, 'hold', [`expired: the action expired at ${new Date((Number(input.expireTime) || 0) * 1000).toISOString()} while it waited for coordination (${acquired.contested ? 'claimed by another instance' : 'Redis unavailable'}): not approved`], this.mode, this.#core.opts.now());
        d.expired = true;
        entry.decision = d;
        await this.#core.append({ kind: 'decision', approver: this.#core.opts.approverId, ...d });
        entry.state = 'done';
        return { decision: d, output: acquired.contested ? 'skipped' : 'held', action };
      }
      const outcome = await this.#decide(input, clientId, actionId, key, entry, earlier, acquired.claim, acquired.mustRead);
      if (outcome !== AGAIN) return outcome;
      await abortableSleep(200, this.#core.closing.signal);
      if (this.#core.closed) throw new Error('approver: closed');
    }
  }

  /**
   * Read, decide, reserve, audit, call and resolve one claimed action.
   * @param claim the claim held (coordination), else undefined.
   * @param mustRead read the action first even when the msg has its details (it may have been decided before).
   * @returns the outcome, or {@link AGAIN} when the claim was lost or Redis went away before the call (nothing called).
   */
  async #decide(input: Record<string, unknown>, clientId: string, actionId: string, key: string, entry: Entry, earlier: Entry | undefined, claim: Claim | undefined, mustRead: boolean): Promise<ApproverOutcome | typeof AGAIN> {
    const client = await this.#core.opts.client();
    // read
    const read = await readAction(this.#core, client, input, clientId, actionId, earlier, mustRead);
    if (read === AGAIN) return AGAIN;
    if ('decision' in read) {
      if (!this.#core.claims.shared) {
        this.#core.book.delete(key);
        return read;
      }
      entry.decision = read.decision;
      entry.state = 'done';
      entry.elsewhere = true;
      return this.#core.final(claim, read);
    }
    const { action, reasons } = read;
    // decide (pure rules, their context fetched first) and reserve
    const facts = actionFacts(action, clientId);
    const ctx = await this.#context.read(client, facts, this.#core.book.velocity[this.mode]);
    const decision = await decideAndReserve(this.#core, facts, ctx, reasons, clientId, actionId);
    if (decision === AGAIN) return AGAIN;
    // audit
    entry.decision = decision;
    await this.#core.append({ kind: 'decision', approver: this.#core.opts.approverId, ...decision, ...(claim ? { fence: claim.fence, instance: this.#core.claims.instance } : {}), facts: recordedFacts(facts, ctx) });
    const nothingToCall = this.mode === 'dryRun' || decision.decision === 'hold' || decision.expired === true;
    entry.state = nothingToCall ? 'done' : 'open';
    if (this.#core.book.keepMs > 0) this.#core.book.velocity[this.mode].prune(ctx.now, this.#core.book.keepMs);
    const output: ApproverOutput = decision.expired ? 'held' : OUTPUT[decision.decision];
    if (nothingToCall) return this.#core.final(claim, { decision, output, action });
    if (decision.decision === 'approve' && markExpired(decision, facts, this.#core.opts.now())) {
      // Checked again right before the call: the audit write may have taken a while.
      await this.#core.unreserve(decision);
      entry.state = 'done';
      await this.#core.appendResult(key, decision, { ok: false, outcome: 'notApplied', sent: false, expired: true });
      return this.#core.final(claim, { decision, output: 'held', action });
    }
    // The claim must still be ours right before the call (fencing): else nothing is called.
    const renewedAt = Date.now();
    const held = await this.#core.claims.stillHeld(claim);
    if (held !== 'held') {
      await this.#core.unreserve(decision);
      entry.state = 'failed';
      await this.#core.appendResult(key, decision, { ok: false, outcome: 'notApplied', sent: false, claim: held === 'decided' ? 'decided elsewhere' : 'lost or Redis unavailable' });
      return AGAIN;
    }
    // call
    const call = decision.decision === 'approve' ? approveAction : rejectAction;
    let failure: FailureKind;
    let err: Error & { statusCode?: number; code?: unknown };
    // With a lease: the call leaves within half of it after the renew, or not at all (a queue of
    // signatures or a slow loop must not send it after another instance may have taken over).
    const lease = claim ? this.#core.claims.leaseMs : 0;
    try {
      const res = await call(client, { client_id: clientId, action_id: actionId }, lease > 0 ? { notAfter: renewedAt + lease / 2 } : undefined);
      entry.state = 'done';
      await this.#core.appendResult(key, decision, { ok: true, outcome: 'applied', statusCode: res.statusCode });
      return this.#core.final(claim, { decision: { ...decision, outcome: 'applied' }, output, action, statusCode: res.statusCode });
    } catch (e) {
      err = e as Error & { statusCode?: number; code?: unknown };
      // Anything but a definite "refused" or "not sent" may have had its effect.
      failure = e instanceof ApiError ? e.failure : 'outcomeUnknown';
    }
    const statusCode = err.statusCode ?? 0;
    if (err instanceof ApiError && err.code === 'EDEADLINE') {
      // Not sent: the claim's lease was running out. Decided again from the claim (this claim id keeps it, if still ours).
      await this.#core.unreserve(decision);
      entry.state = 'failed';
      await this.#core.appendResult(key, decision, { ok: false, outcome: 'notApplied', sent: false, claim: 'lease running out before the call left' });
      return AGAIN;
    }
    if (failure !== 'outcomeUnknown') {
      entry.state = 'failed';
      await this.#core.unreserve(decision);
      await this.#core.claims.release(claim);
      await this.#core.appendResult(key, decision, { ok: false, outcome: 'notApplied', failure, statusCode, code: err.code ?? null, error: err.message }).catch(() => undefined);
      return { decision: { ...decision, outcome: 'notApplied' }, output, action, statusCode: statusCode || undefined, error: err };
    }
    // resolve: counted (the safe side) until reading the action says what the call did.
    entry.state = 'unknown';
    entry.callEndedAt = this.#core.opts.now();
    entry.claim = claim;
    entry.details = action.details && typeof action.details === 'object' ? (action.details as Record<string, unknown>) : undefined;
    entry.callError = { statusCode, code: err.code ?? null, msg: err.message };
    await this.#core.appendResult(key, decision, { ok: false, outcome: 'unknown', statusCode, code: err.code ?? null, error: err.message }).catch(() => undefined);
    this.#core.opts.onUnknownChange?.(this.#core.unknown);
    return (await this.#resolver.wait(key, entry, action, false))!;
  }

  /**
   * Try one action typed by hand under a draft (not deployed): which rule decides it and why,
   * counting the approvals in this approver's velocity windows (its mode's; shared through Redis
   * with coordination) as they stand: read, not consumed. Nothing is reserved, decided, called or
   * written. The windows hold the approvals within the deployed rules' longest window: a draft
   * with a longer window sees only those. Source: docs/nodes.md "Simulating a draft".
   * @param action the action ({@link TriedAction}); its asset's scale, when not given, is read
   *   through the client (GET /assets, the cached list; an error leaves it unknown).
   * @returns the draft's decision ({@link TryResult}).
   * @throws {ValidationError} naming the field of a bad draft (`rules[2].maxAmount`,
   *   `defaultDecision`) or action (`action.amount`), before anything is read (rejects).
   * @throws {CoordinationUnavailableError} when the shared windows cannot be read (Redis away).
   */
  async tryAction(draft: PolicyDraft, action: TriedAction): Promise<TryResult> {
    compileDraft(draft);
    const now = this.#core.opts.now();
    // The asset, scale and time first: an amountDecimal is read once the scale is known (below, by tryAction).
    const { facts, scale, at } = triedFacts({ ...action, amountDecimal: undefined }, now);
    let withScale = action;
    if (scale === undefined && facts.asset) {
      const read = await this.#core.opts
        .client()
        .then((c) => assetScale(c, facts.asset!))
        .catch(() => undefined);
      if (read !== undefined) withScale = { ...action, scale: read };
    }
    const view = facts.asset ? await this.#core.windows.read(facts.asset, at) : undefined;
    return tryAction({ ...draft, action: withScale, now, velocity: (asset, windowMs, t) => (view && asset === view.asset ? view.usage(windowMs, t) : { sum: 0n, count: 0 }) });
  }

  /**
   * Close: no new decision starts; waits (claims, resolution timers) end at once; a call in
   * flight may finish within `CLOSE_GRACE_MS` (lib/client/client.ts, 10 s: the grace a closing client
   * gives its requests) and its result line is written, `outcome: "unknown"` when the client cut
   * it (up to 12 s in all). What is
   * still unknown after that is resolved by the next start (its decision line has no result, or
   * its result says `outcome: "unknown"`). Then the audit file is released.
   */
  async close(): Promise<void> {
    if (this.#core.closed) return;
    this.#core.closing.abort();
    this.#unregisterLoss?.();
    const grace = new AbortController();
    // A little past the client's own grace: a call it cuts then is still recorded (`outcome: "unknown"`).
    await Promise.race([Promise.allSettled(Array.from(this.#inFlight)), abortableSleep(CLOSE_GRACE_MS + CLOSE_MARGIN_MS, grace.signal)]);
    grace.abort();
    await this.#resolver.settled();
    await this.#core.claims.close();
    await releaseBook(this.auditFile, this.#core.book, this.#core.opts.onAuditHead);
  }
}
