/**
 * Verifying audit logs (docs/audit.md): the chain of one segment's text or file
 * ({@link verifyAuditText}, {@link verifyAuditFile}), of a whole chain across its segments
 * ({@link verifyAuditChain}), and of every chain in a folder ({@link verifyAuditFolder}, what
 * `custodyflow-audit verify` runs); a chain against a head logged earlier ({@link LoggedHead},
 * docs/audit.md "The head: a cut tail or an edited last line").
 */
import fs from 'node:fs';
import path from 'node:path';
import { GENESIS_HASH, isOpening, lineHash, type AuditLine } from './line';
import { SEGMENT_SEQ_DIGITS, rotatedSegments } from './segments';

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
  /** SHA-256 (hex) of the line whose `seq` is {@link VerifyTextOptions.hashAt}, when it was read and good; absent otherwise. */
  hashAt?: string;
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
  /** Lines of the file before this text (it starts at a checkpoint line): line numbers in `bad` count them too (default 0). */
  lineOffset?: number;
  /** Keep the parsed lines in `records` (default true). */
  keep?: boolean;
  /** Return the SHA-256 (hex) of the good line with this `seq` as {@link AuditVerification.hashAt}. */
  hashAt?: number;
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
  let hashAt: string | undefined;
  let head = options.expect?.prev ?? GENESIS_HASH;
  let expectSeq = options.expect?.seq ?? 1;
  if (text === '') return { ok: true, lines: 0, head, records, lastSeq: expectSeq - 1 };
  const lines = text.split('\n');
  const complete = lines.pop() === '';
  const offset = options.lineOffset ?? 0;
  for (let i = 0; i < lines.length; i++) {
    const n = offset + i + 1;
    const bad = (reason: string): AuditVerification => ({ ok: false, lines: i, head, bad: { line: n, reason }, records, lastSeq: expectSeq - 1, ...(hashAt !== undefined ? { hashAt } : {}) });
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
    if (rec.seq === options.hashAt) hashAt = head;
    expectSeq++;
    if (keep) records.push(rec);
  }
  const at = hashAt !== undefined ? { hashAt } : {};
  if (!complete) {
    return { ok: false, lines: lines.length, head, bad: { line: offset + lines.length + 1, reason: 'the last line has no newline: a write was cut off' }, records, lastSeq: expectSeq - 1, ...at };
  }
  return { ok: true, lines: lines.length, head, records, lastSeq: expectSeq - 1, ...at };
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
  /**
   * The check of {@link VerifyChainOptions.head}, when one was given: `found`, the SHA-256 of
   * the chain's good line at that `seq` (absent when the chain ends before it, or breaks before
   * it); `reason`, set when the chain does not hold that line with that hash (then `ok` is false).
   */
  loggedHead?: LoggedHead & { found?: string; reason?: string };
}

/**
 * A head of the chain logged earlier ({@link AuditHead} as the log's owner logged it, e.g. the
 * approver's `audit head: seq <seq> sha256 <hash>` line in Node-RED's log): the chain must hold
 * line `seq` with exactly this hash.
 */
export interface LoggedHead {
  /** The line's `seq` (a positive whole number). */
  seq: number;
  /** SHA-256 (hex, 64 lowercase digits) of that line. */
  hash: string;
}

/** Options of {@link verifyAuditChain} / {@link verifyAuditFolder}. */
export interface VerifyChainOptions {
  /**
   * Start at this rotated segment (a path, or its file name) instead of the chain's first: its
   * opening line's `seq` and `prev` are taken on trust (the segments before it may be archived).
   */
  from?: string;
  /**
   * A head logged earlier ({@link LoggedHead}; {@link verifyAuditChain} only): the chain fails
   * ({@link ChainVerification.loggedHead}) when it ends before line `seq` (its tail was cut) or
   * that line's hash differs (it was edited), though its lines chain well. With `from`, `seq`
   * must be at or after the first line read.
   */
  head?: LoggedHead;
}

