/**
 * The client of the v2 workspace calls (spec section 4 "v2 endpoints", section 5.8): every
 * request carries the authentication token in the `x-token` header, plus `accept` and
 * `Content-Type: application/json`. v2 requests are not RSA-signed: spec section 5.2 lists the
 * signature headers for v1 requests, and section 5.8 names `x-token` for v2.
 *
 * Same transport rules as the v1 {@link CustodyClient}: HTTPS (TLS 1.2 minimum) to any host,
 * plain HTTP only to loopback, a timeout on every request, retries only for requests marked
 * idempotent (reads), every non-2xx answer an {@link ApiError}. The token is never logged and
 * never put in an error text.
 */
import { ConfigError } from '../../api/errors';
import { isLoopbackHost } from '../environments';
import { checkV2BaseUrl } from './environments';
import { apiUrl, jsonBytes, Transport } from '../transport';
import type { ApiResponse, RequestOptions } from '../transport';
import type { HttpMethod } from '../../api/spec';

/**
 * Options of one {@link WorkspaceClient.request}: those of the v1 client, plus a timeout of its
 * own for a request the server answers slowly on purpose (create-wallet's `waitForAddress`).
 */
export interface WorkspaceRequestOptions extends RequestOptions {
  /** This request's timeout in milliseconds; default the client's `timeoutMs`. */
  timeoutMs?: number;
}

/** Options of a {@link WorkspaceClient}. */
export interface WorkspaceClientOptions {
  /** v2 base URL, e.g. `https://api.qredo.network/api/v2` (production, {@link V2_BASE_URLS}); checked like the v1 base URL. */
  baseUrl: string;
  /** The v2 authentication token, sent as `x-token` (spec section 5.8). A secret. */
  token: string;
  /** The default workspace id, used when an input has no `workspaceID`. */
  workspaceId?: string;
  /** Per-request timeout in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Attempts for an idempotent request (default 3; 1 disables retries). */
  attempts?: number;
  /** First retry delay in milliseconds (default 250), doubled per attempt with full jitter. */
  retryDelayMs?: number;
  /** Extra trusted CA certificates (PEM). */
  ca?: string | Buffer;
  /**
   * Whether the operations made up for the simulator (not in the spec; see
   * {@link SIMULATOR_ONLY_OPERATIONS}) may be sent. Default: true only when the base URL's host is
   * loopback (the built-in or a standalone simulator; the hosted service is never on loopback).
   */
  simulatorOperations?: boolean;
}

/**
 * A client of the v2 workspace calls for one token. Safe for concurrent use; share one per
 * configuration; {@link WorkspaceClient.close} releases its sockets.
 */
export class WorkspaceClient {
  /** The checked v2 base URL, without trailing slash. */
  readonly baseUrl: string;
  /** The default workspace id ('' when none was configured). */
  readonly workspaceId: string;
  /** The default per-request timeout in milliseconds. */
  readonly timeoutMs: number;
  /** Whether the simulator-only operations may be sent (see {@link WorkspaceClientOptions.simulatorOperations}). */
  readonly simulatorOperations: boolean;
  readonly #token: string;
  readonly #transport: Transport;

  /**
   * @throws {ConfigError} for a bad base URL (message names `v2BaseUrl`) or an empty token.
   */
  constructor(options: WorkspaceClientOptions) {
    this.baseUrl = checkV2BaseUrl(options.baseUrl);
    if (!options.token || typeof options.token !== 'string') throw new ConfigError('token: the v2 token (x-token) is required');
    this.#token = options.token;
    this.workspaceId = options.workspaceId ?? '';
    this.timeoutMs = options.timeoutMs ?? 30000;
    this.simulatorOperations = options.simulatorOperations ?? isLoopbackHost(new URL(this.baseUrl).hostname);
    this.#transport = new Transport(options);
  }

  /** The full URL of a v2 path (segments already URL-encoded). */
  url(path: string, query?: RequestOptions['query']): string {
    return apiUrl(this.baseUrl, path, query);
  }

  /**
   * Send one request with the `x-token` header.
   * @param path below the v2 base URL, starting with `/`, e.g. `/workspaces/W/policies`.
   * @param options query, body, `idempotent`, and `timeoutMs` (this request's timeout, ms;
   *   a positive whole number, default the client's).
   * @returns the status and parsed body of a 2xx answer (`{}` when empty).
   * @throws {ConfigError} for a `timeoutMs` that is not a positive whole number (rejects; nothing sent).
   * @throws {ApiError} for a non-2xx answer (section 7 body fields) or no answer (`statusCode` 0).
   *   Idempotent requests are retried first on timeouts, connection failures, 429, 502, 503, 504.
   */
  async request<T = unknown>(method: HttpMethod, path: string, options: WorkspaceRequestOptions = {}): Promise<ApiResponse<T>> {
    if (options.timeoutMs !== undefined && !(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0)) {
      throw new ConfigError(`timeoutMs: must be a positive whole number of milliseconds, got ${JSON.stringify(options.timeoutMs)}`);
    }
    const url = this.url(path, options.query);
    const body = jsonBytes(options.body);
    const headers = () => ({ accept: 'application/json', 'Content-Type': 'application/json', 'x-token': this.#token });
    return this.#transport.retrying(options.idempotent, () => this.#transport.exchange<T>(method, url, headers(), body, `${method} v2 ${path}`, options.timeoutMs));
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

  /** Never reveal the token when inspected or serialised. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, workspaceId: this.workspaceId };
  }
}
