/**
 * The decision engine of the `custody-approver` node, with no Node-RED import: decide each
 * pending action of a core client once by ordered rules (rules.ts), write the decision to the
 * hash-chained audit file (audit.ts) before approving (PUT) or rejecting (DELETE) it, append
 * the call's result after, and keep velocity windows (velocity.ts) that the audit file
 * rebuilds on start. Source: spec section 2 "Action", section 3 (action statuses), section 4
 * `PUT`/`DELETE /coreclient/{client_id}/action/{action_id}`, section 6 (the core client feed
 * re-sends every pending action after a reconnect: decide each action id once).
 */
import crypto from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { CustodyClient } from '../client';
import { ValidationError } from '../errors';
import { abortableSleep } from '../transport';
import { KeyedLock } from '../keyed-lock';
import { fromBaseUnits } from '../amounts';
import { assetScale } from '../v1/assets';
import { listWhitelist, getWallet } from '../v1/fund';
import { getAction, approveAction, rejectAction, type Action } from '../v1/core-client';
import { AuditLog, type AuditLine } from './audit';
import { VelocityLedger } from './velocity';
import { CoordinationUnavailableError, type Claim, type Coordinator, type VelocityEntry, type VelocityRead } from '../coordination/coordinator';
import { evaluateRules, type ActionFacts, type CompiledRule, type Decision, type DefaultDecision, type EvaluationContext, type VelocityReport } from './rules';

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
  /** True when the action had been decided before (a feed re-send, a restart): nothing was sent again. */
  redelivered?: boolean;
  /** True when the action had expired before it could be approved: nothing was sent. */
  expired?: boolean;
  /** With coordination: the instance that decided it, when that was another one (the outcome is then `skipped`). */
  decidedBy?: string;
}

/** The outcome of {@link Approver.decide}: the decision, its output, the action and the call's answer or error. */
export interface ApproverOutcome {
  decision: DecisionRecord;
  output: ApproverOutput;
  /** The action with its details as read (or as given). */
  action: Record<string, unknown>;
  /** HTTP status of the approve/reject call; absent when nothing was called. */
  statusCode?: number;
  /** The call's error (ApiError), when it failed; the decision is in the audit file with it. */
  error?: Error;
}

/** Options of an {@link Approver}. */
export interface ApproverOptions {
  /** The compiled rules, in order (rules.ts `compileRules`). */
  rules: CompiledRule[];
  /** What applies when no rule matches: hold (default) or reject. */
  defaultDecision?: DefaultDecision;
  mode?: ApproverMode;
  /** The audit file (absolute path). */
  auditFile: string;
  /** The signed client; called per action (the config node builds it once). @throws what building the client throws. */
  client: () => Promise<CustodyClient>;
  /** How long a fund's whitelist and a short code's wallet id are kept, in ms (default 60,000). */
  cacheMs?: number;
  /** Written in each audit line as `approver` (the node id). */
  approverId?: string;
  /** The clock, epoch ms (default Date.now). */
  now?: () => number;
  /**
   * Coordination with other instances through Redis (issue 12): claim each action before
   * deciding it, share the velocity windows, copy each audit line to the shared stream. Absent:
   * this approver decides alone.
   */
  coordinator?: Coordinator;
  /** The scope of the shared velocity windows (default `approverId`, else the audit file's name): the same approver on every instance. */
  velocityScope?: string;
  /** Called while an action waits for Redis (unavailable, or recovering from a data loss), with why; and with '' once it decides again. */
  onCoordinationWait?: (reason: string) => void;
}

/** After a data loss of the coordination Redis, every decision reads its action first for this long (ms): it may have been decided before the loss. */
export const READ_AFTER_DATA_LOSS_MS = 10 * 60_000;

/** What the coordination Redis keeps per decided action (JSON): the decision, its output and who decided. */
interface DecidedRecord {
  decision: DecisionRecord;
  output: ApproverOutput;
  instance: string;
}

/** How long a coordinated decision waits before trying Redis again after it was unavailable (ms). */
const UNAVAILABLE_RETRY_MS = 200;

/** Returned by a coordinated decision that must start again from the claim (the claim was lost, or Redis went away before the call). */
const AGAIN = Symbol('again');

