/**
 * Coordination of several Node-RED instances on one API key through Redis (docs/scale-out.md):
 * the one connection of a config node to Redis and everything the instances share through it.
 *
 * - **Claims** ({@link Coordinator.claim}): before an approver decides an action it claims it
 *   (a Lua script: `SET` if absent, with a lease in ms, fenced by an increasing number from
 *   `INCR`). Another instance sees the claim and waits; a claim whose holder died is taken over
 *   when its lease ends. "Decided" ({@link Coordinator.complete}) is written only after the API
 *   accepted the call (or for a decision that calls nothing: hold, expired, dry run); a failed
 *   call releases the claim ({@link Coordinator.release}) so the action is decided again.
 * - **Velocity windows**: lib/approver/velocity-redis.ts (`RedisVelocityWindows`), through {@link Coordinator.run}.
 * - **The audit stream** ({@link Coordinator.audit}): every audit line also goes to one Redis
 *   stream (`XADD`), in order per instance, queued while Redis is away.
 * - **Data loss**: an epoch key is set on the first connect; when Redis comes back without it
 *   (restarted with no persistence, flushed) the coordinator says so ('dataLoss', so each user
 *   can write back what it knows) and takes no new claim for one lease (state `recovering`),
 *   so a decision in flight before the loss finishes first.
 *
 * Fail closed: while Redis cannot be reached, every call rejects with
 * {@link CoordinationUnavailableError} (code `ECOORDINATION`) at once; nothing waits in a queue
 * of the client (`enableOfflineQueue: false`) and nothing is retried behind the caller's back
 * (`maxRetriesPerRequest: 0`). The client reconnects by itself every 0.1-1 s.
 *
 * Keys, all below the key prefix (default `custodyflow:`): `epoch`, `fence`,
 * `claim:<mode>:<client_id>:<action_id>`, `decided:<mode>:<client_id>:<action_id>`,
 * `{velocity:<scope>:<mode>:<asset>}:*` (lib/approver/velocity-redis.ts), `audit` (stream), channel
 * `decided` (pub/sub), and the submission journal's keys (shared-journal.ts).
 *
 * Redis is reached by URL, through Sentinel, or as a Cluster (redis-connection.ts); in a Cluster
 * the prefix is a hash tag, so every key is in one slot and the scripts run on one shard.
 * **A failover is handled like a data loss**: replication is asynchronous, so a promoted replica
 * may lack the last writes. Every (re)connect asks which server it reached (`run_id`); another
 * server than before (a failover, or the same one restarted) is a 'failover' event and a
 * 'dataLoss' as above, and the epoch key is renewed so every instance sees the same loss.
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import crypto from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';
import { ConfigError } from '../api/errors';
import { abortableSleep } from '../support/backoff';
import { SCRIPTS, type Scripts } from './coordinator-scripts';
import { CommandBatch } from './command-batch';
import { KeyWaiters } from './key-waiters';
import { withScripts } from './lua';
import { clusterKeyPrefix, connectRedis, redisModeOf, serverOf, type RedisConnectionOptions, type RedisMode, type ServerIdentity } from './redis-connection';

export { checkRedisUrl, parseRedisAddresses, clusterKeyPrefix, DEFAULT_MASTER_NAME, type RedisMode, type RedisAddress } from './redis-connection';


/**
 * Redis cannot be reached (or has not come back from a data loss yet): nothing was done. `code`
 * is `'ECOORDINATION'`. The message never carries the password.
 */
export class CoordinationUnavailableError extends Error {
  override name = 'CoordinationUnavailableError';
  /** Always `ECOORDINATION`. */
  readonly code = 'ECOORDINATION';
}

/**
 * Options of a {@link Coordinator}: where Redis is (one of `url`, `sentinels` with `masterName`,
 * `clusterNodes`; redis-connection.ts `RedisConnectionOptions`) and what is shared through it.
 */
