/**
 * Reference data and fees (spec section 4 "Reference data and fees"; OpenAPI `/assets`, `/fees`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, prepareOperation, tooLongError, OperationSpec, S, DECIMAL_AMOUNT_MAX_LENGTH } from '../operation';
import { ValidationError, characterCount, shortValue } from '../errors';
import { DECIMAL_TEXT, toBaseUnits, toSafeNumber } from '../amounts';
import { findListedAsset, unknownAssetText } from '../asset-list';
import { W, type Wire } from '../wire';
import { objectSchema, listSchema, answers, readOperation, operation } from '../schema-kit';

/**
 * An asset (spec section 2 "Asset"): `code`, `name`, `unitCode`, `scale` (base units per whole
 * asset: BTC 1e8, ETH 1e9; GET /assets is authoritative), `enabled`, `testAsset`. All six are
 * required (the spec's table; the OpenAPI Assets schema lacks `testAsset`: the spec rules).
 */
export const assetSchema = objectSchema(['code', 'name', 'unitCode', 'scale', 'enabled', 'testAsset'], {
  code: W.id,
  name: W.text,
  unitCode: W.text,
  // "units per whole asset": a whole number of base units, at least 1.
  scale: { type: 'integer', minimum: 1 },
  enabled: W.boolean,
  testAsset: W.boolean,
});

/** An asset ({@link assetSchema}); `scale` is base units per whole asset (BTC 1e8, ETH 1e9). */
export type Asset = Wire<typeof assetSchema>;

/**
 * GET /assets answer: `{assets: Asset[]}` (spec section 4). The OpenAPI Assets schema types
 * `assets` as one object; the spec says `assets[]` of Asset and rules.
 */
export const assetListSchema = listSchema('assets', assetSchema);

/** GET /assets answer ({@link assetListSchema}). */
export type AssetList = Wire<typeof assetListSchema>;

/**
 * POST /fees body (spec section 2 "Fee request and response"; OpenAPI FeesRequest): `type` the
 * transaction type (`transferOut`; the OpenAPI adds `withdraw`, `swap`), `asset` code, `amount`
 * in base units (a positive integer: a quote for 0 base units quotes nothing). All required.
 */
export const feeRequestSchema = objectSchema(['type', 'asset', 'amount'], { type: { type: 'string', enum: ['transferOut', 'withdraw', 'swap'] }, asset: S.assetCode, amount: S.positiveBaseUnits });

/** POST /fees body ({@link feeRequestSchema}). */
export type FeeRequest = Wire<typeof feeRequestSchema>;

/**
 * POST /fees answer (spec section 2 "Fee request and response"; OpenAPI FeesResponse): `netAmount`,
 * `amountToSend`, `fees`, all required, base units (integers >= 0; `amountToSend = netAmount + fees`).
 */
export const feeQuoteSchema = objectSchema(['netAmount', 'amountToSend', 'fees'], { netAmount: W.unsignedBaseUnits, amountToSend: W.unsignedBaseUnits, fees: W.unsignedBaseUnits });

/** POST /fees answer ({@link feeQuoteSchema}), base units: `amountToSend = netAmount + fees`. */
export type FeeQuote = Wire<typeof feeQuoteSchema>;

/** Operation declarations of this group, by id. */
export const assetOperations = {
  assets: readOperation('/assets', 'spec section 4, GET /assets', assetListSchema),
  fee: operation('POST', '/fees', 'spec section 4, POST /fees; OpenAPI FeesRequest', answers(feeQuoteSchema), {
    idempotent: true,
    amounts: [{ amount: 'amount', asset: 'asset' }],
    body: feeRequestSchema,
  }),
} satisfies Record<string, OperationSpec>;

/** List the supported assets. @throws {ApiError} on a non-2xx answer. */
export function listAssets(client: CustodyClient): Promise<ApiResponse<AssetList>> {
  return callOperation<AssetList>(client, assetOperations.assets, {});
}

/**
 * Quote the fee of a transaction.
 * @throws {ValidationError} for bad input (`amount` not a positive integer of base units, an
 *   `asset` GET /assets does not list); {ApiError} on a non-2xx answer.
 */
