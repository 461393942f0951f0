/**
 * The approval book: what one audit file holds in memory for the approvers that name it (what
 * each action id led to, compact once settled: decided.ts; the velocity ledgers per mode),
 * rebuilt on start from the audit file (docs/audit.md). The audit file is the only durable
 * store of that state, so the two cannot disagree.
 */
import type { Claim } from '../coordination/coordinator';
import { failureKindOf } from '../api/errors';
import type { AuditLine } from '../audit/line';
import { AuditLog, type AuditHead, type AuditLogOptions, type HeadHook } from '../audit/log';
import { DEFAULT_CHECKPOINT_MIN_BYTES } from '../audit/checkpoint';
import type { CallOutcome } from '../actions/outcome';
import { VelocityLedger, type VelocityEntry } from './velocity';
import type { ApproverMode, DecisionRecord } from './types';
import { Decided, settledRecord, velocityEntries, velocityRecord, type RuleRef, type SettledRecord, type VelocityRecord } from './decided';

/**
 * What an action's id has led to: `deciding` while in hand, `open` decided with the call in
 * flight, `unknown` the call's outcome is unknown (being resolved), `done`, or `failed` (not
 * applied: decide again when it comes back).
 */
export type EntryState = 'deciding' | 'open' | 'unknown' | 'done' | 'failed';

/** What the book knows of one action id. */
export interface Entry {
  state: EntryState;
  decision?: DecisionRecord;
  /** Decided by another instance (coordination): a re-send here is skipped too. */
  elsewhere?: boolean;
  /** `unknown`: when the call ended (epoch ms). */
  callEndedAt?: number;
  /** `unknown`: the claim held for the call (coordination). */
  claim?: Claim;
  /** `unknown`: the action's details (to read its transaction too). */
  details?: Record<string, unknown>;
  /** `unknown`: the resolution under way. */
  resolving?: Promise<Resolution>;
  /** `unknown`: the call's error. */
  callError?: { statusCode: number; code: unknown; msg: string };
}

/** How a resolution ended: definite, or given up (the approver closed). */
export type Resolution = { outcome: 'applied' | 'notApplied'; status: string; why: string } | { outcome: 'unknown' };

/** A decided action whose line carries no `expireTime` (written before it was recorded) is kept this long after its decision, ms: past any action's expiry. */
const LEGACY_KEEP_MS = 8 * 24 * 3600_000;

/** How often a book forgets what no decision needs any more (decided actions past their expiry, approvals past the longest window), ms: also at idle. */
export const BOOK_PRUNE_EVERY_MS = 30_000;

/** Settle the entries in hand once this many more were added since the last time (amortised: each entry is looked at a bounded number of times). */
const SWEEP_AFTER = 64;

/** What {@link ApprovalBook.retained} counts: the sizes of what the book holds in memory. */
export interface BookRetained {
  /** Actions remembered in all (settled and in hand). */
  actions: number;
  /** Of those, in hand (being decided, call in flight, outcome unknown, or settled since the last sweep): full decision records. */
  inHand: number;
  /** Approvals counted for velocity, per mode. */
  approvals: Record<ApproverMode, number>;
}

/**
 * What one audit file holds in memory: the log, what each action id led to, and the velocity
 * windows per mode. One per file in the process, shared by the nodes that name it. Rebuilt on
 * start from what the audit file hands back: the state carried by the live segment's opening
 * line plus the lines after it ({@link AuditLog.open}), so a start reads the state, not the
 * history.
 *
 * Bounded (docs/performance.md, "What is kept in memory"): an action in hand keeps its
 * {@link Entry}; once settled it keeps only a {@link Decided} (decision, rule, time, expiry),
 * until its action can no longer come back (its `expireTime`); approvals are kept for velocity
 * only within the longest velocity window of the approvers using the book, and not at all when
 * none has one. Audit lines are not kept: the checkpoint is made from these.
 */
