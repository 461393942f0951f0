/**
 * The up-to-date check of the build after tsc (scripts/build.ts): the editor bundles
 * (resources/*.js), the rendered dialogs and help (dist/nodes/<type>/), and the icons are
 * written again only when one of their inputs changed since the last build, so that a second
 * `npm start` on an unchanged clone starts Node-RED at once (tsc's own check is `tsc -b` with
 * `incremental`, package.json "build").
 *
 * The inputs are every file under the folders the build reads from, directly or through the
 * modules it imports (lib, nodes, simulator, editor, scripts, icons), and package.json and
 * package-lock.json (the node list, the versions of esbuild and Eta). Their digest, SHA-256 over
 * each file's path and content, is kept in dist/build-stamp.json after a build that succeeded.
 * The build is skipped when the digest is the same and every output is there.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './templates';

/** Where the digest of the last successful build's inputs is kept (dist/ goes with a clean build). */
export const STAMP_FILE = path.join(ROOT, 'dist', 'build-stamp.json');

/** The folders (under the repository root) whose files are inputs of the build. */
const INPUT_DIRS = ['lib', 'nodes', 'simulator', 'editor', 'scripts', 'icons'];

/** The single files that are inputs of the build. */
const INPUT_FILES = ['package.json', 'package-lock.json'];

/** Every file under `dir`, relative to the root, `/`-separated; none when `dir` does not exist. */
function filesUnder(dir: string): string[] {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/**
 * The digest of the build's inputs: SHA-256, hex, over each input file's path and content in
 * path order (a file added, removed, renamed or edited changes it; a touched file does not).
 */
export function inputsDigest(): string {
  const files = [...INPUT_DIRS.flatMap(filesUnder), ...INPUT_FILES.filter((f) => fs.existsSync(path.join(ROOT, f)))].sort();
  const hash = createHash('sha256');
  for (const rel of files) {
    hash.update(rel).update('\0');
    hash.update(fs.readFileSync(path.join(ROOT, rel))).update('\0');
  }
  return hash.digest('hex');
}

/**
 * Whether the build's outputs are all there and were made from inputs with this digest.
 * @param digest {@link inputsDigest} now.
 * @param outputs the files the build writes, absolute paths.
 */
export function upToDate(digest: string, outputs: string[]): boolean {
  let stamp: { digest?: unknown };
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP_FILE, 'utf8')) as { digest?: unknown };
  } catch {
    return false;
  }
  return stamp.digest === digest && outputs.every((f) => fs.existsSync(f));
}

/** Forget the last build (before building: a build that fails half-way leaves no stamp). */
export function clearStamp(): void {
  fs.rmSync(STAMP_FILE, { force: true });
}

/** Record that the build succeeded from inputs with this digest. */
export function writeStamp(digest: string): void {
  fs.mkdirSync(path.dirname(STAMP_FILE), { recursive: true });
  fs.writeFileSync(STAMP_FILE, JSON.stringify({ digest }, null, 2) + '\n');
}
