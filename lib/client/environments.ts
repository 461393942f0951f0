/**
 * Base addresses of the Custody Partner API (spec section 9: the version is part of the
 * path, `/api/v1/p`). Production and sandbox come from the OpenAPI `servers` list
 * (`../shared/reference/partner-api-openapi.yaml`); play follows the same naming.
 */
import { ConfigError } from '../api/errors';

/** The environments a connection can target; `simulator` is resolved by the caller (the built-in simulator's own address). */
export type Environment = 'simulator' | 'sandbox' | 'play' | 'production' | 'custom';

/** v1 base URLs of the hosted environments (no trailing slash). */
export const BASE_URLS: Readonly<Record<'sandbox' | 'play' | 'production', string>> = Object.freeze({
  production: 'https://api.qredo.network/api/v1/p',
  sandbox: 'https://sandbox-api.qredo.network/api/v1/p',
  play: 'https://play-api.qredo.network/api/v1/p',
});

/** True for `localhost`, `127.0.0.0/8` and `::1`: the only hosts plain HTTP may reach. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Parse a URL from a setting. The text is never echoed in the error: a mistyped URL can carry
 * a password.
 * @param text the setting's value.
 * @param message the error message, naming the setting (e.g. `baseUrl: not a URL ...`).
 * @returns the parsed URL.
 * @throws {ConfigError} with `message` when `text` is not a URL.
 */
export function parseConfigUrl(text: string, message: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new ConfigError(message);
  }
}

/**
 * Check and normalise a base URL: `https:` to any host, `http:` only to a loopback host
 * (spec section 5.1: HTTPS with TLS 1.2 or later; loopback HTTP is the simulator's).
 * @returns the URL without a trailing slash, e.g. `https://api.example/api/v1/p`.
 * @throws {ConfigError} for an unparsable URL, another scheme, plain HTTP to a non-loopback
 *   host, or credentials/query/fragment in the URL.
 */
export function checkBaseUrl(baseUrl: string): string {
  const u = parseConfigUrl(baseUrl, 'baseUrl: not a URL (expected https://host/api/v1/p)');
  if (u.username || u.password) throw new ConfigError('baseUrl: must not carry credentials');
  if (u.search || u.hash) throw new ConfigError('baseUrl: must not have a query string or fragment');
  if (u.protocol === 'http:') {
    if (!isLoopbackHost(u.hostname)) {
      throw new ConfigError(`baseUrl: plain HTTP is allowed only to a loopback host (localhost, 127.0.0.1, ::1); use https:// for ${u.hostname}`);
    }
  } else if (u.protocol !== 'https:') {
    throw new ConfigError(`baseUrl: expected an https:// URL, got ${u.protocol}`);
  }
  return u.toString().replace(/\/+$/, '');
}

/**
 * Resolve a hosted environment (or `custom` with its URL) to a checked base URL.
 * @throws {ConfigError} for `simulator` (resolved elsewhere), an unknown environment, or a bad custom URL.
 */
export function resolveBaseUrl(environment: Environment, customUrl?: string): string {
  switch (environment) {
    case 'production':
    case 'sandbox':
    case 'play':
      return BASE_URLS[environment];
    case 'custom':
      if (!customUrl) throw new ConfigError('baseUrl: required when environment is custom');
      return checkBaseUrl(customUrl);
    default:
      throw new ConfigError(`environment: expected one of simulator, sandbox, play, production, custom, got ${JSON.stringify(environment)}`);
  }
}
