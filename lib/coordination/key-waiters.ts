/**
 * The waits of the coordinator (coordinator.ts) on published keys: a claim decided or released
 * elsewhere (the `decided` channel, docs/scale-out.md "What is shared"), or the connection turning
 * ready. Each wait ends at the message, after its time, or when its signal or the owner's closing
 * signal aborts.
 */
import { abortableSleep } from '../support/backoff';

/** Waits by key; each is called with the decided record when the message carried one. */
export class KeyWaiters {
  readonly #waiters = new Map<string, Set<(record?: string) => void>>();

  /** @param closing aborted when the owner closes: every wait ends. */
  constructor(private readonly closing: AbortSignal) {}

  /**
   * Wait until `key` is woken ({@link wake}), `ms` passes, `signal` aborts or the owner closes.
   * @returns the record the wake carried, if any.
   */
  wait(key: string, ms: number, signal?: AbortSignal): Promise<string | undefined> {
    return new Promise((resolve) => {
      let set = this.#waiters.get(key);
      if (!set) this.#waiters.set(key, (set = new Set()));
      const s = set;
      const abort = new AbortController();
      const done = (record?: string) => {
        abort.abort();
        s.delete(done);
        if (s.size === 0 && this.#waiters.get(key) === s) this.#waiters.delete(key);
        signal?.removeEventListener('abort', stop);
        this.closing.removeEventListener('abort', stop);
        resolve(typeof record === 'string' ? record : undefined);
      };
      const stop = () => done();
      s.add(done);
      signal?.addEventListener('abort', stop, { once: true });
      this.closing.addEventListener('abort', stop, { once: true });
      void abortableSleep(ms, abort.signal).then(stop);
    });
  }

  /** End every wait on `key`, handing them `record`. */
  wake(key: string, record?: string): void {
    for (const w of Array.from(this.#waiters.get(key) ?? [])) w(record);
  }

  /** End every wait (the connection turned ready: each waiter looks again). */
  wakeAll(): void {
    for (const set of Array.from(this.#waiters.values())) for (const w of Array.from(set)) w(undefined);
  }
}
