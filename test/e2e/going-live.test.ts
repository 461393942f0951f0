/**
 * docs/going-live.md, run as written: the key-generation block (marked
 * `<!-- going-live: key-generation -->`) with the real `openssl` in a fresh folder, then the
 * simulator rehearsal of the registration (marked `<!-- going-live: register-with-simulator -->`,
 * with `curl` and `node`) against a simulator started here, whose control URL replaces the block's
 * `CONTROL_URL=` line (the one line the reader fills in from the simulator's banner). The
 * simulator refuses requests signed with the new key before the registration, and accepts them
 * after it with the API key the registration answered: lib's CustodyClient over real sockets.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CustodyClient, listAssets } from '../../lib';
import { Simulator } from '../../simulator';
import { root } from '../helpers/red-process';
import { assertAuthRefused, pemHeader, tempDirPerTest } from '../helpers/support';

const GUIDE = path.join(root, 'docs', 'going-live.md');

/**
 * The shell block that follows the marker `<!-- going-live: <name> ... -->` in docs/going-live.md.
 * @throws {assert.AssertionError} when the marker or its fenced `sh` block is missing.
 */
function guideBlock(name: string): string {
  const text = fs.readFileSync(GUIDE, 'utf8');
  const m = new RegExp(`<!-- going-live: ${name}\\b[^>]*-->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(text);
  assert.ok(m, `docs/going-live.md has the block "${name}"`);
  return m[1];
}

/**
 * Run `script` with bash (errexit, pipefail) in `cwd`, without blocking this process (the
 * simulator the script calls runs in it).
 * @returns its stdout. @throws when a command fails, with its stderr.
 */
async function runShell(script: string, cwd: string): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', ['-c', `set -euo pipefail\n${script}`], { cwd, encoding: 'utf8', timeout: 60000 });
  return stdout;
}

describe('docs/going-live.md: the key pair made by its commands, registered through the simulator', function () {
  this.timeout(120000);
  const dir = tempDirPerTest('cf-going-live-');

  it('makes a 2048-bit PKCS#8 key pair with openssl, registers the public key with the simulator, and the simulator accepts requests signed with it only after that', async () => {
    const keygen = guideBlock('key-generation');
    const out = await runShell(keygen, dir());
    assert.match(out, /^Key is valid$/m, 'openssl checked the private key');
    const privFile = path.join(dir(), 'partner-private-key.pem');
    const pubFile = path.join(dir(), 'partner-public-key.pem');
    const privateKey = fs.readFileSync(privFile, 'utf8');
    assert.match(privateKey, pemHeader('PRIVATE KEY'), 'PKCS#8');
    assert.match(fs.readFileSync(pubFile, 'utf8'), pemHeader('PUBLIC KEY'), 'SPKI');
    assert.equal(fs.statSync(privFile).mode & 0o077, 0, 'the private key is readable by its owner only');
    assert.match(execFileSync('openssl', ['pkey', '-in', privFile, '-noout', '-text'], { encoding: 'utf8' }), /Private-Key: \(2048 bit/);
    const fingerprint = /= ([0-9a-f]{64})$/m.exec(out)?.[1];
    assert.ok(fingerprint, `the block printed the fingerprint: ${out}`);

    // The PKCS#1 copy for PKCS#1-only clients, with the command the guide gives.
    const pkcs1Command = /`(openssl rsa -in partner-private-key\.pem -traditional -out partner-private-key\.pkcs1\.pem)`/.exec(fs.readFileSync(GUIDE, 'utf8'))?.[1];
    assert.ok(pkcs1Command, 'the guide gives the PKCS#1 command');
    await runShell(pkcs1Command, dir());
    const pkcs1 = fs.readFileSync(path.join(dir(), 'partner-private-key.pkcs1.pem'), 'utf8');
    assert.match(pkcs1, pemHeader('RSA PRIVATE KEY'));

    const sim = await Simulator.start({ dataDir: path.join(dir(), 'sim'), port: 0 });
    const clients: CustodyClient[] = [];
    const client = (apiKey: string, key: string) => {
      const c = new CustodyClient({ baseUrl: sim.baseUrl, apiKey, privateKey: key });
      clients.push(c);
      return c;
    };
    try {
      await assertAuthRefused(listAssets(client(sim.account.apiKey, privateKey)), 'signature', 'before the registration, the new key is no key of the account');

      const register = guideBlock('register-with-simulator');
      const controlLines = register.split('\n').filter((l) => l.startsWith('CONTROL_URL='));
      assert.equal(controlLines.length, 1, 'one CONTROL_URL line to fill in');
      const printed = await runShell(register.replace(controlLines[0], `CONTROL_URL=${sim.controlUrl}`), dir());
      const registration = JSON.parse(fs.readFileSync(path.join(dir(), 'registration.json'), 'utf8')) as { api_key: string; fingerprint: string; created: boolean };
      assert.equal(registration.created, true);
      assert.equal(registration.fingerprint, fingerprint, 'the simulator registered the key openssl fingerprinted');
      assert.match(printed, new RegExp(`^fingerprint ${fingerprint}$`, 'm'));
      const apiKey = fs.readFileSync(path.join(dir(), 'partner-api-key.txt'), 'utf8');
      assert.equal(apiKey, registration.api_key);

      assert.ok((await listAssets(client(apiKey, privateKey))).data.assets.length > 0, 'signed with the PKCS#8 file');
      assert.ok((await listAssets(client(apiKey, pkcs1))).data.assets.length > 0, 'signed with the PKCS#1 file');
      const company = (await client(apiKey, privateKey).request<{ company_id: string }>('POST', '/company', { body: { name: 'Going live Ltd' } })).data;
      assert.match(company.company_id, /\S/, 'a write goes through');
      await assertAuthRefused(listAssets(client(apiKey, sim.account.privateKeyPem)), 'signature', 'the API key with another private key');
    } finally {
      for (const c of clients) c.close();
      await sim.stop();
    }
  });
});
