/**
 * Checkpoints inside the live segment (docs/audit.md, "Checkpoints: what a start reads"): a
 * `checkpoint` line carries its owner's state like a segment's opening line does, and a small
 * pointer file beside the live segment (`<file>.checkpoint`) says where the last one starts, so a
 * start after a crash reads the state and the lines after it, not the whole live segment.
 *
 * The pointer is only a shortcut: it is written (atomically: a temporary file renamed) after its
 * line is on disk, and read back only when the line it names is there, with that `seq` and that
 * hash. Anything else (no pointer, a stale one, a cut file) falls back to reading the whole live
 * segment, as before checkpoints existed.
 */
import fs from 'node:fs';
import { lineHash, type AuditLine } from './line';

/** The line kind of a checkpoint inside a segment. `append` refuses it, like `segment`. */
export const CHECKPOINT_KIND = 'checkpoint';

/** The approver's {@link AuditLogOptions.checkpointMinBytes} (lib/approver/book.ts): 64 KiB of lines since the last checkpoint. */
export const DEFAULT_CHECKPOINT_MIN_BYTES = 64 * 1024;

/** A checkpoint line: `{seq, prev, kind: "checkpoint", at, carried}` (the chain's fields first). */
export interface CheckpointLine extends AuditLine {
  kind: 'checkpoint';
  /** ISO 8601 time it was written. */
  at: string;
  /** The owner's state, as its carry hook handed it over. */
  carried: Record<string, unknown>[];
}

/** What the pointer file holds: where the last checkpoint line of the live segment is. */
export interface CheckpointPointer {
  /** The checkpoint line's `seq`. */
  seq: number;
  /** SHA-256 (hex) of the checkpoint line (without its newline). */
  hash: string;
  /** Byte offset of the line in the live segment. */
  offset: number;
  /** `seq` of the live segment's first line (its opening line, or 1). */
  firstSeq: number;
  /** Bytes of the live segment's opening line (0 for a first segment), newline included. */
  openingBytes: number;
  /** Lines of the live segment before the checkpoint line, its opening line not counted. */
  linesBefore: number;
}

/** The pointer file of the live segment `file`. */
export function checkpointPointerPath(file: string): string {
  return `${file}.checkpoint`;
}

/**
 * Write the pointer (a temporary file, then renamed over the old one). Not fsync'ed: a pointer
 * lost to a power cut only makes the next start read the whole live segment.
 * @throws what the file system throws (rejects).
 */
export async function writeCheckpointPointer(file: string, pointer: CheckpointPointer): Promise<void> {
  const to = checkpointPointerPath(file);
  await fs.promises.writeFile(`${to}.tmp`, JSON.stringify(pointer), { mode: 0o600 });
  await fs.promises.rename(`${to}.tmp`, to);
}

/** Remove the pointer (the live segment was rotated: its opening line is the checkpoint now). Never throws. */
export async function removeCheckpointPointer(file: string): Promise<void> {
  await fs.promises.rm(checkpointPointerPath(file), { force: true }).catch(() => undefined);
}

/**
 * The live segment's text from its last checkpoint line, when the pointer names a checkpoint line
 * that is there (at its offset, with its `seq` and hash).
 * @param fh the live segment, open for reading.
 * @param size its size in bytes.
 * @returns the pointer, the checkpoint line parsed and the text from it to the end; undefined
 *   when there is no usable pointer (read the whole segment).
 */
export async function readFromCheckpoint(file: string, fh: fs.promises.FileHandle, size: number): Promise<{ pointer: CheckpointPointer; line: CheckpointLine; text: string } | undefined> {
  let pointer: CheckpointPointer;
  try {
    pointer = JSON.parse(await fs.promises.readFile(checkpointPointerPath(file), 'utf8')) as CheckpointPointer;
  } catch {
    return undefined;
  }
  const fields = [pointer?.seq, pointer?.offset, pointer?.firstSeq, pointer?.openingBytes, pointer?.linesBefore];
  if (!fields.every((n) => Number.isSafeInteger(n) && n >= 0) || typeof pointer.hash !== 'string' || pointer.offset >= size) return undefined;
  const buf = Buffer.allocUnsafe(size - pointer.offset);
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await fh.read(buf, got, buf.length - got, pointer.offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  const text = buf.toString('utf8', 0, got);
  const end = text.indexOf('\n');
  if (end < 0) return undefined;
  const first = text.slice(0, end);
  if (lineHash(first) !== pointer.hash) return undefined;
  let line: CheckpointLine;
  try {
    line = JSON.parse(first) as CheckpointLine;
  } catch {
    return undefined;
  }
  if (line.kind !== CHECKPOINT_KIND || line.seq !== pointer.seq || !Array.isArray(line.carried) || typeof line.prev !== 'string') return undefined;
  return { pointer, line, text };
}
