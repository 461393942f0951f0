/**
 * The decision engine of the `custody-approver` node, with no Node-RED import. Each pending
 * action of a core client goes once through one pipeline:
 *
 *   read -> decide -> claim -> reserve -> audit -> call -> resolve
 *
 * - **read**: the action's details (GET /coreclient/{client_id}/action/{action_id}, spec
 *   section 4) when the msg lacks them, or when it may have been decided before (a takeover);
 * - **decide**: the ordered rules (rules.ts, pure: their context is fetched first);
 * - **claim**: {@link DecisionClaims} (claims.ts): granted at once on one instance, a Redis claim
 *   with a lease across several;
 * - **reserve**: {@link VelocityWindows} (velocity.ts; shared through Redis in
 *   lib/coordination/velocity-windows.ts): an approval is counted before it is called, and only
 *   a definite "not applied" frees it;
 * - **audit**: the decision on disk (audit.ts, hash-chained) before anything is sent;
 * - **call**: approve (PUT) or reject (DELETE), then a `result` line;
 * - **resolve** (outcome.ts): a call whose outcome is unknown (an ApiError whose `failure` is
 *   `outcomeUnknown`: a timeout, a reset, a 5xx, the client closed mid-call) is never counted as
 *   failed: its `result` line says `outcome: "unknown"`, the action is read until the answer is
 *   definite, at once, then on a timer, and after a restart, and a `resolved` line records it.
 *
 * Source: spec section 2 "Action", section 3 (action statuses pending, expired, approved,
 * rejected), section 4 `GET`/`PUT`/`DELETE /coreclient/{client_id}/action/{action_id}`, section 6
 * (the core client feed re-sends every pending action after a reconnect: decide each action id
 * once). The audit lines are described in docs/audit.md.
 */
import crypto from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { CLOSE_GRACE_MS, type CustodyClient } from '../client/client';
import { ApiError, ValidationError, failureKindOf, OUTCOME_UNKNOWN_CODE, type FailureKind } from '../api/errors';
import { abortableSleep } from '../client/transport';
import { KeyedLock } from '../support/keyed-lock';
import { fromBaseUnits } from '../api/amounts';
import { type Action } from '../api/v1/core-client';
import { AuditLog, type AuditLine, type AuditLogOptions } from './audit';
import { LocalVelocityWindows, VelocityLedger, type VelocityEntry, type VelocityWindows, type WindowView } from './velocity';
import { LocalClaims, RedisClaims, type DecisionClaims } from './claims';
import { readCallOutcome, type CallOutcome } from './outcome';
import type { Claim, Coordinator } from '../coordination/coordinator';
import { CoordinationUnavailableError } from '../coordination/coordinator';
import { RedisVelocityWindows } from '../coordination/velocity-windows';
import { evaluateRules, type ActionFacts, type CompiledRule, type Decision, type DefaultDecision, type EvaluationContext, type VelocityReport } from './rules';
import { assetScale } from '../client/v1/assets';
import { listWhitelist, getWallet } from '../client/v1/fund';
import { getAction, approveAction, rejectAction } from '../client/v1/core-client';


/** `live`: call the API; `dryRun`: decide, audit and send the msg, call nothing. */
export type ApproverMode = 'live' | 'dryRun';

/**
 * Which output a decision goes to: approved (1), rejected (2), held (3); or `skipped`: with
 * coordination, another instance decided the action (no msg is sent for it here).
 */
export type ApproverOutput = 'approved' | 'rejected' | 'held' | 'skipped';

/**
 * The decision as `msg.decision` carries it and the audit file records it. Amounts: `amount`
 * in base units (decimal digits as text, exact), `amountDecimal` in whole units of the asset.
 */
export interface DecisionRecord {
  decision: Decision;
  /** The rule that matched (0-based index and name), or null when the default decision applied. */
  rule: { index: number; name: string } | null;
  /** Why, in words: the matched rule's conditions, after what kept each earlier rule from matching. */
  reasons: string[];
  action_id: string;
  client_id: string;
  /** Action type, e.g. `ApproveTransfer`. */
  type: string;
  asset: string | null;
  /** Base units, as decimal digits; null when the action has no amount. */
  amount: string | null;
  /** Whole units of the asset, e.g. `"0.015"`; null when the scale or amount is unknown. */
  amountDecimal: string | null;
  destination: string | null;
  velocity: VelocityReport | null;
  mode: ApproverMode;
  /** ISO 8601 time of the decision. */
  decidedAt: string;
  /** The action's `expireTime`, epoch seconds (0: none); kept so a restart knows which decided actions may still be re-sent. */
  expireTime?: number;
  /** True when the action had been decided before (a feed re-send, a restart): nothing was sent again. */
  redelivered?: boolean;
  /** True when the action had expired before it could be approved: nothing was sent. */
  expired?: boolean;
  /** With coordination: the instance that decided it, when that was another one (the outcome is then `skipped`). */
  decidedBy?: string;
  /**
   * What the approve or reject call led to (absent when nothing was called: hold, dry run,
   * expired): `applied`, `notApplied`, or `unknown` (still being resolved). Only on
   * `msg.decision`; the audit file records it in the `result` and `resolved` lines.
   */
  outcome?: CallOutcome;
}

/** The outcome of {@link Approver.decide}: the decision, its output, the action and the call's answer or error. */
export interface ApproverOutcome {
  decision: DecisionRecord;
  output: ApproverOutput;
  /** The action with its details as read (or as given). */
  action: Record<string, unknown>;
  /** HTTP status of the approve/reject call; absent when nothing was called or no answer came. */
  statusCode?: number;
  /**
   * Why the decision did not take effect, when it did not (already audited): the call's ApiError
   * (refused or not sent), an {@link ActionNotAppliedError} (resolved: not applied), or an
   * {@link ActionOutcomeUnknownError} (still unknown after {@link ApproverOptions.reportUnknownAfterMs}).
   */
  error?: Error;
}

