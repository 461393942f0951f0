/**
 * The approver's audit log: JSON Lines (one JSON object per line), appended only, in segments
 * (docs/audit.md). Each line carries `seq` (1, 2, ...) and `prev`, the SHA-256 (hex) of the
 * previous line's bytes (64 zeros on the very first line), so an edited, inserted or deleted
 * line breaks the chain at that line. Appends are group-committed: every line handed in during
 * one write is written and `fdatasync`ed together, and each append resolves only once its line
 * is on disk.
 *
 * Segments: the live segment keeps the configured path (`<dir>/<stem>.jsonl`). When it grows
 * past {@link AuditLogOptions.maxSegmentBytes} or a new UTC day begins, it is renamed next to it
 * as `<stem>.<first seq, 12 digits>.jsonl` and a new live segment opens with an *opening line*
 * (`kind: "segment"`): the chain continues across files (`seq` goes on, its `prev` is the head
 * of the segment before, `previous` names that file) and `carried` holds the state its owner
 * hands over (a checkpoint), so a start reads the live segment only. A file written before
 * segments existed is a first segment like any other.
 *
 * What it cannot see: lines cut off the end of the live segment (no later line names them).
 * Keep a copy of the head hash (`verifyAuditChain().head`) elsewhere to detect that.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { syncDir } from '../support/durable/atomic';

/** The `prev` of the first line. */
export const GENESIS_HASH = '0'.repeat(64);

/** Digits of the first `seq` in a rotated segment's name (`<stem>.000000000001.jsonl`). */
export const SEGMENT_SEQ_DIGITS = 12;

/** Default {@link AuditLogOptions.maxSegmentBytes}: 64 MiB. */
export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

/** Default {@link AuditLogOptions.closeCheckpointBytes}: 1 MiB. */
export const DEFAULT_CLOSE_CHECKPOINT_BYTES = 1024 * 1024;

const DAY_MS = 86_400_000;

/** A line of the audit file as parsed: `seq`, `prev` and the record's own fields. */
export interface AuditLine {
  /** 1-based line number of the whole chain (it continues across segments). */
  seq: number;
  /** SHA-256 (hex) of the previous line's bytes; {@link GENESIS_HASH} on the first. */
  prev: string;
  [field: string]: unknown;
}

/**
 * The first line of every segment after the first (written by a rotation): it links the chain
 * to the segment before and carries its owner's state. `kind` is reserved: `append` refuses it.
 */
export interface SegmentOpening extends AuditLine {
  kind: 'segment';
  /** The file name (no folder) of the segment before, e.g. `a.000000000001.jsonl`. */
  previous: string;
  /** When the segment was opened (ISO 8601, UTC, from {@link AuditLogOptions.now}). */
  at: string;
  /** Why: `size` (the segment was full), `day` (a new UTC day), `close` (a checkpoint at a clean close) or `manual` ({@link AuditLog.rotate}). */
  reason: 'size' | 'day' | 'close' | 'manual';
  /** The records the owner handed over at rotation ({@link CarryHook}), as it gave them. */
  carried: Record<string, unknown>[];
}

/**
 * What the owner of a log hands over at a rotation: the records that restore its state
 * (not its history). Called synchronously, from inside {@link AuditLog.append} (before the
 * record being appended is chained: every record appended earlier is in the segment being
 * closed, that one and later ones in the new segment) or from {@link AuditLog.close} /
 * {@link AuditLog.rotate}. Each record must be JSON-serialisable. A record that is both in
 * `carried` and among the lines after it is read twice on start: a replay must be idempotent.
 * When it throws, the log does not rotate then (it tries again at the next append).
 */
export type CarryHook = () => Record<string, unknown>[];

/** Options of {@link AuditLog.open}; all optional. */
export interface AuditLogOptions {
  /**
   * Rotate when the live segment's lines (its opening line not counted) would pass this many
   * bytes. Default {@link DEFAULT_MAX_SEGMENT_BYTES} (64 MiB). A single line longer than this
   * still goes in (a segment holds at least one line).
   */
  maxSegmentBytes?: number;
  /** Rotate at the first append of a new UTC day (default true). */
  rotateDaily?: boolean;
  /** The clock, epoch ms (default `Date.now`): for tests. */
  now?: () => number;
  /**
   * The state to carry into each new segment ({@link CarryHook}); also settable later with
   * {@link AuditLog.setCarry}. Without one the log never rotates by itself: a new segment
   * without its owner's state would make a restart forget it.
   */
  carry?: CarryHook;
  /**
   * At a clean {@link AuditLog.close}, when the live segment holds more than this many bytes of
   * lines and a carry hook is set, rotate (reason `close`) so the next start reads the carried
   * state only. Default {@link DEFAULT_CLOSE_CHECKPOINT_BYTES} (1 MiB); `Infinity` turns it off.
   */
  closeCheckpointBytes?: number;
}

