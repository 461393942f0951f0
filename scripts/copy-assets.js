#!/usr/bin/env node
// Copies what tsc does not emit next to each compiled node: its .html (editor + help),
// locales/ when present, and the shared icons/ folder (Node-RED looks for icons in an
// `icons` folder beside each node's .js file).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const nodesSrc = path.join(root, 'nodes');
const nodesOut = path.join(root, 'dist', 'nodes');
const icons = path.join(root, 'icons');

for (const entry of fs.readdirSync(nodesSrc, { withFileTypes: true })) {
  if (!entry.isDirectory() || entry.name === 'shared') continue;
  const src = path.join(nodesSrc, entry.name);
  const out = path.join(nodesOut, entry.name);
  fs.mkdirSync(out, { recursive: true });
  const html = path.join(src, `${entry.name}.html`);
  if (fs.existsSync(html)) fs.copyFileSync(html, path.join(out, `${entry.name}.html`));
  const locales = path.join(src, 'locales');
  if (fs.existsSync(locales)) fs.cpSync(locales, path.join(out, 'locales'), { recursive: true });
  if (fs.existsSync(icons)) fs.cpSync(icons, path.join(out, 'icons'), { recursive: true });
}
