/**
 * Writes what tsc does not emit next to each compiled node: its .html (edit dialog and
 * registerType, for the nodes whose dialog is not generated) and its locales/ (Node-RED's way:
 * locales/<lang>/<type>.json, the message catalog, and locales/<lang>/<type>.html, the help),
 * both rendered as templates (templates.ts: help fragments, dialog rows); and the pack's icons/
 * folder ONCE, beside the first node listed in package.json. Node-RED looks for icons in an
 * `icons` folder beside each node's .js file and lists every such folder in the editor's icon
 * picker: a copy per node listed each icon once per node (22 times). The operation nodes'
 * dialogs are written by generate-editors.ts.
 *
 * Node-RED registers a node's catalog under the node's own namespace (`<package>/<type>`, the
 * node set), and the `RED._` a node module gets looks keys up there only: there is no catalog
 * several node sets share. So the texts the shared runtime (nodes/shared) shows, written once in
 * nodes/shared/locales/<lang>/common.json under the top-level key `common` (as Node-RED's core
 * nodes keep theirs under `common` in one catalog), are merged here into every node's catalog
 * of that language; a node catalog with a top-level key other than its type fails the build.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, renderFile } from './templates';

const nodesSrc = path.join(ROOT, 'nodes');
const nodesOut = path.join(ROOT, 'dist', 'nodes');
const icons = path.join(ROOT, 'icons');
const commonLocales = path.join(nodesSrc, 'shared', 'locales');

/**
 * A node's message catalog with the shared texts of the same language merged in: the node's
 * own keys under its type, the shared ones under `common`.
 * @param file the node's catalog, locales/<lang>/<type>.json.
 * @param type the node type, the only top-level key the node's catalog may have.
 * @param lang the language folder, e.g. `en-US`.
 * @returns the merged catalog, JSON.
 * @throws {Error} for a top-level key other than `type` in the node's catalog.
 */
function mergeCatalog(file: string, type: string, lang: string): string {
  const own = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  const stray = Object.keys(own).filter((k) => k !== type);
  if (stray.length) throw new Error(`${file}: top-level keys other than ${type}: ${stray.join(', ')}`);
  const commonFile = path.join(commonLocales, lang, 'common.json');
  const common = fs.existsSync(commonFile) ? (JSON.parse(fs.readFileSync(commonFile, 'utf8')) as Record<string, unknown>) : {};
  return JSON.stringify({ ...common, ...own }, null, 2) + '\n';
}

/**
 * Copy a node's locales/ folder: each language's help file (`<type>.html`) rendered, its
 * catalog (`<type>.json`) with the shared texts merged in, anything else as it is.
 * @param src the node's locales/ folder.
 * @param out where it goes in dist.
 * @param type the node type.
 */
function copyLocales(src: string, out: string, type: string): void {
  fs.cpSync(src, out, { recursive: true });
  for (const lang of fs.readdirSync(src, { withFileTypes: true })) {
    if (!lang.isDirectory()) continue;
    const dir = path.join(src, lang.name);
    for (const file of fs.readdirSync(dir)) {
      const target = path.join(out, lang.name, file);
      if (file === `${type}.html`) fs.writeFileSync(target, renderFile(path.join(dir, file)));
      else if (file === `${type}.json`) fs.writeFileSync(target, mergeCatalog(path.join(dir, file), type, lang.name));
    }
  }
}

/** Write each node's .html and locales/, and the icons once. */
export function copyAssets(): void {
  for (const entry of fs.readdirSync(nodesSrc, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === 'shared') continue;
    const src = path.join(nodesSrc, entry.name);
    const out = path.join(nodesOut, entry.name);
    fs.mkdirSync(out, { recursive: true });
    const html = path.join(src, `${entry.name}.html`);
    if (fs.existsSync(html)) fs.writeFileSync(path.join(out, `${entry.name}.html`), renderFile(html));
    const locales = path.join(src, 'locales');
    if (fs.existsSync(locales)) copyLocales(locales, path.join(out, 'locales'), entry.name);
    // Icons of an earlier build (one copy per node) would still be listed: removed.
    fs.rmSync(path.join(out, 'icons'), { recursive: true, force: true });
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
  const first = Object.values(pkg['node-red'].nodes)[0];
  if (fs.existsSync(icons)) fs.cpSync(icons, path.join(ROOT, path.dirname(first), 'icons'), { recursive: true });
}
