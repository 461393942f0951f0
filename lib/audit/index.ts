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
 * What the chain alone cannot see: lines cut off the end of the live segment, or an edited last
 * line (no later line names them). The log reports its head ({@link AuditHead}: every 1,000
 * lines, every hour, at close) to its owner's `onHead` hook, to be logged off the machine;
 * `verifyAuditChain(file, { head })` (`custodyflow-audit verify <file> --head <seq>:<hash>`)
 * then fails when the chain no longer holds that line with that hash.
 *
 * The files: line.ts (the line format, the opening line, {@link AuditFileError}),
 * log.ts (the writer: group commit, rotation, checkpoints), rotation.ts (the
 * crash-safe rotation on disk), segments.ts (segment names, listing), verify.ts
 * (verifying a segment, a chain, a folder).
 */
export { GENESIS_HASH, lineHash, AuditFileError, type AuditLine, type SegmentOpening } from './line';
export { SEGMENT_SEQ_DIGITS, rotatedSegmentPath, rotatedSegments } from './segments';
export { AuditLog, DEFAULT_MAX_SEGMENT_BYTES, DEFAULT_CLOSE_CHECKPOINT_BYTES, DEFAULT_HEAD_EVERY_LINES, DEFAULT_HEAD_EVERY_MS, type AuditLogOptions, type CarryHook, type AuditHead, type HeadHook } from './log';
export { auditChainsIn, verifyAuditText, verifyAuditFile, verifyAuditChain, verifyAuditFolder, type AuditVerification, type VerifyTextOptions, type ChainVerification, type VerifyChainOptions, type LoggedHead } from './verify';
