/**
 * Stored node properties and their migrations (docs/architecture.md "Stored node properties and
 * migrations"). A flow node's properties, as a flows file or an export holds them, carry the
 * version of their shape in {@link SCHEMA_VERSION_PROPERTY} (`schemaVersion`, a whole number); a
 * node saved without it is version 0. Each node type has a numbered list of migrations
 * ({@link migrationsOf}): migration `i` (0-based) takes the shape of version `i` to version `i + 1`,
 * a pure function of the stored properties. {@link migrate} runs the ones a node still needs, once,
 * before anything reads its properties: the runtime at construction (nodes/shared/node-setup.ts
 * `createConnectedNode`) and the edit dialog when it opens (editor/src/custody-editor.ts
 * `CustodyEditor.migrate`: Done records it as an edit, the next deploy stores the new version). This module is that one source for both:
 * no import, no Node-RED, ES2017, bundled into the editor script by esbuild.
 *
 * The shapes (version 0 -> 1, every node type with TypedInputs, docs/nodes.md):
 * - operation nodes and the core client id settings: a property saved without `<property>Type`
 *   (before TypedInputs) gets the type its text was read as: the field's first type (`str`;
 *   `num` and `bool` for number and yes/no fields; nodes/shared/editor-table.ts `FIELD_TYPES`);
 * - custody-request: an empty `method` without `methodType` read `msg.method` (type `msg`, value
 *   `method`), a method typed in is `str`; `path` is `str`; `body` without `bodyType` was
 *   `payload` (the msg's payload as it is: type `msg`, value `payload`) or `none`;
 * - custody-coreclient-feed: `details` absent (saved before the option) was on.
 *
 * A version above the node type's latest (saved by a later release) is left as it is: no
 * migration runs, the node reads what it understands (the runtime warns once).
 */

/** The property that holds the version of a node's stored shape. */
export const SCHEMA_VERSION_PROPERTY = 'schemaVersion';

/** A node's properties as stored (a flows file's node object, or the editor's node). */
export type StoredProperties = Record<string, unknown>;

/** One migration: the properties of version `i`, a new object of version `i + 1` (the input is not changed). */
export type Migration = (stored: StoredProperties) => StoredProperties;

/**
 * The TypedInput properties of the node types whose fields come from the editor table, each with
 * the type a value saved without `<property>Type` was read as: `{ 'custody-transfer': { company_id:
 * 'str', ... } }`. Built from nodes/shared/editor-table.ts (`typedFieldDefaults`): by the runtime
 * directly, by the editor from the copy the build writes into its bundle.
 */
export type TypedFieldTable = Record<string, Record<string, string>>;

/** The result of {@link migrate}. */
export interface Migrated {
  /** The properties of the node type's latest version (the input itself when nothing ran). */
  stored: StoredProperties;
  /** The version the node was stored at (0 when it had none). */
  from: number;
  /** The version it is at now: the latest, or `from` when that is above the latest (left as it is). */
  to: number;
  /** The node type's latest version (`from` above it: stored by a later release). */
  latest: number;
}

/**
 * The version a node was stored at: {@link SCHEMA_VERSION_PROPERTY} when a whole number of 0 or
 * more, or its decimal text (what an edit dialog's hidden input saves: `"1"`); anything else is 0.
 */
export function storedVersion(stored: StoredProperties): number {
  const v = stored[SCHEMA_VERSION_PROPERTY];
  if (typeof v === 'string' && /^\d{1,9}$/.test(v)) return Number(v);
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0;
}

/** True for a `<property>Type` that is missing: absent, not text, or empty. */
function untyped(stored: StoredProperties, property: string): boolean {
  const t = stored[`${property}Type`];
  return typeof t !== 'string' || t === '';
}

/**
 * Migration to version 1 of TypedInput properties: each of `defaults` saved without
 * `<property>Type` gets its default type; its value stays (empty, null or absent: empty text).
 * @param defaults property -> the type its value was read as before TypedInputs.
 */
export function typeUntypedProperties(defaults: Record<string, string>): Migration {
  return (stored) => {
    const out: StoredProperties = { ...stored };
    for (const property of Object.keys(defaults)) {
      if (!untyped(stored, property)) continue;
      out[`${property}Type`] = defaults[property];
      if (stored[property] === undefined || stored[property] === null) out[property] = '';
    }
    return out;
  };
}

/** custody-request to version 1: method, path and body as TypedInputs (see the module's comment). */
export const requestTypes: Migration = (stored) => {
  const out: StoredProperties = { ...stored };
  if (untyped(stored, 'method')) {
    const method = typeof stored.method === 'string' ? stored.method.trim() : '';
    if (method === '') {
      out.method = 'method';
      out.methodType = 'msg';
    } else out.methodType = 'str';
  }
  if (untyped(stored, 'path')) {
    out.pathType = 'str';
    if (stored.path === undefined || stored.path === null) out.path = '';
  }
  if (untyped(stored, 'body')) {
    const none = stored.body === 'none';
    out.body = none ? '' : 'payload';
    out.bodyType = none ? 'none' : 'msg';
  }
  return out;
};

/** custody-coreclient-feed to version 1: the core client id typed, `details` on when absent. */
const coreClientFeedV1: Migration = (stored) => {
  const out = typeUntypedProperties({ clientId: 'str' })(stored);
  if (out.details === undefined || out.details === null) out.details = true;
  return out;
};

/** The node types whose one setting is a core client id TypedInput, by its property. */
const CLIENT_ID_SETTINGS: Record<string, string> = {
  'custody-approver': 'clientId',
  'custody-review': 'clientId',
  'custody-track': 'client_id',
};

/**
 * The migrations of a node type, in order: entry `i` takes version `i` to `i + 1`; the latest
 * version is the list's length. A type without any has version 0 and stores no version.
 * @param type the node type, e.g. `custody-transfer`.
 * @param typedFields the operation nodes' TypedInput properties ({@link TypedFieldTable}).
 */
export function migrationsOf(type: string, typedFields: TypedFieldTable): Migration[] {
  if (Object.prototype.hasOwnProperty.call(typedFields, type)) return [typeUntypedProperties(typedFields[type])];
  if (type === 'custody-request') return [requestTypes];
  if (type === 'custody-coreclient-feed') return [coreClientFeedV1];
  const setting = CLIENT_ID_SETTINGS[type];
  if (setting) return [typeUntypedProperties({ [setting]: 'str' })];
  return [];
}

/** The latest version of a node type's stored shape (0: no migration). */
export function latestVersion(type: string, typedFields: TypedFieldTable): number {
  return migrationsOf(type, typedFields).length;
}

/**
 * Bring a node's stored properties to its type's latest version.
 * @param type the node type.
 * @param stored the properties as stored; not changed.
 * @param typedFields the operation nodes' TypedInput properties ({@link TypedFieldTable}).
 * @returns the properties at the latest version with {@link SCHEMA_VERSION_PROPERTY} set (a new
 *   object), or `stored` itself when it is already there, when the type has no migration, or when
 *   its version is above the latest (left as it is).
 */
export function migrate(type: string, stored: StoredProperties, typedFields: TypedFieldTable): Migrated {
  const steps = migrationsOf(type, typedFields);
  const from = storedVersion(stored);
  const latest = steps.length;
  if (from >= latest) return { stored, from, to: from, latest };
  let out = stored;
  for (let v = from; v < latest; v++) out = steps[v](out);
  return { stored: { ...out, [SCHEMA_VERSION_PROPERTY]: latest }, from, to: latest, latest };
}
