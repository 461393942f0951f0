/**
 * The HTTP transport both API clients share (internal: not exported from lib/index.ts): the
 * v1 `CustodyClient` (client.ts) adds its RSA signature headers (spec section 5.2), the v2
 * `WorkspaceClient` (v2/client.ts) its `x-token` (spec section 5.8); everything below the headers is
 * here, once.
 *
 * - Keep-alive agents; HTTPS with TLS 1.2 minimum (and extra trusted CAs when given). Plain
 *   HTTP only reaches loopback because both clients check their base URL with
 *   `checkBaseUrl` (environments.ts) first.
 * - A timeout on every request, no redirects, bodies sent as the exact bytes given.
 * - Every non-2xx answer becomes an {@link ApiError} with the section 7 body fields; no answer
 *   at all becomes an ApiError with `statusCode` 0.
 * - Retries only for requests marked idempotent: timeouts, connection failures, 429, 502, 503,
 *   504, with exponential backoff and full jitter.
 * - {@link Transport.close} ends everything in flight: no new request or retry starts, the
 *   wait before a retry ends, requests on the wire get a grace to finish (a redeploy does not
 *   cut an approve call in half), then every request still on the wire is cancelled through an
 *   AbortController of its own (no listener on a shared signal per request, so any number in
 *   flight prints no MaxListenersExceededWarning) and rejects with an ApiError of code `ECLOSED`
 *   (so a redeployed Node-RED flow is not answered by requests of the flow it replaced).
 *
 * Hot path (docs/performance.md): axios's defaults are merged with ours once per
 * transport (an axios instance's `defaults`: agents, timeout, no redirects, no body or answer
 * transforms, every status resolved), and each request goes straight to axios's Node http
 * adapter (`axios.getAdapter('http')`, typed public API) with a config that inherits those and
 * owns only method, URL, headers, body, its signal and timeout: no per-request config merge,
 * interceptor chain or transform pass. The body is serialised once by the caller and sent as
 * those bytes. Proxies: axios looks up `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` (and lower-case
 * forms) on every request; that lookup is only kept when one of those variables was set when the
 * transport was created, otherwise the instance has `proxy: false` (see {@link proxyFromEnv}).
 */
import { abortableSleep, backoffDelay, type BackoffPolicy } from '../support/backoff';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AxiosAdapter, AxiosResponse, AxiosStatic, InternalAxiosRequestConfig } from 'axios';
import { ApiError, ApiErrorBody } from '../api/errors';
import type { HttpMethod } from '../api/spec';

/** Per-request options of `CustodyClient.request` (lib/client/client.ts). */
export interface RequestOptions {
  /** Query parameters; `undefined` values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body; serialised once with `JSON.stringify`, signed and sent as those bytes. */
  body?: unknown;
  /**
   * True when repeating the request cannot repeat its effect (reads, and POSTs carrying a
   * fixed `partner_txID`): then timeouts, connection failures, 429 and 502/503/504 are retried
   * with the same body bytes and a fresh signature.
   */
  idempotent?: boolean;
  /**
   * Epoch ms after which the request is not sent: checked once its signature is ready (signing may
   * queue), right before the bytes go out, at every attempt. Past it, the call rejects with an
   * {@link ApiError} of code `EDEADLINE`, failure `notSent`. For a decision that holds a claim with a
   * lease (docs/scale-out.md): a call must not leave after another instance may have taken over.
   */
  notAfter?: number;
}

/** A 2xx answer: `statusCode` is the HTTP status, `data` the parsed JSON body (`{}` when empty). */
export interface ApiResponse<T = unknown> {
  statusCode: number;
  data: T;
}

/** Options of a {@link Transport}: the transport part of both clients' options. */
export interface TransportOptions {
  /** Per-request timeout in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Attempts for a request marked idempotent (default 3; 1 disables retries). */
  attempts?: number;
  /** First retry delay in milliseconds (default 250), doubled per attempt with full jitter. */
  retryDelayMs?: number;
  /** Extra trusted CA certificates (PEM) for HTTPS. */
  ca?: string | Buffer;
}

/** HTTP statuses an idempotent request is retried on (besides no answer at all). */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
/** The lowest TLS version accepted. */
const TLS_MIN = 'TLSv1.2';
/** The error code of a request ended because its client was closed. */
export const CLOSED_CODE = 'ECLOSED';

