/**
 * CustodyClient signing on a real SoftHSM2 token, against the simulator, which knows only the
 * token's public key (its data folder's partner-public-key.pem is the public key exported from
 * the token; its partner-private-key.pem is an unrelated key): every request signed on the token
 * is accepted, in timestamp and nonce mode, 200 at once; the core client feed's handshake is
 * signed on the token and the feed delivers; a wrong PIN, a missing token, a missing key and an
 * RSA-1024 key are each refused with a named error, and 0 requests reach a counting server.
 */
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator } from '../../simulator';
import { DATA_FILES } from '../../simulator/index';
import { ApiError, createTransfer, CustodyClient, KeySourceError, listActions, listAssets, Pkcs11KeySource, type Action, type Pkcs11Options, type SigningMode } from '../../lib';
import { CoreClientFeed } from '../../lib/feeds';
import { CountingServer } from '../helpers/counting-server';
import { createSoftHsm, generateOnToken, importKey, initToken, PIN, removeSoftHsm, rsaPem, SOFTHSM_MODULE, type SoftHsm } from '../helpers/softhsm';
import { demoTransfer, until } from '../helpers/support';

describe('CustodyClient signing on a PKCS#11 token (SoftHSM2) against the simulator', function () {
  this.timeout(120_000);
  let hsm: SoftHsm;
  let dataDir: string;
  let sim: Simulator;
  const clients: CustodyClient[] = [];
  /** A client of the simulator's account whose key source is key K on token T (options replaced by `o`). */
  const tokenClient = (signingMode: SigningMode = 'timestamp', o: Partial<Pkcs11Options> = {}, baseUrl = sim.baseUrl): CustodyClient => {
    const keySource = new Pkcs11KeySource({ module: SOFTHSM_MODULE, tokenLabel: 'T', keyLabel: 'K', pin: PIN, ...o });
    const client = new CustodyClient({ baseUrl, apiKey: sim.account.apiKey, keySource, signingMode, attempts: 1 });
    clients.push(client);
    return client;
  };

  before(async () => {
    hsm = createSoftHsm();
    initToken(hsm, 'T');
    initToken(hsm, 'W');
    const spki = generateOnToken(hsm, 'T', 'K', '01');
    importKey(hsm, 'T', 'Small', '03', rsaPem(1024).privateKeyPem);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-pkcs11-'));
    fs.writeFileSync(path.join(dataDir, DATA_FILES.publicKey), createPublicKey({ key: spki, format: 'der', type: 'spki' }).export({ type: 'spki', format: 'pem' }), { mode: 0o600 });
    fs.writeFileSync(path.join(dataDir, DATA_FILES.privateKey), rsaPem(2048).privateKeyPem, { mode: 0o600 });
    sim = await Simulator.start({ port: 0, dataDir });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sim?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    removeSoftHsm(hsm);
  });

  it('the simulator knows only the token public key: a request signed with its data folder private key is refused', async () => {
    const decoy = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, attempts: 1 });
    clients.push(decoy);
    await assert.rejects(listAssets(decoy), (e: unknown) => e instanceof ApiError && e.statusCode === 401 && e.detail.reason === 'signature');
  });

  for (const mode of ['timestamp', 'nonce'] as const) {
    it(`every request signed on the token is accepted (${mode} mode): GETs, a POST with a body, 200 at once`, async () => {
      const client = tokenClient(mode);
      assert.equal((await listAssets(client)).statusCode, 200);
      const created = await createTransfer(client, demoTransfer(sim, { reference: `pkcs11 ${mode}` }));
      assert.equal(created.statusCode, 200);
      assert.ok(created.data.tx_id);
      assert.equal((await listActions(client, { client_id: sim.demo.core_client_id })).statusCode, 200);
      const statuses = await Promise.all(Array.from({ length: 200 }, () => listAssets(client).then((r) => r.statusCode)));
      assert.equal(statuses.filter((s) => s === 200).length, 200);
    });
  }

  it('the core client feed connects with a handshake signed on the token and delivers', async () => {
    const client = tokenClient();
    const feed = new CoreClientFeed(client, sim.demo.core_client_id, { minDelayMs: 50, maxDelayMs: 200 });
    const seen: Array<{ action: Action; source: string }> = [];
    const errors: Error[] = [];
    feed.on('action', (action: Action, source: string) => seen.push({ action, source }));
    feed.on('error', (e: Error) => errors.push(e));
    feed.start();
    try {
      await until(() => (feed.state === 'connected' ? true : undefined), 'connected');
      const already = seen.length;
      await createTransfer(client, demoTransfer(sim, { reference: 'pkcs11 feed' }));
      const live = await until(() => seen.slice(already).find((s) => s.source === 'feed'), 'a feed message');
      assert.equal(live.action.coreClientID, sim.demo.core_client_id);
      assert.deepEqual(errors, []);
    } finally {
      await feed.stop();
    }
  });

  it('a wrong PIN, a missing token, a missing key and an RSA-1024 key are refused with a named error; 0 requests reach the server', async () => {
    const server = new CountingServer();
    await server.start();
    try {
      const cases: Array<[Partial<Pkcs11Options>, string]> = [
        [{ tokenLabel: 'W', pin: '0000' }, 'pinIncorrect'],
        [{ tokenLabel: 'Absent' }, 'tokenNotFound'],
        [{ keyLabel: 'Missing' }, 'keyNotFound'],
        [{ keyLabel: 'Small' }, 'keyUnsuitable'],
      ];
      for (const [options, reason] of cases) {
        for (const mode of ['timestamp', 'nonce'] as const) {
          const client = tokenClient(mode, options, server.baseUrl);
          await assert.rejects(listAssets(client), (e: unknown) => e instanceof KeySourceError && e.reason === reason && !e.message.includes(options.pin ?? PIN), `${reason} (${mode})`);
          await assert.rejects(client.feedHeaders(client.feedUrl('/coreclient/x/feed')), (e: unknown) => e instanceof KeySourceError && e.reason === reason);
        }
      }
      assert.equal(server.requests, 0);
    } finally {
      await server.stop();
    }
  });
});
