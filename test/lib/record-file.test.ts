/**
 * lib/support/durable/record-file.ts without Node-RED, on a real file: a rewrite racing appends. An
 * append made after rewrite() was called (while a group commit was already scheduled) must land
 * after the new content, never in the file the rewrite replaces (where an acknowledged record would
 * be lost).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { RecordFile } from '../../lib/support/durable/record-file';
import { tempDirPerTest } from '../helpers/support';

describe('lib/support/durable: RecordFile', () => {
  const dir = tempDirPerTest('cf-record-file-');

  it('an append made after rewrite() was called lands after the new content, never in the replaced file', async () => {
    const file = path.join(dir(), 'race.jsonl');
    const { file: rf } = await RecordFile.open<{ n: number }>(file);
    const a = rf.append({ n: 1 }); // schedules a group commit
    const rewrite = rf.rewrite([{ n: 1 }]);
    const b = rf.append({ n: 2 }); // after the rewrite call: must follow the new content
    await Promise.all([a, rewrite, b]);
    assert.equal(rf.lines, 2);
    await rf.close();
    assert.deepEqual(
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).n),
      [1, 2],
    );
  });
});
