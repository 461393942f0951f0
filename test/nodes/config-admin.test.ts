/**
 * The admin endpoints of custody-config (docs/configuration.md "Test connection", "Look-ups") in
 * node-red-node-test-helper, against real simulators over real sockets: `POST
 * <admin>/custodyflow/config/test` answers OK with good credentials and tells the cause of each
 * failure apart (wrong API key, wrong private key, closed port, self-signed HTTPS certificate, no
 * answer in time, unresolvable host, v2 token), with no secret in any answer or log line; `GET
 * <admin>/custodyflow/lookup/:kind` answers the ids created in the simulator. The partner key pair
 * is generated here and given to the simulator (it reuses key files it finds in its data folder).
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/nodes/config-admin.test.js`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import Router from 'router';
import helper from 'node-red-node-test-helper';
import { describeCleanLog } from '../helpers/log-spy';
import type { NodeAPI } from 'node-red';
import type { Simulator } from '../../simulator';
import { startSimulatorWithKeys } from '../helpers/simulated';
import { rsaKeyPair, useSharedSimulatorIn } from '../helpers/red-setup';
import { CustodyClient, addTrustedParty, addWallet, createCompany, createCoreClient, createFund } from '../../lib';
import { registerAdminRoutes, COORDINATION_PATH, COORDINATION_PERMISSION, LOOKUP_PATH, TEST_PATH, TEST_PERMISSION, LOOKUP_PERMISSION } from '../../nodes/custody-config/admin';
import { freePort } from '../helpers/red-process';
import { TAB, startHelperServer, stopHelperServer } from '../helpers/node-flows';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const configNode = require('../../nodes/custody-config/custody-config');

helper.init(require.resolve('node-red'));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-config-admin-'));

/** Every secret a test uses: none may appear in an answer or a log line. */
const secrets: string[] = [];

