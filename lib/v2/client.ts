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
import http from 'node:http';
import https from 'node:https';
import axios, { AxiosInstance } from 'axios';
import { backOff } from 'exponential-backoff';
import { ApiError, ApiErrorBody, ConfigError } from '../errors';
import { checkBaseUrl } from '../environments';
import type { ApiResponse, HttpMethod, RequestOptions } from '../client';

/** Options of a {@link WorkspaceClient}. */
export interface WorkspaceClientOptions {
  /** v2 base URL, e.g. `https://api-v2.qredo.network/api/v2`; checked like the v1 base URL. */
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
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/**
 * A client of the v2 workspace calls for one token. Safe for concurrent use; share one per
 * configuration; {@link WorkspaceClient.close} releases its sockets.
 */
export class WorkspaceClient {
  /** The checked v2 base URL, without trailing slash. */
  readonly baseUrl: string;
  /** The default workspace id ('' when none was configured). */
  readonly workspaceId: string;
  readonly #token: string;
  readonly #http: AxiosInstance;
  readonly #attempts: number;
  readonly #retryDelayMs: number;
  readonly #httpAgent: http.Agent;
  readonly #httpsAgent: https.Agent;

  /**
   * @throws {ConfigError} for a bad base URL (message names `v2BaseUrl`) or an empty token.
   */
  constructor(options: WorkspaceClientOptions) {
    try {
      this.baseUrl = checkBaseUrl(options.baseUrl);
    } catch (e) {
      throw new ConfigError(String((e as Error).message).replace(/^baseUrl/, 'v2BaseUrl'));
    }
    if (!options.token || typeof options.token !== 'string') throw new ConfigError('token: the v2 token (x-token) is required');
    this.#token = options.token;
    this.workspaceId = options.workspaceId ?? '';
    this.#attempts = Math.max(1, options.attempts ?? 3);
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#httpAgent = new http.Agent({ keepAlive: true });
    this.#httpsAgent = new https.Agent({ keepAlive: true, minVersion: 'TLSv1.2', ...(options.ca ? { ca: options.ca } : {}) });
    this.#http = axios.create({
      timeout: options.timeoutMs ?? 30000,
      httpAgent: this.#httpAgent,
      httpsAgent: this.#httpsAgent,
      maxRedirects: 0,
      responseType: 'text',
      transformRequest: [(data) => data],
      transformResponse: [(data) => data],
      validateStatus: () => true,
    });
  }

  /** The full URL of a v2 path (segments already URL-encoded). */
  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(this.baseUrl + path);
    if (query) for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.append(k, String(v));
    return u.toString();
  }

  /**
   * Send one request with the `x-token` header.
   * @param path below the v2 base URL, starting with `/`, e.g. `/workspaces/W/policies`.
   * @returns the status and parsed body of a 2xx answer (`{}` when empty).
   * @throws {ApiError} for a non-2xx answer (section 7 body fields) or no answer (`statusCode` 0).
   *   Idempotent requests are retried first on timeouts, connection failures, 429, 502, 503, 504.
   */
  async request<T = unknown>(method: HttpMethod, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = this.url(path, options.query);
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), 'utf8');
    const once = () => this.#exchange<T>(method, url, path, body);
    if (!options.idempotent || this.#attempts === 1) return once();
    return backOff(once, {
      numOfAttempts: this.#attempts,
      startingDelay: this.#retryDelayMs,
      timeMultiple: 2,
      maxDelay: 10000,
      jitter: 'full',
      retry: (e: unknown) => e instanceof ApiError && (e.statusCode === 0 || RETRYABLE_STATUS.has(e.statusCode)),
    });
  }

  async #exchange<T>(method: HttpMethod, url: string, path: string, body: Buffer | undefined): Promise<ApiResponse<T>> {
    const context = `${method} v2 ${path}`;
    const headers = { accept: 'application/json', 'Content-Type': 'application/json', 'x-token': this.#token };
    let res;
    try {
      res = await this.#http.request<string>({ method, url, headers, data: body });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      const code = e.code === 'ECONNABORTED' ? 'ETIMEDOUT' : e.code ?? 'ENETWORK';
      throw new ApiError(0, { code, msg: e.code === 'ECONNABORTED' ? 'request timed out' : (e.message ?? 'network error'), detail: { reason: code } }, context);
    }
    const parsed = parseBody(res.data);
    if (res.status >= 200 && res.status < 300) return { statusCode: res.status, data: (parsed ?? {}) as T };
    throw new ApiError(res.status, toErrorBody(res.status, res.statusText, parsed), context);
  }

  /** Release the keep-alive sockets. The client must not be used afterwards. */
  close(): void {
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }

  /** Never reveal the token when inspected or serialised. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, workspaceId: this.workspaceId };
  }
}

function parseBody(text: unknown): unknown {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toErrorBody(status: number, statusText: string, parsed: unknown): ApiErrorBody {
  if (parsed && typeof parsed === 'object' && 'msg' in parsed) {
    const p = parsed as Partial<ApiErrorBody>;
    return { code: p.code ?? status, msg: String(p.msg), detail: p.detail && typeof p.detail === 'object' ? p.detail : {} };
  }
  const text = typeof parsed === 'string' ? parsed.slice(0, 200) : '';
  return { code: status, msg: statusText || `HTTP ${status}`, detail: text ? { reason: text } : {} };
}
