/**
 * Atomic file replacement with fsync: what every durable file of the pack (record files,
 * the simulator's snapshot and journal) uses to swap in new content so that a crash leaves the
 * old file or the new one, never a mix.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';

/**
 * fsync a folder, so a rename or a new file in it survives a crash. Ignored where unsupported
 * (e.g. Windows, or a file system that cannot sync a folder: the rename is still atomic).
 */
export async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await fsp.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // not supported here
  }
}

/**
 * Replace `file` by `text` atomically: write `file.tmp` (mode 0600), fsync it, rename it over
 * `file`, fsync the folder.
 * @throws what the file system throws (rejects); `file` is then left as it was.
 */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = file + '.tmp';
  const fh = await fsp.open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(text, 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, file);
  await syncDir(path.dirname(file));
}
