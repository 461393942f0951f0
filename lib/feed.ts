/**
 * The core client feed (spec section 6; section 5.6 for its signed handshake): a websocket
 * that delivers one JSON message per pending action. The real service drops idle clients and
 * expects a manual reconnect (spec section 6 rule 2); this feed reconnects by itself with
 * exponential backoff and full jitter for as long as it is started, sends a ping every
 * `heartbeatMs` and drops a connection whose pong does not come back, and after every
 * (re)connect reads GET /coreclient/{client_id}/actions, so an action submitted while it was
 * away is emitted too. Each action id is emitted once for the lifetime of the feed (the
 * service re-sends pending actions on reconnect; NOTES.md "Behaviour").
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { setTimeout as sleep } from 'node:timers/promises';
import { CustodyClient } from './client';
import { Action, listActions } from './v1/core-client';

/** Connection states, in the order a feed moves through them. */
export type FeedState = 'connecting' | 'connected' | 'disconnected' | 'stopped';

/** Options of a {@link CoreClientFeed}; all times in milliseconds. */
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

/**
 * Events:
 * - `action` (action: Action, source: 'feed' | 'catch-up'): a pending action not emitted before.
 * - `state` (state: FeedState, reason?: string): connection state changes.
 * - `error` (err: Error): a failed connect or catch-up read; the feed keeps retrying. Emitted
 *   only when someone listens.
 */
export class CoreClientFeed extends EventEmitter {
  /** The core client whose actions this feed carries. */
  readonly clientId: string;
  /** The websocket URL, `{ws_base_url}/coreclient/{client_id}/feed`. */
  readonly url: string;
  #state: FeedState = 'disconnected';
  #socket: WebSocket | undefined;
  /** The current run; aborted by stop(), which ends its loop and cancels a pending reconnect delay. */
  #run: AbortController | undefined;
  /** Emitted action ids -> when they may be forgotten (epoch seconds). */
  #seen = new Map<string, number>();
  readonly #options: Required<FeedOptions>;

  /**
   * @param client the signed client (its base URL gives the feed URL, ws:// or wss://).
   * @param clientId the core client id.
   */
  constructor(
    readonly client: CustodyClient,
    clientId: string,
    options: FeedOptions = {},
  ) {
    super();
    if (!clientId || /[/?#]/.test(clientId)) throw new TypeError('clientId: a core client id is required');
    this.clientId = clientId;
    this.url = client.feedUrl(`/coreclient/${encodeURIComponent(clientId)}/feed`);
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
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.terminate();
      });
    }
    // A start() called meanwhile owns the state now.
    if (!this.#run) this.#setState('stopped');
  }

  #setState(state: FeedState, reason?: string): void {
    if (this.#state === state) return;
    this.#state = state;
    this.emit('state', state, reason);
  }

  /** Report a failure to `error` listeners (none: nothing is thrown; the feed goes on). */
  #reportError(err: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  /** Full jitter: a random delay in [0, min(maxDelayMs, minDelayMs * 2^attempt)). */
  #delay(attempt: number): number {
    return Math.random() * Math.min(this.#options.maxDelayMs, this.#options.minDelayMs * 2 ** Math.min(attempt, 30));
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
        this.#reportError(err as Error);
        await sleep(this.#delay(attempt++), undefined, { signal }).catch(() => undefined);
        continue;
      }
      const reason = await this.#closed;
      if (signal.aborted) return;
      this.#setState('disconnected', reason);
      // A jittered moment before reconnecting after a drop, so many feeds do not stampede.
      await sleep(this.#delay(0), undefined, { signal }).catch(() => undefined);
    }
  }

  #closed: Promise<string> = Promise.resolve('');

  /** One connection attempt: resolves when open and caught up; rejects on failure. */
  #connect(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new Error('feed stopped'));
    this.#setState('connecting');
    return new Promise<void>((resolve, reject) => {
      const socket = new WebSocket(this.url, {
        headers: this.client.feedHeaders(this.url),
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
        socket.terminate();
        reject(new Error(`feed handshake refused: HTTP ${res.statusCode}`));
      });
      socket.on('error', (err) => {
        if (!opened) reject(new Error(`feed connection failed: ${err.message}`));
      });
      socket.on('message', (data) => {
        if (!signal.aborted) this.#onMessage(data.toString());
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
        // Catch up with what was submitted while away; a failure here is reported, the socket stays.
        this.#catchUp(signal).catch((err: Error) => this.#reportError(err));
      });
    });
  }

  async #catchUp(signal: AbortSignal): Promise<void> {
    const res = await listActions(this.client, { client_id: this.clientId });
    if (signal.aborted) return; // stopped while reading: emit nothing after stop()
    for (const action of res.data.actions ?? []) if (action.status === 'pending') this.#emitOnce(action, 'catch-up');
  }

  #onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.#reportError(new Error('feed: a message was not JSON'));
      return;
    }
    if (msg && typeof msg === 'object' && typeof (msg as Action).id === 'string') this.#emitOnce(msg as Action, 'feed');
  }

  #emitOnce(action: Action, source: 'feed' | 'catch-up'): void {
    if (this.#seen.has(action.id)) return;
    // Forgettable a day after its expiry (or after now, when it carries none); epoch seconds,
    // or milliseconds read as seconds.
    const expiry = Number(action.expireTime) || Math.floor(Date.now() / 1000);
    this.#seen.set(action.id, (expiry > 1e11 ? Math.floor(expiry / 1000) : expiry) + 86400);
    this.#prune();
    this.emit('action', action, source);
  }

  /** Forget ids past their horizon (a day after expiry): they cannot come back as pending. */
  #prune(): void {
    if (this.#seen.size < 10000) return;
    const now = Math.floor(Date.now() / 1000);
    for (const [id, horizon] of this.#seen) if (horizon < now) this.#seen.delete(id);
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
