/**
 * The pack as `npm pack` makes it: the tarball a user installs (README "Install": from a
 * tarball) and the container image installs (docker/Dockerfile).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { root } from './red-process';

/**
 * Run `npm pack` in the project into `dest` (an empty folder).
 * @param opts.scripts run the `prepack` script (`npm run build`) as a user's `npm pack` does
 *   (default false: `--ignore-scripts`, the build of `npm test` is used as it is).
 * @returns the tarball's absolute path, `dest/custodyflow-node-red-custody-<version>.tgz`.
 * @throws {Error} when npm fails or writes no single .tgz into `dest`.
 */
export function packTarball(dest: string, opts: { scripts?: boolean } = {}): string {
  execFileSync('npm', ['pack', ...(opts.scripts ? [] : ['--ignore-scripts']), '--silent', '--pack-destination', dest], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const made = fs.readdirSync(dest).filter((f) => f.endsWith('.tgz'));
  if (made.length !== 1) throw new Error(`npm pack wrote ${made.length} tarballs into ${dest}: ${made.join(', ')}`);
  return path.join(dest, made[0]);
}
