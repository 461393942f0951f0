/**
 * The install route that works before the package is on the registry (README "Install", from a
 * tarball): `npm pack` in a clone (its `prepack` script builds), then, in a Node-RED user
 * directory that has never had the pack,
 * - `npm install <tarball>` and a restart of Node-RED, or
 * - the palette manager's upload (menu, Manage palette, Install, upload): the editor sends the
 *   tarball as `POST /nodes`, multipart field `tarball` (@node-red/editor-api lib/admin/index.js),
 *   and Node-RED installs it with npm into the user directory.
 * Either way a real `node-red` registers every node type of package.json "node-red" from the
 * installed copy (not a link to the repository) and serves the dialogs and the editor scripts.
 * The pack's dependencies come from the npm registry (or npm's cache), as in a user's install.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packTarball } from '../helpers/pack-tarball';
import { RedProcess, root } from '../helpers/red-process';

const PKG = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; 'node-red': { nodes: Record<string, string> } };
const NODE_TYPES = Object.keys(PKG['node-red'].nodes).sort();

/** A node set as `GET /nodes` lists it (Accept: application/json). */
interface NodeSet {
  module: string;
  version: string;
  types: string[];
  enabled: boolean;
  err?: string;
}

/** The pack's node sets that Node-RED at `base` has registered (none when it has not the pack). */
async function packNodeSets(base: string): Promise<NodeSet[]> {
  const res = await fetch(`${base}/nodes`, { headers: { accept: 'application/json' } });
  assert.equal(res.status, 200);
  return ((await res.json()) as NodeSet[]).filter((s) => s.module === PKG.name);
}

/**
 * Check that Node-RED at `base` has the pack installed in `userDir` and running: every node type
 * registered and enabled, no load error, the package's version; the installed copy a folder of
 * the user directory; each type's dialog in the editor's node HTML; the editor scripts served.
 */
async function assertInstalled(red: RedProcess): Promise<void> {
  const sets = await packNodeSets(red.base);
  assert.deepEqual(sets.flatMap((s) => s.types).sort(), NODE_TYPES, 'every node type of package.json "node-red"');
  assert.equal(NODE_TYPES.length, 23);
  for (const s of sets) {
    assert.equal(s.err, undefined, `${s.types.join(',')}: ${s.err}`);
    assert.equal(s.enabled, true, s.types.join(','));
    assert.equal(s.version, PKG.version);
  }
  const installed = path.join(red.userDir, 'node_modules', ...PKG.name.split('/'));
  assert.ok(fs.lstatSync(installed).isDirectory(), 'installed as a folder of the user directory, not a link');
  const html = await (await fetch(`${red.base}/nodes`, { headers: { accept: 'text/html' } })).text();
  for (const type of NODE_TYPES) assert.ok(html.includes(`registerType("${type}"`), `the dialog of ${type}`);
  const script = await fetch(`${red.base}/resources/${PKG.name}/custody-editor.js`);
  assert.equal(script.status, 200, 'the editor script (resources/) is in the tarball');
  assert.doesNotMatch(red.log, /\[error\]/, red.log);
}

describe('the tarball route: npm pack, then installed into a fresh Node-RED user directory', function () {
  this.timeout(240000);
  let packDir: string;
  let tarball: string;
  const reds: RedProcess[] = [];

  before(() => {
    packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-tarball-pack-'));
    tarball = packTarball(packDir, { scripts: true });
  });

  after(async () => {
    for (const red of reds) await red.stop();
    if (packDir) fs.rmSync(packDir, { recursive: true, force: true });
  });

  it('npm pack writes custodyflow-node-red-custody-<version>.tgz with the built pack, and no tests or TypeScript sources', () => {
    assert.equal(path.basename(tarball), `custodyflow-node-red-custody-${PKG.version}.tgz`);
    const entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
    const has = (p: string) => entries.includes(`package/${p}`);
    for (const js of Object.values(PKG['node-red'].nodes)) {
      assert.ok(has(js), js);
      assert.ok(has(js.replace(/\.js$/, '.html')), `${js}: its dialog`);
    }
    for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/lib/index.js', 'dist/simulator/index.js', 'resources/custody-editor.js']) assert.ok(has(f), f);
    assert.ok(entries.some((e) => e.startsWith('package/examples/') && e.endsWith('.json')), 'the examples');
    const stray = entries.filter((e) => /^package\/(test|bench|lib|nodes|editor|scripts|simulator|dist\/test|dist\/bench|dist\/scripts)\//.test(e) || /\.tsbuildinfo$|build-stamp|\.map$|\.test\.js$/.test(e) || (/\.ts$/.test(e) && !/\.d\.ts$/.test(e)));
    assert.deepEqual(stray, []);
  });

  it('npm install <tarball> in the user directory and a restart: Node-RED registers the 23 node types', async () => {
    const red = new RedProcess({ prefix: 'cf-tarball-npm-', linkPack: false });
    reds.push(red);
    await red.start(); // Node-RED makes its user directory (package.json, settings)
    assert.deepEqual(await packNodeSets(red.base), [], 'not there before the install');
    await red.stop({ keepUserDir: true });
    // npm installs where the nearest package.json is: the one Node-RED made in the user directory.
    assert.ok(fs.existsSync(path.join(red.userDir, 'package.json')), "Node-RED made the user directory's package.json");
    execFileSync('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: red.userDir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 180000 });
    await red.start();
    await assertInstalled(red);
  });

  it("the palette manager's upload (Install, upload the .tgz): Node-RED installs it and registers the 23 node types without a restart", async () => {
    const red = new RedProcess({ prefix: 'cf-tarball-upload-', linkPack: false });
    reds.push(red);
    await red.start();
    assert.deepEqual(await packNodeSets(red.base), [], 'not there before the upload');
    const form = new FormData();
    form.append('tarball', new Blob([fs.readFileSync(tarball)], { type: 'application/gzip' }), path.basename(tarball));
    const res = await fetch(`${red.base}/nodes`, { method: 'POST', body: form });
    const body = await res.text();
    assert.equal(res.status, 200, body);
    const info = JSON.parse(body) as { name: string; version: string };
    assert.deepEqual([info.name, info.version], [PKG.name, PKG.version]);
    await assertInstalled(red);
  });
});