export class ApprovalBook {
  /** Per action key ({@link entryKey}): an {@link Entry} while in hand, a {@link Decided} once settled. */
  readonly #entries = new Map<string, Entry | Decided>();
  /** Keys whose value is (or was) an {@link Entry}: looked at by the sweep. */
  readonly #inHand = new Set<string>();
  #sweepAt = SWEEP_AFTER;
  /** Interned rule references of the settled decisions. */
  readonly #rules = new Map<string, RuleRef>();
  /** Names of the approvals replayed without their action (`~1`, `~2`, …: no action id has that form). */
  #anonymous = 0;
  readonly #live = new VelocityLedger();
  readonly #dryRun = new VelocityLedger();
  /** Whether the dry run's ledger holds the live approvals replayed too (done when a dry-run approver first reads it). */
  #drySeeded = false;
  /**
   * The velocity ledgers per mode. A dry run counts what was really approved too: the live
   * approvals replayed from the audit file are copied into the dry run's ledger when it is first
   * read (by a dry-run approver), so a book used by live approvers only keeps them once.
   */
  readonly velocity: Record<ApproverMode, VelocityLedger>;
  refs = 0;
  /** The longest velocity window of the approvers using this book, ms: approvals older than that are forgotten (all of them when 0). */
  keepMs = 0;
  /** The head hooks of the approvers using this book, in the order they acquired it: the first is told ({@link ApprovalBook.tellHead}). */
  readonly headHooks: HeadHook[] = [];
  readonly #pruneTimer: NodeJS.Timeout;
  constructor(readonly log: AuditLog) {
    const live = this.#live;
    const dryRun = (): VelocityLedger => this.#seededDryRun();
    this.velocity = {
      live,
      get dryRun() {
        return dryRun();
      },
    };
    log.setCarry(() => this.carried(Date.now()));
    log.setOnHead((head) => this.tellHead(head));
    this.#pruneTimer = setInterval(() => this.prune(Date.now()), BOOK_PRUNE_EVERY_MS);
    this.#pruneTimer.unref();
  }

  #seededDryRun(): VelocityLedger {
    if (!this.#drySeeded) {
      this.#drySeeded = true;
      for (const e of this.#live.entries()) if (!this.#dryRun.has(e.action)) this.#dryRun.add(e.asset, e.amount, e.at, e.action);
    }
    return this.#dryRun;
  }

  /** Tell the audit log's head to the approver that has used this book longest (one log line per head, however many approvers share the file). */
  tellHead(head: AuditHead): void {
    this.headHooks[0]?.(head);
  }

  /**
   * What the book knows of `key`: the entry in hand, or (settled) a new {@link Entry} in state
   * `done` or `failed` whose decision is the compact one's record ({@link Decided.record}).
   * @param type the action type to put in a rebuilt record (the re-delivered action's).
   */
  get(key: string, type = ''): Entry | undefined {
    const e = this.#entries.get(key);
    if (!(e instanceof Decided)) return e;
    const [mode, clientId, actionId] = key.split('\u0000') as [ApproverMode, string, string];
    return { state: e.failed ? 'failed' : 'done', decision: e.record(mode, clientId, actionId, type), ...(e.elsewhere ? { elsewhere: true } : {}) };
  }

