/**
 * The segments of an audit log on disk (docs/audit.md): the name a rotated segment gets
 * (`<stem>.<first seq, 12 digits><ext>`, so names sort in chain order) and the rotated segments
 * of a chain, oldest first.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Digits of the first `seq` in a rotated segment's name (`<stem>.000000000001.jsonl`). */
export const SEGMENT_SEQ_DIGITS = 12;

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
