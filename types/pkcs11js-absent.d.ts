/**
 * What the compiler sees of `pkcs11js` when that optional dependency is not installed
 * (`npm ci --omit=optional`): tsconfig.json's `paths` try the package's own typings first and
 * fall back to this file, so the pack builds either way. Only lib/client/pkcs11/ names the
 * binding's types, and at run time it loads the binding with a guarded `require`
 * (lib/client/pkcs11/binding.ts). Loose on purpose: with the package installed, its own
 * index.d.ts is used and checks every call.
 */
declare namespace pkcs11js {
  /** A loaded PKCS#11 library (pkcs11js `PKCS11`). */
  type PKCS11 = any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** An attribute template (pkcs11js `Template`). */
  type Template = Array<{ type: number; value?: unknown }>;
}
/** The binding's module (pkcs11js `index.d.ts`). */
declare const pkcs11js: any; // eslint-disable-line @typescript-eslint/no-explicit-any
export = pkcs11js;
