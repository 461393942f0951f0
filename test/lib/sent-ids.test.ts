/**
 * lib/support/durable without Node-RED, on real files: SentIds (the core client feed's memory of
 * the action ids it has sent) across reopen, a cut-off last line, pruning by expiry and by a
 * listing of the pending actions, compaction (while marks go on), and the file names.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { SentIds, sentIdsFile, removeSentIdsFiles, type SentRecord } from '../../lib/feeds/sent-ids';
import { tempDirPerTest } from '../helpers/support';

const DAY_MS = 86400 * 1000;

/** The records in `file`, one per complete line. */
function linesOf(file: string): SentRecord[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('lib/support/durable: SentIds', () => {
  const dir = tempDirPerTest('cf-sent-ids-');

  it('names one file per feed node and core client; removeSentIdsFiles deletes only that node’s files', async () => {
    const a = sentIdsFile(dir(), 'feed1', 'demo-approver');
    assert.match(path.basename(a), /^feed1-[0-9a-f]{16}\.jsonl$/);
    assert.notEqual(a, sentIdsFile(dir(), 'feed1', 'other-client'));
    assert.notEqual(a, sentIdsFile(dir(), 'feed2', 'demo-approver'));
    assert.match(path.basename(sentIdsFile(dir(), 'sub/../x y', 'c')), /^sub_\.\._x_y-[0-9a-f]{16}\.jsonl$/, 'no path separator from a node id');
    const files = [a, sentIdsFile(dir(), 'feed1', 'other-client'), sentIdsFile(dir(), 'feed2', 'demo-approver'), sentIdsFile(dir(), 'feed10', 'c')];
    for (const f of files) await (await SentIds.open(f)).close();
    fs.writeFileSync(path.join(dir(), 'feed1-notes.txt'), 'kept');
    await removeSentIdsFiles(dir(), 'feed1');
    assert.deepEqual(fs.readdirSync(dir()).sort(), [path.basename(files[2]), path.basename(files[3]), 'feed1-notes.txt'].sort());
    await removeSentIdsFiles(path.join(dir(), 'missing'), 'feed1'); // no folder: nothing to delete, no error
  });

  it('remembers across a reopen what was marked before it; an earlier instance’s id is not "sent here"', async () => {
    const file = path.join(dir(), 'deep', 'er', 'feed-x.jsonl');
    const future = Math.floor(Date.now() / 1000) + 3600;
    const first = await SentIds.open(file);
    assert.equal(first.size, 0);
    assert.equal(first.has('a1'), false);
    await Promise.all([first.markSent({ id: 'a1', expireTime: future }), first.markSent({ id: 'a2', expireTime: future * 1000 }), first.markSent({ id: 'w1', expireTime: 0 })]);
    assert.ok(first.has('a1') && first.sentHere('a1'));
    await first.markSent({ id: 'a1', expireTime: future }); // known: nothing written
    await first.close();
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the file is private');
    const lines = linesOf(file);
    assert.deepEqual(
      lines.map((l) => [l.action_id, l.expireTime]),
      [
        ['a1', future],
        ['a2', future],
        ['w1', 0],
      ],
      'one line per id, expireTime in epoch seconds (milliseconds converted)',
    );
    assert.ok(lines.every((l) => Math.abs(l.sentAt - Date.now()) < 60000), 'sentAt: epoch milliseconds');

    const second = await SentIds.open(file);
    assert.equal(second.size, 3);
    assert.deepEqual(['a1', 'a2', 'w1', 'a3'].map((id) => second.has(id)), [true, true, true, false]);
    assert.equal(second.sentHere('a1'), false, 'sent by the earlier instance');
    await second.markSent({ id: 'a1', expireTime: future });
    assert.equal(second.sentHere('a1'), true, 'now sent here too');
    assert.equal(linesOf(file).length, 3, 'a redelivery writes nothing');
    await second.close();
    await assert.rejects(second.markSent({ id: 'a9', expireTime: future }), /closed/, 'nothing is recorded after close');
  });

  it('a second mark of the same id is seen at once, before the first is on disk', async () => {
    const ids = await SentIds.open(path.join(dir(), 'f.jsonl'));
    const written = ids.markSent({ id: 'a1', expireTime: 0 });
    assert.equal(ids.sentHere('a1'), true, 'marked synchronously');
    await written;
    await ids.close();
  });

  it('drops a cut-off last line (a write a crash interrupted, never acknowledged) and appends on a line of its own', async () => {
    const file = path.join(dir(), 'cut.jsonl');
    const t = Date.now();
    fs.writeFileSync(file, JSON.stringify({ action_id: 'a1', expireTime: 0, sentAt: t }) + '\n' + JSON.stringify({ action_id: 'a2', expireTime: 0, sentAt: t }) + '\n' + '{"action_id":"a3","expi');
    const ids = await SentIds.open(file);
    assert.deepEqual(['a1', 'a2', 'a3'].map((id) => ids.has(id)), [true, true, false]);
    await ids.markSent({ id: 'a4', expireTime: 0 });
    await ids.close();
    assert.deepEqual(linesOf(file).map((l) => l.action_id), ['a1', 'a2', 'a4']);
  });

  it('prunes by expiry: a day after expireTime; without expiry (0) 30 days after it was sent; compacts at open', async () => {
    const file = path.join(dir(), 'expiry.jsonl');
    let now = Date.now();
    const s = (ms: number) => Math.floor(ms / 1000);
    const records: SentRecord[] = [
      { action_id: 'expired-2d', expireTime: s(now - 2 * DAY_MS), sentAt: now - 3 * DAY_MS },
      { action_id: 'expired-1h', expireTime: s(now - 3600 * 1000), sentAt: now - DAY_MS },
      { action_id: 'pending', expireTime: s(now + 3600 * 1000), sentAt: now - 1000 },
      { action_id: 'connect-old', expireTime: 0, sentAt: now - 31 * DAY_MS },
      { action_id: 'connect-new', expireTime: 0, sentAt: now - 29 * DAY_MS },
    ];
    fs.writeFileSync(file, records.map((r) => JSON.stringify(r) + '\n').join('') + JSON.stringify(records[2]) + '\n' + '"not a record"\n');
    const ids = await SentIds.open(file, { now: () => now });
    assert.deepEqual(
      records.map((r) => [r.action_id, ids.has(r.action_id)]),
      [
        ['expired-2d', false],
        ['expired-1h', true],
        ['pending', true],
        ['connect-old', false],
        ['connect-new', true],
      ],
    );
    assert.deepEqual(linesOf(file).map((l) => l.action_id).sort(), ['connect-new', 'expired-1h', 'pending'], 'compacted at open: no expired id, no duplicate, no stray line');
    assert.equal(ids.lines, 3);

    now += 2 * DAY_MS; // two days later
    assert.equal(await ids.prune(), 3, 'every id is past its horizon now (pending: expired 47 h ago; connect-new: sent 31 days ago)');
    assert.deepEqual([...['pending', 'connect-new', 'expired-1h']].map((id) => ids.has(id)), [false, false, false]);
    assert.equal(ids.size, 0);
    assert.equal(linesOf(file).length, 0, 'compacted: more than twice as many lines as live ids');
    await ids.close();
  });

  it('markSent drops the expired ids by itself every pruneIntervalMs', async () => {
    let now = Date.now();
    const ids = await SentIds.open(path.join(dir(), 'interval.jsonl'), { now: () => now, pruneIntervalMs: 1000 });
    await ids.markSent({ id: 'old', expireTime: Math.floor(now / 1000) + 10 });
    now += DAY_MS + 20000;
    await ids.markSent({ id: 'new', expireTime: Math.floor(now / 1000) + 10 });
    assert.equal(ids.has('old'), false);
    assert.equal(ids.has('new'), true);
    await ids.close();
  });

  it('prunes by a listing of the pending actions: only ids marked before the listing was requested and not in it', async () => {
    const file = path.join(dir(), 'listing.jsonl');
    const earlier = await SentIds.open(file);
    for (const id of ['gone', 'still', 'connect']) await earlier.markSent({ id, expireTime: id === 'connect' ? 0 : Math.floor(Date.now() / 1000) + 3600 });
    await earlier.close();

    const ids = await SentIds.open(file);
    await ids.markSent({ id: 'approved-here', expireTime: 0 });
    const requestedAt = performance.now();
    await ids.markSent({ id: 'after-request', expireTime: 0 }); // sent while the listing was being read: not in it, still pending
    const dropped = await ids.prune({ ids: ['still', 'connect', 'unknown'], requestedAt });
    assert.equal(dropped, 2);
    assert.deepEqual(
      ['gone', 'still', 'connect', 'approved-here', 'after-request', 'unknown'].map((id) => [id, ids.has(id)]),
      [
        ['gone', false],
        ['still', true],
        ['connect', true],
        ['approved-here', false],
        ['after-request', true],
        ['unknown', false],
      ],
    );
    assert.equal(ids.lines, 5, 'five lines for three live ids: not yet more than twice');
    await ids.prune({ ids: ['still'], requestedAt: performance.now() });
    assert.equal(ids.size, 1);
    assert.deepEqual(linesOf(file).map((l) => l.action_id), ['still'], 'compacted: 5 lines > 2 x 1');
    await ids.close();
  });

  it('compacts while marks go on and loses none of them; a reopen sees every id', async () => {
    const file = path.join(dir(), 'busy.jsonl');
    const now = Date.now();
    const exp = Math.floor(now / 1000) + 3600;
    let ids = await SentIds.open(file);
    for (let i = 0; i < 50; i++) await ids.markSent({ id: `old-${i}`, expireTime: exp });
    const requestedAt = performance.now();
    // Marks in the same turn as the compaction, before and after it was called.
    const before = Array.from({ length: 20 }, (_, i) => ids.markSent({ id: `before-${i}`, expireTime: exp }));
    const compaction = ids.prune({ ids: ['old-0'], requestedAt });
    const after = Array.from({ length: 20 }, (_, i) => ids.markSent({ id: `after-${i}`, expireTime: exp }));
    await Promise.all([...before, compaction, ...after]);
    assert.equal(await compaction, 49);
    await ids.close();
    ids = await SentIds.open(file);
    const expected = ['old-0', ...Array.from({ length: 20 }, (_, i) => `before-${i}`), ...Array.from({ length: 20 }, (_, i) => `after-${i}`)];
    assert.deepEqual(expected.filter((id) => !ids.has(id)), [], 'every acknowledged id is on disk');
    assert.equal(ids.size, 41);
    await ids.close();
  });

  it('a detached memory (no file) knows only what it marked', async () => {
    const ids = SentIds.detached();
    assert.equal(ids.path, undefined);
    await ids.markSent({ id: 'a1', expireTime: 0 });
    assert.ok(ids.has('a1') && ids.sentHere('a1'));
    assert.equal(ids.lines, 0);
    await ids.close();
  });

  it('open fails (rejects) when the folder cannot be made', async () => {
    fs.writeFileSync(path.join(dir(), 'custodyflow'), 'a file where the folder should be');
    await assert.rejects(SentIds.open(path.join(dir(), 'custodyflow', 'feed', 'x.jsonl')), (e: NodeJS.ErrnoException) => ['ENOTDIR', 'EEXIST'].includes(String(e.code)));
  });
});
