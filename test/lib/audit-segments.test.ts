/**
 * The audit log in segments (lib/audit/index.ts, docs/audit.md), on real files: rotation by
 * size and by UTC day (an injected clock), the chain running across files, a start reading the
 * carried state and the live segment only, a file written before segments opening and rotating
 * from there, a rotation cut by a crash (each on-disk state it can leave, and a child process
 * SIGKILLed while it rotates) opening afterwards, and the built `custodyflow-audit verify`
 * naming an edited line in an older segment of a folder.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AuditFileError, AuditLog, verifyAuditChain, verifyAuditFile, verifyAuditFolder, type AuditLine } from '../../lib';
import { tempDirPerTest, until } from '../helpers/support';
import { GENESIS_HASH, lineHash, rotatedSegmentPath, rotatedSegments, type SegmentOpening } from '../../lib/audit';

const root = path.resolve(__dirname, '..', '..', '..');
const AUDIT_CLI = path.join(root, 'dist', 'lib', 'audit', 'cli.js');
const AUDIT_JS = path.join(root, 'dist', 'lib', 'audit', 'index.js');

/** A decision line like the approver's, about 300 bytes. */
function decision(i: number): Record<string, unknown> {
  return { kind: 'decision', decision: 'approve', rule: { index: 0, name: 'small BTC' }, reasons: ['amount 0.001 <= 0.5'], action_id: `action-${i}`, client_id: 'cc-1', type: 'ApproveTransfer', asset: 'BTC-TESTNET', amount: '100000', amountDecimal: '0.001', destination: 'tb1qexample', velocity: null, mode: 'live', decidedAt: new Date(1_750_000_000_000 + i * 1000).toISOString() };
}

/** The parsed lines of a file. */
function linesOf(file: string): AuditLine[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditLine);
}