export interface CoordinatorOptions extends RedisConnectionOptions {
  /** Prefix of every key (default `custodyflow:`): instances that share one must share it. In Cluster mode it is made a hash tag (`{custodyflow}:`). */
  keyPrefix?: string;
  /** Lease of a claim, ms (default 60,000): longer than a decision can take (the request timeout and its retries). */
  leaseMs?: number;
  /** This instance's name in claims and the audit stream (default `<hostname>/<pid>`). */
  instance?: string;
  /** How long "decided" is kept, ms (default 8 days: past any action's expiry). */
  decidedTtlMs?: number;
  /** Approximate most entries of the audit stream (`XADD MAXLEN ~`; default 1,000,000). */
  auditStreamMaxLength?: number;
}

/** A change of the Redis master the coordinator talks to (the 'failover' event). */
export interface FailoverInfo {
  /** `host:port` of the master before. */
  from: string;
  /** `host:port` of the master now (the same address when the server restarted). */
  to: string;
  /** When it was seen, epoch ms. */
  at: number;
}

/**
 * Where the coordinator stands: `connecting` (never connected yet), `ready`, `recovering` (Redis
 * came back without its data: no new claim for one lease), `down` (lost; reconnecting), `closed`.
 */
export type CoordinationState = 'connecting' | 'ready' | 'recovering' | 'down' | 'closed';

/** An action's claim as held: the fence number (increases with every claim in this Redis), holder and claim id. */
export interface Claim {
  /** The claim's key (without the prefix): `<mode>:<client_id>:<action_id>`. */
  id: string;
  fence: number;
  instance: string;
  claimId: string;
}

/** What {@link Coordinator.claim} found. */
export type ClaimResult =
  /** Claimed (by this call, or still by this claim id); `fresh` when the claim was new. */
  | { kind: 'claimed'; claim: Claim; fresh: boolean }
  /** Already decided: the record that {@link Coordinator.complete} stored. */
  | { kind: 'decided'; record: string }
  /** Held by another claim, for `pttl` ms more. */
  | { kind: 'held'; holder: Claim; pttl: number };

/** How long a failed write-back waits before it is tried again while connected, ms. */
const UNAVAILABLE_WAIT_MS = 500;

/** Default {@link CoordinatorOptions.leaseMs}: 60 s. */
export const DEFAULT_LEASE_MS = 60_000;
/** Default {@link CoordinatorOptions.keyPrefix}. */
export const DEFAULT_KEY_PREFIX = 'custodyflow:';

/**
 * The Redis connection of a config node and what it shares (see the module comment).
 * Events: `state` (state, reason?) on every change; `warning` (text) from {@link Coordinator.warn};
 * `dataLoss` () when Redis came back without its data (listeners write back what they know; see {@link Coordinator.onDataLoss});
 * `failover` ({@link FailoverInfo}) when the master changed (handled as a data loss too).
 */
export class Coordinator extends EventEmitter {
  /** This instance's name in claims and the audit stream. */
  readonly instance: string;
  readonly leaseMs: number;
  readonly prefix: string;
  readonly decidedTtlMs: number;
  /** How Redis is reached: by URL, through Sentinel, or a Cluster. */
  readonly mode: RedisMode;
  #state: CoordinationState = 'connecting';
  #reason = '';
  readonly #redis: Redis & Scripts;
  /** The per-action commands, sent in batches (command-batch.ts). */
  readonly #batch: CommandBatch;
  readonly #sub: Redis;
  #epoch: string | undefined;
  #recoverTimer: NodeJS.Timeout | undefined;
  /** When Redis was last seen to have lost its data (epoch ms), 0 never. */
  #lostAt = 0;
  /** The server of the last connect. */
  #server: ServerIdentity | undefined;
  #masterSince = 0;
  #failovers = 0;
  /** Waits per published key (key-waiters.ts). */
  readonly #waiters: KeyWaiters;
  readonly #auditQueue: string[][] = [];
  #auditFlushing = false;
  readonly #auditMax: number;
  readonly #lossHandlers = new Set<() => Promise<void>>();
  /** Aborted by {@link close}: every wait ends. */
  readonly #closing = new AbortController();

