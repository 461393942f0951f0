/**
 * A draft rule set (rules not deployed yet) and the engine that decides under it, shared by the
 * replay of recorded history (simulate.ts) and the trial of one action typed by hand
 * ({@link tryAction}; {@link Approver.tryAction} with the approver's velocity windows read, not
 * consumed). The rules are the approver's own (rules.ts: compiled and evaluated the same way), so
 * the reasons are the same texts as in `msg.decision.reasons`. Pure: no I/O, no clock of its own.
 * Source: docs/nodes.md "custody-approver", "Simulating a draft".
 */
import { ValidationError } from '../api/errors';
import { DECIMAL_TEXT, decimalsOfScale, fromBaseUnits, toBaseUnits } from '../api/amounts';
import { markExpired } from './facts';
import { compileRules, evaluateRules, type ActionFacts, type CompiledRule, type Decision, type DefaultDecision, type EvaluationContext, type VelocityReport } from './rules';
import type { DecisionRecord } from './types';

/** A rule set as the editor holds it before Deploy: the rules (`ApprovalRule[]`, rules.ts) and the no-match decision. */
export interface PolicyDraft {
  /** The rules in order, as the node's `rules` property stores them (`ApprovalRule[]`). */
  rules: unknown;
  /** What applies when no rule matches: `hold` (the default when absent) or `reject`. */
  defaultDecision?: unknown;
}

/** A draft checked and compiled ({@link compileDraft}). */
export interface CompiledDraft {
  rules: CompiledRule[];
  defaultDecision: DefaultDecision;
  /** The longest velocity window of the rules, ms (0: none). */
  longestWindowMs: number;
}

/**
 * Check and compile a draft.
 * @throws {RulesError} (a {@link ValidationError}) naming each bad field of the rules, e.g.
 *   `rules[2].maxAmount` (compileRules); {@link ValidationError} `rules` when they are not a list;
 *   `defaultDecision` when it is neither `hold` nor `reject`.
 */
export function compileDraft(draft: PolicyDraft): CompiledDraft {
  if (!draft || typeof draft !== 'object') throw new ValidationError('rules', 'a draft: {rules, defaultDecision}');
  if (draft.rules !== undefined && !Array.isArray(draft.rules)) throw new ValidationError('rules', 'a list of rules');
  const rules = compileRules(draft.rules ?? []);
  const d = draft.defaultDecision ?? 'hold';
  if (d !== 'hold' && d !== 'reject') throw new ValidationError('defaultDecision', `hold or reject, got ${JSON.stringify(d)}`);
  return { rules, defaultDecision: d, longestWindowMs: Math.max(0, ...rules.map((r) => r.velocityWindowMs)) };
}

/** What a draft decides for one action. */
export interface DraftDecision {
  decision: Decision;
  /** The rule that decides (0-based index and name), or null when the no-match decision applies. */
  rule: { index: number; name: string } | null;
  /** The deciding rule's conditions in words, after the first unmet condition of each earlier rule (the texts of `msg.decision.reasons`). */
  reasons: string[];
  /** The velocity of the deciding rule, else of the first rule whose velocity limit failed; null when none. */
  velocity: VelocityReport | null;
  /** True when the draft approves but the action (its `expireTime`) or its transaction (`details.expires`) had expired at the decision time: nothing would be approved. */
  expired?: boolean;
}

/** Decide `facts` under `draft` with `ctx`; an approval of an expired action is marked `expired` (as the approver does). */
export function decideUnderDraft(draft: CompiledDraft, facts: ActionFacts, ctx: EvaluationContext): DraftDecision {
  const e = evaluateRules(draft.rules, facts, ctx, draft.defaultDecision);
  const out: DraftDecision = { decision: e.decision, rule: e.rule, reasons: e.reasons, velocity: e.velocity };
  if (e.decision === 'approve') {
    const probe = { reasons: out.reasons } as DecisionRecord;
    if (markExpired(probe, facts, ctx.now)) out.expired = true;
  }
  return out;
}

/**
 * One action typed by hand for {@link tryAction}. Every field but `type` is optional; an absent
 * one is an action without it (a condition that needs it fails, saying so).
 */
export interface TriedAction {
  /** Action type (spec section 2), e.g. `ApproveTransfer`. */
  type: string;
  /** Asset code, e.g. `BTC-TESTNET`. */
  asset?: string;
  /** Amount in base units: digits as text, or a safe integer. */
  amount?: string | number;
  /** Amount in whole units of the asset (`"0.015"`), with `scale`; instead of `amount`. */
  amountDecimal?: string;
  /** The asset's scale (GET /assets: a power of ten, e.g. 100000000); needed by amount bounds and velocity amounts. */
  scale?: number;
  /** Destination: wallet id or address. */
  destination?: string;
  /** The source, a fund id or a wallet id: matched as either (`fundID` and `walletID` take precedence). */
  source?: string;
  /** `details.fundID`. */
  fundID?: string;
  /** The source wallet. */
  walletID?: string;
  /** `details.companyID`. */
  companyID?: string;
  /** `details.reference`. */
  reference?: string;
  /** `details.benefitOf`. */
  benefitOf?: string;
  /** The whitelist answer to assume for the destination (a trial reads no whitelist); absent: not known (the condition fails, saying so). */
  whitelisted?: boolean;
  /** The decision time, epoch ms (default now). */
  at?: number;
  /** The action's `expireTime`, epoch seconds (0 or absent: none). */
  expireTime?: number;
  /** The transaction's `details.expires`, epoch seconds. */
  expires?: number;
}

