/**
 * A Redis Sentinel setup of real Debian processes for the failover tests (docs/scale-out.md
 * "Sentinel"): a `redis-server` master, one replica of it (`--replicaof`) and three `redis-sentinel`
 * processes (Debian's package `redis-sentinel`; `.ci/run` installs it when missing), all on free
 * loopback ports, each in its own temporary directory (a sentinel rewrites its config file; a
 * replica writes the master's snapshot there while it syncs). No persistence.
 *
 * The sentinels monitor the master as {@link RedisSentinelSetup.masterName} with a quorum of 2,
 * `down-after-milliseconds` 1,000 and a short `failover-timeout`, so a master killed with SIGKILL
 * ({@link RedisSentinelSetup.killMaster}) is replaced by the replica within a few seconds
 * ({@link RedisSentinelSetup.waitForNewMaster}). Optional passwords: the Redis one (`requirepass`
 * on both servers, `masterauth` on both, `sentinel auth-pass` on the sentinels) and the sentinels'
 * own (`requirepass` in sentinel.conf: a client AUTHs on a sentinel with it, and the sentinels use
 * it with each other).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RedisServer } from './redis-server';
import { freePort, sleep } from './red-process';

/** How a {@link RedisSentinelSetup} is set up. */
export interface RedisSentinelOptions {
  /** The master's name at the sentinels (default `mymaster`). */
  masterName?: string;
  /** The Redis password (`requirepass` and `masterauth` of master and replica; `auth-pass` of the sentinels); none by default. */
  password?: string;
  /** The sentinels' own password (`requirepass` in sentinel.conf); none by default. */
  sentinelPassword?: string;
  /** `down-after-milliseconds`: how long a master does not answer before a sentinel sees it down (default 1,000). */
  downAfterMs?: number;
  /** `failover-timeout`, ms (default 5,000). */
  failoverTimeoutMs?: number;
}

/** The master, its replica and three sentinels (see the module comment). `await start()`, `await stop()`. */
export class RedisSentinelSetup {
  readonly masterName: string;
  /** The first master. */
  readonly master: RedisServer;
  /** Its replica, promoted at a failover. */
  readonly replica: RedisServer;
  /** The three sentinels. */
  readonly sentinelServers: RedisServer[] = [];
  /** The master's port as the sentinels last reported it ({@link waitForNewMaster}); the first master's after {@link start}. */
  masterPort = 0;
  /** When {@link killMaster} killed the master, epoch ms (0: not yet). */
  killedAt = 0;
  /** When a sentinel first reported the new master ({@link waitForNewMaster}), epoch ms (0: not yet). */
  promotedAt = 0;
  readonly #options: RedisSentinelOptions;
  readonly #dirs: string[] = [];

  /** Make the temporary directories; nothing runs until {@link start}. */
  constructor(options: RedisSentinelOptions = {}) {
    this.#options = options;
    this.masterName = options.masterName ?? 'mymaster';
    this.master = new RedisServer();
    this.replica = new RedisServer();
  }

  /** The sentinels' addresses, as a Sentinel client takes them. */
  get sentinels(): Array<{ host: string; port: number }> {
    return this.sentinelServers.map((s) => ({ host: '127.0.0.1', port: s.port }));
  }

  /** `127.0.0.1:<port>, ...` of the sentinels (the config node's `redisSentinels`). */
  get sentinelList(): string {
    return this.sentinels.map((s) => `${s.host}:${s.port}`).join(', ');
  }

