/**
 * Simulate a draft rule set against the recorded history of an approver (docs/nodes.md
 * "Simulating a draft"): every `decision` line of its audit log in the period (all segments,
 * history.ts) is decided again, in the order it was recorded, under the draft (draft.ts: the
 * approver's own rules engine), with the facts the line recorded (decision-facts.ts). The
 * draft's velocity limits count the draft's own approvals in their windows (those of the
 * longest window before the period too); what the draft rejects or holds does not count, and an
 * approval whose call the audit says was not applied (a `result` or `resolved` line) stops
 * counting there, as in the approver.
 *
 * Pure: no API call, no state change, no audit line, no velocity window of any approver touched;
 * it only reads the audit files. A condition whose fact the line does not record (a line written
 * before decision lines recorded facts, a whitelist no deployed rule read, a short code) fails
 * and the action is counted as not replayable, with why; it is never guessed.
 */
import { ValidationError } from '../api/errors';
import { fromBaseUnits } from '../api/amounts';
import { compileDraft, decideUnderDraft, type CompiledDraft, type DraftDecision, type PolicyDraft } from './draft';
import { MissingReads, ReplayContext, ReplayFacts, scaleShown, type DecisionLineFields } from './decision-facts';
import { readHistory } from './history';
import type { CompiledRule, Decision } from './rules';
import { VelocityLedger, windowUsage } from './velocity';

/** The default period of a simulation: the last 30 days, ms. */
export const SIMULATE_DEFAULT_PERIOD_MS = 30 * 86_400_000;

/** The most changed actions a result lists by default (the counts and sums cover all). */
export const SIMULATE_MAX_CHANGES = 1000;

/** What {@link simulate} takes: a draft ({@link PolicyDraft}), the audit log and the period. */
export interface SimulateOptions extends PolicyDraft {
  /** The approver's audit file (its live segment, `auditFile`); the rotated segments beside it are read too. */
  auditFile: string;
  /** Start of the period, epoch ms (or ISO 8601 text), inclusive; default `to` minus 30 days. */
  from?: number | string;
  /** End of the period, epoch ms (or ISO 8601 text), inclusive; default now. */
  to?: number | string;
  /** The audit file(s) of custody-review nodes (live segments): actions a person decided there are shown as such. */
  reviewAuditFile?: string | string[];
  /** Now, epoch ms (default Date.now()): the default `to`. */
  now?: number;
  /** List at most this many changed actions (default {@link SIMULATE_MAX_CHANGES}); the rest are counted in `changesLeftOff`. */
  maxChanges?: number;
}

/** A sum of approvals of one asset. */
export interface ApprovedSum {
  /** Approvals counted. */
  count: number;
  /** Their sum in base units (decimal digits). */
  baseUnits: string;
  /** The sum in whole units of the asset, when its scale is known (from a decision line); else null. */
  decimal: string | null;
}

/** Per asset: what was approved then and what the draft approves. */
export interface AssetSums {
  /** The asset's scale (a power of ten) as a decision line recorded it, or null. */
  scale: number | null;
  /** Approved by the rules then (not expired, and not reported not applied). */
  approvedThen: ApprovedSum;
  /** Approved under the draft (not expired; an action whose call then was reported not applied is not counted when the draft approves it too). */
  approvedDraft: ApprovedSum;
  /** Held by the rules then and approved by a person in custody-review (its call applied or not known to have failed). */
  approvedByPeople: ApprovedSum;
}

/** What a person decided in custody-review about an action the rules held (its audit's `call` and `result` lines). */
export interface PersonDecision {
  decision: 'approve' | 'reject';
  /** Who voted for it. */
  reviewers: string[];
  /** The call's outcome, when its `result` line says: `applied` or `notApplied`. */
  outcome?: string;
}

/** One action whose decision the draft changes. */
export interface SimulatedChange {
  action_id: string;
  client_id: string;
  /** `live` or `dryRun`: the mode of the approver that decided it. */
  mode: string;
  type: string;
  asset: string | null;
  /** Base units (decimal digits). */
  amount: string | null;
  /** Whole units, when the scale is known. */
  amountDecimal: string | null;
  destination: string | null;
  /** The recorded decision time (ISO 8601). */
  decidedAt: string;
  /** What the rules decided then (from the decision line). */
  then: { decision: Decision; rule: { index: number; name: string } | null; reasons: string[]; expired?: boolean };
  /** What the draft decides, and why. */
  draft: DraftDecision;
  /** When a person decided it in custody-review afterwards. */
  person?: PersonDecision;
}

