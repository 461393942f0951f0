/**
 * The websocket feeds of spec section 6 (section 5.6 for their signed handshake), built on one
 * signed, self-healing websocket, {@link SignedFeed}: it signs the upgrade like a request
 * (`x-api-key`, `x-timestamp` or `x-nonce`, `x-sign` over the prefix and the ws URL), reconnects
 * by itself with exponential backoff and full jitter for as long as it is started (the real
 * service drops idle clients and expects a manual reconnect, spec section 6 rule 2), sends a
 * ping every `heartbeatMs` and drops a connection whose pong does not come back.
 *
 * - {@link CoreClientFeed} (this file): one `action` per pending action; after every (re)connect
 *   it reads GET /coreclient/{client_id}/actions, so an action submitted while it was away is
 *   emitted too; each action id is emitted once while the feed remembers it (until a day after
 *   its expiry, at most `maxRememberedIds` ids; the service re-sends pending actions on
 *   reconnect; the service's documentation).
 * - {@link AccountFeed} (this file): an account-wide feed without a catch-up; {@link HubFeed}
 *   (hub-feed.ts) and {@link WalletsFeed} (wallets-feed.ts) are the two the spec names.
 */
import { abortableSleep, backoffDelay } from '../support/backoff';
import { EventEmitter } from 'node:events';
import type WebSocket from 'ws';
import { performance } from 'node:perf_hooks';
import { STATUS_CODES } from 'node:http';
import { CustodyClient } from '../client/client';
import { Action } from '../api/v1/core-client';
import { ApiError, type ApiErrorBody } from '../api/errors';
import { ExpiringIdSet } from '../support/expiring-ids';
import { listActions } from '../client/v1/core-client';

/**
 * The `ws` module, required on the first connect: a Node-RED whose flows open no feed does not
 * load it (docs/performance.md).
 */
let wsModule: typeof WebSocket | undefined;

/** The `ws` WebSocket class, loaded on first call. */
function webSocketClass(): typeof WebSocket {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  wsModule ??= require('ws') as typeof WebSocket;
  return wsModule;
}

/** Connection states, in the order a feed moves through them. */
export type FeedState = 'connecting' | 'connected' | 'disconnected' | 'stopped';

/** Options of a feed ({@link SignedFeed} and its subclasses); all times in milliseconds. */
export interface FeedOptions {
  /** Ping interval; a connection without a pong by the next ping is dropped (default 15000). */
  heartbeatMs?: number;
  /** First reconnect delay (default 500); doubled per failed attempt, full jitter. */
  minDelayMs?: number;
  /** Largest reconnect delay (default 30000). */
  maxDelayMs?: number;
  /** Handshake timeout (default 10000). */
  handshakeTimeoutMs?: number;
}

/** The most bytes of a refused handshake's body read (a section 7 error body is far smaller). */
const MAX_ERROR_BODY = 4096;
/** How long the body of a refused handshake is waited for, ms. */
const ERROR_BODY_MS = 2000;

/**
 * A failed feed connection: the handshake was refused with an HTTP answer (`statusCode` and the
 * section 7 body's `code`, `msg`, `detail`; the HTTP status and its reason phrase when the body is
 * not one), or no answer came (`statusCode` 0, `code` the socket error code, e.g. `ECONNREFUSED`,
 * `ETIMEDOUT` for a handshake timeout, `DEPTH_ZERO_SELF_SIGNED_CERT`). The failure kind is
 * `notSent`: a feed connection changes nothing. lib/client/failure.ts tells its cause.
 */
export class FeedConnectionError extends ApiError {
  override name = 'FeedConnectionError';

