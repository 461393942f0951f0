/**
 * Approval rules of the approver node: their stored shape, their compilation
 * (checked once, at deploy) and their evaluation against one core client action (spec
 * section 2 "Action", its `details`; OpenAPI ActionDetailApproveTransfer / ApproveWithdraw /
 * ApproveNewWalletConnect). Ordered, first match wins, all conditions of a rule must hold,
 * an empty condition is no condition. A condition whose data is missing fails and says which
 * data: nothing is ever approved on a guess.
 *
 * Pure: no I/O. What needs the API (asset scales, fund whitelists, short codes) is read
 * beforehand into an {@link EvaluationContext} (see approver.ts).
 */
import { ValidationError } from '../api/errors';
import { DECIMAL_TEXT, fromBaseUnits, toBaseUnits } from '../api/amounts';

/** A rule's decision: approve (PUT), reject (DELETE), or hold (leave the action pending for a person). */
export type Decision = 'approve' | 'reject' | 'hold';

/** What the node does when no rule matches: hold (the default) or reject; never approve (deny by default). */
export type DefaultDecision = 'hold' | 'reject';

/** Weekday names as stored in {@link ApprovalRule.days}, Monday first. */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

/** A weekday of {@link WEEKDAYS}. */
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * One rule as the edit dialog stores it in the node's `rules` property (flows.json). Every
 * condition is optional: an empty list, empty text or false is no condition.
 */
export interface ApprovalRule {
  /** Shown in `msg.decision.rule.name` and the audit file; required. */
  name: string;
  decision: Decision;
  /** Action types (spec section 2), e.g. `ApproveTransfer`; [] = any. */
  actionTypes?: string[];
  /** Asset codes (`details.asset`), e.g. `BTC-TESTNET`; [] = any. */
  assets?: string[];
  /** Lower bound of `details.amount`, inclusive, as decimal text in whole units of the asset ("0.5"); '' = none. */
  minAmount?: string;
  /** Upper bound of `details.amount`, inclusive, decimal text in whole units; '' = none. */
  maxAmount?: string;
  /** Destination allowlist: wallet ids, short codes (three words), L1 addresses; [] = any. */
  destinations?: string[];
  /** The destination must be in the whitelist of the action's fund (GET .../fund/{fund_id}/whitelist). */
  destinationWhitelisted?: boolean;
  /** Source allowlist: fund ids (`details.fundID`) or wallet ids / short codes; [] = any. */
  sources?: string[];
  /** Velocity: the sum approved per asset over the window, this action included, at most this (decimal whole units); '' = none. */
  velocityAmount?: string;
  /** Velocity: at most this many approvals per asset over the window, this one included (integer text); '' = none. */
  velocityCount?: string;
  /** The rolling window of the velocity limits, in hours (number text, default 24). */
  velocityWindowHours?: string | number;
  /** Weekdays on which the rule can match, in `timeZone`; [] = every day. */
  days?: string[];
  /** Start of the daily window, `HH:MM` (24 h) in `timeZone`, inclusive; '' with `to` '' = the whole day. */
  from?: string;
  /** End of the daily window, `HH:MM`, exclusive; `from` > `to` wraps midnight. */
  to?: string;
  /** IANA time zone of the weekly window, e.g. `Europe/Zurich`; default `UTC`. */
  timeZone?: string;
  /** A JavaScript regular expression that `details.reference` must match; '' = none. */
  referencePattern?: string;
  /** A JavaScript regular expression that `details.benefitOf` must match; '' = none. */
  benefitOfPattern?: string;
}