  #dir(prefix: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.#dirs.push(dir);
    return dir;
  }

  /**
   * Start the master, the replica (waited for until it is in sync) and the three sentinels (waited
   * for until each knows the replica and the two other sentinels).
   * @throws {Error} when a process does not start, or the setup is not complete within 20 s (after stopping what started).
   */
  async start(): Promise<void> {
    const { password } = this.#options;
    const auth = password ? ['--requirepass', password, '--masterauth', password] : [];
    try {
      await this.master.start(['--dir', this.#dir('cf-sentinel-master-'), ...auth]);
      this.masterPort = this.master.port;
      await this.replica.start(['--dir', this.#dir('cf-sentinel-replica-'), '--replicaof', '127.0.0.1', String(this.master.port), ...auth]);
      await this.#until(async () => /master_link_status:up/.test(await this.#command(this.replica.port, password, 'INFO', 'replication')), 'the replica is in sync');
      for (let i = 0; i < 3; i++) {
        const dir = this.#dir(`cf-sentinel-${i}-`);
        const port = await freePort();
        const file = path.join(dir, 'sentinel.conf');
        fs.writeFileSync(file, this.#sentinelConf(port, dir));
        const sentinel = new RedisServer({ program: 'redis-sentinel', configFile: file });
        sentinel.port = port;
        this.sentinelServers.push(sentinel);
        await sentinel.start();
      }
      // Each sentinel knows the replica (from the master's INFO) and the two others (their hello messages).
      await this.#until(async () => {
        for (const s of this.sentinelServers) {
          const master = await this.#sentinelCommand(s.port, 'SENTINEL', 'MASTER', this.masterName);
          if (!/num-slaves\s+1\b/.test(master) || !/num-other-sentinels\s+2\b/.test(master)) return false;
        }
        return true;
      }, 'every sentinel knows the replica and the two other sentinels');
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  #sentinelConf(port: number, dir: string): string {
    const { password, sentinelPassword } = this.#options;
    return [
      `port ${port}`,
      'bind 127.0.0.1',
      'protected-mode no',
      `dir ${dir}`,
      `sentinel monitor ${this.masterName} 127.0.0.1 ${this.master.port} 2`,
      `sentinel down-after-milliseconds ${this.masterName} ${this.#options.downAfterMs ?? 1000}`,
      `sentinel failover-timeout ${this.masterName} ${this.#options.failoverTimeoutMs ?? 5000}`,
      `sentinel parallel-syncs ${this.masterName} 1`,
      ...(password ? [`sentinel auth-pass ${this.masterName} ${password}`] : []),
      ...(sentinelPassword ? [`requirepass ${sentinelPassword}`] : []),
      '',
    ].join('\n');
  }

  /**
   * Kill the current master with SIGKILL (by its pid: no goodbye, a crash) and note when ({@link killedAt}).
   * @returns the killed master's port.
   */
  async killMaster(): Promise<number> {
    const current = [this.master, this.replica].find((s) => s.port === this.masterPort && s.pid !== undefined);
    if (!current) throw new Error(`no running master on port ${this.masterPort}`);
    this.killedAt = Date.now();
    await current.stop({ kill: true });
    return current.port;
  }

  /**
   * Poll the sentinels (`SENTINEL get-master-addr-by-name`) every 50 ms until one reports a master
   * other than the one of {@link masterPort}; note when ({@link promotedAt}).
   * @returns the new master's port (also in {@link masterPort}).
   * @throws {Error} after `ms` (default 30 s) with what the sentinels said.
   */
  async waitForNewMaster(ms = 30000): Promise<number> {
    const old = this.masterPort;
    const deadline = Date.now() + ms;
    let said = '';
    for (;;) {
      const answers = await Promise.all(this.sentinelServers.map((s) => this.#sentinelCommand(s.port, 'SENTINEL', 'get-master-addr-by-name', this.masterName).catch((e: Error) => e.message)));
      said = answers.join(' | ');
      const moved = answers.map((a) => /^127\.0\.0\.1\s+(\d+)$/.exec(a.trim())).find((m) => m && Number(m[1]) !== old);
      if (moved) {
        this.promotedAt = Date.now();
        this.masterPort = Number(moved[1]);
        return this.masterPort;
      }
      if (Date.now() > deadline) throw new Error(`no new master within ${ms} ms; the sentinels said: ${said}`);
      await sleep(50);
    }
  }

  /** Stop every process (by pid) and remove the temporary directories. */
  async stop(): Promise<void> {
    await Promise.allSettled([...this.sentinelServers, this.replica, this.master].map((s) => s.stop()));
    for (const dir of this.#dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  }

  /** Poll `check` every 100 ms. @throws {Error} naming `what` after 20 s. */
  async #until(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 20000;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`the Sentinel setup did not come up: ${what}`);
      await sleep(100);
    }
  }

  #sentinelCommand(port: number, ...args: string[]): Promise<string> {
    return this.#command(port, this.#options.sentinelPassword, ...args);
  }

  /**
   * One command on 127.0.0.1:`port` (AUTH first with `password`), on a connection of its own.
   * @returns the reply flattened to text (an array's items joined by newlines).
   * @throws the connection's or the command's error.
   */
  async #command(port: number, password: string | undefined, ...args: string[]): Promise<string> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const IORedis = require('ioredis') as typeof import('ioredis');
    const r = new IORedis.Redis({ host: '127.0.0.1', port, ...(password ? { password } : {}), lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000, enableOfflineQueue: false });
    r.on('error', () => undefined);
    try {
      await r.connect();
      const reply = await r.call(args[0], ...args.slice(1));
      return flatten(reply);
    } finally {
      r.disconnect();
    }
  }
}

/** A RESP reply as text: arrays flattened, joined by newlines; nil as ''. */
function flatten(reply: unknown): string {
  if (Array.isArray(reply)) return reply.map(flatten).join('\n');
  if (reply === null || reply === undefined) return '';
  return Buffer.isBuffer(reply) ? reply.toString('utf8') : String(reply);
}