/** What {@link simulate} answers. */
export interface SimulationResult {
  /** The period, epoch ms. */
  from: number;
  to: number;
  /** Decision lines in the period. */
  actions: number;
  /** Of those, decided again (replayable). */
  replayed: number;
  /** Replayed actions by change, `approve→hold`, `hold→approve`, … and `unchanged` (always present). */
  counts: Record<string, number>;
  /** Per asset code (`(none)` for actions without one), the sums approved then and under the draft. */
  assets: Record<string, AssetSums>;
  /** The changed actions, in recorded order (at most `maxChanges`). */
  changes: SimulatedChange[];
  /** Changed actions not listed (past `maxChanges`). */
  changesLeftOff: number;
  /** Replayed actions held by the rules then and decided by a person in custody-review. */
  decidedByPeople: number;
  /** Actions that could not be decided again: how many, and why (a reason -> how many). */
  notReplayable: { count: number; why: Record<string, number> };
  /** What was read: segments and lines of the approver's audit log. */
  read: { segments: number; lines: number };
}

const HISTORY_KINDS = new Set(['decision', 'result', 'resolved']);
const REVIEW_KINDS = new Set(['review']);
/** Velocity entries older than the longest window by this much are forgotten (decision lines are nearly, not strictly, in time order). */
const PRUNE_MARGIN_MS = 3_600_000;

/** A time of the period: epoch ms or ISO 8601 text. @throws {ValidationError} naming `field`. */
function instant(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const t = typeof v === 'number' ? v : typeof v === 'string' ? (/^\d+$/.test(v) ? Number(v) : Date.parse(v)) : NaN;
  if (!Number.isFinite(t)) throw new ValidationError(field, `a time: epoch milliseconds or ISO 8601 text, got ${JSON.stringify(v)}`);
  return t;
}

/**
 * The period of a simulation, checked.
 * @throws {ValidationError} naming `from` or `to` (not a time, or `to` before `from`).
 */
export function simulationPeriod(o: Pick<SimulateOptions, 'from' | 'to' | 'now'>): { from: number; to: number } {
  const to = instant(o.to, 'to') ?? o.now ?? Date.now();
  const from = instant(o.from, 'from') ?? to - SIMULATE_DEFAULT_PERIOD_MS;
  if (to < from) throw new ValidationError('to', `a time at or after from (${new Date(from).toISOString()}), got ${new Date(to).toISOString()}`);
  return { from, to };
}

/** The draft's rules with each condition watched: a condition that fails after reading a fact its line lacks names it in `failed`. */
function watched(draft: CompiledDraft, missing: MissingReads, failed: string[]): CompiledDraft {
  const rules: CompiledRule[] = draft.rules.map((r) => ({
    ...r,
    conditions: r.conditions.map((c) => (f, ctx) => {
      const before = missing.reads.length;
      const v = c(f, ctx);
      if (!v.ok && missing.reads.length > before) failed.push(`rule ${r.index + 1} "${r.name}": ${Array.from(new Set(missing.reads.slice(before))).join(', ')} not recorded on the decision line`);
      return v;
    }),
  }));
  return { ...draft, rules };
}

/** Sums per asset, with the scales seen. */
class Sums {
  readonly #by = new Map<string, { scale: number | null; then: [number, bigint]; draft: [number, bigint]; people: [number, bigint] }>();

  #of(asset: string) {
    let s = this.#by.get(asset);
    if (!s) this.#by.set(asset, (s = { scale: null, then: [0, 0n], draft: [0, 0n], people: [0, 0n] }));
    return s;
  }

  scale(asset: string, scale: number | undefined): void {
    if (scale !== undefined) this.#of(asset).scale = scale;
  }

  add(asset: string, which: 'then' | 'draft' | 'people', amount: bigint, sign = 1): void {
    const s = this.#of(asset)[which];
    s[0] += sign;
    s[1] += sign > 0 ? amount : -amount;
  }

  result(): Record<string, AssetSums> {
    const out: Record<string, AssetSums> = {};
    for (const [asset, s] of this.#by) {
      const sum = ([count, v]: [number, bigint]): ApprovedSum => ({ count, baseUnits: v.toString(), decimal: s.scale !== null ? fromBaseUnits(v, s.scale) : null });
      out[asset] = { scale: s.scale, approvedThen: sum(s.then), approvedDraft: sum(s.draft), approvedByPeople: sum(s.people) };
    }
    return out;
  }
}

