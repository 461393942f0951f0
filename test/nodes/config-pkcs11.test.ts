/**
 * The custody-config node with key source "PKCS#11 token" (docs/configuration.md "Keys on a
 * PKCS#11 token") in node-red-node-test-helper, with a real SoftHSM2 token made here
 * (test/helpers/softhsm.ts) and a standalone simulator over real sockets that knows only the
 * token's public key (its data folder's partner-public-key.pem is the public key exported from the
 * token; its partner-private-key.pem is an unrelated key), reached as a Custom URL:
 *
 * - custody-assets lists the assets and custody-transfer creates a transfer, each request signed
 *   on the token; the core client feed connects (its handshake signed on the token) and delivers
 *   the transfer's action; one login serves them all, and unloading the flow releases the token;
 * - a wrong PIN, a missing token, a missing key, an RSA-1024 key, a module that cannot be loaded
 *   and a missing PIN are each refused at deploy:
 *   the node using the connection shows the named cause in its status, the log says it once, a
 *   msg is refused naming it, and a counting server sees 0 requests;
 * - Test connection (POST <admin>/custodyflow/config/test) answers the token key's SHA-256
 *   fingerprint, equal to openssl's, and for a PEM key the PEM key's; a wrong PIN is named;
 * - no PIN in an answer, a msg, an error or a log line.
 *
 * Run alone with `npx mocha --no-config --timeout 120000 dist/test/nodes/config-pkcs11.test.js`.
 */
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { Simulator, DATA_FILES } from '../../simulator';
import { pkcs11Registry } from '../../lib';
import { CountingServer } from '../helpers/counting-server';
import { describeCleanLog } from '../helpers/log-spy';
import { TAB, loadCollecting, sendAndWait, lastStatusOf, type Inbox } from '../helpers/node-flows';
import { redNodes, useHelperServer, rsaKeyPair } from '../helpers/red-setup';
import { changePin, createSoftHsm, generateOnToken, importKey, initToken, opensslFingerprint, pkcs11ConfigNode, removeSoftHsm, rsaPem, SOFTHSM_MODULE, type SoftHsm } from '../helpers/softhsm';
import { until } from '../helpers/support';

/** `flow` with a canvas position on every node but the tab and the config node (Node-RED counts a node without one as a config node). */
const placed = (flow: Array<Record<string, unknown>>): object[] => flow.map((n) => (n.type === 'tab' || n.type === 'custody-config' ? n : { x: 100, y: 100, ...n }));

const MODULES = redNodes(['custody-config', 'custody-assets', 'custody-transfer', 'custody-coreclient-feed']);

/** The token's PIN in this test: changed from the helper's, so that it is a text no other output holds by chance. */
const TEST_PIN = 'pin-Hx7qZ2vK9w';