/** What an action's id has led to: `deciding` while in hand, `open` decided with no result yet, `done`, or `failed` (the call failed: decide again). */
type EntryState = 'deciding' | 'open' | 'done' | 'failed';

interface Entry {
  state: EntryState;
  decision?: DecisionRecord;
  /** From the audit file of an earlier run. */
  fromFile: boolean;
  /** Decided by another instance (coordination): a re-send here is skipped too. */
  elsewhere?: boolean;
}

/**
 * What one audit file holds in memory: the log, what each action id led to, and the velocity
 * windows per mode. One per file in the process, shared by the nodes that name it.
 */
class ApprovalBook {
  readonly entries = new Map<string, Entry>();
  readonly velocity: Record<ApproverMode, VelocityLedger> = { live: new VelocityLedger(), dryRun: new VelocityLedger() };
  refs = 0;
  /** The longest velocity window of the approvers using this book, ms: approvals older than that are forgotten. */
  keepMs = 0;
  constructor(readonly log: AuditLog) {}

  /** Replay the audit file: decisions, their results, and the approvals the API accepted (or whose result is unknown: counted, to be safe). */
  replay(records: AuditLine[]): void {
    for (const r of records) {
      const mode: ApproverMode = r.mode === 'dryRun' ? 'dryRun' : 'live';
      const key = entryKey(mode, String(r.client_id), String(r.action_id));
      if (r.kind === 'decision') {
        const d = r as unknown as DecisionRecord & AuditLine;
        this.entries.set(key, { state: mode === 'dryRun' ? 'done' : d.decision === 'hold' ? 'done' : 'open', decision: pickDecision(d), fromFile: true });
        if (d.decision === 'approve' && d.asset && d.amount !== null && !d.expired) {
          const at = Date.parse(d.decidedAt);
          this.velocity.dryRun.add(d.asset, BigInt(d.amount), at, d.action_id);
          if (mode === 'live') this.velocity.live.add(d.asset, BigInt(d.amount), at, d.action_id);
        }
      } else if (r.kind === 'result') {
        const e = this.entries.get(key);
        if (!e) continue;
        e.state = r.ok ? 'done' : r.sent === false && r.expired ? 'done' : 'failed';
        if (!r.ok) {
          this.velocity.live.remove(String(r.action_id));
          this.velocity.dryRun.remove(String(r.action_id));
        }
      }
    }
  }
}

function entryKey(mode: ApproverMode, clientId: string, actionId: string): string {
  return `${mode}\u0000${clientId}\u0000${actionId}`;
}

function pickDecision(d: DecisionRecord): DecisionRecord {
  const { decision, rule, reasons, action_id, client_id, type, asset, amount, amountDecimal, destination, velocity, mode, decidedAt, expired } = d;
  return { decision, rule, reasons, action_id, client_id, type, asset, amount, amountDecimal, destination, velocity, mode, decidedAt, ...(expired ? { expired } : {}) };
}

/** Open books by audit file path (resolved), shared in the process. */
const books = new Map<string, Promise<ApprovalBook>>();

