/**
 * What the rules read besides the action (rules.ts `EvaluationContext`), fetched before they are
 * evaluated so evaluating stays pure: the asset's scale (GET /assets), the fund's whitelist
 * (GET /company/{company_id}/fund/{fund_id}/whitelist) and the wallet ids of short codes
 * (GET /wallet/{wallet_id}), each read only when a rule needs it and kept for `cacheMs`.
 */
import type { CustodyClient } from '../client/client';
import type { ActionFacts, CompiledRule, EvaluationContext } from './rules';
import type { VelocityLedger } from './velocity';
import { assetScale } from '../client/v1/assets';
import { getWallet, listWhitelist } from '../client/v1/fund';

/** A value read through the API and kept for a while; a failed read is not kept. */
interface Cached<T> {
  until: number;
  value: Promise<T>;
}

/** Reads (and caches) the context of the rules of one approver. */
export class RuleContextReader {
  readonly #whitelists = new Map<string, Cached<Array<{ asset: string; address: string }>>>();
  readonly #shortCodes = new Map<string, Cached<string>>();
  readonly #needsWhitelist: boolean;
  readonly #shortCodeList: string[];
  readonly #cacheMs: number;
  readonly #now: () => number;

  /**
   * @param rules the compiled rules (what they need is read, nothing else).
   * @param cacheMs how long a whitelist or a short code's wallet id is kept, ms.
   * @param now the clock, epoch ms.
   */
  constructor(rules: CompiledRule[], cacheMs: number, now: () => number) {
    this.#needsWhitelist = rules.some((r) => r.needsWhitelist);
    this.#shortCodeList = Array.from(new Set(rules.flatMap((r) => r.shortCodes)));
    this.#cacheMs = cacheMs;
    this.#now = now;
  }

  /**
   * Read what the rules need for this action: the asset's scale (read for every action that names
   * an asset, whether a rule needs it or not: the decision line records it, docs/audit.md; GET
   * /assets is one cached list per client), the fund's whitelist, short codes (each cached). A failed read is handed to the rules as its error (the conditions that
   * need it fail).
   * @param ledger this approver's velocity ledger (the context's default velocity usage).
   */
  async read(client: CustodyClient, facts: ActionFacts, ledger: VelocityLedger): Promise<EvaluationContext> {
    const [scale, whitelist, shortCodes] = await Promise.all([
      facts.asset ? assetScale(client, facts.asset).catch((e: Error) => e) : Promise.resolve(undefined),
      this.#needsWhitelist && facts.companyID && facts.fundID ? this.#whitelist(client, facts.companyID, facts.fundID).catch((e: Error) => e) : Promise.resolve(undefined),
      Promise.all(this.#shortCodeList.map(async (code) => [code, await this.#walletId(client, code).catch((e: Error) => e)] as const)),
    ]);
    const now = this.#now();
    return { now, scale, whitelist, shortCodes: new Map(shortCodes), velocity: (asset, windowMs) => ledger.usage(asset, windowMs, now) };
  }

  #cached<T>(map: Map<string, Cached<T>>, key: string, read: () => Promise<T>): Promise<T> {
    const now = this.#now();
    const hit = map.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = read();
    const entry = { until: now + this.#cacheMs, value };
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
}
