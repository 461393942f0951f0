/**
 * Checkpoint lines inside the live segment (lib/audit/checkpoint.ts, docs/audit.md "Checkpoints:
 * what a start reads"), on real files: the log writes a `checkpoint` line carrying its owner's
 * state once enough lines came after the last one, and a pointer beside the live segment; a start
 * after a crash reads from that line on (the state it carries, then the lines after it), and a
 * clean close writes one. A pointer that does not match (stale, a cut file, an edited checkpoint)
 * is ignored: the whole live segment is read, so nothing is lost and an edit is still found.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AuditFileError, AuditLog, verifyAuditChain, type AuditLine } from '../../lib';
import { checkpointPointerPath, type CheckpointPointer } from '../../lib/audit/checkpoint';
import { tempDirPerTest, until } from '../helpers/support';

/** A line like the approver's decision lines, about 250 bytes. */
function line(i: number): Record<string, unknown> {
  return { kind: 'decision', decision: 'approve', action_id: `action-${i}`, client_id: 'cc-1', asset: 'BTC-TESTNET', amount: '100000', reasons: ['amount 0.001 <= 0.5, a rule of the approver'], mode: 'live', decidedAt: new Date(1_750_000_000_000 + i * 1000).toISOString() };
}

/** The parsed lines of a file. */
function linesOf(file: string): AuditLine[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditLine);
}