/**
 * The error of a request ended (or refused) because its client was closed; `context` names the
 * call, never a secret.
 * @param sent true when the request may already have left (its failure is then `outcomeUnknown`), false when no byte was sent (`notSent`).
 */
function closedError(context: string, sent: boolean): ApiError {
  const msg = sent
    ? 'the client was closed (for example by a redeploy) while the request was in flight: its outcome is unknown'
    : 'the client was closed (for example by a redeploy) before the request was sent: nothing was sent';
  return new ApiError(0, { code: CLOSED_CODE, msg, detail: { reason: CLOSED_CODE } }, context, sent ? 'outcomeUnknown' : 'notSent');
}

/**
 * The full URL of `path` below `baseUrl`, with the query parameters that are not `undefined`.
 * @param baseUrl a checked base URL without trailing slash.
 * @param path starting with `/`, segments already URL-encoded.
 */
export function apiUrl(baseUrl: string, path: string, query?: RequestOptions['query']): string {
  const u = new URL(baseUrl + path);
  if (query) {
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.append(k, String(v));
  }
  return u.toString();
}

/** A JSON body serialised once (`JSON.stringify`, UTF-8): the bytes that are signed and sent; `undefined` for none. */
export function jsonBytes(body: unknown): Buffer | undefined {
  return body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * Whether requests go through the proxy named by the environment, decided once per transport.
 * axios reads `http_proxy`, `https_proxy`, `all_proxy` (any case) and honours `no_proxy` on
 * every request (proxy-from-env); that lookup costs on every request, so it is kept only when
 * one of those variables is set when the transport is created (then axios's own rules apply
 * unchanged, per request: a later change of `NO_PROXY` or of the proxy variables is followed),
 * and turned off (`proxy: false`) otherwise: a proxy variable set after such a client was
 * created is not seen by it. Node's own `NODE_USE_ENV_PROXY` is not involved: these
 * agents are created without `proxyEnv`.
 * @param env the environment to read (default `process.env`).
 * @returns `undefined` (let axios read the environment) or `false` (no proxy).
 */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): false | undefined {
  for (const name of ['http_proxy', 'https_proxy', 'all_proxy']) {
    if (env[name] || env[name.toUpperCase()]) return undefined;
  }
  return false;
}

/** One client's keep-alive agents, axios instance and retry policy. Safe for concurrent use. */
export class Transport {
  /** axios's Node http adapter (`axios.getAdapter('http')`): the part of axios that does HTTP. */
  readonly #adapter: AxiosAdapter;
  /**
   * The request config every request shares: axios's defaults merged once with ours (an axios
   * instance's `defaults`). A request's config inherits it (`Object.create`) and owns only what
   * differs; axios's adapter reads inherited members of such a template (see axios `getSafeProp`).
   */
  readonly #base: InternalAxiosRequestConfig;
  readonly #attempts: number;
  readonly #retryDelayMs: number;
  readonly #httpAgent: http.Agent;
  readonly #httpsAgent: https.Agent;
  /** Aborted when {@link close} starts: no new request, no retry; waits before a retry and callers' own waits end. Requests on the wire do not listen to it (see {@link #cancels}). */
  readonly #abort = new AbortController();
  /** Aborted when {@link close}'s grace is over: the requests still on the wire were cancelled. */
  readonly #cut = new AbortController();
  /** How to cancel each request on the wire; {@link close} calls them all. */
  readonly #cancels = new Set<() => void>();
  /** Calls of {@link retrying} not settled yet; {@link close} waits for them. */
  readonly #inFlight = new Set<Promise<unknown>>();

