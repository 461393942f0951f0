/**
 * Bundles the editor scripts, editor/src/<name>.ts, into resources/<name>.js (what Node-RED
 * serves at resources/@custodyflow/node-red-custody/<name>.js): esbuild, one IIFE per script,
 * ES2017. Type-checked by `tsc -p editor/tsconfig.json` (the DOM, jQuery and the editor API
 * of editor/src/red.d.ts); esbuild only strips the types.
 *
 * The constants the dialogs check with are read here from the modules that own them and written
 * into each bundle as `CUSTODY_SHARED` (editor/src/shared.d.ts), never retyped in the editor.
 */
import * as path from 'node:path';
import { build } from 'esbuild';
import { PATH_ID } from '../lib/request/prepare';
import { LOOKUP_KINDS } from '../nodes/custody-config/lookup';
import { OPERATION_FROM_MSG, typedFieldDefaults } from '../nodes/shared/editor-table';
import { ROOT } from './templates';
import { MEMBER_ID } from '../lib/request/policy-body';
import { SETTING_TYPES } from '../nodes/shared/typed-field';

/** The editor scripts, by the name of their bundle in resources/. */
export const EDITOR_SCRIPTS = ['custody-editor', 'custody-lookup', 'custody-review', 'custody-coordination', 'approver-policy'] as const;

/** The value of `CUSTODY_SHARED` in the bundles (see editor/src/shared.d.ts). */
function sharedConstants(): Record<string, unknown> {
  if (PATH_ID.flags || MEMBER_ID.flags) throw new Error('bundle-editor: PATH_ID and MEMBER_ID are written without flags');
  return { pathId: PATH_ID.source, memberId: MEMBER_ID.source, fromMsg: OPERATION_FROM_MSG, lookupKinds: [...LOOKUP_KINDS], settingTypes: [...SETTING_TYPES], typedFields: typedFieldDefaults() };
}

/** Write resources/<name>.js of every editor script. */
export async function bundleEditor(): Promise<void> {
  await build({
    entryPoints: EDITOR_SCRIPTS.map((name) => ({ in: path.join(ROOT, 'editor', 'src', `${name}.ts`), out: name })),
    outdir: path.join(ROOT, 'resources'),
    bundle: true,
    format: 'iife',
    target: 'es2017',
    platform: 'browser',
    charset: 'utf8',
    legalComments: 'none',
    banner: { js: '/* CustodyFlow editor script, bundled from editor/src/ by scripts/bundle-editor.ts: edit the TypeScript, not this file. */' },
    logLevel: 'warning',
    define: { CUSTODY_SHARED: JSON.stringify(sharedConstants()) },
  });
}
