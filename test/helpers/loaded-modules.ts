/**
 * What a started Node-RED loaded: a {@link RedProcess} preloaded with
 * test/helpers/loaded-modules-probe.ts (`NODE_OPTIONS=--require`), which writes the keys of its
 * `require.cache` when the process exits. Used by test/nodes/lazy-simulator.test.ts (the
 * simulator is loaded only when a connection uses it) and test/lib/architecture.test.ts (an empty
 * flow loads no service of lib).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { RedProcess, root, type RedProcessOptions } from './red-process';

/** A started Node-RED with the module probe, and the file the probe writes at its exit. */
export interface ProbedRed {
  red: RedProcess;
  modulesFile: string;
}

/**
 * A {@link RedProcess} (the pack linked, `options` as given) with the probe preloaded, the list to
 * be written to `modulesFile` at its exit; only the child's environment carries the probe. Not
 * started: `await red.start()` (and `stopAndReadModules` or `red.stop()` in any case).
 */
export function probedRed(modulesFile: string, options: RedProcessOptions): ProbedRed {
  const probe = path.join(root, 'dist', 'test', 'helpers', 'loaded-modules-probe.js');
  const red = new RedProcess({
    ...options,
    env: { ...options.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${probe}`.trim(), CUSTODYFLOW_LOADED_MODULES_FILE: modulesFile },
  });
  return { red, modulesFile };
}

/**
 * Stop the Node-RED (SIGINT: it exits and the probe writes) and read the paths of every CommonJS
 * module it loaded.
 * @throws {AssertionError} when the probe wrote nothing (the process did not exit by itself).
 */
export async function stopAndReadModules({ red, modulesFile }: ProbedRed): Promise<string[]> {
  await red.stop();
  assert.ok(fs.existsSync(modulesFile), `the probe wrote no module list (did Node-RED exit by itself?)\n${red.log.slice(-2000)}`);
  return fs.readFileSync(modulesFile, 'utf8').split('\n').filter(Boolean);
}

/**
 * Deploy `flows` (a full deployment) through the admin API of `red`.
 * @throws {AssertionError} when Node-RED answers other than 200 or 204.
 */
export async function deployFlows(red: RedProcess, flows: object[]): Promise<void> {
  const res = await fetch(`${red.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' }, body: JSON.stringify(flows) });
  assert.ok(res.status === 200 || res.status === 204, `deploy: ${res.status} ${await res.text()}`);
}
