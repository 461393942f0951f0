/**
 * The audit chain's head (lib/audit/log.ts `onHead`, docs/audit.md "The head: a cut
 * tail or an edited last line"), on real files: heads reported every N lines once the line is on
 * disk (across a rotation too), by the timer, and at close; and `custodyflow-audit verify --head`
 * (in-process `main`, and the built CLI once) passing on the intact chain and failing on a copy
 * with its last line cut off and on a copy with its last line edited, both of which the plain
 * verify still passes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AuditLog, type AuditHead } from '../../lib';
import { lineHash, rotatedSegments } from '../../lib/audit';
import { main } from '../../lib/audit/cli';
import { tempDirPerTest, until } from '../helpers/support';

const root = path.resolve(__dirname, '..', '..', '..');
const AUDIT_CLI = path.join(root, 'dist', 'lib', 'audit', 'cli.js');

/** Run `custodyflow-audit` in-process: its exit code and what it printed. */
function cli(...argv: string[]): { code: number; out: string; err: string } {
  const out: string[] = [];
  const err: string[] = [];
  const code = main(argv, (s) => out.push(s), (s) => err.push(s));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The lines of a file, without their newlines. */
const linesOf = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);

/** Write `lines` (each with its newline) to `file`. */
const writeLines = (file: string, lines: string[]): void => fs.writeFileSync(file, lines.map((l) => l + '\n').join(''));

