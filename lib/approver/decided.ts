/**
 * What the approval book (book.ts) keeps of an action once its decision is settled (`done`, or
 * `failed`: decide it again when it comes back): the decision, the rule that made it, when, the
 * action's expiry and two marks, in one small object ({@link Decided}), about 60 bytes beside its
 * key. Not the decision's reasons and facts, and not its audit lines: those are on disk
 * (docs/audit.md). It is what the next delivery of the same action needs (spec section 6 rule 2:
 * a reconnect re-sends every pending action): that it was decided, how, and until when it can come
 * back (docs/performance.md, "What is kept in memory").
 *
 * The same facts travel in the audit's checkpoint as one `settled` record per action
 * ({@link SettledRecord}), and the approvals still inside the velocity window whose action can no
 * longer come back as one `velocity` record per mode and asset ({@link VelocityRecord}: times and
 * amounts only), so a start reads them and nothing more.
 */
import type { Decision } from './rules';
import type { ApproverMode, DecisionRecord } from './types';
import type { VelocityEntry } from './velocity';
import { bareDecision } from './facts';

/** The rule that made a decision, as {@link DecisionRecord.rule} names it: 0-based index and name. */
export type RuleRef = { index: number; name: string } | null;

const DECISIONS: readonly Decision[] = ['approve', 'reject', 'hold'];
const EXPIRED = 1 << 2;
const ELSEWHERE = 1 << 3;
const FAILED = 1 << 4;
const MS_SHIFT = 5;

/**
 * A settled decision, compact: every field a small integer (a V8 Smi, stored in the object) or a
 * shared reference. Times in epoch seconds plus the millisecond kept in {@link Decided.code}, so
 * {@link Decided.decidedAtMs} gives back the decision time to the millisecond.
 */
export class Decided {
  private constructor(
    /** Bits: the decision (0-1: approve, reject, hold), expired (2), decided elsewhere (3), failed (4), then the decision time's millisecond (5-14). */
    readonly code: number,
    /** The decision time, epoch seconds (floor). */
    readonly decidedSec: number,
    /** The action's `expireTime`, epoch seconds; 0: none; -1: not recorded (a line written before it was). */
    readonly expireTime: number,
    /** The rule that decided (one shared object per rule: {@link Decided.of} interns it), or null for the no-match decision. */
    readonly rule: RuleRef,
  ) {}

  /**
   * The compact form of a decision.
   * @param rules where rule references are interned (one per approver book): a million decisions by three rules keep three rule objects.
   * @param failed the call failed (`notApplied` while the action was still pending): decide again when it comes back.
   * @param elsewhere decided by another instance (coordination): a re-send here is skipped too.
   */
  static of(d: Pick<DecisionRecord, 'decision' | 'rule' | 'decidedAt' | 'expireTime' | 'expired'>, rules: Map<string, RuleRef>, failed = false, elsewhere = false): Decided {
    const at = Date.parse(d.decidedAt);
    const ms = Number.isFinite(at) ? at : 0;
    const code = Math.max(0, DECISIONS.indexOf(d.decision)) | (d.expired ? EXPIRED : 0) | (elsewhere ? ELSEWHERE : 0) | (failed ? FAILED : 0) | ((ms % 1000) << MS_SHIFT);
    let rule: RuleRef = null;
    if (d.rule) {
      const id = `${d.rule.index}\u0000${d.rule.name}`;
      rule = rules.get(id) ?? null;
      if (!rule) rules.set(id, (rule = { index: d.rule.index, name: d.rule.name }));
    }
    return new Decided(code, Math.floor(ms / 1000), d.expireTime === undefined ? -1 : d.expireTime, rule);
  }

  /** `approve`, `reject` or `hold`. */
  get decision(): Decision {
    return DECISIONS[this.code & 3]!;
  }

  /** The action had expired before it could be approved: nothing was sent. */
  get expired(): boolean {
    return (this.code & EXPIRED) !== 0;
  }

  /** Decided by another instance (coordination). */
  get elsewhere(): boolean {
    return (this.code & ELSEWHERE) !== 0;
  }

  /** The call did not take effect and the action stayed pending: it is decided again when it comes back. */
  get failed(): boolean {
    return (this.code & FAILED) !== 0;
  }

  /** The decision time, epoch ms. */
  get decidedAtMs(): number {
    return this.decidedSec * 1000 + (this.code >>> MS_SHIFT);
  }

