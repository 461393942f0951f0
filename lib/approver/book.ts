/**
 * The approval book: what one audit file holds in memory for the approvers that name it (what
 * each action id led to, the lines to carry into the next segment, the velocity ledgers per
 * mode), rebuilt on start from the audit file (docs/audit.md). The audit file is the only durable
 * store of that state, so the two cannot disagree.
 */
import type { Claim } from '../coordination/coordinator';
import { failureKindOf } from '../api/errors';
import type { AuditLine } from '../audit/line';
import { AuditLog, type AuditHead, type AuditLogOptions, type HeadHook } from '../audit/log';
import type { CallOutcome } from '../actions/outcome';
import { VelocityLedger } from './velocity';
import type { ApproverMode, DecisionRecord } from './types';

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

/**
 * What one audit file holds in memory: the log, what each action id led to, and the velocity
 * windows per mode. One per file in the process, shared by the nodes that name it. Rebuilt on
 * start from what the audit file hands back: the state carried by the live segment's opening
 * line plus the lines after it ({@link AuditLog.open}), so a start reads the state, not the
 * history.
 */
export class ApprovalBook {
  readonly entries = new Map<string, Entry>();
  /** The lines of each entry (decision, result, resolved), to carry them over at a rotation. */
  readonly #lines = new Map<string, AuditLine[]>();
  readonly velocity: Record<ApproverMode, VelocityLedger> = { live: new VelocityLedger(), dryRun: new VelocityLedger() };
  refs = 0;
  /** The longest velocity window of the approvers using this book, ms: approvals older than that are forgotten. */
  keepMs = 0;
  /** The head hooks of the approvers using this book, in the order they acquired it: the first is told ({@link ApprovalBook.tellHead}). */
  readonly headHooks: HeadHook[] = [];
  constructor(readonly log: AuditLog) {
    log.setCarry(() => this.carried(Date.now()));
    log.setOnHead((head) => this.tellHead(head));
  }

  /** Tell the audit log's head to the approver that has used this book longest (one log line per head, however many approvers share the file). */
  tellHead(head: AuditHead): void {
    this.headHooks[0]?.(head);
  }

  /** Calls of `mode` whose outcome is unknown (being resolved). */
  unknownCount(mode: ApproverMode): number {
    let n = 0;
    for (const [key, e] of this.entries) if (e.state === 'unknown' && key.startsWith(`${mode}\u0000`)) n++;
    return n;
  }

  /** Note an audit line of `key` (to carry it over). */
  note(key: string, line: AuditLine): void {
    const l = this.#lines.get(key);
    if (l) l.push(line);
    else this.#lines.set(key, [line]);
  }

  /**
   * Replay audit lines: decisions, their results and resolutions, and the approvals the API
   * accepted (or whose outcome is unknown: counted, to be safe). A decision with no result (the
   * process stopped during the call) is an unknown outcome: resolved by reading, never called again.
   */
  replay(records: AuditLine[]): void {
    for (const r of records) {
      if (r.kind !== 'decision' && r.kind !== 'result' && r.kind !== 'resolved') continue;
      const mode: ApproverMode = r.mode === 'dryRun' ? 'dryRun' : 'live';
      const key = entryKey(mode, String(r.client_id), String(r.action_id));
      if (r.kind === 'decision') {
        const d = r as unknown as DecisionRecord & AuditLine;
        const settled = mode === 'dryRun' || d.decision === 'hold' || d.expired === true;
        this.entries.set(key, { state: settled ? 'done' : 'open', decision: pickDecision(d), callEndedAt: Date.parse(d.decidedAt) });
        this.#lines.set(key, [r]);
        if (d.decision === 'approve' && d.asset && d.amount !== null && !d.expired) {
          const at = Date.parse(d.decidedAt);
          this.velocity.dryRun.add(d.asset, BigInt(d.amount), at, d.action_id);
          if (mode === 'live') this.velocity.live.add(d.asset, BigInt(d.amount), at, d.action_id);
        }
        continue;
      }
      const e = this.entries.get(key);
      if (!e) continue;
      this.note(key, r);
      const outcome = lineOutcome(r);
      if (outcome === 'applied') e.state = 'done';
      else if (outcome === 'unknown') {
        e.state = 'unknown';
        if (typeof r.at === 'string') e.callEndedAt = Date.parse(r.at);
        e.callError = { statusCode: Number(r.statusCode) || 0, code: r.code ?? null, msg: String(r.error ?? '') };
      } else {
        e.state = r.expired === true || (r.kind === 'resolved' && r.status !== 'pending') ? 'done' : 'failed';
        this.velocity.live.remove(String(r.action_id));
        this.velocity.dryRun.remove(String(r.action_id));
      }
    }
    // The process stopped during these calls: their outcome is unknown.
    for (const e of this.entries.values()) if (e.state === 'open') e.state = 'unknown';
  }

  /**
   * The lines the next audit segment carries over (its opening line's state): every action
   * that may still come back or be resolved (a call in flight or unknown, an action not expired
   * yet) and every approval inside the longest velocity window. Entries past all of that are
   * forgotten here too, so memory follows the state, not the history.
   * @param now epoch ms.
   */
  carried(now: number): AuditLine[] {
    const out: AuditLine[] = [];
    for (const [key, e] of this.entries) {
      if (this.#needed(e, now)) {
        out.push(...(this.#lines.get(key) ?? []));
      } else {
        this.entries.delete(key);
        this.#lines.delete(key);
      }
    }
    return out;
  }

  #needed(e: Entry, now: number): boolean {
    if (e.state !== 'done' && e.state !== 'failed') return true;
    const d = e.decision;
    if (!d) return true;
    const decidedAt = Date.parse(d.decidedAt);
    if (d.decision === 'approve' && now - decidedAt <= this.keepMs) return true;
    if (d.expireTime === undefined) return now - decidedAt <= LEGACY_KEEP_MS;
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
  return `${mode}\u0000${clientId}\u0000${actionId}`;
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
    p = AuditLog.open(file, options).then(({ log, records }) => {
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
  try {
    await book.log.close();
  } finally {
    drop();
  }
}