describe('custody-config with a key on a PKCS#11 token (SoftHSM2), in Node-RED', function () {
  this.timeout(120_000);
  let hsm: SoftHsm;
  let dataDir: string;
  let sim: Simulator;
  let spki: Buffer;
  const counting = new CountingServer();
  const inbox: Inbox = new Map();

  /** The PKCS#11 config node `cfg` against `baseUrl`; `over` replaces its properties. */
  const tokenConfig = (baseUrl: string, over: Record<string, unknown> = {}) => pkcs11ConfigNode('cfg', baseUrl, { z: 'tab', ...over });
  const catchNodes = [
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', z: 'tab', type: 'helper' },
  ];

  before(async () => {
    hsm = createSoftHsm();
    initToken(hsm, 'T');
    spki = generateOnToken(hsm, 'T', 'K', '01');
    importKey(hsm, 'T', 'Small', '03', rsaPem(1024).privateKeyPem);
    changePin(hsm, 'T', TEST_PIN);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-config-pkcs11-'));
    fs.writeFileSync(path.join(dataDir, DATA_FILES.publicKey), createPublicKey({ key: spki, format: 'der', type: 'spki' }).export({ type: 'spki', format: 'pem' }), { mode: 0o600 });
    fs.writeFileSync(path.join(dataDir, DATA_FILES.privateKey), rsaPem(2048).privateKeyPem, { mode: 0o600 });
    sim = await Simulator.start({ port: 0, dataDir, persist: false });
    await counting.start();
  });
  useHelperServer();
  after(async () => {
    await counting.stop();
    await sim?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    removeSoftHsm(hsm);
  });

  it('custody-assets and custody-transfer sign on the token, and the core client feed delivers the action', async () => {
    const flow = [
      TAB,
      tokenConfig(sim.baseUrl),
      { id: 'op', z: 'tab', type: 'custody-assets', connection: 'cfg', operation: 'assets', wires: [['out']] },
      { id: 'out', z: 'tab', type: 'helper' },
      { id: 'transfer', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', company_id: sim.demo.company_id, amountFormat: 'decimal', expiresAfter: '600', wires: [['out']] },
      { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: sim.demo.core_client_id, details: true, wires: [['seen']] },
      { id: 'seen', z: 'tab', type: 'helper' },
      ...catchNodes,
    ];
    await loadCollecting(MODULES, placed(flow), { cfg: { apiKey: sim.account.apiKey, pin: TEST_PIN } }, inbox);
    const assets = await sendAndWait(inbox, { payload: {} });
    assert.equal(assets.caught, undefined, JSON.stringify(assets.caught?.error));
    assert.ok(Array.isArray(assets.out.payload.assets) && assets.out.payload.assets.length > 0, JSON.stringify(assets.out.payload));

    const created = await sendAndWait(
      inbox,
      {
        payload: {
          wallet_id: sim.demo.wallets['ETH-TESTNET'].short_code,
          counterparty_wallet_address: sim.demo.counterparty.wallets['ETH-TESTNET'].wallet_id,
          benefit_of: 'PKCS#11 test',
          account_no: 'P-1',
          reference: 'signed on the token',
          partner_txID: `pkcs11-node-${Date.now()}`,
          send: { symbol: 'ETH-TESTNET', amount: '0.25' },
        },
      },
      'transfer',
    );
    assert.equal(created.caught, undefined, JSON.stringify(created.caught?.error));
    assert.equal(created.out.payload.status, 'new');
    const txId = created.out.payload.tx_id;
    const seen = inbox.get('seen')!;
    const action = await until(() => seen.find((m) => m.payload.details?.txID === txId), 'the feed (handshake signed on the token) to deliver the action of the transfer');
    assert.equal(action.payload.client_id, sim.demo.core_client_id);
    assert.ok(!JSON.stringify([assets, created, action]).includes(TEST_PIN), 'no PIN in a msg');
    // One login for the connection's operation nodes and feed; closing the flow releases the token.
    const held = pkcs11Registry();
    assert.deepEqual(held.map((m) => m.tokens.map((t) => [t.token, t.refs, t.logins])), [[['token "T"', 1, 1]]]);
    await helper.unload();
    assert.deepEqual(pkcs11Registry(), [], 'the last node using the token closed it');
  });

  /** Each refusal: the connection's fields, the words of its error, and the status the node shows. */
  const refusals: Array<{ what: string; over: Record<string, unknown>; pin?: string; reason: RegExp; status: string }> = [
    { what: 'a wrong PIN', over: {}, pin: 'pin-wrong-000', reason: /refused the PIN|CKR_PIN_INCORRECT/, status: 'signing key refused: pinIncorrect' },
    { what: 'a missing token', over: { pkcs11TokenLabel: 'NoSuchToken' }, reason: /NoSuchToken.*not found|token.*NoSuchToken/i, status: 'signing key refused: tokenNotFound' },
    { what: 'a missing key', over: { pkcs11KeyLabel: 'NoSuchKey' }, reason: /no private key.*NoSuchKey/, status: 'signing key refused: keyNotFound' },
    { what: 'an RSA-1024 key', over: { pkcs11KeyLabel: 'Small' }, reason: /RSA-1024; at least RSA-2048/, status: 'signing key refused: keyUnsuitable' },
    { what: 'a module that cannot be loaded', over: { pkcs11Module: '/nonexistent/libpkcs11-missing.so' }, reason: /PKCS#11 module \W*\/nonexistent\/libpkcs11-missing\.so\W* could not be loaded/, status: 'signing key refused: moduleNotLoadable' },
    { what: 'a connection without its PIN', over: {}, pin: '', reason: /pkcs11\.pin: the user PIN is required/, status: 'pkcs11.pin: the user PIN is required' },
  ];
  for (const r of refusals) {
    it(`refuses ${r.what} at deploy: named in the node status, the log (once) and a msg's error; 0 requests sent`, async () => {
      const before = counting.requests;
      const flow = [TAB, tokenConfig(counting.baseUrl, r.over), { id: 'op', z: 'tab', type: 'custody-assets', connection: 'cfg', operation: 'assets', wires: [['out']] }, { id: 'out', z: 'tab', type: 'helper' }, ...catchNodes];
      const pin = r.pin ?? TEST_PIN;
      await loadCollecting(MODULES, placed(flow), { cfg: { apiKey: 'dGVzdC1wa2NzMTEta2V5', ...(pin ? { pin } : {}) } }, inbox);
      // The helper's log spy of this load (a new one per load).
      const log = (helper as unknown as { log(): { args: unknown[][] } }).log();
      const op = helper.getNode('op');
      const status = await until(() => (lastStatusOf(op)?.fill === 'red' ? lastStatusOf(op) : undefined), 'the node using the connection to show the refusal');
      assert.deepEqual([status!.shape, status!.text], ['ring', r.status]);
      const logged = () => log.args.map((a) => JSON.stringify(a)).filter((t) => t.includes('signing key:'));
      await until(() => (logged().length ? true : undefined), 'the refusal in the log');
      assert.match(logged()[0], r.reason);
      const { caught } = await sendAndWait(inbox, { payload: {} });
      assert.ok(caught, 'the msg is refused');
      assert.match(caught.error.message, r.reason);
      assert.equal(logged().length, 1, `logged once by the connection: ${JSON.stringify(logged())}`);
      assert.equal(counting.requests - before, 0, 'nothing reached the server');
      assert.ok(!JSON.stringify([status, caught, log.args]).includes(TEST_PIN), 'no PIN in the status, the error or the log');
    });
  }

  /** POST the connection test with `body` (the dialog's fields); a 200 answer. Load a flow first (the admin routes). */
  const testConnection = async (body: Record<string, unknown>): Promise<any> => {
    const res = await helper.request().post('/custodyflow/config/test').send(body).expect(200);
    return res.body;
  };

  it('Test connection shows the token key fingerprint (equal to openssl\'s), the PEM key\'s likewise, and names a wrong PIN', async () => {
    await helper.load(MODULES, [TAB], {});
    const fields = { environment: 'custom', baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, keySource: 'pkcs11', pkcs11Module: SOFTHSM_MODULE, pkcs11TokenLabel: 'T', pkcs11KeyLabel: 'K' };
    const ok = await testConnection({ ...fields, pin: TEST_PIN });
    assert.equal(ok.ok, true, ok.message);
    assert.equal(ok.keySource, 'pkcs11');
    assert.equal(ok.fingerprint, opensslFingerprint(hsm.dir, spki));
    assert.ok(ok.message.includes(ok.fingerprint), ok.message);

    const wrong = await testConnection({ ...fields, pin: 'pin-wrong-111' });
    assert.equal(wrong.ok, false);
    assert.equal(wrong.cause, 'config');
    assert.equal(wrong.reason, 'pinIncorrect');
    assert.match(wrong.message, /refused the PIN/);
    assert.ok(!JSON.stringify(wrong).includes('pin-wrong-111'));

    const missingKey = await testConnection({ ...fields, pin: TEST_PIN, pkcs11KeyLabel: 'NoSuchKey' });
    assert.deepEqual([missingKey.ok, missingKey.reason], [false, 'keyNotFound'], missingKey.message);

    // A PEM key: its fingerprint too (the simulator refuses the signature: this key is not registered).
    const pair = rsaKeyPair('pkcs8');
    const pem = await testConnection({ environment: 'custom', baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: pair.privateKey });
    assert.equal(pem.keySource, 'pem');
    assert.equal(pem.fingerprint, opensslFingerprint(hsm.dir, createPublicKey(pair.publicKey).export({ type: 'spki', format: 'der' })));
    assert.equal(pem.cause, 'badSignature');
    for (const a of [ok, wrong, missingKey, pem]) assert.ok(!JSON.stringify(a).includes(TEST_PIN), 'no PIN in an answer');
  });

  describeCleanLog('the PIN', (text, where) => assert.ok(!text.includes(TEST_PIN) && !text.includes('pin-wrong-'), `${where} holds a PIN`));
});
