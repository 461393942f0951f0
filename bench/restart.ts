/**
 * `npm run bench -- restart`: what the approver and custody-track read when they start again after
 * 100,000 recorded actions (docs/performance.md, "What is kept in memory"), against an empty start.
 *
 * - **Approver**: lib's `Approver` in dry run (no API call: the actions come with their details),
 *   one rule approving BTC-TESTNET transfers, the no-match decision hold; `actions` (default
 *   100,000) actions, four in five BTC-TESTNET (approved), one in five ETH-TESTNET (held), each
 *   expiring an hour ahead, decided in bursts of 1,000 into its audit file, then a clean close.
 *   Measured: what the start reads (the records the audit file hands back: its last checkpoint and
 *   the lines after it) per action the book holds, `Approver.open` + `close` p50 against an empty
 *   audit file, and 1,000 of the actions decided again: each must come back `redelivered`.
 * - **custody-track's file store**: `actions` records, each with a 2 KiB msg copy, written in
 *   bursts of 1,000; 95 in 100 then reported final, the rest still followed; close. Measured: the
 *   file's lines per entry the store holds after a start (it compacts at open), `FileTrackStore.open`
 *   + `close` p50 against an empty file, and a report of a reported one refused.
 * Options (`run(opts)`): `actions` (default 100,000), `runs` (default 9).
 */
import fs from 'node:fs';
import path from 'node:path';
import { AuditLog } from '../lib/audit';
import { Approver, compileRules } from '../lib/approver';
import { FileTrackStore, type TrackRecord } from '../lib/tracking';
import { alternatingMedians, atMost, printWhenMain, timeMs, type BenchRow } from './table';
import { assetsOnlyClient, inTempDir, pendingAction } from './harness';

/** The i-th pending ApproveTransfer action: BTC-TESTNET (approved by the rule) unless `held` (ETH-TESTNET). */
function action(i: number, held: boolean, expireTime: number): Record<string, unknown> {
  const id = `restart-${i.toString(16).padStart(6, '0')}-4f1e-9c2b-5d7a0e3c1b29`;
  return pendingAction(id, 'cc-7d41', { asset: held ? 'ETH-TESTNET' : 'BTC-TESTNET', amount: 150000 + i, fees: 2, netAmount: 149998 + i, reference: 'INV-1', benefitOf: 'Acme', companyID: 'c', fundID: 'f', recipientAddress: 'wallet-c', expires: expireTime }, expireTime);
}

/** The asset scales the approver reads: nothing else is asked of the API. */
const client = async () => assetsOnlyClient({ 'BTC-TESTNET': 1e8, 'ETH-TESTNET': 1e18 });