/** Options of an {@link Approver}. */
export interface ApproverOptions {
  /** The compiled rules, in order (rules.ts `compileRules`). */
  rules: CompiledRule[];
  /** What applies when no rule matches: hold (default) or reject. */
  defaultDecision?: DefaultDecision;
  mode?: ApproverMode;
  /** The audit file (absolute path): the live segment; rotated segments sit beside it (audit.ts). */
  auditFile: string;
  /** How the audit file rotates (audit.ts; defaults: 64 MiB segments, a new one each UTC day). Taken by the first approver that opens the file in this process. */
  auditOptions?: Pick<AuditLogOptions, 'maxSegmentBytes' | 'rotateDaily' | 'closeCheckpointBytes'>;
  /** The signed client; called per action (the config node builds it once). @throws what building the client throws. */
  client: () => Promise<CustodyClient>;
  /** How long a fund's whitelist and a short code's wallet id are kept, in ms (default 60,000). */
  cacheMs?: number;
  /** Written in each audit line as `approver` (the node id). */
  approverId?: string;
  /** The clock, epoch ms (default Date.now). */
  now?: () => number;
  /**
   * Coordination with other instances through Redis (lib/coordination): claims and velocity
   * windows shared, each audit line copied to the shared stream. Absent: this approver decides alone.
   */
  coordinator?: Coordinator;
  /** The scope of the shared velocity windows (default `approverId`, else the audit file's name): the same approver on every instance. */
  velocityScope?: string;
  /** Called while an action waits for Redis (unavailable, or recovering from a data loss), with why; and with '' once it decides again. */
  onCoordinationWait?: (reason: string) => void;
  /**
   * How long {@link Approver.decide} waits for a call whose outcome is unknown to be resolved
   * before it returns it as still unknown (ms, default {@link REPORT_UNKNOWN_AFTER_MS}). Resolving
   * goes on after that, in the background, until the answer is definite.
   */
  reportUnknownAfterMs?: number;
  /**
   * How long after a call ended an action still read as `pending` counts as definitely not
   * applied (ms, default {@link PENDING_SETTLES_AFTER_MS}): until then a pending read may be the
   * call still being processed.
   */
  pendingSettlesAfterMs?: number;
  /** Called when the number of calls with an unknown outcome changes (this approver's mode), and with each resolution. */
  onUnknownChange?: (unknown: number, resolved?: { action_id: string; client_id: string; outcome: 'applied' | 'notApplied'; why: string }) => void;
}

/** Default {@link ApproverOptions.reportUnknownAfterMs}: 2 minutes. */
export const REPORT_UNKNOWN_AFTER_MS = 2 * 60_000;

/** Default {@link ApproverOptions.pendingSettlesAfterMs}: 60 s (twice the client's default request timeout). */
export const PENDING_SETTLES_AFTER_MS = 60_000;


/** How long past `CLOSE_GRACE_MS` {@link Approver.close} waits for the calls in flight, ms: the client cuts its calls at `CLOSE_GRACE_MS`, and their result lines are written within this margin (12 s in all, within Node-RED's 15 s node close timeout). */
const CLOSE_MARGIN_MS = 2000;

/** Delays between two reads of an action whose call's outcome is unknown, ms: the first read at once, then growing to the last. */
const RESOLVE_DELAYS_MS = [0, 500, 1000, 2000, 5000, 10_000, 30_000];

/**
 * A call that decided an action did not take effect, as found by reading the action after its
 * outcome was unknown (the action expired, or was decided otherwise, or stayed pending). `code`
 * is `ENOTAPPLIED`; `cause` `{outcome: 'notApplied', status, why}`.
 */
export class ActionNotAppliedError extends Error {
  override name = 'ActionNotAppliedError';
  /** Always `ENOTAPPLIED`. */
  readonly code = 'ENOTAPPLIED';
  constructor(message: string, override readonly cause: { outcome: 'notApplied'; status: string; why: string }) {
    super(message);
  }
}

/**
 * A call that decided an action whose outcome is still unknown after
 * {@link ApproverOptions.reportUnknownAfterMs}: it may have taken effect; the approver keeps
 * resolving it and counts it on the safe side (an approval stays in its velocity windows).
 * `code` is `EOUTCOMEUNKNOWN`; `cause` `{outcomeUnknown: true, statusCode, code, msg}` of the call.
 */
export class ActionOutcomeUnknownError extends Error {
  override name = 'ActionOutcomeUnknownError';
  /** Always `EOUTCOMEUNKNOWN`. */
  readonly code = OUTCOME_UNKNOWN_CODE;
  /** Always true. */
  readonly outcomeUnknown = true;
  constructor(message: string, override readonly cause: { outcomeUnknown: true; statusCode: number; code: unknown; msg: string }) {
    super(message);
  }
}

/** What the coordination Redis keeps per decided action (JSON): the decision, its output and who decided. */
interface DecidedRecord {
  decision: DecisionRecord;
  output: ApproverOutput;
  instance: string;
}

/** Returned by a decision that must start again from the claim (the claim was lost, or Redis went away before the call). */
const AGAIN = Symbol('again');

/**
 * What an action's id has led to: `deciding` while in hand, `open` decided with the call in
 * flight, `unknown` the call's outcome is unknown (being resolved), `done`, or `failed` (not
 * applied: decide again when it comes back).
 */
type EntryState = 'deciding' | 'open' | 'unknown' | 'done' | 'failed';

