/**
 * Batches per key inside one process: the items submitted for a key while a batch of that key
 * runs are taken together as its next batch, in submission order; other keys do not wait. Used
 * by the approver to evaluate and reserve the decisions of one velocity window together
 * (lib/approver/reserve.ts).
 */
export class KeyedBatches<T> {
  readonly #queues = new Map<string, T[]>();
  readonly #run: (key: string, batch: T[]) => Promise<void>;
  readonly #max: number;

  /**
   * @param run runs one batch of a key (never two of one key at once); a rejection is its own
   *   to report to the batch's items: it is ignored here and the next batch runs.
   * @param max most items per batch (at least 1).
   */
  constructor(run: (key: string, batch: T[]) => Promise<void>, max: number) {
    this.#run = run;
    this.#max = Math.max(1, max);
  }

  /** Queue `item` for `key`; the first for an idle key starts its batches. */
  submit(key: string, item: T): void {
    const queue = this.#queues.get(key);
    if (queue) {
      queue.push(item);
      return;
    }
    const fresh = [item];
    this.#queues.set(key, fresh);
    void this.#drain(key, fresh);
  }

  /** Run the batches of `key` until its queue is empty. */
  async #drain(key: string, queue: T[]): Promise<void> {
    try {
      while (queue.length > 0) await this.#run(key, queue.splice(0, this.#max)).catch(() => undefined);
    } finally {
      this.#queues.delete(key);
    }
  }
}
