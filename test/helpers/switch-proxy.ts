/**
 * A loopback TCP proxy whose upstream a test switches while a client keeps the same address: to
 * one server, to another, or to nothing (its port closed: the client meets ECONNREFUSED). Bytes
 * are passed through untouched (HTTP, websocket upgrades, the Host header the client signed).
 * It counts the connections it accepted, so a test knows how many attempts a client made.
 * No dependency beyond node:net.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A proxy on a fixed loopback port; see the module comment. */
export class SwitchProxy {
  #server: net.Server | undefined;
  #upstream = 0;
  #port = 0;
  readonly #sockets = new Set<net.Socket>();
  /** Connections accepted since the start. */
  accepted = 0;

  /** The loopback port (fixed from the first {@link forwardTo}). */
  get port(): number {
    return this.#port;
  }

  /**
   * Forward every new connection to `127.0.0.1:upstream`, listening again (on the same port) when
   * the proxy was closed. Connections already open stay with their upstream.
   */
  async forwardTo(upstream: number): Promise<void> {
    this.#upstream = upstream;
    if (this.#server) return;
    const server = net.createServer((client) => {
      this.accepted++;
      const up = net.connect(this.#upstream, '127.0.0.1');
      for (const s of [client, up]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('close', () => up.destroy());
      up.on('close', () => client.destroy());
      client.pipe(up).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /**
   * Stop listening: new connections are refused until {@link forwardTo}. The connections already
   * accepted go on to their end (a server that stops taking connections, not one that resets
   * them). Resolves once the port is closed.
   */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()).unref());
  }

  /** {@link close}, and cut every connection still open through the proxy. */
  async shutdown(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await this.close();
  }
}
