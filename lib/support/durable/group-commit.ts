/**
 * The one append-only, group-committed writer of the pack's durable files: the audit log
 * (lib/audit/log.ts), the record files (record-file.ts: the submission journal, the feed's sent
 * ids, the track store). Every text handed in during one write is written and `fdatasync`ed
 * together, and each write resolves only once its text is on disk, so a caller that awaits it
 * before acting never acts on something a crash could forget. A step (a rotation, a rewrite: work
 * that replaces the file) runs alone, in its place in the queue: what was handed in before it is
 * on disk first, what comes after waits for it. The `fsync` rules live here and in atomic.ts only.
 */
import type fs from 'node:fs';

/** One entry of the queue: text to append, or a step to run alone. */
type Item = { text: string; step?: undefined; fatal?: undefined; resolve(): void; reject(err: Error): void } | { text?: undefined; step: () => Promise<void>; fatal: boolean; resolve(): void; reject(err: Error): void };

/** An append-only file written in group commits. One writer per file per process. */
export class GroupCommitWriter {
  #fh: fs.promises.FileHandle;
  readonly #label: string;
  #queue: Item[] = [];
  #draining: Promise<void> | undefined;
  #failed: Error | undefined;
  #closing: Promise<void> | undefined;

  /**
   * @param fh the file, opened for appending (`a` or `a+`).
   * @param label how errors name the file, e.g. `audit file /x/y.jsonl`.
   */
  constructor(fh: fs.promises.FileHandle, label: string) {
    this.#fh = fh;
    this.#label = label;
  }

  /** The file being written now (a step may replace it with {@link replaceHandle}). */
  get handle(): fs.promises.FileHandle {
    return this.#fh;
  }

  /** Set by a failed write or step: every later write and step rejects with it. */
  get failed(): Error | undefined {
    return this.#failed;
  }

  /** From inside a step: write to `fh` from now on. @returns the handle it replaces (the caller closes it). */
  replaceHandle(fh: fs.promises.FileHandle): fs.promises.FileHandle {
    const old = this.#fh;
    this.#fh = fh;
    return old;
  }

  /**
   * Append `text` (whole lines, each ending in a newline).
   * @returns once it is written and fdatasync'ed.
   * @throws {Error} (rejects) `<label>: write failed: ...` when this or an earlier write failed, or
   *   `<label>: closed` after {@link close}.
   */
  write(text: string): Promise<void> {
    return this.#enqueue({ text });
  }

  /**
   * Run `step` alone, after every write handed in before it is on disk and before any handed in after.
   * @param options `fatal` (default true): a step that throws leaves the file in a state the
   *   writer cannot go on from (a rotation half done), so everything after it is refused; false:
   *   only this step rejects (a rewrite that left the old file as it was), unless the step calls
   *   {@link breakWith}.
   * @throws {Error} (rejects) what the step throws.
   */
  step(step: () => Promise<void>, options: { fatal?: boolean } = {}): Promise<void> {
    return this.#enqueue({ step, fatal: options.fatal ?? true });
  }

  /** From inside a step: refuse every write and step after this one with `err` (the file can no longer be trusted). @returns `err`, to throw. */
  breakWith(err: Error): Error {
    this.#failed = err;
    return err;
  }

  #enqueue(entry: { text: string } | { step: () => Promise<void>; fatal: boolean }): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#closing) return Promise.reject(new Error(`${this.#label}: closed`));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ ...entry, resolve, reject } as Item);
      if (!this.#draining) this.#draining = this.#drain();
    });
  }

  /** Write and sync what is queued, in groups, until nothing is left; steps in order. */
  async #drain(): Promise<void> {
    // Let the writes of this turn of the event loop join the first group.
    await new Promise<void>((r) => setImmediate(r));
    while (this.#queue.length) {
      const items = this.#queue;
      this.#queue = [];
      let i = 0;
      try {
        while (i < items.length) {
          const item = items[i];
          if (item.step) {
            i++;
            try {
              await item.step();
            } catch (e) {
              if (item.fatal || this.#failed) throw e;
              item.reject(e as Error);
              continue;
            }
            if (this.#failed) throw this.#failed;
            item.resolve();
            continue;
          }
          let j = i;
          while (j < items.length && !items[j].step) j++;
          const group = items.slice(i, j);
          await this.#fh.write(group.map((p) => p.text).join(''));
          await this.#fh.datasync();
          group.forEach((p) => p.resolve());
          i = j;
        }
      } catch (e) {
        // What is in memory now runs ahead of the file: refuse everything after this.
        const stepFailed = i > 0 && items[i - 1].step !== undefined;
        this.#failed ??= new Error(`${this.#label}: write failed: ${(e as Error).message}`);
        if (stepFailed) items[i - 1].reject(e as Error);
        items.slice(i).concat(this.#queue).forEach((p) => p.reject(this.#failed!));
        this.#queue = [];
      }
    }
    this.#draining = undefined;
  }

  /** Wait for what is queued, then close the file. Writes after this reject. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      while (this.#draining) await this.#draining;
      await this.#fh.close().catch(() => undefined);
    })();
    return this.#closing;
  }
}