  /**
   * Connect (in the background: {@link state} tells) to the Redis of `options`.
   * @throws {ConfigError} for a bad URL (naming `redisUrl`), sentinels and cluster nodes both
   *   given (naming `redisMode`), or a lease under 1 s (naming `leaseMs`).
   */
  constructor(options: CoordinatorOptions) {
    super();
    this.#waiters = new KeyWaiters(this.#closing.signal);
    // Every action waiting on a claim listens here: as many as there are actions in hand.
    setMaxListeners(0, this.#closing.signal);
    this.mode = redisModeOf(options);
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!(this.leaseMs >= 1000)) throw new ConfigError(`leaseMs: at least 1000 ms, got ${this.leaseMs}`);
    this.prefix = this.mode === 'cluster' ? clusterKeyPrefix(options.keyPrefix ?? DEFAULT_KEY_PREFIX) : (options.keyPrefix ?? DEFAULT_KEY_PREFIX);
    this.instance = options.instance || `${os.hostname()}/${process.pid}`;
    this.decidedTtlMs = options.decidedTtlMs ?? 8 * 24 * 3600_000;
    this.#auditMax = options.auditStreamMaxLength ?? 1_000_000;
    // No auto-pipelining: ioredis 6.0.0's can throw out of its callback (an uncaught TypeError in
    // autoPipelining.js when a pipeline answers short), which ends the Node-RED process.
    this.#redis = connectRedis(options, { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false }) as Redis & Scripts;
    withScripts<Scripts>(this.#redis, SCRIPTS);
    this.#batch = new CommandBatch(this.#redis, (e) => this.#failure(e));
    this.#sub = connectRedis(options, { maxRetriesPerRequest: null });
    this.#redis.on('ready', () => void this.#onReady());
    if (this.mode === 'cluster') {
      // The connection does not close when the cluster promotes a replica: look at every change of
      // the slots, and every third of a lease at most 1 s apart, so that every instance sees the
      // failover within the lease that the first to see it waits before claiming again.
      for (const event of ['refresh', '-node', '+node']) this.#redis.on(event, () => void this.#checkMaster());
      this.#masterPoll = setInterval(() => void this.#checkMaster(), Math.min(1000, this.leaseMs / 3));
      this.#masterPoll.unref();
    }
    this.#redis.on('close', () => this.#down('the connection to Redis closed'));
    this.#redis.on('error', (e: Error) => (this.#reason = e.message));
    this.#sub.on('error', () => undefined);
    this.#sub.on('message', (channel: string, message: string) => {
      const listeners = this.#channels.get(channel);
      if (listeners) {
        for (const fn of Array.from(listeners)) fn(message);
        return;
      }
      const nl = message.indexOf('\n');
      if (nl < 0) this.#waiters.wake(message);
      else this.#waiters.wake(message.slice(0, nl), message.slice(nl + 1) || undefined);
    });
    this.#sub.subscribe(this.key('decided')).catch(() => undefined);
  }

  /** Listeners of the channels of {@link subscribe}, by full channel name. */
  readonly #channels = new Map<string, Set<(message: string) => void>>();

  /**
   * Listen to the pub/sub channel `<prefix><name>` (a service's change stream, e.g. a review
   * queue's). A message published while the subscriber connection is away is lost: a listener
   * that must not miss one also checks a counter now and then (lib/review/store.ts does).
   * @returns the function that stops listening (the channel is unsubscribed with its last listener).
   */
  subscribe(name: string, listener: (message: string) => void): () => void {
    const channel = this.key(name);
    let set = this.#channels.get(channel);
    if (!set) {
      this.#channels.set(channel, (set = new Set()));
      this.#sub.subscribe(channel).catch(() => undefined);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#channels.get(channel) === set) {
        this.#channels.delete(channel);
        if (this.#state !== 'closed') this.#sub.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  /** Where the coordinator stands. */
  get state(): CoordinationState {
    return this.#state;
  }

  /** Why it is not ready (the last connection error), '' when ready. */
  get reason(): string {
    return this.#state === 'ready' ? '' : this.#reason;
  }

  /** When Redis was last seen to have lost its data, epoch ms (0: never, since this coordinator started). */
  get lostAt(): number {
    return this.#lostAt;
  }

  /** `host:port` of the Redis (the master) of the last connect; '' before the first. */
  get master(): string {
    return this.#server?.address ?? '';
  }

  /** Since when that master is the one, epoch ms (the first connect, or the last failover); 0 before the first connect. */
  get masterSince(): number {
    return this.#masterSince;
  }

  /** How often the master changed since this coordinator started: another server, or the same one restarted (a new `run_id`). */
  get failovers(): number {
    return this.#failovers;
  }

  /** The full key of `parts` joined by `:` below the prefix. */
  key(...parts: string[]): string {
    return this.prefix + parts.join(':');
  }

  #setState(state: CoordinationState, reason = ''): void {
    if (this.#state === 'closed') return;
    if (reason) this.#reason = reason;
    if (state === this.#state) return;
    this.#state = state;
    this.emit('state', state, reason || undefined);
    if (state === 'ready') this.#waiters.wakeAll();
  }

  #down(reason: string): void {
    if (this.#state === 'closed') return;
    clearTimeout(this.#recoverTimer);
    this.#setState(this.#state === 'connecting' ? 'connecting' : 'down', this.#reason || reason);
  }

  /**
   * On every (re)connect: which server is it (a failover?), and did Redis lose its data (the
   * epoch)? Then ready, or recovering.
   */
  async #onReady(): Promise<void> {
    let epoch: string;
    let created: number;
    let server: ServerIdentity;
    try {
      server = await serverOf(this.#redis, this.mode, this.key('epoch'));
      const changed = this.#server !== undefined && server.runId !== this.#server.runId;
      [epoch, created] = await this.#redis.cfEpoch(this.key('epoch'), crypto.randomUUID(), changed ? (this.#epoch ?? '') : '');
    } catch (e) {
      this.#reason = (e as Error).message;
      return; // the connection went again; the next 'ready' tries again
    }
    const now = Date.now();
    if (!this.#server) this.#masterSince = now;
    else if (server.runId !== this.#server.runId) {
      const info: FailoverInfo = { from: this.#server.address, to: server.address, at: now };
      this.#masterSince = now;
      this.#failovers++;
      this.emit('failover', info);
    }
    this.#server = server;
    const lost = this.#epoch !== undefined && (epoch !== this.#epoch || created === 1);
    this.#epoch = epoch;
    if (lost) {
      this.#lostAt = now;
      this.#recoverUntil = now + this.leaseMs;
      this.#writeBack = new Set(this.#lossHandlers);
      this.#setState('recovering', `Redis came back without its data${this.#masterSince === now && this.#failovers > 0 ? ' (another master: a failover may lose the last writes)' : ''}: no new claim for one lease while decisions in flight finish`);
    }
    await this.#recover();
  }

  /** The handlers whose write-back after the last data loss has not succeeded yet. */
  #writeBack = new Set<() => Promise<void>>();
  /** Until when (epoch ms) no new claim is taken after the last data loss: a reconnect meanwhile does not end the recovery early. */
  #recoverUntil = 0;

  /**
   * Ready, unless a recovery is still on: its write-backs are run (again, those that failed: the
   * connection may have gone meanwhile) and the lease after the loss waited out first.
   */
  async #recover(): Promise<void> {
    clearTimeout(this.#recoverTimer);
    if (this.#writeBack.size === 0 && Date.now() >= this.#recoverUntil) {
      this.#setState('ready');
      void this.#flushAudit();
      return;
    }
    this.#setState('recovering');
    const running = Array.from(this.#writeBack);
    const results = await Promise.allSettled(running.map((h) => h()));
    results.forEach((r, i) => r.status === 'fulfilled' && this.#writeBack.delete(running[i]));
    void this.#flushAudit();
    if (this.#state !== 'recovering') return; // the connection went again: the next connect goes on
    // After the lease (or soon, to write back again what failed), while connected.
    const wait = this.#writeBack.size > 0 ? UNAVAILABLE_WAIT_MS : Math.max(0, this.#recoverUntil - Date.now());
    this.#recoverTimer = setTimeout(() => {
      if (this.#redis.status === 'ready' && this.#state === 'recovering') void this.#recover();
    }, wait);
  }

  /** True while a Cluster failover is being checked ({@link #recheck}). */
  #rechecking = false;
  /** Cluster mode: the timer of {@link #checkMaster}. */
  #masterPoll: NodeJS.Timeout | undefined;

  /**
   * Cluster mode: the master of the prefix's slot may change without the connection closing (the
   * cluster promotes a replica; the client follows). Hold everything (state down) and check the
   * server and the epoch again, as after a reconnect, until it is checked.
   */
  async #recheck(): Promise<void> {
    if (this.#rechecking || this.#state === 'closed') return;
    this.#rechecking = true;
    try {
      clearTimeout(this.#recoverTimer);
      this.#setState('down', 'the Redis master of the key prefix changed');
      while (this.#state === 'down') {
        await this.#onReady();
        if (this.#state === 'down') await abortableSleep(200, this.#closing.signal);
      }
    } finally {
      this.#rechecking = false;
    }
  }

  /** Cluster mode, on a change of the cluster's nodes or slots: is the prefix's master another server now? */
  async #checkMaster(): Promise<void> {
    if (!this.#server || this.#rechecking || (this.#state !== 'ready' && this.#state !== 'recovering')) return;
    const server = await serverOf(this.#redis, this.mode, this.key('epoch')).catch(() => undefined);
    if (server && server.runId !== this.#server.runId) await this.#recheck();
  }

  /**
   * Register `handler`, run (and awaited, all together) each time Redis comes back without its
   * data, before claims resume: write back what this instance knows. @returns the function that unregisters it.
   */
  onDataLoss(handler: () => Promise<void>): () => void {
    this.#lossHandlers.add(handler);
    return () => this.#lossHandlers.delete(handler);
  }

  /**
   * Report a coordination problem that stops nothing but deserves the operator's eye (for
   * example a takeover that could not read its action first). Emitted as the `warning` event
   * (text: string), which the config node logs with `node.warn`.
   */
  warn(text: string): void {
    this.emit('warning', text);
  }

  /** @throws {CoordinationUnavailableError} unless the connection is up (`ready` or `recovering`). */
  #connected(): void {
    if (this.#state === 'closed') throw new CoordinationUnavailableError('coordination: closed');
    if (this.#redis.status !== 'ready' || (this.#state !== 'ready' && this.#state !== 'recovering')) {
      throw new CoordinationUnavailableError(`coordination: Redis is unavailable${this.#reason ? ` (${this.#reason})` : ''}`);
    }
  }

  /**
   * Run `fn` on the connection.
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable, or the command
   *   failed on the connection (then it may or may not have run: callers make it safe to repeat).
   */
  async run<T>(fn: (redis: Redis & Scripts) => Promise<T>): Promise<T> {
    this.#connected();
    try {
      return await fn(this.#redis);
    } catch (e) {
      throw this.#failure(e as Error);
    }
  }

  /** What a failed command means: a script's own error (a bug) stays what it is; a connection failure is "unavailable". */
  #failure(err: Error): Error {
    if (/ERR|WRONGTYPE|NOSCRIPT|CROSSSLOT/.test(err.message) && this.#redis.status === 'ready') return err;
    return new CoordinationUnavailableError(`coordination: Redis is unavailable (${err.message})`);
  }

  /** Run one per-action script in the next batch (command-batch.ts). @throws as {@link run} (rejects). */
  async #batched<T>(add: (p: Scripts) => unknown): Promise<T> {
    this.#connected();
    return this.#batch.run<T>((p) => add(p as unknown as Scripts));
  }

  /**
   * Resolve once the coordinator is `ready` (with `claims`: not `recovering` either).
   * @param signal ends the wait early (resolves; the caller checks why).
   */
  async whenReady(signal?: AbortSignal, claims = true): Promise<void> {
    const ok = () => this.#state === 'ready' || (!claims && this.#state === 'recovering');
    while (!ok() && !signal?.aborted && !this.#closing.signal.aborted) {
      await this.#waiters.wait('', 1000, signal);
    }
  }

  /**
   * Wait until the claim `id` is decided or released (published), at most `ms`.
   * @param signal ends the wait early.
   * @returns the decided record (as {@link complete} stored it) when it was decided; undefined
   *   when released, timed out or ended: claim again to learn more.
   */
  waitForClaim(id: string, ms: number, signal?: AbortSignal): Promise<string | undefined> {
    return this.#waiters.wait(this.key('decided', id), ms, signal);
  }

  /**
   * Claim `id` (`<mode>:<client_id>:<action_id>`) for {@link leaseMs}, with `claimId` (the same
   * id again keeps the claim: a repeat after a lost answer is safe).
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable or recovering from a data loss.
   */
  async claim(id: string, claimId: string): Promise<ClaimResult> {
    if (this.#state === 'recovering') throw new CoordinationUnavailableError('coordination: Redis lost its data; no new claim until the decisions in flight finish');
    const runId = this.mode === 'cluster' ? (this.#server?.runId ?? '') : '';
    const [kind, value, n] = await this.#batched<[string, string, number]>((r) => r.cfClaim(this.key('claim', id), this.key('decided', id), this.key('fence'), this.instance, claimId, this.leaseMs, runId));
    if (kind === 'moved') {
      void this.#recheck();
      throw new CoordinationUnavailableError('coordination: the Redis master of the key prefix changed (a Cluster failover); no claim until it is checked');
    }
    if (kind === 'decided') return { kind, record: value };
    const h = JSON.parse(value) as Omit<Claim, 'id'>;
    const claim: Claim = { id, fence: Number(h.fence), instance: String(h.instance), claimId: String(h.claimId) };
    return kind === 'claimed' ? { kind, claim, fresh: n === 1 } : { kind: 'held', holder: claim, pttl: Number(n) };
  }

  /**
   * Before the call that acts on a claim: check it is still ours and extend its lease (or put it
   * back, after a data loss).
   * @returns `held` (go on), `lost` (another instance holds it now: do not call), `decided` (decided elsewhere: do not call).
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable (do not call).
   */
  async renew(claim: Claim): Promise<'held' | 'lost' | 'decided'> {
    const value = JSON.stringify({ fence: claim.fence, instance: claim.instance, claimId: claim.claimId });
    const n = await this.#batched<number>((r) => r.cfRenew(this.key('claim', claim.id), this.key('decided', claim.id), claim.claimId, value, this.leaseMs));
    return n === 1 ? 'held' : n === -2 ? 'decided' : 'lost';
  }

  /**
   * Record `claim` decided with `record` (kept {@link decidedTtlMs}), release the claim, wake the waiters.
   * @returns false when it had been decided already (the first record stays).
   * @throws {CoordinationUnavailableError} (rejects) when Redis is unavailable: call again once it is back.
   */
  async complete(claim: Claim, record: string): Promise<boolean> {
    const decided = this.key('decided', claim.id);
    return (await this.#batched<number>((r) => r.cfComplete(this.key('claim', claim.id), decided, claim.claimId, record, this.decidedTtlMs, this.key('decided'), decided))) === 1;
  }

  /**
   * Release `claim` without a decision (the call failed: the action is to be decided again).
   * @throws {CoordinationUnavailableError} (rejects); the claim then ends with its lease.
   */
  async release(claim: Claim): Promise<void> {
    const decided = this.key('decided', claim.id);
    await this.#batched((r) => r.cfRelease(this.key('claim', claim.id), claim.claimId, this.key('decided'), decided));
  }

  /**
   * Write back "decided" records after a data loss: `[id, record]` pairs, each kept
   * {@link decidedTtlMs} unless already there.
   * @throws {CoordinationUnavailableError} (rejects).
   */
  async restoreDecided(items: Array<[string, string]>): Promise<void> {
    for (let i = 0; i < items.length; i += 500) {
      const batch = items.slice(i, i + 500);
      await this.run(async (r) => {
        const p = r.pipeline();
        for (const [id, record] of batch) p.set(this.key('decided', id), record, 'PX', this.decidedTtlMs, 'NX');
        const results = await p.exec();
        const failed = results?.find(([err]) => err);
        if (failed) throw failed[0];
      });
    }
  }

  /**
   * Append an audit line to the shared stream `audit` (fields `instance`, `approver`, `line`: the
   * line's JSON), in order; queued while Redis is away (at most 100,000 lines; older ones are
   * dropped first and counted in {@link auditDropped}).
   */
  audit(approver: string, line: Record<string, unknown>): void {
    this.#auditQueue.push(['instance', this.instance, 'approver', approver, 'line', JSON.stringify(line)]);
    if (this.#auditQueue.length > 100_000) {
      this.#auditQueue.shift();
      this.auditDropped++;
    }
    void this.#flushAudit();
  }

  /** Audit lines dropped from a full queue during a long outage (they are in each instance's audit file). */
  auditDropped = 0;

  /** Audit lines waiting for Redis. */
  get auditQueued(): number {
    return this.#auditQueue.length;
  }

  async #flushAudit(): Promise<void> {
    if (this.#auditFlushing) return;
    this.#auditFlushing = true;
    try {
      while (this.#auditQueue.length > 0 && this.#redis.status === 'ready' && this.#state !== 'closed') {
        const batch = this.#auditQueue.slice(0, 200);
        const p = this.#redis.pipeline();
        for (const fields of batch) p.xadd(this.key('audit'), 'MAXLEN', '~', this.#auditMax, '*', ...fields);
        const results = await p.exec().catch(() => null);
        const sent = results ? results.findIndex(([err]) => err) : 0;
        const n = sent === -1 ? batch.length : sent;
        this.#auditQueue.splice(0, n);
        if (n < batch.length) break; // the connection went: the rest waits for 'ready'
      }
    } finally {
      this.#auditFlushing = false;
    }
  }

  /** Wait (at most `ms`) until the queued audit lines are in the stream. */
  async drainAudit(ms = 2000): Promise<void> {
    const until = Date.now() + ms;
    while (this.#auditQueue.length > 0 && Date.now() < until && this.#redis.status === 'ready') {
      await this.#flushAudit();
      if (this.#auditQueue.length > 0) await abortableSleep(20, this.#closing.signal);
    }
  }

  /**
   * Close both connections (after a short wait for queued audit lines); every wait ends. A
   * connection that is not up is dropped at once: a `QUIT` would wait in the subscriber's
   * offline queue for a Redis that may never answer (and its reconnecting would go on).
   */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    await this.drainAudit(1000);
    this.#setState('closed');
    this.#closing.abort();
    clearTimeout(this.#recoverTimer);
    clearInterval(this.#masterPoll);
    this.#redis.removeAllListeners('close');
    const quit = (r: Redis) => (r.status === 'ready' ? Promise.race([r.quit(), abortableSleep(1000, new AbortController().signal)]) : undefined);
    await Promise.allSettled([quit(this.#redis), quit(this.#sub)]);
    this.#redis.disconnect();
    this.#sub.disconnect();
  }
}