export function quoteFee(client: CustodyClient, input: FeeRequest): Promise<ApiResponse<FeeQuote>> {
  return callOperation<FeeQuote>(client, assetOperations.fee, { ...input });
}

/**
 * The `scale` of an asset from GET /assets, from the per-client asset list that the asset check
 * of every operation uses too (lib/asset-list.ts: one GET per client, fetched again for a code
 * it lacks once it is a minute old; a failed lookup is not cached).
 * @param field the request field to name in an error, e.g. `send.symbol`.
 * @throws {ValidationError} when the asset is not in the list (`send.symbol: unknown asset
 *   "XYZ"; GET /assets lists ...`); {ApiError} when /assets fails.
 */
export async function assetScale(client: CustodyClient, code: string, field = 'asset'): Promise<number> {
  const { asset, listing } = await findListedAsset(client, code);
  if (!asset) throw new ValidationError(field, unknownAssetText(code, listing));
  return asset.scale;
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}


function setPath(obj: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const keys = path.split('.');
  const out: Record<string, unknown> = { ...obj };
  let target = out;
  for (const k of keys.slice(0, -1)) {
    target[k] = { ...(target[k] as Record<string, unknown>) };
    target = target[k] as Record<string, unknown>;
  }
  target[keys[keys.length - 1]] = value;
  return out;
}

/**
 * Convert the decimal amounts of an operation's input (strings such as `"0.015"`, in whole
 * units of the asset) into base units, exactly, with the asset's scale from GET /assets
 * (cached). Which fields are amounts comes from `spec.amounts`. Every amount is read as whole
 * units: a decimal string, or a number of at most 15 significant digits read through its shortest
 * decimal form (`0.015` -> `"0.015"`); an exponent form such as `1e-7` is refused.
 *
 * The rest of the input is validated first (with each amount standing in as 1 base unit), so
 * input that would be refused anyway sends nothing, not even GET /assets.
 * @returns a copy of `input` with the amount fields replaced by integers (base units); the
 *   objects on the way to each amount are copied, `input` itself is not changed.
 * @throws {ValidationError} naming the field when the input is refused by the operation's
 *   schema, the asset is missing or unknown, or the amount is longer than
 *   `DECIMAL_AMOUNT_MAX_LENGTH` (64) characters, not a decimal number or has more decimals than
 *   the asset's scale allows.
 * @throws {ApiError} when GET /assets fails.
 */
export async function decimalAmountsToBaseUnits(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const amounts = (spec.amounts ?? []).filter(({ amount }) => getPath(input, amount) !== undefined);
  let placeholder = input;
  for (const { amount, asset } of amounts) {
    const value = getPath(input, amount);
    if (typeof value === 'string' && characterCount(value) > DECIMAL_AMOUNT_MAX_LENGTH) throw tooLongError(amount, DECIMAL_AMOUNT_MAX_LENGTH, characterCount(value));
    if ((typeof value !== 'string' && typeof value !== 'number') || !DECIMAL_TEXT.test(String(value).trim())) {
      throw new ValidationError(amount, `a decimal number of whole units such as "0.015", got ${shortValue(value)}`);
    }
    // A JavaScript number holds about 15 to 17 significant digits: past 15, the number may no longer
    // be the value that was typed (8999999.999999999 reads back as 8999999.999999998). Refuse it
    // rather than convert a changed amount; a string carries any precision exactly.
    if (typeof value === 'number' && String(value).replace(/^[0.]+|\./g, '').length > 15) {
      throw new ValidationError(amount, `a number with more than 15 significant digits may not be exact: give it as a decimal string, got ${shortValue(value)}`);
    }
    const code = getPath(input, asset);
    if (typeof code !== 'string' || code === '') throw new ValidationError(asset, 'required to convert a decimal amount');
    // Stand in with 0 for a zero amount, so a schema that wants a positive amount refuses it now.
    placeholder = setPath(placeholder, amount, /[1-9]/.test(String(value)) ? 1 : 0);
  }
  prepareOperation(spec, placeholder);
  let out = input;
  for (const { amount, asset } of amounts) {
    const scale = await assetScale(client, getPath(input, asset) as string, asset);
    out = setPath(out, amount, toSafeNumber(toBaseUnits(String(getPath(input, amount)).trim(), scale, amount), amount));
  }
  return out;
}
