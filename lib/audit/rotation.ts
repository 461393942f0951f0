/**
 * The rotation of an audit log's live segment on disk, crash-safe (docs/audit.md):
 *
 * (1) the new live segment is written whole as `<file>.next` (its opening line) and
 * fdatasync'ed; (2) `<file>` is renamed to its rotated name; (3) `<file>.next` is renamed to
 * `<file>`; (4) the folder is fsync'ed. A process that dies before (2) leaves the old live
 * segment in place: the next open deletes `<file>.next` (nothing after it was written). One that
 * dies between (2) and (3) leaves no `<file>`: the next open finishes the rename
 * ({@link recoverRotation}).
 */
import fs from 'node:fs';
import path from 'node:path';
import { syncDir } from '../support/durable/atomic';
import { AuditFileError, isOpening } from './line';
import { verifyAuditText } from './verify';

/** The path of a rotation's new live segment before it is renamed into place. */
function nextPath(file: string): string {
  return `${file}.next`;
}

/**
 * Steps (1)-(4) of a rotation (see the module comment).
 * @param file the live segment.
 * @param opening the new segment's opening line (no newline).
 * @param rotateTo the path the live segment is renamed to.
 * @returns the new live segment, open for appending (the caller closes the old one).
 * @throws what the file system throws, or when `rotateTo` exists already (rejects).
 */
export async function rotateSegmentFile(file: string, opening: string, rotateTo: string): Promise<fs.promises.FileHandle> {
  const next = nextPath(file);
  const fh = await fs.promises.open(next, 'w', 0o600);
  try {
    await fh.write(opening + '\n');
    await fh.datasync();
    if (fs.existsSync(rotateTo)) throw new Error(`${rotateTo} exists already`);
    await fs.promises.rename(file, rotateTo);
    await fs.promises.rename(next, file);
  } catch (e) {
    await fh.close();
    throw e;
  }
  await syncDir(path.dirname(file));
  return fh;
}

/**
 * Finish or undo a rotation of `file` that a crash interrupted (see the module comment).
 * @throws {AuditFileError} when `<file>.next` is left but does not open a segment after one that exists (rejects).
 */
export async function recoverRotation(file: string): Promise<void> {
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
