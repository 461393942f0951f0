/**
 * The typed calls of the operations declared in lib/api/v1/assets.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import type { ApiResponse } from '../transport';
import { type AssetList, assetOperations, type FeeRequest, type FeeQuote } from '../../api/v1/assets';
import { callOperation } from '../call';
import { findListedAsset, unknownAssetText } from '../asset-list';
import { ApiError, OutcomeUnknownError, ValidationError, characterCount, shortValue } from '../../api/errors';
import { type JsonSchema, type OperationSpec, DECIMAL_AMOUNT_MAX_LENGTH } from '../../api/spec';
import { tooLongError, prepareOperation } from '../../request/prepare';
import { DECIMAL_TEXT, decimalText, toSafeNumber, toBaseUnits, fromBaseUnits } from '../../api/amounts';

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
 * of every operation uses too (lib/client/asset-list.ts: one GET per client, fetched again for a code
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
 * The JSON schema of a dotted body field (`send.amount`) of `spec`, or undefined.
 */
function bodySchemaAt(spec: OperationSpec, path: string): JsonSchema | undefined {
  return path.split('.').reduce<JsonSchema | undefined>((s, k) => (s?.properties as Record<string, JsonSchema> | undefined)?.[k], spec.body);
}

/**
 * Convert the decimal amounts of an operation's input (strings such as `"0.015"`, in whole
 * units of the asset) into base units, exactly, with the asset's scale from GET /assets
 * (cached). Which fields are amounts comes from `spec.amounts`. Every amount is read as whole
 * units: a decimal string, or a number of at most 15 significant digits read through its shortest
 * decimal form (`0.015` -> `"0.015"`); an exponent form such as `1e-7` is refused.
 *
 * The rest of the input is validated first (with each amount standing in as 1 base unit), so
 * input that would be refused anyway sends nothing, not even GET /assets. An amount's own
 * bounds (the schema's `minimum` and `maximum` of base units) are then checked in decimals with
 * the asset: `send.amount: at least 0.00000001 BTC-TESTNET, got 0`.
 * @returns a copy of `input` with the amount fields replaced by integers (base units); the
 *   objects on the way to each amount are copied, `input` itself is not changed.
 * @throws {ValidationError} naming the field when the input is refused by the operation's
 *   schema, the asset is missing or unknown, or the amount is longer than
 *   `DECIMAL_AMOUNT_MAX_LENGTH` (64) characters, not a decimal number, has more decimals than
 *   the asset's scale allows (`at most 8 decimal places for BTC-TESTNET, got 0.000000001 (9
 *   places)`) or is out of the field's bounds (`at least 0.00000001 BTC-TESTNET, got 0`, `at
 *   most 90071992.54740991 BTC-TESTNET, got 90071992.54740992`).
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
    // A valid stand-in: the amount's own bounds are checked below, in decimals.
    placeholder = setPath(placeholder, amount, 1);
  }
  prepareOperation(spec, placeholder);
  let out = input;
  for (const { amount, asset } of amounts) {
    const code = getPath(input, asset) as string;
    const scale = await assetScale(client, code, asset);
    const text = String(getPath(input, amount)).trim();
    const units = toBaseUnits(text, scale, amount, code);
    const schema = bodySchemaAt(spec, amount);
    const min = typeof schema?.minimum === 'number' ? BigInt(schema.minimum) : 0n;
    const max = typeof schema?.maximum === 'number' ? BigInt(schema.maximum) : BigInt(Number.MAX_SAFE_INTEGER);
    if (units < min) throw new ValidationError(amount, `at least ${fromBaseUnits(min, scale)} ${code}, got ${decimalText(text)}`);
    if (units > max) throw new ValidationError(amount, `at most ${fromBaseUnits(max, scale)} ${code}, got ${decimalText(text)}`);
    out = setPath(out, amount, toSafeNumber(units, amount));
  }
  return out;
}

/** An integer standing alone in a text (not part of an id, a code or a decimal such as `1.5`). */
const STANDALONE_INTEGER = /(?<![\w.-])\d+(?!\w|\.\d|-\w)/g;

/**
 * State a refusal of the API about an amount in the units the user chose (docs/nodes.md "The
 * payment fields"): when `err` is a 4xx answer whose `detail.reason` is about an amount field of
 * `spec` (it starts with the field's name, `send.amount: insufficient balance: 100001000000
 * needed (amount 100000000000 + fees 1000000), 100000000 available`), each integer standing
 * alone in it is that field's base units and is restated in decimals with the asset (`1000.01
 * BTC-TESTNET needed (amount 1000 BTC-TESTNET + fees 0.01 BTC-TESTNET), 1 BTC-TESTNET
 * available`). The message says the restated reason ({@link ApiError.restateReason}); `cause`
 * and `detail` keep the API's body as it came. Anything else is left as it is.
 * @param input the request as sent (amounts in base units, asset codes).
 * @returns `err` itself. Never throws: a scale that cannot be read (GET /assets failing) leaves
 *   the message as the API wrote it.
 */
export async function restateAmountsInDecimals(client: CustodyClient, spec: OperationSpec, input: Record<string, unknown>, err: unknown): Promise<unknown> {
  if (!(err instanceof ApiError) || err instanceof OutcomeUnknownError || err.statusCode < 400 || err.statusCode >= 500) return err;
  const reason = err.statedReason;
  if (reason === undefined) return err;
  const about = (spec.amounts ?? []).find(({ amount }) => reason.startsWith(`${amount}:`));
  if (!about) return err;
  const code = getPath(input, about.asset);
  if (typeof code !== 'string') return err;
  try {
    const scale = await assetScale(client, code, about.asset);
    const head = `${about.amount}:`;
    const rest = reason.slice(head.length).replace(STANDALONE_INTEGER, (n) => `${fromBaseUnits(n, scale)} ${code}`);
    err.restateReason(head + rest);
  } catch {
    // The API's own words stay.
  }
  return err;
}

/** The decimal fields {@link feeQuoteInDecimals} adds to a fee quote, each beside its base units field. */
export const FEE_DECIMAL_FIELDS = { netAmount: 'netAmount_decimal', amountToSend: 'amountToSend_decimal', fees: 'fees_decimal' } as const;

/** A fee quote (POST /fees answer, base units) with its amounts also in whole units of the asset. */
export type FeeQuoteWithDecimals = FeeQuote & { netAmount_decimal?: string; amountToSend_decimal?: string; fees_decimal?: string };

/**
 * A fee quote with its amounts also in decimals (whole units of `asset`, exact, as text such as
 * `"0.0001"`): `netAmount_decimal`, `amountToSend_decimal`, `fees_decimal` beside the base units
 * fields `netAmount`, `amountToSend`, `fees` of the answer (spec section 2 "Fee request and
 * response"; OpenAPI FeesResponse), which are kept as they came.
 * @param asset the asset code of the fee request; its scale is read from GET /assets (cached).
 *   A field that is not an integer in the answer gets no decimal field.
 * @throws {ValidationError} when the asset is not listed; {ApiError} when GET /assets fails.
 */
export async function feeQuoteInDecimals(client: CustodyClient, asset: string, quote: FeeQuote): Promise<FeeQuoteWithDecimals> {
  const scale = await assetScale(client, asset);
  const out = { ...quote } as FeeQuoteWithDecimals;
  for (const field of ['netAmount', 'amountToSend', 'fees'] as const) {
    // An answer the response check let through without the field (not checked strictly) gets no decimal for it.
    if (Number.isSafeInteger(quote[field])) out[FEE_DECIMAL_FIELDS[field]] = fromBaseUnits(quote[field], scale, field);
  }
  return out;
}