/** Decide `n` actions through a dry-run approver into `file`, close it; returns the actions decided. */
async function recordDecisions(file: string, n: number): Promise<Array<Record<string, unknown>>> {
  const rules = compileRules([{ name: 'BTC-TESTNET transfers', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'] }]);
  const a = await Approver.open({ rules, mode: 'dryRun', auditFile: file, client, approverId: 'restart-bench' });
  const expireTime = Math.floor(Date.now() / 1000) + 3600;
  const all: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i += 1000) {
    const burst = Array.from({ length: Math.min(1000, n - i) }, (_, k) => action(i + k, (i + k) % 5 === 4, expireTime));
    await Promise.all(burst.map((x) => a.decide(x)));
    all.push(...burst);
  }
  await a.close();
  return all;
}

/** A followed record with a 2 KiB msg copy. */
function trackRecord(i: number, now: number): TrackRecord {
  const tx = `tx-${i.toString(16).padStart(8, '0')}`;
  return { id: `${tx}/m${i}`, target: { kind: 'transfer', tx_id: tx, company_id: 'c' }, msg: { _msgid: `m${i}`, payload: { tx_id: tx, note: 'x'.repeat(2048) } }, startedAt: now, deadline: now + 3600_000, reads: 1, state: 'pending_transfer' };
}

/**
 * Measure (see the file comment).
 * @param opts `actions`, `runs`.
 * @returns the rows: what the approver's and the track store's starts read per entry they keep
 *   (goal <= 1.1: only what is kept), with the start-up times against empty starts and the
 *   re-sent actions in the figures.
 * @throws {Error} when a re-sent action is decided again or a reported record reported again.
 */
export async function run(opts: Record<string, unknown> = {}): Promise<BenchRow[]> {
  const n = Number(opts.actions ?? 100_000);
  const runs = Number(opts.runs ?? 9);
  return inTempDir('cf-bench-restart-', async (tmp) => {
    // The approver.
    const audit = path.join(tmp, 'audit', 'approver.jsonl');
    const emptyAudit = path.join(tmp, 'empty', 'approver.jsonl');
    let t0 = Date.now();
    const decided = await recordDecisions(audit, n);
    const recordMs = Date.now() - t0;
    await fs.promises.mkdir(path.dirname(emptyAudit), { recursive: true });
    await fs.promises.writeFile(emptyAudit, '');
    const rules = compileRules([{ name: 'BTC-TESTNET transfers', decision: 'approve', actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'] }]);
    const start = (file: string) =>
      timeMs(async () => {
        const a = await Approver.open({ rules, mode: 'dryRun', auditFile: file, client });
        await a.close();
      });
    const [approverMs, approverEmptyMs] = await alternatingMedians(start, audit, emptyAudit, runs);
    const { log, records } = await AuditLog.open(audit);
    const chainLines = log.lines;
    await log.close();
    const a = await Approver.open({ rules, mode: 'dryRun', auditFile: audit, client });
    const held = a.retained();
    let again = 0;
    for (const x of decided.slice(0, 1000)) if ((await a.decide(x)).decision.redelivered === true) again++;
    await a.close();
    if (again !== 1000) throw new Error(`decided again after the restart: ${1000 - again} of 1,000`);
    const auditBytes = fs.statSync(audit).size;

    // custody-track's file store.
    const track = path.join(tmp, 'track', 'track.jsonl');
    const emptyTrack = path.join(tmp, 'track', 'empty.jsonl');
    t0 = Date.now();
    const store = await FileTrackStore.open(track);
    const now = Date.now();
    for (let i = 0; i < n; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_, k) => store.put(trackRecord(i + k, now))));
    for (let i = 0; i < n; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ((i + k) % 20 !== 19 ? store.markReported(trackRecord(i + k, now).id, 'final') : Promise.resolve(true))));
    await store.close();
    const trackWriteMs = Date.now() - t0;
    await (await FileTrackStore.open(emptyTrack)).close();
    const openTrack = (file: string) =>
      timeMs(async () => {
        const s = await FileTrackStore.open(file);
        await s.close();
      });
    const [trackMs, trackEmptyMs] = await alternatingMedians(openTrack, track, emptyTrack, runs);
    const reopened = await FileTrackStore.open(track);
    const kept = reopened.retained();
    const followed = (await reopened.load()).length;
    const refused = (await reopened.markReported(trackRecord(0, now).id, 'final')) === false;
    await reopened.close();
    if (!refused) throw new Error('a reported track record was reported again after the restart');
    const trackBytes = fs.statSync(track).size;
    const trackLines = fs.readFileSync(track, 'utf8').split('\n').filter(Boolean).length;
    process.stderr.write(`restart: ${n} actions decided in ${(recordMs / 1000).toFixed(1)} s, ${n} track records written and reported in ${(trackWriteMs / 1000).toFixed(1)} s\n`);

    const f = (ms: number) => `${ms.toFixed(2)} ms`;
    // What a start reads against what is kept: the approver's records (its last checkpoint and the lines after it) per action it holds; the track file's lines per entry it holds.
    return [
      atMost('restart', `approver start after ${n.toLocaleString('en')} decided actions: records read per action kept`, `read ${records.length} records for ${held.actions} actions kept (the audit file: ${(auditBytes / 1e6).toFixed(1)} MB, ${chainLines} lines); start-up p50 ${f(approverMs)} vs ${f(approverEmptyMs)} empty; 1,000 re-sent: ${again} redelivered, 0 decided again`, records.length / Math.max(1, held.actions), 1.1),
      atMost('restart', `custody-track store start after ${n.toLocaleString('en')} records: lines read per entry kept`, `read ${trackLines} lines, ${(trackBytes / 1e6).toFixed(1)} MB, for ${kept.live} followed (each with its msg) + ${kept.reported} reported (id, time, outcome); start-up p50 ${f(trackMs)} vs ${f(trackEmptyMs)} empty; ${followed} resumed, a reported one refused again`, trackLines / Math.max(1, kept.live + kept.reported), 1.1),
    ];
  });
}

printWhenMain(module, () => run());
