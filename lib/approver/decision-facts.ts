/**
 * The facts of a decision as its audit line records them (the `facts` object of a `decision`
 * line, docs/audit.md "The decision line"), and those facts read back for a replay
 * (simulate.ts): every fact the rules read (rules.ts) is either on the line or known to be
 * missing from it. A line written before `facts` was recorded has only its top-level fields
 * (type, asset, amount, destination, decision time, `expireTime`): a condition that reads a
 * fact it lacks fails, and the replay counts the action as not replayable instead of guessing.
 */
import { inWhitelist, type ActionFacts, type EvaluationContext } from './rules';

/**
 * The `facts` object of a `decision` audit line: what the rules could read beside the line's
 * top-level `type`, `asset`, `amount` (base units), `destination`, `decidedAt` and `expireTime`.
 * `null` means the action had none (or, for `whitelisted`, that it was not read). Source:
 * docs/audit.md "The decision line", docs/nodes.md "custody-approver".
 */
export interface DecisionFacts {
  /** The asset's `scale` (GET /assets: a power of ten, e.g. 100000000 for 8 decimals); null when the action names no asset or it could not be read (`scaleError`). */
  scale: number | null;
  /** Why the scale could not be read (the read's error message). */
  scaleError?: string;
  /** `details.fundID`: the source fund. */
  fundID: string | null;
  /** The source wallet when the action names one (a wallet connection request's `details.wallet.walletID`). */
  walletID: string | null;
  /** `details.companyID`. */
  companyID: string | null;
  /** `details.reference`. */
  reference: string | null;
  /** `details.benefitOf`. */
  benefitOf: string | null;
  /**
   * The whitelist answer the rules used: true when the destination was in the fund's whitelist
   * (GET /company/{company_id}/fund/{fund_id}/whitelist), false when not; null when it was not
   * read (no rule needed it, or the action names no company, fund or destination), or could not
   * be read (`whitelistError`).
   */
  whitelisted: boolean | null;
  /** Why the whitelist could not be read (the read's error message). */
  whitelistError?: string;
  /** `details.expires`, epoch seconds: the transaction's own expiry; null when none. */
  expires: number | null;
  /** True when the action came with, or was read with, its `details`. */
  details: boolean;
  /** The short codes the rules name, with the wallet id each was resolved to (GET /wallet/{short_code}); absent when the rules name none. A code that could not be resolved is left out. */
  shortCodes?: Record<string, string>;
}

/** The facts of `facts` and `ctx` (what the approver read for this action) as a decision line records them. */
export function recordedFacts(facts: ActionFacts, ctx: EvaluationContext): DecisionFacts {
  const out: DecisionFacts = {
    scale: typeof ctx.scale === 'number' ? ctx.scale : null,
    fundID: facts.fundID ?? null,
    walletID: facts.walletID ?? null,
    companyID: facts.companyID ?? null,
    reference: facts.reference ?? null,
    benefitOf: facts.benefitOf ?? null,
    whitelisted: Array.isArray(ctx.whitelist) ? inWhitelist(facts, ctx.whitelist) : null,
    expires: facts.expires ?? null,
    details: facts.hasDetails,
  };
  if (ctx.scale instanceof Error) out.scaleError = ctx.scale.message;
  if (ctx.whitelist instanceof Error) out.whitelistError = ctx.whitelist.message;
  if (ctx.shortCodes.size > 0) {
    const codes: Record<string, string> = {};
    for (const [code, id] of ctx.shortCodes) if (typeof id === 'string') codes[code] = id;
    out.shortCodes = codes;
  }
  return out;
}

/** The facts a replay read that its line does not record (names such as `reference`, `scale`), reset per line. */
export class MissingReads {
  /** Every read of a fact the line lacks, in order (a name per read). */
  readonly reads: string[] = [];
  /** Record a read of the missing fact `name`. */
  miss(name: string): void {
    this.reads.push(name);
  }
}

/** Top-level fields of a decision line read by a replay. */
export interface DecisionLineFields {
  action_id: string;
  client_id: string;
  type?: string;
  asset?: string | null;
  amount?: string | null;
  amountDecimal?: string | null;
  destination?: string | null;
  decidedAt: string;
  expireTime?: number;
  facts?: DecisionFacts;
}

/** Why a fact is missing on a line written before decision lines recorded facts. */
const NOT_RECORDED = 'not recorded on this decision line (written before decision lines recorded facts)';

/**
 * The {@link ActionFacts} of a decision line for a replay: from its `facts` when it has them;
 * else the top-level fields, and each other fact a getter that notes the read in `missing` and
 * answers undefined (the condition reading it then fails, and the replay counts the action as
 * not replayable).
 */
export class ReplayFacts implements ActionFacts {
  readonly action_id: string;
  readonly client_id: string;
  readonly type: string;
  readonly expireTime: number;
  readonly asset?: string;
  readonly amount?: bigint;
  readonly destination?: string;
  readonly expires?: number;
  readonly hasDetails: boolean;
  readonly #f: DecisionFacts | undefined;
  readonly #missing: MissingReads;

