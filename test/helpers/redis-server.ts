/**
 * A real `redis-server` (Debian's package; `.ci/run` installs it when missing) for the
 * scale-out tests and benchmark: started on a free loopback port with no persistence (`--save ''
 * --appendonly no`: a restart loses every key, as a crash of an unpersisted Redis does), waited
 * for until it answers, and stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort, sleep } from './red-process';

/** What a {@link RedisServer} runs (default: `redis-server` with no config file, no persistence). */
export interface RedisServerOptions {
  /**
   * `redis-sentinel` to run a Sentinel (test/helpers/redis-sentinel.ts): the config file is then
   * required (a sentinel rewrites it) and the persistence options are left out (a sentinel has no data).
   */
  program?: 'redis-server' | 'redis-sentinel';
  /** A config file, given first on the command line (the options after it override it). */
  configFile?: string;
}

/** A redis-server child process on 127.0.0.1. `await start()`, `await stop()`; `restart()` keeps the port. */
export class RedisServer {
  /** The port it listens on (0 until started). */
  port = 0;
  /** Its stdout and stderr so far. */
  log = '';
  #child: ChildProcess | undefined;

  /** @param options the program and its config file (default: a plain `redis-server`). */
  constructor(private readonly options: RedisServerOptions = {}) {}

  /** `redis://127.0.0.1:<port>`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The server's pid while it runs (undefined once it exited or was killed by a signal). */
  get pid(): number | undefined {
    return this.#child?.exitCode === null && this.#child.signalCode === null ? this.#child.pid : undefined;
  }

  /**
   * Spawn `redis-server` (on the port of an earlier start when there was one, else a free one) and
   * wait until it answers PING.
   * @param extra more command-line options, e.g. `['--requirepass', 'secret']`.
   * @throws {Error} when redis-server is not installed, exits, or does not answer within 10 s.
   */
  async start(extra: string[] = []): Promise<void> {
    if (!this.port) this.port = await freePort();
    const program = this.options.program ?? 'redis-server';
    const persistence = program === 'redis-server' ? ['--save', '', '--appendonly', 'no'] : [];
    const args = [...(this.options.configFile ? [this.options.configFile] : []), '--port', String(this.port), '--bind', '127.0.0.1', ...persistence, '--protected-mode', 'no', ...extra];
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    child.stdout!.on('data', (d) => (this.log += d));
    child.stderr!.on('data', (d) => (this.log += d));
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (e) => reject(new Error(`${program} could not be started (apt-get install -y ${program}): ${e.message}`)));
      child.once('exit', (code) => reject(new Error(`${program} exited (${code}):\n${this.log.slice(-2000)}`)));
    });
    failed.catch(() => undefined);
    const deadline = Date.now() + 10000;
    for (;;) {
      if (await Promise.race([this.#ping(), failed])) return;
      if (Date.now() > deadline) throw new Error(`${program} did not answer on port ${this.port}:\n${this.log.slice(-2000)}`);
      await sleep(50);
    }
  }

  /** True when a raw RESP PING on the port is answered (with PONG or NOAUTH: it is up either way). */
  #ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const s = net.connect(this.port, '127.0.0.1');
      let text = '';
      s.setTimeout(500, () => (s.destroy(), resolve(false)));
      s.on('error', () => resolve(false));
      s.on('connect', () => s.write('PING\r\n'));
      s.on('data', (d) => {
        text += d;
        if (text.includes('\r\n')) {
          s.destroy();
          resolve(text.startsWith('+PONG') || text.includes('NOAUTH'));
        }
      });
    });
  }

  /** Stop it by its pid (SIGTERM, SIGKILL after 5 s) and wait for the exit. With `kill`: SIGKILL at once. */
  async stop(opts: { kill?: boolean } = {}): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid!, opts.kill ? 'SIGKILL' : 'SIGTERM');
    await Promise.race([exited, sleep(5000)]);
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, 'SIGKILL');
      await exited;
    }
  }

  /** Stop it (SIGKILL: no persistence, every key is lost) and start it again on the same port after `downMs`. */
  async restart(downMs = 0, extra: string[] = []): Promise<void> {
    await this.stop({ kill: true });
    if (downMs > 0) await sleep(downMs);
    await this.start(extra);
  }
}