  /**
   * The decision record a re-delivery answers with (`msg.decision`, `redelivered` set by the
   * caller): the decision, its rule, time and marks as decided; the reasons say where the rest is
   * (the audit file's decision line); the facts (asset, amount, destination, velocity) are not
   * kept, so they are null, and `type` is what the re-delivered action says.
   */
  record(mode: ApproverMode, clientId: string, actionId: string, type: string): DecisionRecord {
    const at = new Date(this.decidedAtMs).toISOString();
    const by = this.rule ? `rule ${this.rule.index + 1} "${this.rule.name}"` : 'no rule matched: the no-match decision';
    const d = bareDecision({ type, ...(this.expireTime >= 0 ? { expireTime: this.expireTime } : {}) }, clientId, actionId, this.decision, [`decided at ${at} (${by}); its facts and reasons are in the audit file's decision line`], mode, this.decidedAtMs);
    d.rule = this.rule;
    if (this.expired) d.expired = true;
    return d;
  }

}

/**
 * One settled action as the audit's checkpoint carries it (docs/audit.md, "What the approver
 * carries"). Example:
 * `{"kind":"settled","mode":"live","client_id":"c1","action_id":"a1","decision":"approve","rule":{"index":0,"name":"small"},"decidedAt":"2026-03-02T10:00:00.000Z","expireTime":1772449200,"asset":"BTC-TESTNET","amount":"1500000"}`.
 */
export interface SettledRecord {
  kind: 'settled';
  mode: ApproverMode;
  client_id: string;
  action_id: string;
  decision: Decision;
  rule: RuleRef;
  /** ISO 8601. */
  decidedAt: string;
  /** Epoch seconds; 0: none; absent: not recorded. */
  expireTime?: number;
  expired?: true;
  elsewhere?: true;
  failed?: true;
  /** With `amount`: an approval still inside the longest velocity window (asset code). */
  asset?: string;
  /** Base units, decimal digits. */
  amount?: string;
  /** With `amount`: when it was counted, epoch ms (the decision time unless a re-count moved it). */
  countedAt?: number;
}

/** The checkpoint record of `d` (one action), with its approval when it still counts for velocity. */
export function settledRecord(mode: ApproverMode, clientId: string, actionId: string, d: Decided, counted?: { asset: string; amount: bigint; at: number }): SettledRecord {
  return {
    kind: 'settled',
    mode,
    client_id: clientId,
    action_id: actionId,
    decision: d.decision,
    rule: d.rule,
    decidedAt: new Date(d.decidedAtMs).toISOString(),
    ...(d.expireTime >= 0 ? { expireTime: d.expireTime } : {}),
    ...(d.expired ? { expired: true as const } : {}),
    ...(d.elsewhere ? { elsewhere: true as const } : {}),
    ...(d.failed ? { failed: true as const } : {}),
    ...(counted ? { asset: counted.asset, amount: counted.amount.toString(), countedAt: counted.at } : {}),
  };
}

/**
 * The approvals of one mode and asset that still count in the velocity window but whose action
 * can no longer come back (past its `expireTime`), as the audit's checkpoint carries them: times
 * and amounts, without action ids. Example:
 * `{"kind":"velocity","mode":"live","asset":"BTC-TESTNET","from":1772449200000,"at":[0,61000,125000],"amount":"1500000,250000,990000"}`.
 */
export interface VelocityRecord {
  kind: 'velocity';
  mode: ApproverMode;
  /** Asset code, e.g. `BTC-TESTNET`. */
  asset: string;
  /** Epoch ms of the first approval. */
  from: number;
  /** Each approval's time, ms after `from`, in the order of `amount`. */
  at: number[];
  /** Each approval's amount in base units, decimal digits, comma-separated. */
  amount: string;
}

/** The checkpoint record of `entries` (the approvals of `asset` in `mode`, any order; at least one). */
export function velocityRecord(mode: ApproverMode, asset: string, entries: readonly VelocityEntry[]): VelocityRecord {
  const from = Math.min(...entries.map((e) => e.at));
  return { kind: 'velocity', mode, asset, from, at: entries.map((e) => e.at - from), amount: entries.map((e) => e.amount.toString()).join(',') };
}

/**
 * The approvals a {@link VelocityRecord} carries, as times (epoch ms) and amounts (base units).
 * @throws {Error} naming the record when it is malformed (lengths that differ, an amount that is
 *   not digits): counting fewer approvals than were made would let a velocity limit pass, so the
 *   approver refuses to start on it.
 */
export function velocityEntries(r: VelocityRecord): Array<{ at: number; amount: bigint }> {
  const amounts = typeof r.amount === 'string' && r.amount !== '' ? r.amount.split(',') : [];
  if (!Array.isArray(r.at) || amounts.length !== r.at.length || !Number.isFinite(r.from) || amounts.some((a) => !/^\d+$/.test(a)) || r.at.some((t) => !Number.isFinite(t))) {
    throw new Error(`audit checkpoint: a velocity record of ${JSON.stringify(r.asset)} (${r.mode}) is malformed: its approvals cannot be counted`);
  }
  return amounts.map((a, i) => ({ at: r.from + Number(r.at[i]), amount: BigInt(a) }));
}