  /** @param options timeout, retry attempts and first delay, extra CAs; the defaults as documented in {@link TransportOptions}. */
  constructor(options: TransportOptions) {
    // Requests never listen to this signal (each has its own canceller in #cancels); waits
    // before a retry and callers' waits between re-sends (lib/client/submission/submit.ts) do, and more
    // than 10 of those at once is normal use, not a leak.
    setMaxListeners(Infinity, this.#abort.signal);
    this.#attempts = Math.max(1, options.attempts ?? 3);
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#httpAgent = new http.Agent({ keepAlive: true });
    this.#httpsAgent = new https.Agent({ keepAlive: true, minVersion: TLS_MIN, ...(options.ca ? { ca: options.ca } : {}) });
    // axios is required by the first client, not at load: a Node-RED whose flows send nothing does not load it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const axios = require('axios') as AxiosStatic;
    const instance = axios.create({
      timeout: options.timeoutMs ?? 30000,
      httpAgent: this.#httpAgent,
      httpsAgent: this.#httpsAgent,
      proxy: proxyFromEnv(),
      maxRedirects: 0,
      responseType: 'text',
      responseEncoding: 'utf8',
      // The body is a Buffer serialised by the caller: sent as is. The answer is parsed here.
      transformRequest: [],
      transformResponse: [],
      // Every status resolves (settle() skips the check when this is null); exchange() sorts them.
      validateStatus: null,
    });
    // axios.request() would merge these defaults into every request's config, build its headers
    // twice and run the (empty) interceptor and transform chains on every request, for nothing
    // this transport uses (measured: 40-55 µs of client CPU per request on the 2-core bench
    // machine). The merge is done here once; exchange() hands each request straight to
    // the adapter.
    const { headers: _defaultHeaders, ...defaults } = instance.defaults;
    void _defaultHeaders;
    this.#base = { ...defaults, headers: {} } as unknown as InternalAxiosRequestConfig;
    this.#adapter = axios.getAdapter('http');
  }

  /**
   * Run `once` (one complete attempt: fresh headers, then {@link exchange}); when `idempotent`,
   * retry it on timeouts, connection failures, 429, 502, 503 and 504. The wait before retry `n`
   * (1, 2, ...) is a random time up to `retryDelayMs * 2^(n-1)` ms, at most 10 s (full jitter);
   * {@link close} ends the wait and the retries.
   * @throws {ApiError} the last attempt's error; code `ECLOSED` once the transport is closed.
   *   When an earlier attempt's outcome is unknown, the error's `failure` is `outcomeUnknown`
   *   whatever the last attempt's was: a later refusal or unsent attempt does not undo an
   *   attempt that may have had its effect.
   */
  retrying<T>(idempotent: boolean | undefined, once: () => Promise<ApiResponse<T>>): Promise<ApiResponse<T>> {
    const signal = this.#abort.signal;
    let unknownBefore = false;
    const attempt = () =>
      once().catch((e: unknown) => {
        const seen = unknownBefore;
        if (e instanceof ApiError && e.outcomeUnknown) unknownBefore = true;
        throw seen && e instanceof ApiError ? e.withFailure('outcomeUnknown') : e;
      });
    const retryable0 = (e: unknown) => e instanceof ApiError && (e.statusCode === 0 || RETRYABLE_STATUS.has(e.statusCode));
    const retryable = (e: unknown) => !signal.aborted && retryable0(e);
    const tries = idempotent ? this.#attempts : 1;
    const policy: BackoffPolicy = { firstMs: this.#retryDelayMs, factor: 2, maxMs: 10000, jitter: 'full' };
    const run = (async () => {
      for (let n = 1; ; n++) {
        try {
          return await attempt();
        } catch (e) {
          if (n >= tries || !retryable(e)) throw e;
          // The wait before retry n, ended by close().
          await abortableSleep(backoffDelay(policy, n - 1), signal);
          if (signal.aborted) throw e;
        }
      }
    })();
    // An attempt that ends after close() (or a retry given up because of it) rejects as closed.
    const settled = run.catch((err: unknown) => {
      // An answer that came during close()'s grace stands as it is; only a retry given up because of close() is "closed".
      if (!signal.aborted || (err instanceof ApiError && err.code === CLOSED_CODE) || !(idempotent && retryable0(err))) throw err;
      // A retry given up because of close(): unknown when any attempt may have had its effect.
      const sent = unknownBefore || (err instanceof ApiError && err.failure !== 'notSent' && err.failure !== 'refused');
      throw closedError(err instanceof ApiError ? contextOf(err) : '', sent);
    });
    this.#inFlight.add(settled);
    const forget = () => this.#inFlight.delete(settled);
    settled.then(forget, forget);
    return settled;
  }

  /**
   * Send one request and read its answer.
   * @param context the start of an error's message, e.g. `POST /company/C/transfer` (never a secret).
   * @param timeoutMs this request's timeout in milliseconds; default the transport's `timeoutMs`.
   * @returns the status and parsed body of a 2xx answer (`{}` when empty).
   * @throws {ApiError} for a non-2xx answer (section 7 body fields) or for no answer at all
   *   (`statusCode` 0, `code` the socket error code such as `ECONNREFUSED`, or `ETIMEDOUT`), with
   *   its `failure` kind: `refused` (4xx), `notSent` (connect-phase codes; `ECLOSED` before the
   *   request started) or `outcomeUnknown` (5xx, timeouts, resets, `ECLOSED` in flight).
   */
  async exchange<T>(method: HttpMethod, url: string, headers: Record<string, string>, body: Buffer | undefined, context: string, timeoutMs?: number): Promise<ApiResponse<T>> {
    if (this.#abort.signal.aborted) throw closedError(context, false);
    // This request's own controller: close() aborts it through #cancels; nothing is left
    // listening once the request settles.
    const ac = new AbortController();
    const cancel = () => ac.abort();
    this.#cancels.add(cancel);
    const config = Object.create(this.#base) as InternalAxiosRequestConfig;
    config.method = method;
    config.url = url;
    config.headers = headers as InternalAxiosRequestConfig['headers'];
    config.data = body;
    config.signal = ac.signal;
    if (timeoutMs !== undefined) config.timeout = timeoutMs;
    let res: AxiosResponse<string>;
    try {
      res = await this.#adapter(config);
    } catch (err) {
      if (this.#cut.signal.aborted) throw closedError(context, true);
      const e = err as { code?: string; message?: string };
      const code = e.code === 'ECONNABORTED' ? 'ETIMEDOUT' : e.code ?? 'ENETWORK';
      throw new ApiError(0, { code, msg: e.code === 'ECONNABORTED' ? 'request timed out' : (e.message ?? 'network error'), detail: { reason: code } }, context);
    } finally {
      this.#cancels.delete(cancel);
    }
    const parsed = parseBody(res.data);
    if (res.status >= 200 && res.status < 300) return { statusCode: res.status, data: (parsed ?? {}) as T };
    throw new ApiError(res.status, toErrorBody(res.status, res.statusText, parsed), context);
  }

  /** Aborted once {@link close} is called: lets a caller's own waits (re-sends) end with the client. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * Close: requests made from now on reject with an ApiError of code `ECLOSED` without being
   * sent, and no retry starts (a call waiting to be retried rejects the same way). Requests
   * already on the wire may finish within `graceMs` (their answers count: a redeploy does not
   * cut an approve call in half); those still on the wire then are cancelled and reject with
   * `ECLOSED`, failure `outcomeUnknown`. Then the keep-alive sockets are released.
   * @param graceMs how long requests on the wire may still take, ms (default 0: cancelled at once).
   * @returns a promise that resolves once every call in flight has settled.
   */
  async close(graceMs = 0): Promise<void> {
    this.#abort.abort();
    if (graceMs > 0 && this.#cancels.size > 0) {
      const all = Promise.allSettled([...this.#inFlight]);
      const timer = new AbortController();
      await Promise.race([all, abortableSleep(graceMs, timer.signal)]);
      timer.abort();
    }
    this.#cut.abort();
    for (const cancel of [...this.#cancels]) cancel();
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
    await Promise.allSettled([...this.#inFlight]);
  }
}

/** The call an ApiError names (the text before `: ` of its message), e.g. `GET /assets`. */
function contextOf(err: ApiError): string {
  const i = err.message.indexOf(': ');
  return i === -1 ? '' : err.message.slice(0, i);
}

/** A body as JSON when it parses, else as text; `undefined` when empty. */
function parseBody(text: unknown): unknown {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Shape any error answer as a section 7 body, keeping the server's fields when present. */
function toErrorBody(status: number, statusText: string, parsed: unknown): ApiErrorBody {
  if (parsed && typeof parsed === 'object' && 'msg' in parsed) {
    const p = parsed as Partial<ApiErrorBody>;
    return { code: p.code ?? status, msg: String(p.msg), detail: p.detail && typeof p.detail === 'object' ? p.detail : {} };
  }
  const text = typeof parsed === 'string' ? parsed.slice(0, 200) : '';
  return { code: status, msg: statusText || `HTTP ${status}`, detail: text ? { reason: text } : {} };
}
