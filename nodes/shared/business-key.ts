/**
 * `partner_txID` from a business key, so that one business payment is one API payment
 * (docs/nodes.md, "partner_txID from a business key"): the editor
 * property `partnerTxId` (a Node-RED TypedInput, type in `partnerTxIdType`) of the money-moving
 * operations (transfer create, withdraw create, swap make, swap take, sweep start) says how a
 * msg's `partner_txID` is built:
 *
 * - `template` (the editor's default type): text with `{{path}}` placeholders, each replaced by
 *   the msg property at that path, e.g. `inv-{{payload.invoice}}`;
 * - `msg`: a msg property, e.g. `payload.invoice`;
 * - `jsonata`: a JSONata expression over the msg;
 * - `str`: fixed text: every msg is then the same payment (rarely right).
 *
 * Left empty, the node reads `msg.payload.partner_txID` as before. The same key is the same
 * payment: the API answers a repeated `partner_txID` with status `existing` and the original
 * `tx_id`, so the key must come from the business (an invoice or order number), never from the
 * msg id or the time. Node-RED glue only: lib knows no Node-RED (docs/architecture.md, "The
 * layers").
 */
import type { Node, NodeAPI, NodeMessage } from 'node-red';
import { ConfigError, ValidationError, describeOperation, type OperationSpec } from '../../lib';
import { showError } from './status';

/** The request field this module fills (spec section 4). */
const FIELD = 'partner_txID';

/** The editor property holding the value; its type is in {@link TYPE_PROPERTY}. */
const PROPERTY = 'partnerTxId';

/** The editor property holding the TypedInput type of {@link PROPERTY}. */
const TYPE_PROPERTY = 'partnerTxIdType';

/** The TypedInput types of `partnerTxId`; `template` is the pack's own type. */
export type PartnerTxIdType = 'template' | 'msg' | 'jsonata' | 'str';

/** The type used when `partnerTxIdType` is absent: the editor's default. */
export const DEFAULT_PARTNER_TXID_TYPE: PartnerTxIdType = 'template';

const TYPES: readonly PartnerTxIdType[] = ['template', 'msg', 'jsonata', 'str'];

/**
 * Builds a msg's `partner_txID`.
 * @returns the key, trimmed and never empty.
 * @throws {ValidationError} (`EINPUT`, field `partner_txID`) when the key cannot be built for
 *   this msg (a missing or empty property, an object, an empty result), naming what was read.
 * @throws {ConfigError} (`ECONFIG`) for every msg when `partnerTxId` was refused at deploy.
 */
export type PartnerTxIdSource = (msg: NodeMessage) => Promise<string>;

/** One piece of a parsed template: literal text, or a placeholder's property path. */
export type TemplatePart = { text: string } | { path: string };

/**
 * Parse a `template` value: literal text and `{{path}}` placeholders (spaces inside the braces
 * are ignored). Pure: no Node-RED needed (the edit dialog checks a copy of these rules,
 * editor/src/partner-txid.ts `templateProblem`).
 * @param template the editor value, e.g. `inv-{{payload.invoice}}`.
 * @returns the parts, in order.
 * @throws {ConfigError} naming `partnerTxId` for a `{{` without its `}}`, a `}}` without its
 *   `{{`, a single `{` or `}`, an empty placeholder, or a template without any placeholder
 *   (fixed text would make every msg the same payment: that is the `str` type).
 */
export function parsePartnerTxIdTemplate(template: string): TemplatePart[] {
  const refuse = (why: string) => new ConfigError(`${PROPERTY}: template ${JSON.stringify(template)}: ${why}`);
  const parts: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    if (template.startsWith('{{', i)) {
      const end = template.indexOf('}}', i + 2);
      if (end < 0) throw refuse(`"{{" at position ${i} has no closing "}}"`);
      const inner = template.slice(i + 2, end);
      if (/[{}]/.test(inner)) throw refuse(`"{{" at position ${i} has no closing "}}" before the next brace`);
      const path = inner.trim();
      if (!path) throw refuse(`empty placeholder "{{${inner}}}" at position ${i}: write the msg property, e.g. {{payload.invoice}}`);
      if (text) parts.push({ text });
      text = '';
      parts.push({ path });
      i = end + 2;
    } else if (template.startsWith('}}', i)) {
      throw refuse(`"}}" at position ${i} has no opening "{{"`);
    } else if (template[i] === '{' || template[i] === '}') {
      throw refuse(`single "${template[i]}" at position ${i}: a placeholder is written {{path}}`);
    } else {
      text += template[i++];
    }
  }
  if (text) parts.push({ text });
  if (!parts.some((p) => 'path' in p)) {
    throw refuse('no {{placeholder}}: fixed text makes every msg the same payment (choose the str type if that is really meant)');
  }
  return parts;
}

/** `msg.<path>`, as a message names it (a path written with `msg.` is not doubled). */
function msgPath(path: string): string {
  return path.startsWith('msg.') ? path : `msg.${path}`;
}

/** What a value is, for a message: "an object", "an array", "a boolean", "null". */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (Buffer.isBuffer(v)) return 'a Buffer';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * A piece of a key from a value: text (trimmed) or a finite number; anything else is refused.
 * @param v the value read.
 * @param what names the value in the message, e.g. `msg.payload.invoice`.
 * @param context prefixes the message, e.g. `template "inv-{{payload.invoice}}": `.
 * @throws {ValidationError} for undefined (missing), blank text, null, an object, array, boolean or a non-finite number.
 */
