/**
 * How the coordinator (coordinator.ts) reaches Redis, in one of three modes (docs/scale-out.md
 * "Reaching Redis"):
 *
 * - **standalone**: one Redis by URL (`redis://host:port/db`, `rediss://` for TLS);
 * - **sentinel**: the addresses of the sentinels and the master's name; the client asks the
 *   sentinels for the master, and again after a failover (ioredis' Sentinel support, with its
 *   failover detector subscribed to `+switch-master`);
 * - **cluster**: seed nodes of a Redis Cluster. Every key of one prefix is kept in one hash slot
 *   ({@link clusterKeyPrefix}: the prefix is a hash tag), so the scripts, which touch several keys
 *   at once, run on one shard. Availability, not throughput: one shard does the work.
 *
 * Also: which server the connection talks to ({@link serverOf}: address and `run_id`), so that
 * a failover (another server, or the same one restarted) is seen and handled like a data loss.
 */
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { ConfigError } from '../api/errors';
import { parseConfigUrl } from '../client/environments';
import { withScripts, type LuaScript } from './lua';

/** How the coordinator reaches Redis: one server by URL, through Sentinel, or a Cluster. */
export type RedisMode = 'standalone' | 'sentinel' | 'cluster';

/** A Redis or sentinel address. */
export interface RedisAddress {
  host: string;
  /** TCP port, 1-65535. */
  port: number;
}

/** Where Redis is and how to log in (a subset of lib/coordination/coordinator.ts `CoordinatorOptions`). */
export interface RedisConnectionOptions {
  /** Standalone: `redis://host:port/db` or `rediss://...` (TLS). No password in it: see `password`. */
  url?: string;
  /** Sentinel: the sentinels' addresses. With it, `masterName` names the master and `url` is not used. */
  sentinels?: RedisAddress[];
  /** Sentinel: the name the sentinels monitor the master by (default `mymaster`). */
  masterName?: string;
  /** Sentinel: the sentinels' own password (`requirepass` of sentinel.conf); a secret. */
  sentinelPassword?: string;
  /** Sentinel: the sentinels' ACL user name, when they use ACLs. */
  sentinelUsername?: string;
  /** Cluster: seed nodes of the cluster (one reachable node is enough to find the others). */
  clusterNodes?: RedisAddress[];
  /** Connect with TLS: to Redis, and in Sentinel mode to the sentinels too (implied by `rediss://`). */
  tls?: boolean;
  /** Redis password (`AUTH`; the master's and the replicas', or every cluster node's); a secret: never logged, never in an error. */
  password?: string;
  /** Redis ACL user name (default: none, the `default` user). */
  username?: string;
  /** Connect timeout, ms (default 5,000). */
  connectTimeoutMs?: number;
}

/** The default master name of Sentinel (`sentinel monitor mymaster ...` in Redis' sample sentinel.conf). */
export const DEFAULT_MASTER_NAME = 'mymaster';

/**
 * Check a Redis URL as the config node takes it: `redis:` or `rediss:`, a host, no password.
 * @returns the URL.
 * @throws {ConfigError} naming `redisUrl`.
 */
export function checkRedisUrl(url: string): URL {
  const u = parseConfigUrl(url, 'redisUrl: a Redis URL such as redis://127.0.0.1:6379/0');
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new ConfigError(`redisUrl: redis:// or rediss://, got ${u.protocol}//`);
  if (!u.hostname) throw new ConfigError('redisUrl: the host is missing');
  if (u.password) throw new ConfigError('redisUrl: put the password in the Redis password field (a credential), not in the URL');
  return u;
}

/**
 * Parse a list of addresses as the config node takes it: `host:port` entries separated by commas
 * or spaces; an IPv6 host in brackets (`[::1]:26379`); a missing port is `defaultPort`.
 * @param field the setting's name, for the error (e.g. `redisSentinels`).
 * @throws {ConfigError} naming `field` when the list is empty or an entry is not `host:port` with a port 1-65535.
 */
export function parseRedisAddresses(text: string, field: string, defaultPort: number): RedisAddress[] {
  const entries = String(text ?? '')
    .split(/[\s,]+/)
    .filter(Boolean);
  if (entries.length === 0) throw new ConfigError(`${field}: at least one host:port`);
  return entries.map((entry, i) => {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:@/[\]\s]+))(?::(\d+))?$/.exec(entry);
    const port = m?.[3] === undefined ? defaultPort : Number(m[3]);
    // The entry itself is not echoed: a mistyped one can carry a password (user:secret@host).
    if (!m || !(port >= 1 && port <= 65535)) throw new ConfigError(`${field}: entry ${i + 1} is not host:port (a host, then a port 1-65535)`);
    return { host: m[1] ?? m[2], port };
  });
}

/**
 * The mode of `o`: `sentinel` with sentinels, `cluster` with cluster nodes, else `standalone`.
 * @throws {ConfigError} when both sentinels and cluster nodes are given (naming `redisMode`), or none of URL, sentinels, nodes.
 */
