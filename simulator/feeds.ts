/**
 * Core client websocket feeds. Source: spec sections 5.6 and 6; NOTES.md "Feed messages".
 *
 * - URL: `ws(s)://host:port/api/v1/p/coreclient/{client_id}/feed`.
 * - The upgrade request must carry `x-api-key`, `x-timestamp` (or `x-nonce`) and `x-sign`, the
 *   signature over timestamp + the ws URL as addressed (`ws://` + Host header + path and query),
 *   no body; the same rules as auth.ts. Refused upgrades get an HTTP error response with a
 *   section 7 body (401 for authentication, 404 for an unknown client or path).
 * - On connect the client receives every currently pending action, then one message per new
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
import { feedMessage, pendingActionsOf } from './transactions';
import type { ActionRecord } from './state';
import { API_PREFIX } from './routes';

const FEED_PATH = new RegExp(`^${API_PREFIX}/coreclient/([^/]+)/feed/?$`);

/** Owns the websocket server and the open feed sockets. */
export class FeedHub {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Map<string, Set<WebSocket>>();
  private readonly onAction = (a: ActionRecord): void => {
    this.eng.store.commit().then(
      () => this.send(a.custodianID, [a]),
      () => undefined,
    );
  };

  constructor(
    private readonly eng: Engine,
    private readonly auth: Authenticator,
    private readonly tls: boolean,
  ) {
    eng.on('action', this.onAction);
  }

  /** Handle an HTTP `upgrade` event of the server. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    let clientId: string;
    try {
      const pathname = (req.url ?? '').split('?')[0];
      const m = FEED_PATH.exec(pathname);
      if (!m) throw notFound(`path: no websocket feed at ${pathname}`);
      try {
        clientId = decodeURIComponent(m[1]);
      } catch {
        throw badRequest('client_id: malformed percent-encoding');
      }
      const url = `${this.tls ? 'wss' : 'ws'}://${req.headers.host ?? ''}${req.url ?? ''}`;
      this.auth.check({ headers: req.headers, url, body: Buffer.alloc(0) });
      if (!this.eng.state.coreClients[clientId]) throw notFound(`client_id: no core client ${clientId}`);
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
      () => this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(clientId, ws)),
      () => socket.destroy(),
    );
  }

  /**
   * Fault injection (`POST /_simulator/feeds/faults`): `replayOnConnect` false stops sending the
   * pending actions when a client connects; `deliver` false stops pushing new actions (as if
   * the messages were lost). Both default true. Not persisted.
   */
  readonly faults = { replayOnConnect: true, deliver: true };

  private accept(clientId: string, ws: WebSocket): void {
    let set = this.sockets.get(clientId);
    if (!set) this.sockets.set(clientId, (set = new Set()));
    set.add(ws);
    ws.on('close', () => {
      set!.delete(ws);
      if (set!.size === 0) this.sockets.delete(clientId);
    });
    ws.on('error', () => undefined);
    ws.on('message', () => undefined); // the feed is one-way; client messages are ignored
    if (this.faults.replayOnConnect) this.sendTo(ws, pendingActionsOf(this.eng, clientId));
  }

  private send(clientId: string, actions: ActionRecord[]): void {
    if (!this.faults.deliver) return;
    for (const ws of this.sockets.get(clientId) ?? []) this.sendTo(ws, actions);
  }

  private sendTo(ws: WebSocket, actions: ActionRecord[]): void {
    for (const a of actions) {
      if (a.status !== 'pending' || ws.readyState !== WebSocket.OPEN) continue;
      ws.send(JSON.stringify(feedMessage(a)));
    }
  }

  /** Number of open feed sockets. */
  get openCount(): number {
    let n = 0;
    for (const s of this.sockets.values()) n += s.size;
    return n;
  }

  /** Close every open feed socket abruptly (no close frame): fault injection. @returns how many were dropped. */
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
    for (const set of this.sockets.values()) for (const ws of set) ws.terminate();
    this.sockets.clear();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}