  /** @throws {Error} when the line's `amount` is not digits (a damaged line: not replayable). */
  constructor(line: DecisionLineFields, missing: MissingReads) {
    const f = line.facts && typeof line.facts === 'object' ? line.facts : undefined;
    this.#f = f;
    this.#missing = missing;
    this.action_id = line.action_id;
    this.client_id = line.client_id;
    this.type = typeof line.type === 'string' ? line.type : '';
    this.expireTime = Number(line.expireTime) || 0;
    if (line.asset) this.asset = line.asset;
    if (line.amount !== null && line.amount !== undefined) {
      if (!/^\d+$/.test(String(line.amount))) throw new Error(`amount ${JSON.stringify(line.amount)} is not base units`);
      this.amount = BigInt(line.amount);
    }
    if (line.destination) this.destination = line.destination;
    // A line without facts: its transaction's expiry is not known; the draft's approval is checked against expireTime only (docs/nodes.md).
    if (f && typeof f.expires === 'number' && f.expires > 0) this.expires = f.expires;
    this.hasDetails = f ? f.details === true : this.asset !== undefined || this.amount !== undefined || this.destination !== undefined;
  }

  #fact(name: 'fundID' | 'walletID' | 'companyID' | 'reference' | 'benefitOf'): string | undefined {
    if (!this.#f) {
      this.#missing.miss(name);
      return undefined;
    }
    const v = this.#f[name];
    return typeof v === 'string' ? v : undefined;
  }

  get fundID(): string | undefined {
    return this.#fact('fundID');
  }

  get walletID(): string | undefined {
    return this.#fact('walletID');
  }

  get companyID(): string | undefined {
    return this.#fact('companyID');
  }

  get reference(): string | undefined {
    return this.#fact('reference');
  }

  get benefitOf(): string | undefined {
    return this.#fact('benefitOf');
  }
}

/** Short codes as a replay knows them: those the line recorded; any other read is noted as missing. */
class ReplayShortCodes extends Map<string, string | Error> {
  constructor(
    readonly recorded: Record<string, string> | undefined,
    readonly missing: MissingReads,
  ) {
    super();
  }

  override get(code: string): string | Error | undefined {
    const id = this.recorded?.[code];
    if (typeof id === 'string') return id;
    this.missing.miss(`short code ${JSON.stringify(code)}`);
    return new Error('not resolved on this decision line (a simulation calls no API: name the wallet id)');
  }
}

/**
 * The {@link EvaluationContext} of a decision line for a replay: its decision time, the scale and
 * whitelist answer it recorded, its short codes; a read of one it lacks is noted in `missing`.
 * `velocity` is the replay's (the draft's own approvals).
 */
export class ReplayContext implements EvaluationContext {
  readonly now: number;
  readonly shortCodes: Map<string, string | Error>;
  velocity: EvaluationContext['velocity'];
  readonly #scale: number | Error | undefined;
  readonly #scaleKnown: boolean;
  readonly #whitelist: Array<{ asset: string; address: string }> | Error | undefined;
  readonly #whitelistKnown: boolean;
  readonly #missing: MissingReads;

  /**
   * @param line the decision line.
   * @param facts its facts ({@link ReplayFacts}).
   * @param scale the asset's scale when the line shows it otherwise (its `amount` and `amountDecimal`), else undefined.
   * @param velocity the draft's velocity usage.
   */
  constructor(line: DecisionLineFields, facts: ReplayFacts, missing: MissingReads, scale: number | undefined, velocity: EvaluationContext['velocity'], shortCodes: boolean) {
    const f = line.facts && typeof line.facts === 'object' ? line.facts : undefined;
    this.now = Date.parse(line.decidedAt);
    this.#missing = missing;
    this.velocity = velocity;
    if (f && typeof f.scale === 'number') [this.#scale, this.#scaleKnown] = [f.scale, true];
    else if (scale !== undefined) [this.#scale, this.#scaleKnown] = [scale, true];
    else if (f && typeof f.scaleError === 'string') [this.#scale, this.#scaleKnown] = [new Error(f.scaleError), true];
    else [this.#scale, this.#scaleKnown] = [undefined, facts.asset === undefined];
    const dest = facts.destination ?? '';
    if (f && typeof f.whitelisted === 'boolean') [this.#whitelist, this.#whitelistKnown] = [f.whitelisted ? [{ asset: '', address: dest }] : [], true];
    else if (f && typeof f.whitelistError === 'string') [this.#whitelist, this.#whitelistKnown] = [new Error(f.whitelistError), true];
    else [this.#whitelist, this.#whitelistKnown] = [undefined, false];
    this.shortCodes = shortCodes ? new ReplayShortCodes(f?.shortCodes, missing) : EMPTY_CODES;
  }

  get scale(): number | Error | undefined {
    if (!this.#scaleKnown) {
      this.#missing.miss('scale');
      return new Error(NOT_RECORDED);
    }
    return this.#scale;
  }

  get whitelist(): Array<{ asset: string; address: string }> | Error | undefined {
    if (!this.#whitelistKnown) {
      this.#missing.miss('whitelist');
      return new Error('the whitelist answer is not on this decision line (no deployed rule read it then)');
    }
    return this.#whitelist;
  }
}

const EMPTY_CODES: Map<string, string | Error> = new Map();

/**
 * The scale an old line shows by its `amount` (base units) and `amountDecimal` (whole units):
 * exact, as `amountDecimal` was written from the scale. Undefined when it cannot be told (no
 * decimal, an amount of 0).
 */
export function scaleShown(amount: string | null | undefined, amountDecimal: string | null | undefined): number | undefined {
  if (typeof amount !== 'string' || typeof amountDecimal !== 'string' || !/^\d+(\.\d+)?$/.test(amountDecimal)) return undefined;
  const [whole, fraction = ''] = amountDecimal.split('.');
  const digits = (whole + fraction).replace(/^0+/, '');
  const base = amount.replace(/^0+/, '');
  if (digits === '' || !base.startsWith(digits) || !/^0*$/.test(base.slice(digits.length))) return undefined;
  const decimals = fraction.length + (base.length - digits.length);
  return decimals <= 18 ? 10 ** decimals : undefined;
}
