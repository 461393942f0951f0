/**
 * A durable file of records (JSON Lines, appended only), for state that must survive a crash of
 * the process: the submission journal (lib/client/submission) and the core client feed's memory of the
 * actions it has sent. Appends are group-committed (group-commit.ts, the one writer of the pack's
 * durable files): every record handed in during one write is written and `fdatasync`ed together,
 * and each append resolves only once its record is on disk,
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
import { GroupCommitWriter } from './group-commit';

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
  readonly #writer: GroupCommitWriter;
  #closed = false;
  #lines: number;

  private constructor(file: string, fh: fs.promises.FileHandle, lines: number) {
    this.path = file;
    this.#writer = new GroupCommitWriter(fh, file);
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
    return this.#writer.write(JSON.stringify(record) + '\n').then(() => {
      this.#lines++;
    });
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
    return this.#writer.step(() => this.#replace(records), { fatal: false });
  }

  async #replace(records: readonly T[]): Promise<void> {
    await writeAtomic(this.path, records.map((r) => JSON.stringify(r) + '\n').join(''));
    this.#lines = records.length;
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(this.path, 'a+', 0o600);
    } catch (e) {
      // The old handle now writes to the replaced (unlinked) file: never acknowledge an append there.
      throw this.#writer.breakWith(new Error(`${this.path}: reopening after a rewrite failed: ${(e as Error).message}`));
    }
    await this.#writer.replaceHandle(fh).close().catch(() => undefined);
  }

  /** Wait for the records in flight, then close the file. Appends after this reject. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#writer.close();
  }
}