interface Entry {
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
type Resolution = { outcome: 'applied' | 'notApplied'; status: string; why: string } | { outcome: 'unknown' };

/** A decided action whose line carries no `expireTime` (written before it was recorded) is kept this long after its decision, ms: past any action's expiry. */
const LEGACY_KEEP_MS = 8 * 24 * 3600_000;

/**
 * What one audit file holds in memory: the log, what each action id led to, and the velocity
 * windows per mode. One per file in the process, shared by the nodes that name it. Rebuilt on
 * start from what the audit file hands back: the state carried by the live segment's opening
 * line plus the lines after it (audit.ts), so a start reads the state, not the history.
 */
class ApprovalBook {
  readonly entries = new Map<string, Entry>();
  /** The lines of each entry (decision, result, resolved), to carry them over at a rotation. */
  readonly #lines = new Map<string, AuditLine[]>();
  readonly velocity: Record<ApproverMode, VelocityLedger> = { live: new VelocityLedger(), dryRun: new VelocityLedger() };
  refs = 0;
  /** The longest velocity window of the approvers using this book, ms: approvals older than that are forgotten. */
  keepMs = 0;
  constructor(readonly log: AuditLog) {
    log.setCarry(() => this.carried(Date.now()));
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

function entryKey(mode: ApproverMode, clientId: string, actionId: string): string {
  return `${mode}\u0000${clientId}\u0000${actionId}`;
}

function pickDecision(d: DecisionRecord): DecisionRecord {
  const { decision, rule, reasons, action_id, client_id, type, asset, amount, amountDecimal, destination, velocity, mode, decidedAt, expireTime, expired } = d;
  return { decision, rule, reasons, action_id, client_id, type, asset, amount, amountDecimal, destination, velocity, mode, decidedAt, ...(expireTime !== undefined ? { expireTime } : {}), ...(expired ? { expired } : {}) };
}

/** Open books by audit file path (resolved), shared in the process. */
const books = new Map<string, Promise<ApprovalBook>>();

async function acquireBook(file: string, options: AuditLogOptions = {}): Promise<ApprovalBook> {
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
  return book;
}

async function releaseBook(file: string, book: ApprovalBook): Promise<void> {
  if (--book.refs > 0) return;
  books.delete(file);
  await book.log.close();
}

const OUTPUT: Record<Decision, ApproverOutput> = { approve: 'approved', reject: 'rejected', hold: 'held' };

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** An integer amount in base units from a JSON number or digit text; undefined otherwise. */
function baseUnits(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

/**
 * The facts the rules read, from an action and its details (spec section 2 detail fields;
 * OpenAPI ActionDetailApproveTransfer names the destination `recipientID`; a wallet connection
 * request's details carry `wallet.walletID`, NOTES.md).
 */
export function actionFacts(action: Record<string, unknown>, clientId: string): ActionFacts {
  const details = action.details && typeof action.details === 'object' ? (action.details as Record<string, unknown>) : undefined;
  const d = details ?? {};
  const wallet = d.wallet && typeof d.wallet === 'object' ? (d.wallet as Record<string, unknown>) : {};
  return {
    action_id: String(action.action_id ?? action.id),
    client_id: clientId,
    type: str(action.type) ?? '',
    expireTime: Number(action.expireTime) || 0,
    asset: str(d.asset) ?? str(wallet.asset),
    amount: baseUnits(d.amount),
    destination: str(d.recipientAddress) ?? str(d.recipientID),
    companyID: str(d.companyID),
    fundID: str(d.fundID),
    walletID: str(d.walletID) ?? str(d.wallet_id) ?? str(wallet.walletID),
    reference: typeof d.reference === 'string' ? d.reference : undefined,
    benefitOf: typeof d.benefitOf === 'string' ? d.benefitOf : undefined,
    expires: Number(d.expires) || undefined,
    hasDetails: details !== undefined,
  };
}

/** A value read through the API and kept for a while; a failed read is not kept. */
interface Cached<T> {
  until: number;
  value: Promise<T>;
}

/** What the approver knows of an action before its decision: the action as read, and why it is decided (again). */
interface ReadAction {
  action: Record<string, unknown>;
  reasons: string[];
}

/**
 * Decides the actions of core clients by rules, once each, with an audit trail. Open it with
 * {@link Approver.open}; close it with {@link Approver.close}.
 */
export class Approver {
  readonly mode: ApproverMode;
  readonly auditFile: string;
  readonly #opts: Required<Pick<ApproverOptions, 'defaultDecision' | 'mode' | 'cacheMs' | 'now' | 'reportUnknownAfterMs' | 'pendingSettlesAfterMs'>> & ApproverOptions;
  readonly #book: ApprovalBook;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #whitelists = new Map<string, Cached<Array<{ asset: string; address: string }>>>();
  readonly #shortCodes = new Map<string, Cached<string>>();
  readonly #needsScale: boolean;
  readonly #needsWhitelist: boolean;
  readonly #shortCodeList: string[];
  readonly #longestWindowMs: number;
  readonly #claims: DecisionClaims;
  readonly #windows: VelocityWindows;
  /** One read-decide-reserve per asset at a time in this process: concurrent decisions would otherwise invalidate each other's reads and retry. */
  readonly #windowLocks = new KeyedLock();
  /** Aborted by {@link close}: waits (claims, resolution timers, retries) end. */
  readonly #closing = new AbortController();
  /** Resolutions running in the background. */
  readonly #resolutions = new Set<Promise<unknown>>();
  #unregisterLoss: (() => void) | undefined;
  #closed = false;

  private constructor(opts: ApproverOptions, book: ApprovalBook) {
    this.mode = opts.mode ?? 'live';
    this.auditFile = opts.auditFile;
    this.#opts = { defaultDecision: 'hold', mode: this.mode, cacheMs: 60_000, now: Date.now, reportUnknownAfterMs: REPORT_UNKNOWN_AFTER_MS, pendingSettlesAfterMs: PENDING_SETTLES_AFTER_MS, ...opts };
    this.#book = book;
    this.#needsScale = opts.rules.some((r) => r.needsScale);
    this.#needsWhitelist = opts.rules.some((r) => r.needsWhitelist);
    this.#shortCodeList = Array.from(new Set(opts.rules.flatMap((r) => r.shortCodes)));
    this.#longestWindowMs = Math.max(0, ...opts.rules.map((r) => r.velocityWindowMs));
    setMaxListeners(0, this.#closing.signal);
    const scope = opts.velocityScope || opts.approverId || opts.auditFile.split(/[\\/]/).pop() || 'approver';
    if (opts.coordinator) {
      this.#claims = new RedisClaims(opts.coordinator, this.#opts.now, this.#closing.signal);
      this.#windows = new RedisVelocityWindows(opts.coordinator, scope, this.mode, this.#longestWindowMs);
    } else {
      this.#claims = new LocalClaims();
      // The book's longest window, read at each reserve: approvers sharing one audit file never prune what another counts.
      this.#windows = new LocalVelocityWindows(() => Math.max(this.#longestWindowMs, book.keepMs), book.velocity[this.mode]);
    }
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
    const book = await acquireBook(opts.auditFile, opts.auditOptions);
    const approver = new Approver(opts, book);
    book.keepMs = Math.max(book.keepMs, approver.#longestWindowMs);
    approver.#unregisterLoss = approver.#claims.onDataLoss(() => approver.#writeBack());
    for (const [key, e] of book.entries) {
      if (e.state === 'unknown' && key.startsWith(`${approver.mode}\u0000`)) approver.#startResolving(key, e);
    }
    return approver;
  }

  /** Calls of this approver's mode whose outcome is unknown (being resolved). */
  get unknown(): number {
    let n = 0;
    for (const [key, e] of this.#book.entries) if (e.state === 'unknown' && key.startsWith(`${this.mode}\u0000`)) n++;
    return n;
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
    if (this.#closed) throw new Error('approver: closed');
    const clientId = str(input.client_id) ?? str(input.coreClientID);
    const actionId = str(input.action_id) ?? str(input.id);
    if (!clientId) throw new ValidationError('client_id', 'the core client id (msg.payload.client_id, or set in the node)');
    if (!actionId) throw new ValidationError('action_id', 'the action id (msg.payload.action_id or msg.payload.id)');
    const key = entryKey(this.mode, clientId, actionId);
    const action = { ...input, client_id: clientId, action_id: actionId };
    let known = this.#book.entries.get(key);
    if (known?.state === 'unknown') {
      const waited = await this.#awaitResolution(key, known, action, true);
      if (waited) return waited;
      known = this.#book.entries.get(key);
    }
    if (known && known.state !== 'failed') {
      const earlier = known.decision;
      if (!earlier) {
        // Being decided right now (the same action twice in one burst).
        const d = this.#bare(action, clientId, actionId, 'hold', ['redelivered while its first delivery is being decided: decided once, there']);
        return { decision: { ...d, redelivered: true }, output: 'held', action };
      }
      if (known.elsewhere) return { decision: { ...earlier, redelivered: true }, output: 'skipped', action };
      return { decision: { ...earlier, redelivered: true }, output: earlier.expired ? 'held' : OUTPUT[earlier.decision], action };
    }
    const entry: Entry = { state: 'deciding' };
    this.#book.entries.set(key, entry);
    const work = this.#pipeline(input, action, clientId, actionId, key, entry, known);
    this.#inFlight.add(work);
    try {
      return await work;
    } catch (e) {
      // Failed before the decision was on disk (client, audit write): as if it never came.
      if (entry.state === 'deciding' && this.#book.entries.get(key) === entry) {
        if (known) this.#book.entries.set(key, known);
        else this.#book.entries.delete(key);
      }
      throw e;
    } finally {
      this.#inFlight.delete(work);
    }
  }

  /** Claim, then decide; again from the claim when it was lost or Redis went away before the call. */
  async #pipeline(input: Record<string, unknown>, action: Record<string, unknown>, clientId: string, actionId: string, key: string, entry: Entry, earlier: Entry | undefined): Promise<ApproverOutcome> {
    const onWait = (reason: string) => this.#opts.onCoordinationWait?.(reason);
    const claimId = crypto.randomUUID();
    for (;;) {
      const acquired = await this.#claims.acquire(`${this.mode}:${clientId}:${actionId}`, claimId, Number(input.expireTime) || 0, this.#closing.signal, onWait);
      if (acquired.kind === 'decided') return this.#decidedElsewhere(acquired.record, entry, action);
      if (acquired.kind === 'expired') {
        // Expired while it waited: nothing can approve it any more.
        const d = this.#bare(action, clientId, actionId, 'hold', [`expired: the action expired at ${new Date((Number(input.expireTime) || 0) * 1000).toISOString()} while it waited for coordination (${acquired.contested ? 'claimed by another instance' : 'Redis unavailable'}): not approved`]);
        d.expired = true;
        entry.decision = d;
        await this.#append(key, { kind: 'decision', approver: this.#opts.approverId, ...d });
        entry.state = 'done';
        return { decision: d, output: acquired.contested ? 'skipped' : 'held', action };
      }
      const outcome = await this.#decide(input, clientId, actionId, key, entry, earlier, acquired.claim, acquired.mustRead);
      if (outcome !== AGAIN) return outcome;
      await abortableSleep(200, this.#closing.signal);
      if (this.#closed) throw new Error('approver: closed');
    }
  }

  /**
   * Read, decide, reserve, audit, call and resolve one claimed action.
   * @param claim the claim held (coordination), else undefined.
   * @param mustRead read the action first even when the msg has its details (it may have been decided before).
   * @returns the outcome, or {@link AGAIN} when the claim was lost or Redis went away before the call (nothing called).
   */
  async #decide(input: Record<string, unknown>, clientId: string, actionId: string, key: string, entry: Entry, earlier: Entry | undefined, claim: Claim | undefined, mustRead: boolean): Promise<ApproverOutcome | typeof AGAIN> {
    const client = await this.#opts.client();
    // read
    const read = await this.#read(client, input, clientId, actionId, earlier, mustRead);
    if (read === AGAIN) return AGAIN;
    if ('decision' in read) {
      if (!this.#claims.shared) {
        this.#book.entries.delete(key);
        return read;
      }
      entry.decision = read.decision;
      entry.state = 'done';
      entry.elsewhere = true;
      return this.#final(claim, read);
    }
    const { action, reasons } = read;
    // decide (pure rules, their context fetched first) and reserve
    const facts = actionFacts(action, clientId);
    const ctx = await this.#context(client, facts);
    const decision = await this.#decideAndReserve(facts, ctx, reasons, clientId, actionId);
    if (decision === AGAIN) return AGAIN;
    // audit
    entry.decision = decision;
    await this.#append(key, { kind: 'decision', approver: this.#opts.approverId, ...decision, ...(claim ? { fence: claim.fence, instance: this.#claims.instance } : {}) });
    const nothingToCall = this.mode === 'dryRun' || decision.decision === 'hold' || decision.expired === true;
    entry.state = nothingToCall ? 'done' : 'open';
    if (this.#book.keepMs > 0) this.#book.velocity[this.mode].prune(ctx.now, this.#book.keepMs);
    const output: ApproverOutput = decision.expired ? 'held' : OUTPUT[decision.decision];
    if (nothingToCall) return this.#final(claim, { decision, output, action });
    if (decision.decision === 'approve' && this.#markExpired(decision, facts)) {
      // Checked again right before the call: the audit write may have taken a while.
      await this.#unreserve(decision);
      entry.state = 'done';
      await this.#appendResult(key, decision, { ok: false, outcome: 'notApplied', sent: false, expired: true });
      return this.#final(claim, { decision, output: 'held', action });
    }
    // The claim must still be ours right before the call (fencing): else nothing is called.
    const held = await this.#claims.stillHeld(claim);
    if (held !== 'held') {
      await this.#unreserve(decision);
      entry.state = 'failed';
      await this.#appendResult(key, decision, { ok: false, outcome: 'notApplied', sent: false, claim: held === 'decided' ? 'decided elsewhere' : 'lost or Redis unavailable' });
      return AGAIN;
    }
    // call
    const call = decision.decision === 'approve' ? approveAction : rejectAction;
    let failure: FailureKind;
    let err: Error & { statusCode?: number; code?: unknown };
    try {
      const res = await call(client, { client_id: clientId, action_id: actionId });
      entry.state = 'done';
      await this.#appendResult(key, decision, { ok: true, outcome: 'applied', statusCode: res.statusCode });
      return this.#final(claim, { decision: { ...decision, outcome: 'applied' }, output, action, statusCode: res.statusCode });
    } catch (e) {
      err = e as Error & { statusCode?: number; code?: unknown };
      // Anything but a definite "refused" or "not sent" may have had its effect.
      failure = e instanceof ApiError ? e.failure : 'outcomeUnknown';
    }
    const statusCode = err.statusCode ?? 0;
    if (failure !== 'outcomeUnknown') {
      entry.state = 'failed';
      await this.#unreserve(decision);
      await this.#claims.release(claim);
      await this.#appendResult(key, decision, { ok: false, outcome: 'notApplied', failure, statusCode, code: err.code ?? null, error: err.message }).catch(() => undefined);
      return { decision: { ...decision, outcome: 'notApplied' }, output, action, statusCode: statusCode || undefined, error: err };
    }
    // resolve: counted (the safe side) until reading the action says what the call did.
    entry.state = 'unknown';
    entry.callEndedAt = this.#opts.now();
    entry.claim = claim;
    entry.details = action.details && typeof action.details === 'object' ? (action.details as Record<string, unknown>) : undefined;
    entry.callError = { statusCode, code: err.code ?? null, msg: err.message };
    await this.#appendResult(key, decision, { ok: false, outcome: 'unknown', statusCode, code: err.code ?? null, error: err.message }).catch(() => undefined);
    this.#opts.onUnknownChange?.(this.unknown);
    return (await this.#awaitResolution(key, entry, action, false))!;
  }

  /**
   * Read the action when its details are missing or it must be read (a takeover, a recent data
   * loss of Redis). @returns the action and the reasons so far; a held or skipped outcome when
   * it is no longer pending; {@link AGAIN} when a takeover could not read it.
   */
  async #read(client: CustodyClient, input: Record<string, unknown>, clientId: string, actionId: string, earlier: Entry | undefined, mustRead: boolean): Promise<ReadAction | ApproverOutcome | typeof AGAIN> {
    let action: Record<string, unknown> = { ...input, client_id: clientId, action_id: actionId };
    const reasons: string[] = [];
    if (earlier?.state === 'failed') reasons.push('decided again: the earlier call failed');
    if (!mustRead && action.details && typeof action.details === 'object' && action.type) return { action, reasons };
    try {
      const read = await getAction(client, { client_id: clientId, action_id: actionId });
      if (read.data.status !== 'pending') {
        const a = { ...action, ...read.data, client_id: clientId, action_id: actionId };
        const why = mustRead ? `the action is ${read.data.status}, not pending: decided before (another instance, or before Redis lost its data): nothing to decide` : `the action is ${read.data.status}, not pending: nothing to decide`;
        return { decision: this.#bare(a, clientId, actionId, 'hold', [why]), output: this.#claims.shared ? 'skipped' : 'held', action: a };
      }
      action = { ...action, ...(read.data as Action), client_id: clientId, action_id: actionId };
    } catch (e) {
      if (mustRead) {
        // Not knowing whether it is still pending, a takeover must not call: try again later.
        this.#claims.warn(`action ${actionId}: could not be read before taking it over (${(e as Error).message})`);
        await abortableSleep(1000, this.#closing.signal);
        return AGAIN;
      }
      reasons.push(`details: the action could not be read (${(e as Error).message}): conditions that need them fail`);
    }
    return { action, reasons };
  }

  /**
   * Evaluate the rules against the velocity windows as read, and reserve an approval in them
   * (only if no other decision changed them since the read: else read and decide again).
   * @returns the decision, or {@link AGAIN} when Redis went away.
   */
  async #decideAndReserve(facts: ActionFacts, ctx: EvaluationContext, reasons: string[], clientId: string, actionId: string): Promise<DecisionRecord | typeof AGAIN> {
    const counted = facts.asset !== undefined && facts.amount !== undefined;
    const useWindows = facts.asset !== undefined && (this.#longestWindowMs > 0 || !this.#claims.shared);
    const release = useWindows ? await this.#windowLocks.acquire(facts.asset!) : undefined;
    try {
      for (;;) {
        let view: WindowView | undefined;
        if (useWindows) {
          try {
            view = await this.#windows.read(facts.asset!, ctx.now);
          } catch (e) {
            if (e instanceof CoordinationUnavailableError) return AGAIN;
            throw e;
          }
          const v = view;
          ctx.velocity = (_asset, windowMs) => v.usage(windowMs, ctx.now);
        }
        const evaluation = evaluateRules(this.#opts.rules, facts, ctx, this.#opts.defaultDecision);
        const scale = typeof ctx.scale === 'number' ? ctx.scale : undefined;
        const decision: DecisionRecord = {
          decision: evaluation.decision,
          rule: evaluation.rule,
          reasons: [...reasons, ...evaluation.reasons],
          action_id: actionId,
          client_id: clientId,
          type: facts.type,
          asset: facts.asset ?? null,
          amount: facts.amount !== undefined ? facts.amount.toString() : null,
          amountDecimal: facts.amount !== undefined && scale !== undefined ? fromBaseUnits(facts.amount, scale) : null,
          destination: facts.destination ?? null,
          velocity: evaluation.velocity,
          mode: this.mode,
          decidedAt: new Date(ctx.now).toISOString(),
          expireTime: facts.expireTime,
        };
        if (decision.decision !== 'approve' || this.#markExpired(decision, facts) || !counted) return decision;
        const entry: VelocityEntry = { at: ctx.now, action: actionId, amount: facts.amount! };
        if (view) {
          let reserved: boolean;
          try {
            reserved = await this.#windows.reserve(view, entry);
          } catch (e) {
            if (e instanceof CoordinationUnavailableError) return AGAIN;
            throw e;
          }
          if (!reserved) {
            // Another decision reserved since the read: read again after a short random wait.
            await abortableSleep(2 + Math.random() * 10, this.#closing.signal);
            if (this.#closed) throw new Error('approver: closed');
            continue;
          }
        }
        // The book counts this instance's own approvals too: written back after a data loss of Redis.
        if (this.#claims.shared) this.#book.velocity[this.mode].add(facts.asset!, entry.amount, entry.at, actionId);
        return decision;
      }
    } finally {
      release?.();
    }
  }

  /** Stop counting `decision`'s approval (a definite "not applied"). Never throws: Redis away, the shared window keeps it (the safe side). */
  async #unreserve(decision: DecisionRecord): Promise<void> {
    if (decision.decision !== 'approve') return;
    if (this.#claims.shared) this.#book.velocity[this.mode].remove(decision.action_id);
    if (decision.asset) await this.#windows.release(decision.asset, decision.action_id).catch(() => undefined);
  }

  /** A final outcome: with coordination, "decided" is recorded for the claim. */
  #final(claim: Claim | undefined, o: ApproverOutcome): ApproverOutcome {
    if (claim) this.#claims.complete(claim, JSON.stringify({ decision: o.decision, output: o.output, instance: this.#claims.instance } satisfies DecidedRecord));
    return o;
  }

  /**
   * Wait for the resolution of a call whose outcome is unknown, at most `reportUnknownAfterMs`
   * (or until close).
   * @param redelivered the action came again (a re-send, a restart): an applied outcome comes back
   *   `redelivered`, a "not applied" one returns undefined (decide it again).
   */
  async #awaitResolution(key: string, entry: Entry, action: Record<string, unknown>, redelivered: boolean): Promise<ApproverOutcome | undefined> {
    const resolving = this.#startResolving(key, entry);
    const decision = entry.decision!;
    const output: ApproverOutput = OUTPUT[decision.decision];
    const timer = new AbortController();
    const late = abortableSleep(this.#opts.reportUnknownAfterMs, AbortSignal.any([timer.signal, this.#closing.signal])).then(() => ({ outcome: 'unknown' }) as Resolution);
    const r = await Promise.race([resolving, late]);
    timer.abort();
    const mark = redelivered ? { redelivered: true } : {};
    if (r.outcome === 'applied') return { decision: { ...decision, ...mark, outcome: 'applied' }, output, action };
    if (r.outcome === 'notApplied') {
      if (redelivered && r.status === 'pending') return undefined;
      const verb = decision.decision === 'approve' ? 'approve' : 'reject';
      return {
        decision: { ...decision, ...mark, outcome: 'notApplied' },
        output,
        action,
        error: new ActionNotAppliedError(`${verb} of action ${decision.action_id}: not applied: ${r.why}`, { outcome: 'notApplied', status: r.status, why: r.why }),
      };
    }
    const c = entry.callError ?? { statusCode: 0, code: null, msg: '' };
    const verb = decision.decision === 'approve' ? 'approve' : 'reject';
    return {
      decision: { ...decision, ...mark, outcome: 'unknown' },
      output,
      action,
      error: new ActionOutcomeUnknownError(`${verb} of action ${decision.action_id}: outcome unknown (${c.msg || c.code || 'no answer'}): it may have taken effect; still counted, and being resolved by reading the action`, { outcomeUnknown: true, statusCode: c.statusCode, code: c.code, msg: c.msg }),
    };
  }

  /** Start resolving `entry` (once): read the action at once, then on a timer, until the answer is definite or the approver closes. */
  #startResolving(key: string, entry: Entry): Promise<Resolution> {
    if (entry.resolving) return entry.resolving;
    const job = this.#resolve(key, entry);
    entry.resolving = job;
    this.#resolutions.add(job);
    void job.finally(() => {
      this.#resolutions.delete(job);
      if (entry.state === 'unknown') entry.resolving = undefined;
    });
    return job;
  }

  async #resolve(key: string, entry: Entry): Promise<Resolution> {
    const decision = entry.decision!;
    const ids = { client_id: decision.client_id, action_id: decision.action_id };
    // Only approve and reject calls are made, so only they are resolved.
    const verb = decision.decision as Exclude<Decision, 'hold'>;
    for (let attempt = 0; ; attempt++) {
      await abortableSleep(RESOLVE_DELAYS_MS[Math.min(attempt, RESOLVE_DELAYS_MS.length - 1)], this.#closing.signal);
      if (this.#closing.signal.aborted) return { outcome: 'unknown' };
      let reading;
      try {
        reading = await readCallOutcome(await this.#opts.client(), ids, verb, entry.details);
      } catch {
        continue;
      }
      if (this.#closing.signal.aborted) return { outcome: 'unknown' };
      let outcome: 'applied' | 'notApplied';
      let why = reading.why;
      if (reading.outcome !== 'pending') outcome = reading.outcome;
      else if (this.#opts.now() - (entry.callEndedAt ?? 0) >= this.#opts.pendingSettlesAfterMs) {
        outcome = 'notApplied';
        why = `${reading.why} ${Math.round((this.#opts.now() - (entry.callEndedAt ?? 0)) / 1000)} s after the call ended: it did not take effect`;
      } else continue;
      await this.#append(key, { kind: 'resolved', approver: this.#opts.approverId, mode: decision.mode, action_id: decision.action_id, client_id: decision.client_id, outcome, status: reading.status, ...(reading.txStatus ? { txStatus: reading.txStatus } : {}), why, at: new Date(this.#opts.now()).toISOString() });
      if (outcome === 'applied') {
        entry.state = 'done';
        this.#final(entry.claim, { decision: { ...decision, outcome }, output: OUTPUT[decision.decision], action: ids });
      } else {
        entry.state = reading.status === 'pending' ? 'failed' : 'done';
        await this.#unreserve(decision);
        await this.#claims.release(entry.claim);
      }
      entry.claim = undefined;
      this.#opts.onUnknownChange?.(this.unknown, { ...ids, outcome, why });
      return { outcome, status: reading.status, why };
    }
  }

  /** The action was decided by another instance (or by this one before a restart): no msg, nothing sent. */
  #decidedElsewhere(record: string, entry: Entry, action: Record<string, unknown>): ApproverOutcome {
    let parsed: DecidedRecord;
    try {
      parsed = JSON.parse(record) as DecidedRecord;
    } catch {
      parsed = { decision: this.#bare(action, String(action.client_id), String(action.action_id), 'hold', ['decided by another instance (its record could not be read)']), output: 'held', instance: 'unknown' };
    }
    const decision: DecisionRecord = { ...parsed.decision, ...(parsed.instance !== this.#claims.instance ? { decidedBy: parsed.instance } : {}) };
    entry.decision = decision;
    entry.state = 'done';
    entry.elsewhere = true;
    return { decision, output: 'skipped', action };
  }

  /** Append a line to the audit file (and, with coordination, to the shared stream); the book keeps it for the next segment. @throws what the file throws (rejects). */
  async #append(key: string, record: Record<string, unknown>): Promise<AuditLine> {
    const line = await this.#book.log.append(record);
    this.#book.note(key, line);
    this.#opts.coordinator?.audit(this.#opts.approverId ?? this.#opts.velocityScope ?? 'approver', line);
    return line;
  }

  /** Append the result line of `decision`'s call (`ok`, `outcome`, and `statusCode`, `code`, `error` or `sent`/`expired`). */
  #appendResult(key: string, decision: DecisionRecord, result: Record<string, unknown>): Promise<unknown> {
    const { mode, action_id, client_id } = decision;
    return this.#append(key, { kind: 'result', approver: this.#opts.approverId, mode, action_id, client_id, ...result, at: new Date(this.#opts.now()).toISOString() });
  }

  /** After a data loss of Redis: write back what this approver knows (decided actions, the velocity windows). */
  async #writeBack(): Promise<void> {
    const decided: Array<[string, string]> = [];
    const since = this.#opts.now() - this.#claims.decidedTtlMs;
    for (const [key, e] of this.#book.entries) {
      const [mode, clientId, actionId] = key.split('\u0000');
      if (mode !== this.mode || !e.decision || Date.parse(e.decision.decidedAt) < since) continue;
      // An unknown outcome is not "decided" yet: its claim is gone with the data; a takeover reads the action first.
      if (e.state !== 'done') continue;
      const output: ApproverOutput = e.decision.expired ? 'held' : OUTPUT[e.decision.decision];
      decided.push([`${mode}:${clientId}:${actionId}`, JSON.stringify({ decision: e.decision, output, instance: e.decision.decidedBy ?? this.#claims.instance } satisfies DecidedRecord)]);
    }
    await this.#claims.restore(decided);
    if (this.#longestWindowMs === 0) return;
    const now = this.#opts.now();
    const byAsset = new Map<string, Map<string, VelocityEntry>>();
    const put = (asset: string, e: VelocityEntry) => {
      let m = byAsset.get(asset);
      if (!m) byAsset.set(asset, (m = new Map()));
      m.set(e.action, e);
    };
    for (const e of await this.#windows.entries(now)) put(e.asset, { at: e.at, action: e.action, amount: e.amount });
    for (const e of this.#book.velocity[this.mode].entries()) put(e.asset, { at: e.at, action: e.action, amount: e.amount });
    const horizon = now - this.#longestWindowMs;
    for (const [asset, m] of byAsset) await this.#windows.restore(asset, [...m.values()].filter((e) => e.at >= horizon));
  }

  /** A decision record with no facts beyond the ids (for an action that was not decided by rules). */
  #bare(action: Record<string, unknown>, clientId: string, actionId: string, decision: Decision, reasons: string[]): DecisionRecord {
    return {
      decision,
      rule: null,
      reasons,
      action_id: actionId,
      client_id: clientId,
      type: str(action.type) ?? '',
      asset: null,
      amount: null,
      amountDecimal: null,
      destination: null,
      velocity: null,
      mode: this.mode,
      decidedAt: new Date(this.#opts.now()).toISOString(),
      ...(Number(action.expireTime) >= 0 && action.expireTime !== undefined ? { expireTime: Number(action.expireTime) } : {}),
    };
  }

  /**
   * When the action can no longer be approved (its `expireTime`, or its transaction's `expires`,
   * epoch seconds, is past): mark `decision` expired with the reason. @returns true when it did.
   */
  #markExpired(decision: DecisionRecord, facts: ActionFacts): boolean {
    const now = this.#opts.now() / 1000;
    let reason: string | undefined;
    if (facts.expireTime > 0 && facts.expireTime <= now) reason = `expired: the action expired at ${new Date(facts.expireTime * 1000).toISOString()}: not approved`;
    else if (facts.expires !== undefined && facts.expires > 0 && facts.expires <= now) reason = `expired: the transaction expired at ${new Date(facts.expires * 1000).toISOString()}: not approved`;
    if (!reason) return false;
    decision.expired = true;
    decision.reasons.push(reason);
    return true;
  }

  /** Read what the rules need for this action: the asset's scale, the fund's whitelist, short codes (each cached). */
  async #context(client: CustodyClient, facts: ActionFacts): Promise<EvaluationContext> {
    const [scale, whitelist, shortCodes] = await Promise.all([
      this.#needsScale && facts.asset ? assetScale(client, facts.asset).catch((e: Error) => e) : Promise.resolve(undefined),
      this.#needsWhitelist && facts.companyID && facts.fundID ? this.#whitelist(client, facts.companyID, facts.fundID).catch((e: Error) => e) : Promise.resolve(undefined),
      Promise.all(this.#shortCodeList.map(async (code) => [code, await this.#walletId(client, code).catch((e: Error) => e)] as const)),
    ]);
    const ledger = this.#book.velocity[this.mode];
    const now = this.#opts.now();
    return { now, scale, whitelist, shortCodes: new Map(shortCodes), velocity: (asset, windowMs) => ledger.usage(asset, windowMs, now) };
  }

  #cached<T>(map: Map<string, Cached<T>>, key: string, read: () => Promise<T>): Promise<T> {
    const now = this.#opts.now();
    const hit = map.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = read();
    const entry = { until: now + this.#opts.cacheMs, value };
    map.set(key, entry);
    value.catch(() => {
      if (map.get(key) === entry) map.delete(key);
    });
    return value;
  }

  #whitelist(client: CustodyClient, companyId: string, fundId: string): Promise<Array<{ asset: string; address: string }>> {
    return this.#cached(this.#whitelists, `${companyId}/${fundId}`, async () => (await listWhitelist(client, { company_id: companyId, fund_id: fundId })).data.list ?? []);
  }

  #walletId(client: CustodyClient, shortCode: string): Promise<string> {
    return this.#cached(this.#shortCodes, shortCode, async () => String((await getWallet(client, { wallet_id: shortCode })).data.wallet_id));
  }

  /**
   * Close: no new decision starts; waits (claims, resolution timers) end at once; a call in
   * flight may finish within `CLOSE_GRACE_MS` (lib/client.ts, 10 s: the grace a closing client
   * gives its requests) and its result line is written, `outcome: "unknown"` when the client cut
   * it (up to 12 s in all). What is
   * still unknown after that is resolved by the next start (its decision line has no result, or
   * its result says `outcome: "unknown"`). Then the audit file is released.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#unregisterLoss?.();
    const grace = new AbortController();
    // A little past the client's own grace: a call it cuts then is still recorded (`outcome: "unknown"`).
    await Promise.race([Promise.allSettled(Array.from(this.#inFlight)), abortableSleep(CLOSE_GRACE_MS + CLOSE_MARGIN_MS, grace.signal)]);
    grace.abort();
    await Promise.allSettled(Array.from(this.#resolutions));
    await this.#claims.close();
    await releaseBook(this.auditFile, this.#book);
  }
}