describe('lib/audit: checkpoint lines in the live segment', () => {
  const dir = tempDirPerTest('cf-audit-ck-');
  /** The owner's state: the ids appended so far (what a replay must end up with). */
  const owner = () => {
    const ids: string[] = [];
    return { ids, carry: () => [{ kind: 'state', ids: [...ids] }] };
  };
  /** Append lines `from` .. `to - 1`, each id noted in the owner's state first (as an approver notes a decision). */
  const appendLines = async (log: AuditLog, ids: string[], from: number, to: number) => {
    for (let i = from; i < to; i++) {
      ids.push(`action-${i}`);
      await log.append(line(i));
    }
  };
  /** The pointer file's seq once it names the last checkpoint line of `file` (it is written after that line is on disk). */
  const pointerSettled = async (file: string): Promise<CheckpointPointer> => {
    const last = linesOf(file).filter((l) => l.kind === 'checkpoint').at(-1)!.seq;
    const read = () => (fs.existsSync(checkpointPointerPath(file)) ? (JSON.parse(fs.readFileSync(checkpointPointerPath(file), 'utf8')) as CheckpointPointer) : undefined);
    return until(() => (read()?.seq === last ? read() : undefined), 'the pointer names the last checkpoint line');
  };
  const stateOf = (records: AuditLine[]): string[] => {
    let ids: string[] = [];
    for (const r of records) {
      if (r.kind === 'state') ids = [...(r.ids as string[])];
      else if (r.kind === 'decision' && !ids.includes(String(r.action_id))) ids.push(String(r.action_id));
    }
    return ids;
  };

  it('writes checkpoint lines as lines accumulate, and a start after a crash reads from the last one: the same state, a fraction of the lines', async () => {
    const file = path.join(dir(), 'a.jsonl');
    const o = owner();
    const { log } = await AuditLog.open(file, { carry: o.carry, checkpointMinBytes: 4096, closeCheckpointBytes: Infinity });
    await appendLines(log, o.ids, 0, 200);
    // No close: as after a crash (the file handle is dropped with the process).
    const all = linesOf(file);
    const checkpoints = all.filter((l) => l.kind === 'checkpoint');
    assert.ok(checkpoints.length >= 3, `checkpoint lines: ${checkpoints.length}`);
    assert.equal((await pointerSettled(file)).seq, checkpoints.at(-1)!.seq, 'the pointer names the last checkpoint line');

    const reopened = await AuditLog.open(file, { carry: o.carry });
    const read = reopened.records;
    assert.ok(read.length < 60, `read ${read.length} records of ${all.length} lines`);
    assert.deepEqual(stateOf(read), o.ids, 'the state carried plus the lines after it: every id');
    assert.equal(reopened.log.lines, all.length, 'the chain goes on from the last line');
    await reopened.log.append(line(200));
    await reopened.log.close();
    assert.equal(verifyAuditChain(file).ok, true, 'the whole chain verifies, checkpoint lines included');
  });

  it('a clean close writes a checkpoint line when the lines since the last pass the threshold: the next start reads only the state', async () => {
    const file = path.join(dir(), 'a.jsonl');
    const ids: string[] = [];
    // A state of about 2 KB: the next checkpoint is due after 4 KB of lines, the close one after 1 KB.
    const carry = () => [{ kind: 'state', ids: [...ids], pad: 'x'.repeat(2000) }];
    let { log } = await AuditLog.open(file, { carry, closeCheckpointBytes: Infinity, checkpointMinBytes: 1000 });
    await appendLines(log, ids, 0, 12);
    const before = linesOf(file).filter((l) => l.kind === 'checkpoint').length;
    assert.equal(before, 1, 'one checkpoint while appending');
    await log.close();
    assert.equal(linesOf(file).at(-1)!.kind, 'checkpoint', 'and one at the close');
    const again = await AuditLog.open(file, { carry });
    assert.deepEqual(again.records.map((r) => r.kind), ['state']);
    assert.deepEqual(stateOf(again.records), ids);
    log = again.log;
    await log.close();
  });

  it('a pointer that does not match is ignored: stale, cut file, edited checkpoint; an edited line after the checkpoint is refused', async () => {
    const file = path.join(dir(), 'a.jsonl');
    const o = owner();
    const { log } = await AuditLog.open(file, { carry: o.carry, checkpointMinBytes: 2048, closeCheckpointBytes: Infinity });
    await appendLines(log, o.ids, 0, 60);
    const pointer = await pointerSettled(file);
    const good = fs.readFileSync(file, 'utf8');
    const pointerFile = checkpointPointerPath(file);
    const whole = linesOf(file).length;

    // Stale: it names another line (an offset that is not the checkpoint's).
    fs.writeFileSync(pointerFile, JSON.stringify({ ...pointer, offset: pointer.offset + 10 }));
    let r = await AuditLog.open(file, { carry: o.carry });
    assert.equal(r.records.length, whole - linesOf(file).filter((l) => l.kind === 'checkpoint').length, 'the whole segment is read');
    assert.deepEqual(stateOf(r.records), o.ids);
    await r.log.close();

    // The file cut before the checkpoint line: the pointer is past its end.
    fs.writeFileSync(file, good.slice(0, pointer.offset));
    fs.writeFileSync(pointerFile, JSON.stringify(pointer));
    r = await AuditLog.open(file, { carry: o.carry, closeCheckpointBytes: Infinity, checkpointMinBytes: Infinity });
    assert.ok(r.records.length > 0 && r.records.length < whole);
    await r.log.close();

    // An edited checkpoint line: its hash no longer matches the pointer, so the whole segment is verified, and the edit found.
    const at = Buffer.from(good).subarray(pointer.offset).toString('utf8');
    const edited = good.slice(0, good.length - at.length) + at.replace('"kind":"checkpoint","at":"', '"kind":"checkpoint","at":"X');
    fs.writeFileSync(file, edited);
    fs.writeFileSync(pointerFile, JSON.stringify(pointer));
    await assert.rejects(AuditLog.open(file, { carry: o.carry }), AuditFileError);

    // An edited line after the checkpoint: refused, naming the line after it (whose prev no longer matches) by its number in the file.
    const lines = good.split('\n');
    const n = lines.length - 3;
    lines[n] = lines[n]!.replace('action-', 'act1on-');
    fs.writeFileSync(file, lines.join('\n'));
    fs.writeFileSync(pointerFile, JSON.stringify(pointer));
    await assert.rejects(AuditLog.open(file, { carry: o.carry }), (e: AuditFileError) => e instanceof AuditFileError && e.line === n + 2 && e.message.includes(`SHA-256 of line ${n + 1}`));
    await log.close().catch(() => undefined);
  });

  it('a rotation removes the pointer (the new segment opens with the state); "checkpoint" is refused as a kind of append', async () => {
    const file = path.join(dir(), 'a.jsonl');
    const o = owner();
    const { log } = await AuditLog.open(file, { carry: o.carry, checkpointMinBytes: 2048, closeCheckpointBytes: Infinity });
    for (let i = 0; i < 40; i++) await log.append(line(i));
    await pointerSettled(file);
    await log.rotate();
    assert.equal(fs.existsSync(checkpointPointerPath(file)), false);
    await assert.rejects(log.append({ kind: 'checkpoint', carried: [] }), /reserved/);
    await log.close();
  });
});
