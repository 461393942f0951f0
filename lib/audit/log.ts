/**
 * The writer of an audit log (docs/audit.md; the line format: line.ts): appends are
 * group-committed: every line handed in during one write is written and `fdatasync`ed together,
 * and each append resolves only once its line is on disk. The live segment rotates when it grows
 * past {@link AuditLogOptions.maxSegmentBytes} or a new UTC day begins, its new opening line
 * carrying the state its owner hands over ({@link CarryHook}: a checkpoint); a clean close writes
 * a checkpoint too when the live segment is large ({@link AuditLogOptions.closeCheckpointBytes}).
 * It reports its head ({@link AuditHead}: the `seq` and hash of a line on disk) to a hook
 * ({@link HeadHook}) every {@link AuditLogOptions.headEveryLines} lines, every
 * {@link AuditLogOptions.headEveryMs} and at close, for its owner to log off the machine: a cut
 * tail or an edited last line leaves a valid chain, but not the logged head (docs/audit.md,
 * "The head: a cut tail or an edited last line").
 */
import fs from 'node:fs';
import path from 'node:path';
import { AuditFileError, isOpening, lineHash, type AuditLine, type SegmentOpening } from './line';
import { rotatedSegmentPath, rotatedSegments } from './segments';
import { recoverRotation, rotateSegmentFile } from './rotation';
import { verifyAuditText } from './verify';
import { GroupCommitWriter } from '../support/durable/group-commit';
import { CHECKPOINT_KIND, readFromCheckpoint, removeCheckpointPointer, writeCheckpointPointer, type CheckpointPointer } from './checkpoint';

/** Default {@link AuditLogOptions.maxSegmentBytes}: 64 MiB. */
export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

/** Default {@link AuditLogOptions.closeCheckpointBytes}: 1 MiB. */
export const DEFAULT_CLOSE_CHECKPOINT_BYTES = 1024 * 1024;

/** Default {@link AuditLogOptions.headEveryLines}: 1,000 lines. */
export const DEFAULT_HEAD_EVERY_LINES = 1000;

/** Default {@link AuditLogOptions.headEveryMs}: one hour, ms. */
export const DEFAULT_HEAD_EVERY_MS = 3_600_000;

/** The longest interval `setInterval` takes (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const DAY_MS = 86_400_000;

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

/**
 * The head of an audit log's chain as reported to a {@link HeadHook}: a line that is on disk
 * (written and `fdatasync`ed). Logged elsewhere, it is checked later with
 * `custodyflow-audit verify <file> --head <seq>:<hash>` (docs/audit.md), which fails when the
 * chain was cut before line `seq` or that line was changed.
 */
export interface AuditHead {
  /** The line's `seq` (1-based, over the whole chain, across segments). */
  seq: number;
  /** SHA-256 (hex, 64 lowercase digits) of the line's UTF-8 bytes without its newline: the `prev` the next line carries ({@link AuditLog.head} once that line was appended). */
  hash: string;
  /** The live segment's path ({@link AuditLog.file}): the chain's name, what `verify` takes (the line may be in a segment rotated since). */
  file: string;
  /** Why now: `lines` (its `seq` is a multiple of {@link AuditLogOptions.headEveryLines}), `hourly` (the {@link AuditLogOptions.headEveryMs} timer), `close` ({@link AuditLog.close}). */
  why: 'lines' | 'hourly' | 'close';
}

/**
 * Told the chain's head ({@link AuditHead}), synchronously, from the write loop (after the line
 * is on disk, before the appends of its group resolve), from a timer, or from
 * {@link AuditLog.close} (before it resolves). What it throws is ignored: the log goes on.
 */
