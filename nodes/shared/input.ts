/**
 * Input resolution (docs/nodes.md "The msg contract (every node)"): request fields use the API's
 * names; a field set in the node's editor wins, a field left empty is read from
 * `msg.payload.<name>`.
 */
import type { NodeAPI } from 'node-red';
import { ConfigError, isPlainObject } from '../../lib';

/** True for a plain object (not null, not an array, not a Buffer): lib/support/objects.ts. */
export { isPlainObject } from '../../lib';

/**
 * An editor property that is an API field: the field's name (`company_id`), or
 * `[field, property]` where Node-RED reserves the field's name (the fee `type` is edited as
 * the property `feeType`, since every node's `type` is its node type).
 */
export type EditorField = string | readonly [field: string, property: string];

/**
 * Merge the editor fields over `msg.payload`.
 * @param config the node's editor properties.
 * @param editorFields the editor properties that are API fields.
 * @param payload `msg.payload`; anything but a plain object counts as `{}`.
 * @returns a new object (a shallow copy; `msg.payload` is not changed).
 */
export function resolveInput(config: Record<string, unknown>, editorFields: readonly EditorField[], payload: unknown): Record<string, unknown> {
  const input: Record<string, unknown> = isPlainObject(payload) ? { ...payload } : {};
  for (const entry of editorFields) {
    const [field, property] = typeof entry === 'string' ? [entry, entry] : entry;
    const v = config[property];
    if (typeof v === 'string' && v.trim() !== '') input[field] = v.trim();
  }
  return input;
}

/**
 * A duration in seconds from an editor property (string or number text).
 * @param RED the Node-RED API of the node's module (the error text of its catalog).
 * @param value the property's value; empty (undefined, null, blank) gives `fallback`.
 * @param property the property's name, named in the error.
 * @param fallback the default, seconds.
 * @param min the least value accepted, seconds.
 * @throws {ConfigError} naming the property when the value is not a number >= `min`.
 */
export function editorSeconds(RED: NodeAPI, value: unknown, property: string, fallback: number, min: number): number {
  if (value === undefined || value === null || String(value).trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new ConfigError(`${property}: ${RED._('common.errors.seconds', { min, value: JSON.stringify(value) })}`);
  return n;
}

/**
 * A duration in hours from an editor property (string or number text), e.g. `"24"`, `"0.5"`.
 * @param value the property's value; empty (undefined, null, blank) gives `fallback`.
 * @param property the property's name, named in the error.
 * @param fallback the default, hours.
 * @param min the value must be above this, hours.
 * @throws {ConfigError} naming the property when the value is not a number above `min`.
 */
export function editorHours(RED: NodeAPI, value: unknown, property: string, fallback: number, min: number): number {
  if (value === undefined || value === null || String(value).trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= min) throw new ConfigError(`${property}: ${RED._('common.errors.hours', { min, value: JSON.stringify(value) })}`);
  return n;
}

/** A boolean editor property: `true`/`"true"` is true, anything else false. */
export function flag(v: unknown): boolean {
  return v === true || v === 'true';
}
