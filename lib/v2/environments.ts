/**
 * v2 base addresses (spec section 4 `{base_url_v2}`; section 9: the version is part of the
 * path, `/api/v2` for the workspace calls). The hosted environments keep the host of their v1
 * address and change the path to `/api/v2`. The service's developer guides also show a
 * separate host (`https://api-v2.qredo.network/api/v2`): set `v2BaseUrl` to use another address.
 */
import { ConfigError } from '../errors';
import { checkBaseUrl, Environment } from '../environments';

/** v2 base URLs of the hosted environments (no trailing slash). */
export const V2_BASE_URLS: Readonly<Record<'sandbox' | 'play' | 'production', string>> = Object.freeze({
  production: 'https://api.qredo.network/api/v2',
  sandbox: 'https://sandbox-api.qredo.network/api/v2',
  play: 'https://play-api.qredo.network/api/v2',
});

/**
 * The v2 base URL of an environment: `v2BaseUrl` when given (checked like any base URL), else
 * the environment's default.
 * @throws {ConfigError} naming `v2BaseUrl` for a bad URL, or for `custom` without one;
 *   `simulator` is resolved by the caller (the built-in simulator's own address).
 */
export function resolveV2BaseUrl(environment: Environment, v2BaseUrl?: string): string {
  if (v2BaseUrl && v2BaseUrl.trim()) {
    try {
      return checkBaseUrl(v2BaseUrl.trim());
    } catch (e) {
      throw new ConfigError(String((e as Error).message).replace(/^baseUrl/, 'v2BaseUrl'));
    }
  }
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
