/**
 * The line format of the approver's audit log (docs/audit.md; the log as a whole: audit.ts):
 * each line carries `seq` (1, 2, ...) and `prev`, the SHA-256 (hex) of the previous line's bytes
 * (64 zeros on the very first line), so an edited, inserted or deleted line breaks the chain at
 * that line. The first line of every segment after the first is an opening line
 * ({@link SegmentOpening}) that continues the chain and carries its owner's state.
 */
import crypto from 'node:crypto';

/** The `prev` of the first line. */
export const GENESIS_HASH = '0'.repeat(64);

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

/** SHA-256 (hex) of a line's UTF-8 bytes, without its newline. */
export function lineHash(line: string): string {
  return crypto.createHash('sha256').update(line, 'utf8').digest('hex');
}

/** Whether `rec` is a segment opening line ({@link SegmentOpening}). */
export function isOpening(rec: AuditLine): rec is SegmentOpening {
  return rec.kind === 'segment' && typeof rec.previous === 'string' && Array.isArray(rec.carried);
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