  /** Put `entry` in hand for `key` (replacing what was known). */
  set(key: string, entry: Entry): void {
    this.#entries.set(key, entry);
    this.#inHand.add(key);
    if (this.#inHand.size >= this.#sweepAt) this.#sweep();
  }

  /** Forget `key`. */
  delete(key: string): void {
    this.#entries.delete(key);
    this.#inHand.delete(key);
  }

  /** The entries in hand of `mode` whose call's outcome is unknown. */
  unknownEntries(mode: ApproverMode): Array<[string, Entry]> {
    const out: Array<[string, Entry]> = [];
    for (const key of this.#inHand) {
      const e = this.#entries.get(key);
      if (e && !(e instanceof Decided) && e.state === 'unknown' && key.startsWith(`${mode}\u0000`)) out.push([key, e]);
    }
    return out;
  }

  /** Calls of `mode` whose outcome is unknown (being resolved). */
  unknownCount(mode: ApproverMode): number {
    return this.unknownEntries(mode).length;
  }

  /**
   * The actions of `mode` decided (state `done`) at or after `sinceMs` (epoch ms), with their
   * decision records (compact ones rebuilt: {@link Decided.record}): what a write-back after a
   * data loss of the coordination Redis restores.
   */
  decidedSince(mode: ApproverMode, sinceMs: number): Array<{ clientId: string; actionId: string; decision: DecisionRecord }> {
    const out: Array<{ clientId: string; actionId: string; decision: DecisionRecord }> = [];
    for (const [key, e] of this.#entries) {
      const [m, clientId, actionId] = key.split('\u0000') as [ApproverMode, string, string];
      if (m !== mode) continue;
      if (e instanceof Decided) {
        if (!e.failed && e.decidedAtMs >= sinceMs) out.push({ clientId, actionId, decision: e.record(m, clientId, actionId, '') });
      } else if (e.state === 'done' && e.decision && Date.parse(e.decision.decidedAt) >= sinceMs) {
        out.push({ clientId, actionId, decision: e.decision });
      }
    }
    return out;
  }

  /**
   * What the book holds now (sizes, for tests and the performance notes): it settles what is
   * settled first, so `inHand` counts what is really in hand.
   */
  retained(): BookRetained {
    this.#sweep();
    return { actions: this.#entries.size, inHand: this.#inHand.size, approvals: { live: this.#live.count(), dryRun: this.#dryRun.count() } };
  }

  /**
   * Forget what no decision needs any more: settled actions that can no longer come back (past
   * their `expireTime`), and approvals outside the longest velocity window (all of them when no
   * approver of this book has a velocity limit). Runs every {@link BOOK_PRUNE_EVERY_MS} (at idle
   * too) and at each checkpoint.
   * @param now epoch ms.
   */
  prune(now: number): void {
    this.#sweep();
    for (const [key, e] of this.#entries) if (e instanceof Decided && !this.#needed(e, now)) this.#entries.delete(key);
    for (const ledger of [this.#live, this.#dryRun]) ledger.prune(now, this.keepMs);
  }

  /** Stop the prune timer (the book is closed). */
  stop(): void {
    clearInterval(this.#pruneTimer);
  }

  /** Replace the settled entries in hand by their compact form. */
  #sweep(): void {
    for (const key of this.#inHand) {
      const e = this.#entries.get(key);
      if (e === undefined || e instanceof Decided) {
        this.#inHand.delete(key);
      } else if ((e.state === 'done' || e.state === 'failed') && e.decision) {
        this.#entries.set(key, Decided.of(e.decision, this.#rules, e.state === 'failed', e.elsewhere === true));
        this.#inHand.delete(key);
      }
    }
    this.#sweepAt = this.#inHand.size + SWEEP_AFTER;
  }

  /**
   * Replay what the audit file hands back: `settled` records of a checkpoint; and decisions, their
   * results and resolutions, and the approvals the API accepted (or whose outcome is unknown:
   * counted, to be safe). A decision with no result (the process stopped during the call) is an
   * unknown outcome: resolved by reading, never called again.
   */
  replay(records: AuditLine[]): void {
    /** Approvals of `velocity` records, by mode and asset. */
    const bulk = new Map<string, VelocityEntry[]>();
    for (const r of records) {
      if (r.kind === 'settled') {
        this.#replaySettled(r as unknown as SettledRecord);
        continue;
      }
      if (r.kind === 'velocity') {
        // Counted in bulk below (these never leave before they age out: their action cannot come back).
        const v = r as unknown as VelocityRecord;
        const mode: ApproverMode = v.mode === 'dryRun' ? 'dryRun' : 'live';
        const named = velocityEntries(v).map((e) => ({ at: e.at, amount: e.amount, action: `~${++this.#anonymous}` }));
        const key = `${mode}\u0000${v.asset}`;
        bulk.set(key, [...(bulk.get(key) ?? []), ...named]);
        continue;
      }
      if (r.kind !== 'decision' && r.kind !== 'result' && r.kind !== 'resolved') continue;
      const mode: ApproverMode = r.mode === 'dryRun' ? 'dryRun' : 'live';
      const key = entryKey(mode, String(r.client_id), String(r.action_id));
      if (r.kind === 'decision') {
        const d = r as unknown as DecisionRecord & AuditLine;
        const settled = mode === 'dryRun' || d.decision === 'hold' || d.expired === true;
        this.set(key, { state: settled ? 'done' : 'open', decision: pickDecision(d), callEndedAt: Date.parse(d.decidedAt) });
        if (d.decision === 'approve' && d.asset && d.amount !== null && !d.expired) this.#count(mode, d.asset, BigInt(d.amount), Date.parse(d.decidedAt), d.action_id);
        continue;
      }
      const e = this.get(key);
      if (!e) continue;
      if (!this.#inHand.has(key)) this.set(key, e);
      const outcome = lineOutcome(r);
      if (outcome === 'applied') e.state = 'done';
      else if (outcome === 'unknown') {
        e.state = 'unknown';
        if (typeof r.at === 'string') e.callEndedAt = Date.parse(r.at);
        e.callError = { statusCode: Number(r.statusCode) || 0, code: r.code ?? null, msg: String(r.error ?? '') };
      } else {
        e.state = r.expired === true || (r.kind === 'resolved' && r.status !== 'pending') ? 'done' : 'failed';
        this.#live.remove(String(r.action_id));
        this.#dryRun.remove(String(r.action_id));
      }
    }
    for (const [key, list] of bulk) {
      const [mode, asset] = key.split('\u0000') as [ApproverMode, string];
      const ledger = mode === 'live' ? this.#live : this.#dryRun;
      ledger.reset(asset, [...ledger.entriesOf(asset), ...list]);
    }
    // The process stopped during these calls: their outcome is unknown.
    for (const key of this.#inHand) {
      const e = this.#entries.get(key);
      if (e && !(e instanceof Decided) && e.state === 'open') e.state = 'unknown';
    }
    this.#sweep();
  }

  #replaySettled(r: SettledRecord): void {
    const mode: ApproverMode = r.mode === 'dryRun' ? 'dryRun' : 'live';
    const key = entryKey(mode, String(r.client_id), String(r.action_id));
    this.#entries.set(key, Decided.of(r, this.#rules, r.failed === true, r.elsewhere === true));
    if (r.asset && r.amount !== undefined) this.#count(mode, r.asset, BigInt(r.amount), r.countedAt ?? Date.parse(r.decidedAt), r.action_id);
  }

  /** Count a replayed approval in its mode's ledger (a live one reaches the dry run's when that is first read: {@link ApprovalBook.velocity}). */
  #count(mode: ApproverMode, asset: string, amount: bigint, at: number, action: string): void {
    (mode === 'live' ? this.#live : this.#dryRun).add(asset, amount, at, action);
  }

  /**
   * The records the next audit segment carries over (its opening line's state, docs/audit.md):
   * one `settled` record per settled action that may still come back, with its approval when it
   * still counts for velocity; the decision line (and the unknown result) of each call in flight
   * or unknown. What is past all of that is forgotten here too, so memory follows the state, not
   * the history.
   * @param now epoch ms.
   */
  carried(now: number): Record<string, unknown>[] {
    this.prune(now);
    const out: Record<string, unknown>[] = [];
    /** Approvals carried with their action (per mode), so the velocity records leave them out. */
    const withAction: Record<ApproverMode, Set<string>> = { live: new Set(), dryRun: new Set() };
    for (const [key, e] of this.#entries) {
      const [mode, clientId, actionId] = key.split('\u0000') as [ApproverMode, string, string];
      if (e instanceof Decided) {
        const ledger = mode === 'live' ? this.#live : this.#dryRun;
        const counted = e.decision === 'approve' && !e.expired ? ledger.entry(actionId) : undefined;
        const asset = counted ? ledger.assetOf(actionId) : undefined;
        if (counted && asset) withAction[mode].add(actionId);
        out.push({ ...settledRecord(mode, clientId, actionId, e, counted && asset ? { asset, amount: counted.amount, at: counted.at } : undefined) });
      } else if (e.decision && (e.state === 'open' || e.state === 'unknown')) {
        out.push({ kind: 'decision', ...e.decision });
        if (e.state === 'unknown') {
          const c = e.callError ?? { statusCode: 0, code: null, msg: '' };
          out.push({ kind: 'result', mode, action_id: actionId, client_id: clientId, ok: false, outcome: 'unknown', statusCode: c.statusCode, code: c.code, error: c.msg, at: new Date(e.callEndedAt ?? now).toISOString() });
        }
        if (e.decision.decision === 'approve') withAction[mode].add(actionId);
      }
    }
    // The approvals whose action can no longer come back, still inside the window: amounts and times only.
    const live = this.#live;
    for (const mode of ['live', 'dryRun'] as const) {
      const ledger = mode === 'live' ? this.#live : this.#dryRun;
      for (const asset of ledger.assets()) {
        // A live approval is counted in the dry run's ledger too (a replay adds it to both): carried once, as live.
        const rest = ledger.entriesOf(asset).filter((v) => !withAction[mode].has(v.action) && !(mode === 'dryRun' && (live.has(v.action) || withAction.live.has(v.action))));
        if (rest.length > 0) out.push({ ...velocityRecord(mode, asset, rest) });
      }
    }
    return out;
  }

  #needed(d: Decided, now: number): boolean {
    const decidedAt = d.decidedAtMs;
    if (d.expireTime < 0) return now - decidedAt <= LEGACY_KEEP_MS;
    return d.expireTime === 0 ? d.decision === 'hold' : d.expireTime * 1000 > now;
  }
}

/** What an audit `result` or `resolved` line says of the call: written lines carry `outcome`; older result lines are read by their `ok`, `sent` and failure kind. */
function lineOutcome(r: AuditLine): CallOutcome {
  if (r.outcome === 'applied' || r.outcome === 'notApplied' || r.outcome === 'unknown') return r.outcome;
  if (r.ok === true) return 'applied';
  if (r.sent === false) return 'notApplied';
  return failureKindOf(Number(r.statusCode) || 0, r.code) === 'outcomeUnknown' ? 'unknown' : 'notApplied';
}

/** The key of an action id in the book: the mode, the core client, the action. */
export function entryKey(mode: ApproverMode, clientId: string, actionId: string): string {
  // One flat string (a template literal would make a concatenation that keeps its parts as well).
  return [mode, clientId, actionId].join('\u0000');
}

function pickDecision(d: DecisionRecord): DecisionRecord {
  const { decision, rule, reasons, action_id, client_id, type, asset, amount, amountDecimal, destination, velocity, mode, decidedAt, expireTime, expired } = d;
  return { decision, rule, reasons, action_id, client_id, type, asset, amount, amountDecimal, destination, velocity, mode, decidedAt, ...(expireTime !== undefined ? { expireTime } : {}), ...(expired ? { expired } : {}) };
}

/** Open books by audit file path (resolved), shared in the process. */
const books = new Map<string, Promise<ApprovalBook>>();

/**
 * The book of `file` (opened, verified and replayed by the first approver that names it in this process).
 * @param options how the audit log rotates and reports its head (taken by the first approver that opens the file; its `onHead` is set by the book).
 * @param onHead told the audit log's heads while this approver is the book's longest user ({@link ApprovalBook.tellHead}); let go with {@link releaseBook}.
 * @throws what {@link AuditLog.open} throws (rejects).
 */
export async function acquireBook(file: string, options: Omit<AuditLogOptions, 'onHead'> = {}, onHead?: HeadHook): Promise<ApprovalBook> {
  let p = books.get(file);
  if (!p) {
    // Checkpoint lines bound what a start after a crash reads (docs/audit.md).
    p = AuditLog.open(file, { checkpointMinBytes: DEFAULT_CHECKPOINT_MIN_BYTES, ...options }).then(({ log, records }) => {
      const book = new ApprovalBook(log);
      book.replay(records);
      return book;
    });
    books.set(file, p);
    p.catch(() => books.delete(file));
  }
  const book = await p;
  book.refs++;
  if (onHead) book.headHooks.push(onHead);
  return book;
}

/**
 * Let go of `file`'s book: the last approver to let go closes its audit file (its head hook is
 * told the head at close, then dropped).
 * @param onHead the hook given to {@link acquireBook}.
 */
export async function releaseBook(file: string, book: ApprovalBook, onHead?: HeadHook): Promise<void> {
  const drop = () => {
    const i = onHead ? book.headHooks.indexOf(onHead) : -1;
    if (i >= 0) book.headHooks.splice(i, 1);
  };
  if (--book.refs > 0) return drop();
  books.delete(file);
  book.stop();
  try {
    await book.log.close();
  } finally {
    drop();
  }
}