/** The result of {@link verifyAuditFile} / {@link verifyAuditText}. */
export interface AuditVerification {
  ok: boolean;
  /** Lines read (all of them when ok; up to the bad one otherwise). */
  lines: number;
  /** SHA-256 (hex) of the last good line: the head of the chain. */
  head: string;
  /** The first bad line (1-based line number in the text) and what is wrong with it; absent when ok. */
  bad?: { line: number; reason: string };
  /** The parsed lines, when ok (or up to the bad one); empty when not asked for (`keep: false`). */
  records: AuditLine[];
  /** `seq` of the last good line (0 when none). */
  lastSeq: number;
}

/** How the first line of a text must start the chain ({@link verifyAuditText}). */
export interface VerifyTextOptions {
  /**
   * The `seq` and `prev` the first line must have. Default: `{ seq: 1, prev: GENESIS_HASH }`,
   * unless {@link trustOpening} is set and the first line is a segment opening line.
   */
  expect?: { seq: number; prev: string; previous?: string };
  /** Take a first line that is a segment opening line ({@link SegmentOpening}) on trust: its `seq` and `prev` start the chain. */
  trustOpening?: boolean;
  /** Keep the parsed lines in `records` (default true). */
  keep?: boolean;
}

/** SHA-256 (hex) of a line's UTF-8 bytes, without its newline. */
export function lineHash(line: string): string {
  return crypto.createHash('sha256').update(line, 'utf8').digest('hex');
}

function isOpening(rec: AuditLine): rec is SegmentOpening {
  return rec.kind === 'segment' && typeof rec.previous === 'string' && Array.isArray(rec.carried);
}

/**
 * Verify the chain of an audit file's (or one segment's) text.
 * @param text the whole file (UTF-8); every line ends with `\n`.
 * @param options where the chain must start (default: seq 1 with the genesis hash).
 * @returns ok with every record, or the first bad line: not JSON, a `seq` out of order, a
 *   `prev` that is not the hash of the line before (an edited, inserted or deleted line), an
 *   opening line anywhere but first, or a last line without its newline (a write cut off).
 */
export function verifyAuditText(text: string, options: VerifyTextOptions = {}): AuditVerification {
  const keep = options.keep !== false;
  const records: AuditLine[] = [];
  let head = options.expect?.prev ?? GENESIS_HASH;
  let expectSeq = options.expect?.seq ?? 1;
  if (text === '') return { ok: true, lines: 0, head, records, lastSeq: expectSeq - 1 };
  const lines = text.split('\n');
  const complete = lines.pop() === '';
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const bad = (reason: string): AuditVerification => ({ ok: false, lines: i, head, bad: { line: n, reason }, records, lastSeq: expectSeq - 1 });
    let rec: AuditLine;
    try {
      rec = JSON.parse(lines[i]);
    } catch {
      return bad('not a JSON object');
    }
    if (!rec || typeof rec !== 'object' || Array.isArray(rec)) return bad('not a JSON object');
    if (i === 0) {
      const opening = isOpening(rec);
      if (options.expect?.previous !== undefined) {
        if (!opening) return bad(`not a segment opening line: this segment follows ${options.expect.previous}`);
        if (rec.previous !== options.expect.previous) return bad(`the opening line names ${JSON.stringify(rec.previous)} as the segment before, expected ${JSON.stringify(options.expect.previous)}`);
      } else if (opening && options.trustOpening && Number.isSafeInteger(rec.seq) && rec.seq >= 2 && typeof rec.prev === 'string' && /^[0-9a-f]{64}$/.test(rec.prev)) {
        // Taken on trust: the segment before is not read here.
        expectSeq = rec.seq;
        head = rec.prev;
      } else if (opening && !options.expect) {
        return bad(`opens a segment after ${rec.previous}, which is not read here: the chain starts before this file`);
      }
    } else if (isOpening(rec)) {
      return bad('a segment opening line inside a segment');
    }
    if (rec.seq !== expectSeq) return bad(`seq is ${JSON.stringify(rec.seq)}, expected ${expectSeq}: a line was inserted or deleted before it`);
    if (rec.prev !== head) {
      return bad(
        n > 1
          ? `prev does not match the SHA-256 of line ${n - 1}: line ${n - 1} was edited, or a line was deleted or inserted`
          : options.expect?.previous !== undefined
            ? `prev does not match the head of ${options.expect.previous}: its last line was edited, or lines were cut off its end`
            : 'prev is not the genesis hash',
      );
    }
    head = lineHash(lines[i]);
    expectSeq++;
    if (keep) records.push(rec);
  }
  if (!complete) {
    return { ok: false, lines: lines.length, head, bad: { line: lines.length + 1, reason: 'the last line has no newline: a write was cut off' }, records, lastSeq: expectSeq - 1 };
  }
  return { ok: true, lines: lines.length, head, records, lastSeq: expectSeq - 1 };
}

