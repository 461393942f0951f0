/**
 * A preload for a started Node-RED (`NODE_OPTIONS=--require <this file>`, see
 * test/nodes/lazy-simulator.test.ts): when the process exits, it writes the paths of every CommonJS
 * module it loaded (the keys of `require.cache`), one per line, to the file named by
 * `CUSTODYFLOW_LOADED_MODULES_FILE`. Without that variable it does nothing. Loads nothing but
 * node:fs. What it checks: the pack loads the built-in simulator only when a connection uses it
 * (nodes/custody-config/clients.ts `builtInSimulator`).
 */
import fs from 'node:fs';

const out = process.env.CUSTODYFLOW_LOADED_MODULES_FILE;
if (out) {
  process.on('exit', () => {
    fs.writeFileSync(out, Object.keys(require.cache).join('\n') + '\n');
  });
}
