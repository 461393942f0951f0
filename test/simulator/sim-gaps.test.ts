/**
 * Loose ends of the simulator: the core client feed refuses another API account's core client
 * with the REST routes' 403 (over a real websocket), and the command line prints the paths of
 * every key file, the v2 token file included, but never a secret.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import WebSocket from 'ws';
import { sign } from '../../lib/client/signing';
import { DATA_FILES, Simulator } from '../../simulator';
import { control, until } from '../helpers/support';
import { signalAndWait, withCliSimulator } from '../helpers/sim-cli';

/** What a signed upgrade to `url` ends in: `open` (socket closed again), or the HTTP status and body of the refusal. */
async function upgrade(sim: Simulator, apiKey: string, url: string): Promise<{ status: number | 'open'; body?: unknown }> {
  const ts = String(Math.floor(Date.now() / 1000));
  const ws = new WebSocket(url, { headers: { 'x-api-key': apiKey, 'x-timestamp': ts, 'x-sign': sign(sim.account.privateKeyPem, { prefix: ts, url }) } });
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      ws.on('close', () => resolve({ status: 'open' }));
      ws.close();
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.on('error', reject);
  });
}

/** A signed GET of the v1 API with the full key. */
async function signedGet(sim: Simulator, p: string): Promise<{ status: number; body: unknown }> {
  const url = sim.baseUrl + p;
  const ts = String(Math.floor(Date.now() / 1000));
  const res = await fetch(url, { headers: { 'x-api-key': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(sim.account.privateKeyPem, { prefix: ts, url }) } });
  return { status: res.status, body: await res.json() };
}

describe('simulator gaps', function () {
  let dir: string;
  let sim: Simulator;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cf-sim-gaps-'));
    sim = await Simulator.start({ dataDir: dir, port: 0, persist: false });
  });

  after(async () => {
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('core client feed of another API account', () => {
    const feedUrl = (clientId: string) => sim.baseUrl.replace(/^http/, 'ws') + `/coreclient/${encodeURIComponent(clientId)}/feed`;

    it('refuses the foreign core client with the 403 the REST routes give, for both API keys', async () => {
      const foreign = await control(sim, '/foreign/quote', { send: { symbol: 'BTC-TESTNET', amount: 1000 }, receive: { symbol: 'ETH-TESTNET', amount: 20000 } });
      const rest = await signedGet(sim, `/coreclient/${foreign.core_client_id}/actions`);
      assert.equal(rest.status, 403);
      for (const key of [sim.account.apiKey, sim.account.readOnlyApiKey]) {
        const feed = await upgrade(sim, key, feedUrl(foreign.core_client_id));
        assert.equal(feed.status, 403);
        assert.deepEqual(feed.body, rest.body);
      }
    });

    it('still opens a core client feed of the partner account, and answers 404 for an unknown one', async () => {
      assert.deepEqual(await upgrade(sim, sim.account.apiKey, feedUrl(sim.demo.core_client_id)), { status: 'open' });
      const unknown = await upgrade(sim, sim.account.apiKey, feedUrl('no-such-client'));
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.body, (await signedGet(sim, '/coreclient/no-such-client/actions')).body);
    });
  });
});

describe('the simulator command line: key file paths, no secrets', function () {
  this.timeout(30000);

  it('prints the v2 token file path with the other key files, and no API key, read-only key, token or private key', async () => {
    await withCliSimulator('cf-cli-gaps-', ['--in-memory'], async ({ cli, out, dataDir }) => {
      await until(() => (/demo company:/.test(out()) ? true : undefined), 'the banner on stdout');
      const file = (label: string): string => {
        const m = new RegExp(`${label}:\\s+(\\S+)`).exec(out());
        assert.ok(m, `${label} printed`);
        return m[1];
      };
      const files = {
        apiKey: file('API key file'),
        readOnlyApiKey: file('read-only key file'),
        v2Token: file('v2 token file'),
        privateKey: file('private key file'),
      };
      for (const [name, p] of Object.entries(files)) {
        assert.equal(path.dirname(p), path.resolve(dataDir), `${name} is in the data folder`);
        assert.equal(path.basename(p), DATA_FILES[name as keyof typeof files]);
        assert.equal(statSync(p).mode & 0o777, 0o600, `${name} file mode`);
      }
      const secrets = {
        apiKey: readFileSync(files.apiKey, 'utf8').trim(),
        readOnlyApiKey: readFileSync(files.readOnlyApiKey, 'utf8').trim(),
        v2Token: readFileSync(files.v2Token, 'utf8').trim(),
        // the body of the PEM, line by line: no line of it may be printed
        privateKey: readFileSync(files.privateKey, 'utf8').split('\n').filter((l) => l && !l.startsWith('-----')),
      };
      assert.ok(secrets.apiKey.length > 20 && secrets.readOnlyApiKey.length > 20 && secrets.v2Token.length > 20 && secrets.privateKey.length > 10);
      assert.ok(!out().includes(secrets.apiKey), 'no API key');
      assert.ok(!out().includes(secrets.readOnlyApiKey), 'no read-only API key');
      assert.ok(!out().includes(secrets.v2Token), 'no v2 token');
      assert.ok(!out().includes('PRIVATE KEY'), 'no PEM armour');
      for (const line of secrets.privateKey) assert.ok(!out().includes(line), 'no line of the private key');

      // The printed token file holds the token the v2 API takes.
      const v2Base = /v2 base URL:\s+(\S+)/.exec(out())![1];
      const workspace = /\(workspace (\S+)\)/.exec(out())![1];
      const ok = await fetch(`${v2Base}/workspaces/${workspace}/policies`, { headers: { 'x-token': secrets.v2Token } });
      assert.equal(ok.status, 200);
      await ok.arrayBuffer();

      assert.equal(await signalAndWait(cli, 'SIGTERM'), 0);
    });
  });

  describe('key files after state.json is lost', () => {
    it('rewrites the API key, read-only key and v2 token files to match the newly provisioned account', async () => {
      const d = mkdtempSync(path.join(tmpdir(), 'cf-sim-keys-'));
      try {
        const first = await Simulator.start({ dataDir: d, port: 0 });
        const old = { apiKey: first.account.apiKey, token: first.v2.token };
        await first.stop();
        rmSync(path.join(d, DATA_FILES.state));
        const second = await Simulator.start({ dataDir: d, port: 0 });
        try {
          // A new state provisions new keys; the files beside it must hold them, not the old ones.
          assert.notEqual(second.account.apiKey, old.apiKey);
          assert.notEqual(second.v2.token, old.token);
          assert.equal(readFileSync(path.join(d, DATA_FILES.apiKey), 'utf8').trim(), second.account.apiKey);
          assert.equal(readFileSync(path.join(d, DATA_FILES.readOnlyApiKey), 'utf8').trim(), second.account.readOnlyApiKey);
          assert.equal(readFileSync(path.join(d, DATA_FILES.v2Token), 'utf8').trim(), second.v2.token);
          for (const f of [DATA_FILES.apiKey, DATA_FILES.readOnlyApiKey, DATA_FILES.v2Token]) assert.equal(statSync(path.join(d, f)).mode & 0o777, 0o600, f);
        } finally {
          await second.stop();
        }
      } finally {
        rmSync(d, { recursive: true, force: true });
      }
    });
  });
});
