/**
 * TypedInput fields of the operation nodes: each editor property `<p>` (e.g. `company_id`) has
 * its type in `<p>Type` (`str`, `num`, `bool`, `msg`, `flow`, `global`, `env`, `jsonata`, as
 * {@link FIELD_TYPES} offers for the field's kind) and is evaluated per msg with
 * `RED.util.evaluateNodeProperty` (callback form: flow and global context stores and JSONata
 * may be asynchronous).
 *
 * A value left empty (or blank) reads `msg.payload.<field>`, whatever its type. A node saved
 * before TypedInputs reaches here migrated (nodes/shared/migrate.ts, at construction: each
 * property gets the type its text was read as), so a `<p>Type` missing here is refused like any
 * type the field does not offer. Node-RED glue only: lib knows no Node-RED (docs/architecture.md,
 * "The layers").
 */
import type { Node, NodeAPI, NodeMessage } from 'node-red';
import { ConfigError, ValidationError, shortValue } from '../../lib';
import { FIELD_TYPES, type FieldKind } from './editor-table';

/**
 * Reads one editor property for a msg.
 * @returns the value, or undefined when the property is empty (the field is then read from
 *   `msg.payload.<field>`). Text is trimmed.
 * @throws {ValidationError} (`EINPUT`, naming the field) when a typed value gives nothing (a
 *   missing msg property, context value or environment variable), blank text, a number that is
 *   not one, or a JSONata error; the caller sends nothing then.
 */
export type FieldReader = (msg: NodeMessage) => Promise<unknown>;

/** The TypedInput type of a property as stored: `<property>Type`; undefined when absent or empty. */
export function storedType(def: Record<string, unknown>, property: string): string | undefined {
  const t = def[`${property}Type`];
  return typeof t === 'string' && t !== '' ? t : undefined;
}

/** True for a value that counts as empty: undefined, null or blank text. */
function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/** What a typed value is called in a message: `msg.customer.company`, `flow.company`, `env COMPANY`, `JSONata "..."`. */
function described(type: string, value: string): string {
  switch (type) {
    case 'msg':
      return `msg.${value.replace(/^msg\./, '')}`;
    case 'flow':
    case 'global':
      return `${type}.${value}`;
    case 'env':
      return `env ${value}`;
    case 'jsonata':
      return `JSONata ${JSON.stringify(value)}`;
    default:
      return `${type} ${JSON.stringify(value)}`;
  }
}

/** A result as the request takes it: text trimmed; nothing, null and blank text refused. */
function checked(field: string, what: string, v: unknown): unknown {
  if (v === undefined) throw new ValidationError(field, `${what} is not set`);
  if (v === null) throw new ValidationError(field, `${what} is null`);
  if (typeof v === 'string') {
    const t = v.trim();
    if (!t) throw new ValidationError(field, `${what} is empty`);
    return t;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) throw new ValidationError(field, `${what} is ${v}, not a number`);
  return v;
}

/**
 * The reader of one editor property, checked once when the node is created.
 * @param RED the Node-RED API.
 * @param node the node (its flow and global context, JSONata's context functions).
 * @param def the node's editor properties.
 * @param property the editor property, e.g. `company_id` or `policyName`.
 * @param field the API field named in errors, e.g. `company_id` or `name`.
 * @param kind the field's kind: its allowed types are {@link FIELD_TYPES}`[kind]`.
 * @returns the reader.
 * @throws {ConfigError} (`ECONFIG`, naming `<property>Type` or the field) for a type the field
 *   does not offer, a msg property, JSON text or JSONata expression that does not parse, a `num`
 *   that is not a number: what can never work.
 */
