#!/usr/bin/env node
// Copies what tsc does not emit next to each compiled node: its .html (edit dialog and
// registerType, for the nodes whose dialog is not generated), locales/ when present (Node-RED's
// way: locales/<lang>/<type>.json, the message catalog, and locales/<lang>/<type>.html, the
// help); and the pack's icons/ folder ONCE, beside the first node listed in package.json.
// Node-RED looks for icons in an `icons` folder beside each node's .js file and lists every
// such folder in the editor's icon picker: a copy per node listed each icon once per node (22
// times). The operation nodes' dialogs are not copied: scripts/generate-editors.js writes them.
//
// Node-RED registers a node's catalog under the node's own namespace (`<package>/<type>`, the
// node set), and the `RED._` a node module gets looks keys up there only: there is no catalog
// several node sets share. So the texts the shared runtime (nodes/shared) shows, written once in
// nodes/shared/locales/<lang>/common.json under the top-level key `common` (as Node-RED's core
// nodes keep theirs under `common` in one catalog), are merged here into every node's catalog
// of that language; a node catalog with a top-level key other than its type fails the build.
//
// Help written once for several nodes lives in nodes/shared/help/<name>.html (its first line
// is a comment saying what it is). A node's .html or locale help file includes it with a line
// `<!-- custody-help <name> key="value" ... -->`: the fragment, with each `${key}` replaced by
// the value. `kind="<submission kind>"` also gives `${owner}` and `${payingWallet}` from lib's
// SUBMISSION_KINDS (dist/lib, compiled just before), so the help names the fields the code reads.
// An unknown fragment or a `${key}` without a value fails the build. A fragment that wraps a
// node's own text is included as a block: `<!-- custody-help <name> ... -->`, the node's lines,
// `<!-- /custody-help <name> -->`; those lines are its `${body}`.
//
// Dialog rows written once for every dialog (nodes/shared/editor-rows.ts, compiled to dist/ just
// before): a line `<!-- custody-row <kind> key="value" ... -->` of a node's .html is replaced by
// the rows of that kind (`name-connection`, `name`, `text`, `select`: see `editorRow`), the rows
// scripts/generate-editors.js writes into the operation nodes' dialogs.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const nodesSrc = path.join(root, 'nodes');
const nodesOut = path.join(root, 'dist', 'nodes');
const icons = path.join(root, 'icons');
const helpDir = path.join(nodesSrc, 'shared', 'help');
const commonLocales = path.join(nodesSrc, 'shared', 'locales');
const { SUBMISSION_KINDS } = require(path.join(root, 'dist', 'lib', 'api', 'kinds.js'));
const { editorRow } = require(path.join(root, 'dist', 'nodes', 'shared', 'editor-rows.js'));

/** The `key="value"` pairs of a directive line, as an object. */
function parseAttrs(attrs) {
  const vars = {};
  for (const m of attrs.matchAll(/([A-Za-z]+)="([^"]*)"/g)) vars[m[1]] = m[2];
  return vars;
}

/**
 * A help fragment with its `${key}`s replaced.
 * @param {string} file the including file (for the errors).
 * @param {string} name the fragment, nodes/shared/help/<name>.html.
 * @param {Record<string, string>} vars the values (`kind` also gives `owner` and `payingWallet`).
 * @returns {string} the fragment's text, without its first (comment) line.
 * @throws {Error} for an unknown fragment or kind, or a `${key}` without a value.
 */
function helpFragment(file, name, vars) {
  if (vars.kind !== undefined) {
    const kind = SUBMISSION_KINDS[vars.kind];
    if (!kind) throw new Error(`${file}: custody-help ${name}: unknown kind ${vars.kind}`);
    vars.owner = kind.owner;
    vars.payingWallet = kind.payingWallet;
  }
  const fragment = fs.readFileSync(path.join(helpDir, `${name}.html`), 'utf8').replace(/^.*\n/, '');
  return fragment.replace(/\$\{(\w+)\}/g, (_m, key) => {
    if (vars[key] === undefined) throw new Error(`${file}: custody-help ${name}: no value for \${${key}}`);
    return vars[key];
  });
}

/**
 * Text with its directives expanded: each block `<!-- custody-help <name> ... -->` ...
 * `<!-- /custody-help <name> -->` by its fragment with `${body}` the lines between (expanded
 * first, so blocks nest); each line `<!-- custody-help ... -->` by its fragment; each line
 * `<!-- custody-row ... -->` by its dialog rows.
 * @param {string} file the file the text is from (for the errors).
 * @param {string} text the text.
 * @returns {string} the expanded text.
 * @throws {Error} for an unknown fragment, kind or row kind, or a `${key}` without a value.
 */
