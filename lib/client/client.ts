/**
 * The signed HTTP client of the Custody Partner API (spec section 5).
 *
 * Every request carries `accept`, `Content-Type`, `X-API-KEY`, one of `x-timestamp` /
 * `x-nonce` (never both) and `x-sign`. The body is serialised once; those exact bytes are
 * signed and sent. HTTPS (TLS 1.2 minimum) to any host, plain HTTP only to loopback. Every
 * request has a timeout. Every non-2xx answer becomes an {@link ApiError}.
 */
import type { KeyObject } from 'node:crypto';
import { sign, loadPrivateKey } from './signing';
import { ConfigError } from '../api/errors';
import type { HttpMethod } from '../api/spec';
import { checkBaseUrl } from './environments';
import { nonceLane, NonceLane } from './nonce';
import { apiUrl, jsonBytes, Transport, type ApiResponse, type RequestOptions } from './transport';

/** How requests are signed (spec section 5.2): `x-timestamp` (epoch seconds) or `x-nonce`. */
export type SigningMode = 'timestamp' | 'nonce';

/** Options of a {@link CustodyClient}. */
export interface ClientOptions {
  /** v1 base URL, e.g. `https://api.example/api/v1/p`; checked by {@link checkBaseUrl}. */
  baseUrl: string;
  /** The partner API key (base64 text), sent as `X-API-KEY`. */
  apiKey: string;
  /** RSA private key, PEM (PKCS#1 or PKCS#8) or a KeyObject. Omit only with `unsigned: true`. */
  privateKey?: string | KeyObject;
  /** Send requests with the API key only, unsigned (accepted by the sandbox, spec section 5.5). Default false. */
  unsigned?: boolean;
  /** `timestamp` (default) or `nonce`. */
  signingMode?: SigningMode;
  /** Per-request timeout in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Attempts for a request marked idempotent (default 3; 1 disables retries). */
  attempts?: number;
  /** First retry delay in milliseconds (default 250), doubled per attempt with full jitter. */
  retryDelayMs?: number;
  /** Extra trusted CA certificates (PEM) for HTTPS and WSS, e.g. a simulator's self-signed certificate. */
  ca?: string | Buffer;
}

/**
 * How long a closing client (a redeploy, a stop) lets its requests on the wire finish, ms: 10 s,
 * within Node-RED's default node close timeout of 15 s (`nodeCloseTimeout`).
 */
export const CLOSE_GRACE_MS = 10_000;

/**
 * A signed client for one API key. Holds the parsed private key (never its PEM text) and
 * keep-alive agents; share one per configuration. Safe for concurrent use.
 */
export class CustodyClient {
  /** The checked v1 base URL, without trailing slash. */
  readonly baseUrl: string;
  /** The signing mode in use. */
  readonly signingMode: SigningMode;
  readonly #apiKey: string;
  readonly #key: KeyObject | undefined;
  readonly #transport: Transport;
  readonly #lane: NonceLane;
  /** Extra CA certificates, for the feed's TLS connections. */
  readonly ca: string | Buffer | undefined;

  /**
   * @throws {ConfigError} for a bad base URL (see {@link checkBaseUrl}), an empty API key, a
   *   missing private key without `unsigned`, or an unknown signing mode.
   * @throws {KeyFormatError} when the private key cannot be parsed (the message has no key text).
   */
  constructor(options: ClientOptions) {
    this.baseUrl = checkBaseUrl(options.baseUrl);
    if (!options.apiKey || typeof options.apiKey !== 'string') throw new ConfigError('apiKey: required');
    const mode = options.signingMode ?? 'timestamp';
    if (mode !== 'timestamp' && mode !== 'nonce') throw new ConfigError(`signingMode: expected timestamp or nonce, got ${JSON.stringify(mode)}`);
    if (!options.privateKey && !options.unsigned) throw new ConfigError('privateKey: required to sign requests');
    this.signingMode = mode;
    this.#apiKey = options.apiKey;
    this.#key = options.privateKey ? loadPrivateKey(options.privateKey) : undefined;
    this.#lane = nonceLane(options.apiKey);
    this.ca = options.ca;
    this.#transport = new Transport(options);
  }

