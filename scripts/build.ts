/**
 * The build after tsc (`npm run build`: `tsc -p tsconfig.json && tsc -p editor/tsconfig.json
 * && node dist/scripts/build.js`):
 * 1. the editor scripts, editor/src/*.ts bundled into resources/*.js (bundle-editor.ts);
 * 2. each node's .html and locales/, rendered, and the icons (copy-assets.ts);
 * 3. the operation nodes' dialogs (generate-editors.ts).
 */
import { bundleEditor } from './bundle-editor';
import { copyAssets } from './copy-assets';
import { generate } from './generate-editors';

async function main(): Promise<void> {
  await bundleEditor();
  copyAssets();
  generate();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