/** The person decisions of custody-review audit files, by `client_id`/`action_id`. */
async function personDecisions(files: string[]): Promise<Map<string, PersonDecision>> {
  const out = new Map<string, PersonDecision>();
  for (const file of files) {
    await readHistory({
      file,
      kinds: REVIEW_KINDS,
      onLine: (r) => {
        const key = `${r.client_id}\u0000${r.action_id}`;
        if (r.event === 'call' && (r.decision === 'approve' || r.decision === 'reject')) {
          out.set(key, { decision: r.decision, reviewers: Array.isArray(r.reviewers) ? r.reviewers.map(String) : [] });
        } else if (r.event === 'result' && typeof r.outcome === 'string') {
          const p = out.get(key);
          if (p) p.outcome = r.outcome;
        }
      },
    });
  }
  return out;
}

/** The outcome a `result` or `resolved` line gives the call: true when it was definitely not applied. */
function notApplied(r: Record<string, unknown>): boolean {
  if (r.outcome !== undefined) return r.outcome === 'notApplied';
  return r.ok === false && r.sent === false;
}

/**
 * Decide the recorded actions of a period again under a draft (see the module comment).
 * @param o the draft, the audit file, the period (default the last 30 days), the review audit files.
 * @returns the counts by change, the sums per asset, the changed actions with both decisions and
 *   the draft's reasons, the not-replayable count with why.
 * @throws {ValidationError} naming the field, before anything is read: a bad draft
 *   (`rules[2].maxAmount`, `rules[0].decision`, `rules[1].referencePattern`: compileRules'
 *   errors; `defaultDecision`), a bad period (`from`, `to`: not a time, or `to` before `from`),
 *   `auditFile` missing.
 * @throws what reading the audit files throws but ENOENT (a log that does not exist reads as empty).
 */
