#!/usr/bin/env node
// `npm start`: the main job. Starts Node-RED (the devDependency) on http://127.0.0.1:$PORT
// (default 1880) with a user directory inside the project (.node-red/, git-ignored), the pack
// installed into it, the built-in simulator as the connection, and the example flows deployed.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { mergeExamples } = require('./examples');

const root = path.resolve(__dirname, '..');
const userDir = process.env.NODE_RED_USER_DIR || path.join(root, '.node-red');
const pkg = require(path.join(root, 'package.json'));

// The user directory holds the credentials file and the key that encrypts it
// (.config.runtime.json), and the simulator's keys: readable by this user only.
fs.mkdirSync(userDir, { recursive: true, mode: 0o700 });
fs.chmodSync(userDir, 0o700);

// Install the pack into the user directory the way npm would: a link in node_modules.
const link = path.join(userDir, 'node_modules', ...pkg.name.split('/'));
fs.mkdirSync(path.dirname(link), { recursive: true });
try {
  fs.lstatSync(link);
} catch {
  fs.symlinkSync(root, link, 'dir');
}
fs.writeFileSync(
  path.join(userDir, 'package.json'),
  JSON.stringify({ name: 'custodyflow-user-dir', private: true, dependencies: { [pkg.name]: `file:${root}` } }, null, 2) + '\n',
);

// Deploy the examples on the first start; later starts keep what the user changed.
// Delete .node-red/flows.json (or set CUSTODYFLOW_RESET_FLOWS=1) to get the examples back.
const flowFile = path.join(userDir, 'flows.json');
if (!fs.existsSync(flowFile) || process.env.CUSTODYFLOW_RESET_FLOWS === '1') {
  fs.writeFileSync(flowFile, JSON.stringify(mergeExamples(path.join(root, 'examples')), null, 2) + '\n');
  console.log(`custodyflow: deployed the example flows to ${path.relative(root, flowFile)}`);
}

const red = require.resolve('node-red/red.js', { paths: [root] });
const child = spawn(process.execPath, [red, '--userDir', userDir, '--settings', path.join(__dirname, 'node-red-settings.js')], {
  stdio: 'inherit',
  env: process.env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
