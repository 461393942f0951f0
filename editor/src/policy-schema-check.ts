/**
 * A small JSON Schema (draft-07) checker for the browser, of the keywords
 * schemas/approval-policy.schema.json uses: `$ref` (`#/definitions/<name>`), `type` (one or a
 * list), `enum`, `required`, `properties`, `items`, `maxItems`, and, on strings, `pattern`; on
 * numbers, `minimum`, `exclusiveMinimum`, `maximum`, `multipleOf`. Other keywords are ignored (the
 * runtime, lib/approver/draft.ts `compileDraft`, checks a deployed policy fully). The dialog's
 * import of a policy file (approver-policy.ts) uses it, since ajv is not loaded in the editor.
 */

/** A JSON Schema, as parsed JSON. */
export type JsonSchema = { [keyword: string]: unknown };

/** The JSON type name of `v` as JSON Schema names it (`integer` only as a `number`). */
function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Whether `v` is of JSON Schema type `ty`. */
function isType(v: unknown, ty: string): boolean {
  if (ty === 'integer') return typeof v === 'number' && Number.isInteger(v);
  return typeOf(v) === ty;
}

/** `/rules/2/maxAmount` as the runtime names it: `rules[2].maxAmount` (the root: `policy`). */
function fieldName(pointer: string[]): string {
  let out = '';
  for (const p of pointer) out += /^\d+$/.test(p) ? `[${p}]` : `${out ? '.' : ''}${p}`;
  return out || 'policy';
}

/**
 * The problems of `value` against `schema` (`root` resolves `$ref`s), each as
 * `field: message` with the field named as the runtime names it (`rules[2].maxAmount`).
 * @returns an empty list when `value` conforms (for the keywords above).
 */
export function checkSchema(schema: JsonSchema, value: unknown, root: JsonSchema = schema, pointer: string[] = []): string[] {
  const out: string[] = [];
  const bad = (message: string) => out.push(`${fieldName(pointer)}: ${message}`);
  if (typeof schema.$ref === 'string') {
    const m = /^#\/definitions\/(.+)$/.exec(schema.$ref);
    const target = m ? ((root.definitions ?? {}) as Record<string, JsonSchema>)[m[1]] : undefined;
    if (!target) return [`${fieldName(pointer)}: the schema's $ref ${schema.$ref} is not resolved`];
    return checkSchema(target, value, root, pointer);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type)];
    if (!types.some((ty) => isType(value, ty))) {
      bad(`expected ${types.join(' or ')}, got ${typeOf(value)}`);
      return out;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) bad(`expected one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof value === 'string' && typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) bad(`does not match ${schema.pattern}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) bad(`below ${schema.minimum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) bad(`not above ${schema.exclusiveMinimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) bad(`above ${schema.maximum}`);
    if (typeof schema.multipleOf === 'number' && value % schema.multipleOf !== 0) bad(`not a multiple of ${schema.multipleOf}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) bad(`more than ${schema.maxItems} items`);
    if (schema.items && typeof schema.items === 'object') value.forEach((v, i) => out.push(...checkSchema(schema.items as JsonSchema, v, root, [...pointer, String(i)])));
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (Array.isArray(schema.required)) for (const k of schema.required as string[]) if (!(k in obj)) out.push(`${fieldName([...pointer, k])}: required`);
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const k of Object.keys(props)) if (k in obj) out.push(...checkSchema(props[k], obj[k], root, [...pointer, k]));
  }
  return out;
}
