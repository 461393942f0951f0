/**
 * The partner's keys in the simulator: the private key written in PKCS#1 beside the PKCS#8 file
 * (for clients that read PKCS#1 only), and public keys registered through the control endpoint
 * `POST /_simulator/partners` (simulator/partners.ts), each with an API key the simulator's
 * authentication verifies with that public key. Real simulator over real sockets, lib's signed
 * CustodyClient, RSA keys generated here, the real `openssl` command.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CustodyClient, listAssets } from '../../lib';
import { CoreClientFeed } from '../../lib/feeds';
import { DATA_FILES, Simulator } from '../../simulator';
import { assertAuthRefused, controlCall, pemHeader, tempDirPerTest } from '../helpers/support';
import { accountClient } from '../helpers/simulated';

/** The modulus `openssl rsa -noout -modulus` prints for a private key file. */
function modulusOf(file: string): string {
  return execFileSync('openssl', ['rsa', '-in', file, '-noout', '-modulus'], { encoding: 'utf8' }).trim();
}

/**
 * Open the demo core client's feed with `client` (lib's CoreClientFeed: a signed websocket upgrade).
 * @returns `connected`, or the first error's message (e.g. `feed handshake refused: HTTP 401`).
 */
async function feedOutcome(client: CustodyClient, clientId: string): Promise<string> {
  const feed = new CoreClientFeed(client, clientId, { minDelayMs: 50, maxDelayMs: 100 });
  try {
    return await new Promise<string>((resolve) => {
      feed.on('state', (state: string) => state === 'connected' && resolve(state));
      feed.on('error', (err: Error) => resolve(err.message));
      feed.start();
    });
  } finally {
    await feed.stop();
  }
}

/** A fresh RSA key pair: PKCS#8 private key and SPKI public key, PEM. */
function newKeyPair(bits = 2048): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', { modulusLength: bits, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
}