function keyText(v: unknown, what: string, context: string): string {
  if (v === undefined) throw new ValidationError(FIELD, `${context}${what} is missing`);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new ValidationError(FIELD, `${context}${what} is ${v}, expected text or a finite number`);
    return String(v);
  }
  if (typeof v !== 'string') throw new ValidationError(FIELD, `${context}${what} is ${kindOf(v)}, expected text or a number`);
  const t = v.trim();
  if (!t) throw new ValidationError(FIELD, `${context}${what} is empty`);
  return t;
}

/**
 * Read a msg property with RED.util.getMessageProperty; a path through a missing property
 * (which getMessageProperty throws on) reads as undefined.
 */
function readProperty(RED: NodeAPI, msg: NodeMessage, path: string): unknown {
  try {
    return RED.util.getMessageProperty(msg, path);
  } catch (e) {
    if (e instanceof TypeError) return undefined;
    throw e;
  }
}

/**
 * Check a msg property path at deploy.
 * @throws {ConfigError} naming `partnerTxId` when Node-RED cannot parse the path.
 */
function checkPath(RED: NodeAPI, path: string, context: string): void {
  try {
    RED.util.normalisePropertyExpression(path.startsWith('msg.') ? path.slice(4) : path);
  } catch (e) {
    throw new ConfigError(`${PROPERTY}: ${context}${JSON.stringify(path)} is not a msg property: ${(e as Error).message}`);
  }
}

/**
 * The business key source of a money-moving operation node: how each msg's `partner_txID` is
 * built from the node's `partnerTxId` / `partnerTxIdType` editor properties.
 *
 * Call it once when the node is created, after the node has set its first status. The caller
 * puts the resolved value into the request's `partner_txID`, where it wins over
 * `msg.payload.partner_txID`.
 *
 * A `partnerTxId` that can never work (an unknown type, a bad template, a JSONata expression
 * that does not parse, a msg property Node-RED cannot parse) is refused at deploy: the node's
 * status turns red and the returned source rejects every msg with that {@link ConfigError}
 * (`ECONFIG`, naming `partnerTxId`), so nothing is ever sent without the key the flow asked for.
 *
 * @param RED the Node-RED API.
 * @param node the operation node (JSONata context functions, status).
 * @param def the node's editor properties (`partnerTxId`, `partnerTxIdType`).
 * @param spec the lib operation the node sends; nothing is built for an operation (or an unknown
 *   one, `undefined`) that does not declare `partner_txID`, e.g. a transfer `get` whose dialog
 *   still holds the key of `create`.
 * @returns undefined when `partnerTxId` is empty or blank (the node reads
 *   `msg.payload.partner_txID`, as flows without the property always did) or the operation has
 *   no `partner_txID`; else the {@link PartnerTxIdSource}.
 */
export function partnerTxIdSource(RED: NodeAPI, node: Node, def: Record<string, unknown>, spec: OperationSpec | undefined): PartnerTxIdSource | undefined {
  const raw = def[PROPERTY];
  if (!spec || !describeOperation(spec).fields.includes(FIELD)) return undefined;
  if (raw === undefined || raw === null || String(raw).trim() === '') return undefined;
  const value = String(raw);
  try {
    return build(RED, node, value, def[TYPE_PROPERTY]);
  } catch (e) {
    const err = e instanceof ConfigError ? e : new ConfigError(`${PROPERTY}: ${(e as Error).message}`);
    showError(node, err);
    return () => Promise.reject(err);
  }
}

/**
 * The source for one `partnerTxId` value and type.
 * @throws {ConfigError} naming `partnerTxId` for what can never work (see {@link partnerTxIdSource}).
 */
function build(RED: NodeAPI, node: Node, value: string, rawType: unknown): PartnerTxIdSource {
  const type = rawType === undefined || rawType === null || rawType === '' ? DEFAULT_PARTNER_TXID_TYPE : rawType;
  if (!TYPES.includes(type as PartnerTxIdType)) {
    throw new ConfigError(`${TYPE_PROPERTY}: unknown type ${JSON.stringify(type)} of ${PROPERTY}, expected one of ${TYPES.join(', ')}`);
  }
  switch (type as PartnerTxIdType) {
    case 'str': {
      // Fixed text: every msg is the same payment. Checked here like any other result.
      const key = keyText(value, 'the fixed text', '');
      return () => Promise.resolve(key);
    }
    case 'msg': {
      const path = value.trim();
      checkPath(RED, path, '');
      return (msg) => Promise.resolve().then(() => keyText(readProperty(RED, msg, path), msgPath(path), ''));
    }
    case 'template': {
      const parts = parsePartnerTxIdTemplate(value);
      const context = `template ${JSON.stringify(value)}: `;
      for (const p of parts) if ('path' in p) checkPath(RED, p.path, `${context}placeholder `);
      return (msg) =>
        Promise.resolve().then(() => {
          const key = parts
            .map((p) => ('text' in p ? p.text : keyText(readProperty(RED, msg, p.path), msgPath(p.path), context)))
            .join('')
            .trim();
          // Placeholders are never empty, so neither is the key; checked all the same.
          return keyText(key, 'the result', context);
        });
    }
    case 'jsonata': {
      let expr: ReturnType<NodeAPI['util']['prepareJSONataExpression']>;
      try {
        expr = RED.util.prepareJSONataExpression(value, node);
      } catch (e) {
        throw new ConfigError(`${PROPERTY}: JSONata ${JSON.stringify(value)} does not parse: ${(e as Error).message}`);
      }
      const context = `JSONata ${JSON.stringify(value)}: `;
      return (msg) =>
        new Promise<string>((resolve, reject) => {
          RED.util.evaluateJSONataExpression(expr, msg, (err, result) => {
            if (err) reject(new ValidationError(FIELD, `${context}${err.message}`));
            else {
              try {
                resolve(keyText(result, 'the result', context));
              } catch (e) {
                reject(e);
              }
            }
          });
        });
    }
  }
}
