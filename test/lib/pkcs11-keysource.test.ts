/**
 * The PKCS#11 key source against a real SoftHSM2 token (made in a temporary directory, deleted
 * afterwards): signatures made on the token with CKM_SHA256_RSA_PKCS are byte-identical to
 * openssl's and to the PEM source's for the same key; the public key and its fingerprint are read
 * from the token (also for a key generated on it, whose private half never left it); 200
 * concurrent signatures all verify; each refusal is named (module not loadable, token not found,
 * key not found, RSA-1024, wrong PIN) without the PIN in its text; a token that goes away and
 * comes back is reopened; the last close finalises the module.
 */
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { fingerprintOf, KeySourceError, PemKeySource, Pkcs11KeySource, pkcs11Registry, type Pkcs11Options } from '../../lib';
import { createSoftHsm, deleteToken, generateOnToken, importKey, initToken, opensslSign, PIN, removeSoftHsm, rsaPem, SOFTHSM_MODULE, type SoftHsm } from '../helpers/softhsm';

/** Sign `payload` until the token answers (every 200 ms, 15 s at most): a client's retries. */
async function signedAgain(source: Pkcs11KeySource, payload: Buffer): Promise<Buffer> {
  for (let i = 0; ; i++) {
    try {
      return await source.sign(payload);
    } catch (e) {
      if (!(e instanceof KeySourceError && e.reason === 'tokenNotFound') || i >= 75) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe('PKCS#11 key source on a SoftHSM2 token', function () {
  this.timeout(120_000);
  let hsm: SoftHsm;
  const key = rsaPem(2048);
  const small = rsaPem(1024);
  let generatedSpki: Buffer;
  const opened: Pkcs11KeySource[] = [];
  /** A source of key K on token T (options replaced by `o`), closed after the suite. */
  const source = (o: Partial<Pkcs11Options> = {}): Pkcs11KeySource => {
    const s = new Pkcs11KeySource({ module: SOFTHSM_MODULE, tokenLabel: 'T', keyLabel: 'K', pin: PIN, ...o });
    opened.push(s);
    return s;
  };

  before(() => {
    hsm = createSoftHsm();
    initToken(hsm, 'T');
    initToken(hsm, 'W');
    importKey(hsm, 'T', 'K', '01', key.privateKeyPem);
    importKey(hsm, 'T', 'Small', '03', small.privateKeyPem);
    generatedSpki = generateOnToken(hsm, 'T', 'G', '02');
  });

  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
    removeSoftHsm(hsm);
  });

  it('signs byte-identically to openssl and to the PEM source, for the same key and payload', async () => {
    const token = source();
    const pem = new PemKeySource(key.privateKeyPem);
    const payloads = [Buffer.from('1700000000https://api.example/api/v1/p/assets'), Buffer.from('17000000001234https://h/api/v1/p/company/c/transfer{"amount":"1.5"}'), Buffer.from([0, 1, 2, 255, 254, 10, 13])];
    for (const payload of payloads) {
      const onToken = await token.sign(payload);
      assert.equal(onToken.length, 256);
      assert.deepEqual(onToken, opensslSign(hsm, key.privateKeyPem, payload));
      assert.deepEqual(onToken, await pem.sign(payload));
    }
  });

  it('reads the public key from the token: fingerprint = SHA-256 of the SPKI DER, hex; also for a key generated on the token', async () => {
    const token = source();
    const expected = createHash('sha256').update(createPublicKey(key.publicKeyPem).export({ type: 'spki', format: 'der' })).digest('hex');
    assert.equal(await token.fingerprint(), expected);
    assert.equal(await new PemKeySource(key.privateKeyPem).fingerprint(), expected);
    assert.match(expected, /^[0-9a-f]{64}$/);

    const generated = source({ keyLabel: undefined, keyId: '02' });
    assert.equal(await generated.fingerprint(), createHash('sha256').update(generatedSpki).digest('hex'));
    const payload = Buffer.from('signed by a key that never left the token');
    assert.ok(verify('sha256', payload, createPublicKey({ key: generatedSpki, format: 'der', type: 'spki' }), await generated.sign(payload)));
  });

  it('signs 200 requests at once without an error, each verifiable, on one login and at most 4 sessions shared by the sources of the token', async () => {
    const token = source({ keyId: '01' });
    const other = source({ keyLabel: 'K', sessions: 2 });
    const pub = createPublicKey(key.publicKeyPem);
    const payloads = Array.from({ length: 200 }, (_, i) => Buffer.from(`1700000000https://api.example/api/v1/p/assets?i=${i}`));
    const signatures = await Promise.all(payloads.map((p, i) => (i % 2 ? token : other).sign(p)));
    assert.equal(signatures.filter((s, i) => verify('sha256', payloads[i], pub, s)).length, 200);
    const [module] = pkcs11Registry();
    const t = module.tokens.find((e) => e.token === 'token "T"');
    assert.equal(t?.logins, 1, 'one login per process and token');
    assert.ok(t && t.sessionsOpened <= 4, `at most 4 sessions (the first source's pool size), not ${t?.sessionsOpened}`);
    assert.ok(t && t.refs >= 2, 'both sources share the entry');
  });

  it('refuses, with a named error and no PIN in its text: module not loadable, token not found, key not found, RSA-1024, wrong PIN', async () => {
    const refusal = async (o: Partial<Pkcs11Options>, reason: string, pattern: RegExp): Promise<void> => {
      await assert.rejects(
        source(o).sign(Buffer.from('x')),
        (e: unknown) => e instanceof KeySourceError && e.reason === reason && e.code === 'ECONFIG' && pattern.test(e.message) && !e.message.includes(o.pin ?? PIN),
        reason,
      );
    };
    await refusal({ module: '/nonexistent/libpkcs11.so' }, 'moduleNotLoadable', /\/nonexistent\/libpkcs11\.so/);
    await refusal({ tokenLabel: 'Nope' }, 'tokenNotFound', /token "Nope" not found/);
    await refusal({ keyLabel: 'Missing' }, 'keyNotFound', /label "Missing"/);
    await refusal({ keyLabel: 'Small' }, 'keyUnsuitable', /RSA-1024; at least RSA-2048/);
    // The token refuses the PIN (CKR_PIN_INCORRECT) on token W, which nobody logged in to yet;
    // the refusal is kept: a second source of W is refused without another try.
    await refusal({ tokenLabel: 'W', pin: '9999' }, 'pinIncorrect', /refused the PIN \(CKR_PIN_INCORRECT\)/);
    await refusal({ tokenLabel: 'W', pin: '9999' }, 'pinIncorrect', /refused the PIN \(CKR_PIN_INCORRECT\)/);
    // T is logged in with the right PIN: another PIN for it in this process is refused as well.
    await refusal({ tokenLabel: 'T', pin: '9999' }, 'pinIncorrect', /different PIN/);
  });

  it('checks its options before anything: a ConfigError naming the field', () => {
    assert.throws(() => new Pkcs11KeySource({ module: '', tokenLabel: 'T', keyLabel: 'K', pin: PIN }), /pkcs11\.module/);
    assert.throws(() => new Pkcs11KeySource({ module: SOFTHSM_MODULE, keyLabel: 'K', pin: PIN }), /pkcs11\.token/);
    assert.throws(() => new Pkcs11KeySource({ module: SOFTHSM_MODULE, tokenLabel: 'T', pin: PIN }), /pkcs11\.key/);
    assert.throws(() => new Pkcs11KeySource({ module: SOFTHSM_MODULE, tokenLabel: 'T', keyId: 'xyz', pin: PIN }), /pkcs11\.keyId/);
    assert.throws(() => new Pkcs11KeySource({ module: SOFTHSM_MODULE, tokenLabel: 'T', keyLabel: 'K', pin: '' }), /pkcs11\.pin/);
    assert.equal(JSON.stringify(source()).includes(PIN), false);
  });

  it('reopens when the token goes away and comes back (deleted, then made again with the same label and key)', async () => {
    const token = source();
    const pub = createPublicKey(key.publicKeyPem);
    const payload = Buffer.from('before and after');
    assert.ok(verify('sha256', payload, pub, await token.sign(payload)));
    deleteToken(hsm, 'T');
    // Gone: the signature fails with a named error (the retry finds no token either).
    await assert.rejects(token.sign(payload), (e: unknown) => e instanceof KeySourceError && e.reason === 'tokenNotFound');
    initToken(hsm, 'T');
    importKey(hsm, 'T', 'K', '01', key.privateKeyPem);
    // Back: the module lists it once initialised again (at most once a second), so a caller
    // retrying as a client does gets signatures again from the same source.
    await signedAgain(token, payload);
    const again = await Promise.all([1, 2, 3, 4, 5, 6].map(() => token.sign(payload)));
    assert.equal(again.filter((s) => verify('sha256', payload, pub, s)).length, 6);
    const [module] = pkcs11Registry();
    assert.ok(module.generation >= 1, 'the module was initialised again to see the token that came back');
    assert.equal(module.tokens.find((e) => e.token === 'token "T"')?.logins, 2, 'logged in again, once');
    assert.equal(await token.fingerprint(), fingerprintOf(pub));
  });

  it('the last close logs out, closes the sessions and finalises the module: a token made afterwards is found', async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    assert.deepEqual(pkcs11Registry(), [], 'nothing held once every source is closed');
    // SoftHSM2 lists its tokens at C_Initialize: N is seen only if the module was finalised.
    initToken(hsm, 'N');
    importKey(hsm, 'N', 'K', '01', key.privateKeyPem);
    const payload = Buffer.from('after the last close');
    const n = source({ tokenLabel: 'N' });
    assert.deepEqual(await n.sign(payload), opensslSign(hsm, key.privateKeyPem, payload));
    await n.close();
    assert.deepEqual(pkcs11Registry(), []);
  });
});