export async function simulate(o: SimulateOptions): Promise<SimulationResult> {
  const draft = compileDraft(o);
  const { from, to } = simulationPeriod(o);
  if (typeof o.auditFile !== 'string' || o.auditFile === '') throw new ValidationError('auditFile', "the approver's audit file");
  const maxChanges = o.maxChanges ?? SIMULATE_MAX_CHANGES;
  const reviewFiles = o.reviewAuditFile === undefined ? [] : Array.isArray(o.reviewAuditFile) ? o.reviewAuditFile : [o.reviewAuditFile];
  const people = await personDecisions(reviewFiles);

  const missing = new MissingReads();
  const failed: string[] = [];
  const engine = watched(draft, missing, failed);
  const usesShortCodes = draft.rules.some((r) => r.shortCodes.length > 0);
  const warmFrom = from - draft.longestWindowMs;
  const ledgers = { live: new VelocityLedger(), dryRun: new VelocityLedger() };
  const sums = new Sums();
  const counts: Record<string, number> = { unchanged: 0 };
  const why: Record<string, number> = {};
  const changes: SimulatedChange[] = [];
  /** Approvals of the period then (live), by action, until a result line says whether their call applied; `draft`: the draft approved it too. */
  const approvedThen = new Map<string, { asset: string; amount: bigint; draft: boolean }>();
  let actions = 0;
  let replayed = 0;
  let notReplayable = 0;
  let changesLeftOff = 0;
  let decidedByPeople = 0;
  let sincePrune = 0;
  const unreplayable = (reason: string) => {
    notReplayable++;
    why[reason] = (why[reason] ?? 0) + 1;
  };

  const onDecision = (r: Record<string, unknown>): void => {
    const line = r as unknown as DecisionLineFields & { decision: Decision; mode?: string; rule?: { index: number; name: string } | null; reasons?: unknown; expired?: boolean };
    const at = Date.parse(String(line.decidedAt));
    if (!Number.isFinite(at) || at < warmFrom || at > to) return;
    const inPeriod = at >= from;
    const mode = line.mode === 'dryRun' ? 'dryRun' : 'live';
    const ledger = ledgers[mode];
    const key = `${line.client_id}\u0000${line.action_id}`;
    if (inPeriod) actions++;
    const reasons = Array.isArray(line.reasons) ? line.reasons.map(String) : [];
    if (line.expired === true && !line.rule && line.asset == null && reasons[0]?.startsWith('expired:')) {
      // Expired before any rule ran (while waiting for coordination): no draft approves it either.
      if (inPeriod) {
        replayed++;
        counts.unchanged++;
      }
      return;
    }
    const scale = line.facts?.scale ?? scaleShown(line.amount, line.amountDecimal);
    let d: DraftDecision;
    let facts: ReplayFacts;
    missing.reads.length = 0;
    failed.length = 0;
    try {
      facts = new ReplayFacts(line, missing);
      const ctx = new ReplayContext(line, facts, missing, scale ?? undefined, (asset, windowMs) => windowUsage(ledger, asset, windowMs, at), usesShortCodes);
      d = decideUnderDraft(engine, facts, ctx);
    } catch (e) {
      if (inPeriod) unreplayable(`the decision line cannot be read: ${(e as Error).message}`);
      return;
    }
    if (failed.length > 0) {
      if (inPeriod) unreplayable(failed[0]!);
      return;
    }
    const asset = facts.asset;
    const approves = d.decision === 'approve' && !d.expired && facts.amount !== undefined && asset !== undefined;
    if (approves) ledger.add(asset, facts.amount!, at, key);
    if (++sincePrune >= 4096 && draft.longestWindowMs > 0) {
      sincePrune = 0;
      for (const l of Object.values(ledgers)) l.prune(at, draft.longestWindowMs + PRUNE_MARGIN_MS);
    }
    if (!inPeriod) return;
    replayed++;
    const sumKey = asset ?? '(none)';
    if (asset !== undefined && typeof scale === 'number') sums.scale(asset, scale);
    const amount = facts.amount ?? 0n;
    const draftApproves = d.decision === 'approve' && !d.expired;
    if (draftApproves) sums.add(sumKey, 'draft', amount);
    if (line.decision === 'approve' && line.expired !== true) {
      sums.add(sumKey, 'then', amount);
      // A live call's result line follows: kept until it says whether the call applied.
      if (mode === 'live') approvedThen.set(key, { asset: sumKey, amount, draft: draftApproves });
    }
    const person = line.decision === 'hold' ? people.get(key) : undefined;
    if (person) {
      decidedByPeople++;
      if (person.decision === 'approve' && person.outcome !== 'notApplied') sums.add(sumKey, 'people', amount);
    }
    if (line.decision === d.decision) {
      counts.unchanged++;
      return;
    }
    const change = `${line.decision}→${d.decision}`;
    counts[change] = (counts[change] ?? 0) + 1;
    if (changes.length >= maxChanges) {
      changesLeftOff++;
      return;
    }
    changes.push({
      action_id: line.action_id,
      client_id: line.client_id,
      mode,
      type: facts.type,
      asset: asset ?? null,
      amount: facts.amount !== undefined ? facts.amount.toString() : null,
      amountDecimal: facts.amount !== undefined && typeof scale === 'number' ? fromBaseUnits(facts.amount, scale) : null,
      destination: facts.destination ?? null,
      decidedAt: String(line.decidedAt),
      then: { decision: line.decision, rule: line.rule ?? null, reasons, ...(line.expired ? { expired: true } : {}) },
      draft: d,
      ...(person ? { person } : {}),
    });
  };

  const onOutcome = (r: Record<string, unknown>): void => {
    const key = `${r.client_id}\u0000${r.action_id}`;
    if (!notApplied(r)) {
      if (r.outcome === 'applied' || r.ok === true) approvedThen.delete(key);
      return;
    }
    const mode = r.mode === 'dryRun' ? 'dryRun' : 'live';
    // Not applied: the approver stops counting it, and so does the draft (its call, made at the same time, is taken to fare the same).
    ledgers[mode].remove(key);
    const then = approvedThen.get(key);
    if (then) {
      approvedThen.delete(key);
      sums.add(then.asset, 'then', then.amount, -1);
      if (then.draft) sums.add(then.asset, 'draft', then.amount, -1);
    }
  };

  const read = await readHistory({
    file: o.auditFile,
    kinds: HISTORY_KINDS,
    sinceMs: warmFrom,
    onLine: (r) => (r.kind === 'decision' ? onDecision(r) : onOutcome(r)),
  });
  return { from, to, actions, replayed, counts, assets: sums.result(), changes, changesLeftOff, decidedByPeople, notReplayable: { count: notReplayable, why }, read };
}