/** The facts of one action that the rules read, taken from the action and its `details`. */
export interface ActionFacts {
  action_id: string;
  client_id: string;
  /** Action type, e.g. `ApproveTransfer`. */
  type: string;
  /** Action expiry, epoch seconds (0 or absent: none, e.g. wallet connection requests). */
  expireTime: number;
  /** `details.asset`. */
  asset?: string;
  /** `details.amount` in base units. */
  amount?: bigint;
  /** `details.recipientAddress` (spec) or `details.recipientID` (OpenAPI transfer detail). */
  destination?: string;
  /** `details.companyID`. */
  companyID?: string;
  /** `details.fundID`. */
  fundID?: string;
  /** The source wallet when the action names it (a wallet connection request's `details.wallet.walletID`). */
  walletID?: string;
  /** `details.reference`. */
  reference?: string;
  /** `details.benefitOf`. */
  benefitOf?: string;
  /** `details.expires`, epoch seconds: the transaction's own expiry. */
  expires?: number;
  /** True when the action came with, or was read with, its `details`. */
  hasDetails: boolean;
}

/** Used and limit of the velocity limit a decision met or failed, amounts as decimal text in whole units. */
export interface VelocityReport {
  /** Sum approved in the window, this action included (decimal whole units). */
  used: string;
  /** The rule's `velocityAmount`, or null when it has only a count limit. */
  limit: string | null;
  /** Approvals in the window, this one included. */
  count: number;
  /** The rule's `velocityCount`, or null when none. */
  countLimit: number | null;
  /** The window, in seconds. */
  window: number;
}

/** What the approver read through the API for one action (approver.ts fills it). */
export interface EvaluationContext {
  /** Now, epoch milliseconds. */
  now: number;
  /** The asset's scale (GET /assets), or the error that kept it from being known. */
  scale?: number | Error;
  /** The fund's whitelisted addresses (GET .../whitelist), or the error of that read; undefined when no rule needs it. */
  whitelist?: Array<{ asset: string; address: string }> | Error;
  /** Short code -> wallet id (GET /wallet/{short_code}), or the error of that read. */
  shortCodes: Map<string, string | Error>;
  /**
   * Approvals in the window of `windowMs` for `asset` so far: their sum (base units) and count,
   * reserved ones included.
   */
  velocity(asset: string, windowMs: number): { sum: bigint; count: number };
}

/** A condition's verdict: whether it holds, and in words why (naming the data it read). */
interface Verdict {
  ok: boolean;
  reason: string;
  velocity?: VelocityReport;
}

/** A compiled condition: checked once at deploy, evaluated per action. */
type Condition = (facts: ActionFacts, ctx: EvaluationContext) => Verdict;

/** A rule checked and compiled once (see {@link compileRules}). */
export interface CompiledRule {
  /** Position in the list, 0-based. */
  index: number;
  name: string;
  decision: Decision;
  conditions: Condition[];
  /** True when a condition needs the fund's whitelist. */
  needsWhitelist: boolean;
  /** True when a condition needs the asset's scale (amount bounds, velocity amount). */
  needsScale: boolean;
  /** Short codes named by the rule's destinations or sources, to resolve to wallet ids. */
  shortCodes: string[];
  /** The velocity window in ms, 0 when the rule has no velocity limit. */
  velocityWindowMs: number;
}

/** The outcome of evaluating the rules for one action. */
export interface Evaluation {
  decision: Decision;
  /** The rule that matched, or null when the default decision applied. */
  rule: { index: number; name: string } | null;
  /** The matched rule's conditions in words, after the failing condition of each earlier rule. */
  reasons: string[];
  /** The velocity of the matched rule, else of the first rule whose velocity limit failed; null when none. */
  velocity: VelocityReport | null;
}

const DECISIONS: readonly Decision[] = ['approve', 'reject', 'hold'];
const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const MAX_LIST = 1000;

function list(v: unknown, field: string): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (!Array.isArray(v)) throw new ValidationError(field, 'a list of strings');
  if (v.length > MAX_LIST) throw new ValidationError(field, `at most ${MAX_LIST} entries`);
  return v.map((x, i) => {
    if (typeof x !== 'string') throw new ValidationError(`${field}[${i}]`, 'a string');
    return x.trim();
  }).filter((x) => x !== '');
}

function text(v: unknown, field: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string' && typeof v !== 'number') throw new ValidationError(field, 'text');
  return String(v).trim();
}

function decimal(v: unknown, field: string): string {
  const t = text(v, field);
  if (t !== '' && !DECIMAL_TEXT.test(t)) throw new ValidationError(field, `a decimal number of whole units such as "0.5", got ${JSON.stringify(t)}`);
  return t;
}