/**
 * Verify one audit file on disk on its own (see {@link verifyAuditText}). A missing file
 * verifies as empty. For a live segment with rotated segments before it, use
 * {@link verifyAuditChain} (or pass `trustOpening` to take its opening line on trust).
 * @throws what `fs.readFileSync` throws, except ENOENT.
 */
export function verifyAuditFile(file: string, options: VerifyTextOptions = {}): AuditVerification {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return verifyAuditText('', options);
    throw e;
  }
  return verifyAuditText(text, options);
}

/**
 * The file a segment of `liveFile` is renamed to when rotated: `<stem>.<firstSeq, 12 digits><ext>`
 * next to it (`a.jsonl` -> `a.000000000001.jsonl`), so names sort in chain order.
 * @param firstSeq the `seq` of the segment's first line.
 */
export function rotatedSegmentPath(liveFile: string, firstSeq: number): string {
  const ext = path.extname(liveFile);
  const stem = liveFile.slice(0, liveFile.length - ext.length);
  return `${stem}.${String(firstSeq).padStart(SEGMENT_SEQ_DIGITS, '0')}${ext}`;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The rotated segments of the chain whose live segment is `liveFile`, oldest first, with the
 * first `seq` their name gives (the live file itself is not listed).
 * @throws what `fs.readdirSync` throws, except ENOENT (no folder: none).
 */
export function rotatedSegments(liveFile: string): Array<{ file: string; firstSeq: number }> {
  const dir = path.dirname(liveFile);
  const base = path.basename(liveFile);
  const ext = path.extname(base);
  const re = new RegExp(`^${escapeRe(base.slice(0, base.length - ext.length))}\\.(\\d{${SEGMENT_SEQ_DIGITS}})${escapeRe(ext)}$`);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const found: Array<{ file: string; firstSeq: number }> = [];
  for (const name of names) {
    const m = re.exec(name);
    if (m) found.push({ file: path.join(dir, name), firstSeq: Number(m[1]) });
  }
  return found.sort((a, b) => a.firstSeq - b.firstSeq);
}

/** The result of {@link verifyAuditChain}: one chain, its segments in order. */
export interface ChainVerification {
  /** The live segment's path (it may be missing when only rotated segments are there). */
  live: string;
  /** The files read, oldest first (the live one last when it exists). */
  segments: string[];
  ok: boolean;
  /** `seq` of the last good line: the chain's length in lines when it starts at the genesis. */
  lines: number;
  /** SHA-256 (hex) of the last good line. */
  head: string;
  /** The first bad line: its segment file, its line number in that file (1-based), why. */
  bad?: { file: string; line: number; reason: string };
  /** The segment verification started from, its opening `prev` taken on trust (`from`); absent when the chain was verified from its genesis. */
  trustedFrom?: string;
}

/** Options of {@link verifyAuditChain} / {@link verifyAuditFolder}. */
export interface VerifyChainOptions {
  /**
   * Start at this rotated segment (a path, or its file name) instead of the chain's first: its
   * opening line's `seq` and `prev` are taken on trust (the segments before it may be archived).
   */
  from?: string;
}

/**
 * Verify a whole chain: the rotated segments of `liveFile` oldest first, then `liveFile`. The
 * first segment must start at the genesis (unless `options.from`), each next one with an
 * opening line naming the one before, continuing its `seq` and carrying its head as `prev`;
 * a rotated segment's name must match its first `seq`. Reads one segment at a time.
 * @throws what reading a file throws (not ENOENT for the live file: a chain of rotated segments only is verified as far as it goes, and said missing).
 */
export function verifyAuditChain(liveFile: string, options: VerifyChainOptions = {}): ChainVerification {
  const rotated = rotatedSegments(liveFile);
  let start = 0;
  if (options.from !== undefined) {
    const fromName = path.basename(options.from);
    start = rotated.findIndex((s) => path.basename(s.file) === fromName);
    if (start < 0) {
      if (path.basename(liveFile) !== fromName) throw new Error(`${options.from}: not a segment of ${liveFile}`);
      start = rotated.length;
    }
  }
  const liveExists = fs.existsSync(liveFile);
  const files = [...rotated.slice(start).map((s) => ({ file: s.file, firstSeq: s.firstSeq as number | undefined })), ...(liveExists ? [{ file: liveFile, firstSeq: undefined }] : [])];
  const result: ChainVerification = { live: liveFile, segments: files.map((f) => f.file), ok: true, lines: 0, head: GENESIS_HASH, ...(options.from !== undefined ? { trustedFrom: files[0]?.file ?? liveFile } : {}) };
  let expect: VerifyTextOptions['expect'];
  for (let i = 0; i < files.length; i++) {
    const { file, firstSeq } = files[i];
    const first = i === 0;
    const v = verifyAuditText(fs.readFileSync(file, 'utf8'), !first ? { expect, keep: false } : options.from !== undefined ? { trustOpening: true, keep: false } : { keep: false });
    const fail = (line: number, reason: string): ChainVerification => ({ ...result, ok: false, lines: v.lines > 0 ? v.lastSeq : result.lines, head: v.lines > 0 ? v.head : result.head, bad: { file, line, reason } });
    if (!v.ok) return fail(v.bad!.line, v.bad!.reason);
    if (firstSeq !== undefined) {
      if (v.lines === 0) return fail(1, 'a rotated segment is empty');
      const firstOfFile = v.lastSeq - v.lines + 1;
      if (firstOfFile !== firstSeq) return fail(1, `the file is named for seq ${firstSeq} but its first line is seq ${firstOfFile}: renamed or moved`);
    } else if (v.lines === 0 && i > 0) {
      return fail(1, `the live segment is empty, but segments come before it (${path.basename(files[i - 1].file)}): its opening line is missing`);
    }
    result.lines = v.lastSeq;
    result.head = v.head;
    expect = { seq: v.lastSeq + 1, prev: v.head, previous: path.basename(file) };
  }
  if (!liveExists && rotated.length > 0) {
    return { ...result, ok: false, bad: { file: liveFile, line: 0, reason: `the live segment is missing (the chain's last segment is ${path.basename(rotated[rotated.length - 1].file)})` } };
  }
  return result;
}

/**
 * Verify every chain in a folder: each `*.jsonl` file with its rotated segments
 * (`<stem>.<12 digits>.jsonl`, grouped by stem, oldest first); see {@link verifyAuditChain}.
 * A chain whose live file is missing is verified too, and reported bad.
 * @param options `from`: a rotated segment (of one chain) to start that chain at.
 * @returns one result per chain, sorted by live file name.
 * @throws what `fs.readdirSync` throws.
 */
export function verifyAuditFolder(dir: string, options: VerifyChainOptions = {}): ChainVerification[] {
  const rotatedRe = new RegExp(`^(.*)\\.\\d{${SEGMENT_SEQ_DIGITS}}\\.jsonl$`);
  const lives = new Set<string>();
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    const m = rotatedRe.exec(name);
    lives.add(m ? `${m[1]}.jsonl` : name);
  }
  const fromName = options.from !== undefined ? path.basename(options.from) : undefined;
  return Array.from(lives)
    .sort()
    .map((live) => {
      const file = path.join(dir, live);
      const mine = fromName !== undefined && (fromName === live || rotatedSegments(file).some((s) => path.basename(s.file) === fromName));
      return verifyAuditChain(file, mine ? { from: fromName } : {});
    });
}

