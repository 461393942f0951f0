/**
 * A lock per key inside one process: callers with the same key run one after the other, in
 * call order; callers with other keys do not wait. Used by the submission journal (one payment
 * key at a time) and the approver (one shared velocity window per asset at a time).
 */
export class KeyedLock {
  /** Per key, the tail of the chain of callers holding or waiting for it. */
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Wait for `key`, then hold it.
   * @returns the function that releases it (call it exactly once, also on failure).
   */
  async acquire(key: string): Promise<() => void> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.#tails.set(key, tail);
    await before;
    return () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }
}
