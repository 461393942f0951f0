/**
 * The pack without its optional PKCS#11 binding (as `npm ci --omit=optional` leaves it): a child
 * Node.js process whose module resolution cannot find `pkcs11js` (a `--require` preload makes
 * `Module._resolveFilename` throw MODULE_NOT_FOUND for it, as for a package that is not
 * installed) loads the pack's lib, signs with a PEM key (verified), and choosing PKCS#11 gives a
 * KeySourceError `bindingMissing` that says `npm install pkcs11js`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..', '..');

/** The preload: `pkcs11js` cannot be resolved, exactly as when it is not installed. */
const PRELOAD = `
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'pkcs11js' || request.startsWith('pkcs11js/')) {
    const err = new Error("Cannot find module '" + request + "'");
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }
  return resolve.call(this, request, ...rest);
};
`;

/** The child's program: PEM signing through the client's key source, then the PKCS#11 choice. */
const PROGRAM = `
const crypto = require('node:crypto');
const lib = require(${JSON.stringify(path.join(root, 'dist', 'lib', 'index.js'))});
(async () => {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const client = new lib.CustodyClient({ baseUrl: 'http://127.0.0.1:1/api/v1/p', apiKey: 'k', privateKey });
  const headers = await client.feedHeaders('ws://127.0.0.1:1/api/v1/p/coreclient/c/feed');
  const verified = lib.verify(publicKey, { prefix: headers['x-timestamp'], url: 'ws://127.0.0.1:1/api/v1/p/coreclient/c/feed' }, headers['x-sign']);
  await client.close();
  let refusal;
  try {
    new lib.Pkcs11KeySource({ module: '/usr/lib/softhsm/libsofthsm2.so', tokenLabel: 'T', keyLabel: 'K', pin: '1234' });
  } catch (e) {
    refusal = { name: e.name, reason: e.reason, code: e.code, message: e.message };
  }
  let resolvable = true;
  try { require.resolve('pkcs11js', { paths: [${JSON.stringify(root)}] }); } catch { resolvable = false; }
  process.stdout.write(JSON.stringify({ verified, refusal, resolvable }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe('the pack without the optional PKCS#11 binding (pkcs11js)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-no-pkcs11-'));
    fs.writeFileSync(path.join(dir, 'no-pkcs11js.js'), PRELOAD);
    fs.writeFileSync(path.join(dir, 'program.js'), PROGRAM);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads, signs with a PEM key, and refuses PKCS#11 with an error naming `npm install pkcs11js`', () => {
    const out = JSON.parse(execFileSync(process.execPath, ['--require', path.join(dir, 'no-pkcs11js.js'), path.join(dir, 'program.js')], { cwd: root, encoding: 'utf8' })) as {
      verified: boolean;
      refusal?: { name: string; reason: string; code: string; message: string };
      resolvable: boolean;
    };
    assert.equal(out.resolvable, false, 'the preload hides pkcs11js');
    assert.equal(out.verified, true);
    assert.equal(out.refusal?.name, 'KeySourceError');
    assert.equal(out.refusal?.reason, 'bindingMissing');
    assert.equal(out.refusal?.code, 'ECONFIG');
    assert.match(out.refusal?.message ?? '', /is not installed.*`npm install pkcs11js`/);
  });

  it('with the binding present, the same program is not refused for a missing binding', () => {
    const out = JSON.parse(execFileSync(process.execPath, [path.join(dir, 'program.js')], { cwd: root, encoding: 'utf8' })) as { refusal?: unknown; resolvable: boolean };
    assert.equal(out.resolvable, true);
    assert.equal(out.refusal, undefined);
  });
});
