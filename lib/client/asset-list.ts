/**
 * The asset list of GET /assets (spec section 2 "Asset", section 4 "Reference data and fees"),
 * cached per client: the one source of the asset codes that lib/client/call.ts checks before
 * sending (`checkAssetCodes`) and of the scales that decimal amounts convert with
 * (lib/client/v1/assets.ts `assetScale`).
 *
 * One GET /assets per client, not per request: the list is fetched on first use and kept. A
 * code that is not in the list fetches it once more when the list is older than
 * {@link ASSET_LIST_MAX_AGE_MS}, so that an asset the service lists later is accepted without a
 * restart; a list that could not be fetched is not kept (the next use asks again).
 *
 * This module sends GET /assets through `CustodyClient.request` itself rather than through the
 * operation declaration in lib/api/v1/assets.ts and its typed call: the typed calls need the list
 * (`assetScale`, lib/client/v1/assets.ts), and the list is the lower module.
 */
import type { CustodyClient } from './client';
import { ApiError, shortValue } from '../api/errors';
import type { Asset } from '../api/v1/assets';

/**
 * Age in milliseconds after which a cached asset list is fetched again when a code is not in it
 * (60 s: a new listing is seen within a minute, and a flood of unknown codes costs at most one
 * GET /assets a minute).
 */
export const ASSET_LIST_MAX_AGE_MS = 60_000;

/** The assets of one GET /assets answer, by `code`. */
export type AssetListing = ReadonlyMap<string, Asset>;

interface CachedList {
  /** Date.now() when the GET was sent. */
  fetchedAt: number;
  list: Promise<AssetListing>;
}

const cache = new WeakMap<CustodyClient, CachedList>();

/**
 * The assets of a GET /assets answer body `{assets: [{code, scale, ...}]}`, by code.
 * @throws {ApiError} (code `EASSETS`) when the body is not such a list.
 */
function parseAssetList(data: unknown, statusCode: number): AssetListing {
  const assets = data && typeof data === 'object' ? (data as { assets?: unknown }).assets : undefined;
  if (!Array.isArray(assets)) {
    throw new ApiError(statusCode, { code: 'EASSETS', msg: 'the answer has no asset list ({"assets": [{"code", "scale", ...}]})', detail: { reason: 'EASSETS' } }, 'GET /assets');
  }
  const out = new Map<string, Asset>();
  for (const a of assets) if (a && typeof a === 'object' && typeof (a as Asset).code === 'string') out.set((a as Asset).code, a as Asset);
  return out;
}

/** Send GET /assets for `client` and cache the (pending) answer; a failure is not kept. */
function fetchList(client: CustodyClient): CachedList {
  const entry: CachedList = {
    fetchedAt: Date.now(),
    list: client.request('GET', '/assets', { idempotent: true }).then((r) => parseAssetList(r.data, r.statusCode)),
  };
  cache.set(client, entry);
  entry.list.catch(() => {
    if (cache.get(client) === entry) cache.delete(client);
  });
  return entry;
}

/**
 * The assets GET /assets lists for `client`, by code: fetched once per client and cached.
 * @throws {ApiError} when GET /assets fails (retried first: it is a read) or its answer is not
 *   an asset list (code `EASSETS`).
 */
export function listedAssets(client: CustodyClient): Promise<AssetListing> {
  return (cache.get(client) ?? fetchList(client)).list;
}

/**
 * The asset listed under `code` (case-sensitive, as the service's codes are), from the cached
 * list; when `code` is not in it and the list is older than {@link ASSET_LIST_MAX_AGE_MS}, the
 * list is fetched once more (concurrent lookups share that one GET).
 * @returns the asset, or undefined when GET /assets does not list it; and the list looked in.
 * @throws {ApiError} when GET /assets fails or its answer is not an asset list.
 */
export async function findListedAsset(client: CustodyClient, code: string): Promise<{ asset: Asset | undefined; listing: AssetListing }> {
  const entry = cache.get(client) ?? fetchList(client);
  let listing = await entry.list;
  if (!listing.has(code)) {
    const latest = cache.get(client);
    if (latest && latest !== entry) listing = await latest.list;
    else if (Date.now() - entry.fetchedAt >= ASSET_LIST_MAX_AGE_MS) listing = await fetchList(client).list;
  }
  return { asset: listing.get(code), listing };
}

/** Codes named in an unknown-asset message, at most (the rest are counted). */
const LISTED_CODES_SHOWN = 20;

/**
 * The text of an unknown-asset refusal, after the field name: `unknown asset "XYZ"; GET /assets
 * lists BTC, BTC-TESTNET, ETH, ETH-TESTNET` (codes sorted; at most 20 named, the rest counted;
 * each code and the bad value cut to a short prefix).
 */
export function unknownAssetText(code: string, listing: AssetListing): string {
  const codes = [...listing.keys()].sort();
  const shown = codes.slice(0, LISTED_CODES_SHOWN).map((c) => (c.length > 32 ? c.slice(0, 32) + '…' : c));
  const more = codes.length > shown.length ? `, and ${codes.length - shown.length} more` : '';
  return `unknown asset ${shortValue(code)}; GET /assets lists ${shown.length ? shown.join(', ') + more : 'no asset'}`;
}
