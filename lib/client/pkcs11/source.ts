/**
 * A key source whose RSA private key stays on a PKCS#11 token (an HSM, a smart card, SoftHSM2):
 * every signature is made on the token with `CKM_SHA256_RSA_PKCS` (PKCS#11 v2.40 current
 * mechanisms, section 2.1.13: SHA-256 then RSA PKCS#1 v1.5, the same bytes as `crypto.sign`
 * with the same key), through the binding's asynchronous `C_SignAsync`, so the main thread only
 * waits. Sessions are shared per module and token (lib/client/pkcs11/token.ts).
 */
import { createPublicKey, verify as rsaVerify, type KeyObject } from 'node:crypto';
import { ConfigError } from '../../api/errors';
import { fingerprintOf, KeySourceError, type KeySource } from '../key-source';
import { ckrName, loadBinding } from './binding';
import { acquireToken, isTokenGone, selectorText, type Lent, type Pkcs11Token, type TokenSelector } from './token';

/** The smallest RSA modulus accepted, bits. */
export const MIN_RSA_BITS = 2048;

/** Options of a {@link Pkcs11KeySource}. Give `tokenLabel` or `slot`, and `keyLabel` and/or `keyId`. */
export interface Pkcs11Options {
  /** Path of the vendor's PKCS#11 module (shared library), e.g. `/usr/lib/softhsm/libsofthsm2.so`. */
  module: string;
  /** The token's label (CKA token info `label`; trailing blanks ignored). */
  tokenLabel?: string;
  /** The slot id (decimal), instead of a token label. */
  slot?: number | string;
  /** The private key's `CKA_LABEL`. */
  keyLabel?: string;
  /** The private key's `CKA_ID`, hexadecimal (e.g. `01`); with a label, both must match. */
  keyId?: string;
  /** The user PIN (a Node-RED credential). Never logged, never in an error. */
  pin: string;
  /** Sessions in the token's pool (default 4, libuv's default thread pool size; 1 to 64). */
  sessions?: number;
}

/** A found key: its handle (valid for one pool generation), signature length and public key. */
interface FoundKey {
  handle: Buffer;
  generation: number;
  bytes: number;
}

/** Bytes of a big-endian unsigned integer without leading zero bytes, as base64url (JWK, RFC 7518 section 6.3.1). */
function jwkInt(b: Buffer): string {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i).toString('base64url');
}

/** Checked options. @throws {ConfigError} naming the field. */
function checkOptions(o: Pkcs11Options): { selector: TokenSelector; keyId?: Buffer; sessions: number } {
  if (!o || typeof o.module !== 'string' || !o.module.trim()) throw new ConfigError('pkcs11.module: the path of the PKCS#11 module is required');
  let selector: TokenSelector;
  if (o.tokenLabel) selector = { label: o.tokenLabel };
  else if (o.slot !== undefined && o.slot !== '') {
    if (!/^\d+$/.test(String(o.slot))) throw new ConfigError('pkcs11.slot: expected a decimal slot id');
    selector = { slot: BigInt(o.slot) };
  } else throw new ConfigError('pkcs11.token: give the token label or the slot id');
  if (!o.keyLabel && !o.keyId) throw new ConfigError('pkcs11.key: give the key label or the key id');
  if (o.keyId && !/^([0-9a-fA-F]{2})+$/.test(o.keyId.replace(/[:\s]/g, ''))) throw new ConfigError('pkcs11.keyId: expected hexadecimal bytes, e.g. 01');
  if (typeof o.pin !== 'string' || !o.pin) throw new ConfigError('pkcs11.pin: the user PIN is required');
  const sessions = o.sessions ?? 4;
  if (!Number.isInteger(sessions) || sessions < 1 || sessions > 64) throw new ConfigError('pkcs11.sessions: expected an integer from 1 to 64');
  return { selector, keyId: o.keyId ? Buffer.from(o.keyId.replace(/[:\s]/g, ''), 'hex') : undefined, sessions };
}

/**
 * An RSA key on a PKCS#11 token. Construction checks the options and that the binding is
 * installed; the token is opened on first use ({@link open}, {@link sign}, {@link publicKey}).
 * Safe for concurrent use; when the token went away and came back, a signature is tried once
 * more on a reopened pool. {@link close} releases this source's reference to the shared token.
 */
export class Pkcs11KeySource implements KeySource {
  readonly kind = 'pkcs11';
  readonly #options: Pkcs11Options;
  readonly #selector: TokenSelector;
  readonly #keyId: Buffer | undefined;
  readonly #sessions: number;
  #token: Pkcs11Token | undefined;
  #key: FoundKey | undefined;
  #public: KeyObject | undefined;
  #opening: Promise<void> | undefined;
  #closed = false;
  /** Signatures under way: {@link close} waits for them before releasing the token. */
  readonly #pending = new Set<Promise<Buffer>>();

