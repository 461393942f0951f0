/**
 * What the runs with several `node-red` child processes share (the scale-out bench and runs,
 * the approval outcome runs): a child's environment set while it is spawned, a full deploy
 * through the admin API with the config node's credentials, a wait for a node's green dot on
 * every instance, and a websocket upgrade forwarded by a loopback proxy.
 */
import type http from 'node:http';
import net from 'node:net';
import { sleep } from './red-process';
import { setEnv } from './support';

/** An instance as these helpers see it: its name, its process (admin base URL, log) and node statuses from `/comms`. */
export interface FleetInstance {
  name: string;
  red: { base: string; log: string };
  /** Node statuses by node id. */
  status: Map<string, { text?: string; fill?: string; shape?: string }>;
}

/**
 * Set `vars` in this process's environment (undefined: remove) while `fn` runs (a child spawned
 * meanwhile inherits them), then put back what was there.
 */
export async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const previous = setEnv(vars);
  try {
    return await fn();
  } finally {
    setEnv(previous);
  }
}

/**
 * Deploy `flows` to an instance as the editor's full deploy does (`POST /flows`,
 * `Node-RED-Deployment-Type: full`), with `credentials` on the config node `configId` when given
 * (without: the ones deployed before stay).
 * @throws {Error} when the admin API refuses it.
 */
export async function deployFull(instance: FleetInstance, flows: object[], configId: string, credentials?: object): Promise<void> {
  const body = credentials ? flows.map((n) => ((n as { id: string }).id === configId ? { ...n, credentials } : n)) : flows;
  const res = await fetch(`${instance.red.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' }, body: JSON.stringify(body) });
  if (res.status !== 200 && res.status !== 204) throw new Error(`deploy to ${instance.name}: ${res.status} ${await res.text()}`);
}

/**
 * Wait until node `nodeId` of every instance shows a green dot (a feed: connected).
 * @throws {Error} after `ms` with the statuses seen and the end of each log.
 */
export async function waitForGreen(instances: FleetInstance[], nodeId: string, ms = 60000): Promise<void> {
  const deadline = Date.now() + ms;
  const green = (i: FleetInstance) => i.status.get(nodeId)?.fill === 'green';
  while (!instances.every(green)) {
    if (Date.now() > deadline) {
      const seen = instances.map((i) => `${i.name}: ${nodeId} ${JSON.stringify(i.status.get(nodeId))}\n${i.red.log.slice(-1500)}`).join('\n');
      throw new Error(`not connected in ${ms} ms:\n${seen}`);
    }
    await sleep(100);
  }
}

/**
 * Forward a websocket upgrade received by a loopback proxy to `target`: the request head as
 * received, then bytes both ways. Both sockets are kept in `open` until they close (a proxy's
 * stop destroys what is left).
 */
export function tunnelUpgrade(target: URL, req: http.IncomingMessage, socket: net.Socket, head: Buffer, open: Set<net.Socket>): void {
  const up = net.connect(Number(target.port), target.hostname);
  open.add(socket);
  open.add(up);
  const end = () => {
    socket.destroy();
    up.destroy();
    open.delete(socket);
    open.delete(up);
  };
  socket.on('error', end).on('close', end);
  up.on('error', end).on('close', end);
  up.on('connect', () => {
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    up.write(lines.join('\r\n') + '\r\n\r\n');
    if (head.length) up.write(head);
    socket.pipe(up);
    up.pipe(socket);
  });
}

/** Stop a loopback proxy: destroy its tunnels (and forget them), close every connection and server, then its agent's sockets. */
export async function closeProxy(servers: http.Server[], tunnels: Set<net.Socket>, agent: http.Agent): Promise<void> {
  for (const s of tunnels) s.destroy();
  tunnels.clear();
  await Promise.all(
    servers.map((server) => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    }),
  );
  agent.destroy();
}
