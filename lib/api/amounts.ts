/**
 * Exact conversion between base units and decimal strings (spec section 2, Asset.scale:
 * "units per whole asset; amounts across the API are in base units").
 *
 * All arithmetic is bigint; nothing is ever rounded. A value that does not convert exactly
 * is a {@link ValidationError}.
 */
import { ValidationError, shortValue } from './errors';

/**
 * Number of decimal places of a scale: 100000000 -> 8, 1000000000 -> 9, 1 -> 0.
 * @throws {ValidationError} (field `scale`) when the scale is not a positive power of ten.
 */
export function decimalsOfScale(scale: number | bigint): number {
  const s = BigInt(scale);
  let n = 0;
  let v = s;
  while (v > 1n && v % 10n === 0n) {
    v /= 10n;
    n += 1;
  }
  if (v !== 1n) throw new ValidationError('scale', `a positive power of ten, got ${String(scale)}`);
  return n;
}

/**
 * A non-negative decimal number in whole units as {@link toBaseUnits} reads it: digits, an
 * optional fraction (`"0.015"`, `".5"`, `"2"`); no sign, exponent, separator or whitespace.
 */
export const DECIMAL_TEXT = /^(\d+(\.\d+)?|\.\d+)$/;

/**
 * Convert a decimal string in whole units (e.g. `"0.015"` BTC) into base units (e.g. `1500000n`).
 * Accepts an optional leading `-`, digits, an optional `.` and fraction digits; no exponent,
 * no separators, no whitespace.
 * @param field the request field named in the error, e.g. `send.amount`.
 * @param asset the asset code the error names (`send.amount: at most 8 decimal places for
 *   BTC-TESTNET, got 0.000000001`); without it, the error names the scale.
 * @throws {ValidationError} when the text is not a decimal number or has more fraction digits
 *   than the scale allows (e.g. `"0.000000001"` BTC), instead of rounding.
 */
export function toBaseUnits(decimal: string, scale: number | bigint, field = 'amount', asset?: string): bigint {
  const decimals = decimalsOfScale(scale);
  const text = String(decimal).trim();
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text) ?? /^(-)?()\.(\d+)$/.exec(text);
  if (!m) throw new ValidationError(field, `a decimal number such as "0.015", got ${shortValue(decimal)}`);
  const [, sign, whole, fraction = ''] = m;
  const trimmed = fraction.replace(/0+$/, '');
  if (trimmed.length > decimals) {
    if (asset !== undefined) throw new ValidationError(field, `at most ${decimals} decimal places for ${asset}, got ${decimalText(text)} (${trimmed.length} places); amounts are never rounded`);
    throw new ValidationError(field, `at most ${decimals} decimal places for this asset (scale ${String(scale)}), got ${shortValue(text)}: it does not convert exactly to base units`);
  }
  const units = BigInt(whole || '0') * 10n ** BigInt(decimals) + BigInt((trimmed.padEnd(decimals, '0')) || '0');
  return sign ? -units : units;
}

/**
 * A value as a message about a decimal amount quotes it: decimal text (of at most 64 characters)
 * as written, `0.000000001`; anything else as {@link shortValue} quotes it.
 */
export function decimalText(value: unknown): string {
  const text = typeof value === 'number' ? String(value) : value;
  return typeof text === 'string' && text.length <= 64 && /^-?(\d+(\.\d*)?|\.\d+)$/.test(text) ? text : shortValue(value);
}

/**
 * Convert base units into a decimal string in whole units: `1500000n`, scale 1e8 -> `"0.015"`.
 * Trailing zeros of the fraction are dropped; a whole number has no `.`.
 * @throws {ValidationError} when `baseUnits` is not an integer (a fractional number, a non-digit string).
 */
export function fromBaseUnits(baseUnits: bigint | number | string, scale: number | bigint, field = 'amount'): string {
  const decimals = decimalsOfScale(scale);
  let v: bigint;
  if (typeof baseUnits === 'bigint') v = baseUnits;
  else if (typeof baseUnits === 'number' && Number.isSafeInteger(baseUnits)) v = BigInt(baseUnits);
  else if (typeof baseUnits === 'string' && /^-?\d+$/.test(baseUnits)) v = BigInt(baseUnits);
  else throw new ValidationError(field, `an integer number of base units, got ${shortValue(String(baseUnits))}`);
  const negative = v < 0n;
  const abs = negative ? -v : v;
  const unit = 10n ** BigInt(decimals);
  const whole = abs / unit;
  const fraction = decimals ? (abs % unit).toString().padStart(decimals, '0').replace(/0+$/, '') : '';
  return `${negative ? '-' : ''}${whole}${fraction ? '.' + fraction : ''}`;
}

/**
 * Base units as a JSON-safe number (the API sends amounts as JSON numbers).
 * @throws {ValidationError} when the value is negative or above Number.MAX_SAFE_INTEGER.
 */
export function toSafeNumber(baseUnits: bigint, field = 'amount'): number {
  if (baseUnits < 0n) throw new ValidationError(field, `a non-negative number of base units, got ${shortValue(baseUnits)}`);
  if (baseUnits > BigInt(Number.MAX_SAFE_INTEGER)) throw new ValidationError(field, `at most ${Number.MAX_SAFE_INTEGER} base units, got ${shortValue(baseUnits)}`);
  return Number(baseUnits);
}