/** An entry of the write queue: a line, or a rotation to make before the lines after it. */
interface Pending {
  line: string;
  /** Set for a rotation: the path the live segment is renamed to. */
  rotateTo?: string;
  resolve(): void;
  reject(err: Error): void;
}

function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The path of a rotation's new live segment before it is renamed into place. */
function nextPath(file: string): string {
  return `${file}.next`;
}

/**
 * An append-only, hash-chained audit log in segments. Open it with {@link AuditLog.open}, which
 * verifies the live segment; {@link AuditLog.append} resolves once the line is written and
 * fdatasync'ed.
 *
 * Rotation, crash-safe: (1) the new live segment is written whole as `<file>.next` (its
 * opening line) and fdatasync'ed; (2) `<file>` is renamed to its rotated name; (3)
 * `<file>.next` is renamed to `<file>`; (4) the folder is fsync'ed. A process that dies before
 * (2) leaves the old live segment in place: the next open deletes `<file>.next` (nothing after
 * it was written). One that dies between (2) and (3) leaves no `<file>`: the next open finishes
 * the rename. Lines appended during a rotation wait for it, then go to the new segment.
 */
export class AuditLog {
  readonly file: string;
  #fh: fs.promises.FileHandle;
  #seq: number;
  #head: string;
  #queue: Pending[] = [];
  #writing: Promise<void> | undefined;
  #closed = false;
  #fileClosed: Promise<void> | undefined;
  readonly #max: number;
  readonly #daily: boolean;
  readonly #now: () => number;
  readonly #closeCheckpoint: number;
  #carry: CarryHook | undefined;
  /** `seq` of the live segment's first line. */
  #segmentFirstSeq: number;
  /** Lines of the live segment that are not its opening line (written or queued). */
  #segmentLines: number;
  /** Their bytes, newlines included. */
  #segmentBytes: number;
  /** The UTC day (epoch days) of the live segment's lines; undefined while it has none. */
  #segmentDay: number | undefined;

