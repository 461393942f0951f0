/**
 * The container (docker/Dockerfile, docker/settings.js, docker/compose.yaml,
 * docs/scale-out/compose.yaml; docs/going-live.md "Run it in a container"). This machine has no
 * Docker engine, so the image is not built here; instead:
 * - the Dockerfile's and the compose files' text is checked against the repository: every file
 *   copied exists, the build stage copies every source the build needs, the compose files build
 *   that Dockerfile and set only variables docker/settings.js reads;
 * - a real `node-red` process runs with docker/settings.js and the variables the compose files
 *   set, with the pack installed from the tarball `npm pack` makes (what the image installs): the
 *   credentials file is encrypted with NODE_RED_CREDENTIAL_SECRET (decrypted here as Node-RED does,
 *   @node-red/runtime/lib/nodes/credentials.js: aes-256-ctr, key SHA-256 of the secret, the first
 *   32 hex characters the IV), and the users of CUSTODYFLOW_ADMIN_* and CUSTODYFLOW_OPERATORS log
 *   in with Node-RED's own login, with their permissions;
 * - without the secret or the admin's hash, Node-RED does not start and says why.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { adminCall } from '../helpers/admin-auth';
import { packTarball } from '../helpers/pack-tarball';
import { freePort, RedProcess, root } from '../helpers/red-process';
import { rsaKeyPair } from '../helpers/red-setup';

const DOCKERFILE = path.join(root, 'docker', 'Dockerfile');
const SETTINGS = path.join(root, 'docker', 'settings.js');
const COMPOSE_FILES = [path.join(root, 'docker', 'compose.yaml'), path.join(root, 'docs', 'scale-out', 'compose.yaml')];
const RED_JS = require.resolve('node-red/red.js', { paths: [root] });

/** The environment variables a script reads as `process.env.NAME`. */
function variablesRead(file: string): Set<string> {
  return new Set([...fs.readFileSync(file, 'utf8').matchAll(/process\.env\.([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]));
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(): Array<{ op: string; args: string }> {
  const text = fs.readFileSync(DOCKERFILE, 'utf8').replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** Node-RED's decryption of flows_cred.json with `secret`. @throws when the key is not the one used (the plain text is no JSON). */
function decryptCredentials(file: string, secret: string): Record<string, Record<string, string>> {
  const blob = (JSON.parse(fs.readFileSync(file, 'utf8')) as { $: string }).$;
  const key = createHash('sha256').update(secret).digest();
  const decipher = createDecipheriv('aes-256-ctr', key, Buffer.from(blob.slice(0, 32), 'hex'));
  return JSON.parse(decipher.update(blob.slice(32), 'base64', 'utf8') + decipher.final('utf8'));
}

/** A bcrypt hash of `password` made by `node-red admin hash-pw`, as docs/going-live.md says. */
function hashPassword(password: string): string {
  const out = execFileSync(process.execPath, [RED_JS, 'admin', 'hash-pw'], { input: password + '\n', encoding: 'utf8', timeout: 30000 });
  const hash = /\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}/.exec(out)?.[0];
  assert.ok(hash, `node-red admin hash-pw printed a hash: ${out}`);
  return hash;
}

/** Start node-red with `settings` and exactly `env` (plus PATH), expecting it to stop at once. @returns its exit code and output. */
function startRefused(settings: string, env: Record<string, string>): { status: number | null; out: string } {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-container-refused-'));
  try {
    const r = spawnSync(process.execPath, [RED_JS, '--userDir', userDir, '--settings', settings], { env: { PATH: process.env.PATH ?? '', PORT: '0', ...env }, encoding: 'utf8', timeout: 60000 });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

describe('the container: Dockerfile and compose files against the repository', function () {
  it('the Dockerfile builds on node:20 and the official Node-RED 4.1 image on Node.js 20; every file it copies exists and the build stage copies every source the build needs', () => {
    const ins = instructions();
    const args = ins.filter((i) => i.op === 'ARG').map((i) => i.args);
    assert.ok(args.includes('NODE_RED_IMAGE=nodered/node-red:4.1-20'), args.join(' | '));
    assert.deepEqual(ins.filter((i) => i.op === 'FROM').map((i) => i.args), ['node:20-alpine AS build', '${NODE_RED_IMAGE}']);
    const copies = ins.filter((i) => i.op === 'COPY' && !/--from=/.test(i.args)).map((i) => i.args.split(/\s+/).filter((a) => !a.startsWith('--')));
    const ignored = fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    const sources = new Set<string>();
    for (const parts of copies) {
      for (const src of parts.slice(0, -1)) {
        assert.ok(fs.existsSync(path.join(root, src)), `COPY ${src}: exists in the repository`);
        assert.ok(!ignored.includes(src), `COPY ${src}: not in .dockerignore`);
        sources.add(src);
      }
    }
    // What tsc compiles for the pack (tsconfig "include", less the tests and benchmarks) and what
    // package.json "files" ships that is not built, all go into the build stage.
    const tsconfig = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as { include: string[] };
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[] };
    const needed = [
      ...tsconfig.include.map((g) => g.split('/')[0]).filter((d) => d !== 'test' && d !== 'bench'),
      ...pkg.files.filter((f) => !f.startsWith('dist/') && !f.startsWith('!') && f !== 'resources'),
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'editor',
      'icons',
    ];
    for (const n of needed) assert.ok(sources.has(n), `the build stage copies ${n}`);
    // The settings file and the health check are started from where they are copied to.
    const settingsCopy = copies.find((c) => c[0] === 'docker/settings.js');
    const healthCopy = copies.find((c) => c[0] === 'docker/healthcheck.js');
    assert.ok(settingsCopy && healthCopy);
    const cmd = JSON.parse(ins.find((i) => i.op === 'CMD')!.args) as string[];
    assert.deepEqual(cmd, ['--settings', settingsCopy.at(-1)]);
    assert.ok(ins.find((i) => i.op === 'HEALTHCHECK')!.args.includes(healthCopy.at(-1)!));
  });

  it('both compose files build docker/Dockerfile, keep /data on a volume, publish on loopback, and set only variables docker/settings.js reads, the secret and the admin hash required', () => {
    const read = variablesRead(SETTINGS);
    for (const must of ['NODE_RED_CREDENTIAL_SECRET', 'CUSTODYFLOW_ADMIN_USER', 'CUSTODYFLOW_ADMIN_PASSWORD_HASH', 'CUSTODYFLOW_OPERATORS']) assert.ok(read.has(must), `docker/settings.js reads ${must}`);
    // `npm start` reads the secret under the same name.
    assert.ok(variablesRead(path.join(root, 'scripts', 'node-red-settings.js')).has('NODE_RED_CREDENTIAL_SECRET'));
    for (const file of COMPOSE_FILES) {
      const doc = yaml.load(fs.readFileSync(file, 'utf8')) as { services: Record<string, { build?: { context: string; dockerfile: string }; environment?: Record<string, string>; volumes?: string[]; ports?: string[] }> };
      const nodeRed = Object.entries(doc.services).filter(([, s]) => s.build);
      assert.ok(nodeRed.length >= 1, `${file}: a service builds the image`);
      for (const [name, s] of nodeRed) {
        const what = `${path.relative(root, file)} ${name}`;
        assert.equal(path.resolve(path.dirname(file), s.build!.context, s.build!.dockerfile), DOCKERFILE, `${what}: builds docker/Dockerfile`);
        assert.equal(path.resolve(path.dirname(file), s.build!.context), root, `${what}: the repository is the build context`);
        const env = s.environment ?? {};
        for (const key of Object.keys(env)) assert.ok(read.has(key), `${what}: ${key} is read by docker/settings.js`);
        for (const key of ['NODE_RED_CREDENTIAL_SECRET', 'CUSTODYFLOW_ADMIN_PASSWORD_HASH']) assert.match(env[key] ?? '', new RegExp(`^\\$\\{${key}:\\?`), `${what}: ${key} is required`);
        assert.ok((s.volumes ?? []).some((v) => v.endsWith(':/data')), `${what}: /data on a volume`);
        for (const p of s.ports ?? []) assert.match(p, /^127\.0\.0\.1:\d+:1880$/, `${what}: published on loopback`);
      }
    }
    // env.example names every variable the compose files pass on.
    const example = fs.readFileSync(path.join(root, 'docker', 'env.example'), 'utf8');
    for (const key of ['NODE_RED_CREDENTIAL_SECRET', 'CUSTODYFLOW_ADMIN_USER', 'CUSTODYFLOW_ADMIN_PASSWORD_HASH', 'CUSTODYFLOW_OPERATORS']) assert.match(example, new RegExp(`^${key}=`, 'm'));
  });
});

describe('the container: Node-RED with docker/settings.js and the pack from its npm tarball', function () {
  this.timeout(180000);
  const secret = randomBytes(32).toString('hex');
  const adminPassword = `admin-${randomBytes(6).toString('hex')}`;
  const operatorPassword = `operator-${randomBytes(6).toString('hex')}`;
  const apiKey = `Y29udGFpbmVyLXRlc3Qta2V5LW5vdC1yZWFs${randomBytes(4).toString('hex')}`;
  const privateKey = rsaKeyPair('pkcs8').privateKey;
  let packDir: string;
  let red: RedProcess;

  /** Node-RED's login (`POST /auth/token`). @returns the status and the token when 200. */
  async function login(username: string, password: string): Promise<{ status: number; token?: string }> {
    const res = await fetch(`${red.base}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'node-red-editor', grant_type: 'password', scope: '', username, password }) });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string };
    return { status: res.status, token: body.access_token };
  }

  before(async () => {
    const adminHash = hashPassword(adminPassword);
    const operatorHash = hashPassword(operatorPassword);
    // The tarball the image installs (docker/Dockerfile: npm pack), unpacked where npm would put
    // it; its dependencies come from the project's node_modules through NODE_PATH.
    packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-container-pack-'));
    const tarball = packTarball(packDir);
    red = new RedProcess({
      prefix: 'cf-container-',
      settingsFile: SETTINGS,
      env: {
        HOST: '127.0.0.1',
        NODE_PATH: fs.realpathSync(path.join(root, 'node_modules')),
        NODE_RED_CREDENTIAL_SECRET: secret,
        CUSTODYFLOW_ADMIN_USER: 'treasury-admin',
        CUSTODYFLOW_ADMIN_PASSWORD_HASH: adminHash,
        CUSTODYFLOW_OPERATORS: `alice:${operatorHash}, bob:${operatorHash}`,
      },
    });
    const installed = path.join(red.userDir, 'node_modules', '@custodyflow', 'node-red-custody');
    fs.mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    fs.writeFileSync(path.join(red.userDir, 'flows.json'), '[]');
    await red.start();
  });

  after(async () => {
    await red?.stop();
    if (packDir) fs.rmSync(packDir, { recursive: true, force: true });
  });

  it('loads the pack from the tarball and asks for a login', async () => {
    assert.ok(fs.lstatSync(path.join(red.userDir, 'node_modules', '@custodyflow', 'node-red-custody')).isDirectory(), 'installed, not linked');
    assert.equal((await fetch(`${red.base}/flows`)).status, 401, 'no admin API without a login');
    const scheme = (await (await fetch(`${red.base}/auth/login`)).json()) as { type?: string };
    assert.equal(scheme.type, 'credentials');
    assert.doesNotMatch(red.log, /\[error\]/, red.log);
  });

  it("docker/healthcheck.js (the image's HEALTHCHECK) answers healthy for this Node-RED and unhealthy for a port nothing listens on", async () => {
    const check = (port: number) => spawnSync(process.execPath, [path.join(root, 'docker', 'healthcheck.js')], { env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '0.0.0.0' }, timeout: 30000 }).status;
    assert.equal(check(red.port), 0);
    assert.equal(check(await freePort()), 1);
  });

  it('logs the admin in with the password of CUSTODYFLOW_ADMIN_PASSWORD_HASH, and no one with another password', async () => {
    assert.equal((await login('treasury-admin', 'not-the-password')).status === 200, false);
    assert.equal((await login('admin', adminPassword)).status === 200, false, 'CUSTODYFLOW_ADMIN_USER names the admin');
    const { status, token } = await login('treasury-admin', adminPassword);
    assert.equal(status, 200);
    const nodes = (await (await adminCall(red.base, token!, 'GET', '/nodes')).json()) as Array<{ module: string; enabled: boolean }>;
    assert.ok(nodes.some((n) => n.module === '@custodyflow/node-red-custody' && n.enabled), 'the pack is loaded');
  });

  it('encrypts the credentials of a deployed config node with NODE_RED_CREDENTIAL_SECRET, and with no other key', async () => {
    const { token } = await login('treasury-admin', adminPassword);
    const flows = [{ id: 'c0a7a1e400000001', type: 'custody-config', name: 'production-like', environment: 'custom', baseUrl: 'https://custody.example.test/api/v1/p', signingMode: 'timestamp', timeout: 30, credentials: { apiKey, privateKey } }];
    const res = await adminCall(red.base, token!, 'POST', '/flows', flows);
    assert.equal(res.status, 204, await res.text());
    const credFile = path.join(red.userDir, 'flows_cred.json');
    const text = fs.readFileSync(credFile, 'utf8');
    assert.ok(!text.includes(apiKey) && !text.includes('PRIVATE KEY'), 'nothing in clear');
    const creds = decryptCredentials(credFile, secret);
    assert.equal(creds.c0a7a1e400000001.apiKey, apiKey);
    assert.equal(creds.c0a7a1e400000001.privateKey, privateKey);
    assert.throws(() => decryptCredentials(credFile, randomBytes(32).toString('hex')), 'another secret does not open it');
    // The secret is not stored beside the file it protects (Node-RED's generated key would be).
    const runtimeConfig = path.join(red.userDir, '.config.runtime.json');
    if (fs.existsSync(runtimeConfig)) assert.ok(!('_credentialSecret' in JSON.parse(fs.readFileSync(runtimeConfig, 'utf8'))));
    assert.ok(!red.log.includes(secret) && !red.log.includes(apiKey), 'neither the secret nor the key is logged');
  });

  it('a restart with the same secret opens the credentials again (the container keeps no key of its own)', async () => {
    await red.stop({ keepUserDir: true });
    const mark = red.log.length;
    await red.start();
    const { token } = await login('treasury-admin', adminPassword);
    const view = (await (await adminCall(red.base, token!, 'GET', '/credentials/custody-config/c0a7a1e400000001')).json()) as { has_apiKey?: boolean; has_privateKey?: boolean };
    assert.deepEqual([view.has_apiKey, view.has_privateKey], [true, true]);
    assert.doesNotMatch(red.log.slice(mark), /Error loading credentials|Encrypted credentials not found/);
  });

  it("gives CUSTODYFLOW_OPERATORS the review scopes and read, without deploy", async () => {
    for (const user of ['alice', 'bob']) {
      const { status, token } = await login(user, operatorPassword);
      assert.equal(status, 200, user);
      assert.equal((await adminCall(red.base, token!, 'GET', '/custody/reviews')).status, 200, `${user} reads the reviews`);
      assert.equal((await adminCall(red.base, token!, 'GET', '/flows')).status, 200, `${user} reads the flows`);
      assert.equal((await adminCall(red.base, token!, 'POST', '/flows', [])).status, 401, `${user} cannot deploy`);
      const me = (await (await adminCall(red.base, token!, 'GET', '/settings')).json()) as { user?: { permissions?: string[] } };
      assert.deepEqual(me.user?.permissions, ['read', 'custody.review.read', 'custody.review.write']);
    }
  });
});

describe('the container: docker/settings.js refuses to start without what production needs', function () {
  this.timeout(120000);
  let hash: string;
  before(() => {
    hash = hashPassword('a-password-for-the-refusals');
  });

  it('no NODE_RED_CREDENTIAL_SECRET, or a short one: Node-RED does not start, and says why', () => {
    const none = startRefused(SETTINGS, { CUSTODYFLOW_ADMIN_PASSWORD_HASH: hash });
    assert.notEqual(none.status, 0);
    assert.match(none.out, /NODE_RED_CREDENTIAL_SECRET is not set/);
    const short = startRefused(SETTINGS, { NODE_RED_CREDENTIAL_SECRET: 'short', CUSTODYFLOW_ADMIN_PASSWORD_HASH: hash });
    assert.notEqual(short.status, 0);
    assert.match(short.out, /NODE_RED_CREDENTIAL_SECRET is 5 characters long/);
  });

  it('no admin hash, or a hash whose $ were eaten: Node-RED does not start, and says why', () => {
    const secret = randomBytes(32).toString('hex');
    const none = startRefused(SETTINGS, { NODE_RED_CREDENTIAL_SECRET: secret });
    assert.notEqual(none.status, 0);
    assert.match(none.out, /CUSTODYFLOW_ADMIN_PASSWORD_HASH is not set/);
    // What `$2y$08$...` becomes in a shell or compose file that interpolates it.
    const eaten = startRefused(SETTINGS, { NODE_RED_CREDENTIAL_SECRET: secret, CUSTODYFLOW_ADMIN_PASSWORD_HASH: hash.replace(/\$2[aby]\$\d\d\$/, '') });
    assert.notEqual(eaten.status, 0);
    assert.match(eaten.out, /CUSTODYFLOW_ADMIN_PASSWORD_HASH: the password hash of "admin" is not a bcrypt hash/);
    const badOperator = startRefused(SETTINGS, { NODE_RED_CREDENTIAL_SECRET: secret, CUSTODYFLOW_ADMIN_PASSWORD_HASH: hash, CUSTODYFLOW_OPERATORS: 'alice' });
    assert.match(badOperator.out, /CUSTODYFLOW_OPERATORS: expected name:hash entries/);
    for (const r of [none, eaten, badOperator]) assert.ok(!r.out.includes(secret), 'the secret is never printed');
  });

  it('npm start refuses the old variable name CUSTODYFLOW_CREDENTIAL_SECRET, naming the one it reads', () => {
    const old = startRefused(path.join(root, 'scripts', 'node-red-settings.js'), { CUSTODYFLOW_CREDENTIAL_SECRET: 'an-old-secret-value' });
    assert.notEqual(old.status, 0);
    assert.match(old.out, /rename it NODE_RED_CREDENTIAL_SECRET/);
  });
});
