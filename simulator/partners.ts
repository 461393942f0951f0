/**
 * Partner key registration: the simulator's stand-in for the step where a partner registers
 * with the service the public key of the RSA key pair it signs with and is given an API key for it
 * (spec section 5.3: "The matching public key is registered with the account"). Served by the
 * control endpoints `POST /_simulator/partners` and `GET /_simulator/partners` (control.ts).
 *
 * A registered key is one more API key of the same partner account, with the full permission:
 * its requests reach the same companies, funds and core clients as the provisioned key's, and
 * are verified with the registered public key (auth.ts). Nonce marks are per API key, as for the
 * provisioned keys. Registering the same public key again answers the API key it already has.
 * Registrations persist in the state (`SimState.partnerKeys`).
 */
import { createHash, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { badRequest } from './errors';
import type { Engine } from './engine';
import type { RegisteredPartnerKey } from './model';

/** The least RSA modulus accepted, in bits (the provisioned key's size; NIST's floor for RSA signatures). */
export const MIN_RSA_BITS = 2048;

/** The answer of `POST /_simulator/partners`. `api_key` is a secret: never log it. */
export interface PartnerRegistration {
  /** base64 text, sent as `x-api-key` with requests signed by the matching private key */
  api_key: string;
  /** SHA-256 (hex) of the public key's DER (SPKI) */
  fingerprint: string;
  /** false when this public key was registered before (the API key is the one given then) */
  created: boolean;
}

/** One entry of `GET /_simulator/partners` (never the API key). */
export interface PartnerKeyView {
  fingerprint: string;
  /** SPKI PEM */
  public_key: string;
  /** epoch seconds of the business clock */
  registered: number;
}

/**
 * Parse the text of a public key: SPKI PEM (`BEGIN PUBLIC KEY`, what `openssl pkey -pubout`
 * writes) or PKCS#1 PEM (`BEGIN RSA PUBLIC KEY`), RSA of {@link MIN_RSA_BITS} bits or more.
 * @throws {SimError} 400 `public_key: ...` for a private key, text that is not a PEM public key,
 *   a key that is not RSA, or a modulus below {@link MIN_RSA_BITS} bits.
 */
export function parsePartnerPublicKey(text: string): { key: KeyObject; pem: string; fingerprint: string } {
  if (/PRIVATE KEY-----/.test(text)) throw badRequest('public_key: this is a private key; register the public key only (openssl pkey -in <private key> -pubout) and keep the private key to yourself');
  if (!/-----BEGIN (RSA )?PUBLIC KEY-----/.test(text)) throw badRequest('public_key: expected a PEM public key (-----BEGIN PUBLIC KEY----- or -----BEGIN RSA PUBLIC KEY-----)');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch {
    throw badRequest('public_key: not a readable PEM public key');
  }
  if (key.asymmetricKeyType !== 'rsa') throw badRequest(`public_key: an RSA key is required, got ${String(key.asymmetricKeyType)}`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) throw badRequest(`public_key: RSA ${bits} bits is too short; ${MIN_RSA_BITS} bits or more`);
  const der = key.export({ type: 'spki', format: 'der' });
  return { key, pem: key.export({ type: 'spki', format: 'pem' }).toString(), fingerprint: createHash('sha256').update(der).digest('hex') };
}

/**
 * Register a partner public key and give it an API key; the same key again answers the API key
 * it already has (`created: false`).
 * @throws {SimError} 400 as {@link parsePartnerPublicKey}.
 */
export function registerPartnerKey(eng: Engine, publicKeyText: string): PartnerRegistration {
  const { pem, fingerprint } = parsePartnerPublicKey(publicKeyText);
  // Read back through the state (its change-tracking proxy), not the object just assigned.
  eng.state.partnerKeys ??= {};
  const keys = eng.state.partnerKeys;
  const existing = Object.entries(keys).find(([, k]) => k.fingerprint === fingerprint);
  if (existing) return { api_key: existing[0], fingerprint, created: false };
  const apiKey = randomBytes(32).toString('base64');
  const record: RegisteredPartnerKey = { publicKeyPem: pem, fingerprint, registered: eng.now() };
  keys[apiKey] = record;
  eng.changed();
  return { api_key: apiKey, fingerprint, created: true };
}

/** The registered partner keys, oldest first, without their API keys. */
export function listPartnerKeys(eng: Engine): PartnerKeyView[] {
  return Object.values(eng.state.partnerKeys ?? {})
    .map((k) => ({ fingerprint: k.fingerprint, public_key: k.publicKeyPem, registered: k.registered }))
    .sort((a, b) => a.registered - b.registered);
}
