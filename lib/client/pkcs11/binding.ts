/**
 * The PKCS#11 binding, `pkcs11js` (an optionalDependency: the pack installs and runs without it).
 * Loaded on first use only, with a `require` inside try/catch, so the rest of the pack never
 * needs it. Source: https://github.com/PeculiarVentures/pkcs11js (its index.d.ts).
 */
import { KeySourceError } from '../key-source';

/** The binding's module: the PKCS11 class, the CK constants and its error classes. */
export type Pkcs11Binding = typeof import('pkcs11js');

/** A PKCS#11 library loaded through the binding. */
export type Pkcs11Library = import('pkcs11js').PKCS11;

/** The name of the npm package of the binding. */
export const BINDING_PACKAGE = 'pkcs11js';

let binding: Pkcs11Binding | undefined;

/**
 * The binding, required once.
 * @throws {KeySourceError} reason `bindingMissing` when `pkcs11js` is not installed or its native
 *   part was not built; the message says `npm install pkcs11js`.
 */
export function loadBinding(): Pkcs11Binding {
  if (binding) return binding;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    binding = require(BINDING_PACKAGE) as Pkcs11Binding;
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' ? 'is not installed' : 'could not be loaded (its native part may not be built for this Node.js)';
    throw new KeySourceError(
      'bindingMissing',
      `pkcs11: the PKCS#11 binding "${BINDING_PACKAGE}" ${why}; install it in the Node-RED user directory with \`npm install ${BINDING_PACKAGE}\` (it is an optional dependency of this pack) and restart Node-RED`,
    );
  }
  return binding;
}

/**
 * The `CKR_` name of a binding error (`Pkcs11Error` message, e.g. `CKR_PIN_INCORRECT`), or
 * undefined for another error.
 */
export function ckrName(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : '';
  return /^CKR_[A-Z0-9_]+/.exec(message)?.[0];
}