  /**
   * @throws {ConfigError} for a missing or malformed option (the message names it);
   *   {KeySourceError} `bindingMissing` when `pkcs11js` is not installed.
   */
  constructor(options: Pkcs11Options) {
    const checked = checkOptions(options);
    loadBinding();
    this.#options = { ...options };
    this.#selector = checked.selector;
    this.#keyId = checked.keyId;
    this.#sessions = checked.sessions;
  }

  /** What the key is called in messages, e.g. `key "K" on token "T"`. */
  get #where(): string {
    const key = [this.#options.keyLabel ? `label ${JSON.stringify(this.#options.keyLabel)}` : '', this.#keyId ? `id ${this.#keyId.toString('hex')}` : ''].filter(Boolean).join(', ');
    return `key (${key}) on ${selectorText(this.#selector)}`;
  }

  /**
   * Open the token (once per process and token), log in, find the key, check it is RSA of at
   * least 2048 bits, read its public key and make one probe signature checked against it.
   * @throws {KeySourceError} `moduleNotLoadable`, `tokenNotFound`, `pinIncorrect`, `pinLocked`,
   *   `keyNotFound`, `keyUnsuitable`, `tokenFailed`, `closed`.
   */
  open(): Promise<void> {
    if (this.#closed) return Promise.reject(new KeySourceError('closed', 'pkcs11: the key source is closed'));
    if (this.#public) return Promise.resolve();
    this.#opening ??= this.#open().finally(() => (this.#opening = undefined));
    return this.#opening;
  }

  async #open(): Promise<void> {
    this.#token ??= acquireToken(this.#options.module, this.#selector, this.#options.pin, this.#sessions);
    const token = this.#token;
    let publicKey: KeyObject;
    try {
      publicKey = await token.withSession((lent) => this.#readPublicKey(lent));
    } catch (err) {
      if (!isTokenGone(err)) throw this.#named(err, 'could not be read');
      publicKey = await token.withSession((lent) => this.#readPublicKey(lent)).catch((again) => Promise.reject(this.#named(again, 'could not be read')));
    }
    const probe = Buffer.from('custodyflow pkcs11 probe');
    const signature = await this.#signOnce(probe).catch((err) => Promise.reject(this.#named(err)));
    if (!rsaVerify('sha256', probe, publicKey, signature)) throw new KeySourceError('keyUnsuitable', `pkcs11.key: the ${this.#where} made a signature its public key does not verify`);
    this.#public = publicKey;
  }

  /** Find the private key; check type, size and CKA_SIGN; build the public key from its modulus and exponent. */
  #readPublicKey(lent: Lent): KeyObject {
    const found = this.#findKey(lent);
    const { lib, binding: b } = this.#token!.module;
    const attrs = lib.C_GetAttributeValue(lent.session, found.handle, [{ type: b.CKA_KEY_TYPE }, { type: b.CKA_SIGN }]);
    const type = (attrs[0].value as Buffer).readUIntLE(0, Math.min(6, (attrs[0].value as Buffer).length));
    if (type !== b.CKK_RSA) throw new KeySourceError('keyUnsuitable', `pkcs11.key: the ${this.#where} is not an RSA key`);
    if (!(attrs[1].value as Buffer)[0]) throw new KeySourceError('keyUnsuitable', `pkcs11.key: the ${this.#where} may not sign (CKA_SIGN is false)`);
    const [n, e] = this.#modulusAndExponent(lent, found.handle);
    const bits = Buffer.from(jwkInt(n), 'base64url').length * 8;
    if (bits < MIN_RSA_BITS) throw new KeySourceError('keyUnsuitable', `pkcs11.key: the ${this.#where} is RSA-${bits}; at least RSA-${MIN_RSA_BITS} is required`);
    return createPublicKey({ key: { kty: 'RSA', n: jwkInt(n), e: jwkInt(e) }, format: 'jwk' });
  }

  /** CKA_MODULUS and CKA_PUBLIC_EXPONENT of the private key, else of the public key object with the same CKA_ID. */
  #modulusAndExponent(lent: Lent, handle: Buffer): [Buffer, Buffer] {
    const { lib, binding: b } = this.#token!.module;
    const read = (h: Buffer): [Buffer, Buffer] | undefined => {
      try {
        const [n, e] = lib.C_GetAttributeValue(lent.session, h, [{ type: b.CKA_MODULUS }, { type: b.CKA_PUBLIC_EXPONENT }]);
        return (n.value as Buffer)?.length && (e.value as Buffer)?.length ? [n.value as Buffer, e.value as Buffer] : undefined;
      } catch (err) {
        if (isTokenGone(err)) throw err;
        return undefined;
      }
    };
    const fromPrivate = read(handle);
    if (fromPrivate) return fromPrivate;
    const [id] = lib.C_GetAttributeValue(lent.session, handle, [{ type: b.CKA_ID }]);
    const pub = this.#findObjects(lent, [{ type: b.CKA_CLASS, value: b.CKO_PUBLIC_KEY }, { type: b.CKA_ID, value: id.value as Buffer }])[0];
    const fromPublic = pub && read(pub);
    if (!fromPublic) throw new KeySourceError('keyUnsuitable', `pkcs11.key: the public key of the ${this.#where} cannot be read (no CKA_MODULUS on the private key nor a public key object with its CKA_ID)`);
    return fromPublic;
  }

  #findObjects(lent: Lent, template: import('pkcs11js').Template): Buffer[] {
    const { lib } = this.#token!.module;
    lib.C_FindObjectsInit(lent.session, template);
    try {
      return lib.C_FindObjects(lent.session, 2);
    } finally {
      lib.C_FindObjectsFinal(lent.session);
    }
  }

