#!/usr/bin/env node
// The Node-RED flow library's scorecard (`node-red-dev validate`) on the package exactly as npm
// would publish it: `npm pack`, unpacked into a temporary folder, its production dependencies
// installed there (the D03 check compares them with the registry's latest versions), then
// validated. The two catalogue look-ups (P08 similar names, N01 unique node names) read
// https://catalogue.nodered.org, which this machine cannot reach: they are answered with an empty
// catalogue and reported as "offline" instead of passed. Every other check runs as the flow
// library runs it. Exit status 1 when any check fails or a node type cannot be parsed.
//
// Usage: npm run scorecard            (builds first)
//        node scripts/scorecard.js    (uses the current dist/)
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'custodyflow-scorecard-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

try {
  const tgz = execFileSync(npm, ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop();
  execFileSync('tar', ['xzf', path.join(work, tgz), '-C', work]);
  const pkgDir = path.join(work, 'package');
  execFileSync(npm, ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--silent'], { cwd: pkgDir, stdio: 'inherit' });

  const devDir = path.dirname(require.resolve('node-red-dev/package.json', { paths: [root] }));
  const preload = path.join(work, 'offline-catalogue.js');
  fs.writeFileSync(
    preload,
    `// Answers node-red-dev's catalogue look-ups with an empty catalogue (no internet here).
const axios = require(${JSON.stringify(require.resolve('axios', { paths: [devDir] }))});
const get = axios.get.bind(axios);
axios.get = (url, ...rest) => (String(url).includes('catalogue.nodered.org') ? Promise.resolve({ data: { modules: [] } }) : get(url, ...rest));
`,
  );
  const out = path.join(work, 'scorecard.json');
  const run = spawnSync(process.execPath, ['-r', preload, path.join(devDir, 'bin', 'run'), 'validate', '-p', pkgDir, '-o', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600000 });
  const text = `${run.stdout}${run.stderr}`;
  process.stdout.write(text);
  if (!fs.existsSync(out)) throw new Error(`node-red-dev validate wrote no scorecard (exit ${run.status})`);
  const card = JSON.parse(fs.readFileSync(out, 'utf8'));
  const offline = new Set(['P08', 'N01']);
  const failed = Object.entries(card).filter(([id, c]) => c && c.test === false && !offline.has(id));
  const unparsed = text.split('\n').filter((l) => l.startsWith('Unable to parse'));
  const declared = Object.keys(require(path.join(pkgDir, 'package.json'))['node-red'].nodes);
  const withExamples = card.N02 && Array.isArray(card.N02.nodes) ? card.N02.nodes.length : 0;
  console.log('\nscorecard:');
  for (const [id, c] of Object.entries(card)) if (c && typeof c.test === 'boolean') console.log(`  ${id} ${offline.has(id) ? 'offline (catalogue not reachable)' : c.test ? 'pass' : 'FAIL'}`);
  console.log(`  node types declared ${declared.length}, unparsed ${unparsed.length}, non-config types with an example ${withExamples}`);
  if (failed.length || unparsed.length) {
    console.error(`scorecard failed: ${[...failed.map(([id]) => id), ...unparsed].join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