function regex(v: unknown, field: string): RegExp | undefined {
  const t = typeof v === 'string' ? v : text(v, field);
  if (t === '') return undefined;
  if (t.length > 1000) throw new ValidationError(field, 'a regular expression of at most 1000 characters');
  try {
    return new RegExp(t);
  } catch (e) {
    throw new ValidationError(field, `a JavaScript regular expression: ${(e as Error).message}`);
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * A formatter of weekday, hour and minute in `timeZone`, cached per zone.
 * @throws {ValidationError} (field `field`) when `timeZone` is not an IANA time zone name.
 */
function zoneFormatter(timeZone: string, field: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    } catch {
      throw new ValidationError(field, `an IANA time zone name such as "Europe/Zurich", got ${JSON.stringify(timeZone)}`);
    }
    formatters.set(timeZone, f);
  }
  return f;
}

/** Weekday and minute of the day of `epochMs` in the zone of `f`. */
function localTime(f: Intl.DateTimeFormat, epochMs: number): { day: Weekday; minutes: number } {
  let day = 'mon';
  let hour = 0;
  let minute = 0;
  for (const p of f.formatToParts(epochMs)) {
    if (p.type === 'weekday') day = p.value.toLowerCase();
    else if (p.type === 'hour') hour = Number(p.value);
    else if (p.type === 'minute') minute = Number(p.value);
  }
  return { day: day as Weekday, minutes: hour * 60 + minute };
}

/** Whole-unit bound -> base units for a scale, memoised per scale. @throws ValidationError when the bound has more decimals than the scale allows. */
function boundIn(bound: string, field: string): (scale: number) => bigint {
  const byScale = new Map<number, bigint>();
  return (scale) => {
    let v = byScale.get(scale);
    if (v === undefined) {
      v = toBaseUnits(bound, scale, field);
      byScale.set(scale, v);
    }
    return v;
  };
}