  /** The private key's handle in the current pool generation (found again after a reopen). */
  #findKey(lent: Lent): FoundKey {
    if (this.#key && this.#key.generation === lent.generation) return this.#key;
    const b = this.#token!.module.binding;
    const template: import('pkcs11js').Template = [{ type: b.CKA_CLASS, value: b.CKO_PRIVATE_KEY }];
    if (this.#options.keyLabel) template.push({ type: b.CKA_LABEL, value: this.#options.keyLabel });
    if (this.#keyId) template.push({ type: b.CKA_ID, value: this.#keyId });
    const handles = this.#findObjects(lent, template);
    if (handles.length === 0) throw new KeySourceError('keyNotFound', `pkcs11.key: no private ${this.#where}`);
    if (handles.length > 1) throw new KeySourceError('keyNotFound', `pkcs11.key: several private keys match (${this.#where}); give the key id too`);
    const [n] = this.#token!.module.lib.C_GetAttributeValue(lent.session, handles[0], [{ type: b.CKA_MODULUS }]);
    this.#key = { handle: handles[0], generation: lent.generation, bytes: (n.value as Buffer | undefined)?.length || 512 };
    return this.#key;
  }

  /** One `C_SignInit` + `C_SignAsync` on a pooled session. */
  #signOnce(payload: Buffer): Promise<Buffer> {
    return this.#token!.withSession(async (lent) => {
      const { lib, binding: b } = this.#token!.module;
      const key = this.#findKey(lent);
      lib.C_SignInit(lent.session, { mechanism: b.CKM_SHA256_RSA_PKCS }, key.handle);
      return lib.C_SignAsync(lent.session, payload, Buffer.alloc(key.bytes));
    });
  }

  /**
   * Sign on the token; when the token went away (closed sessions, removed device, void
   * handles), once more on a reopened pool.
   * @see KeySource.sign
   * @throws {KeySourceError} as {@link open}; `tokenFailed` for another refusal of the token.
   */
  sign(payload: Buffer): Promise<Buffer> {
    const pending = this.#sign(payload);
    this.#pending.add(pending);
    const forget = (): boolean => this.#pending.delete(pending);
    pending.then(forget, forget);
    return pending;
  }

  async #sign(payload: Buffer): Promise<Buffer> {
    await this.open();
    try {
      return await this.#signOnce(payload);
    } catch (err) {
      if (!isTokenGone(err)) throw this.#named(err);
    }
    try {
      return await this.#signOnce(payload);
    } catch (err) {
      throw this.#named(err);
    }
  }

  /** A binding error as a KeySourceError (only the CKR_ name, never arguments). */
  #named(err: unknown, what = 'could not sign'): Error {
    if (err instanceof ConfigError) return err;
    const name = ckrName(err);
    if (name === 'CKR_MECHANISM_INVALID' || name === 'CKR_KEY_TYPE_INCONSISTENT' || name === 'CKR_KEY_FUNCTION_NOT_PERMITTED') {
      return new KeySourceError('keyUnsuitable', `pkcs11.key: the ${this.#where} cannot sign with CKM_SHA256_RSA_PKCS (${name})`);
    }
    return new KeySourceError('tokenFailed', `pkcs11: the ${this.#where} ${what} (${name ?? (err as Error).message})`);
  }

  /** @see KeySource.publicKey */
  async publicKey(): Promise<KeyObject> {
    await this.open();
    return this.#public!;
  }

  /** @see KeySource.fingerprint */
  async fingerprint(): Promise<string> {
    return fingerprintOf(await this.publicKey());
  }

  /** Release this source's reference to the token (the last one logs out, closes the sessions and finalises the module). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#opening?.catch(() => undefined);
    await Promise.allSettled([...this.#pending]);
    this.#token?.release();
    this.#token = undefined;
  }

  /** Never reveal the PIN when inspected or serialised. */
  toJSON(): Record<string, unknown> {
    return { kind: this.kind, module: this.#options.module, token: selectorText(this.#selector) };
  }
}