describe('lib/approver: the audit chain head, logged and verified', () => {
  const dir = tempDirPerTest('cf-audit-head-');

  it('reports the head every headEveryLines lines once that line is on disk, and at close the last line', async () => {
    const file = path.join(dir(), 'a.jsonl');
    const heads: AuditHead[] = [];
    const { log } = await AuditLog.open(file, {
      headEveryLines: 5,
      headEveryMs: Infinity,
      onHead: (h) => {
        // Told after the line is on disk: the file already holds that line, with that hash.
        const onDisk = linesOf(file);
        assert.ok(onDisk.length >= h.seq, `line ${h.seq} is on disk when its head is told (${onDisk.length} lines)`);
        assert.equal(lineHash(onDisk[h.seq - 1]), h.hash);
        heads.push(h);
      },
    });
    for (let i = 1; i <= 7; i++) await log.append({ kind: 'note', i });
    // Concurrent appends (one group commit): the multiple of 5 inside the group is told, with its own hash.
    await Promise.all(Array.from({ length: 6 }, (_x, i) => log.append({ kind: 'note', i: 8 + i })));
    assert.deepEqual(
      heads.map((h) => [h.seq, h.why]),
      [
        [5, 'lines'],
        [10, 'lines'],
      ],
    );
    const lastHead = log.head;
    await log.close();
    assert.deepEqual(heads.at(-1), { seq: 13, hash: lastHead, file, why: 'close' });
    const lines = linesOf(file);
    assert.equal(lines.length, 13);
    assert.equal(heads[0].hash, lineHash(lines[4]));
    assert.equal(heads[1].hash, lineHash(lines[9]));
    // The head told is the next line's prev.
    assert.equal(JSON.parse(lines[5]).prev, heads[0].hash);
  });

  it('counts a rotation opening line as a line, and the head file is the live file (what verify takes)', async () => {
    const file = path.join(dir(), 'b.jsonl');
    const heads: AuditHead[] = [];
    const { log } = await AuditLog.open(file, { headEveryLines: 3, headEveryMs: Infinity, carry: () => [{ kind: 'state' }] });
    log.setOnHead((h) => heads.push(h));
    await log.append({ kind: 'note', i: 1 });
    await log.append({ kind: 'note', i: 2 });
    await log.rotate(); // seq 3: the opening line of the new live segment
    await log.append({ kind: 'note', i: 4 });
    await log.close();
    assert.equal(rotatedSegments(file).length, 1);
    assert.deepEqual(
      heads.map((h) => [h.seq, h.why, h.file]),
      [
        [3, 'lines', file],
        [4, 'close', file],
      ],
    );
    assert.equal(heads[0].hash, lineHash(linesOf(file)[0]));
    for (const h of heads) assert.equal(cli('verify', file, '--head', `${h.seq}:${h.hash}`).code, 0);
    // From the live segment (seq 3 on): seq 3 is checked; seq 1, in the segment before, cannot be.
    assert.equal(cli('verify', file, '--from', 'b.jsonl', '--head', `${heads[0].seq}:${heads[0].hash}`).code, 0);
    const first = lineHash(linesOf(rotatedSegments(file)[0].file)[0]);
    const r = cli('verify', file, '--from', 'b.jsonl', '--head', `1:${first}`);
    assert.equal(r.code, 1);
    assert.match(r.out, /the logged head seq 1 is before the first line checked \(seq 3\)/);
  });

  it('reports the head from its timer once lines went on disk since the last report; a hook that throws does not stop the log', async () => {
    const file = path.join(dir(), 'c.jsonl');
    const heads: AuditHead[] = [];
    let throws = true;
    const { log } = await AuditLog.open(file, {
      headEveryLines: Infinity,
      headEveryMs: 10,
      onHead: (h) => {
        heads.push(h);
        if (throws) throw new Error('a hook that fails');
      },
    });
    await log.append({ kind: 'note', i: 1 });
    await log.append({ kind: 'note', i: 2 });
    const hourly = await until(() => heads.find((h) => h.why === 'hourly' && h.seq === 2), 'a timer head at seq 2');
    assert.equal(hourly.hash, log.head);
    throws = false;
    await log.append({ kind: 'note', i: 3 });
    await until(() => heads.find((h) => h.why === 'hourly' && h.seq === 3), 'a timer head at seq 3');
    await log.close();
    assert.deepEqual(heads.at(-1), { seq: 3, hash: lineHash(linesOf(file)[2]), file, why: 'close' });
  });

  it('refuses head options out of range', async () => {
    const file = path.join(dir(), 'd.jsonl');
    await assert.rejects(AuditLog.open(file, { headEveryLines: 1.5 }), RangeError);
    await assert.rejects(AuditLog.open(file, { headEveryMs: 2 ** 31 }), RangeError);
    await assert.rejects(AuditLog.open(file, { headEveryMs: -1 }), RangeError);
  });

  describe('custodyflow-audit verify --head', () => {
    /** A closed log of 6 lines in `<dir>/chain/a.jsonl` and the head told at its close. */
    async function chain(): Promise<{ file: string; head: AuditHead }> {
      const file = path.join(dir(), 'chain', 'a.jsonl');
      let head: AuditHead | undefined;
      const { log } = await AuditLog.open(file, { onHead: (h) => (head = h) });
      for (let i = 1; i <= 6; i++) await log.append({ kind: 'decision', action_id: `action-${i}`, decision: 'approve' });
      await log.close();
      assert.ok(head && head.why === 'close' && head.seq === 6);
      return { file, head };
    }

    it('passes on the intact chain, a file or a folder holding that one chain, with --from too', async () => {
      const { file, head } = await chain();
      let r = cli('verify', file, '--head', `${head.seq}:${head.hash}`);
      assert.equal(r.code, 0, r.out + r.err);
      assert.match(r.out, /^ok: 6 lines, head [0-9a-f]{64}, 1 segment\nlogged head seq 6: ok, sha256 [0-9a-f]{64}$/);
      // An earlier head of the same chain (seq 4) is in it too; the hash in capitals is the same hash.
      r = cli('verify', path.dirname(file), '--head', `4:${lineHash(linesOf(file)[3]).toUpperCase()}`);
      assert.equal(r.code, 0, r.out + r.err);
      assert.match(r.out, /a\.jsonl: logged head seq 4: ok/);
      r = cli('verify', file, '--from', 'a.jsonl', '--head', `${head.seq}:${head.hash}`);
      assert.equal(r.code, 0, r.out + r.err);
    });

    it('fails on a copy with its last line cut off, which the plain verify passes', async () => {
      const { file, head } = await chain();
      const cut = path.join(dir(), 'cut', 'a.jsonl');
      fs.mkdirSync(path.dirname(cut));
      writeLines(cut, linesOf(file).slice(0, -1));
      assert.equal(cli('verify', cut).code, 0, 'the chain alone is valid');
      const r = cli('verify', cut, '--head', `${head.seq}:${head.hash}`);
      assert.equal(r.code, 1);
      assert.match(r.out, /^chain ok: 5 lines, head [0-9a-f]{64}, 1 segment$/m);
      assert.match(r.out, /a\.jsonl: the logged head is not in the chain: the chain ends at seq 5, before the logged head 6: lines were cut off its end/);
    });

    it('fails on a copy with its last line edited, which the plain verify passes', async () => {
      const { file, head } = await chain();
      const edited = path.join(dir(), 'edited', 'a.jsonl');
      fs.mkdirSync(path.dirname(edited));
      const lines = linesOf(file);
      lines[5] = lines[5].replace('"approve"', '"reject"');
      assert.notEqual(lines[5], linesOf(file)[5]);
      writeLines(edited, lines);
      assert.equal(cli('verify', edited).code, 0, 'the chain alone is valid');
      const r = cli('verify', edited, '--head', `${head.seq}:${head.hash}`);
      assert.equal(r.code, 1);
      assert.ok(r.out.includes(`line seq 6's hash is ${lineHash(lines[5])}, the logged head is ${head.hash}: the line was changed`), r.out);
    });

    it('is a usage error (2) on a bad --head, or with a folder of more than one chain', async () => {
      const { file, head } = await chain();
      for (const bad of ['6', `0:${head.hash}`, `6:${head.hash.slice(1)}`, `x:${head.hash}`]) {
        const r = cli('verify', file, '--head', bad);
        assert.equal(r.code, 2, bad);
        assert.match(r.err, /usage: custodyflow-audit verify/);
      }
      assert.equal(cli('verify', file, '--head').code, 2);
      fs.copyFileSync(file, path.join(path.dirname(file), 'b.jsonl'));
      const r = cli('verify', path.dirname(file), '--head', `${head.seq}:${head.hash}`);
      assert.equal(r.code, 2);
      assert.match(r.err, /--head checks one chain, and this folder holds 2/);
      // Without --head the folder verifies both chains.
      assert.equal(cli('verify', path.dirname(file)).code, 0);
    });

    it('the built CLI: exit 0 on the intact chain, 1 on a cut one, naming why', async () => {
      const { file, head } = await chain();
      let r = spawnSync(process.execPath, [AUDIT_CLI, 'verify', file, '--head', `${head.seq}:${head.hash}`], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /logged head seq 6: ok/);
      writeLines(file, linesOf(file).slice(0, -2));
      r = spawnSync(process.execPath, [AUDIT_CLI, 'verify', file, '--head', `${head.seq}:${head.hash}`], { encoding: 'utf8' });
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /the chain ends at seq 4, before the logged head 6/);
    });
  });
});
