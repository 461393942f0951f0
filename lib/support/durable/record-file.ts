/**
 * A durable file of records (JSON Lines, appended only), for state that must survive a crash of
 * the process: the submission journal (lib/client/submission) and the core client feed's memory of the
 * actions it has sent. Appends are group-committed: every record handed in during one write is
 * written and `fdatasync`ed together, and each append resolves only once its record is on disk,
 * so a caller that awaits an append before acting (sending a payment) never acts on something
 * a crash could forget.
 *
 * A crash can cut the last line short; that record was never acknowledged (its append had not
 * resolved), so {@link RecordFile.open} drops it. {@link RecordFile.rewrite} replaces the whole
 * file atomically (write a temporary file, fsync, rename, fsync the folder), which is how the
 * users keep it bounded.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeAtomic } from './atomic';

/** A record waiting for the next group commit. */
interface Pending {
  line: string;
  resolve(): void;
  reject(err: Error): void;
}

/** What {@link RecordFile.open} read from an existing file. */
export interface OpenedRecords<T> {
  /** The file, ready to append. */
  file: RecordFile<T>;
  /** Every complete record, oldest first. */
  records: T[];
  /** Lines that were not JSON objects and were skipped (a cut-off last line counts here). */
  skipped: number;
}

/** An append-only JSON Lines file with group commit. One writer per file per process. */
export class RecordFile<T> {
  /** The file's path. */
  readonly path: string;
  #fh: fs.promises.FileHandle;
  /**
   * The group of the next commit, while that commit is scheduled and has not taken it yet:
   * appends join it. A rewrite closes it, so an append made after the rewrite was called lands
   * after the new content, never in the file the rewrite replaces.
   */
  #group: Pending[] | undefined;
  /** Writes and rewrites, one after the other. */
  #chain: Promise<void> = Promise.resolve();
  #closed = false;
  /** Set by a failed write: every later append and rewrite rejects with it. */
  #failed: Error | undefined;
  #lines: number;

  private constructor(file: string, fh: fs.promises.FileHandle, lines: number) {
    this.path = file;
    this.#fh = fh;
    this.#lines = lines;
  }

  /**
   * Open a record file, creating it and its folder (modes 0600 and 0700) when missing.
   * @param file the path of the file.
   * @returns the file and the records already in it.
   * @throws what the file system throws (rejects): e.g. EACCES for a folder that cannot be written.
   */
  static async open<T>(file: string): Promise<OpenedRecords<T>> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const fh = await fs.promises.open(file, 'a+', 0o600);
    try {
      const text = await fh.readFile({ encoding: 'utf8' });
      const records: T[] = [];
      let skipped = 0;
      const lines = text.split('\n');
      const tail = lines.pop();
      if (tail) skipped++; // a line without its newline: a write cut off, never acknowledged
      for (const line of lines) {
        if (!line) continue;
        try {
          const rec = JSON.parse(line);
          if (rec && typeof rec === 'object' && !Array.isArray(rec)) records.push(rec as T);
          else skipped++;
        } catch {
          skipped++;
        }
      }
      const opened = new RecordFile<T>(file, fh, records.length);
      // Drop a cut-off tail now, so the next append starts on a line of its own.
      if (tail) await opened.rewrite(records);
      return { file: opened, records, skipped };
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }

  /** Lines in the file: the records it held when opened or last rewritten, plus those appended and written since. */
  get lines(): number {
    return this.#lines;
  }

  /**
   * Append a record.
   * @param record a JSON-serialisable object.
   * @returns once the record is written and fdatasync'ed.
   * @throws {Error} when the file is closed or a write failed (rejects); after a failed write
   *   every later append rejects too.
   */
  append(record: T): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`${this.path}: closed`));
    const line = JSON.stringify(record) + '\n';
    return new Promise<void>((resolve, reject) => {
      let group = this.#group;
      if (!group) {
        const fresh: Pending[] = [];
        group = this.#group = fresh;
        this.#chain = this.#chain.then(() => this.#commit(fresh));
      }
      group.push({ line, resolve, reject });
    });
  }

  /** One group commit: `group` (the appends made until it is taken), written and synced together. */
  async #commit(group: Pending[]): Promise<void> {
    // Let the appends of this turn of the event loop join the group.
    await new Promise<void>((r) => setImmediate(r));
    if (this.#group === group) this.#group = undefined;
    if (!group.length) return;
    if (this.#failed) return group.forEach((p) => p.reject(this.#failed!));
    try {
      await this.#fh.write(group.map((p) => p.line).join(''));
      await this.#fh.datasync();
      this.#lines += group.length;
      group.forEach((p) => p.resolve());
    } catch (e) {
      this.#failed = new Error(`${this.path}: write failed: ${(e as Error).message}`);
      group.forEach((p) => p.reject(this.#failed!));
    }
  }

  /**
   * Replace the file's content with `records` atomically: written to `<file>.tmp`, synced,
   * renamed over the file, the folder synced. Appends made before this call are written to the
   * old file first (so `records` should hold them); appends made after it wait for it and land
   * after the new content.
   * @throws {Error} when the file is closed, or what the file system throws (rejects); the old
   *   file is then left as it was.
   */
  rewrite(records: readonly T[]): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`${this.path}: closed`));
    this.#group = undefined; // later appends form a group of their own, after the replace
    const run = this.#chain.then(() => this.#replace(records));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #replace(records: readonly T[]): Promise<void> {
    if (this.#failed) throw this.#failed;
    await writeAtomic(this.path, records.map((r) => JSON.stringify(r) + '\n').join(''));
    const old = this.#fh;
    this.#lines = records.length;
    try {
      this.#fh = await fs.promises.open(this.path, 'a+', 0o600);
    } catch (e) {
      // The old handle now writes to the replaced (unlinked) file: never acknowledge an append there.
      this.#failed = new Error(`${this.path}: reopening after a rewrite failed: ${(e as Error).message}`);
      throw this.#failed;
    } finally {
      if (this.#fh !== old) await old.close().catch(() => undefined);
    }
  }

  /** Wait for the records in flight, then close the file. Appends after this reject. */
  async close(): Promise<void> {
    if (this.#closed) return this.#chain;
    this.#closed = true;
    await this.#chain;
    await this.#fh.close().catch(() => undefined);
  }
}