export function fieldReader(RED: NodeAPI, node: Node, def: Record<string, unknown>, property: string, field: string, kind: FieldKind): FieldReader {
  const raw = def[property];
  const allowed = FIELD_TYPES[kind];
  const type = storedType(def, property);
  if (type === undefined) throw new ConfigError(`${property}Type: not set, expected one of ${allowed.join(', ')}`);
  if (!allowed.includes(type)) throw new ConfigError(`${property}Type: ${JSON.stringify(type)} is not a type of ${field}, expected one of ${allowed.join(', ')}`);
  if (type === 'bool') {
    const value = raw === true || (typeof raw === 'string' && /^true$/i.test(raw.trim()));
    return () => Promise.resolve(value);
  }
  if (isEmpty(raw)) return () => Promise.resolve(undefined);
  const value = String(raw).trim();
  const what = described(type, value);
  switch (type) {
    case 'str':
      return () => Promise.resolve(value);
    case 'num': {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new ConfigError(`${field}: ${JSON.stringify(value)} is not a number`);
      return () => Promise.resolve(n);
    }
    case 'json': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch (e) {
        throw new ConfigError(`${field}: JSON ${shortValue(value)} does not parse: ${(e as Error).message}`);
      }
      return () => Promise.resolve(parsed);
    }
    case 'msg':
      try {
        RED.util.normalisePropertyExpression(value.replace(/^msg\./, ''));
      } catch (e) {
        throw new ConfigError(`${field}: ${JSON.stringify(value)} is not a msg property: ${(e as Error).message}`);
      }
      break;
    case 'jsonata':
      try {
        RED.util.prepareJSONataExpression(value, node);
      } catch (e) {
        throw new ConfigError(`${field}: JSONata ${JSON.stringify(value)} does not parse: ${(e as Error).message}`);
      }
      break;
  }
  const expression = type === 'msg' ? value.replace(/^msg\./, '') : value;
  return (msg) =>
    new Promise<unknown>((resolve, reject) => {
      const fail = (err: Error) => reject(new ValidationError(field, `${what}: ${err.message}`));
      try {
        RED.util.evaluateNodeProperty(expression, type, node, msg, (err: Error | null, result: unknown) => {
          if (err) return fail(err);
          try {
            resolve(checked(field, what, result));
          } catch (e) {
            reject(e);
          }
        });
      } catch (e) {
        fail(e as Error);
      }
    });
}

/**
 * A reader that refuses every msg with `err`: a property refused when the node was created.
 * @param err the refusal (named the property).
 */
export function refusingReader(err: Error): FieldReader {
  return () => Promise.reject(err);
}

/**
 * The TypedInput types of a node setting that is not read from the msg (the core client id of
 * custody-coreclient-feed, custody-approver and custody-track): `str` (the default: a node saved
 * without `<property>Type` is migrated to it, nodes/shared/migrate.ts), `env`, `global`, `flow`.
 */
export const SETTING_TYPES: readonly string[] = ['str', 'env', 'global', 'flow'];

/** A setting read by {@link readSetting}: its text, or why it could not be read. */
export interface SettingValue {
  /** The text, trimmed; undefined when the setting is empty (the node then reads its msg). */
  value?: string;
  /** Set when a typed setting gives nothing or is not text, or its type is not one of {@link SETTING_TYPES}. */
  error?: ConfigError;
}

/**
 * Read a setting of {@link SETTING_TYPES} now (synchronously: env, and flow or global context of
 * the default store): a feed or approver reads it once when it starts, custody-track per msg.
 * @param RED the Node-RED API.
 * @param node the node (its flow and global context).
 * @param def the node's editor properties.
 * @param property the property, e.g. `clientId`; its type is `<property>Type`.
 * @returns the text, or the error naming the property (`clientId: env CLIENT is not set`).
 */
export function readSetting(RED: NodeAPI, node: Node, def: Record<string, unknown>, property: string): SettingValue {
  const type = storedType(def, property);
  const raw = def[property];
  if (type === undefined) return { error: new ConfigError(`${property}Type: not set, expected one of ${SETTING_TYPES.join(', ')}`) };
  if (!SETTING_TYPES.includes(type)) return { error: new ConfigError(`${property}Type: ${JSON.stringify(type)} is not one of ${SETTING_TYPES.join(', ')}`) };
  if (isEmpty(raw)) return {};
  const text = String(raw).trim();
  if (type === 'str') return { value: text };
  const what = described(type, text);
  let v: unknown;
  try {
    v = RED.util.evaluateNodeProperty(text, type, node, {} as NodeMessage);
  } catch (e) {
    return { error: new ConfigError(`${property}: ${what}: ${(e as Error).message}`) };
  }
  if (typeof v !== 'string' || v.trim() === '') return { error: new ConfigError(`${property}: ${what} ${v === undefined || v === '' ? 'is not set' : 'is not text'}`) };
  return { value: v.trim() };
}