  /**
   * A refused handshake. Message: `feed handshake refused: HTTP <status> <msg>[ (<reason>)]`.
   * @param statusCode the HTTP status of the answer.
   * @param body the answer's section 7 body, or undefined when it is not one.
   */
  static refused(statusCode: number, body: ApiErrorBody | undefined): FeedConnectionError {
    const b = body ?? { code: statusCode, msg: STATUS_CODES[statusCode] ?? 'refused', detail: {} };
    const e = new FeedConnectionError(statusCode, b, undefined, 'notSent');
    const reason = b.detail && typeof b.detail.reason === 'string' ? ` (${b.detail.reason})` : '';
    e.message = `feed handshake refused: HTTP ${statusCode} ${b.msg}${reason}`;
    return e;
  }

  /**
   * A connection that got no answer. Message: `feed connection failed: <the socket's message>`.
   * @param err the socket's error (its `code`, when it has one, is kept).
   */
  static failed(err: Error & { code?: string }): FeedConnectionError {
    const code = err.code ?? (/timed out/i.test(err.message) ? 'ETIMEDOUT' : 'ECONNFAILED');
    const e = new FeedConnectionError(0, { code, msg: err.message, detail: { reason: code } }, undefined, 'notSent');
    e.message = `feed connection failed: ${err.message}`;
    return e;
  }
}

/**
 * The section 7 error body of a refused handshake's answer, or undefined when it is not one
 * (not JSON, no string `msg`, larger than {@link MAX_ERROR_BODY}, not complete within
 * {@link ERROR_BODY_MS}). Never rejects.
 */
function readErrorBody(res: NodeJS.ReadableStream): Promise<ApiErrorBody | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (): void => {
      clearTimeout(timer);
      try {
        const body = JSON.parse(text) as ApiErrorBody;
        resolve(body && typeof body === 'object' && typeof body.msg === 'string' ? { code: body.code, msg: body.msg, detail: body.detail && typeof body.detail === 'object' ? body.detail : {} } : undefined);
      } catch {
        resolve(undefined);
      }
    };
    const timer = setTimeout(finish, ERROR_BODY_MS);
    res.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.length > MAX_ERROR_BODY) finish();
    });
    res.on('end', finish);
    res.on('error', finish);
  });
}

/**
 * A signed websocket that stays open from {@link start} to {@link stop}, reconnecting with
 * backoff. Subclasses turn messages into events ({@link handleMessage}) and may act after each
 * connect ({@link onConnected}).
 *
 * Events of every feed:
 * - `state` (state: FeedState, reason?: string): connection state changes.
 * - `error` (err: Error): a failed connect (e.g. `feed handshake refused: HTTP 401`), a message
 *   that is not JSON, a failed catch-up read; the feed keeps going. Emitted only when someone
 *   listens (no listener: nothing is thrown).
 */
export abstract class SignedFeed extends EventEmitter {
  /** The websocket URL: the client's base URL with ws:// or wss:// and the feed path. */
  readonly url: string;
  #state: FeedState = 'disconnected';
  #socket: WebSocket | undefined;
  /** The current run; aborted by stop(), which ends its loop and cancels a pending reconnect delay. */
  #run: AbortController | undefined;
  readonly #options: Required<FeedOptions>;

  /**
   * @param client the signed client (its base URL gives the feed URL, ws:// or wss://; its key signs the handshake).
   * @param path the feed path below the base URL, e.g. `/liquidityhub/feed`.
   */
  constructor(
    readonly client: CustodyClient,
    path: string,
    options: FeedOptions = {},
  ) {
    super();
    this.url = client.feedUrl(path);
    this.#options = { heartbeatMs: 15000, minDelayMs: 500, maxDelayMs: 30000, handshakeTimeoutMs: 10000, ...options };
  }

  /** The current connection state. */
  get state(): FeedState {
    return this.#state;
  }

