/**
 * Lookups for the edit dialogs' id fields (docs/configuration.md "Look-ups"): the companies,
 * funds, wallets, core clients, assets and exchanges a connection's API account has, as
 * `{value, label}` options (`GET <admin>/custodyflow/lookup/:kind`, admin.ts; browser side
 * editor/src/custody-lookup.ts, bundled into resources/custody-lookup.js at build).
 *
 * Which calls list each kind (spec section 4):
 * | kind | calls |
 * |---|---|
 * | `company` | GET /account (read-only subset: the account's companies) and, when the query starts with 3 letters, GET /company/search?query=<those 3 letters> (section 8: a 3-letter query) |
 * | `fund` | GET /funds/ (read-only subset: every fund of the account, each with its `company_id`), kept to `company_id` when given |
 * | `wallet` | GET /company/{company_id}/fund/{fund_id} when both are given; GET /funds/{fund_id} with `fund_id` only; else the wallets of GET /funds/ (kept to `company_id` when given) |
 * | `coreClient` | GET /coreclient?company_id= (the company's core clients); without `company_id`, for each company of GET /account (at most {@link MAX_COMPANIES_SCANNED}) |
 * | `asset` | GET /assets |
 * | `exchange` | GET /exchanges |
 *
 * The shapes of GET /account, GET /funds/ and the fund detail are "not shown" by the spec: they
 * are read leniently (the simulator's and the OpenAPI's field names), and a record without an
 * id is skipped. No Node-RED import.
 */
import { CustodyClient, getFund, listAssets, listCoreClients, listExchanges, readAccount, readFund, readFunds, searchCompanies } from '../../lib';

/** The kinds of lookup, as in the path `GET <admin>/custodyflow/lookup/:kind`. */
export const LOOKUP_KINDS = ['company', 'fund', 'wallet', 'coreClient', 'asset', 'exchange'] as const;

/** One kind of lookup. */
export type LookupKind = (typeof LOOKUP_KINDS)[number];

/** What narrows a lookup: the ids the dialog already has, and the text typed so far. */
export interface LookupContext {
  /** Narrows `fund`, `wallet` and `coreClient` to one company. */
  company_id?: string;
  /** Narrows `wallet` to one fund. */
  fund_id?: string;
  /** The text typed so far: options whose value or label contain it (any case) are kept; for `company` its first 3 letters also search. */
  query?: string;
}

/** An option as the Node-RED typedInput `autoComplete` shows it: `value` is inserted, `label` shown. */
export interface LookupOption {
  value: string;
  label: string;
}

/** At most this many options are answered (the best matches first). */
export const MAX_OPTIONS = 50;

/** `coreClient` without `company_id` reads the core clients of at most this many companies. */
export const MAX_COMPANIES_SCANNED = 10;

/** How long an answer of the API is reused for the same connection, kind and context (ms). */
export const LOOKUP_CACHE_MS = 5000;

/** True when `kind` is one of {@link LOOKUP_KINDS}. */
export function isLookupKind(kind: unknown): kind is LookupKind {
  return typeof kind === 'string' && (LOOKUP_KINDS as readonly string[]).includes(kind);
}

type Rec = Record<string, unknown>;

/** The string at `r[key]` for the first key present, or ''. */
function text(r: Rec, ...keys: string[]): string {
  for (const k of keys) {
    const v = r[k];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number') return String(v);
  }
  return '';
}

/** The array under the first of `keys` that holds one, or []. */
function records(body: unknown, ...keys: string[]): Rec[] {
  if (Array.isArray(body)) return body.filter((r): r is Rec => !!r && typeof r === 'object');
  if (!body || typeof body !== 'object') return [];
  for (const k of keys) {
    const v = (body as Rec)[k];
    if (Array.isArray(v)) return v.filter((r): r is Rec => !!r && typeof r === 'object');
  }
  return [];
}

/** `name · id`, or the id alone when there is no name. */
function named(name: string, id: string): string {
  return name ? `${name} · ${id}` : id;
}

/** Options without repeated values (the first kept). */
function unique(options: LookupOption[]): LookupOption[] {
  const seen = new Set<string>();
  return options.filter((o) => o.value !== '' && !seen.has(o.value) && (seen.add(o.value), true));
}

/** The wallets of a fund detail (OpenAPI FundDetail: `wallets[]`) as options. */
function walletOptions(fund: Rec): LookupOption[] {
  return records(fund, 'wallets').map((w) => {
    const id = text(w, 'wallet_id', 'id');
    const parts = [text(w, 'name'), text(w, 'asset'), text(w, 'short_code')].filter((p) => p !== '');
    return { value: id, label: [...parts, id].join(' · ') };
  });
}

/** The account's companies of GET /account (`companies[]`). @throws {ApiError} */
async function accountCompanies(client: CustodyClient): Promise<LookupOption[]> {
  const res = await readAccount(client);
  return records(res.data, 'companies').map((c) => ({ value: text(c, 'company_id', 'id'), label: named(text(c, 'name'), text(c, 'company_id', 'id')) }));
}

/** The first 3 characters of `query` when they are letters (the search's rule), else undefined. */
export function searchPrefix(query: string | undefined): string | undefined {
  const p = (query ?? '').trim().slice(0, 3);
  return /^[A-Za-z]{3}$/.test(p) ? p : undefined;
}

/**
 * The cache key of a lookup: what the API calls depend on (the query only through the company
 * search's 3-letter prefix, since every other kind lists the same whatever is typed).
 */
