/**
 * PKCS#11 modules and tokens shared by the whole process, handled like a connection:
 * - a module (shared library) is loaded and `C_Initialize`d once per process, and
 *   `C_Finalize`d when its last user closes ({@link acquireModule});
 * - a token is found, and logged in to once, per process and token: every key source of the same
 *   module and token shares one {@link Pkcs11Token} (reference counted, {@link acquireToken});
 * - signatures run on a pool of at most `sessions` read-only sessions; more requests wait in a
 *   queue (a PKCS#11 session runs one operation at a time; PKCS#11 v2.40 section 5.6);
 * - when the token goes away (its sessions and object handles become invalid:
 *   {@link isTokenGone}), the pool is dropped and the token found again, the module initialised
 *   again if it no longer lists the token (SoftHSM2 and several HSM modules list their slots at
 *   `C_Initialize` only);
 * - the last user's close logs out (`C_Logout`, unless another entry uses the same slot) and
 *   closes the sessions.
 *
 * Login, find and attribute calls are synchronous calls of the binding (short, and made only when
 * a pool is (re)opened); the signature itself is `C_SignAsync`, on libuv's thread pool, so
 * `CKF_OS_LOCKING_OK` is passed to `C_Initialize`. Source: PKCS#11 v2.40 base specification,
 * sections 5.4 (C_Initialize), 5.6 (sessions), 5.6 C_Login ("all sessions of the application
 * share the login"), 5.6 C_CloseSession ("when the last session is closed, the user is logged out").
 */
import { KeySourceError } from '../key-source';
import { ckrName, loadBinding, type Pkcs11Binding, type Pkcs11Library } from './binding';

/** Return codes after which the token is dropped and found again, and the signature tried once more. */
const GONE = new Set([
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_DEVICE_REMOVED',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED',
  'CKR_DEVICE_ERROR',
  'CKR_SLOT_ID_INVALID',
  'CKR_OBJECT_HANDLE_INVALID',
  'CKR_KEY_HANDLE_INVALID',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_CRYPTOKI_NOT_INITIALIZED',
  'CKR_GENERAL_ERROR',
]);

/** True when `err` says the token, its sessions or its login went away (worth reopening once). */
export function isTokenGone(err: unknown): boolean {
  const name = ckrName(err);
  return name !== undefined && GONE.has(name);
}

/** A loaded, initialised PKCS#11 module, shared by every token entry of the same path. */
export interface Pkcs11Module {
  /** The module's path as configured. */
  readonly path: string;
  /** The binding (constants). */
  readonly binding: Pkcs11Binding;
  /** The loaded library. */
  readonly lib: Pkcs11Library;
  /** Users (token entries). */
  refs: number;
  /** Incremented each time the module is initialised again: older sessions are void. */
  generation: number;
  /** When the module was last initialised again (epoch ms; 0: never). */
  reinitAt: number;
}

/** The shortest time between two re-initialisations of a module looking for a token that went away, ms. */
export const REINIT_INTERVAL_MS = 1000;

const modules = new Map<string, Pkcs11Module>();
const tokens = new Map<string, Pkcs11Token>();

