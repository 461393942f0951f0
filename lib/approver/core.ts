/**
 * What every stage of an approver's pipeline shares (approver.ts): its options with their
 * defaults, the approval book of its audit file (book.ts), the claims (claims.ts), the velocity
 * windows (velocity.ts; shared through Redis in lib/approver/velocity-redis.ts), the
 * closing signal; and the writes the stages make: audit lines (docs/audit.md), the "decided"
 * record of a claim, the release of a reserved approval.
 */
import { setMaxListeners } from 'node:events';
import type { Claim } from '../coordination/coordinator';
import { RedisVelocityWindows } from './velocity-redis';
import type { AuditLine } from '../audit/line';
import type { ApprovalBook } from './book';
import { LocalClaims, RedisClaims, type DecisionClaims } from './claims';
import { LocalVelocityWindows, type VelocityEntry, type VelocityWindows } from './velocity';
import { PENDING_SETTLES_AFTER_MS, REPORT_UNKNOWN_AFTER_MS, type ApproverMode, type ApproverOptions, type ApproverOutcome, type DecidedRecord, type DecisionRecord, type ResolvedOptions } from './types';

/** Returned by a stage when the decision must start again from the claim (the claim was lost, or Redis went away before the call). */
export const AGAIN = Symbol('again');

/** The shared state and writes of one approver's pipeline (see the module comment). */
export class ApproverCore {
  readonly mode: ApproverMode;
  readonly opts: ResolvedOptions;
  readonly book: ApprovalBook;
  /** The longest velocity window of the rules, ms (0: none). */
  readonly longestWindowMs: number;
  readonly claims: DecisionClaims;
  readonly windows: VelocityWindows;
  /** Aborted when the approver closes: waits (claims, resolution timers, retries) end. */
  readonly closing = new AbortController();

  constructor(opts: ApproverOptions, book: ApprovalBook) {
    this.mode = opts.mode ?? 'live';
    this.opts = { defaultDecision: 'hold', mode: this.mode, cacheMs: 60_000, now: Date.now, reportUnknownAfterMs: REPORT_UNKNOWN_AFTER_MS, pendingSettlesAfterMs: PENDING_SETTLES_AFTER_MS, ...opts };
    this.book = book;
    this.longestWindowMs = Math.max(0, ...opts.rules.map((r) => r.velocityWindowMs));
    setMaxListeners(0, this.closing.signal);
    const scope = opts.velocityScope || opts.approverId || opts.auditFile.split(/[\\/]/).pop() || 'approver';
    if (opts.coordinator) {
      this.claims = new RedisClaims(opts.coordinator, this.opts.now, this.closing.signal);
      this.windows = new RedisVelocityWindows(opts.coordinator, scope, this.mode, this.longestWindowMs);
    } else {
      this.claims = new LocalClaims();
      // The book's longest window, read at each reserve: approvers sharing one audit file never prune what another counts.
      this.windows = new LocalVelocityWindows(() => Math.max(this.longestWindowMs, book.keepMs), book.velocity[this.mode]);
    }
  }

  /** True once the approver is closing. */
  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** Calls of this approver's mode whose outcome is unknown (being resolved). */
  get unknown(): number {
    return this.book.unknownCount(this.mode);
  }

  /** Append a line to the audit file (and, with coordination, to the shared stream). @throws what the file throws (rejects). */
  async append(record: Record<string, unknown>): Promise<AuditLine> {
    const line = await this.book.log.append(record);
    this.opts.coordinator?.audit(this.opts.approverId ?? this.opts.velocityScope ?? 'approver', line);
    return line;
  }

  /** Append the result line of `decision`'s call (`ok`, `outcome`, and `statusCode`, `code`, `error` or `sent`/`expired`). */
  appendResult(key: string, decision: DecisionRecord, result: Record<string, unknown>): Promise<unknown> {
    const { mode, action_id, client_id } = decision;
    return this.append({ kind: 'result', approver: this.opts.approverId, mode, action_id, client_id, ...result, at: new Date(this.opts.now()).toISOString() });
  }

  /** A final outcome: with coordination, "decided" is recorded for the claim. */
  final(claim: Claim | undefined, o: ApproverOutcome): ApproverOutcome {
    if (claim) this.claims.complete(claim, JSON.stringify({ decision: o.decision, output: o.output, instance: this.claims.instance } satisfies DecidedRecord));
    return o;
  }

  /**
   * Stop counting `decision`'s approval (a definite "not applied"): the one it reserved (its time,
   * `decidedAt`), not another instance's reservation of the same action. Never throws: Redis away,
   * the shared window keeps it (the safe side).
   */
  async unreserve(decision: DecisionRecord): Promise<void> {
    if (decision.decision !== 'approve') return;
    const at = Date.parse(decision.decidedAt);
    await this.release(decision.asset ?? undefined, decision.action_id, Number.isFinite(at) ? at : undefined);
  }

  /**
   * Stop counting the approval of `action` reserved at `at` (epoch ms; any when undefined): in the
   * book (with coordination, where this instance keeps its own approvals for a write-back) and in
   * `asset`'s window. Another reservation of the same action stays. Never throws.
   */
  async release(asset: string | undefined, action: string, at: number | undefined): Promise<void> {
    const book = this.book.velocity[this.mode];
    if (this.claims.shared && (at === undefined || book.entry(action)?.at === at)) book.remove(action);
    if (asset) await this.windows.release(asset, action, at).catch(() => undefined);
  }

  /** With coordination: count an approval of this instance in its book too (written back after a data loss of Redis). */
  noteOwn(asset: string, e: VelocityEntry): void {
    // Only while a velocity window needs it (the book forgets approvals past its longest window).
    if (this.claims.shared && this.book.keepMs > 0) this.book.velocity[this.mode].add(asset, e.amount, e.at, e.action);
  }
}