export function cacheKey(kind: LookupKind, context: LookupContext): string {
  const parts: string[] = [kind];
  if (kind === 'fund' || kind === 'wallet' || kind === 'coreClient') parts.push(context.company_id ?? '');
  if (kind === 'wallet') parts.push(context.fund_id ?? '');
  if (kind === 'company') parts.push((searchPrefix(context.query) ?? '').toLowerCase());
  return JSON.stringify(parts);
}

/**
 * Everything the API lists for `kind` in `context` (before the query filter, except the company
 * search), as options.
 * @throws {ApiError} when a call fails (for `company`: only when every call it made failed);
 *   {ValidationError} for an id the operation refuses (e.g. a `company_id` with a `/`).
 */
export async function listOptions(client: CustodyClient, kind: LookupKind, context: LookupContext): Promise<LookupOption[]> {
  switch (kind) {
    case 'company': {
      const out: LookupOption[] = [];
      const failures: unknown[] = [];
      let answered = 0;
      try {
        out.push(...(await accountCompanies(client)));
        answered++;
      } catch (e) {
        failures.push(e);
      }
      const prefix = searchPrefix(context.query);
      if (prefix) {
        try {
          const res = await searchCompanies(client, { query: prefix });
          out.push(...records(res.data, 'matches').map((m) => ({ value: text(m, 'company_id', 'id'), label: named(text(m, 'name'), text(m, 'company_id', 'id')) })));
          answered++;
        } catch (e) {
          failures.push(e);
        }
      }
      // GET /account may be refused to a key (its answer is "not shown"): the search alone is enough then.
      if (answered === 0) throw failures[0];
      return unique(out);
    }
    case 'fund': {
      const res = await readFunds(client);
      return unique(
        records(res.data, 'list', 'funds')
          .filter((f) => !context.company_id || text(f, 'company_id') === context.company_id)
          .map((f) => ({ value: text(f, 'fund_id', 'id'), label: named(text(f, 'name'), text(f, 'fund_id', 'id')) })),
      );
    }
    case 'wallet': {
      if (context.fund_id && context.company_id) return unique(walletOptions((await getFund(client, { company_id: context.company_id, fund_id: context.fund_id })).data as unknown as Rec));
      if (context.fund_id) return unique(walletOptions((await readFund(client, { fund_id: context.fund_id })).data));
      const res = await readFunds(client);
      return unique(records(res.data, 'list', 'funds').filter((f) => !context.company_id || text(f, 'company_id') === context.company_id).flatMap(walletOptions));
    }
    case 'coreClient': {
      const companies = context.company_id ? [context.company_id] : (await accountCompanies(client)).slice(0, MAX_COMPANIES_SCANNED).map((c) => c.value);
      const out: LookupOption[] = [];
      for (const company_id of companies) {
        const res = await listCoreClients(client, { company_id });
        out.push(...records(res.data, 'clients').map((c) => ({ value: text(c, 'id', 'client_id'), label: named(text(c, 'name'), text(c, 'id', 'client_id')) })));
      }
      return unique(out);
    }
    case 'asset': {
      const res = await listAssets(client);
      return unique(
        records(res.data, 'assets').map((a) => {
          const code = text(a, 'code');
          const name = text(a, 'name');
          return { value: code, label: `${code}${name ? ` · ${name}` : ''}${a.enabled === false ? ' (not enabled)' : ''}` };
        }),
      );
    }
    case 'exchange': {
      const res = await listExchanges(client);
      return unique(records(res.data, 'exchanges').map((x) => ({ value: text(x, 'id'), label: named(text(x, 'name'), text(x, 'id')) })));
    }
  }
}

/**
 * The options that match `query` (any case, in value or label), the best first: an exact value,
 * then values starting with it, then the rest in the API's order; at most `limit`.
 */
export function filterOptions(options: LookupOption[], query: string | undefined, limit = MAX_OPTIONS): LookupOption[] {
  const q = (query ?? '').trim().toLowerCase();
  if (!q) return options.slice(0, limit);
  const rank = (o: LookupOption) => (o.value.toLowerCase() === q ? 0 : o.value.toLowerCase().startsWith(q) ? 1 : 2);
  return options
    .filter((o) => o.value.toLowerCase().includes(q) || o.label.toLowerCase().includes(q))
    .map((o, i) => ({ o, i, r: rank(o) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.o);
}

/**
 * A short-lived cache of lookups for one connection: an answer is reused for
 * {@link LOOKUP_CACHE_MS} per kind and context ({@link cacheKey}); a failed lookup is not kept;
 * lookups of the same key in flight share one request. At most `maxEntries` are kept (the
 * oldest dropped first).
 */
export class LookupCache {
  readonly #entries = new Map<string, { at: number; options: Promise<LookupOption[]> }>();

  /** @param ttlMs how long an answer is reused; @param maxEntries how many keys are kept. */
  constructor(
    private readonly ttlMs = LOOKUP_CACHE_MS,
    private readonly maxEntries = 200,
  ) {}

  /**
   * The options of `kind` in `context`, from the cache or from `client`, filtered by `context.query`.
   * @throws what {@link listOptions} throws (rejects).
   */
  async lookup(client: CustodyClient, kind: LookupKind, context: LookupContext): Promise<LookupOption[]> {
    const key = cacheKey(kind, context);
    const now = Date.now();
    let entry = this.#entries.get(key);
    if (!entry || now - entry.at > this.ttlMs) {
      const options = listOptions(client, kind, context);
      const created = { at: now, options };
      entry = created;
      this.#entries.delete(key);
      this.#entries.set(key, created);
      options.catch(() => {
        if (this.#entries.get(key) === created) this.#entries.delete(key);
      });
      while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    }
    return filterOptions(await entry.options, context.query);
  }

  /** Forget every answer (the connection was redeployed or closed). */
  clear(): void {
    this.#entries.clear();
  }
}
