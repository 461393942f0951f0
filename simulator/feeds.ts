/**
 * The websocket feeds. Source: spec sections 5.6 and 6; simulator/README.md "Websocket feeds".
 *
 * | Feed | URL (`ws(s)://host:port` + ...) | Messages |
 * |---|---|---|
 * | core client | `/api/v1/p/coreclient/{client_id}/feed` | one per pending action (engine event `action`); the pending ones again on connect |
 * | liquidity hub | `/api/v1/p/liquidityhub/feed` | `{txID, status}` per quote newly published (engine event `hub`); no catch-up on connect |
 * | wallets | `/api/v1/p/wallets/feed` | one per wallet transaction of the account (engine event `walletTx`, {@link WalletFeedMessage}); no catch-up on connect |
 *
 * Both API keys of the partner account (full and read-only) may open every feed (feeds are
 * reads). Every hub and wallets socket receives every message of the feed: the hub feed carries
 * every published quote (the simulated foreign account's too: the liquidity hub is shared); the
 * wallets feed carries the partner account's wallet movements only (engine.ts `emitWalletTx`
 * leaves out the foreign account's).
 *
 * - The upgrade request must carry `x-api-key`, `x-timestamp` (or `x-nonce`) and `x-sign`, the
 *   signature over timestamp + the ws URL as addressed (`ws://` + Host header + path and query),
 *   no body; the same rules as auth.ts. Refused upgrades get an HTTP error response with a
 *   section 7 body: 401 for authentication, 404 for an unknown path or core client, 403 for a
 *   core client of another API account (the same answer as the REST routes, network/core-clients.ts
 *   `getCoreClient`).
 * - Every message is sent only after the state that holds it has been written.
 * - On connect a core client receives every currently pending action, then one message per new
 *   action: `{"coreClientID","expireTime","id","status":"pending","timestamp","type"}`. A new
 *   action is announced only after the state that contains it has been written.
 * - Pings are answered by `ws` itself.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket } from 'ws';
import type { Engine } from './engine';
import type { Authenticator } from './auth';
import { badRequest, notFound, toErrorResponse } from './errors';
import { getCoreClient } from './network';
import { feedMessage, pendingActionsOf } from './transactions';
import type { ActionRecord } from './model';
import { API_PREFIX } from './paths';
import { checkFeedMessage } from './response-check';
import type { HubFeedMessage, WalletFeedMessage } from '../lib/api/feeds';

const FEED_PATH = new RegExp(`^${API_PREFIX}/coreclient/([^/]+)/feed/?$`);
const HUB_FEED_PATH = new RegExp(`^${API_PREFIX}/liquidityhub/feed/?$`);
const WALLETS_FEED_PATH = new RegExp(`^${API_PREFIX}/wallets/feed/?$`);
/** Socket-set keys of the account-wide feeds (a core client id never contains `/`). */
const HUB_KEY = '/hub-feed';
const WALLETS_KEY = '/wallets-feed';

/** Owns the websocket server and the open feed sockets of every feed. */
export class FeedHub {
  private readonly wss = new WebSocketServer({ noServer: true });
  /** Open sockets by feed: a core client id, {@link HUB_KEY} or {@link WALLETS_KEY}. */
  private readonly sockets = new Map<string, Set<WebSocket>>();
  /** Engine event listeners: each sends once the state holding the event is written (a failed write sends nothing). */
  private readonly onAction = this.afterCommit((a: ActionRecord) => this.send(a.custodianID, [this.eng.state.actions[a.id] ?? a]));
  private readonly onHub = this.afterCommit((m: HubFeedMessage) => this.broadcast(HUB_KEY, m));
  private readonly onWalletTx = this.afterCommit((m: WalletFeedMessage) => this.broadcast(WALLETS_KEY, m));

  constructor(
    private readonly eng: Engine,
    private readonly auth: Authenticator,
    private readonly tls: boolean,
  ) {
    eng.on('action', this.onAction);
    eng.on('hub', this.onHub);
    eng.on('walletTx', this.onWalletTx);
  }

  /** Wrap `send` so that it runs after the next state write has succeeded. */
  private afterCommit<T>(send: (m: T) => void): (m: T) => void {
    return (m) => {
      this.eng.store.commit().then(
        () => send(m),
        () => undefined,
      );
    };
  }

