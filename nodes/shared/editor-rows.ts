/**
 * The rows of the edit dialogs, written once for every dialog of the pack: the generated
 * dialogs of the operation nodes (scripts/generate-editors.js) and the hand-written ones, whose
 * .html says `<!-- custody-row <kind> key="value" ... -->` on a line of its
 * `<script type="text/html" data-template-name>` block; scripts/copy-assets.js replaces that
 * line with {@link editorRow}`(kind, values)` (the line's indentation is the row's, 4 spaces).
 * Build-time only, no Node-RED import: the editor gets plain HTML, so Node-RED fills the inputs
 * from the node's properties as for any written dialog.
 *
 * Values are HTML, inserted as written (a label may hold `<code>`, a placeholder `&lt;`); a
 * directive's values cannot hold `"`.
 */

/** Where the ids of a dialog's inputs start: a flow node's dialog, or a config node's. */
export type InputPrefix = 'node-input' | 'node-config-input';

/** A labelled text (or password) input row; see {@link textRow}. */
export interface TextRowOptions {
  /** The property the input edits: its id is `<prefix>-<property>`. */
  property: string;
  /** The Font Awesome icon of the label, without `fa-` (e.g. `tag`). */
  icon: string;
  /** The label's text (HTML). */
  label: string;
  /** The input's placeholder (HTML attribute text); none when absent. */
  placeholder?: string;
  /** The input's CSS width (e.g. `80px`, `70%`); the editor's default when absent. */
  width?: string;
  /** What follows the input on its line (HTML, e.g. `seconds`); nothing when absent. */
  after?: string;
  /** More classes of the row's `<div class="form-row ...">` (space-separated). */
  rowClass?: string;
  /** The row's `data-property` (the generated dialogs show the rows of the chosen operation by it). */
  rowProperty?: string;
  /** `password` for a secret (also `autocomplete="off"`); `text` when absent. */
  type?: 'text' | 'password';
  /** The id prefix; `node-input` when absent. */
  prefix?: InputPrefix;
}

/** A labelled select row; see {@link selectRow}. */
export interface SelectRowOptions {
  /** The property the select edits: its id is `<prefix>-<property>`. */
  property: string;
  /** The Font Awesome icon of the label, without `fa-`. */
  icon: string;
  /** The label's text (HTML). */
  label: string;
  /** The options, in order, as [value, text (HTML)]. */
  options: Array<[string, string]>;
  /** More classes of the row's `<div class="form-row ...">` (space-separated). */
  rowClass?: string;
  /** The row's `data-property` (the generated dialogs show the rows of the chosen operation by it). */
  rowProperty?: string;
  /** The id prefix; `node-input` when absent. */
  prefix?: InputPrefix;
}

/** The opening of a row: `<div class="form-row[ rowClass]"[ data-property="rowProperty"]>`, 4 spaces in. */
function open(rowClass?: string, rowProperty?: string): string {
  return `    <div class="form-row${rowClass ? ` ${rowClass}` : ''}"${rowProperty ? ` data-property="${rowProperty}"` : ''}>\n`;
}

/** A row's label for an input, with its icon: `<label for="id"><i class="fa fa-icon"></i> label</label>`. */
export function labelFor(id: string, icon: string, label: string): string {
  return `        <label for="${id}"><i class="fa fa-${icon}"></i> ${label}</label>\n`;
}

/**
 * A labelled text (or password) input row, as every dialog of the pack writes it:
 * `<div class="form-row"><label ...><input type="text" id="node-input-<property>" ...></div>`.
 * @param o what the row shows; see {@link TextRowOptions}.
 * @returns the row's HTML, 4 spaces in, ending with a newline.
 */
export function textRow(o: TextRowOptions): string {
  const id = `${o.prefix || 'node-input'}-${o.property}`;
  const type = o.type || 'text';
  const attrs = [`type="${type}"`, `id="${id}"`];
  if (o.width) attrs.push(`style="width: ${o.width};"`);
  if (type === 'password') attrs.push('autocomplete="off"');
  if (o.placeholder !== undefined) attrs.push(`placeholder="${o.placeholder}"`);
  return `${open(o.rowClass, o.rowProperty)}${labelFor(id, o.icon, o.label)}        <input ${attrs.join(' ')}>${o.after ? ` ${o.after}` : ''}\n    </div>\n`;
}

