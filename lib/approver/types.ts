/**
 * The approver's options and what it hands back per action (approver.ts): the decision record
 * (`msg.decision`, and the `decision` line of the audit file, docs/audit.md), the output it goes
 * to, and the defaults of the options.
 */
import type { CustodyClient } from '../client/client';
import type { Coordinator } from '../coordination/coordinator';
import type { AuditHead, AuditLogOptions, HeadHook } from '../audit/log';
import type { CallOutcome } from '../actions/outcome';
import type { CompiledRule, Decision, DefaultDecision, VelocityReport } from './rules';

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
   * lib/api/errors.ts `OutcomeUnknownError` for the action call (still unknown after {@link ApproverOptions.reportUnknownAfterMs}).
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
  /** How the audit file rotates and how often it reports its head (audit-log.ts; defaults: 64 MiB segments, a new one each UTC day; a head every 1,000 lines and every hour). Taken by the first approver that opens the file in this process. */
  auditOptions?: Pick<AuditLogOptions, 'maxSegmentBytes' | 'rotateDaily' | 'closeCheckpointBytes' | 'headEveryLines' | 'headEveryMs'>;
  /**
   * Told the audit file's head ({@link AuditHead}: every `headEveryLines` lines, every
   * `headEveryMs`, and when the file closes), to be logged off the machine and checked later
   * with `custodyflow-audit verify <file> --head <seq>:<hash>` (docs/audit.md). When several
   * approvers share the file, the one that has used it longest is told (each head once).
   */
  onAuditHead?: HeadHook;
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

/** Default {@link ApproverOptions.pendingSettlesAfterMs}: lib/actions/resolve.ts, 60 s. */
export { PENDING_SETTLES_AFTER_MS } from '../actions/resolve';

/** The options with their defaults filled in. */
export type ResolvedOptions = Required<Pick<ApproverOptions, 'defaultDecision' | 'mode' | 'cacheMs' | 'now' | 'reportUnknownAfterMs' | 'pendingSettlesAfterMs'>> & ApproverOptions;

/** What the coordination Redis keeps per decided action (JSON): the decision, its output and who decided. */
export interface DecidedRecord {
  decision: DecisionRecord;
  output: ApproverOutput;
  instance: string;
}

/** The output of each decision (an expired one goes to `held` instead). */
export const OUTPUT: Record<Decision, ApproverOutput> = { approve: 'approved', reject: 'rejected', hold: 'held' };