export function redisModeOf(o: RedisConnectionOptions): RedisMode {
  const sentinel = (o.sentinels?.length ?? 0) > 0;
  const cluster = (o.clusterNodes?.length ?? 0) > 0;
  if (sentinel && cluster) throw new ConfigError('redisMode: either sentinels or cluster nodes, not both');
  if (sentinel) return 'sentinel';
  if (cluster) return 'cluster';
  if (!o.url) throw new ConfigError('redisUrl: set the Redis URL (redis://host:port) of the coordination');
  return 'standalone';
}

/**
 * The key prefix as a Cluster needs it: a hash tag, so that every key below it hashes to one slot
 * (Redis hashes the first `{...}` of a key name). `custodyflow:` becomes `{custodyflow}:`; a prefix
 * that opens with a hash tag already is kept.
 */
export function clusterKeyPrefix(prefix: string): string {
  if (/^\{[^{}]+\}/.test(prefix)) return prefix;
  const m = /^(.*?)(:*)$/.exec(prefix)!;
  // Braces inside would end the tag early (or leave it empty: keys spread over slots).
  return `{${m[1].replace(/[{}]/g, '') || 'custodyflow'}}${m[2]}`;
}

/** What the coordinator needs of a connection: a Redis, or a Cluster typed as one (the commands used exist on both). */
export type RedisClient = Redis;

/**
 * Open a client of `o` (connecting in the background) with `extra` client options (retries,
 * offline queue). In Cluster mode `extra` goes to every node's connection, and the offline
 * queue and auto-pipelining settings to the cluster.
 * @throws {ConfigError} as {@link redisModeOf} and {@link checkRedisUrl}.
 */
export function connectRedis(o: RedisConnectionOptions, extra: RedisOptions): RedisClient {
  // Loaded only with coordination on: a connection without it never loads ioredis.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const IORedis = require('ioredis') as typeof import('ioredis');
  const mode = redisModeOf(o);
  const common: RedisOptions = {
    connectTimeout: o.connectTimeoutMs ?? 5000,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    ...(o.password ? { password: o.password } : {}),
    ...(o.username ? { username: o.username } : {}),
  };
  if (mode === 'standalone') {
    const url = checkRedisUrl(o.url!);
    const tls = o.tls || url.protocol === 'rediss:' ? { tls: { servername: url.hostname } } : {};
    return new IORedis.Redis(o.url!, { ...common, ...tls, ...extra });
  }
  if (mode === 'sentinel') {
    return new IORedis.Redis({
      ...common,
      ...extra,
      sentinels: o.sentinels,
      name: o.masterName || DEFAULT_MASTER_NAME,
      ...(o.sentinelPassword ? { sentinelPassword: o.sentinelPassword } : {}),
      ...(o.sentinelUsername ? { sentinelUsername: o.sentinelUsername } : {}),
      ...(o.tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      // Ask the sentinels again every 0.1-1 s while none answers, as the standalone retries. (No
      // failover detector: ioredis' can end a client that is connecting for good; a killed master
      // closes the connection, and the reconnect asks the sentinels.)
      sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
    });
  }
  const { enableOfflineQueue, enableAutoPipelining, ...nodeOptions } = extra;
  const cluster: Cluster = new IORedis.Cluster(o.clusterNodes!, {
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(enableAutoPipelining !== undefined ? { enableAutoPipelining } : {}),
    clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
    redisOptions: { ...common, ...nodeOptions, ...(o.tls ? { tls: {} } : {}) },
  });
  return cluster as unknown as RedisClient;
}

/** The server a connection talks to: its address and its `run_id` (a new one at every start of the process). */
export interface ServerIdentity {
  /** `host:port` as connected. */
  address: string;
  /** `INFO server` run_id. */
  runId: string;
}

/** The `run_id` line of an `INFO server` answer ('' when absent). */
function runIdOf(info: string): string {
  return /(?:^|\n)run_id:([0-9a-f]+)/.exec(info)?.[1] ?? '';
}

/** The run_id of the server that holds a key (lua.ts). */
const RUN_ID_SCRIPTS: Record<string, LuaScript> = { cfRunId: { lua: "return string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''", keys: 1 } };

/**
 * Which server `redis` talks to now. Standalone and Sentinel: the socket's peer and `INFO
 * server`; Cluster: the master of the slot of `key` (the prefix's slot: every key is there).
 * @throws what the commands throw (rejects): the connection went.
 */
export async function serverOf(redis: RedisClient, mode: RedisMode, key: string): Promise<ServerIdentity> {
  if (mode !== 'cluster') {
    const info = await redis.info('server');
    const stream = (redis as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
    return { address: stream?.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort}` : '', runId: runIdOf(info) };
  }
  // Asked through a script on `key`: the client routes it to the slot's master (following a MOVED),
  // so the run_id is that of the server that holds the keys now, and the slot table is up to date after it.
  const cluster = redis as unknown as Cluster;
  const runId = String(await withScripts<{ cfRunId(key: string): Promise<string> }, Cluster>(cluster, RUN_ID_SCRIPTS).cfRunId(key));
  const slot = Number(await cluster.cluster('KEYSLOT', key));
  return { address: cluster.slots[slot]?.[0] ?? '', runId };
}