/** `C_Initialize` with OS locking (the signature runs on worker threads); an already initialised module is fine. */
function initialize(m: { binding: Pkcs11Binding; lib: Pkcs11Library }): void {
  try {
    m.lib.C_Initialize({ flags: m.binding.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (ckrName(err) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw err;
  }
}

/**
 * The process's entry of a module, loaded and initialised on first use; one more reference.
 * @throws {KeySourceError} `bindingMissing`, or `moduleNotLoadable` (the message has the path and the loader's reason).
 */
export function acquireModule(path: string): Pkcs11Module {
  let m = modules.get(path);
  if (!m) {
    const binding = loadBinding();
    const lib = new binding.PKCS11();
    try {
      lib.load(path);
    } catch (err) {
      throw new KeySourceError('moduleNotLoadable', `pkcs11.module: the PKCS#11 module ${JSON.stringify(path)} could not be loaded (${(err as Error).message.split('\n')[0]})`);
    }
    try {
      initialize({ binding, lib });
    } catch (err) {
      lib.close();
      throw new KeySourceError('moduleNotLoadable', `pkcs11.module: the PKCS#11 module ${JSON.stringify(path)} could not be initialised (${ckrName(err) ?? (err as Error).message})`);
    }
    m = { path, binding, lib, refs: 0, generation: 0, reinitAt: 0 };
    modules.set(path, m);
  }
  m.refs++;
  return m;
}

/** One reference less; the last one finalises and unloads the module. */
export function releaseModule(m: Pkcs11Module): void {
  if (--m.refs > 0) return;
  modules.delete(m.path);
  try {
    m.lib.C_Finalize();
  } catch {
    // Already finalised: nothing to release.
  }
  try {
    m.lib.close();
  } catch {
    // The library stays mapped: harmless.
  }
}

/** How a token is chosen: by label (trailing blanks ignored) or by slot id. */
export type TokenSelector = { label: string } | { slot: bigint };

/** The text of a selector for messages and registry keys. */
export function selectorText(s: TokenSelector): string {
  return 'label' in s ? `token ${JSON.stringify(s.label)}` : `slot ${s.slot}`;
}

/** A slot id as the binding's 8-byte little-endian handle. */
function slotHandle(id: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(id);
  return b;
}

/** A session lent by {@link Pkcs11Token.withSession}, with the token generation it belongs to. */
export interface Lent {
  session: Buffer;
  generation: number;
}

/**
 * One token of one module, shared by the key sources that name it: its slot, the login and a
 * pool of sessions. Made by {@link acquireToken}.
 */
export class Pkcs11Token {
  readonly module: Pkcs11Module;
  readonly selector: TokenSelector;
  readonly #key: string;
  readonly #pin: string;
  readonly #max: number;
  refs = 0;
  /** Successful `C_Login` calls made by this entry (1 unless the token went away and came back). */
  logins = 0;
  /** Sessions opened by this entry so far (the pool holds at most `sessions` at a time). */
  sessionsOpened = 0;
  /** Incremented each time the pool is dropped: sessions of older generations are never reused. */
  generation = 0;
  #slot: Buffer | undefined;
  #moduleGeneration = -1;
  #loggedIn = false;
  #open = 0;
  #idle: Buffer[] = [];
  #waiters: Array<() => void> = [];
  #loginRefusal: KeySourceError | undefined;
  #closed = false;

  constructor(key: string, module: Pkcs11Module, selector: TokenSelector, pin: string, sessions: number) {
    this.#key = key;
    this.module = module;
    this.selector = selector;
    this.#pin = pin;
    this.#max = sessions;
  }

  /** True when `pin` is the PIN this entry logs in with. */
  hasPin(pin: string): boolean {
    return pin === this.#pin;
  }

  /** The token's slot, found on first use (and again after {@link invalidate}). @throws {KeySourceError} `tokenNotFound`. */
  slot(): Buffer {
    if (this.#slot && this.#moduleGeneration === this.module.generation) return this.#slot;
    let found = this.#find();
    if (!found && this.#moduleGeneration >= 0) {
      // The module lists slots at C_Initialize only: initialise it again to see a token that came back.
      this.#reinitialize();
      found = this.#find();
    }
    if (!found) throw new KeySourceError('tokenNotFound', `pkcs11.token: ${selectorText(this.selector)} not found in the PKCS#11 module ${JSON.stringify(this.module.path)} (is the token present and initialised?)`);
    this.#slot = found;
    this.#moduleGeneration = this.module.generation;
    return found;
  }

  /** The slot of the selector among the slots with a token, or undefined. */
  #find(): Buffer | undefined {
    const { lib } = this.module;
    let slots: Buffer[];
    try {
      slots = lib.C_GetSlotList(true);
    } catch {
      return undefined;
    }
    const s = this.selector;
    if ('slot' in s) return slots.find((h) => h.equals(slotHandle(s.slot)));
    return slots.find((h) => {
      try {
        return lib.C_GetTokenInfo(h).label.replace(/[\s\0]+$/, '') === s.label;
      } catch {
        return false; // a slot whose token went away
      }
    });
  }

  /**
   * C_Finalize + C_Initialize the module, at most once per {@link REINIT_INTERVAL_MS} per module
   * (a token that stays away must not reset the other tokens of the module at every request):
   * every entry's sessions of the module become void and are reopened on their next use.
   */
  #reinitialize(): void {
    const m = this.module;
    const now = Date.now();
    if (now - m.reinitAt < REINIT_INTERVAL_MS) return;
    m.reinitAt = now;
    try {
      m.lib.C_Finalize();
    } catch {
      // Not initialised: initialise below.
    }
    initialize(m);
    m.generation++;
  }

  /**
   * Lend a session (opening and logging in on first use; waiting when `sessions` are busy) to
   * `use`. A session whose use failed is closed, not reused; when the failure says the token
   * went away ({@link isTokenGone}), the whole pool is dropped ({@link invalidate}).
   * @throws {KeySourceError} `tokenNotFound`, `pinIncorrect`, `pinLocked`, `tokenFailed`, `closed`; what `use` throws.
   */
  async withSession<T>(use: (lent: Lent) => Promise<T> | T): Promise<T> {
    const lent = await this.#acquire();
    try {
      const result = await use(lent);
      this.#release(lent, true);
      return result;
    } catch (err) {
      this.#release(lent, false);
      if (isTokenGone(err)) this.invalidate(lent.generation);
      throw err;
    }
  }

  async #acquire(): Promise<Lent> {
    for (;;) {
      if (this.#closed) throw new KeySourceError('closed', 'pkcs11: the key source is closed');
      if (this.#moduleGeneration >= 0 && this.#moduleGeneration !== this.module.generation) this.invalidate(this.generation);
      const idle = this.#idle.pop();
      if (idle) return { session: idle, generation: this.generation };
      if (this.#open < this.#max) return this.#openSession();
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Open one more session on the token, logging in when no session of this entry is logged in. */
  #openSession(): Lent {
    if (this.#loginRefusal) throw this.#loginRefusal;
    const { lib, binding } = this.module;
    const slot = this.slot();
    let session: Buffer;
    try {
      session = lib.C_OpenSession(slot, binding.CKF_SERIAL_SESSION);
    } catch (err) {
      if (isTokenGone(err)) this.invalidate(this.generation);
      throw new KeySourceError('tokenFailed', `pkcs11.token: ${selectorText(this.selector)}: a session could not be opened (${ckrName(err) ?? (err as Error).message})`);
    }
    this.#open++;
    this.sessionsOpened++;
    if (!this.#loggedIn) {
      try {
        lib.C_Login(session, binding.CKU_USER, this.#pin);
        this.logins++;
      } catch (err) {
        const name = ckrName(err);
        if (name !== 'CKR_USER_ALREADY_LOGGED_IN') {
          this.#closeSession(session);
          throw this.#loginFailed(name ?? (err as Error).message);
        }
      }
      this.#loggedIn = true;
    }
    return { session, generation: this.generation };
  }

  /** The refusal of a failed login; a refused or locked PIN is kept and not tried again. */
  #loginFailed(name: string): KeySourceError {
    const where = `pkcs11.pin: ${selectorText(this.selector)}`;
    if (name === 'CKR_PIN_INCORRECT' || name === 'CKR_PIN_INVALID' || name === 'CKR_PIN_LEN_RANGE') {
      this.#loginRefusal = new KeySourceError('pinIncorrect', `${where} refused the PIN (${name}); it is not tried again until the configuration is redeployed`);
      return this.#loginRefusal;
    }
    if (name === 'CKR_PIN_LOCKED') {
      this.#loginRefusal = new KeySourceError('pinLocked', `${where}: the user PIN is locked (CKR_PIN_LOCKED); the token's security officer must unlock it`);
      return this.#loginRefusal;
    }
    return new KeySourceError('tokenFailed', `${where}: the login failed (${name})`);
  }

  #release(lent: Lent, healthy: boolean): void {
    if (healthy && lent.generation === this.generation && !this.#closed) this.#idle.push(lent.session);
    else if (lent.generation === this.generation) this.#closeSession(lent.session);
    this.#waiters.shift()?.();
  }

  #closeSession(session: Buffer): void {
    this.#open = Math.max(0, this.#open - 1);
    if (this.#open === 0) this.#loggedIn = false; // PKCS#11: the last session's close logs out
    try {
      this.module.lib.C_CloseSession(session);
    } catch {
      // Already void (token gone).
    }
  }

  /**
   * Drop the pool of `generation` (no-op when it was dropped already): its sessions are
   * forgotten (closed when possible), the login and the slot are found again on next use.
   */
  invalidate(generation: number): void {
    if (generation !== this.generation) return;
    this.generation++;
    for (const s of this.#idle.splice(0)) this.#closeSession(s);
    this.#open = 0;
    this.#loggedIn = false;
    this.#slot = undefined;
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** One reference less; the last one logs out (unless another entry shares the slot), closes the sessions and releases the module. */
  release(): void {
    if (--this.refs > 0) return;
    this.#closed = true;
    tokens.delete(this.#key);
    const shared = [...tokens.values()].some((t) => t.module === this.module && this.#slot && t.#slot?.equals(this.#slot));
    const idle = this.#idle.splice(0);
    if (this.#loggedIn && idle.length && !shared) {
      try {
        this.module.lib.C_Logout(idle[0]);
      } catch {
        // Logged out already.
      }
    }
    for (const s of idle) this.#closeSession(s);
    for (const wake of this.#waiters.splice(0)) wake();
    releaseModule(this.module);
  }
}

/**
 * The process's entry of a token (made on first use), with one more reference.
 * @param modulePath the PKCS#11 module's path.
 * @param selector token label or slot id.
 * @param pin the user PIN (kept in memory to log in again after the token came back).
 * @param sessions the pool size of a new entry.
 * @throws {KeySourceError} `bindingMissing`, `moduleNotLoadable`; `pinIncorrect` when the entry
 *   exists with another PIN (this process logged in to the token with a different PIN).
 */
export function acquireToken(modulePath: string, selector: TokenSelector, pin: string, sessions: number): Pkcs11Token {
  const key = `${modulePath}\n${'label' in selector ? 'label:' + selector.label : 'slot:' + selector.slot}`;
  let t = tokens.get(key);
  if (t && !t.hasPin(pin)) throw new KeySourceError('pinIncorrect', `pkcs11.pin: another configuration of this process uses ${selectorText(selector)} with a different PIN`);
  if (!t) {
    t = new Pkcs11Token(key, acquireModule(modulePath), selector, pin, sessions);
    tokens.set(key, t);
  }
  t.refs++;
  return t;
}

/** What the process holds of one module, for diagnostics and tests ({@link pkcs11Registry}). */
export interface Pkcs11ModuleState {
  path: string;
  /** Token entries using the module. */
  refs: number;
  /** Re-initialisations after a token went away. */
  generation: number;
  tokens: Array<{ token: string; refs: number; logins: number; sessionsOpened: number }>;
}

/** The modules and tokens this process holds now (empty once every key source is closed). No PIN. */
export function pkcs11Registry(): Pkcs11ModuleState[] {
  return [...modules.values()].map((m) => ({
    path: m.path,
    refs: m.refs,
    generation: m.generation,
    tokens: [...tokens.values()].filter((t) => t.module === m).map((t) => ({ token: selectorText(t.selector), refs: t.refs, logins: t.logins, sessionsOpened: t.sessionsOpened })),
  }));
}

