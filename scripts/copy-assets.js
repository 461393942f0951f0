#!/usr/bin/env node
// Copies what tsc does not emit next to each compiled node: its .html (edit dialog and
// registerType), locales/ when present (Node-RED's way: locales/<lang>/<type>.json, the message
// catalog, and locales/<lang>/<type>.html, the help), and the shared icons/ folder (Node-RED
// looks for icons in an `icons` folder beside each node's .js file).
//
// Help written once for several nodes lives in nodes/shared/help/<name>.html (its first line
// is a comment saying what it is). A node's .html or locale help file includes it with a line
// `<!-- custody-help <name> key="value" ... -->`: the fragment, with each `${key}` replaced by
// the value. `kind="<submission kind>"` also gives `${owner}` and `${payingWallet}` from lib's
// SUBMISSION_KINDS (dist/lib, compiled just before), so the help names the fields the code reads.
// An unknown fragment or a `${key}` without a value fails the build.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const nodesSrc = path.join(root, 'nodes');
const nodesOut = path.join(root, 'dist', 'nodes');
const icons = path.join(root, 'icons');
const helpDir = path.join(nodesSrc, 'shared', 'help');
const { SUBMISSION_KINDS } = require(path.join(root, 'dist', 'lib', 'submission', 'kinds.js'));

/**
 * The text of a node's .html or locale help file with every `<!-- custody-help ... -->` line
 * replaced by its fragment.
 * @param {string} file the file's path.
 * @returns {string} the expanded text.
 * @throws {Error} for an unknown fragment or kind, or a `${key}` without a value.
 */
function expandHelp(file) {
  return fs.readFileSync(file, 'utf8').replace(/^[ \t]*<!-- custody-help ([a-z-]+)((?: [A-Za-z]+="[^"]*")*) -->\n/gm, (_line, name, attrs) => {
    const vars = {};
    for (const m of attrs.matchAll(/([A-Za-z]+)="([^"]*)"/g)) vars[m[1]] = m[2];
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
  });
}

/**
 * Copy a node's locales/ folder: each language's help file (`<type>.html`) with its
 * fragments expanded, every other file as it is.
 * @param {string} src the node's locales/ folder.
 * @param {string} out where it goes in dist.
 */
function copyLocales(src, out) {
  fs.cpSync(src, out, { recursive: true });
  for (const lang of fs.readdirSync(src, { withFileTypes: true })) {
    if (!lang.isDirectory()) continue;
    for (const file of fs.readdirSync(path.join(src, lang.name))) {
      if (file.endsWith('.html')) fs.writeFileSync(path.join(out, lang.name, file), expandHelp(path.join(src, lang.name, file)));
    }
  }
}

for (const entry of fs.readdirSync(nodesSrc, { withFileTypes: true })) {
  if (!entry.isDirectory() || entry.name === 'shared') continue;
  const src = path.join(nodesSrc, entry.name);
  const out = path.join(nodesOut, entry.name);
  fs.mkdirSync(out, { recursive: true });
  const html = path.join(src, `${entry.name}.html`);
  if (fs.existsSync(html)) fs.writeFileSync(path.join(out, `${entry.name}.html`), expandHelp(html));
  const locales = path.join(src, 'locales');
  if (fs.existsSync(locales)) copyLocales(locales, path.join(out, 'locales'));
  if (fs.existsSync(icons)) fs.cpSync(icons, path.join(out, 'icons'), { recursive: true });
}
