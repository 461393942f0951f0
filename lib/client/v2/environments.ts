/**
 * v2 base addresses (spec section 4 `{base_url_v2}`, which the spec leaves unnamed).
 *
 * Source: spec section 9 item 1 puts the version in the path, `/api/v1/p` for the v1 interface
 * and `/api/v2` for the workspace calls; the v1 hosts come from the OpenAPI `servers` list
 * (`https://api.qredo.network/api/v1/p`, `https://sandbox-api.qredo.network/api/v1/p`) and play
 * follows their naming (lib/client/environments.ts `BASE_URLS`). Each hosted environment's v2 address
 * is therefore its v1 host with the path `/api/v2`, e.g. production
 * `https://api.qredo.network/api/v2`. This is a derivation, not an address the spec prints:
 * when the service gives another one, set `v2BaseUrl` (checked like any base URL).
 */
import { ConfigError } from '../../api/errors';
import { checkBaseUrl, Environment } from '../environments';

/** v2 base URLs of the hosted environments (no trailing slash): the v1 host with `/api/v2` (spec section 9; see the file comment). */
export const V2_BASE_URLS: Readonly<Record<'sandbox' | 'play' | 'production', string>> = Object.freeze({
  production: 'https://api.qredo.network/api/v2',
  sandbox: 'https://sandbox-api.qredo.network/api/v2',
  play: 'https://play-api.qredo.network/api/v2',
});

/**
 * Check a v2 base URL as any base URL (`checkBaseUrl`, lib/client/environments.ts), with errors naming `v2BaseUrl`.
 * @returns the URL without trailing slash.
 * @throws {ConfigError} naming `v2BaseUrl` (not a URL, credentials, query, plain HTTP to a host that is not loopback, ...).
 */
export function checkV2BaseUrl(v2BaseUrl: string): string {
  try {
    return checkBaseUrl(v2BaseUrl);
  } catch (e) {
    throw new ConfigError(String((e as Error).message).replace(/^baseUrl/, 'v2BaseUrl'));
  }
}

/**
 * The v2 base URL of an environment: `v2BaseUrl` when given (checked like any base URL), else
 * the environment's default.
 * @throws {ConfigError} naming `v2BaseUrl` for a bad URL, or for `custom` without one;
 *   `simulator` is resolved by the caller (the built-in simulator's own address).
 */
export function resolveV2BaseUrl(environment: Environment, v2BaseUrl?: string): string {
  if (v2BaseUrl && v2BaseUrl.trim()) return checkV2BaseUrl(v2BaseUrl.trim());
  switch (environment) {
    case 'production':
    case 'sandbox':
    case 'play':
      return V2_BASE_URLS[environment];
    case 'custom':
      throw new ConfigError('v2BaseUrl: required when environment is custom (e.g. https://host/api/v2)');
    default:
      throw new ConfigError(`environment: expected one of sandbox, play, production, custom, got ${JSON.stringify(environment)}`);
  }
}
