/**
 * The recorded history of an audit log, read line by line for a replay (simulate.ts): every
 * segment of the chain (the rotated ones oldest first, then the live one; docs/audit.md
 * "Segments"), streamed in chunks so a history of a million lines is never held at once. Only
 * history lines are handed out: a segment's opening line (`kind: "segment"`) and the checkpoint
 * lines (`kind: "checkpoint"`) carry state in `carried`, not history, and are skipped without
 * being parsed. Reads only: nothing is written, the chain is not verified (`custodyflow-audit
 * verify` does that).
 */
import fs from 'node:fs';
import { rotatedSegments } from '../audit/segments';

/** What {@link readHistory} reads. */
export interface HistoryOptions {
  /** The live segment's path (the approver's `auditFile`); its rotated segments beside it are read first. */
  file: string;
  /** The line kinds to hand out (the first `kind` of each line, which the log writes before any other field but `seq` and `prev`). */
  kinds: ReadonlySet<string>;
  /** Skip the rotated segments whose every line was written before this time (epoch ms): those followed by a segment opened (its opening line's `at`) at or before it. */
  sinceMs?: number;
  /** Called with each line of `kinds`, parsed, in chain order. A line that does not parse is handed to `onBad` instead. */
  onLine(line: Record<string, unknown>): void;
  /** Called with a line of `kinds` that is not JSON (a damaged or cut line), with its file. */
  onBad?(file: string, text: string): void;
}

/** What {@link readHistory} read. */
export interface HistoryRead {
  /** Segments read (skipped ones not counted). */
  segments: number;
  /** Lines read, all kinds. */
  lines: number;
}

const CHUNK = 1 << 20;

/** The top-level `kind` of an audit line's text (its first `"kind":"…"`), or '' when none. */
function kindOf(line: string): string {
  const k = line.indexOf('"kind":"');
  if (k < 0) return '';
  const end = line.indexOf('"', k + 8);
  return end < 0 ? '' : line.slice(k + 8, end);
}

/** The `at` of a rotated segment's opening line (epoch ms), read from its first bytes; NaN when not found. */
async function openedAt(file: string): Promise<number> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(512);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const head = buf.toString('utf8', 0, bytesRead);
    if (kindOf(head) !== 'segment') return NaN;
    const m = /"at":"([^"]+)"/.exec(head);
    return m ? Date.parse(m[1]!) : NaN;
  } finally {
    await fh.close();
  }
}

/** Hand out the lines of `kinds` in one file, streamed. @returns lines read. */
async function readFile(file: string, o: HistoryOptions): Promise<number> {
  let rest = '';
  let lines = 0;
  const take = (text: string): void => {
    lines++;
    if (text === '' || !o.kinds.has(kindOf(text))) return;
    let rec: unknown;
    try {
      rec = JSON.parse(text);
    } catch {
      o.onBad?.(file, text);
      return;
    }
    if (rec && typeof rec === 'object') o.onLine(rec as Record<string, unknown>);
  };
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: CHUNK });
  for await (const chunk of stream as AsyncIterable<string>) {
    let start = 0;
    let nl = chunk.indexOf('\n');
    if (nl >= 0 && rest !== '') {
      take(rest + chunk.slice(0, nl));
      rest = '';
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    while (nl >= 0) {
      take(chunk.slice(start, nl));
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    rest += chunk.slice(start);
  }
  if (rest !== '') take(rest);
  return lines;
}

/**
 * Read the history of the audit log `o.file` (every segment, in chain order), handing each line
 * of `o.kinds` to `o.onLine`.
 * @returns segments and lines read; a log that does not exist reads as empty.
 * @throws what reading a file throws but ENOENT (rejects).
 */
export async function readHistory(o: HistoryOptions): Promise<HistoryRead> {
  const files = rotatedSegments(o.file).map((s) => s.file);
  if (fs.existsSync(o.file)) files.push(o.file);
  let start = 0;
  if (o.sinceMs !== undefined) {
    // Segment i holds only lines written before segment i+1 opened.
    for (let i = files.length - 2; i >= 0; i--) {
      const at = await openedAt(files[i + 1]!).catch(() => NaN);
      if (Number.isFinite(at) && at <= o.sinceMs) {
        start = i + 1;
        break;
      }
    }
  }
  let lines = 0;
  for (const f of files.slice(start)) {
    try {
      lines += await readFile(f, o);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  return { segments: files.length - start, lines };
}
