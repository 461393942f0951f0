/**
 * The command-line simulator (dist/simulator/cli.js) as the tests run it: a child process of this
 * Node, everything it prints on stdout and stderr collected in one text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/** The simulator's command line script (built). */
export const SIMULATOR_CLI = path.join(__dirname, '..', '..', 'simulator', 'cli.js');

/** A running command-line simulator. */
export interface CliSimulator {
  cli: ChildProcess;
  /** Everything it printed so far (stdout and stderr, in arrival order). */
  out(): string;
}

/**
 * Start `node dist/simulator/cli.js --port 0 --data <dataDir> ...args` with stdout and stderr
 * piped and collected.
 * @param env added to this process's environment for the child.
 */
export function spawnCliSimulator(dataDir: string, args: string[] = [], env: Record<string, string> = {}): CliSimulator {
  const cli = spawn(process.execPath, [SIMULATOR_CLI, '--port', '0', '--data', dataDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  cli.stdout!.on('data', (d) => (out += d));
  cli.stderr!.on('data', (d) => (out += d));
  return { cli, out: () => out };
}

/**
 * Send `signal` to the child and wait for it to exit.
 * @returns its exit code (null when a signal ended it).
 */
export async function signalAndWait(cli: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  const exited = new Promise<number | null>((r) => cli.once('exit', (code) => r(code)));
  cli.kill(signal);
  return exited;
}

/**
 * Run `body` with a command-line simulator started on a fresh data directory under the OS temp
 * directory (named with `prefix`, e.g. `cf-cli-`) and `args` added to its command line; then, however
 * `body` ends, kill the child with SIGKILL if it still runs and remove the directory.
 * @returns what `body` returns.
 * @throws what `body` throws.
 */
export async function withCliSimulator<T>(prefix: string, args: string[], body: (run: CliSimulator & { dataDir: string }) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(path.join(tmpdir(), prefix));
  const run = { ...spawnCliSimulator(dataDir, args), dataDir };
  try {
    return await body(run);
  } finally {
    if (run.cli.exitCode === null) run.cli.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
