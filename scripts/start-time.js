#!/usr/bin/env node
// How long `npm start` takes to the editor, the first time and the second, on a fresh clone:
// clones the repository's committed HEAD into a temporary folder, gives it its dependencies,
// then starts `npm start` there twice (stopping it in between) and reports the seconds from the
// start of the command to the first HTTP 200 of the editor (GET http://127.0.0.1:$PORT/).
// A measurement, not a test: nothing is asserted.
//
// Usage: npm run bench:start                    (node_modules linked to this repository's)
//        node scripts/start-time.js --npm-ci    (the clone runs `npm ci` first, not timed)
//        PORT=1895 node scripts/start-time.js   (the port; default 1899)
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const port = Number(process.env.PORT) || 1899;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const LIMIT_MS = 300000;

/** GET http://127.0.0.1:port/ once. @returns the status, 0 when nothing answers. */
function status() {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

/**
 * Start `npm start` in `dir` (in a process group of its own), wait for the editor's first 200,
 * stop the group, and wait for it to end.
 * @returns the seconds from the start to the first 200.
 * @throws {Error} when the editor does not answer 200 within LIMIT_MS or the command ends first.
 */
async function timedStart(dir, log) {
  const out = fs.openSync(log, 'w');
  const t0 = process.hrtime.bigint();
  const child = spawn(npm, ['start'], { cwd: dir, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', out, out], detached: true });
  let ended = false;
  const exited = new Promise((resolve) => child.on('exit', () => { ended = true; resolve(); }));
  try {
    for (;;) {
      if (ended) throw new Error(`npm start ended before the editor answered (see ${log})`);
      if ((await status()) === 200) return Number(process.hrtime.bigint() - t0) / 1e9;
      if (Number(process.hrtime.bigint() - t0) / 1e6 > LIMIT_MS) throw new Error(`no HTTP 200 within ${LIMIT_MS / 1000} s (see ${log})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    if (!ended) process.kill(-child.pid, 'SIGINT');
    await exited;
    fs.closeSync(out);
  }
}

async function main() {
  if ((await status()) !== 0) throw new Error(`something already answers on port ${port}: set PORT`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'custodyflow-start-time-'));
  const clone = path.join(work, 'clone');
  try {
    execFileSync('git', ['clone', '--quiet', root, clone]);
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: clone, encoding: 'utf8' }).trim();
    if (process.argv.includes('--npm-ci')) execFileSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: clone, stdio: 'inherit' });
    else fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(clone, 'node_modules'), 'dir');
    console.log(`npm start on a fresh clone of ${head} (${clone}), PORT=${port}`);
    const first = await timedStart(clone, path.join(work, 'first.log'));
    console.log(`first start:  ${first.toFixed(1)} s to HTTP 200`);
    const second = await timedStart(clone, path.join(work, 'second.log'));
    console.log(`second start: ${second.toFixed(1)} s to HTTP 200`);
    fs.rmSync(work, { recursive: true, force: true });
  } catch (err) {
    console.error(`the clone and the logs are kept in ${work}`);
    throw err;
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