/** Fail when `text` holds a secret (a key, a token, or any 16+ character line of a PEM key). */
function assertNoSecret(text: string, where: string): void {
  for (const s of secrets) {
    assert.ok(!text.includes(s), `${where} holds a secret`);
    for (const line of s.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'))) assert.ok(!text.includes(line), `${where} holds a line of a private key`);
  }
}

/** POST the connection test with `body`; asserts a 200 JSON answer without a secret. */
async function testWith(body: Record<string, unknown>): Promise<any> {
  const res = await helper.request().post('/custodyflow/config/test').send(body).expect(200);
  assertNoSecret(JSON.stringify(res.body), 'the test answer');
  return res.body;
}

/** GET a lookup; asserts the status and no secret. */
async function lookupWith(kind: string, query: Record<string, string>, status = 200): Promise<any> {
  const res = await helper.request().get(`/custodyflow/lookup/${kind}`).query(query).expect(status);
  assertNoSecret(JSON.stringify(res.body), `the ${kind} lookup answer`);
  return res.body;
}

describe('custody-config admin endpoints: test connection and lookups', function () {
  this.timeout(60000);
  const pair = rsaKeyPair('pkcs8');
  const wrongPair = rsaKeyPair('pkcs8');
  let sim: Simulator;
  let tlsSim: Simulator;
  let silent: net.Server;
  let silentPort: number;
  let client: CustodyClient;
  useSharedSimulatorIn(path.join(tmp, 'shared-sim'));
  /** Ids made in the simulator for the lookups. */
  const made: { company_id: string; fund_id: string; wallets: string[]; core_client_id: string } = { company_id: '', fund_id: '', wallets: [], core_client_id: '' };

  before(async () => {
    sim = await startSimulatorWithKeys(path.join(tmp, 'sim'), pair);
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(tmp, 'tls-key.pem'), '-out', path.join(tmp, 'tls-cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      { stdio: 'ignore' },
    );
    tlsSim = await startSimulatorWithKeys(path.join(tmp, 'tls-sim'), pair, { cert: fs.readFileSync(path.join(tmp, 'tls-cert.pem'), 'utf8'), key: fs.readFileSync(path.join(tmp, 'tls-key.pem'), 'utf8') });
    // A server that accepts connections and never answers: the timeout case.
    silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    silentPort = (silent.address() as net.AddressInfo).port;
    secrets.push(sim.account.apiKey, sim.account.readOnlyApiKey, pair.privateKey, wrongPair.privateKey, sim.v2.token, ...sim.v2.apiKeys.map((k) => k.token));

    // What the lookups must find: a company with a fund, two wallets and a core client.
    client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: pair.privateKey });
    made.company_id = (await createCompany(client, { name: 'Zephyr Lookup Trading', domain: 'zephyr.example' })).data.company_id;
    const cc = (await createCoreClient(client, { name: 'Zephyr approver' })).data;
    made.core_client_id = cc.id;
    await addTrustedParty(client, { company_id: made.company_id, address: cc.id, type: 'core-client' });
    const group = { threshold: 1, members: [cc.id] };
    made.fund_id = (await createFund(client, { company_id: made.company_id, name: 'Zephyr treasury', custodygroup_withdraw: group, custodygroup_tx: group })).data.fund_id;
    made.wallets = (await addWallet(client, { company_id: made.company_id, fund_id: made.fund_id, wallets: [{ name: 'Zephyr BTC', asset: 'BTC-TESTNET' }, { name: 'Zephyr ETH', asset: 'ETH-TESTNET' }] })).data.wallets;

    await startHelperServer();
    await helper.load(
      configNode,
      [
        TAB,
        { id: 'cfg', z: 'tab', type: 'custody-config', name: 'custom sim', environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: 10 },
        { id: 'cfg-bad', z: 'tab', type: 'custody-config', name: 'wrong key', environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: 10 },
        { id: 'cfg-v2', z: 'tab', type: 'custody-config', name: 'custom sim v2', environment: 'custom', baseUrl: sim.baseUrl, v2BaseUrl: sim.v2.baseUrl, workspaceId: sim.v2.workspaceId, timeout: 10 },
        { id: 'cfg-sim', z: 'tab', type: 'custody-config', name: 'built-in', environment: 'simulator', timeout: 10 },
      ],
      {
        cfg: { apiKey: sim.account.apiKey, privateKey: pair.privateKey },
        'cfg-bad': { apiKey: sim.account.apiKey, privateKey: wrongPair.privateKey },
        'cfg-v2': { apiKey: sim.account.apiKey, privateKey: pair.privateKey, token: sim.v2.token },
      },
    );
  });

  after(async () => {
    await helper.unload();
    await stopHelperServer();
    client?.close();
    await sim?.stop();
    await tlsSim?.stop();
    silent?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('POST custodyflow/config/test', () => {
    const custom = () => ({ environment: 'custom', baseUrl: sim.baseUrl, signingMode: 'timestamp', timeout: '10' });

    it('answers OK with the credentials typed in the dialog: GET /assets listed 4 assets', async () => {
      const a = await testWith({ ...custom(), apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.ok, true, a.message);
      assert.equal(a.environment, 'custom');
      assert.equal(a.baseUrl, sim.baseUrl);
      assert.equal(a.v1.assets, 4);
      assert.equal(a.v2, undefined, 'no v2 token or workspace: no v2 step');
      assert.match(a.message, /^Connected to the custom URL: GET \/assets listed 4 assets/);
    });

    it('answers OK with the stored credentials of the node for fields left unchanged (__PWRD__), in nonce mode too', async () => {
      const a = await testWith({ id: 'cfg', ...custom(), apiKey: '__PWRD__', privateKey: '__PWRD__' });
      assert.equal(a.ok, true, a.message);
      const n = await testWith({ id: 'cfg', ...custom(), signingMode: 'nonce', apiKey: '__PWRD__', privateKey: '__PWRD__' });
      assert.equal(n.ok, true, n.message);
    });

    it('a stored credential of an unknown node, or of a node that is not a custody-config, is no credential: cause config, nothing sent', async () => {
      for (const id of ['not-deployed', 'tab']) {
        const a = await testWith({ id, ...custom(), apiKey: '__PWRD__', privateKey: '__PWRD__' });
        assert.equal(a.ok, false);
        assert.equal(a.cause, 'config');
        assert.match(a.message, /apiKey: set the API key/);
      }
      // PEM-shaped but no key: the generated key's armour lines around a body that is not DER.
      const armour = pair.privateKey.trim().split('\n');
      const unparsable = [armour[0], 'not a key', armour[armour.length - 1]].join('\n');
      const b = await testWith({ ...custom(), apiKey: sim.account.apiKey, privateKey: unparsable });
      assert.equal(b.cause, 'config');
      assert.match(b.message, /privateKey: the PEM text could not be parsed/);
    });

    it('a wrong API key: cause badApiKey (401)', async () => {
      const wrong = randomBytes(32).toString('base64');
      secrets.push(wrong);
      const a = await testWith({ ...custom(), apiKey: wrong, privateKey: pair.privateKey });
      assert.equal(a.ok, false);
      assert.equal(a.cause, 'badApiKey');
      assert.equal(a.statusCode, 401);
      assert.equal(a.step, 'v1');
      assert.match(a.message, /API key was refused/);
    });

    it('a wrong private key (typed, or stored on the node): cause badSignature', async () => {
      const a = await testWith({ ...custom(), apiKey: sim.account.apiKey, privateKey: wrongPair.privateKey });
      assert.equal(a.cause, 'badSignature');
      assert.equal(a.statusCode, 401);
      assert.match(a.message, /private key is not the one registered/);
      const b = await testWith({ id: 'cfg-bad', ...custom(), apiKey: '__PWRD__', privateKey: '__PWRD__' });
      assert.equal(b.cause, 'badSignature');
    });

    it('a closed port: cause unreachable (ECONNREFUSED)', async () => {
      const port = await freePort();
      const a = await testWith({ ...custom(), baseUrl: `http://127.0.0.1:${port}/api/v1/p`, apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.cause, 'unreachable');
      assert.equal(a.code, 'ECONNREFUSED');
      assert.equal(a.statusCode, 0);
    });

    it('a host name that does not resolve: cause unreachable', async () => {
      const a = await testWith({ ...custom(), baseUrl: 'https://custodyflow-no-such-host.invalid/api/v1/p', apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.cause, 'unreachable', a.message);
      assert.match(String(a.code), /^(ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NONAME)$/);
    });

    it('the simulator over HTTPS with a self-signed certificate: cause tls', async () => {
      assert.match(tlsSim.baseUrl, /^https:/);
      const a = await testWith({ ...custom(), baseUrl: tlsSim.baseUrl, apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.cause, 'tls', a.message);
      assert.equal(a.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      assert.match(a.message, /certificate is not trusted/);
    });

    it('HTTPS to a server that speaks plain HTTP: cause tls', async () => {
      const a = await testWith({ ...custom(), baseUrl: sim.baseUrl.replace('http:', 'https:'), apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.cause, 'tls', a.message);
    });

    it('no answer within the timeout: cause timeout', async () => {
      const started = Date.now();
      const a = await testWith({ ...custom(), timeout: '1', baseUrl: `http://127.0.0.1:${silentPort}/api/v1/p`, apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.cause, 'timeout', a.message);
      assert.ok(Date.now() - started < 5000, 'one attempt, no retries');
    });

    it('a wrong base path: cause http (404)', async () => {
      const a = await testWith({ ...custom(), baseUrl: sim.baseUrl.replace('/api/v1/p', '/api/v9'), apiKey: sim.account.apiKey, privateKey: pair.privateKey });
      assert.equal(a.cause, 'http');
      assert.equal(a.statusCode, 404);
    });

    it('a configured v2 workspace is tested too: OK with the stored token, badToken with a wrong one', async () => {
      const v2 = { ...custom(), v2BaseUrl: sim.v2.baseUrl, workspaceId: sim.v2.workspaceId };
      const a = await testWith({ id: 'cfg-v2', ...v2, apiKey: '__PWRD__', privateKey: '__PWRD__', token: '__PWRD__' });
      assert.equal(a.ok, true, a.message);
      assert.equal(a.v2.ok, true);
      assert.equal(a.v2.workspaceId, sim.v2.workspaceId);
      assert.ok(a.v2.policies >= 1, 'the provisioned admin policy');
      const wrong = 'wrong-token-' + randomBytes(8).toString('hex');
      secrets.push(wrong);
      const b = await testWith({ id: 'cfg-v2', ...v2, apiKey: '__PWRD__', privateKey: '__PWRD__', token: wrong });
      assert.equal(b.ok, false);
      assert.equal(b.step, 'v2');
      assert.equal(b.cause, 'badToken');
      assert.equal(b.v1.ok, true);
      const c = await testWith({ ...v2, workspaceId: '', apiKey: sim.account.apiKey, privateKey: pair.privateKey, token: sim.v2.token });
      assert.equal(c.cause, 'config');
      assert.match(c.message, /workspaceId/);
    });

    it('the built-in simulator option: OK, v1 and v2, without credentials', async () => {
      const a = await testWith({ id: 'cfg-sim', environment: 'simulator', signingMode: 'timestamp', timeout: '10', simulatorV1Key: 'full', simulatorApiKey: 'k.partner' });
      assert.equal(a.ok, true, a.message);
      assert.equal(a.environment, 'simulator');
      assert.equal(a.v1.assets, 4);
      assert.equal(a.v2.ok, true);
      assert.match(a.message, /^Connected to the built-in simulator: GET \/assets listed 4 assets/);
      const ro = await testWith({ environment: 'simulator', simulatorV1Key: 'readOnly' });
      assert.equal(ro.ok, true, 'the read-only key may read GET /assets');
    });

    it('refuses a body that is not the dialog settings: 400', async () => {
      await helper.request().post('/custodyflow/config/test').send([1, 2]).expect(400);
      const r = await helper.request().post('/custodyflow/config/test').send({ environment: 'mars' }).expect(400);
      assert.equal(r.body.cause, 'input');
      assert.match(r.body.message, /^environment: /);
    });
  });

  describe('GET custodyflow/lookup/:kind', () => {
    it('company: the account companies, the best match first', async () => {
      const all = (await lookupWith('company', { connection: 'cfg' })) as Array<{ value: string; label: string }>;
      const ids = all.map((o) => o.value);
      assert.ok(ids.includes(made.company_id), 'the company made here');
      assert.ok(ids.includes(sim.demo.company_id), 'the demo company');
      for (const o of all) assert.deepEqual(Object.keys(o).sort(), ['label', 'value']);
      const zep = await lookupWith('company', { connection: 'cfg', query: 'Zephyr' });
      assert.deepEqual(zep, [{ value: made.company_id, label: `Zephyr Lookup Trading · ${made.company_id}` }]);
      const byId = await lookupWith('company', { connection: 'cfg', query: made.company_id });
      assert.equal(byId[0].value, made.company_id);
    });

    /**
     * Assert that the `kind` lookup of the company made here answers exactly `[{value: id, label}]`,
     * and that without company_id it lists both `id` and the demo company's `demoId`.
     */
    async function assertPerCompany(kind: string, id: string, label: string, demoId: string): Promise<void> {
      assert.deepEqual(await lookupWith(kind, { connection: 'cfg', company_id: made.company_id }), [{ value: id, label }]);
      const every = (await lookupWith(kind, { connection: 'cfg' })).map((o: { value: string }) => o.value);
      assert.ok(every.includes(id) && every.includes(demoId));
    }

    it('fund: the funds of a company', async () => {
      await assertPerCompany('fund', made.fund_id, `Zephyr treasury · ${made.fund_id}`, sim.demo.fund_id);
    });

    it('wallet: the wallets of a fund (with or without company_id), or of a company', async () => {
      const a = (await lookupWith('wallet', { connection: 'cfg', company_id: made.company_id, fund_id: made.fund_id })) as Array<{ value: string; label: string }>;
      assert.deepEqual(a.map((o) => o.value).sort(), [...made.wallets].sort());
      assert.match(a.find((o) => o.value === made.wallets[0])!.label, /^Zephyr BTC · BTC-TESTNET · \w+ \w+ \w+ · /);
      const b = await lookupWith('wallet', { connection: 'cfg', fund_id: made.fund_id });
      assert.deepEqual(b, a);
      const c = await lookupWith('wallet', { connection: 'cfg', company_id: made.company_id, query: 'eth' });
      assert.deepEqual(c.map((o: { value: string }) => o.value), [made.wallets[1]]);
    });

    it('coreClient: the core clients of a company, or of every company', async () => {
      await assertPerCompany('coreClient', made.core_client_id, `Zephyr approver · ${made.core_client_id}`, sim.demo.core_client_id);
    });

    it('asset and exchange: GET /assets and GET /exchanges', async () => {
      const assets = (await lookupWith('asset', { connection: 'cfg' })).map((o: { value: string }) => o.value);
      assert.deepEqual(assets.sort(), ['BTC', 'BTC-TESTNET', 'ETH', 'ETH-TESTNET']);
      const exchanges = await lookupWith('exchange', { connection: 'cfg' });
      assert.ok(exchanges.length >= 1);
      for (const x of exchanges) assert.match(x.label, new RegExp(`· ${x.value}$`));
    });

    it('answers from a cache of a few seconds per connection, kind and context', async () => {
      const before = (await lookupWith('fund', { connection: 'cfg', company_id: sim.demo.company_id })).length;
      const group = { threshold: 1, members: [sim.demo.core_client_id] };
      const fresh = (await createFund(client, { company_id: sim.demo.company_id, name: 'Cache probe', custodygroup_withdraw: group, custodygroup_tx: group })).data.fund_id;
      assert.equal((await lookupWith('fund', { connection: 'cfg', company_id: sim.demo.company_id })).length, before, 'within 5 s: the cached answer');
      await new Promise((r) => setTimeout(r, 5200));
      const after = (await lookupWith('fund', { connection: 'cfg', company_id: sim.demo.company_id })).map((o: { value: string }) => o.value);
      assert.ok(after.includes(fresh), 'after 5 s: asked again');
    });

    it('the built-in simulator connection: its demo company', async () => {
      const ids = (await lookupWith('company', { connection: 'cfg-sim' })).map((o: { value: string }) => o.value);
      assert.ok(ids.length >= 1);
    });

    it('errors: unknown kind 400, no connection 400, not deployed 404, an API failure 502 with its cause', async () => {
      assert.equal((await lookupWith('planet', { connection: 'cfg' }, 400)).cause, 'input');
      assert.match((await lookupWith('company', {}, 400)).message, /^connection: /);
      const nd = await lookupWith('company', { connection: 'nope' }, 404);
      assert.equal(nd.cause, 'notDeployed');
      assert.match(nd.message, /deploy the flow first/);
      const bad = await lookupWith('asset', { connection: 'cfg-bad' }, 502);
      assert.equal(bad.cause, 'badSignature');
      assert.equal(bad.statusCode, 401);
      const unknownCompany = await lookupWith('coreClient', { connection: 'cfg', company_id: 'no-such-company' }, 502);
      assert.equal(unknownCompany.statusCode, 404);
      assert.equal(unknownCompany.cause, 'http');
    });
  });


  describeCleanLog('a secret', assertNoSecret);

  describe('editor definition', () => {
    it('registerType("custody-config", {...}) is an inline object literal: literal category, color, icon, ports, paletteLabel, no spread; credentials in .html and .ts alike', () => {
      // acorn is Node-RED's own dependency (the flow library's scorecard parses the .html with it).
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const acorn = require('acorn') as { parse(src: string, o: object): any };
      const html = fs.readFileSync(path.join(__dirname, '..', '..', 'nodes', 'custody-config', 'custody-config.html'), 'utf8');
      const calls: any[] = [];
      const visit = (n: any): void => {
        if (!n || typeof n.type !== 'string') return;
        if (n.type === 'CallExpression' && n.callee.type === 'MemberExpression' && n.callee.property.name === 'registerType') calls.push(n);
        for (const v of Object.values(n)) (Array.isArray(v) ? v : [v]).forEach((c) => c && typeof c === 'object' && visit(c));
      };
      for (const m of html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)) visit(acorn.parse(m[1], { ecmaVersion: 2020 }));
      assert.equal(calls.length, 1);
      const [type, def] = calls[0].arguments;
      assert.equal(type.value, 'custody-config');
      assert.equal(def.type, 'ObjectExpression');
      assert.ok(def.properties.every((p: any) => p.type === 'Property'), 'no spread element');
      const literal = (k: string) => def.properties.find((p: any) => p.key.name === k)?.value;
      const want: Record<string, unknown> = { category: 'config', color: '#a6bbcf', icon: 'custody.svg', inputs: 0, outputs: 0, paletteLabel: 'custody connection' };
      for (const [k, v] of Object.entries(want)) {
        assert.equal(literal(k)?.type, 'Literal', `${k} is a literal`);
        assert.equal(literal(k).value, v);
      }
      const htmlCreds = literal('credentials').properties.map((p: any) => [p.key.name, p.value.properties[0].value.value]);
      assert.deepEqual(htmlCreds, [['apiKey', 'password'], ['privateKey', 'password'], ['token', 'password'], ['redisPassword', 'password'], ['redisSentinelPassword', 'password'], ['pin', 'password']]);
      const ts = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'nodes', 'custody-config', 'custody-config.ts'), 'utf8');
      for (const [k] of htmlCreds) assert.match(ts, new RegExp(`${k}: \\{ type: 'password' \\}`), `${k} declared in the .ts too`);
    });
  });

  describe('permission guard', () => {
    it('each route is mounted behind RED.auth.needsPermission: write for the test, read for the lookups and the coordination status', async () => {
      // RED.httpAdmin stands in as a bare router on node:http: the refusals answer before any body is read.
      const app = Router();
      const asked: string[] = [];
      const fakeRed = {
        httpAdmin: app,
        auth: {
          needsPermission: (permission: string) => {
            asked.push(permission);
            return (_req: http.IncomingMessage, res: http.ServerResponse) => {
              res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ denied: permission }));
            };
          },
        },
        nodes: { getCredentials: () => assert.fail('a refused request must not read credentials'), getNode: () => assert.fail('a refused request must not look up a node') },
        log: { debug: () => undefined },
      } as unknown as NodeAPI;
      registerAdminRoutes(fakeRed, () => assert.fail('a refused request must not start a simulator'));
      assert.deepEqual(asked, [TEST_PERMISSION, LOOKUP_PERMISSION, COORDINATION_PERMISSION]);
      assert.equal(TEST_PERMISSION, 'custody-config.write');
      assert.equal(LOOKUP_PERMISSION, 'custody-config.read');
      assert.equal(COORDINATION_PERMISSION, 'custody-config.read');
      assert.equal(TEST_PATH, '/custodyflow/config/test');
      assert.equal(LOOKUP_PATH, '/custodyflow/lookup/:kind');
      assert.equal(COORDINATION_PATH, '/custodyflow/config/:id/coordination');
      const server = http.createServer((req, res) => app.handle(req, res, () => res.writeHead(404).end())).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      try {
        const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
        const t = await fetch(base + '/custodyflow/config/test', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ environment: 'simulator' }) });
        assert.equal(t.status, 401);
        assert.deepEqual(await t.json(), { denied: 'custody-config.write' });
        const l = await fetch(base + '/custodyflow/lookup/company?connection=cfg');
        assert.equal(l.status, 401);
        assert.deepEqual(await l.json(), { denied: 'custody-config.read' });
        const c = await fetch(base + '/custodyflow/config/cfg/coordination');
        assert.equal(c.status, 401);
        assert.deepEqual(await c.json(), { denied: 'custody-config.read' });
      } finally {
        server.close();
      }
    });
  });
});