async function acquireBook(file: string): Promise<ApprovalBook> {
  let p = books.get(file);
  if (!p) {
    p = AuditLog.open(file).then(({ log, records }) => {
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

/**
 * Decides the actions of core clients by rules, once each, with an audit trail. Open it with
 * {@link Approver.open}; close it with {@link Approver.close}.
 */
export class Approver {
  readonly mode: ApproverMode;
  readonly auditFile: string;
  readonly #opts: Required<Pick<ApproverOptions, 'defaultDecision' | 'mode' | 'cacheMs' | 'now'>> & ApproverOptions;
  readonly #book: ApprovalBook;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #whitelists = new Map<string, Cached<Array<{ asset: string; address: string }>>>();
  readonly #shortCodes = new Map<string, Cached<string>>();
  readonly #needsScale: boolean;
  readonly #needsWhitelist: boolean;
  readonly #shortCodeList: string[];
  readonly #longestWindowMs: number;
  readonly #coordinator: Coordinator | undefined;
  readonly #velocityScope: string;
  /** The shared velocity windows as last read, per asset: written back after a data loss of Redis. */
  readonly #sharedWindows = new Map<string, VelocityEntry[]>();
  /** One shared read-decide-commit per asset at a time in this process. */
  readonly #windowLocks = new KeyedLock();
  /** "Decided" records still to be written to Redis (it was away when the decision ended). */
  readonly #finishing = new Set<Promise<unknown>>();
  readonly #closing = new AbortController();
  #unregisterLoss: (() => void) | undefined;
  #closed = false;

  private constructor(opts: ApproverOptions, book: ApprovalBook) {
    this.mode = opts.mode ?? 'live';
    this.auditFile = opts.auditFile;
    this.#opts = { defaultDecision: 'hold', mode: this.mode, cacheMs: 60_000, now: Date.now, ...opts };
    this.#book = book;
    this.#needsScale = opts.rules.some((r) => r.needsScale);
    this.#needsWhitelist = opts.rules.some((r) => r.needsWhitelist);
    this.#shortCodeList = Array.from(new Set(opts.rules.flatMap((r) => r.shortCodes)));
    this.#longestWindowMs = Math.max(0, ...opts.rules.map((r) => r.velocityWindowMs));
    this.#coordinator = opts.coordinator;
    setMaxListeners(0, this.#closing.signal);
    this.#velocityScope = opts.velocityScope || opts.approverId || opts.auditFile.split(/[\\/]/).pop() || 'approver';
  }

  /**
   * Open the audit file (verifying its chain), rebuild what each action id led to and the
   * velocity windows from it, and return an approver ready to decide.
   * @throws {AuditFileError} when the audit file does not verify (rejects): the approver then
   *   refuses to decide anything until the file is looked at.
   */
  static async open(opts: ApproverOptions): Promise<Approver> {
    if (opts.defaultDecision !== undefined && opts.defaultDecision !== 'hold' && opts.defaultDecision !== 'reject') {
      throw new ValidationError('defaultDecision', `hold or reject, got ${JSON.stringify(opts.defaultDecision)}`);
    }
    const book = await acquireBook(opts.auditFile);
    const approver = new Approver(opts, book);
    book.keepMs = Math.max(book.keepMs, approver.#longestWindowMs);
    if (opts.coordinator) approver.#unregisterLoss = opts.coordinator.onDataLoss(() => approver.#writeBack());
    return approver;
  }

  /**
   * Decide one action: read its details when missing, evaluate the rules, write the decision
   * to the audit file (on disk before anything is sent), check expiry again, approve (PUT) or
   * reject (DELETE) in live mode, append the result.
   *
   * With a coordinator (issue 12), first claim the action in Redis: when another instance holds
   * the claim, wait until it decided (outcome `skipped`, with its decision and `decidedBy`) or
   * its lease ended (then take it over, reading the action first); while Redis is unavailable,
   * hold the action in hand (nothing is called) until it is back or the action expired. The
   * velocity limits count the approvals of every instance, and "decided" is written to Redis
   * only after the API accepted the call (a failed call releases the claim).
   * @param input an action as the core client feed sends it: `client_id` and `action_id`
   *   (or `id`), and `type`, `expireTime`, `details` when known.
   * @returns the outcome; a failed call is returned in `error` (already audited), not thrown.
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
    const known = this.#book.entries.get(key);
    if (known && known.state !== 'failed' && !(known.state === 'open' && known.fromFile)) {
      const earlier = known.decision;
      const action = { ...input, client_id: clientId, action_id: actionId };
      if (!earlier) {
        // Being decided right now (the same action twice in one burst).
        const d = this.#bare(action, clientId, actionId, 'hold', ['redelivered while its first delivery is being decided: decided once, there']);
        return { decision: { ...d, redelivered: true }, output: 'held', action };
      }
      if (known.elsewhere) return { decision: { ...earlier, redelivered: true }, output: 'skipped', action };
      return { decision: { ...earlier, redelivered: true }, output: earlier.expired ? 'held' : OUTPUT[earlier.decision], action };
    }
    const entry: Entry = { state: 'deciding', fromFile: false };
    this.#book.entries.set(key, entry);
    const work = this.#coordinator ? this.#decideCoordinated(this.#coordinator, input, clientId, actionId, entry, known) : this.#decideOnce(input, clientId, actionId, entry, known);
    this.#inFlight.add(work);
    try {
      return await work;
    } catch (e) {
      // Failed before the decision was on disk (client, audit write): as if it never came.
      if (entry.state === 'deciding') {
        if (this.#book.entries.get(key) === entry) {
          if (known) this.#book.entries.set(key, known);
          else this.#book.entries.delete(key);
        }
        this.#book.velocity[this.mode].remove(actionId);
      }
      throw e;
    } finally {
      this.#inFlight.delete(work);
    }
  }

  /** {@link decide} without coordination. */
  async #decideOnce(input: Record<string, unknown>, clientId: string, actionId: string, entry: Entry, earlier: Entry | undefined): Promise<ApproverOutcome> {
    const outcome = await this.#decide(input, clientId, actionId, entry, earlier, undefined);
    if (outcome === AGAIN) throw new Error('approver: internal: a decision without coordination asked to start again');
    return outcome;
  }

  /** {@link decide} with coordination: claim, wait or take over, decide (see there). */
  async #decideCoordinated(coord: Coordinator, input: Record<string, unknown>, clientId: string, actionId: string, entry: Entry, earlier: Entry | undefined): Promise<ApproverOutcome> {
    const id = `${this.mode}:${clientId}:${actionId}`;
    const claimId = crypto.randomUUID();
    const action = { ...input, client_id: clientId, action_id: actionId };
    const expireTime = Number(input.expireTime) || 0;
    let contested = false;
    let waiting = false;
    const wait = (reason: string) => {
      waiting = true;
      this.#opts.onCoordinationWait?.(reason);
    };
    try {
      for (;;) {
        if (this.#closed) throw new Error('approver: closed');
        if (expireTime > 0 && expireTime <= this.#opts.now() / 1000) {
          // Expired while it waited: nothing can approve it any more.
          const d = this.#bare(action, clientId, actionId, 'hold', [`expired: the action expired at ${new Date(expireTime * 1000).toISOString()} while it waited for coordination (${contested ? 'claimed by another instance' : 'Redis unavailable'}): not approved`]);
          d.expired = true;
          entry.decision = d;
          await this.#append({ kind: 'decision', approver: this.#opts.approverId, ...d });
          entry.state = 'done';
          return { decision: d, output: contested ? 'skipped' : 'held', action };
        }
        let claimed;
        try {
          // Known away already (not only when a command fails): say so while the action waits.
          if (coord.state !== 'ready') wait(`coordination: Redis is ${coord.state}${coord.reason ? ` (${coord.reason})` : ''}`);
          await coord.whenReady(this.#closing.signal);
          if (this.#closed) continue;
          claimed = await coord.claim(id, claimId);
        } catch (e) {
          if (!(e instanceof CoordinationUnavailableError)) throw e;
          wait(e.message);
          // A timer, not only the state: the connection may fail before its 'close' event is
          // handled, and a loop of promises alone would never let that event in.
          await abortableSleep(UNAVAILABLE_RETRY_MS, this.#closing.signal);
          await coord.whenReady(this.#closing.signal);
          continue;
        }
        if (claimed.kind === 'decided') return this.#decidedElsewhere(claimed.record, entry, action, coord);
        if (claimed.kind === 'held') {
          contested = true;
          await coord.waitForClaim(id, Math.max(50, claimed.pttl + 25), this.#closing.signal);
          continue;
        }
        if (waiting) {
          waiting = false;
          this.#opts.onCoordinationWait?.('');
        }
        const mustRead = contested || !claimed.fresh || (coord.lostAt > 0 && this.#opts.now() - coord.lostAt < READ_AFTER_DATA_LOSS_MS);
        const outcome = await this.#decide(input, clientId, actionId, entry, earlier, { coord, claim: claimed.claim, mustRead, record: (o) => this.#finish(coord, claimed.claim, o) });
        if (outcome !== AGAIN) return outcome;
        contested = true;
        await abortableSleep(UNAVAILABLE_RETRY_MS, this.#closing.signal);
      }
    } finally {
      if (waiting) this.#opts.onCoordinationWait?.('');
    }
  }

  /** The action was decided by another instance (or by this one before a restart): no msg, nothing sent. */
  #decidedElsewhere(record: string, entry: Entry, action: Record<string, unknown>, coord: Coordinator): ApproverOutcome {
    let parsed: DecidedRecord;
    try {
      parsed = JSON.parse(record) as DecidedRecord;
    } catch {
      parsed = { decision: this.#bare(action, String(action.client_id), String(action.action_id), 'hold', ['decided by another instance (its record could not be read)']), output: 'held', instance: 'unknown' };
    }
    const decision: DecisionRecord = { ...parsed.decision, ...(parsed.instance !== coord.instance ? { decidedBy: parsed.instance } : {}) };
    entry.decision = decision;
    entry.state = 'done';
    entry.elsewhere = true;
    return { decision, output: 'skipped', action };
  }

  /**
   * Write "decided" for a claim: at once, or (Redis away) in the background until it is back.
   * Safe either way: until it is written the claim stands, and whoever takes it over after its
   * lease reads the action first.
   */
  #finish(coord: Coordinator, claim: Claim, outcome: ApproverOutcome): void {
    const record = JSON.stringify({ decision: outcome.decision, output: outcome.output, instance: coord.instance } satisfies DecidedRecord);
    const job = (async () => {
      for (;;) {
        try {
          await coord.complete(claim, record);
          return;
        } catch (e) {
          if (!(e instanceof CoordinationUnavailableError) || this.#closing.signal.aborted) return;
          await abortableSleep(UNAVAILABLE_RETRY_MS, this.#closing.signal);
          await coord.whenReady(this.#closing.signal, false);
          if (this.#closing.signal.aborted) return;
        }
      }
    })();
    this.#finishing.add(job);
    void job.finally(() => this.#finishing.delete(job));
  }

  /** Append a line to the audit file and, with coordination, to the shared stream. @throws what the file throws (rejects). */
  async #append(record: Record<string, unknown>): Promise<AuditLine> {
    const line = await this.#book.log.append(record);
    this.#coordinator?.audit(this.#opts.approverId ?? this.#velocityScope, line);
    return line;
  }

  /** After a data loss of Redis: write back what this approver knows (decided actions, the velocity windows). */
  async #writeBack(): Promise<void> {
    const coord = this.#coordinator!;
    const decided: Array<[string, string]> = [];
    const since = this.#opts.now() - coord.decidedTtlMs;
    for (const [key, e] of this.#book.entries) {
      const [mode, clientId, actionId] = key.split('\u0000');
      if (mode !== this.mode || e.state !== 'done' || !e.decision || Date.parse(e.decision.decidedAt) < since) continue;
      const output: ApproverOutput = e.decision.expired ? 'held' : OUTPUT[e.decision.decision];
      decided.push([`${mode}:${clientId}:${actionId}`, JSON.stringify({ decision: e.decision, output, instance: e.decision.decidedBy ?? coord.instance } satisfies DecidedRecord)]);
    }
    await coord.restoreDecided(decided);
    if (this.#longestWindowMs === 0) return;
    const byAsset = new Map<string, Map<string, VelocityEntry>>();
    const put = (asset: string, e: VelocityEntry) => {
      let m = byAsset.get(asset);
      if (!m) byAsset.set(asset, (m = new Map()));
      m.set(e.action, e);
    };
    for (const [asset, entries] of this.#sharedWindows) for (const e of entries) put(asset, e);
    for (const e of this.#book.velocity[this.mode].entries()) put(e.asset, { at: e.at, action: e.action, amount: e.amount });
    const horizon = this.#opts.now() - this.#longestWindowMs;
    for (const [asset, m] of byAsset) {
      await coord.velocityRestore(this.#velocityScope, this.mode, asset, [...m.values()].filter((e) => e.at >= horizon), this.#longestWindowMs);
    }
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
    };
  }

  /**
   * Decide one action (see {@link decide}). With `co` (coordination, the claim held): reads the
   * action first when `mustRead`, counts velocity in the shared windows, checks the claim right
   * before the call, and hands each final outcome to `co.record`.
   * @returns the outcome, or {@link AGAIN} when the claim was lost or Redis went away before the call (nothing called).
   */
  async #decide(
    input: Record<string, unknown>,
    clientId: string,
    actionId: string,
    entry: Entry,
    earlier: Entry | undefined,
    co: { coord: Coordinator; claim: Claim; mustRead: boolean; record: (o: ApproverOutcome) => void } | undefined,
  ): Promise<ApproverOutcome | typeof AGAIN> {
    const client = await this.#opts.client();
    let action: Record<string, unknown> = { ...input, client_id: clientId, action_id: actionId };
    const reasons: string[] = [];
    const done = (o: ApproverOutcome): ApproverOutcome => {
      co?.record(o);
      return o;
    };
    if (earlier?.state === 'failed') reasons.push('decided again: the earlier call failed');
    if (earlier?.state === 'open') {
      reasons.push('decided again: the earlier decision has no result in the audit file (the process stopped during the call)');
      this.#book.velocity[this.mode].remove(actionId);
    }
    if (co?.mustRead || !action.details || typeof action.details !== 'object' || !action.type) {
      try {
        const read = await getAction(client, { client_id: clientId, action_id: actionId });
        if (read.data.status !== 'pending') {
          const a = { ...action, ...read.data, client_id: clientId, action_id: actionId };
          const why = co?.mustRead ? `the action is ${read.data.status}, not pending: decided before (another instance, or before Redis lost its data): nothing to decide` : `the action is ${read.data.status}, not pending: nothing to decide`;
          const d = this.#bare(a, clientId, actionId, 'hold', [why]);
          if (!co) {
            this.#book.entries.delete(entryKey(this.mode, clientId, actionId));
            return { decision: d, output: 'held', action: a };
          }
          entry.decision = d;
          entry.state = 'done';
          entry.elsewhere = true;
          return done({ decision: d, output: 'skipped', action: a });
        }
        action = { ...action, ...(read.data as Action), client_id: clientId, action_id: actionId };
      } catch (e) {
        if (co?.mustRead) {
          // Not knowing whether it is still pending, a takeover must not call: try again later.
          co.coord.warn(`action ${actionId}: could not be read before taking it over (${(e as Error).message})`);
          await new Promise((r) => setTimeout(r, 1000));
          return AGAIN;
        }
        reasons.push(`details: the action could not be read (${(e as Error).message}): conditions that need them fail`);
      }
    }
    const facts = actionFacts(action, clientId);
    const ctx = await this.#context(client, facts);
    let decision: DecisionRecord;
    // One shared read-decide-commit per asset at a time in this process: concurrent decisions
    // of one instance would otherwise invalidate each other's reads and retry without end.
    const releaseWindow = co && this.#longestWindowMs > 0 && facts.asset ? await this.#windowLocks.acquire(facts.asset) : undefined;
    try {
    for (;;) {
      let shared: VelocityRead | undefined;
      if (co && this.#longestWindowMs > 0 && facts.asset) {
        try {
          shared = await co.coord.velocityRead(this.#velocityScope, this.mode, facts.asset, ctx.now - this.#longestWindowMs);
        } catch (e) {
          if (e instanceof CoordinationUnavailableError) return AGAIN;
          throw e;
        }
        this.#sharedWindows.set(facts.asset, shared.entries);
        const ledger = new VelocityLedger();
        let latest = ctx.now;
        for (const v of shared.entries) {
          ledger.add(facts.asset, v.amount, v.at, v.action);
          latest = Math.max(latest, v.at);
        }
        // Another instance's clock may run ahead: count its approvals all the same.
        ctx.velocity = (asset, windowMs) => ledger.usage(asset, windowMs, latest);
      }
      const evaluation = evaluateRules(this.#opts.rules, facts, ctx, this.#opts.defaultDecision);
      const scale = typeof ctx.scale === 'number' ? ctx.scale : undefined;
      decision = {
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
      };
      // Reserve an approval now, synchronously after the check: a concurrent decision sees it.
      if (decision.decision === 'approve' && !this.#markExpired(decision, facts) && facts.asset && facts.amount !== undefined) {
        if (shared && co) {
          // Across instances: added only if no instance changed the window since it was read.
          let committed: boolean;
          try {
            committed = await co.coord.velocityCommit(this.#velocityScope, this.mode, facts.asset, shared.version, { at: ctx.now, action: actionId, amount: facts.amount }, this.#longestWindowMs);
          } catch (e) {
            if (e instanceof CoordinationUnavailableError) return AGAIN;
            throw e;
          }
          if (!committed) {
            // Another instance committed since the read: read again after a short random wait.
            await abortableSleep(2 + Math.random() * 10, this.#closing.signal);
            continue;
          }
        }
        this.#book.velocity[this.mode].add(facts.asset, facts.amount, ctx.now, actionId);
      }
      break;
    }
    } finally {
      releaseWindow?.();
    }
    entry.decision = decision;
    await this.#append({ kind: 'decision', approver: this.#opts.approverId, ...decision, ...(co ? { fence: co.claim.fence, instance: co.coord.instance } : {}) });
    entry.state = this.mode === 'dryRun' || decision.decision === 'hold' || decision.expired ? 'done' : 'open';
    if (this.#book.keepMs > 0) this.#book.velocity[this.mode].prune(ctx.now, this.#book.keepMs);
    const output: ApproverOutput = decision.expired ? 'held' : OUTPUT[decision.decision];
    if (this.mode === 'dryRun' || decision.decision === 'hold' || decision.expired) return done({ decision, output, action });

    const unreserve = () => {
      this.#book.velocity.live.remove(actionId);
      if (co && decision.asset) co.coord.velocityRemove(this.#velocityScope, this.mode, decision.asset, actionId).catch(() => undefined);
    };
    if (decision.decision === 'approve') {
      // Checked again right before the call: the audit write may have taken a while.
      if (this.#markExpired(decision, facts)) {
        unreserve();
        entry.state = 'done';
        await this.#appendResult(decision, { ok: false, sent: false, expired: true });
        return done({ decision, output: 'held', action });
      }
    }
    if (co) {
      // The claim must still be ours right before the call (fencing): else nothing is called.
      let held: 'held' | 'lost' | 'decided';
      try {
        held = await co.coord.renew(co.claim);
      } catch (e) {
        if (!(e instanceof CoordinationUnavailableError)) throw e;
        held = 'lost';
      }
      if (held !== 'held') {
        unreserve();
        entry.state = 'failed';
        await this.#appendResult(decision, { ok: false, sent: false, claim: held === 'decided' ? 'decided elsewhere' : 'lost or Redis unavailable' });
        return AGAIN;
      }
    }
    const call = decision.decision === 'approve' ? approveAction : rejectAction;
    try {
      const res = await call(client, { client_id: clientId, action_id: actionId });
      entry.state = 'done';
      await this.#appendResult(decision, { ok: true, statusCode: res.statusCode });
      return done({ decision, output, action, statusCode: res.statusCode });
    } catch (e) {
      const err = e as Error & { statusCode?: number; code?: unknown };
      entry.state = 'failed';
      unreserve();
      if (co) co.coord.release(co.claim).catch(() => undefined);
      await this.#appendResult(decision, { ok: false, statusCode: err.statusCode ?? 0, code: err.code ?? null, error: err.message }).catch(() => undefined);
      return { decision, output, action, statusCode: err.statusCode || undefined, error: err };
    }
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

  /** Append the result line of `decision`'s call (`ok`, and `statusCode`, `code`, `error` or `sent`/`expired`) to the audit file. */
  #appendResult(decision: DecisionRecord, result: Record<string, unknown>): Promise<unknown> {
    const { mode, action_id, client_id } = decision;
    return this.#append({ kind: 'result', approver: this.#opts.approverId, mode, action_id, client_id, ...result, at: new Date(this.#opts.now()).toISOString() });
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

  /** Wait for the decisions in hand (their calls and audit lines), then release the audit file. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#unregisterLoss?.();
    await Promise.allSettled(Array.from(this.#inFlight));
    await Promise.allSettled(Array.from(this.#finishing));
    await releaseBook(this.auditFile, this.#book);
  }
}
