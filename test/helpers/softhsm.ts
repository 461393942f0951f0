/**
 * Real SoftHSM2 tokens for the PKCS#11 tests: a token directory of its own in a temporary
 * directory (a softhsm2.conf there, named by `SOFTHSM2_CONF` in process.env before the module is
 * initialised: SoftHSM2 reads it, and lists its tokens, at `C_Initialize`), tokens made with
 * `softhsm2-util`, keys imported with `softhsm2-util --import` or generated on the token with
 * OpenSC's `pkcs11-tool`. When softhsm2 or opensc is not installed the tests fail (CI installs
 * both: .ci/run).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Debian's SoftHSM2 PKCS#11 module (package softhsm2). */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

/** The user PIN and security officer PIN of every test token. */
export const PIN = '1234';
export const SO_PIN = '5678';

/** A token directory and its configuration file. */
export interface SoftHsm {
  /** The temporary directory (removed by {@link removeSoftHsm}). */
  dir: string;
  /** The softhsm2.conf, set as `SOFTHSM2_CONF`. */
  conf: string;
}

/** Run a command of softhsm2/opensc with the test's SOFTHSM2_CONF; returns its stdout. */
function run(h: SoftHsm, command: string, args: string[]): Buffer {
  return execFileSync(command, args, { env: { ...process.env, SOFTHSM2_CONF: h.conf }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A fresh token directory with its softhsm2.conf, set as `process.env.SOFTHSM2_CONF`. Call it
 * before any key source of the module is opened (the module must not be initialised yet).
 * @throws AssertionError when SoftHSM2 or pkcs11-tool is not installed (the test fails, it is not skipped).
 */
export function createSoftHsm(): SoftHsm {
  assert.ok(fs.existsSync(SOFTHSM_MODULE), `SoftHSM2 is not installed (${SOFTHSM_MODULE} is missing): apt-get install softhsm2 opensc`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-softhsm-'));
  fs.mkdirSync(path.join(dir, 'tokens'));
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const h = { dir, conf };
  run(h, 'softhsm2-util', ['--version']);
  run(h, 'pkcs11-tool', ['--module', SOFTHSM_MODULE, '--show-info']);
  return h;
}

/** Remove the token directory. */
export function removeSoftHsm(h: SoftHsm | undefined): void {
  if (h) fs.rmSync(h.dir, { recursive: true, force: true });
}

/** Initialise a token labelled `label` in the first free slot, user PIN {@link PIN}. */
export function initToken(h: SoftHsm, label: string): void {
  run(h, 'softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', PIN, '--so-pin', SO_PIN]);
}

/** Delete the token labelled `label` (its files go: the token is gone). */
export function deleteToken(h: SoftHsm, label: string): void {
  run(h, 'softhsm2-util', ['--delete-token', '--token', label]);
}

/** A new RSA key pair as PEM (PKCS#8 private, SPKI public). */
export function rsaPem(bits = 2048): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/**
 * Import a PKCS#8 PEM private key into token `token` as `keyLabel` with CKA_ID `idHex`
 * (`softhsm2-util --import`; the PEM file is written in the temp directory and removed).
 */
export function importKey(h: SoftHsm, token: string, keyLabel: string, idHex: string, privateKeyPem: string): void {
  const file = path.join(h.dir, `import-${idHex}.pk8`);
  fs.writeFileSync(file, privateKeyPem, { mode: 0o600 });
  try {
    run(h, 'softhsm2-util', ['--import', file, '--token', token, '--label', keyLabel, '--id', idHex, '--pin', PIN]);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * Generate an RSA key pair on token `token` with `pkcs11-tool --keypairgen` (the private key never
 * leaves it) and export only its public key.
 * @returns the public key, SPKI DER, as `pkcs11-tool --read-object --type pubkey` gives it.
 */
export function generateOnToken(h: SoftHsm, token: string, keyLabel: string, idHex: string, bits = 2048): Buffer {
  const base = ['--module', SOFTHSM_MODULE, '--token-label', token, '--login', '--pin', PIN];
  run(h, 'pkcs11-tool', [...base, '--keypairgen', '--key-type', `rsa:${bits}`, '--label', keyLabel, '--id', idHex]);
  return run(h, 'pkcs11-tool', [...base, '--read-object', '--type', 'pubkey', '--id', idHex]);
}

/** openssl's signature (`openssl dgst -sha256 -sign`) of `payload` with a PEM private key. */
export function opensslSign(h: SoftHsm, privateKeyPem: string, payload: Buffer): Buffer {
  const keyFile = path.join(h.dir, 'openssl-key.pem');
  const dataFile = path.join(h.dir, 'openssl-data.bin');
  fs.writeFileSync(keyFile, privateKeyPem, { mode: 0o600 });
  fs.writeFileSync(dataFile, payload);
  try {
    return execFileSync('openssl', ['dgst', '-sha256', '-sign', keyFile, dataFile]);
  } finally {
    fs.rmSync(keyFile, { force: true });
    fs.rmSync(dataFile, { force: true });
  }
}

/** `openssl pkey -pubin -outform DER | openssl dgst -sha256` of a public key (SPKI DER given), as hex. */
export function opensslFingerprint(dir: string, spkiDer: Buffer): string {
  const file = path.join(dir, 'fingerprint-pub.der');
  fs.writeFileSync(file, spkiDer);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-inform', 'DER', '-in', file, '-outform', 'DER']);
  const out = execFileSync('openssl', ['dgst', '-sha256'], { input: der }).toString();
  return out.trim().split(/\s+/).pop()!;
}

/** Change the user PIN of token `label` from the helper's PIN to `pin` (OpenSC's pkcs11-tool). */
export function changePin(h: SoftHsm, label: string, pin: string): void {
  run(h, 'pkcs11-tool', ['--module', SOFTHSM_MODULE, '--token-label', label, '--login', '--pin', PIN, '--change-pin', '--new-pin', pin]);
}

/**
 * A custody-config node `id` named `token` whose key is on a PKCS#11 token (docs/configuration.md,
 * key source `pkcs11`): the SoftHSM2 module, token label `T` and key label `K` (the labels the tests
 * give their token and key), environment `custom` at `baseUrl`, timestamp signing, a 30 s timeout;
 * `extra` replaces or adds properties (e.g. `z`, another key label).
 */
export function pkcs11ConfigNode(id: string, baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    type: 'custody-config',
    name: 'token',
    environment: 'custom',
    baseUrl,
    signingMode: 'timestamp',
    timeout: 30,
    keySource: 'pkcs11',
    pkcs11Module: SOFTHSM_MODULE,
    pkcs11TokenLabel: 'T',
    pkcs11KeyLabel: 'K',
    ...extra,
  };
}
