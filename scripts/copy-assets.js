#!/usr/bin/env node
// Copies what tsc does not emit next to each compiled node: its .html (editor + help) and
// locales/ when present; and the pack's icons/ folder ONCE, beside the first node listed in
// package.json. Node-RED looks for icons in an `icons` folder beside each node's .js file and
// finds any icon of a module in any of its icon folders, but lists every folder's icons in the
// editor's icon picker: a copy per node listed each icon once per node (22 times).
// The operation nodes' dialogs are not copied: scripts/generate-editors.js writes them (their
// help is nodes/<type>/<type>.help.html, expanded with `expandHelp` below).
//
// Help written once for several nodes lives in nodes/shared/help/<name>.html (its first line
// is a comment saying what it is). A node's .html includes it with a line
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

/** A node's .html with every `<!-- custody-help ... -->` line replaced by its fragment. */
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
    if (fs.existsSync(locales)) fs.cpSync(locales, path.join(out, 'locales'), { recursive: true });
    // Icons of an earlier build (one copy per node) would still be listed: removed.
    fs.rmSync(path.join(out, 'icons'), { recursive: true, force: true });
  }
  const first = Object.values(require(path.join(root, 'package.json'))['node-red'].nodes)[0];
  if (fs.existsSync(icons)) fs.cpSync(icons, path.join(root, path.dirname(first), 'icons'), { recursive: true });
}

if (require.main === module) copyAssets();

module.exports = { expandHelp, copyAssets };
