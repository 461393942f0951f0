/**
 * Request signing for the Custody Partner API (spec section 5, items 3, 4 and 6).
 *
 * Signed bytes = `timestamp-or-nonce` (decimal ASCII) + the full request URL exactly as sent
 * (scheme, host, port when not the default, path and query string) + the body bytes exactly
 * as sent (nothing when the call has no body). They are hashed with SHA-256, signed with
 * RSA PKCS#1 v1.5 and encoded as URL-safe base64 without `=` padding (RFC 4648 section 5).
 *
 * Pure functions over Node's `crypto`; no I/O.
 */
import { createPrivateKey, createPublicKey, sign as rsaSign, verify as rsaVerify, KeyObject } from 'node:crypto';

/** What a signature covers. Source: spec section 5.3. */
export interface SigningInput {
  /** The `x-timestamp` value (Unix epoch seconds) or the `x-nonce` value, as the decimal string sent. */
  prefix: string;
  /** The full request URL as sent, e.g. `https://api.example/api/v1/p/company/abc?x=1`, or a `ws(s)://` feed URL. */
  url: string;
  /** The body bytes as sent; omit (or pass an empty buffer) for a call without a body. */
  body?: Buffer | string;
}

/** Raised when a key cannot be used. Its message never contains key material. */
export class KeyFormatError extends Error {
  override name = 'KeyFormatError';
}

/**
 * Build the exact byte string that is signed.
 * @returns prefix + url + body as one Buffer (UTF-8 for strings).
 * @throws {TypeError} when `prefix` or `url` is empty (a bug real clients shipped: an empty URL).
 */
export function signingPayload(input: SigningInput): Buffer {
  if (!input.prefix) throw new TypeError('signing: prefix (timestamp or nonce) is empty');
  if (!input.url) throw new TypeError('signing: url is empty');
  // One string for the prefix and URL (both short ASCII in practice), then the body bytes as sent.
  const head = Buffer.from(input.prefix + input.url, 'utf8');
  const body = input.body;
  if (body === undefined || body.length === 0) return head;
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/**
 * Parse a PEM RSA private key: PKCS#1 (PEM label `RSA PRIVATE KEY`) or PKCS#8 (label `PRIVATE KEY`).
 * @throws {KeyFormatError} when the text is not an RSA private key; the message names the
 *   problem, never the key text.
 */
export function loadPrivateKey(pem: string | KeyObject): KeyObject {
  if (pem instanceof KeyObject) {
    if (pem.type !== 'private' || pem.asymmetricKeyType !== 'rsa') throw new KeyFormatError('privateKey: not an RSA private key');
    return pem;
  }
  if (typeof pem !== 'string' || !pem.includes('PRIVATE KEY')) {
    throw new KeyFormatError('privateKey: expected a PEM RSA private key (PKCS#1, label "RSA PRIVATE KEY", or PKCS#8, label "PRIVATE KEY")');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem.trim().replace(/\r\n/g, '\n'), format: 'pem' });
  } catch {
    throw new KeyFormatError('privateKey: the PEM text could not be parsed (encrypted keys are not supported)');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new KeyFormatError(`privateKey: expected an RSA key, got ${key.asymmetricKeyType}`);
  return key;
}

/**
 * Parse a PEM RSA public key (SPKI `BEGIN PUBLIC KEY` or PKCS#1 `BEGIN RSA PUBLIC KEY`).
 * @throws {KeyFormatError} when the text is not an RSA public key.
 */
export function loadPublicKey(pem: string | KeyObject): KeyObject {
  let key: KeyObject;
  try {
    key = pem instanceof KeyObject ? (pem.type === 'private' ? createPublicKey(pem) : pem) : createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new KeyFormatError('publicKey: the PEM text could not be parsed');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new KeyFormatError(`publicKey: expected an RSA key, got ${key.asymmetricKeyType}`);
  return key;
}

/** Encode bytes as URL-safe base64 without padding (RFC 4648 section 5). */
export function base64UrlNoPad(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/**
 * Sign a request. SHA-256 + RSA PKCS#1 v1.5 over {@link signingPayload}.
 * @param key a KeyObject from {@link loadPrivateKey} (parse once, sign many) or PEM text.
 * @returns the `x-sign` header value: URL-safe base64, no padding.
 * @throws {KeyFormatError} for an unusable key; {TypeError} for an empty prefix or url.
 */
export function sign(key: KeyObject | string, input: SigningInput): string {
  const k = typeof key === 'string' ? loadPrivateKey(key) : key;
  return base64UrlNoPad(rsaSign('sha256', signingPayload(input), k));
}

/**
 * Verify an `x-sign` value. Accepts URL-safe base64 with or without `=` padding (the service's documentation examples:
 * a server should accept padded signatures too) and, leniently, standard base64.
 * @returns true when the signature matches the payload and key; false otherwise (never throws
 *   for a malformed signature).
 */
export function verify(publicKey: KeyObject | string, input: SigningInput, signature: string): boolean {
  if (typeof signature !== 'string' || signature.length === 0) return false;
  if (!/^[A-Za-z0-9_\-+/]+={0,2}$/.test(signature)) return false;
  const k = typeof publicKey === 'string' ? loadPublicKey(publicKey) : publicKey;
  const normalised = signature.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  const bytes = Buffer.from(normalised, 'base64url');
  try {
    return rsaVerify('sha256', signingPayload(input), k, bytes);
  } catch {
    return false;
  }
}