export type HeadHook = (head: AuditHead) => void;

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
  /**
   * With a carry hook set, write a checkpoint line (`kind: "checkpoint"`, carrying the hook's
   * records) into the live segment once the lines since the last checkpoint (or the segment's
   * opening line) pass this many bytes and twice the size of that checkpoint, and point to it from
   * `<file>.checkpoint`: a start after a crash then reads the state and the lines after it, not the
   * whole live segment (docs/audit.md). The writes a checkpoint costs stay at most half of the
   * log's own. A clean close writes one too when the lines since the last pass this many bytes.
   * Default `Infinity` (no checkpoint lines); the approver sets {@link DEFAULT_CHECKPOINT_MIN_BYTES}
   * (64 KiB).
   */
  checkpointMinBytes?: number;
  /** Told the chain's head ({@link HeadHook}); also settable later with {@link AuditLog.setOnHead}. Without one, nothing is reported. */
  onHead?: HeadHook;
  /**
   * Report the head (why `lines`) once the line whose `seq` is a multiple of this is on disk.
   * Default {@link DEFAULT_HEAD_EVERY_LINES} (1,000); `Infinity` (or 0) turns it off.
   * @throws {RangeError} from {@link AuditLog.open} when negative or not an integer (but `Infinity`).
   */
  headEveryLines?: number;
  /**
   * Report the head (why `hourly`) every this many ms, when lines went on disk since the head
   * last reported (an idle log reports nothing new). The timer is unref'd (it keeps no process
   * alive) and cleared at close. Default {@link DEFAULT_HEAD_EVERY_MS} (one hour); `Infinity`
   * (or 0) turns it off.
   * @throws {RangeError} from {@link AuditLog.open} when negative, or finite and above 2^31 - 1 (a timer's limit).
   */
  headEveryMs?: number;
}

/** Where the live segment stands when it is opened. */
interface Segment {
  /** `seq` of its first line. */
  firstSeq: number;
  /** Its lines, the opening line not counted. */
  lines: number;
  /** Their bytes. */
  bytes: number;
  /** The UTC day of its lines (undefined: none). */
  day: number | undefined;
  /** Bytes of its opening line (0: a first segment). */
  openingBytes: number;
  /** Bytes of lines after its last checkpoint (or opening) line, as far as known. */
  sinceCheckpoint: number;
  /** Bytes of that checkpoint (or opening) line. */
  checkpointBytes: number;
}

/** A line on its way to disk: its `seq` and its hash (the chain's head once it is written). */
interface Pending {
  seq: number;
  hash: string;
}

function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/**
 * An append-only, hash-chained audit log in segments. Open it with {@link AuditLog.open}, which
 * verifies the live segment; {@link AuditLog.append} resolves once the line is written and
 * fdatasync'ed. A rotation is crash-safe (rotation.ts); lines appended during a rotation
 * wait for it, then go to the new segment.
 */
export class AuditLog {
  readonly file: string;
  /** The live segment's writer (lib/support/durable/group-commit.ts): group commit, rotations in order. */
  readonly #writer: GroupCommitWriter;
  #seq: number;
  #head: string;
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
  /** Bytes of the live segment's opening line, newline included (0 for a first segment). */
  #openingBytes: number;
  /** Bytes of lines since the last checkpoint (or opening) line. */
  #sinceCheckpoint: number;
  /** Bytes of that checkpoint (or opening) line. */
  #lastCheckpointBytes: number;
  readonly #checkpointMin: number;
  /** The pointer writes in flight (close waits for them). */
  #pointerWrite: Promise<void> = Promise.resolve();
  #onHead: HeadHook | undefined;
  readonly #headEveryLines: number;
  /** The last line known to be on disk (seq 0: none). */
  #durable: { seq: number; hash: string };
  /** `seq` of the head last reported (0: none). */
  #reportedSeq = 0;
  #headTimer: NodeJS.Timeout | undefined;

