/**
 * Writes the edit dialog of every operation node, dist/nodes/<type>/<type>.html, from what the
 * runtime sends (nodes/shared/palette.ts, lib/api/operations.ts) and the one table of fields and operations
 * (nodes/shared/editor-table.ts), through the template nodes/shared/templates/operation-dialog.eta.
 * Its help is not here: Node-RED reads it from the node's locales/<lang>/<type>.html (rendered by
 * copy-assets.ts).
 *
 * Each dialog registers its type inline, as the flow library's scorecard (node-red-dev validate)
 * parses it: `RED.nodes.registerType("<type>", {...})` with a literal type, an object literal
 * (no spread), literal category, color, icon, inputs and outputs, and the defaults written out.
 * The rows' behaviour is in the editor script (editor/src/custody-editor.ts,
 * `CustodyEditor.prepare`), which reads the dialog data passed to `CustodyEditor.define`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIELD_TYPES, OPERATION_NODES, fieldOf } from '../nodes/shared/editor-table';
import { editorDescription, type EditorOperation } from '../nodes/shared/operation-node';
import { OPERATION_NODE_TYPES, type OperationNodeType } from '../nodes/shared/palette';
import type { DialogData, DialogField, DialogOperation } from '../editor/src/dialog-data';
import { ROOT, VIEWS, renderFile, schemaVersionOf } from './templates';

/** One operation of a dialog's data, as the build reads it (with what it calls and reads). */
export type NodeTypeOperation = DialogOperation & EditorOperation;

/** One property of a dialog's `defaults`: its value, config node type, and validator. */
interface Default {
  property: string;
  value: unknown;
  /** The config node type the property selects (`custody-config`); it is then required. */
  configType?: string;
  /** `CustodyEditor.<name>(...args)`, or its `validate` member when `member` is set. */
  validator?: { name: string; args: unknown[]; member?: 'validate' };
}

/**
 * The operations of each operation node type, in the Operation select's order: the one place
 * the build reads which node type offers which operation (the palette, the editor table's labels
 * and notes, and what each operation calls and reads).
 */
export function operationsByNodeType(): Map<OperationNodeType, NodeTypeOperation[]> {
  const out = new Map<OperationNodeType, NodeTypeOperation[]>();
  for (const type of OPERATION_NODE_TYPES) {
    const node = OPERATION_NODES[type];
    if (!node) throw new Error(`generate-editors: ${type} is in the palette but not in the editor table`);
    const described = editorDescription(type);
    out.set(
      type,
      Object.keys(node.operations).map((name) => ({
        name,
        label: node.operations[name].label,
        note: node.operations[name].note || '',
        ...described[name],
      })),
    );
  }
  return out;
}

/** The dialog data of one node type (its operations from {@link operationsByNodeType}). */
export function dialogData(type: OperationNodeType, operations: NodeTypeOperation[]): DialogData {
  const node = OPERATION_NODES[type];
  const fields = node.fields.map((property): DialogField => {
    const f = fieldOf(type, property);
    return {
      property,
      field: f.field,
      label: f.label,
      icon: f.icon,
      kind: f.kind,
      custom: f.custom || '',
      types: f.custom ? [] : FIELD_TYPES[f.kind],
      placeholder: f.placeholder || `msg.payload.${f.field}${f.hint ? ` (${f.hint})` : ''}`,
      value: f.value === undefined ? '' : f.value,
      values: f.values || [],
      pathId: Boolean(f.pathId),
      lookup: f.lookup || '',
      maxLength: f.maxLength || 0,
      suffix: f.suffix || '',
    };
  });
  return { type, paletteLabel: node.paletteLabel, resolve: Boolean(node.resolve), operations, fields };
}

/** The Operation select's text of an operation: its label and call. */
function optionText(op: DialogOperation): string {
  if (op.name === 'resolve') return 'resolve (look up a payment whose outcome is unknown)';
  return `${op.label} (${op.call.split('?')[0].replace(/ \(.*$/, '')})`;
}

/** The `defaults` of a node type, in the order the dialog writes them. */
function defaults(data: DialogData, rows: Set<string>): Default[] {
  const { type } = data;
  const out: Default[] = [
    { property: 'name', value: '' },
    { property: 'connection', value: '', configType: 'custody-config' },
    { property: 'operation', value: data.operations[0].name, validator: { name: 'operationValidator', args: [type] } },
  ];
  // The version of the stored properties (nodes/shared/migrate.ts): a new node is stored at the latest.
  const version = schemaVersionOf(type);
  if (version) out.push({ property: 'schemaVersion', value: version });
  for (const f of data.fields) {
    if (f.custom === 'policyType') continue; // shown, not stored: the API creates transaction policies
    if (f.custom === 'members') {
      out.push({ property: f.property, value: [] });
      continue;
    }
    out.push({ property: f.property, value: f.value, validator: { name: 'fieldValidator', args: [type, f.property] } });
    out.push({ property: `${f.property}Type`, value: f.types[0] });
  }
  if (rows.has('partnerTxId')) {
    out.push({ property: 'partnerTxId', value: '', validator: { name: 'partnerTxId', args: [], member: 'validate' } });
    out.push({ property: 'partnerTxIdType', value: 'template', validator: { name: 'partnerTxIdType', args: [], member: 'validate' } });
  }
  if (rows.has('amountFormat')) out.push({ property: 'amountFormat', value: 'baseUnits', validator: { name: 'amountFormat', args: [], member: 'validate' } });
  if (rows.has('expiresAfter')) out.push({ property: 'expiresAfter', value: '3600', validator: { name: 'expiresAfter', args: [], member: 'validate' } });
  return out;
}

/** The whole generated .html of an operation node type. */
export function editorHtml(type: OperationNodeType, operations: NodeTypeOperation[]): string {
  const node = OPERATION_NODES[type];
  const data = dialogData(type, operations);
  const rows = new Set(data.operations.flatMap((o) => o.properties));
  return renderFile(path.join(VIEWS, 'shared', 'templates', 'operation-dialog.eta'), {
    nodeType: type,
    node: { icon: node.icon, paletteLabel: node.paletteLabel, inputLabels: node.inputLabels || 'request fields in msg.payload' },
    data,
    defaults: defaults(data, rows),
    options: [...data.operations.map((op) => [op.name, optionText(op)]), ['msg.operation', 'from msg.operation']],
    rows,
  });
}

/**
 * Write every operation node's dialog into dist/nodes/<type>/<type>.html.
 * @returns the node types written.
 * @throws {Error} when a node has no help file (locales/en-US/<type>.html).
 */
export function generate(): OperationNodeType[] {
  const byType = operationsByNodeType();
  for (const [type, operations] of byType) {
    const helpFile = path.join(ROOT, 'nodes', type, 'locales', 'en-US', `${type}.html`);
    if (!fs.existsSync(helpFile)) throw new Error(`generate-editors: no help file ${helpFile}`);
    const out = path.join(ROOT, 'dist', 'nodes', type);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, `${type}.html`), editorHtml(type, operations));
  }
  return [...byType.keys()];
}