/**
 * Verify a whole chain: the rotated segments of `liveFile` oldest first, then `liveFile`. The
 * first segment must start at the genesis (unless `options.from`), each next one with an
 * opening line naming the one before, continuing its `seq` and carrying its head as `prev`;
 * a rotated segment's name must match its first `seq`; with `options.head`, the chain must
 * hold that line with that hash. Reads one segment at a time.
 * @throws what reading a file throws (not ENOENT for the live file: a chain of rotated segments only is verified as far as it goes, and said missing).
 */
export function verifyAuditChain(liveFile: string, options: VerifyChainOptions = {}): ChainVerification {
  const { firstSeq, ...result } = verifyChainLines(liveFile, options);
  return options.head ? checkLoggedHead(result, firstSeq, options.head) : result;
}

/**
 * The chain's check against a logged head: `loggedHead` filled in ({@link ChainVerification.loggedHead}), `ok` false when it fails.
 * @param firstSeq the first line read (undefined when none was).
 */
function checkLoggedHead(r: ChainVerification, firstSeq: number | undefined, head: LoggedHead): ChainVerification {
  const found = r.loggedHead?.found;
  const failed = (reason: string): ChainVerification => ({ ...r, ok: false, loggedHead: { ...head, ...(found !== undefined ? { found } : {}), reason } });
  if (found !== undefined) {
    return found === head.hash ? { ...r, loggedHead: { ...head, found } } : failed(`line seq ${head.seq}'s hash is ${found}, the logged head is ${head.hash}: the line was changed`);
  }
  if (firstSeq !== undefined && head.seq < firstSeq) return failed(`the logged head seq ${head.seq} is before the first line checked (seq ${firstSeq}): verify from an earlier segment`);
  if (!r.ok) return failed(`the chain breaks (seq ${r.lines} is its last good line) before the logged head seq ${head.seq}`);
  return failed(`the chain ends at seq ${r.lines}, before the logged head ${head.seq}: lines were cut off its end`);
}

/** {@link verifyAuditChain} without the logged head's verdict: `loggedHead.found` when the line was read; `firstSeq`, the first line read. */
function verifyChainLines(liveFile: string, options: VerifyChainOptions): ChainVerification & { firstSeq?: number } {
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
  const result: ChainVerification & { firstSeq?: number } = { live: liveFile, segments: files.map((f) => f.file), ok: true, lines: 0, head: GENESIS_HASH, ...(options.from !== undefined ? { trustedFrom: files[0]?.file ?? liveFile } : {}) };
  let expect: VerifyTextOptions['expect'];
  for (let i = 0; i < files.length; i++) {
    const { file, firstSeq } = files[i];
    const first = i === 0;
    const hashAt = options.head?.seq;
    const v = verifyAuditText(fs.readFileSync(file, 'utf8'), { ...(!first ? { expect } : options.from !== undefined ? { trustOpening: true } : {}), keep: false, hashAt });
    if (v.hashAt !== undefined) result.loggedHead = { ...options.head!, found: v.hashAt };
    if (first && v.lines > 0) result.firstSeq = v.lastSeq - v.lines + 1;
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
 * The chains in a folder, read nothing but its names: each `*.jsonl` file that is not a
 * rotated segment, and the live file of each rotated segment (`<stem>.<12 digits>.jsonl`:
 * `<stem>.jsonl`, which may be missing).
 * @returns the live files' paths (`dir` joined), sorted by name.
 * @throws what `fs.readdirSync` throws.
 */
export function auditChainsIn(dir: string): string[] {
  const rotatedRe = new RegExp(`^(.*)\\.\\d{${SEGMENT_SEQ_DIGITS}}\\.jsonl$`);
  const lives = new Set<string>();
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    const m = rotatedRe.exec(name);
    lives.add(m ? `${m[1]}.jsonl` : name);
  }
  return Array.from(lives)
    .sort()
    .map((live) => path.join(dir, live));
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
  const fromName = options.from !== undefined ? path.basename(options.from) : undefined;
  return auditChainsIn(dir).map((file) => {
    const mine = fromName !== undefined && (fromName === path.basename(file) || rotatedSegments(file).some((s) => path.basename(s.file) === fromName));
    return verifyAuditChain(file, mine ? { from: fromName } : {});
  });
}