function expandText(file, text) {
  return text
    .replace(/^[ \t]*<!-- custody-help ([a-z-]+)((?: [A-Za-z]+="[^"]*")*) -->\n([\s\S]*?)^[ \t]*<!-- \/custody-help \1 -->\n/gm, (_block, name, attrs, body) =>
      helpFragment(file, name, { ...parseAttrs(attrs), body: expandText(file, body) }),
    )
    .replace(/^[ \t]*<!-- custody-(help|row) ([a-z-]+)((?: [A-Za-z]+="[^"]*")*) -->\n/gm, (_line, what, name, attrs) => {
      const vars = parseAttrs(attrs);
      if (what === 'help') return helpFragment(file, name, vars);
      try {
        return editorRow(name, vars);
      } catch (err) {
        throw new Error(`${file}: ${err.message}`);
      }
    });
}

/**
 * The text of a node's .html or locale help file with its directives expanded (see `expandText`).
 * @param {string} file the file's path.
 * @returns {string} the expanded text.
 * @throws {Error} for an unknown fragment, kind or row kind, or a `${key}` without a value.
 */
function expandHelp(file) {
  return expandText(file, fs.readFileSync(file, 'utf8'));
}

/**
 * A node's message catalog with the shared texts of the same language merged in: the node's
 * own keys under its type, the shared ones under `common`.
 * @param {string} file the node's catalog, locales/<lang>/<type>.json.
 * @param {string} type the node type, the only top-level key the node's catalog may have.
 * @param {string} lang the language folder, e.g. `en-US`.
 * @returns {string} the merged catalog, JSON.
 * @throws {Error} for a top-level key other than `type` in the node's catalog.
 */
function mergeCatalog(file, type, lang) {
  const own = JSON.parse(fs.readFileSync(file, 'utf8'));
  const stray = Object.keys(own).filter((k) => k !== type);
  if (stray.length) throw new Error(`${file}: top-level keys other than ${type}: ${stray.join(', ')}`);
  const commonFile = path.join(commonLocales, lang, 'common.json');
  const common = fs.existsSync(commonFile) ? JSON.parse(fs.readFileSync(commonFile, 'utf8')) : {};
  return JSON.stringify({ ...common, ...own }, null, 2) + '\n';
}

/**
 * Copy a node's locales/ folder: each language's help file (`<type>.html`) with its fragments
 * expanded, its catalog (`<type>.json`) with the shared texts merged in, anything else as it is.
 * @param {string} src the node's locales/ folder.
 * @param {string} out where it goes in dist.
 * @param {string} type the node type.
 */
function copyLocales(src, out, type) {
  fs.cpSync(src, out, { recursive: true });
  for (const lang of fs.readdirSync(src, { withFileTypes: true })) {
    if (!lang.isDirectory()) continue;
    const dir = path.join(src, lang.name);
    for (const file of fs.readdirSync(dir)) {
      const target = path.join(out, lang.name, file);
      if (file === `${type}.html`) fs.writeFileSync(target, expandHelp(path.join(dir, file)));
      else if (file === `${type}.json`) fs.writeFileSync(target, mergeCatalog(path.join(dir, file), type, lang.name));
    }
  }
}

/** Copy each node's .html and locales/, and the icons once. */
function copyAssets() {
  for (const entry of fs.readdirSync(nodesSrc, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === 'shared') continue;
    const src = path.join(nodesSrc, entry.name);
    const out = path.join(nodesOut, entry.name);
    fs.mkdirSync(out, { recursive: true });
    const html = path.join(src, `${entry.name}.html`);
    if (fs.existsSync(html)) fs.writeFileSync(path.join(out, `${entry.name}.html`), expandHelp(html));
    const locales = path.join(src, 'locales');
    if (fs.existsSync(locales)) copyLocales(locales, path.join(out, 'locales'), entry.name);
    // Icons of an earlier build (one copy per node) would still be listed: removed.
    fs.rmSync(path.join(out, 'icons'), { recursive: true, force: true });
  }
  const first = Object.values(require(path.join(root, 'package.json'))['node-red'].nodes)[0];
  if (fs.existsSync(icons)) fs.cpSync(icons, path.join(root, path.dirname(first), 'icons'), { recursive: true });
}

if (require.main === module) copyAssets();

module.exports = { expandHelp, copyAssets };