describe('simulator: the partner key in PKCS#1 and partner public keys registered through the control endpoint', function () {
  this.timeout(60000);
  const dir = tempDirPerTest('cf-sim-partner-');

  it('writes the private key in PKCS#1 (mode 0600) beside the PKCS#8 file: the same key, openssl checks it, and it signs', async () => {
    const sim = await Simulator.start({ dataDir: dir(), port: 0 });
    try {
      const pkcs8 = path.join(dir(), DATA_FILES.privateKey);
      const pkcs1 = path.join(dir(), DATA_FILES.privateKeyPkcs1);
      assert.equal(sim.privateKeyPkcs1Path, pkcs1);
      assert.equal(fs.statSync(pkcs1).mode & 0o777, 0o600);
      const text = fs.readFileSync(pkcs1, 'utf8');
      assert.match(text, pemHeader('RSA PRIVATE KEY'));
      assert.match(fs.readFileSync(pkcs8, 'utf8'), pemHeader('PRIVATE KEY'));
      assert.match(execFileSync('openssl', ['rsa', '-in', pkcs1, '-check', '-noout'], { encoding: 'utf8' }), /RSA key ok/);
      assert.equal(modulusOf(pkcs1), modulusOf(pkcs8));
      const client = accountClient(sim, { privateKey: text });
      try {
        assert.ok((await listAssets(client)).data.assets.length > 0);
      } finally {
        client.close();
      }
    } finally {
      await sim.stop();
    }
  });

  it('writes the PKCS#1 file on the start of an existing data folder that lacks it, and rewrites one that holds another key', async () => {
    await (await Simulator.start({ dataDir: dir(), port: 0 })).stop();
    const pkcs1 = path.join(dir(), DATA_FILES.privateKeyPkcs1);
    const pkcs8 = path.join(dir(), DATA_FILES.privateKey);
    fs.rmSync(pkcs1);
    await (await Simulator.start({ dataDir: dir(), port: 0 })).stop();
    assert.equal(modulusOf(pkcs1), modulusOf(pkcs8));
    assert.equal(fs.statSync(pkcs1).mode & 0o777, 0o600);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' });
    fs.writeFileSync(pkcs1, other, { mode: 0o600 });
    await (await Simulator.start({ dataDir: dir(), port: 0 })).stop();
    assert.equal(modulusOf(pkcs1), modulusOf(pkcs8));
  });

  it('POST /_simulator/partners gives a registered public key an API key: its requests are accepted, refused before registration and with another key', async () => {
    const sim = await Simulator.start({ dataDir: dir(), port: 0 });
    const partner = newKeyPair();
    const clients: CustodyClient[] = [];
    const client = (apiKey: string, privateKey: string, signingMode: 'timestamp' | 'nonce' = 'timestamp') => {
      const c = new CustodyClient({ baseUrl: sim.baseUrl, apiKey, privateKey, signingMode });
      clients.push(c);
      return c;
    };
    try {
      // Before registration the partner's private key is no key of the account's.
      await assertAuthRefused(listAssets(client(sim.account.apiKey, partner.privateKey)), 'signature', 'the account API key signed with the unregistered key');
      assert.deepEqual((await controlCall(sim, 'GET', '/partners')).body, { partners: [] });

      const first = await controlCall(sim, 'POST', '/partners', { public_key: partner.publicKey });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.created, true);
      assert.match(first.body.api_key, /^[A-Za-z0-9+/]{43}=$/);
      assert.match(first.body.fingerprint, /^[0-9a-f]{64}$/);
      const apiKey: string = first.body.api_key;

      assert.ok((await listAssets(client(apiKey, partner.privateKey))).data.assets.length > 0, 'timestamp-signed');
      assert.ok((await listAssets(client(apiKey, partner.privateKey, 'nonce'))).data.assets.length > 0, 'nonce-signed');
      const company = (await client(apiKey, partner.privateKey).request<{ company_id: string }>('POST', '/company', { body: { name: 'Registered key Ltd' } })).data;
      assert.match(company.company_id, /\S/, 'a write: the key has the full permission');
      await assertAuthRefused(listAssets(client(apiKey, sim.account.privateKeyPem)), 'signature', 'the registered API key signed with the account key');
      await assertAuthRefused(listAssets(client(apiKey, newKeyPair().privateKey)), 'signature', 'the registered API key signed with a third key');
      assert.ok((await listAssets(accountClient(sim))).data.assets.length > 0, 'the account key still works');
      assert.equal(await feedOutcome(client(apiKey, partner.privateKey), sim.demo.core_client_id), 'connected', 'a feed opened with the registered key');
      assert.match(await feedOutcome(client(apiKey, sim.account.privateKeyPem), sim.demo.core_client_id), /401/, 'a feed signed with another key');

      const again = await controlCall(sim, 'POST', '/partners', { public_key: partner.publicKey });
      assert.deepEqual(again.body, { api_key: apiKey, fingerprint: first.body.fingerprint, created: false });
      const asPkcs1 = createPublicKey(partner.publicKey).export({ type: 'pkcs1', format: 'pem' }).toString();
      assert.match(asPkcs1, /BEGIN RSA PUBLIC KEY/);
      assert.deepEqual((await controlCall(sim, 'POST', '/partners', { public_key: asPkcs1 })).body, again.body, 'the same key in PKCS#1');
      const listed = (await controlCall(sim, 'GET', '/partners')).body;
      assert.equal(listed.partners.length, 1);
      assert.equal(listed.partners[0].fingerprint, first.body.fingerprint);
      assert.ok(!JSON.stringify(listed).includes(apiKey), 'the list never shows an API key');

      // The registration persists.
      await sim.stop();
      const restarted = await Simulator.start({ dataDir: dir(), port: 0 });
      try {
        const c = new CustodyClient({ baseUrl: restarted.baseUrl, apiKey, privateKey: partner.privateKey });
        clients.push(c);
        assert.ok((await listAssets(c)).data.assets.length > 0, 'after a restart');
      } finally {
        await restarted.stop();
      }
    } finally {
      for (const c of clients) c.close();
      await sim.stop();
    }
  });

  it('refuses a private key, a short key, a non-RSA key and text that is no key (400 naming public_key)', async () => {
    const sim = await Simulator.start({ dataDir: dir(), port: 0 });
    try {
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' });
      const cases: Array<[unknown, RegExp]> = [
        [newKeyPair().privateKey, /private key/],
        [newKeyPair(1024).publicKey, /1024 bits is too short/],
        [ec, /RSA key is required/],
        ['not a key', /expected a PEM public key/],
        [42, /public_key/],
      ];
      for (const [public_key, reason] of cases) {
        const res = await controlCall(sim, 'POST', '/partners', { public_key });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.body.detail.reason, /^public_key: /);
        assert.match(res.body.detail.reason, reason);
      }
      assert.deepEqual((await controlCall(sim, 'GET', '/partners')).body, { partners: [] });
    } finally {
      await sim.stop();
    }
  });
});