  /**
   * The full URL of an API path, exactly as it will be sent and signed.
   * @param path starting with `/`, segments already URL-encoded, e.g. `/company/abc/transfer`.
   */
  url(path: string, query?: RequestOptions['query']): string {
    return apiUrl(this.baseUrl, path, query);
  }

  /**
   * Signed headers for a request to `url` with `body` bytes, using `prefix` (timestamp or nonce).
   * Header values hold the API key and signature: never log them.
   */
  #headers(url: string, body: Buffer | undefined, prefixHeader: 'x-timestamp' | 'x-nonce', prefix: string): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'Content-Type': 'application/json',
      'X-API-KEY': this.#apiKey,
    };
    if (this.#key) {
      headers[prefixHeader] = prefix;
      headers['x-sign'] = sign(this.#key, { prefix, url, body });
    }
    return headers;
  }

  /**
   * Headers for opening a websocket feed at `wsUrl` (spec section 5.6): `x-api-key`,
   * `x-timestamp` (epoch seconds) and `x-sign` over timestamp + URL.
   */
  feedHeaders(wsUrl: string): Record<string, string> {
    const prefix = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = { 'x-api-key': this.#apiKey };
    if (this.#key) {
      headers['x-timestamp'] = prefix;
      headers['x-sign'] = sign(this.#key, { prefix, url: wsUrl });
    }
    return headers;
  }

  /** The websocket URL of a feed path, e.g. `/coreclient/ID/feed` -> `wss://host/api/v1/p/coreclient/ID/feed`. */
  feedUrl(path: string): string {
    return this.url(path).replace(/^http/, 'ws');
  }

  /**
   * Send one signed request.
   * @param method HTTP method.
   * @param path API path below the base URL, starting with `/`, segments URL-encoded.
   * @returns the status and parsed body of a 2xx answer.
   * @throws {ApiError} for a non-2xx answer (`statusCode`, `code`, `msg`, `detail` from the
   *   section 7 body) or for no answer at all (`statusCode` 0, `code` the socket error code
   *   such as `ECONNREFUSED` or `ETIMEDOUT`). Idempotent requests are retried first.
   */
  async request<T = unknown>(method: HttpMethod, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = this.url(path, options.query);
    const body = jsonBytes(options.body);
    return this.#transport.retrying(options.idempotent, () => this.#send<T>(method, url, path, body));
  }

  /** One attempt: a fresh timestamp (or the next nonce of the key's lane) and signature, then the exchange. */
  async #send<T>(method: HttpMethod, url: string, path: string, body: Buffer | undefined): Promise<ApiResponse<T>> {
    const context = `${method} ${path}`;
    if (this.signingMode === 'nonce' && this.#key) {
      // Signed now (nonce order = call order); sent once the key's previous request has settled.
      return this.#lane.run(
        (nonce) => this.#headers(url, body, 'x-nonce', nonce),
        (headers) => this.#transport.exchange<T>(method, url, headers, body, context),
      );
    }
    const prefix = String(Math.floor(Date.now() / 1000));
    return this.#transport.exchange<T>(method, url, this.#headers(url, body, 'x-timestamp', prefix), body, context);
  }

  /** Aborted once {@link close} is called (a redeploy): waits between re-sends end with it. */
  get signal(): AbortSignal {
    return this.#transport.signal;
  }

  /**
   * Close (a redeploy): requests made from now on, and retries, reject with an ApiError of code
   * `ECLOSED` without being sent; requests on the wire may finish within `graceMs`, then are
   * cancelled (`ECLOSED`, failure `outcomeUnknown`); the keep-alive sockets are released. The
   * client must not be used afterwards.
   * @param graceMs how long requests on the wire may still take, ms (default 0).
   * @returns a promise that resolves once every request in flight has settled.
   */
  close(graceMs = 0): Promise<void> {
    return this.#transport.close(graceMs);
  }

  /** Never reveal the key or API key when inspected or serialised. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, signingMode: this.signingMode };
  }
}
