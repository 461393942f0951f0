/**
 * The approver's audit file: one JSON object per line (JSON Lines), appended only. Each line
 * carries `seq` (1, 2, ...) and `prev`, the SHA-256 (hex) of the previous line's bytes (64
 * zeros on the first line), so an edited, inserted or deleted line breaks the chain at that
 * line. Appends are group-committed: every line handed in during one write is written and
 * `fdatasync`ed together, and each append resolves only once its line is on disk.
 *
 * What it cannot see: lines cut off the end of the file (no later line names them). Keep a
 * copy of the head hash (`verifyAuditFile().head`) elsewhere to detect that.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The `prev` of the first line. */
export const GENESIS_HASH = '0'.repeat(64);

/** A line of the audit file as parsed: `seq`, `prev` and the record's own fields. */
export interface AuditLine {
  /** 1-based line number. */
  seq: number;
  /** SHA-256 (hex) of the previous line's bytes; {@link GENESIS_HASH} on the first. */
  prev: string;
  [field: string]: unknown;
}

/** The result of {@link verifyAuditFile} / {@link verifyAuditText}. */
export interface AuditVerification {
  ok: boolean;
  /** Lines read (all of them when ok; up to the bad one otherwise). */
  lines: number;
  /** SHA-256 (hex) of the last good line: the head of the chain. */
  head: string;
  /** The first bad line (1-based) and what is wrong with it; absent when ok. */
  bad?: { line: number; reason: string };
  /** The parsed lines, when ok (or up to the bad one). */
  records: AuditLine[];
}

/** SHA-256 (hex) of a line's UTF-8 bytes, without its newline. */
export function lineHash(line: string): string {
  return crypto.createHash('sha256').update(line, 'utf8').digest('hex');
}

/**
 * Verify the chain of an audit file's text.
 * @param text the whole file (UTF-8); every line ends with `\n`.
 * @returns ok with every record, or the first bad line: not JSON, a `seq` out of order, a
 *   `prev` that is not the hash of the line before (an edited, inserted or deleted line), or a
 *   last line without its newline (a write cut off).
 */
export function verifyAuditText(text: string): AuditVerification {
  const records: AuditLine[] = [];
  let head = GENESIS_HASH;
  if (text === '') return { ok: true, lines: 0, head, records };
  const lines = text.split('\n');
  const complete = lines.pop() === '';
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const bad = (reason: string): AuditVerification => ({ ok: false, lines: i, head, bad: { line: n, reason }, records });
    let rec: AuditLine;
    try {
      rec = JSON.parse(lines[i]);
    } catch {
      return bad('not a JSON object');
    }
    if (!rec || typeof rec !== 'object' || Array.isArray(rec)) return bad('not a JSON object');
    if (rec.seq !== n) return bad(`seq is ${JSON.stringify(rec.seq)}, expected ${n}: a line was inserted or deleted before it`);
    if (rec.prev !== head) return bad(n === 1 ? 'prev is not the genesis hash' : `prev does not match the SHA-256 of line ${n - 1}: line ${n - 1} was edited, or a line was deleted or inserted`);
    head = lineHash(lines[i]);
    records.push(rec);
  }
  if (!complete) {
    return { ok: false, lines: lines.length, head, bad: { line: lines.length + 1, reason: 'the last line has no newline: a write was cut off' }, records };
  }
  return { ok: true, lines: lines.length, head, records };
}

/**
 * Verify an audit file on disk (see {@link verifyAuditText}). A missing file verifies as empty.
 * @throws what `fs.readFileSync` throws, except ENOENT.
 */
export function verifyAuditFile(file: string): AuditVerification {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return verifyAuditText('');
    throw e;
  }
  return verifyAuditText(text);
}

/** A line waiting for the next group commit. */
interface Pending {
  line: string;
  resolve(): void;
  reject(err: Error): void;
}

/**
 * An append-only, hash-chained audit file. Open it with {@link AuditLog.open}, which verifies
 * the file first; {@link AuditLog.append} resolves once the line is written and fdatasync'ed.
 */
export class AuditLog {
  readonly file: string;
  #fh: fs.promises.FileHandle;
  #seq: number;
  #head: string;
  #queue: Pending[] = [];
  #writing: Promise<void> | undefined;
  #closed = false;

  private constructor(file: string, fh: fs.promises.FileHandle, seq: number, head: string) {
    this.file = file;
    this.#fh = fh;
    this.#seq = seq;
    this.#head = head;
  }

  /**
   * Open (creating it and its folder, mode 0600) and verify an audit file.
   * @returns the log, ready to append, and the records already in it.
   * @throws {AuditFileError} when the file does not verify (naming the first bad line); what
   *   the file system throws otherwise.
   */
  static async open(file: string): Promise<{ log: AuditLog; records: AuditLine[] }> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const fh = await fs.promises.open(file, 'a+', 0o600);
    try {
      const v = verifyAuditText(await fh.readFile({ encoding: 'utf8' }));
      if (!v.ok) throw new AuditFileError(file, v.bad!.line, v.bad!.reason);
      return { log: new AuditLog(file, fh, v.lines, v.head), records: v.records };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Lines in the file so far (the last `seq`). */
  get lines(): number {
    return this.#seq;
  }

  /** SHA-256 (hex) of the last line: the head of the chain. */
  get head(): string {
    return this.#head;
  }

  /**
   * Append a record as the next line (it gets `seq` and `prev`, placed first).
   * @param record JSON-serialisable fields; `seq` and `prev` are set here.
   * @returns the line as written, once it is on disk.
   * @throws {Error} when the log is closed or the write fails (rejects).
   */
  append(record: Record<string, unknown>): Promise<AuditLine> {
    if (this.#closed) return Promise.reject(new Error(`audit file ${this.file}: closed`));
    const full = { seq: this.#seq + 1, prev: this.#head, ...record } as AuditLine;
    const line = JSON.stringify(full);
    this.#seq = full.seq;
    this.#head = lineHash(line);
    return new Promise<AuditLine>((resolve, reject) => {
      this.#queue.push({ line, resolve: () => resolve(full), reject });
      if (!this.#writing) this.#writing = this.#drain();
    });
  }

  /** Write and sync what is queued, in groups, until nothing is left. */
  async #drain(): Promise<void> {
    // Let the appends of this turn of the event loop join the first group.
    await new Promise<void>((r) => setImmediate(r));
    while (this.#queue.length) {
      const group = this.#queue;
      this.#queue = [];
      try {
        await this.#fh.write(group.map((p) => p.line + '\n').join(''));
        await this.#fh.datasync();
        group.forEach((p) => p.resolve());
      } catch (e) {
        // The chain in memory now runs ahead of the file: refuse everything after this.
        this.#closed = true;
        const err = new Error(`audit file ${this.file}: write failed: ${(e as Error).message}`);
        group.concat(this.#queue).forEach((p) => p.reject(err));
        this.#queue = [];
      }
    }
    this.#writing = undefined;
  }

  /** Wait for the lines in flight, then close the file. Appends after this reject. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#writing;
    await this.#fh.close();
  }
}

/** An audit file that does not verify: `line` is the first bad line (1-based). `code` is `EAUDIT`. */
export class AuditFileError extends Error {
  override name = 'AuditFileError';
  /** Always `EAUDIT`. */
  readonly code = 'EAUDIT';
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, reason: string) {
    super(`audit file ${file}: line ${line}: ${reason}`);
    this.file = file;
    this.line = line;
  }
}