/**
 * A labelled select row, as every dialog of the pack writes it (70% wide).
 * @param o what the row shows; see {@link SelectRowOptions}.
 * @returns the row's HTML, 4 spaces in, ending with a newline.
 */
export function selectRow(o: SelectRowOptions): string {
  const id = `${o.prefix || 'node-input'}-${o.property}`;
  const options = o.options.map(([value, text]) => `            <option value="${value}">${text}</option>\n`).join('');
  return `${open(o.rowClass, o.rowProperty)}${labelFor(id, o.icon, o.label)}        <select id="${id}" style="width: 70%;">\n${options}        </select>\n    </div>\n`;
}

/**
 * The options of a `select` row's line: `value=text` entries separated by `|`; an entry without
 * `=` is its own text (`GET|POST`), an empty value is written `=text`.
 * @param list the `options` value of the line.
 * @returns the options as [value, text].
 */
export function parseOptions(list: string): Array<[string, string]> {
  return list.split('|').map((entry) => {
    const eq = entry.indexOf('=');
    return eq < 0 ? [entry, entry] : [entry.slice(0, eq), entry.slice(eq + 1)];
  });
}

/**
 * The Name row every dialog starts with.
 * @param prefix the id prefix (`node-config-input` in a config node's dialog).
 * @returns the row's HTML, 4 spaces in.
 */
export function nameRow(prefix: InputPrefix = 'node-input'): string {
  return textRow({ property: 'name', icon: 'tag', label: 'Name', placeholder: 'Name', prefix });
}

/**
 * The Connection row (the `custody-config` node; Node-RED makes the input a config node select
 * because the property's default has `type: "custody-config"`).
 * @returns the row's HTML, 4 spaces in.
 */
export function connectionRow(): string {
  return textRow({ property: 'connection', icon: 'plug', label: 'Connection' });
}

/**
 * The rows a `<!-- custody-row <kind> ... -->` line stands for, by kind:
 * - `name-connection`: {@link nameRow} and {@link connectionRow}, the first rows of every flow
 *   node's dialog;
 * - `name`: {@link nameRow} (value `prefix`);
 * - `text`: {@link textRow} (values `property`, `icon`, `label`, `placeholder`, `width`, `after`,
 *   `rowClass`, `type`, `prefix`);
 * - `select`: {@link selectRow} (values `property`, `icon`, `label`, `options` as
 *   {@link parseOptions} reads them, `rowClass`, `prefix`).
 * @param kind the row kind.
 * @param values the line's `key="value"` pairs.
 * @returns the rows' HTML, 4 spaces in, ending with a newline.
 * @throws {Error} for an unknown kind, prefix or type, or a row without `property`, `icon`, `label` (or a
 *   select's `options`).
 */
export function editorRow(kind: string, values: Record<string, string>): string {
  if (kind === 'name-connection') return nameRow() + connectionRow();
  if (values.prefix !== undefined && values.prefix !== 'node-input' && values.prefix !== 'node-config-input') throw new Error(`custody-row ${kind}: unknown prefix ${values.prefix}`);
  if (kind === 'name') return nameRow(values.prefix as InputPrefix | undefined);
  if (kind === 'text') {
    for (const k of ['property', 'icon', 'label']) if (values[k] === undefined) throw new Error(`custody-row text: no ${k}`);
    if (values.type !== undefined && values.type !== 'text' && values.type !== 'password') throw new Error(`custody-row text: unknown type ${values.type}`);
    return textRow(values as unknown as TextRowOptions);
  }
  if (kind === 'select') {
    for (const k of ['property', 'icon', 'label', 'options']) if (values[k] === undefined) throw new Error(`custody-row select: no ${k}`);
    return selectRow({ ...(values as unknown as Omit<SelectRowOptions, 'options'>), options: parseOptions(values.options) });
  }
  throw new Error(`custody-row: unknown kind ${kind}`);
}
