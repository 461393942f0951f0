#!/usr/bin/env node
// Writes the edit dialog of every operation node, dist/nodes/<type>/<type>.html, from what the
// runtime sends (nodes/shared/palette.ts PALETTE, compiled to dist/nodes/shared/palette.js) and the one
// table of fields and operations (nodes/shared/editor-table.ts, dist/nodes/shared/editor-table.js),
// Its help is not here: Node-RED reads it from the node's locales/<lang>/<type>.html (copied, with
// its `<!-- custody-help ... -->` lines expanded, by scripts/copy-assets.js). Run by `npm run
// build` after tsc and copy-assets.
//
// Each dialog registers its type inline, as the flow library's scorecard (node-red-dev validate)
// parses it: `RED.nodes.registerType("<type>", {...})` with a literal type, an object literal
// (no spread), literal category, color, icon, inputs and outputs, and the defaults written out.
// The rows every operation node has (name, connection, operation, the field TypedInputs, the
// business key, amounts, expires) are written here once, with the row builders the hand-written
// dialogs use too (nodes/shared/editor-rows.ts: label, name and connection, selects); their
// behaviour is in resources/custody-editor.js (`CustodyEditor.prepare`).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
/** The dialog rows every dialog of the pack shares (nodes/shared/editor-rows.ts). */
const editorRows = require(path.join(dist, 'nodes', 'shared', 'editor-rows.js'));

