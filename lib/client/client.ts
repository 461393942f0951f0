/**
 * The signed HTTP client of the Custody Partner API (spec section 5).
 *
 * Every request carries `accept`, `Content-Type`, `X-API-KEY`, one of `x-timestamp` /
 * `x-nonce` (never both) and `x-sign`. The body is serialised once; those exact bytes are
 * signed and sent. HTTPS (TLS 1.2 minimum) to any host, plain HTTP only to loopback. Every
 * request has a timeout. Every non-2xx answer becomes an {@link ApiError}.
 */
import type { KeyObject } from 'node:crypto';
import { ApiError, ConfigError } from '../api/errors';
import { PemKeySource, signWith, type KeySource } from './key-source';
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
  /**
   * RSA private key, PEM (PKCS#1 or PKCS#8) or a KeyObject: signed through a {@link PemKeySource}
   * (on libuv's thread pool). Give this or `keySource`; omit both only with `unsigned: true`.
   */
  privateKey?: string | KeyObject;
  /**
   * Where the key lives and how it signs, instead of `privateKey`: a {@link KeySource}, e.g. a
   * lib/client/pkcs11/source.ts `Pkcs11KeySource` (the key stays on a PKCS#11 token). The client
   * owns it: {@link CustodyClient.close} closes it.
   */
  keySource?: KeySource;
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
 * A signed client for one API key. Holds a key source (a parsed private key, never its PEM text,
 * or a key on a token) and keep-alive agents; share one per configuration. Safe for concurrent
 * use: signatures are made asynchronously, several at once, off the main thread.
 */
export class CustodyClient {
  /** The checked v1 base URL, without trailing slash. */
  readonly baseUrl: string;
  /** The signing mode in use. */
  readonly signingMode: SigningMode;
  readonly #apiKey: string;
  /** The key source signing the requests; undefined for an `unsigned` client. */
  readonly keySource: KeySource | undefined;
  readonly #transport: Transport;
  readonly #lane: NonceLane;
  /** Extra CA certificates, for the feed's TLS connections. */
  readonly ca: string | Buffer | undefined;

  /**
   * @throws {ConfigError} for a bad base URL (see {@link checkBaseUrl}), an empty API key, a
   *   missing private key (and key source) without `unsigned`, both a private key and a key
   *   source, or an unknown signing mode.
   * @throws {KeyFormatError} when the private key cannot be parsed (the message has no key text).
   */
  constructor(options: ClientOptions) {
    this.baseUrl = checkBaseUrl(options.baseUrl);
    if (!options.apiKey || typeof options.apiKey !== 'string') throw new ConfigError('apiKey: required');
    const mode = options.signingMode ?? 'timestamp';
    if (mode !== 'timestamp' && mode !== 'nonce') throw new ConfigError(`signingMode: expected timestamp or nonce, got ${JSON.stringify(mode)}`);
    if (!options.privateKey && !options.keySource && !options.unsigned) throw new ConfigError('privateKey: required to sign requests');
    if (options.privateKey && options.keySource) throw new ConfigError('keySource: give a private key or a key source, not both');
    this.signingMode = mode;
    this.#apiKey = options.apiKey;
    this.keySource = options.keySource ?? (options.privateKey ? new PemKeySource(options.privateKey) : undefined);
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
   * @throws {KeySourceError} when the key source refuses (nothing is sent).
   */
  async #headers(url: string, body: Buffer | undefined, prefixHeader: 'x-timestamp' | 'x-nonce', prefix: string): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'Content-Type': 'application/json',
      'X-API-KEY': this.#apiKey,
    };
    if (this.keySource) {
      headers[prefixHeader] = prefix;
      headers['x-sign'] = await signWith(this.keySource, { prefix, url, body });
    }
    return headers;
  }

  /**
   * Headers for opening a websocket feed at `wsUrl` (spec section 5.6): `x-api-key`,
   * `x-timestamp` (epoch seconds, taken at the call) and `x-sign` over timestamp + URL, signed
   * through the key source.
   * @throws {KeySourceError} when the key source refuses.
   */
  async feedHeaders(wsUrl: string): Promise<Record<string, string>> {
    const prefix = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = { 'x-api-key': this.#apiKey };
    if (this.keySource) {
      headers['x-timestamp'] = prefix;
      headers['x-sign'] = await signWith(this.keySource, { prefix, url: wsUrl });
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
    return this.#transport.retrying(options.idempotent, () => this.#send<T>(method, url, path, body, options.notAfter));
  }

  /** @throws {ApiError} code `EDEADLINE`, failure `notSent`, when `notAfter` (epoch ms) has passed. */
  #checkDeadline(context: string, notAfter: number | undefined): void {
    if (notAfter !== undefined && Date.now() > notAfter) {
      throw new ApiError(0, { code: 'EDEADLINE', msg: `not sent: its deadline passed ${Date.now() - notAfter} ms before the signature was ready` }, context, 'notSent');
    }
  }

  /**
   * One attempt: a fresh timestamp (or the next nonce of the key's lane, taken now) and its
   * signature (asynchronous), then the exchange.
   */
  async #send<T>(method: HttpMethod, url: string, path: string, body: Buffer | undefined, notAfter?: number): Promise<ApiResponse<T>> {
    const context = `${method} ${path}`;
    if (this.signingMode === 'nonce' && this.keySource) {
      // Nonce taken and signing started now (nonce order = call order); sent once the key's
      // previous request has settled and the signature is ready.
      return this.#lane.run(
        (nonce) => this.#headers(url, body, 'x-nonce', nonce),
        (headers) => {
          this.#checkDeadline(context, notAfter);
          return this.#transport.exchange<T>(method, url, headers, body, context);
        },
      );
    }
    const prefix = String(Math.floor(Date.now() / 1000));
    const headers = await this.#headers(url, body, 'x-timestamp', prefix);
    this.#checkDeadline(context, notAfter);
    return this.#transport.exchange<T>(method, url, headers, body, context);
  }

  /** Aborted once {@link close} is called (a redeploy): waits between re-sends end with it. */
  get signal(): AbortSignal {
    return this.#transport.signal;
  }

  /**
   * Close (a redeploy): requests made from now on, and retries, reject with an ApiError of code
   * `ECLOSED` without being sent; requests on the wire may finish within `graceMs`, then are
   * cancelled (`ECLOSED`, failure `outcomeUnknown`); the keep-alive sockets are released; then
   * the key source is closed (for a token: this client's reference to its shared sessions). The
   * client must not be used afterwards.
   * @param graceMs how long requests on the wire may still take, ms (default 0).
   * @returns a promise that resolves once every request in flight has settled and the key source is closed.
   */
  async close(graceMs = 0): Promise<void> {
    try {
      await this.#transport.close(graceMs);
    } finally {
      await this.keySource?.close();
    }
  }

  /** Never reveal the key or API key when inspected or serialised. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, signingMode: this.signingMode };
  }
}