describe('lib/approver: the audit log in segments', () => {
  const dir = tempDirPerTest('cf-audit-seg-');

  it('rotates by size: segments named by their first seq, each opening with the head and name of the one before and the carried records; the chain runs across files', async () => {
    const file = path.join(dir(), 'a.jsonl');
    let carries = 0;
    const { log } = await AuditLog.open(file, { maxSegmentBytes: 2000, carry: () => [{ kind: 'state', n: ++carries }] });
    const written: AuditLine[] = [];
    for (let i = 0; i < 40; i++) written.push(await log.append(decision(i)));
    // Concurrent appends across rotations too: one chain, in order.
    written.push(...(await Promise.all(Array.from({ length: 40 }, (_x, i) => log.append(decision(40 + i))))));
    await log.close();

    const rotated = rotatedSegments(file);
    assert.ok(rotated.length >= 5, `${rotated.length} rotated segments`);
    assert.equal(path.basename(rotated[0].file), 'a.000000000001.jsonl');
    const files = [...rotated.map((r) => r.file), file];
    let prevHead = GENESIS_HASH;
    let prevSeq = 0;
    let bodyLines = 0;
    for (let k = 0; k < files.length; k++) {
      const text = fs.readFileSync(files[k], 'utf8');
      const ls = text.split('\n').slice(0, -1);
      const first = JSON.parse(ls[0]) as AuditLine;
      assert.equal(first.seq, prevSeq + 1, `${files[k]} continues the seq`);
      assert.equal(first.prev, prevHead, `${files[k]} starts at the head of the segment before`);
      if (k === 0) {
        assert.notEqual(first.kind, 'segment', 'the first segment has no opening line');
      } else {
        const o = first as SegmentOpening;
        assert.equal(o.kind, 'segment');
        assert.equal(o.previous, path.basename(files[k - 1]));
        assert.equal(o.reason, 'size');
        assert.deepEqual(o.carried, [{ kind: 'state', n: k }]);
        const recordBytes = Buffer.byteLength(text) - Buffer.byteLength(ls[0]) - 1;
        assert.ok(recordBytes <= 2000, `${files[k]}: ${recordBytes} bytes of lines`);
      }
      if (k < rotated.length) assert.equal(rotated[k].firstSeq, first.seq, 'named by its first seq');
      bodyLines += ls.filter((l) => !l.includes('"kind":"segment"')).length;
      prevHead = lineHash(ls[ls.length - 1]);
      prevSeq = (JSON.parse(ls[ls.length - 1]) as AuditLine).seq;
    }
    assert.equal(bodyLines, 80);
    assert.deepEqual(written.map((l) => l.action_id), Array.from({ length: 80 }, (_x, i) => `action-${i}`));
    assert.equal(prevHead, log.head);
    const chain = verifyAuditChain(file);
    assert.equal(chain.ok, true, JSON.stringify(chain.bad));
    assert.equal(chain.lines, 80 + rotated.length);
    assert.equal(chain.head, log.head);
    assert.equal(chain.segments.length, files.length);
  });

  it('rotates at the first append of a new UTC day (injected clock), not on an idle day; without a carry hook it never rotates', async () => {
    const file = path.join(dir(), 'd.jsonl');
    let now = Date.UTC(2025, 2, 1, 23, 59, 0);
    const { log } = await AuditLog.open(file, { now: () => now, carry: () => [] });
    await log.append(decision(1));
    await log.append(decision(2));
    now += 60_000; // 2025-03-02 00:00 UTC
    await log.append(decision(3));
    now += 3 * 86_400_000; // three idle days later
    await log.append(decision(4));
    await log.close();
    const rotated = rotatedSegments(file).map((r) => path.basename(r.file));
    // Lines: action-1 (seq 1), action-2, the opening line (seq 3), action-3, the opening line, action-4.
    assert.deepEqual(rotated, ['d.000000000001.jsonl', 'd.000000000003.jsonl']);
    const live = linesOf(file);
    assert.equal(live[0].kind, 'segment');
    assert.equal(live[0].reason, 'day');
    assert.equal(live[0].at, '2025-03-05T00:00:00.000Z');
    assert.equal(live[0].previous, 'd.000000000003.jsonl');
    assert.deepEqual(linesOf(rotatedSegmentPath(file, 3)).map((l) => l.action_id ?? l.kind), ['segment', 'action-3']);
    assert.equal(verifyAuditChain(file).ok, true);

    const plain = path.join(dir(), 'plain.jsonl');
    now = Date.UTC(2025, 2, 1);
    const { log: p } = await AuditLog.open(plain, { now: () => now, maxSegmentBytes: 100 });
    for (let i = 0; i < 5; i++) {
      await p.append(decision(i));
      now += 86_400_000;
    }
    await p.close();
    assert.deepEqual(rotatedSegments(plain), [], 'no owner state to carry: one file as before');
    assert.equal(verifyAuditFile(plain).lines, 5);
  });

  it('a start reads the live segment only: the carried records as written, then the lines after the opening line; it continues the chain', async () => {
    const file = path.join(dir(), 's.jsonl');
    const state: Record<string, unknown>[] = [];
    const { log } = await AuditLog.open(file, { maxSegmentBytes: 1500, carry: () => state.slice(-3) });
    for (let i = 0; i < 20; i++) {
      const line = await log.append(decision(i));
      state.push(line);
    }
    await log.close();
    const opening = linesOf(file)[0] as SegmentOpening;
    assert.equal(opening.kind, 'segment');
    const after = linesOf(file).slice(1);

    // Rotated segments are not read: overwrite them with what would not verify, to prove it.
    const rotated = rotatedSegments(file);
    for (const r of rotated) fs.writeFileSync(r.file, 'not read at start\n');
    const again = await AuditLog.open(file, { maxSegmentBytes: 1500 });
    assert.deepEqual(again.opening, opening);
    assert.deepEqual(again.records, [...opening.carried, ...after]);
    assert.deepEqual(
      again.records.slice(0, opening.carried.length).map((r) => r.seq),
      opening.carried.map((r) => r.seq),
      'carried records keep their own seq and prev, as the owner wrote them',
    );
    const next = await again.log.append(decision(99));
    assert.equal(next.seq, after.length ? after[after.length - 1].seq + 1 : opening.seq + 1);
    await again.log.close();
    assert.equal(verifyAuditFile(file, { trustOpening: true }).ok, true);
    assert.equal(verifyAuditFile(file).ok, false, 'on its own, a live segment does not start at the genesis');
  });

  it('a clean close writes a checkpoint: the next start reads the carried state only', async () => {
    const file = path.join(dir(), 'c.jsonl');
    const { log } = await AuditLog.open(file, { closeCheckpointBytes: 0 });
    log.setCarry(() => [{ kind: 'state', pending: ['action-7'] }]);
    for (let i = 0; i < 10; i++) await log.append(decision(i));
    await log.close();
    const { log: l2, records, opening } = await AuditLog.open(file);
    assert.equal(opening?.reason, 'close');
    assert.deepEqual(records, [{ kind: 'state', pending: ['action-7'] }]);
    await l2.close();
    assert.equal(verifyAuditChain(file).lines, 11);
    // A close with nothing new since the checkpoint writes no other.
    const { log: l3 } = await AuditLog.open(file, { closeCheckpointBytes: 0, carry: () => [] });
    await l3.close();
    assert.equal(rotatedSegments(file).length, 1);
  });

  it('a file written before segments (no opening line) opens as before, rotates from there, and the chain verifies across', async () => {
    const file = path.join(dir(), 'legacy.jsonl');
    // Written by hand as the single-file audit log wrote it: seq from 1, prev from the genesis.
    let prev = GENESIS_HASH;
    let text = '';
    for (let i = 1; i <= 30; i++) {
      const line = JSON.stringify({ seq: i, prev, ...decision(i) });
      text += line + '\n';
      prev = lineHash(line);
    }
    fs.writeFileSync(file, text);
    const { log, records, opening } = await AuditLog.open(file, { maxSegmentBytes: 4000, carry: () => [{ kind: 'state', from: 'legacy' }] });
    assert.equal(opening, undefined);
    assert.equal(records.length, 30);
    assert.equal(records[29].action_id, 'action-30');
    for (let i = 31; i <= 60; i++) await log.append(decision(i));
    await log.close();
    const rotated = rotatedSegments(file);
    assert.equal(path.basename(rotated[0].file), 'legacy.000000000001.jsonl');
    assert.equal(fs.readFileSync(rotated[0].file, 'utf8'), text, 'the old file is the first segment, byte for byte');
    const chain = verifyAuditChain(file);
    assert.equal(chain.ok, true, JSON.stringify(chain.bad));
    assert.equal(chain.lines, 60 + rotated.length);
  });

  it('a rotation cut by a crash at each step opens afterwards, the chain whole: before the renames, between them', async () => {
    // One real rotation; then the two states a crash can leave, rebuilt from its files.
    const file = path.join(dir(), 'r.jsonl');
    const { log } = await AuditLog.open(file, { carry: () => [{ kind: 'state' }] });
    for (let i = 0; i < 5; i++) await log.append(decision(i));
    const before = fs.readFileSync(file);
    await log.rotate();
    await log.close();
    const rotatedFile = rotatedSegmentPath(file, 1);
    const newLive = fs.readFileSync(file);

    // (a) Died after writing `<file>.next`, before any rename: the old live segment is still live.
    const a = path.join(dir(), 'a');
    fs.mkdirSync(a);
    fs.writeFileSync(path.join(a, 'r.jsonl'), before);
    fs.writeFileSync(path.join(a, 'r.jsonl.next'), newLive);
    let opened = await AuditLog.open(path.join(a, 'r.jsonl'));
    assert.equal(opened.records.length, 5);
    assert.equal(opened.opening, undefined);
    assert.equal(fs.existsSync(path.join(a, 'r.jsonl.next')), false, 'the unfinished new segment is dropped');
    await opened.log.append(decision(5));
    await opened.log.close();
    assert.equal(verifyAuditChain(path.join(a, 'r.jsonl')).lines, 6);

    // (b) Died between the renames: no live file, the rotated one and `<file>.next`.
    const b = path.join(dir(), 'b');
    fs.mkdirSync(b);
    fs.writeFileSync(path.join(b, path.basename(rotatedFile)), before);
    fs.writeFileSync(path.join(b, 'r.jsonl.next'), newLive);
    opened = await AuditLog.open(path.join(b, 'r.jsonl'));
    assert.deepEqual(opened.records, [{ kind: 'state' }]);
    assert.equal(opened.opening?.previous, 'r.000000000001.jsonl');
    await opened.log.append(decision(5));
    await opened.log.close();
    assert.equal(fs.existsSync(path.join(b, 'r.jsonl.next')), false);
    const chain = verifyAuditChain(path.join(b, 'r.jsonl'));
    assert.equal(chain.ok, true, JSON.stringify(chain.bad));
    assert.equal(chain.lines, 7);

    // (c) The live file lost while rotated segments exist: refused, not started afresh.
    fs.rmSync(path.join(b, 'r.jsonl'));
    await assert.rejects(AuditLog.open(path.join(b, 'r.jsonl')), (e: unknown) => e instanceof AuditFileError && /rotated segments exist/.test(e.message));
  });

  it('a process SIGKILLed while it appends and rotates: the log opens afterwards and its whole chain verifies', async function () {
    this.timeout(60000);
    const file = path.join(dir(), 'k.jsonl');
    const script = `
      const { AuditLog } = require(${JSON.stringify(AUDIT_JS)});
      (async () => {
        const { log } = await AuditLog.open(${JSON.stringify(file)}, { maxSegmentBytes: 700, carry: () => [{ kind: 'state', at: Date.now() }] });
        let i = 0;
        for (;;) {
          await Promise.all([log.append({ kind: 'decision', n: i++ }), log.append({ kind: 'result', n: i++ })]);
          if (i === 200) process.stdout.write('rotating\\n');
        }
      })();`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await until(() => (out.includes('rotating') ? true : undefined), 'the child to have rotated');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.ok(rotatedSegments(file).length > 10);
    const { log, records } = await AuditLog.open(file);
    assert.ok(records.length >= 1);
    await log.append({ kind: 'after' });
    await log.close();
    const chain = verifyAuditChain(file);
    assert.equal(chain.ok, true, JSON.stringify(chain.bad));
    assert.equal(chain.head, log.head);
  });

  it('custodyflow-audit verify <folder> (the built CLI) names an edited line in an older segment, file and line, and exits 1; the good folder exits 0', async () => {
    const folder = dir();
    for (const id of ['node-a', 'node-b']) {
      const { log } = await AuditLog.open(path.join(folder, `${id}.jsonl`), { maxSegmentBytes: 3000, carry: () => [{ kind: 'state', id }] });
      for (let i = 0; i < 60; i++) await log.append(i % 2 ? { kind: 'result', mode: 'live', action_id: `action-${i - 1}`, client_id: 'cc-1', ok: true, statusCode: 200, at: new Date().toISOString() } : decision(i));
      await log.close();
    }
    fs.writeFileSync(path.join(folder, 'notes.txt'), 'not an audit file\n');
    const segments = rotatedSegments(path.join(folder, 'node-a.jsonl'));
    assert.ok(segments.length >= 4, `${segments.length} rotated segments`);

    let res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', folder], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stdout + res.stderr);
    const chains = res.stdout.trim().split('\n');
    assert.equal(chains.length, 2);
    const good = verifyAuditFolder(folder);
    assert.match(chains[0], new RegExp(`^node-a\\.jsonl: ok: ${good[0].lines} lines, head ${good[0].head}, ${segments.length + 1} segments$`));
    assert.match(chains[1], /^node-b\.jsonl: ok: \d+ lines, head [0-9a-f]{64}, \d+ segments$/);

    // Edit line 3 of the second segment: a decision turned into a rejection.
    const older = segments[1].file;
    const lines = fs.readFileSync(older, 'utf8').split('\n');
    const target = lines.findIndex((l, i) => i >= 2 && l.includes('"decision":"approve"'));
    lines[target] = lines[target].replace('"decision":"approve"', '"decision":"reject"');
    fs.writeFileSync(older, lines.join('\n'));
    res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', folder], { encoding: 'utf8' });
    assert.equal(res.status, 1);
    const n = target + 1;
    assert.ok(res.stdout.includes(`${older}: line ${n + 1}: prev does not match the SHA-256 of line ${n}: line ${n} was edited`), res.stdout);
    assert.match(res.stdout, /^node-b\.jsonl: ok: /m, 'the other chain is still reported good');

    // Its last line edited: named by the next segment's opening line.
    fs.writeFileSync(older, fs.readFileSync(older, 'utf8').replace('"decision":"reject"', '"decision":"approve"'));
    const ls = fs.readFileSync(older, 'utf8').split('\n');
    ls[ls.length - 2] = ls[ls.length - 2].replace(/"client_id":"cc-1"/, '"client_id":"cc-2"');
    fs.writeFileSync(older, ls.join('\n'));
    res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', folder], { encoding: 'utf8' });
    assert.equal(res.status, 1);
    assert.ok(res.stdout.includes(`${segments[2].file}: line 1: prev does not match the head of ${path.basename(older)}`), res.stdout);

    // An older segment archived away: the chain no longer starts at the genesis, unless told where to start.
    fs.rmSync(segments[0].file);
    res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', path.join(folder, 'node-a.jsonl')], { encoding: 'utf8' });
    assert.equal(res.status, 1);
    assert.ok(res.stdout.includes(`${segments[1].file}: line 1: opens a segment after ${path.basename(segments[0].file)}`), res.stdout);
    res = spawnSync(process.execPath, [AUDIT_CLI, 'verify', folder, '--from', path.basename(segments[3].file)], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stdout);
    assert.match(res.stdout, /^node-a\.jsonl: ok: \d+ lines, head [0-9a-f]{64}, \d+ segments, from node-a\.000000000\d+\.jsonl \(its opening prev taken on trust\)$/m);
  });
});
