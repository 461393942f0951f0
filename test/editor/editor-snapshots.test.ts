/**
 * The generated dialogs and help, as built, against their committed snapshots: every file the
 * build writes from the templates (dist/nodes/<type>/<type>.html, the edit dialog and
 * registerType; dist/nodes/<type>/locales/<lang>/<type>.html, the help, and <type>.json, the
 * merged message catalog) equals test/fixtures/editor-snapshots/nodes/<same path>.snap, byte
 * for byte (`.snap`: a copy of built output, not a source). A change to a template, a help fragment, the editor table or the registry therefore
 * reads as a diff here. After a change that is meant, rewrite the snapshots and commit them
 * with it:
 *   npm run build && UPDATE_SNAPSHOTS=1 npx mocha dist/test/editor/editor-snapshots.test.js
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
const built = path.join(root, 'dist', 'nodes');
const snapshots = path.join(root, 'test', 'fixtures', 'editor-snapshots', 'nodes');
const update = process.env.UPDATE_SNAPSHOTS === '1';

/** The suffix of a snapshot file: the built file's name, then this. */
const SNAP = '.snap';

/** True for a file the build writes from templates: `<type>/<type>.html`, `<type>/locales/<lang>/<type>.{html,json}`. */
function isGenerated(file: string): boolean {
  const parts = file.split('/');
  const [type] = parts;
  if (type === 'shared') return false;
  return file === `${type}/${type}.html` || (parts.length === 4 && parts[1] === 'locales' && (parts[3] === `${type}.html` || parts[3] === `${type}.json`));
}

/**
 * The generated files of a nodes/ tree, by their built path (relative, `/`-separated), sorted.
 * @param dir dist/nodes, or the snapshots.
 * @param suffix what the tree's file names add to the built path ({@link SNAP} for the snapshots).
 */
function generatedFiles(dir: string, suffix = ''): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith(suffix) && fs.statSync(path.join(dir, f)).isFile())
    .map((f) => f.slice(0, f.length - suffix.length).split(path.sep).join('/'))
    .filter(isGenerated)
    .sort();
}

describe('generated dialogs and help, against their snapshots (test/fixtures/editor-snapshots)', function () {
  const files = generatedFiles(built);

  before(function () {
    assert.ok(files.length > 0, 'dist/nodes has no dialogs: run npm run build first');
    if (!update) return;
    fs.rmSync(snapshots, { recursive: true, force: true });
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(snapshots, f)), { recursive: true });
      fs.copyFileSync(path.join(built, f), path.join(snapshots, f + SNAP));
    }
  });

  it('the build writes exactly the snapshotted files (none new, none gone)', function () {
    assert.deepEqual(files, generatedFiles(snapshots, SNAP));
  });

  for (const f of generatedFiles(snapshots, SNAP)) {
    it(f, function () {
      const file = path.join(built, f);
      assert.ok(fs.existsSync(file), `the build no longer writes ${f}`);
      assert.equal(fs.readFileSync(file, 'utf8'), fs.readFileSync(path.join(snapshots, f + SNAP), 'utf8'), `${f} differs from its snapshot (UPDATE_SNAPSHOTS=1 rewrites it when the change is meant)`);
    });
  }
});