  /** Open the feed (idempotent while started) and keep it open until {@link stop}. */
  start(): void {
    if (this.#run) return;
    const run = new AbortController();
    this.#run = run;
    void this.#loop(run.signal);
  }

  /** Close the feed and stop reconnecting (a pending reconnect delay is cancelled); resolves once the socket is closed. */
  async stop(): Promise<void> {
    this.#run?.abort();
    this.#run = undefined;
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket && socket.readyState !== socket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.terminate();
      });
    }
    // A start() called meanwhile owns the state now.
    if (!this.#run) this.#setState('stopped');
  }

  /**
   * Handle one parsed JSON message (called only while the run that received it is not stopped).
   * @param msg the parsed message, any JSON value.
   */
  protected abstract handleMessage(msg: unknown): void;

  /**
   * Called after each successful (re)connect, once the state is `connected`. Default: nothing.
   * @param signal aborted when the feed is stopped: emit nothing after that.
   */
  protected onConnected(signal: AbortSignal): void {
    void signal;
  }

  #setState(state: FeedState, reason?: string): void {
    if (this.#state === state) return;
    this.#state = state;
    this.emit('state', state, reason);
  }

  /** Report a failure to `error` listeners (none: nothing is thrown; the feed goes on). */
  protected reportError(err: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  /** Full jitter: a random delay in [0, min(maxDelayMs, minDelayMs * 2^attempt)) (lib/support/backoff.ts). */
  #delay(attempt: number): number {
    return backoffDelay({ firstMs: this.#options.minDelayMs, factor: 2, maxMs: this.#options.maxDelayMs, jitter: 'full' }, attempt);
  }

  /** Connect, wait for the socket to close, reconnect with backoff; until the run is aborted. */
  async #loop(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    while (!signal.aborted) {
      try {
        await this.#connect(signal);
        attempt = 0;
      } catch (err) {
        if (signal.aborted) return;
        this.#setState('disconnected', (err as Error).message);
        this.reportError(err as Error);
        await abortableSleep(this.#delay(attempt++), signal);
        continue;
      }
      const reason = await this.#closed;
      if (signal.aborted) return;
      this.#setState('disconnected', reason);
      // A jittered moment before reconnecting after a drop, so many feeds do not stampede.
      await abortableSleep(this.#delay(0), signal);
    }
  }

  #closed: Promise<string> = Promise.resolve('');

  /** One connection attempt: resolves when open; rejects on failure (the handshake's signature refused too). */
  async #connect(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new Error('feed stopped');
    this.#setState('connecting');
    const headers = await this.client.feedHeaders(this.url);
    if (signal.aborted) throw new Error('feed stopped');
    return new Promise<void>((resolve, reject) => {
      const WebSocketClass = webSocketClass();
      const socket = new WebSocketClass(this.url, {
        headers,
        handshakeTimeout: this.#options.handshakeTimeoutMs,
        minVersion: 'TLSv1.2',
        ...(this.client.ca ? { ca: this.client.ca } : {}),
      });
      this.#socket = socket;
      let opened = false;
      let heartbeat: NodeJS.Timeout | undefined;
      this.#closed = new Promise<string>((resolveClosed) => {
        socket.on('close', (code, reason) => {
          clearInterval(heartbeat);
          if (this.#socket === socket) this.#socket = undefined;
          resolveClosed(`closed (${code}${reason.length ? ' ' + reason.toString() : ''})`);
        });
      });
      socket.on('unexpected-response', (_req, res) => {
        readErrorBody(res).then((body) => {
          socket.terminate();
          reject(FeedConnectionError.refused(res.statusCode ?? 0, body));
        });
      });
      socket.on('error', (err: Error & { code?: string }) => {
        if (!opened) reject(FeedConnectionError.failed(err));
      });
      socket.on('message', (data) => {
        if (signal.aborted) return;
        let msg: unknown;
        try {
          msg = JSON.parse(data.toString());
        } catch {
          this.reportError(new Error('feed: a message was not JSON'));
          return;
        }
        this.handleMessage(msg);
      });
      socket.on('open', () => {
        if (signal.aborted) {
          socket.terminate();
          reject(new Error('feed stopped'));
          return;
        }
        opened = true;
        heartbeat = this.#heartbeat(socket);
        this.#setState('connected');
        resolve();
        this.onConnected(signal);
      });
    });
  }

  /**
   * Ping `socket` every `heartbeatMs`; terminate it when the previous ping got no pong.
   * @returns the interval, cleared by the socket's close handler (one per socket).
   */
  #heartbeat(socket: WebSocket): NodeJS.Timeout {
    let alive = true;
    socket.on('pong', () => {
      alive = true;
    });
    const timer = setInterval(() => {
      if (!alive) {
        socket.terminate();
        return;
      }
      alive = false;
      socket.ping();
    }, this.#options.heartbeatMs);
    timer.unref();
    return timer;
  }
}