/** Compare two decimal texts of whole units exactly: negative, 0 or positive. */
function compareDecimals(a: string, b: string): number {
  const places = Math.max((a.split('.')[1] ?? '').length, (b.split('.')[1] ?? '').length);
  const scale = 10 ** Math.min(places, 18);
  const [x, y] = [toBaseUnits(a, scale), toBaseUnits(b, scale)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The scale from the context, or a failing verdict naming the missing data. */
function scaleOf(facts: ActionFacts, ctx: EvaluationContext, what: string): number | Verdict {
  if (typeof ctx.scale === 'number') return ctx.scale;
  const why = ctx.scale instanceof Error ? ctx.scale.message : 'not read';
  return { ok: false, reason: `${what}: the scale of asset ${JSON.stringify(facts.asset ?? '')} is unknown (${why})` };
}

function show(amount: bigint, scale: number): string {
  return fromBaseUnits(amount, scale);
}

const ETH_ADDRESS = /^0x[0-9a-f]{40}$/i;

/** Addresses compare exactly, but 0x addresses without regard to case (EIP-55 mixed case is a checksum). */
function sameAddress(a: string, b: string): boolean {
  return a === b || (ETH_ADDRESS.test(a) && ETH_ADDRESS.test(b) && a.toLowerCase() === b.toLowerCase());
}

/**
 * Whether the action's destination is in `whitelist` (GET .../fund/{fund_id}/whitelist: address
 * and asset), as the `destinationWhitelisted` condition reads it: the same address (0x addresses
 * without regard to case), for the action's asset when both name one.
 */
export function inWhitelist(facts: Pick<ActionFacts, 'destination' | 'asset'>, whitelist: ReadonlyArray<{ asset: string; address: string }>): boolean {
  const dest = facts.destination;
  return dest !== undefined && whitelist.some((w) => sameAddress(w.address, dest) && (!facts.asset || !w.asset || w.asset === facts.asset));
}

/** True when `entry` (wallet id, short code or address) names `value`, resolving a short code through the context. */
function names(entry: string, value: string, ctx: EvaluationContext): boolean {
  if (sameAddress(entry, value)) return true;
  const resolved = /\s/.test(entry) ? ctx.shortCodes.get(entry) : undefined;
  return typeof resolved === 'string' && resolved === value;
}

/** Short codes among `entries` that no read resolved (their errors), to name in a reason. */
function unresolved(entries: string[], ctx: EvaluationContext): string[] {
  return entries.filter((e) => ctx.shortCodes.get(e) instanceof Error).map((e) => `${JSON.stringify(e)} (${(ctx.shortCodes.get(e) as Error).message})`);
}

/**
 * The rules of a node refused at deploy: every bad field of every rule. `field` and the start of
 * the message are the first bad field's; the message lists each, in rule order, separated by
 * `; ` (`rules[0].name: a name for the rule; rules[0].decision: one of approve, reject, hold,
 * got "allow"; rules[2].maxAmount: ...`). `code` is `EINPUT`.
 */
export class RulesError extends ValidationError {
  /** Each bad field's error, in rule order. */
  readonly errors: readonly ValidationError[];
  /** @param errors each bad field's error (at least one). */
  constructor(errors: readonly ValidationError[]) {
    const first = errors[0];
    super(first.field, errors.map((e) => e.message).join('; ').slice(first.field.length + 2));
    this.errors = errors;
  }
}

/**
 * Check and compile the rules of a node, once, at deploy.
 * @param raw the node's `rules` property: an array of {@link ApprovalRule}.
 * @returns the compiled rules in order.
 * @throws {RulesError} (a {@link ValidationError}) listing every bad field of every rule, each
 *   named, e.g. `rules[2].maxAmount`: a rule that is not an object, has no name, an unknown
 *   decision, a bad decimal, regular expression, time or time zone;
 *   {@link ValidationError} `rules: a list of rules` when `raw` is not a list.
 */
export function compileRules(raw: unknown): CompiledRule[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (!Array.isArray(raw)) throw new ValidationError('rules', 'a list of rules');
  const problems: ValidationError[] = [];
  const rules = raw.map((r, index) => compileRule(r, index, problems));
  if (problems.length) throw new RulesError(problems);
  return rules;
}

/**
 * One rule compiled; each bad field is added to `problems` (and a safe stand-in used, so the
 * rest of the rule is still checked).
 */
function compileRule(r: unknown, index: number, problems: ValidationError[]): CompiledRule {
  const at = `rules[${index}]`;
  /** `f()`, or `fallback` with its ValidationError added to `problems`. */
  const checked = <T>(f: () => T, fallback: T): T => {
    try {
      return f();
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      problems.push(e);
      return fallback;
    }
  };
  const bad = (field: string, expected: string): void => {
    problems.push(new ValidationError(field, expected));
  };
  if (!r || typeof r !== 'object' || Array.isArray(r)) {
    bad(at, 'a rule object');
    return { index, name: '', decision: 'hold', conditions: [], needsWhitelist: false, needsScale: false, shortCodes: [], velocityWindowMs: 0 };
  }
  const rule = r as ApprovalRule;
  const name = checked(() => text(rule.name, `${at}.name`), '');
  if (name === '') bad(`${at}.name`, 'a name for the rule');
  if (!DECISIONS.includes(rule.decision)) bad(`${at}.decision`, `one of ${DECISIONS.join(', ')}, got ${JSON.stringify(rule.decision)}`);
  const conditions: Condition[] = [];
  let needsWhitelist = false;
  let needsScale = false;
  const shortCodes: string[] = [];

  const types = checked(() => list(rule.actionTypes, `${at}.actionTypes`), []);
  if (types.length) {
    const set = new Set(types);
    conditions.push((f) =>
      set.has(f.type) ? { ok: true, reason: `type ${f.type} is one of ${types.join(', ')}` } : { ok: false, reason: `type ${f.type || '(none)'} is not one of ${types.join(', ')}` },
    );
  }

  const assets = checked(() => list(rule.assets, `${at}.assets`), []);
  if (assets.length) {
    const set = new Set(assets);
    conditions.push((f) => {
      if (!f.asset) return { ok: false, reason: `asset: the action names no asset (${f.hasDetails ? 'details.asset missing' : 'no details'})` };
      return set.has(f.asset) ? { ok: true, reason: `asset ${f.asset} is one of ${assets.join(', ')}` } : { ok: false, reason: `asset ${f.asset} is not one of ${assets.join(', ')}` };
    });
  }

  const min = checked(() => decimal(rule.minAmount, `${at}.minAmount`), '');
  const max = checked(() => decimal(rule.maxAmount, `${at}.maxAmount`), '');
  if (min !== '' && max !== '' && compareDecimals(min, max) > 0) bad(`${at}.minAmount`, `at most maxAmount (${max}), got ${min}`);
  if (min !== '' || max !== '') {
    needsScale = true;
    const minIn = min !== '' ? boundIn(min, `${at}.minAmount`) : undefined;
    const maxIn = max !== '' ? boundIn(max, `${at}.maxAmount`) : undefined;
    const bounds = `${min !== '' ? `at least ${min}` : ''}${min !== '' && max !== '' ? ' and ' : ''}${max !== '' ? `at most ${max}` : ''}`;
    conditions.push((f, ctx) => {
      if (f.amount === undefined) return { ok: false, reason: `amount: the action has no amount (${f.hasDetails ? 'details.amount missing' : 'no details'})` };
      const scale = scaleOf(f, ctx, 'amount');
      if (typeof scale !== 'number') return scale;
      let lo: bigint | undefined;
      let hi: bigint | undefined;
      try {
        lo = minIn?.(scale);
        hi = maxIn?.(scale);
      } catch (e) {
        return { ok: false, reason: `amount: ${(e as Error).message}` };
      }
      const shown = `${show(f.amount, scale)} ${f.asset}`;
      if (lo !== undefined && f.amount < lo) return { ok: false, reason: `amount ${shown} is below ${min}` };
      if (hi !== undefined && f.amount > hi) return { ok: false, reason: `amount ${shown} is above ${max}` };
      return { ok: true, reason: `amount ${shown} is ${bounds}` };
    });
  }

  const destinations = checked(() => list(rule.destinations, `${at}.destinations`), []);
  if (destinations.length) {
    shortCodes.push(...destinations.filter((d) => /\s/.test(d)));
    conditions.push((f, ctx) => {
      if (!f.destination) return { ok: false, reason: `destination: the action names none (${f.hasDetails ? 'details.recipientAddress missing' : 'no details'})` };
      if (destinations.some((d) => names(d, f.destination!, ctx))) return { ok: true, reason: `destination ${f.destination} is in the allowlist` };
      const bad = unresolved(destinations, ctx);
      return { ok: false, reason: `destination ${f.destination} is not in the allowlist${bad.length ? `; short codes not resolved: ${bad.join(', ')}` : ''}` };
    });
  }

  if (rule.destinationWhitelisted === true) {
    needsWhitelist = true;
    conditions.push((f, ctx) => {
      if (!f.destination) return { ok: false, reason: `whitelist: the action names no destination (${f.hasDetails ? 'details.recipientAddress missing' : 'no details'})` };
      if (!f.companyID || !f.fundID) return { ok: false, reason: 'whitelist: the action names no company or fund (details.companyID, details.fundID)' };
      if (ctx.whitelist instanceof Error || ctx.whitelist === undefined) {
        return { ok: false, reason: `whitelist: the whitelist of fund ${f.fundID} could not be read (${ctx.whitelist ? ctx.whitelist.message : 'not read'})` };
      }
      return inWhitelist(f, ctx.whitelist)
        ? { ok: true, reason: `destination ${f.destination} is in the whitelist of fund ${f.fundID}` }
        : { ok: false, reason: `destination ${f.destination} is not in the whitelist of fund ${f.fundID}${f.asset ? ` for ${f.asset}` : ''}` };
    });
  }

  const sources = checked(() => list(rule.sources, `${at}.sources`), []);
  if (sources.length) {
    shortCodes.push(...sources.filter((s) => /\s/.test(s)));
    conditions.push((f, ctx) => {
      if (!f.fundID && !f.walletID) return { ok: false, reason: `source: the action names no fund or wallet (${f.hasDetails ? 'details.fundID missing' : 'no details'})` };
      const hit = sources.find((s) => (f.fundID && s === f.fundID) || (f.walletID && names(s, f.walletID, ctx)));
      const what = [f.fundID && `fund ${f.fundID}`, f.walletID && `wallet ${f.walletID}`].filter(Boolean).join(', ');
      return hit ? { ok: true, reason: `source ${what} is in the allowlist` } : { ok: false, reason: `source ${what} is not in the allowlist` };
    });
  }

  const vAmount = checked(() => decimal(rule.velocityAmount, `${at}.velocityAmount`), '');
  const vCountText = checked(() => text(rule.velocityCount, `${at}.velocityCount`), '');
  const vCountOk = vCountText === '' || /^\d+$/.test(vCountText);
  if (!vCountOk) bad(`${at}.velocityCount`, `a whole number, got ${JSON.stringify(vCountText)}`);
  const vCount = vCountText === '' || !vCountOk ? null : Number(vCountText);
  let velocityWindowMs = 0;
  if (vAmount !== '' || vCount !== null) {
    const hoursText = checked(() => text(rule.velocityWindowHours, `${at}.velocityWindowHours`), '') || '24';
    let hours = Number(hoursText);
    if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 366) {
      bad(`${at}.velocityWindowHours`, `a number of hours above 0 and at most 8784, got ${JSON.stringify(hoursText)}`);
      hours = 24;
    }
    velocityWindowMs = Math.round(hours * 3600_000);
    const windowMs = velocityWindowMs;
    const window = Math.round(windowMs / 1000);
    if (vAmount !== '') needsScale = true;
    const limitIn = vAmount !== '' ? boundIn(vAmount, `${at}.velocityAmount`) : undefined;
    conditions.push((f, ctx) => {
      if (!f.asset || f.amount === undefined) return { ok: false, reason: `velocity: the action has no asset or amount (${f.hasDetails ? 'details.asset, details.amount' : 'no details'})` };
      const { sum, count } = ctx.velocity(f.asset, windowMs);
      const used = sum + f.amount;
      const n = count + 1;
      let scale = typeof ctx.scale === 'number' ? ctx.scale : undefined;
      let limit: bigint | undefined;
      if (limitIn) {
        const s = scaleOf(f, ctx, 'velocity');
        if (typeof s !== 'number') return s;
        scale = s;
        try {
          limit = limitIn(s);
        } catch (e) {
          return { ok: false, reason: `velocity: ${(e as Error).message}` };
        }
      }
      const usedText = scale !== undefined ? show(used, scale) : `${used} base units`;
      const velocity: VelocityReport = { used: usedText, limit: vAmount || null, count: n, countLimit: vCount, window };
      const span = `${hoursText} h`;
      if (limit !== undefined && used > limit) return { ok: false, reason: `velocity: ${usedText} ${f.asset} approved in ${span} with this action, above ${vAmount}`, velocity };
      if (vCount !== null && n > vCount) return { ok: false, reason: `velocity: ${n} approvals of ${f.asset} in ${span} with this action, above ${vCount}`, velocity };
      const parts = [limit !== undefined && `${usedText} of ${vAmount} ${f.asset}`, vCount !== null && `${n} of ${vCount} approvals`].filter(Boolean).join(', ');
      return { ok: true, reason: `velocity: ${parts} in ${span} with this action`, velocity };
    });
  }

  const days = checked(() => list(rule.days, `${at}.days`), []).map((d) => d.toLowerCase());
  const badDay = days.find((d) => !(WEEKDAYS as readonly string[]).includes(d));
  if (badDay !== undefined) bad(`${at}.days`, `weekdays among ${WEEKDAYS.join(', ')}, got ${JSON.stringify(badDay)}`);
  const from = checked(() => text(rule.from, `${at}.from`), '');
  const to = checked(() => text(rule.to, `${at}.to`), '');
  const fromOk = from === '' || HHMM.test(from);
  const toOk = to === '' || HHMM.test(to);
  if (!fromOk) bad(`${at}.from`, `a time HH:MM (24 h), got ${JSON.stringify(from)}`);
  if (!toOk) bad(`${at}.to`, `a time HH:MM (24 h), got ${JSON.stringify(to)}`);
  if (from !== '' && from === to) bad(`${at}.to`, `a time other than from (${from}): an empty window never matches`);
  else if (fromOk && toOk && (from === '') !== (to === '')) bad(`${at}.${from === '' ? 'from' : 'to'}`, 'a time HH:MM: a daily window needs both from and to');
  const timeZone = checked(() => text(rule.timeZone, `${at}.timeZone`), '') || 'UTC';
  const formatter = checked(() => zoneFormatter(timeZone, `${at}.timeZone`), zoneFormatter('UTC', `${at}.timeZone`));
  if (days.length || from !== '') {
    const daySet = new Set(days);
    const minutesOf = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
    const start = from === '' ? 0 : minutesOf(from);
    const end = to === '' ? 24 * 60 : minutesOf(to);
    const spec = `${days.length ? days.join(',') : 'every day'}${from !== '' ? ` ${from}-${to}` : ''} ${timeZone}`;
    conditions.push((_f, ctx) => {
      const { day, minutes } = localTime(formatter, ctx.now);
      const dayOk = daySet.size === 0 || daySet.has(day);
      const timeOk = start <= end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
      const local = `${day} ${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
      return dayOk && timeOk ? { ok: true, reason: `time ${local} is within ${spec}` } : { ok: false, reason: `time ${local} is outside ${spec}` };
    });
  }

  for (const [field, key, label] of [
    ['referencePattern', 'reference', 'details.reference'],
    ['benefitOfPattern', 'benefitOf', 'details.benefitOf'],
  ] as const) {
    const re = checked(() => regex(rule[field], `${at}.${field}`), undefined);
    if (!re) continue;
    conditions.push((f) => {
      const v = f[key];
      if (v === undefined) return { ok: false, reason: `${key}: the action has none (${f.hasDetails ? `${label} missing` : 'no details'})` };
      re.lastIndex = 0;
      return re.test(v) ? { ok: true, reason: `${key} ${JSON.stringify(v)} matches /${re.source}/` } : { ok: false, reason: `${key} ${JSON.stringify(v)} does not match /${re.source}/` };
    });
  }

  return { index, name, decision: rule.decision, conditions, needsWhitelist, needsScale, shortCodes, velocityWindowMs };
}

/**
 * Decide one action: the first rule whose conditions all hold gives the decision; when none
 * does, `defaultDecision`.
 * @param rules compiled by {@link compileRules}.
 * @param facts the action's facts.
 * @param ctx what was read through the API, the clock and the velocity windows.
 * @param defaultDecision hold or reject.
 */
export function evaluateRules(rules: readonly CompiledRule[], facts: ActionFacts, ctx: EvaluationContext, defaultDecision: DefaultDecision): Evaluation {
  const reasons: string[] = [];
  let velocity: VelocityReport | null = null;
  for (const rule of rules) {
    const held: string[] = [];
    let failed: Verdict | undefined;
    let ruleVelocity: VelocityReport | undefined;
    for (const c of rule.conditions) {
      const v = c(facts, ctx);
      if (v.velocity) ruleVelocity = v.velocity;
      if (!v.ok) {
        failed = v;
        break;
      }
      held.push(v.reason);
    }
    if (!failed) {
      reasons.push(`rule ${rule.index + 1} "${rule.name}" matched${held.length ? '' : ' (no conditions)'}`, ...held);
      return { decision: rule.decision, rule: { index: rule.index, name: rule.name }, reasons, velocity: ruleVelocity ?? velocity };
    }
    if (failed.velocity && !velocity) velocity = failed.velocity;
    reasons.push(`rule ${rule.index + 1} "${rule.name}" did not match: ${failed.reason}`);
  }
  reasons.push(`no rule matched: default decision ${defaultDecision}`);
  return { decision: defaultDecision, rule: null, reasons, velocity };
}
