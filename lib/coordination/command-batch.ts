/**
 * The per-action commands of the coordinator (coordinator.ts: claim, renew, complete, release)
 * sent in batches: the commands issued in one turn of the event loop go to Redis as one ioredis
 * pipeline (one write, one read), each settling with its own answer. A burst of actions (a feed's
 * catch-up delivers every pending action at once, to every instance) then costs a few writes
 * instead of one per action and instance. ioredis' explicit pipeline, not its auto-pipelining
 * (whose callback can throw out of the process in ioredis 6.0.0). In a Cluster every command of a
 * batch is on the prefix's one hash slot (redis-connection.ts `clusterKeyPrefix`).
 */
import type { ChainableCommander, Redis } from 'ioredis';

/** One queued command: adds itself to the pipeline; settles with its answer. */
interface Queued {
  add(p: ChainableCommander): void;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Batches of commands on one connection (see the module comment). */
export class CommandBatch {
  readonly #redis: Redis;
  readonly #failed: (e: Error) => Error;
  #queue: Queued[] = [];

  /**
   * @param redis the connection.
   * @param failed maps a command's or the pipeline's error to what the caller gets (coordinator.ts:
   *   a lost connection becomes `CoordinationUnavailableError`).
   */
  constructor(redis: Redis, failed: (e: Error) => Error) {
    this.#redis = redis;
    this.#failed = failed;
  }

  /**
   * Queue a command for the next batch (sent at the end of this turn of the event loop).
   * @param add adds the command to the pipeline `p` (e.g. `(p) => p.cfClaim(...)`, a script defined on the connection).
   * @returns its answer. @throws what `failed` makes of its error (rejects).
   */
  run<T>(add: (p: ChainableCommander) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(() => void this.#flush());
      this.#queue.push({ add, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /** Send the queued commands as one pipeline; settle each with its answer. */
  async #flush(): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 0) return;
    let results: Array<[Error | null, unknown]> | null;
    try {
      const p = this.#redis.pipeline();
      for (const q of batch) q.add(p);
      results = await p.exec();
    } catch (e) {
      for (const q of batch) q.reject(this.#failed(e as Error));
      return;
    }
    batch.forEach((q, i) => {
      const [err, value] = results?.[i] ?? [new Error('no answer in the pipeline'), undefined];
      if (err) q.reject(this.#failed(err));
      else q.resolve(value);
    });
  }
}