  private constructor(file: string, fh: fs.promises.FileHandle, seq: number, head: string, options: AuditLogOptions, segment: { firstSeq: number; lines: number; bytes: number; day: number | undefined }) {
    this.file = file;
    this.#fh = fh;
    this.#seq = seq;
    this.#head = head;
    this.#max = options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES;
    this.#daily = options.rotateDaily ?? true;
    this.#now = options.now ?? Date.now;
    this.#closeCheckpoint = options.closeCheckpointBytes ?? DEFAULT_CLOSE_CHECKPOINT_BYTES;
    this.#carry = options.carry;
    this.#segmentFirstSeq = segment.firstSeq;
    this.#segmentLines = segment.lines;
    this.#segmentBytes = segment.bytes;
    this.#segmentDay = segment.day;
  }

  /**
   * Open (creating it and its folder, mode 0600) the live segment of an audit log, finish a
   * rotation a crash interrupted, and verify the live segment's chain (its opening line's
   * `prev` is taken on trust: {@link verifyAuditChain} checks the whole chain). Reads the live
   * segment only: its cost is bounded by the carried state and the live segment's size, not by
   * the history before it.
   * @param options rotation and the carry hook ({@link AuditLogOptions}).
   * @returns the log, ready to append; `records`: the carried records of the live segment's
   *   opening line (as the owner handed them over) followed by the live segment's other lines
   *   (for a first segment: all its lines); a carried record has the fields its owner gave it
   *   (`seq` and `prev` only when it carried lines it had appended, as the approver does);
   *   `opening`: that opening line, when there is one.
   * @throws {AuditFileError} when the live segment does not verify (naming the first bad
   *   line), or is missing or empty while rotated segments exist; what the file system throws
   *   otherwise.
   */
  static async open(file: string, options: AuditLogOptions = {}): Promise<{ log: AuditLog; records: AuditLine[]; opening?: SegmentOpening }> {
    const dir = path.dirname(file);
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    await AuditLog.#recover(file);
    if (!fs.existsSync(file) && rotatedSegments(file).length > 0) {
      throw new AuditFileError(file, 1, 'the live segment is missing but rotated segments exist: its lines (and the state it carried) are missing');
    }
    const fh = await fs.promises.open(file, 'a+', 0o600);
    try {
      // One read of the whole size (FileHandle.readFile reads in small chunks).
      const stat = await fh.stat();
      const buf = Buffer.allocUnsafe(stat.size);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const text = buf.toString('utf8', 0, got);
      if (text === '' && rotatedSegments(file).length > 0) {
        throw new AuditFileError(file, 1, 'the live segment is empty but rotated segments exist: its lines (and the state it carried) are missing');
      }
      const v = verifyAuditText(text, { trustOpening: true });
      if (!v.ok) throw new AuditFileError(file, v.bad!.line, v.bad!.reason);
      const first = v.records[0];
      const opening = first && isOpening(first) ? first : undefined;
      const records = opening ? [...(opening.carried as AuditLine[]), ...v.records.slice(1)] : v.records;
      const openingBytes = opening ? Buffer.byteLength(text.slice(0, text.indexOf('\n') + 1), 'utf8') : 0;
      const lines = v.lines - (opening ? 1 : 0);
      const day = lines > 0 ? utcDay(stat.mtimeMs) : undefined;
      const segment = { firstSeq: first ? first.seq : 1, lines, bytes: Buffer.byteLength(text, 'utf8') - openingBytes, day };
      return { log: new AuditLog(file, fh, v.lastSeq, v.head, options, segment), records, ...(opening ? { opening } : {}) };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Finish or undo a rotation that a crash interrupted (see the class comment). */
  static async #recover(file: string): Promise<void> {
    const next = nextPath(file);
    const liveExists = fs.existsSync(file);
    if (!fs.existsSync(next)) return;
    if (liveExists) {
      // Died before the live segment was renamed: it is still the live one.
      await fs.promises.rm(next, { force: true });
      return;
    }
    // Died between the two renames: the new segment is complete (synced before the first rename).
    const v = verifyAuditText(await fs.promises.readFile(next, 'utf8'), { trustOpening: true, keep: true });
    const opening = v.records[0];
    if (!v.ok || !opening || !isOpening(opening) || !fs.existsSync(path.join(path.dirname(file), opening.previous))) {
      throw new AuditFileError(next, v.bad?.line ?? 1, 'an unfinished rotation left this file, but it does not open a segment after one that exists: look at the folder');
    }
    await fs.promises.rename(next, file);
    await syncDir(path.dirname(file));
  }

  /** Lines in the chain so far (the last `seq`, queued lines included). */
  get lines(): number {
    return this.#seq;
  }

  /** SHA-256 (hex) of the last line (queued lines included): the head of the chain. */
  get head(): string {
    return this.#head;
  }

  /**
   * Set (or remove, with undefined) the hook whose records each new segment's opening line
   * carries ({@link CarryHook}). Without a hook the log does not rotate by itself.
   */
  setCarry(hook: CarryHook | undefined): void {
    this.#carry = hook;
  }

  /**
   * Append a record as the next line (it gets `seq` and `prev`, placed first). Rotates first
   * when the record would take the live segment past `maxSegmentBytes`, or it is the first of a
   * new UTC day (`rotateDaily`), and a carry hook is set.
   * @param record JSON-serialisable fields; `seq` and `prev` are set here; `kind: "segment"` is reserved.
   * @returns the line as written, once it is on disk.
   * @throws {Error} when the log is closed, the record's kind is `segment`, or the write (or a rotation before it) fails (rejects).
   */
  append(record: Record<string, unknown>): Promise<AuditLine> {
    if (this.#closed) return Promise.reject(new Error(`audit file ${this.file}: closed`));
    if (record.kind === 'segment') return Promise.reject(new Error(`audit file ${this.file}: kind "segment" is reserved for segment opening lines`));
    let full = { seq: this.#seq + 1, prev: this.#head, ...record } as AuditLine;
    let line = JSON.stringify(full);
    let bytes = Buffer.byteLength(line, 'utf8') + 1;
    if (this.#carry && this.#segmentLines > 0) {
      const now = this.#now();
      const reason = this.#segmentBytes + bytes > this.#max ? 'size' : this.#daily && this.#segmentDay !== undefined && utcDay(now) !== this.#segmentDay ? 'day' : undefined;
      if (reason && this.#queueRotation(reason, now, false)) {
        full = { seq: this.#seq + 1, prev: this.#head, ...record } as AuditLine;
        line = JSON.stringify(full);
        bytes = Buffer.byteLength(line, 'utf8') + 1;
      }
    }
    this.#seq = full.seq;
    this.#head = lineHash(line);
    this.#segmentLines++;
    this.#segmentBytes += bytes;
    if (this.#segmentDay === undefined) this.#segmentDay = utcDay(this.#now());
    return this.#enqueue(line).then(() => full);
  }

  /**
   * Rotate now (reason `manual`), carrying what the hook gives (nothing without a hook): the
   * next start reads only the carried records and what is appended after.
   * @returns once the new segment is in place (resolves at once when the live segment has no lines but its opening one).
   * @throws {Error} when the log is closed, the hook throws, or the rotation fails (rejects).
   */
  rotate(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`audit file ${this.file}: closed`));
    if (this.#segmentLines === 0) return Promise.resolve();
    try {
      return this.#queueRotation('manual', this.#now(), true)!;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Chain an opening line now (calling the carry hook) and queue the rotation before it.
   * @param strict throw when the hook throws (else skip the rotation: returns undefined).
   */
  #queueRotation(reason: SegmentOpening['reason'], now: number, strict: boolean): Promise<void> | undefined {
    let carried: Record<string, unknown>[];
    try {
      carried = this.#carry ? this.#carry() : [];
      if (!Array.isArray(carried)) throw new Error('the carry hook did not return an array');
    } catch (e) {
      if (strict) throw e;
      return undefined;
    }
    const rotateTo = rotatedSegmentPath(this.file, this.#segmentFirstSeq);
    const opening: SegmentOpening = { seq: this.#seq + 1, prev: this.#head, kind: 'segment', previous: path.basename(rotateTo), at: new Date(now).toISOString(), reason, carried };
    const line = JSON.stringify(opening);
    this.#seq = opening.seq;
    this.#head = lineHash(line);
    this.#segmentFirstSeq = opening.seq;
    this.#segmentLines = 0;
    this.#segmentBytes = 0;
    this.#segmentDay = undefined;
    return this.#enqueue(line, rotateTo);
  }

  #enqueue(line: string, rotateTo?: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ line, rotateTo, resolve, reject });
      if (!this.#writing) this.#writing = this.#drain();
    });
  }

  /** Write and sync what is queued, in groups, until nothing is left; rotations in order. */
  async #drain(): Promise<void> {
    // Let the appends of this turn of the event loop join the first group.
    await new Promise<void>((r) => setImmediate(r));
    while (this.#queue.length) {
      const items = this.#queue;
      this.#queue = [];
      let i = 0;
      try {
        while (i < items.length) {
          if (items[i].rotateTo) {
            await this.#rotateFile(items[i]);
            items[i].resolve();
            i++;
            continue;
          }
          let j = i;
          while (j < items.length && !items[j].rotateTo) j++;
          const group = items.slice(i, j);
          await this.#fh.write(group.map((p) => p.line + '\n').join(''));
          await this.#fh.datasync();
          group.forEach((p) => p.resolve());
          i = j;
        }
      } catch (e) {
        // The chain in memory now runs ahead of the file: refuse everything after this.
        this.#closed = true;
        const err = new Error(`audit file ${this.file}: write failed: ${(e as Error).message}`);
        items.slice(i).concat(this.#queue).forEach((p) => p.reject(err));
        this.#queue = [];
      }
    }
    this.#writing = undefined;
  }

  /** Steps (1)-(4) of a rotation (see the class comment); then appends go to the new segment. */
  async #rotateFile(p: Pending): Promise<void> {
    const next = nextPath(this.file);
    const fh = await fs.promises.open(next, 'w', 0o600);
    try {
      await fh.write(p.line + '\n');
      await fh.datasync();
      if (fs.existsSync(p.rotateTo!)) throw new Error(`${p.rotateTo} exists already`);
      await fs.promises.rename(this.file, p.rotateTo!);
      await fs.promises.rename(next, this.file);
    } catch (e) {
      await fh.close();
      throw e;
    }
    await syncDir(path.dirname(this.file));
    const old = this.#fh;
    this.#fh = fh;
    await old.close();
  }

  /**
   * Wait for the lines in flight, write a checkpoint when due (see
   * {@link AuditLogOptions.closeCheckpointBytes}), then close the file. Appends after this reject.
   */
  close(): Promise<void> {
    if (!this.#fileClosed) {
      if (!this.#closed && this.#carry && this.#segmentLines > 0 && this.#segmentBytes > this.#closeCheckpoint) {
        // A failed checkpoint is no loss: the live segment is complete without it.
        this.#queueRotation('close', this.#now(), false)?.catch(() => undefined);
      }
      this.#closed = true;
      this.#fileClosed = (async () => {
        await this.#writing;
        await this.#fh.close();
      })();
    }
    return this.#fileClosed;
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