  /**
   * Handle an HTTP `upgrade` event of the server: authenticate (auth.ts), check the core client
   * (404 unknown, 403 another API account's), then accept once the state (a raised nonce mark)
   * is written. A refused upgrade is answered with its status and section 7 body, and closed.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    /** The socket-set key: a core client id, HUB_KEY or WALLETS_KEY. */
    let key: string;
    try {
      const pathname = (req.url ?? '').split('?')[0];
      const m = FEED_PATH.exec(pathname);
      if (m) {
        try {
          key = decodeURIComponent(m[1]);
        } catch {
          throw badRequest('client_id: malformed percent-encoding');
        }
      } else if (HUB_FEED_PATH.test(pathname)) key = HUB_KEY;
      else if (WALLETS_FEED_PATH.test(pathname)) key = WALLETS_KEY;
      else throw notFound(`path: no websocket feed at ${pathname}`);
      const url = `${this.tls ? 'wss' : 'ws'}://${req.headers.host ?? ''}${req.url ?? ''}`;
      this.auth.check({ headers: req.headers, url, body: Buffer.alloc(0) });
      if (m) getCoreClient(this.eng, key); // 404 unknown; 403 a core client of another API account
    } catch (err) {
      const [status, body] = toErrorResponse(err);
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
      return;
    }
    // Persist a raised nonce mark before the socket is accepted.
    this.eng.store.commit().then(
      () => this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(key, ws)),
      () => socket.destroy(),
    );
  }

  /**
   * Fault injection (`POST /_simulator/feeds/faults`): `replayOnConnect` false stops sending the
   * pending actions when a core client connects; `deliver` false stops pushing new messages on
   * every feed (core client, liquidity hub, wallets), as if they were lost. Both default true.
   * Not persisted.
   */
  readonly faults = { replayOnConnect: true, deliver: true };

  private accept(key: string, ws: WebSocket): void {
    let set = this.sockets.get(key);
    if (!set) this.sockets.set(key, (set = new Set()));
    set.add(ws);
    ws.on('close', () => {
      set!.delete(ws);
      if (set!.size === 0 && this.sockets.get(key) === set) this.sockets.delete(key);
    });
    ws.on('error', () => undefined);
    ws.on('message', () => undefined); // the feed is one-way; client messages are ignored
    // Only the core client feed replays on connect; the hub and wallets feeds have no catch-up.
    // The pending actions come from the engine's index per custodian (transactions.ts pendingActionsOf), not a scan.
    if (key !== HUB_KEY && key !== WALLETS_KEY && this.faults.replayOnConnect) this.sendTo(ws, pendingActionsOf(this.eng, key));
  }

  /** Send one message to every open socket of an account-wide feed. */
  private broadcast(key: string, message: HubFeedMessage | WalletFeedMessage): void {
    if (!this.faults.deliver) return;
    checkFeedMessage(key === HUB_KEY ? 'hub' : 'wallets', message);
    const text = JSON.stringify(message);
    for (const ws of this.sockets.get(key) ?? []) if (ws.readyState === WebSocket.OPEN) ws.send(text);
  }

  private send(clientId: string, actions: ActionRecord[]): void {
    if (!this.faults.deliver) return;
    for (const ws of this.sockets.get(clientId) ?? []) this.sendTo(ws, actions);
  }

  private sendTo(ws: WebSocket, actions: ActionRecord[]): void {
    for (const a of actions) {
      if (a.status !== 'pending' || ws.readyState !== WebSocket.OPEN) continue;
      const message = feedMessage(a);
      checkFeedMessage('coreClient', message);
      ws.send(JSON.stringify(message));
    }
  }

  /** Number of open feed sockets, all feeds together. */
  get openCount(): number {
    let n = 0;
    for (const s of this.sockets.values()) n += s.size;
    return n;
  }

  /**
   * Close every open socket of every feed (core client, liquidity hub, wallets) abruptly, with no
   * close frame: fault injection (`POST /_simulator/feeds/drop`). @returns how many were dropped.
   */
  drop(): number {
    let n = 0;
    for (const set of this.sockets.values()) {
      for (const ws of set) {
        ws.terminate();
        n++;
      }
    }
    return n;
  }

  /** Close all sockets and the websocket server. */
  close(): Promise<void> {
    this.eng.off('action', this.onAction);
    this.eng.off('hub', this.onHub);
    this.eng.off('walletTx', this.onWalletTx);
    for (const set of this.sockets.values()) for (const ws of set) ws.terminate();
    this.sockets.clear();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}