/**
 * What an {@link AccountFeed} emits: the event name, the string field every message must have,
 * and the feed's name in error texts.
 */
export interface AccountFeedMessages {
  /** The event emitted per message, e.g. `quote`. */
  event: string;
  /**
   * The field a message must hold as a string to be emitted, e.g. `wallet_id`; or several
   * spellings of it, of which any one is enough (the hub feed: `['txID', 'TxID']`).
   */
  idField: string | readonly string[];
  /** The feed's name at the start of an error text, e.g. `liquidity hub feed`. */
  label: string;
}

/**
 * An account-wide feed without catch-up (spec section 6: the liquidity hub feed
 * {@link HubFeed}, the wallets feed {@link WalletsFeed}). It reconnects by itself like every
 * {@link SignedFeed}, but the service re-sends nothing on reconnect.
 *
 * Events (besides `state` and `error`, see {@link SignedFeed}):
 * - `<event>` (message): one per message that is a JSON object with a string `<idField>` (any
 *   one of its spellings), as received: nothing renamed, added or removed (no dedupe: the service
 *   does not repeat messages). Other messages are reported as `error` (`<label>: a message without
 *   <idField> was ignored`) and dropped.
 */
export class AccountFeed extends SignedFeed {
  readonly #messages: AccountFeedMessages;

  /**
   * @param client the signed client of the account (its base URL gives the feed URL, ws:// or wss://).
   * @param path the feed path below the base URL, e.g. `/liquidityhub/feed`.
   * @param messages the event to emit, the field a message must have, the name in error texts.
   */
  constructor(client: CustodyClient, path: string, messages: AccountFeedMessages, options: FeedOptions = {}) {
    super(client, path, options);
    this.#messages = messages;
  }

  /** Emit the event for a JSON object with a string id field (any of its spellings); report anything else as `error`. */
  protected handleMessage(msg: unknown): void {
    const { event, idField, label } = this.#messages;
    const fields: readonly string[] = typeof idField === 'string' ? [idField] : idField;
    if (msg && typeof msg === 'object' && !Array.isArray(msg) && fields.some((f) => typeof (msg as Record<string, unknown>)[f] === 'string')) {
      this.emit(event, msg);
    } else {
      this.reportError(new Error(`${label}: a message without ${fields.join(' or ')} was ignored`));
    }
  }
}

/** Options of a {@link CoreClientFeed}: those of every feed, and how many emitted action ids it remembers at most. */
export interface CoreClientFeedOptions extends FeedOptions {
  /**
   * The most action ids remembered (default 200,000, `EXPIRING_IDS_MAX_SIZE` of
   * lib/support/expiring-ids.ts); above it the ids whose actions expire first are forgotten.
   */
  maxRememberedIds?: number;
}

/**
 * The feed path of a core client. @throws {TypeError} when `clientId` is empty or holds `/`, `?` or `#`.
 */