  private constructor(file: string, fh: fs.promises.FileHandle, seq: number, head: string, options: AuditLogOptions, segment: Segment) {
    this.file = file;
    this.#writer = new GroupCommitWriter(fh, `audit file ${file}`);
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
    this.#openingBytes = segment.openingBytes;
    this.#sinceCheckpoint = segment.sinceCheckpoint;
    this.#lastCheckpointBytes = segment.checkpointBytes;
    this.#checkpointMin = options.checkpointMinBytes ?? Infinity;
    this.#onHead = options.onHead;
    const everyLines = options.headEveryLines ?? DEFAULT_HEAD_EVERY_LINES;
    this.#headEveryLines = everyLines > 0 && Number.isFinite(everyLines) ? everyLines : 0;
    this.#durable = { seq, hash: head };
    const everyMs = options.headEveryMs ?? DEFAULT_HEAD_EVERY_MS;
    if (everyMs > 0 && Number.isFinite(everyMs)) {
      this.#headTimer = setInterval(() => {
        if (this.#durable.seq > this.#reportedSeq) this.#report('hourly', this.#durable);
      }, everyMs);
      this.#headTimer.unref();
    }
  }

  /** @throws {RangeError} when a head option is out of range ({@link AuditLogOptions.headEveryLines}, {@link AuditLogOptions.headEveryMs}). */
  static #checkHeadOptions(options: AuditLogOptions): void {
    const lines = options.headEveryLines;
    if (lines !== undefined && lines !== Infinity && !(Number.isSafeInteger(lines) && lines >= 0)) {
      throw new RangeError(`headEveryLines: a whole number of lines (0 or Infinity: off), got ${lines}`);
    }
    const ms = options.headEveryMs;
    if (ms !== undefined && ms !== Infinity && !(ms >= 0 && ms <= MAX_TIMER_MS)) {
      throw new RangeError(`headEveryMs: ms from 0 to ${MAX_TIMER_MS} (0 or Infinity: off), got ${ms}`);
    }
  }

  /** Tell the hook (if any) the head `at`; what it throws is ignored. */
  #report(why: AuditHead['why'], at: { seq: number; hash: string }): void {
    this.#reportedSeq = Math.max(this.#reportedSeq, at.seq);
    const hook = this.#onHead;
    if (!hook) return;
    try {
      hook({ seq: at.seq, hash: at.hash, file: this.file, why });
    } catch {
      // A hook's failure is its owner's: the log goes on.
    }
  }

  /** Lines `group` are on disk: the durable head moves, and a line whose seq is a multiple of `headEveryLines` is reported. */
  #onDisk(group: Pending[]): void {
    for (const p of group) {
      this.#durable = { seq: p.seq, hash: p.hash };
      if (this.#headEveryLines && p.seq % this.#headEveryLines === 0) this.#report('lines', this.#durable);
    }
  }

  /**
   * Open (creating it and its folder, mode 0600) the live segment of an audit log, finish a
   * rotation a crash interrupted, and verify the live segment's chain (its opening line's
   * `prev` is taken on trust: {@link verifyAuditChain} checks the whole chain). Reads the live
   * segment only, and when its pointer file names the segment's last checkpoint line
   * ({@link AuditLogOptions.checkpointMinBytes}), only from that line on (its `prev` taken on
   * trust the same way): the cost is bounded by the carried state and the lines since, not by the
   * history before it.
   * @param options rotation and the carry hook ({@link AuditLogOptions}).
   * @returns the log, ready to append; `records`: the carried records of the live segment's
   *   last checkpoint line or else of its opening line (as the owner handed them over), followed
   *   by the lines after it (for a first segment without a checkpoint: all its lines; checkpoint
   *   lines themselves are not among them); a carried record has the fields its owner gave it
   *   (`seq` and `prev` only when it carried lines it had appended, as the approver does);
   *   `opening`: that opening line, when it was read (not when the start read from a checkpoint).
   * @throws {AuditFileError} when the live segment does not verify (naming the first bad
   *   line), or is missing or empty while rotated segments exist; {@link RangeError} for a head
   *   option out of range; what the file system throws otherwise.
   */
  static async open(file: string, options: AuditLogOptions = {}): Promise<{ log: AuditLog; records: AuditLine[]; opening?: SegmentOpening }> {
    AuditLog.#checkHeadOptions(options);
    const dir = path.dirname(file);
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    await recoverRotation(file);
    if (!fs.existsSync(file) && rotatedSegments(file).length > 0) {
      throw new AuditFileError(file, 1, 'the live segment is missing but rotated segments exist: its lines (and the state it carried) are missing');
    }
    const fh = await fs.promises.open(file, 'a+', 0o600);
    try {
      const stat = await fh.stat();
      const day = (lines: number) => (lines > 0 ? utcDay(stat.mtimeMs) : undefined);
      const tail = stat.size > 0 ? await readFromCheckpoint(file, fh, stat.size) : undefined;
      if (tail) {
        // From the last checkpoint line: its `prev` is taken on trust, as an opening line's is.
        const { pointer, line, text } = tail;
        const v = verifyAuditText(text, { expect: { seq: line.seq, prev: line.prev }, lineOffset: (pointer.openingBytes > 0 ? 1 : 0) + pointer.linesBefore });
        if (!v.ok) throw new AuditFileError(file, v.bad!.line, v.bad!.reason);
        const checkpointBytes = Buffer.byteLength(text.slice(0, text.indexOf('\n') + 1), 'utf8');
        const lines = pointer.linesBefore + v.lines;
        const segment: Segment = { firstSeq: pointer.firstSeq, lines, bytes: stat.size - pointer.openingBytes, day: day(lines), openingBytes: pointer.openingBytes, sinceCheckpoint: stat.size - pointer.offset - checkpointBytes, checkpointBytes };
        return { log: new AuditLog(file, fh, v.lastSeq, v.head, options, segment), records: [...(line.carried as AuditLine[]), ...v.records.slice(1)] };
      }
      // One read of the whole size (FileHandle.readFile reads in small chunks).
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
      // Checkpoint lines are skipped: the lines before them are read too.
      const records = (opening ? [...(opening.carried as AuditLine[]), ...v.records.slice(1)] : v.records).filter((r) => r.kind !== CHECKPOINT_KIND);
      const openingBytes = opening ? Buffer.byteLength(text.slice(0, text.indexOf('\n') + 1), 'utf8') : 0;
      const lines = v.lines - (opening ? 1 : 0);
      const bytes = Buffer.byteLength(text, 'utf8') - openingBytes;
      // Without a usable pointer, every line counts as after the last checkpoint: the next append writes one.
      const segment: Segment = { firstSeq: first ? first.seq : 1, lines, bytes, day: day(lines), openingBytes, sinceCheckpoint: bytes, checkpointBytes: openingBytes };
      return { log: new AuditLog(file, fh, v.lastSeq, v.head, options, segment), records, ...(opening ? { opening } : {}) };
    } catch (e) {
      await fh.close();
      throw e;
    }
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
   * Set (or remove, with undefined) the hook told the chain's head ({@link HeadHook}); it
   * replaces the `onHead` option. Heads due while no hook is set are not told later.
   */
  setOnHead(hook: HeadHook | undefined): void {
    this.#onHead = hook;
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
    if (record.kind === CHECKPOINT_KIND) return Promise.reject(new Error(`audit file ${this.file}: kind "checkpoint" is reserved for checkpoint lines`));
    let full = { seq: this.#seq + 1, prev: this.#head, ...record } as AuditLine;
    let line = JSON.stringify(full);
    let bytes = Buffer.byteLength(line, 'utf8') + 1;
    if (this.#carry && this.#segmentLines > 0) {
      const now = this.#now();
      const reason = this.#segmentBytes + bytes > this.#max ? 'size' : this.#daily && this.#segmentDay !== undefined && utcDay(now) !== this.#segmentDay ? 'day' : undefined;
      const queued = reason ? this.#queueRotation(reason, now, false) : this.#checkpointDue(bytes) ? this.#queueCheckpoint(now) : undefined;
      if (queued) {
        full = { seq: this.#seq + 1, prev: this.#head, ...record } as AuditLine;
        line = JSON.stringify(full);
        bytes = Buffer.byteLength(line, 'utf8') + 1;
      }
    }
    this.#seq = full.seq;
    this.#head = lineHash(line);
    this.#segmentLines++;
    this.#segmentBytes += bytes;
    this.#sinceCheckpoint += bytes;
    if (this.#segmentDay === undefined) this.#segmentDay = utcDay(this.#now());
    return this.#enqueue(line, full.seq, this.#head).then(() => full);
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
    this.#openingBytes = Buffer.byteLength(line, 'utf8') + 1;
    this.#sinceCheckpoint = 0;
    this.#lastCheckpointBytes = this.#openingBytes;
    return this.#enqueue(line, opening.seq, this.#head, rotateTo);
  }

  /** Whether a line of `bytes` more would pass the checkpoint threshold ({@link AuditLogOptions.checkpointMinBytes}). */
  #checkpointDue(bytes: number): boolean {
    return Number.isFinite(this.#checkpointMin) && this.#sinceCheckpoint + bytes > Math.max(this.#checkpointMin, 2 * this.#lastCheckpointBytes);
  }

  /**
   * Chain a checkpoint line now (calling the carry hook), then, once it is on disk, point to it
   * (`<file>.checkpoint`). A hook that throws skips it (tried again at the next append).
   * @returns the line's write, or undefined when skipped.
   */
  #queueCheckpoint(now: number): Promise<void> | undefined {
    let carried: Record<string, unknown>[];
    try {
      carried = this.#carry ? this.#carry() : [];
      if (!Array.isArray(carried)) throw new Error('the carry hook did not return an array');
    } catch {
      return undefined;
    }
    const seq = this.#seq + 1;
    const line = JSON.stringify({ seq, prev: this.#head, kind: CHECKPOINT_KIND, at: new Date(now).toISOString(), carried });
    const bytes = Buffer.byteLength(line, 'utf8') + 1;
    const hash = lineHash(line);
    const pointer: CheckpointPointer = { seq, hash, offset: this.#openingBytes + this.#segmentBytes, firstSeq: this.#segmentFirstSeq, openingBytes: this.#openingBytes, linesBefore: this.#segmentLines };
    this.#seq = seq;
    this.#head = hash;
    this.#segmentLines++;
    this.#segmentBytes += bytes;
    this.#sinceCheckpoint = 0;
    this.#lastCheckpointBytes = bytes;
    if (this.#segmentDay === undefined) this.#segmentDay = utcDay(now);
    const written = this.#enqueue(line, seq, hash);
    // A pointer that is not written only makes the next start read the whole live segment.
    this.#pointerWrite = written.then(() => writeCheckpointPointer(this.file, pointer)).catch(() => undefined);
    return written;
  }

  #enqueue(line: string, seq: number, hash: string, rotateTo?: string): Promise<void> {
    const written = rotateTo ? this.#writer.step(() => this.#rotateFile(line, rotateTo)) : this.#writer.write(line + '\n');
    return written.then(
      () => this.#onDisk([{ seq, hash }]),
      (err: Error) => {
        // The chain in memory now runs ahead of the file: refuse every append after this.
        this.#closed = true;
        throw err;
      },
    );
  }

  /** A rotation (rotation.ts), run alone by the writer; then appends go to the new segment. */
  async #rotateFile(opening: string, rotateTo: string): Promise<void> {
    await this.#pointerWrite;
    const fh = await rotateSegmentFile(this.file, opening, rotateTo);
    await this.#writer.replaceHandle(fh).close();
    // The new segment's opening line is its checkpoint.
    await removeCheckpointPointer(this.file);
  }

  /**
   * Wait for the lines in flight, write a checkpoint when due (see
   * {@link AuditLogOptions.closeCheckpointBytes}), close the file, then report the head (why
   * `close`: the last line on disk, when the chain has one) and stop the head timer. Appends
   * after this reject.
   */
  close(): Promise<void> {
    if (!this.#fileClosed) {
      if (!this.#closed && this.#carry && this.#segmentLines > 0 && this.#segmentBytes > this.#closeCheckpoint) {
        // A failed checkpoint is no loss: the live segment is complete without it.
        this.#queueRotation('close', this.#now(), false)?.catch(() => undefined);
      } else if (!this.#closed && this.#carry && Number.isFinite(this.#checkpointMin) && this.#sinceCheckpoint > this.#checkpointMin) {
        this.#queueCheckpoint(this.#now())?.catch(() => undefined);
      }
      this.#closed = true;
      if (this.#headTimer) clearInterval(this.#headTimer);
      this.#headTimer = undefined;
      this.#fileClosed = (async () => {
        try {
          await this.#writer.close();
          await this.#pointerWrite;
        } finally {
          if (this.#durable.seq > 0) this.#report('close', this.#durable);
        }
      })();
    }
    return this.#fileClosed;
  }
}
