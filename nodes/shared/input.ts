/**
 * Input resolution (DESIGN.md "The msg contract"): request fields use the API's names; a
 * field set in the node's editor wins, a field left empty is read from `msg.payload.<name>`.
 */

/** True for a plain object (not null, not an array, not a Buffer). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

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
