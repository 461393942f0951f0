/**
 * Where a client's RSA private key lives and how it signs (spec section 5, items 3 and 4:
 * SHA-256 with RSA PKCS#1 v1.5 over the signed bytes of lib/client/signing.ts
 * `signingPayload`). One asynchronous interface, {@link KeySource}, for both choices:
 * - {@link PemKeySource}: a PEM key (or KeyObject) held in memory, signed with `crypto.sign`'s
 *   callback form, so the RSA work runs on libuv's thread pool (`UV_THREADPOOL_SIZE`, 4 by
 *   default) and the main thread only waits (Node.js docs, crypto.sign: "If the callback
 *   function is provided this function uses libuv's threadpool");
 * - lib/client/pkcs11/source.ts `Pkcs11KeySource`: the key stays on a PKCS#11 token (an HSM).
 *
 * Fingerprints ({@link fingerprintOf}) are the SHA-256 of the public key's SPKI DER encoding, as
 * lowercase hex (64 characters): what
 * `openssl pkey -pubin -in public.pem -outform DER | openssl dgst -sha256` prints.
 */
import { createHash, createPublicKey, sign as rsaSign, type KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../api/errors';
import { base64UrlNoPad, loadPrivateKey, signingPayload, type SigningInput } from './signing';

/**
 * An RSA private key that signs asynchronously. Safe for concurrent use: many `sign` calls may
 * be pending at once. Implementations never reveal key material (nor a PIN) in errors,
 * `toJSON` or inspection.
 */
export interface KeySource {
  /** What holds the key: `pem` (in memory) or `pkcs11` (on a token). */
  readonly kind: 'pem' | 'pkcs11';
  /**
   * Make the key ready and check it (for a token: load the module, find the token, log in, find
   * the key, read its public key, make one probe signature). Idempotent; `sign` opens on first
   * use too. Call it at deploy or Test connection to see a refusal before anything is sent.
   * @throws {KeySourceError} (a ConfigError) naming the failure, see {@link KeySourceFailure}.
   */
  open(): Promise<void>;
  /**
   * Sign `payload` with SHA-256 and RSA PKCS#1 v1.5 (`CKM_SHA256_RSA_PKCS` on a token).
   * @param payload the signed bytes (spec section 5.3: prefix + URL + body).
   * @returns the raw signature, as long as the modulus (256 bytes for RSA-2048).
   * @throws {KeySourceError} when the key cannot sign (the source's refusal, e.g. `pinIncorrect`).
   */
  sign(payload: Buffer): Promise<Buffer>;
  /** The RSA public key (opens the source first). @throws {KeySourceError} as {@link open}. */
  publicKey(): Promise<KeyObject>;
  /** {@link fingerprintOf} the public key (opens the source first). @throws {KeySourceError} as {@link open}. */
  fingerprint(): Promise<string>;
  /** Release what the source holds (for a token: its reference to the shared session pool). Idempotent. */
  close(): Promise<void>;
}

/**
 * Why a key source refused, in {@link KeySourceError.reason}:
 * - `bindingMissing`: the optional npm package `pkcs11js` is not installed;
 * - `moduleNotLoadable`: the PKCS#11 module (a shared library) could not be loaded or initialised;
 * - `tokenNotFound`: no token with that label (or no such slot, or no token in it);
 * - `keyNotFound`: no private key with that label / id on the token (or several match);
 * - `keyUnsuitable`: the key is not RSA, is smaller than 2048 bits, or cannot sign with
 *   `CKM_SHA256_RSA_PKCS`;
 * - `pinIncorrect`: the token refused the PIN (`CKR_PIN_INCORRECT`); not tried again by this
 *   process until every user of the token has closed, so retries cannot lock the PIN;
 * - `pinLocked`: the token locked the user PIN (`CKR_PIN_LOCKED`); the security officer must unlock it;
 * - `tokenFailed`: any other refusal of the token (the `CKR_` name is in the message);
 * - `closed`: the source was closed.
 */
export type KeySourceFailure =
  | 'bindingMissing'
  | 'moduleNotLoadable'
  | 'tokenNotFound'
  | 'keyNotFound'
  | 'keyUnsuitable'
  | 'pinIncorrect'
  | 'pinLocked'
  | 'tokenFailed'
  | 'closed';

/**
 * A key source's refusal: a {@link ConfigError} (code `ECONFIG`; nothing was sent) with the
 * failure in {@link reason}. The message names the option at fault and never holds a PIN or key
 * material.
 */
export class KeySourceError extends ConfigError {
  override name = 'KeySourceError';
  /** What failed, see {@link KeySourceFailure}. */
  readonly reason: KeySourceFailure;

  /**
   * @param reason what failed.
   * @param message the explanation (no secret), e.g. `pkcs11: token "T" not found in module ...`.
   */
  constructor(reason: KeySourceFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The fingerprint of a public key: SHA-256 of its SPKI DER encoding, lowercase hex.
 * @param key an RSA public (or private: its public half is used) KeyObject.
 * @returns 64 hexadecimal characters.
 */
export function fingerprintOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('hex');
}

/**
 * Sign a request through a key source (spec section 5.3 and 5.4).
 * @returns the `x-sign` header value: URL-safe base64 without padding.
 * @throws {TypeError} for an empty prefix or url; {KeySourceError} as {@link KeySource.sign}.
 */
export async function signWith(source: KeySource, input: SigningInput): Promise<string> {
  return base64UrlNoPad(await source.sign(signingPayload(input)));
}

/**
 * How many PEM signatures run on the thread pool at once, process-wide: one core fewer than the
 * machine has (at least 1), and no more than the pool's threads (`UV_THREADPOOL_SIZE`, default 4).
 * RSA signing is pure CPU: with every core signing, the event loop's own thread would wait for a
 * core, and a burst of requests would delay every flow all the same; a core left free keeps it
 * answering. Further signatures wait in a queue (first come, first served).
 */
export const PEM_SIGNING_THREADS = Math.max(1, Math.min(Number(process.env.UV_THREADPOOL_SIZE) || 4, availableParallelism() - 1));

let pemRunning = 0;
const pemWaiting: Array<() => void> = [];

/** Run `job` when fewer than {@link PEM_SIGNING_THREADS} PEM signatures are running. */
function pemSlot<T>(job: () => Promise<T>): Promise<T> {
  const start = (): Promise<T> => {
    pemRunning++;
    const done = (): void => {
      pemRunning--;
      pemWaiting.shift()?.();
    };
    const p = job();
    p.then(done, done);
    return p;
  };
  if (pemRunning < PEM_SIGNING_THREADS) return start();
  return new Promise<void>((resolve) => pemWaiting.push(resolve)).then(start);
}

/**
 * A PEM RSA private key (PKCS#1 or PKCS#8) or a KeyObject, held parsed in memory, signing on
 * libuv's thread pool with `crypto.sign(algorithm, data, key, callback)`, at most
 * {@link PEM_SIGNING_THREADS} at a time. Nothing to open or close.
 */
export class PemKeySource implements KeySource {
  readonly kind = 'pem';
  readonly #key: KeyObject;
  #public: KeyObject | undefined;

  /**
   * @param key PEM text or a private KeyObject.
   * @throws {KeyFormatError} when it is not an RSA private key (the message has no key text).
   */
  constructor(key: string | KeyObject) {
    this.#key = loadPrivateKey(key);
  }

  /** Nothing to open: the key was parsed by the constructor. */
  open(): Promise<void> {
    return Promise.resolve();
  }

  /** Sign on the thread pool. @see KeySource.sign */
  sign(payload: Buffer): Promise<Buffer> {
    return pemSlot(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          rsaSign('sha256', payload, this.#key, (err, signature) => (err ? reject(new KeySourceError('keyUnsuitable', 'privateKey: the key could not sign')) : resolve(signature)));
        }),
    );
  }

  /** @see KeySource.publicKey */
  publicKey(): Promise<KeyObject> {
    this.#public ??= createPublicKey(this.#key);
    return Promise.resolve(this.#public);
  }

  /** @see KeySource.fingerprint */
  async fingerprint(): Promise<string> {
    return fingerprintOf(await this.publicKey());
  }

  /** Nothing to release. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Never reveal the key when inspected or serialised. */
  toJSON(): Record<string, unknown> {
    return { kind: this.kind };
  }
}