function coreClientFeedPath(clientId: string): string {
  if (!clientId || /[/?#]/.test(clientId)) throw new TypeError('clientId: a core client id is required');
  return `/coreclient/${encodeURIComponent(clientId)}/feed`;
}

/**
 * What a catch-up read of GET /coreclient/{client_id}/actions listed (the `listing` event of
 * {@link CoreClientFeed}): the ids of the actions it holds, and when it was asked for. An action
 * that was pending when the request was sent and is not listed is no longer pending.
 */
export interface ActionListing {
  /** The ids of the listed actions (the service lists the pending ones). */
  ids: string[];
  /** `performance.now()` (milliseconds, this process's monotonic clock) just before the request was sent. */
  requestedAt: number;
}

/**
 * The core client feed, `{ws_base_url}/coreclient/{client_id}/feed` (spec section 6): one
 * message per pending action of the wallets the core client guards. After every (re)connect it
 * reads GET /coreclient/{client_id}/actions (catch-up); each action id is emitted once: it is
 * remembered until a day after its action's expiry (forgotten past that only once 10,000 or more
 * are remembered), and at most `maxRememberedIds` ids are (default 200,000; beyond, the ids
 * whose actions expire first are forgotten). Checking and remembering an id costs O(1) amortised
 * (lib/support/expiring-ids.ts).
 *
 * Events (besides `state` and `error`, see {@link SignedFeed}):
 * - `action` (action: Action, source: 'feed' | 'catch-up'): a pending action not emitted before.
 * - `listing` ({@link ActionListing}): after each catch-up read, once its actions were emitted.
 */
export class CoreClientFeed extends SignedFeed {
  /** The core client whose actions this feed carries. */
  readonly clientId: string;
  /**
   * Emitted action ids, each with the epoch second from which it may be forgotten (a day after
   * its action's expiry); forgotten once 10,000 or more are kept and that second has passed, or
   * when more than `maxRememberedIds` are kept (the earliest-expiring first). O(1) amortised per
   * action.
   */
  readonly #seen: ExpiringIdSet;

  /**
   * @param client the signed client (its base URL gives the feed URL, ws:// or wss://).
   * @param clientId the core client id.
   * @throws {TypeError} when `clientId` is empty or holds `/`, `?` or `#`.
   * @throws {RangeError} when `maxRememberedIds` is not an integer of at least 1.
   */
  constructor(client: CustodyClient, clientId: string, options: CoreClientFeedOptions = {}) {
    const { maxRememberedIds, ...feedOptions } = options;
    super(client, coreClientFeedPath(clientId), feedOptions);
    this.clientId = clientId;
    this.#seen = new ExpiringIdSet(maxRememberedIds === undefined ? {} : { maxSize: maxRememberedIds });
  }

  /** Catch up with what was submitted while away; a failure is reported, the socket stays. */
  protected override onConnected(signal: AbortSignal): void {
    this.#catchUp(signal).catch((err: Error) => this.reportError(err));
  }

  async #catchUp(signal: AbortSignal): Promise<void> {
    const requestedAt = performance.now();
    const res = await listActions(this.client, { client_id: this.clientId });
    if (signal.aborted) return; // stopped while reading: emit nothing after stop()
    const actions = res.data.actions ?? [];
    for (const action of actions) if (action.status === 'pending') this.#emitOnce(action, 'catch-up');
    const listing: ActionListing = { ids: actions.filter((a) => a && typeof a.id === 'string').map((a) => a.id), requestedAt };
    this.emit('listing', listing);
  }

  /** A message with a string `id` is an action; anything else is ignored. */
  protected handleMessage(msg: unknown): void {
    if (msg && typeof msg === 'object' && typeof (msg as Action).id === 'string') this.#emitOnce(msg as Action, 'feed');
  }

  #emitOnce(action: Action, source: 'feed' | 'catch-up'): void {
    // Forgettable a day after its expiry (or after now, when it carries none); epoch seconds,
    // or milliseconds read as seconds. Past that an action cannot come back as pending.
    const expiry = Number(action.expireTime) || Math.floor(Date.now() / 1000);
    // One lookup: add() is the duplicate check (false: emitted before, nothing changes).
    if (this.#seen.add(action.id, (expiry > 1e11 ? Math.floor(expiry / 1000) : expiry) + 86400)) this.emit('action', action, source);
  }
}
