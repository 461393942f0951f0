/** Shape checks of untyped values (a msg payload, a parsed line, a stored record). Nothing of the API here. */

/** True for a plain object: not null, not an array, not a Buffer. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}