/** What {@link tryAction} answers: the draft's decision and why, and the facts it decided on. */
export interface TryResult extends DraftDecision {
  /** The facts as decided on: amounts in base units (text) and whole units when the scale is known; `at` epoch ms. */
  facts: { type: string; asset: string | null; amount: string | null; amountDecimal: string | null; scale: number | null; destination: string | null; fundID: string | null; walletID: string | null; reference: string | null; benefitOf: string | null; at: number };
}

/** Velocity usage of a trial: sum (base units) and count of approvals of `asset` in `(now - windowMs, now]`. */
export type VelocityRead = (asset: string, windowMs: number, now: number) => { sum: bigint; count: number };

function opt(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new ValidationError(field, 'text');
  return v;
}

function optNumber(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ValidationError(field, `a number of at least 0, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The facts of a typed action ({@link TriedAction}) and its scale.
 * @throws {ValidationError} naming the field (`action.type`, `action.amount`, `action.scale`, …).
 */
export function triedFacts(a: TriedAction, now: number): { facts: ActionFacts; scale: number | undefined; at: number } {
  if (!a || typeof a !== 'object') throw new ValidationError('action', 'an action: {type, asset, amount, destination, source, reference, at}');
  const type = opt(a.type, 'action.type');
  if (!type) throw new ValidationError('action.type', 'an action type such as ApproveTransfer');
  const scale = optNumber(a.scale, 'action.scale');
  if (scale !== undefined) {
    try {
      decimalsOfScale(scale);
    } catch {
      throw new ValidationError('action.scale', `a power of ten such as 100000000, got ${JSON.stringify(scale)}`);
    }
  }
  let amount: bigint | undefined;
  if (a.amount !== undefined && a.amount !== null && a.amount !== '') {
    if (typeof a.amount === 'number' && Number.isSafeInteger(a.amount) && a.amount >= 0) amount = BigInt(a.amount);
    else if (typeof a.amount === 'string' && /^\d+$/.test(a.amount)) amount = BigInt(a.amount);
    else throw new ValidationError('action.amount', `an integer number of base units, got ${JSON.stringify(a.amount)}`);
  } else if (a.amountDecimal !== undefined && a.amountDecimal !== '') {
    if (typeof a.amountDecimal !== 'string' || !DECIMAL_TEXT.test(a.amountDecimal)) throw new ValidationError('action.amountDecimal', `a decimal number of whole units such as "0.5", got ${JSON.stringify(a.amountDecimal)}`);
    if (scale === undefined) throw new ValidationError('action.scale', 'the asset scale, to read amountDecimal');
    amount = toBaseUnits(a.amountDecimal, scale, 'action.amountDecimal');
  }
  const at = optNumber(a.at, 'action.at') ?? now;
  const source = opt(a.source, 'action.source');
  const facts: ActionFacts = {
    action_id: 'tried',
    client_id: '',
    type,
    expireTime: optNumber(a.expireTime, 'action.expireTime') ?? 0,
    asset: opt(a.asset, 'action.asset'),
    amount,
    destination: opt(a.destination, 'action.destination'),
    companyID: opt(a.companyID, 'action.companyID'),
    fundID: opt(a.fundID, 'action.fundID') ?? source,
    walletID: opt(a.walletID, 'action.walletID') ?? source,
    reference: opt(a.reference, 'action.reference'),
    benefitOf: opt(a.benefitOf, 'action.benefitOf'),
    expires: optNumber(a.expires, 'action.expires'),
    hasDetails: true,
  };
  if (a.whitelisted !== undefined && typeof a.whitelisted !== 'boolean') throw new ValidationError('action.whitelisted', 'true or false');
  return { facts, scale, at };
}

/**
 * Decide one action typed by hand under a draft: which rule decides it and why. Pure: nothing is
 * counted in any window, nothing is written.
 * @param velocity the approvals already in the windows (read, not consumed); none when absent.
 * @param now the clock, epoch ms (default Date.now): the decision time when the action gives none.
 * @throws {ValidationError} naming the field of a bad draft (`rules[2].maxAmount`, `defaultDecision`) or action (`action.amount`).
 */
export function tryAction(opts: PolicyDraft & { action: TriedAction; velocity?: VelocityRead; now?: number }): TryResult {
  const draft = compileDraft(opts);
  const { facts, scale, at } = triedFacts(opts.action, opts.now ?? Date.now());
  const read = opts.velocity;
  const whitelisted = opts.action.whitelisted;
  const ctx: EvaluationContext = {
    now: at,
    scale: scale ?? (facts.asset ? new Error('not given: set action.scale') : undefined),
    whitelist: whitelisted === undefined ? new Error('not given: set action.whitelisted') : whitelisted ? [{ asset: '', address: facts.destination ?? '' }] : [],
    shortCodes: new Map(),
    velocity: (asset, windowMs) => (read ? read(asset, windowMs, at) : { sum: 0n, count: 0 }),
  };
  const d = decideUnderDraft(draft, facts, ctx);
  const amount = facts.amount;
  return {
    ...d,
    facts: {
      type: facts.type,
      asset: facts.asset ?? null,
      amount: amount !== undefined ? amount.toString() : null,
      amountDecimal: amount !== undefined && scale !== undefined ? fromBaseUnits(amount, scale) : null,
      scale: scale ?? null,
      destination: facts.destination ?? null,
      fundID: facts.fundID ?? null,
      walletID: facts.walletID ?? null,
      reference: facts.reference ?? null,
      benefitOf: facts.benefitOf ?? null,
      at,
    },
  };
}
