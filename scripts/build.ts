/**
 * The build after tsc (`npm run build`: `tsc -b tsconfig.json editor/tsconfig.json && node
 * dist/scripts/build.js`; tsc builds incrementally, dist/*.tsbuildinfo):
 * 1. the editor scripts, editor/src/*.ts bundled into resources/*.js (bundle-editor.ts);
 * 2. each node's .html and locales/, rendered, and the icons (copy-assets.ts);
 * 3. the operation nodes' dialogs (generate-editors.ts).
 *
 * Skipped when no input changed since the last build and every output is there
 * (build-stamp.ts); `node dist/scripts/build.js --force` builds regardless.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EDITOR_SCRIPTS, bundleEditor } from './bundle-editor';
import { clearStamp, inputsDigest, upToDate, writeStamp } from './build-stamp';
import { copyAssets } from './copy-assets';
import { generate } from './generate-editors';
import { ROOT } from './templates';

/** The files every build writes: the editor bundles, each node's dialog (package.json "node-red") and the icons folder. */
function outputs(): string[] {
  const pkg = require(path.join(ROOT, 'package.json')) as { 'node-red': { nodes: Record<string, string> } };
  const nodes = Object.values(pkg['node-red'].nodes).map((js) => path.join(ROOT, js.replace(/\.js$/, '.html')));
  const first = Object.values(pkg['node-red'].nodes)[0];
  const icons = fs.existsSync(path.join(ROOT, 'icons')) ? [path.join(ROOT, path.dirname(first), 'icons')] : [];
  return [...EDITOR_SCRIPTS.map((name) => path.join(ROOT, 'resources', `${name}.js`)), ...nodes, ...icons];
}

async function main(): Promise<void> {
  const digest = inputsDigest();
  if (!process.argv.includes('--force') && upToDate(digest, outputs())) {
    console.log('build: editor bundles, dialogs and help up to date (no input changed)');
    return;
  }
  clearStamp();
  await bundleEditor();
  copyAssets();
  generate();
  writeStamp(digest);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