/** HTML-escape text for an attribute or element body. */
function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A JavaScript string literal (JSON, with `</` broken so it cannot end the script block). */
function lit(v) {
  return JSON.stringify(v).replace(/<\//g, '<\\/');
}

/**
 * The dialog data of one node type, embedded in its .html for resources/custody-editor.js:
 * palette label, operations (label, note, call, fields, required, rows), fields (label, kind,
 * TypedInput types, placeholder, look-up, values, checks).
 */
function dialogData(type, lib) {
  const { OPERATION_NODES, FIELD_TYPES, fieldOf } = lib.table;
  const node = OPERATION_NODES[type];
  const described = lib.editorDescription(type);
  const operations = Object.keys(node.operations).map((name) => ({
    name,
    label: node.operations[name].label,
    note: node.operations[name].note || '',
    ...described[name],
  }));
  const fields = node.fields.map((property) => {
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
function optionText(op) {
  if (op.name === 'resolve') return 'resolve (look up a payment whose outcome is unknown)';
  return `${op.label} (${op.call.split('?')[0].replace(/ \(.*$/, '')})`;
}

/** The `defaults` of a node type, as JavaScript source (identifier keys, one per line). */
function defaultsSource(type, data, lib) {
  const lines = [
    `name: { value: "" }`,
    `connection: { value: "", type: "custody-config", required: true }`,
    `operation: { value: ${lit(data.operations[0].name)}, validate: CustodyEditor.operationValidator(${lit(type)}) }`,
  ];
  for (const f of data.fields) {
    if (f.custom === 'policyType') continue; // shown, not stored: the API creates transaction policies
    if (f.custom === 'members') {
      lines.push(`${f.property}: { value: [] }`);
      continue;
    }
    lines.push(`${f.property}: { value: ${lit(f.value)}, validate: CustodyEditor.fieldValidator(${lit(type)}, ${lit(f.property)}) }`);
    lines.push(`${f.property}Type: { value: ${lit(f.types[0])} }`);
  }
  const rows = new Set(data.operations.flatMap((o) => o.properties));
  if (rows.has('partnerTxId')) {
    lines.push(`partnerTxId: { value: "", validate: CustodyEditor.partnerTxId().validate }`);
    lines.push(`partnerTxIdType: { value: "template", validate: CustodyEditor.partnerTxIdType().validate }`);
  }
  if (rows.has('amountFormat')) lines.push(`amountFormat: { value: "baseUnits", validate: CustodyEditor.amountFormat().validate }`);
  if (rows.has('expiresAfter')) lines.push(`expiresAfter: { value: "3600", validate: CustodyEditor.expiresAfter().validate }`);
  return lines.map((l) => `            ${l}`).join(',\n');
}

/** One field row of the template. */
function fieldRow(f) {
  const open = `    <div class="form-row custody-row" data-property="${f.property}">\n${editorRows.labelFor(`node-input-${f.property}`, f.icon, esc(f.label))}`;
  if (f.custom === 'policyType') {
    return `    <div class="form-row custody-row" data-property="${f.property}">\n${editorRows.labelFor('custody-policy-type', f.icon, esc(f.label))}        <select id="custody-policy-type" style="width: 70%;" disabled>\n            <option value="transaction">transaction (the type the API creates)</option>\n        </select>\n    </div>\n`;
  }
  if (f.custom === 'members') {
    return `    <div class="form-row node-input-members-container-row custody-row" data-property="${f.property}">\n        <label style="width: 100%;"><i class="fa fa-${f.icon}"></i> ${esc(f.label)}</label>\n        <ol id="node-input-${f.property}-list"></ol>\n    </div>\n`;
  }
  const width = f.kind === 'number' ? '150px' : '70%';
  return (
    open +
    `        <input type="text" id="node-input-${f.property}" style="width: ${width};" placeholder="${esc(f.placeholder)}"${f.maxLength ? ` data-max-length="${f.maxLength}"` : ''}>\n` +
    `        <input type="hidden" id="node-input-${f.property}Type">${f.suffix ? ` ${esc(f.suffix)}` : ''}\n    </div>\n`
  );
}

/** The edit template: name, connection, operation, the field rows, key, amounts, expires, tip. */
function templateSource(type, data) {
  const used = new Set(data.operations.flatMap((o) => o.properties));
  let out = `<script type="text/html" data-template-name="${type}">\n`;
  out += editorRows.editorRow('name-connection', {});
  const operations = data.operations.map((op) => [esc(op.name), esc(optionText(op))]);
  out += editorRows.selectRow({ property: 'operation', icon: 'wrench', label: 'Operation', options: [...operations, ['msg.operation', 'from msg.operation']] });
  for (const f of data.fields) out += fieldRow(f);
  if (used.has('partnerTxId')) {
    out += `    <div class="form-row custody-row" data-property="partnerTxId">\n${editorRows.labelFor('node-input-partnerTxId', 'key', 'partner_txID')}        <input type="text" id="node-input-partnerTxId" style="width: 70%;" placeholder="msg.payload.partner_txID">\n        <input type="hidden" id="node-input-partnerTxIdType">\n    </div>\n`;
  }
  if (used.has('amountFormat')) {
    const options = [['baseUnits', 'base units (integers, as the API)'], ['decimal', 'decimal strings such as "0.015"']];
    out += editorRows.selectRow({ property: 'amountFormat', icon: 'calculator', label: 'Amounts', options, rowClass: 'custody-row', rowProperty: 'amountFormat' });
  }
  if (used.has('expiresAfter')) {
    out += `    <div class="form-row custody-row" data-property="expiresAfter">\n${editorRows.labelFor('node-input-expiresAfter', 'clock-o', 'Expires after')}        <input type="text" id="node-input-expiresAfter" style="width: 100px;" placeholder="seconds"> seconds\n        <div class="form-tips" style="margin-top: 6px;">Used when <code>msg.payload.expires</code> is absent:\n            expires = now + this. Empty: <code>msg.payload.expires</code> (epoch seconds) is required.</div>\n    </div>\n`;
  }
  out += `    <div class="form-row">\n        <div class="form-tips" id="custody-operation-tip"></div>\n    </div>\n</script>\n`;
  return out;
}

/**
 * The look-up hook's script tag (resources/custody-lookup.js, `window.CustodyLookup`), when the
 * pack has that file. Node-RED's editor appends a node's .html only once every `<script src>` in
 * it has loaded, and waits forever on one that answers 404: the whole palette would stop
 * loading. Without the file the field TypedInputs are plain str.
 */
function lookupScript() {
  return fs.existsSync(path.join(root, 'resources', 'custody-lookup.js')) ? '<script type="text/javascript" src="resources/@custodyflow/node-red-custody/custody-lookup.js"></script>\n' : '';
}

/** The whole generated .html of an operation node type. */
function editorHtml(type, lib) {
  const node = lib.table.OPERATION_NODES[type];
  const data = dialogData(type, lib);
  return `<!--
  ${type}: generated by scripts/generate-editors.js from lib/registry.ts and
  nodes/shared/editor-table.ts; the help is locales/en-US/${type}.html. Do not edit.
-->
<script type="text/javascript" src="resources/@custodyflow/node-red-custody/custody-editor.js"></script>
${lookupScript()}<script type="text/javascript">
(function () {
    CustodyEditor.define(${lit(type)}, ${lit(data)});
    RED.nodes.registerType(${lit(type)}, {
        category: "custody",
        color: "#A3C9E8",
        defaults: {
${defaultsSource(type, data, lib)}
        },
        inputs: 1,
        outputs: 1,
        icon: ${lit(node.icon)},
        paletteLabel: ${lit(node.paletteLabel)},
        inputLabels: ${lit(node.inputLabels || 'request fields in msg.payload')},
        outputLabels: "response body in msg.payload",
        label: function () {
            return CustodyEditor.label(this, ${lit(type)});
        },
        labelStyle: function () {
            return this.name ? "node_label_italic" : "";
        },
        oneditprepare: function () {
            CustodyEditor.prepare(this, ${lit(type)});
        },
        oneditsave: function () {
            CustodyEditor.save(this, ${lit(type)});
        }
    });
})();
</script>

${templateSource(type, data)}
`;
}

/**
 * Write every operation node's dialog into dist/nodes/<type>/<type>.html.
 * @returns the node types written.
 * @throws {Error} when a node has no help file (locales/en-US/<type>.html), or the compiled lib or
 * table is missing (run tsc first).
 */
function generate() {
  const lib = {
    table: require(path.join(dist, 'nodes', 'shared', 'editor-table.js')),
    editorDescription: require(path.join(dist, 'nodes', 'shared', 'operation-node.js')).editorDescription,
    palette: require(path.join(dist, 'nodes', 'shared', 'palette.js')),
  };
  const types = lib.palette.OPERATION_NODE_TYPES;
  for (const type of types) {
    if (!lib.table.OPERATION_NODES[type]) throw new Error(`generate-editors: ${type} is in the palette but not in the editor table`);
    const helpFile = path.join(root, 'nodes', type, 'locales', 'en-US', `${type}.html`);
    if (!fs.existsSync(helpFile)) throw new Error(`generate-editors: no help file ${helpFile}`);
    const out = path.join(dist, 'nodes', type);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, `${type}.html`), editorHtml(type, lib));
  }
  return types;
}

if (require.main === module) generate();

module.exports = { generate, dialogData };
