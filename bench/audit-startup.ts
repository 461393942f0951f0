/**
 * `npm run bench -- audit`: the approver's start-up on a long audit history against an empty
 * audit file, ratios within one run (docs/audit.md).
 *
 * The history (default 1,000,000 lines: 500,000 actions, a decision line and a result line
 * each, as lib/approver/approver.ts writes them, 200-450 bytes, about 690 actions a day) is
 * spread over 730 days ending now, written straight into daily segments by this file's own
 * writer (hash-chained like AuditLog, one write per segment, no fdatasync per line). Each
 * segment after the first opens with an opening line carrying the approver's state at that
 * moment as the approver writes it (lib/approver/decided.ts): one compact `settled` record per
 * action not yet expired (an action expires an hour after its decision here), and the approvals
 * of the 24 h before it (the velocity window of the rule below) whose action has expired as one
 * `velocity` record (times and amounts). The whole chain is verified once (`verifyAuditChain`) before
 * anything is measured.
 *
 * Scenarios, each measured against the same empty audit file in the same run, alternating:
 * - `crash`: the process stopped without a clean close: the live segment holds the last 12 h
 *   (its opening line's carried state, then about 690 lines);
 * - `clean stop`: a checkpoint was written at the close: the live segment is its opening line;
 * - the `crash` history against the same traffic over 2 days only (same carried state and live
 *   segment, no years behind it): whether start-up grows with the history.
 * Measured: `Approver.open({ rules, auditFile, client })` + `close()` (the approver as it is:
 * it passes no AuditLog options), and `AuditLog.open(file)` + `close()` alone; p50 over
 * `runs` (default 15) after 2 warm-up runs each.
 * Options (`run(opts)`): `lines` (default 1,000,000), `days` (730), `runs` (15).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog, verifyAuditChain, verifyAuditFile } from '../lib';
import { Approver, compileRules } from '../lib/approver';
import { alternatingMedians, atMost, printWhenMain, timeMs, type BenchRow } from './table';
import { GENESIS_HASH, lineHash, rotatedSegmentPath } from '../lib/audit';
import { DEFAULT_CHECKPOINT_MIN_BYTES, checkpointPointerPath, type CheckpointPointer } from '../lib/audit/checkpoint';
import { DEFAULT_CLOSE_CHECKPOINT_BYTES } from '../lib/audit/log';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const WINDOW = 24 * HOUR;

/** What the history looks like, for the rows' figures. */
interface History {
  live: string;
  lines: number;
  segments: number;
  bytes: number;
  carried: number;
  liveBytes: number;
  /** Bytes of the live segment after its last checkpoint (or opening) line: what a start after a crash reads beyond the state. */
  sinceCheckpoint: number;
}

/** The approver's rule the history was decided by: approve ApproveTransfer BTC-TESTNET up to 0.5 with a daily velocity limit. */
const RULES = [
  { name: 'small BTC transfers', decision: 'approve' as const, actionTypes: ['ApproveTransfer'], assets: ['BTC-TESTNET'], maxAmount: '0.5', velocityAmount: '500', velocityCount: '2000', velocityWindowHours: '24' },
];

/** The decision line's fields (after `seq`, `prev`) of action `i` decided at `at` ms, as the approver writes them. */
function decisionJson(i: number, at: number, approve: boolean, inWindow: number): string {
  const amount = 10_000 + ((i * 7919) % 4_990_000);
  const dec = (amount / 1e8).toFixed(8).replace(/0+$/, '');
  const id = `act-${i.toString(16).padStart(8, '0')}-4f1e-9c2b-${(i * 2654435761 % 1e12).toString().padStart(12, '0')}`;
  const reasons = approve
    ? [`type ApproveTransfer is one of ApproveTransfer`, `asset BTC-TESTNET is one of BTC-TESTNET`, `amount ${dec} is at most 0.5`, `velocity: ${inWindow} approvals of BTC-TESTNET in 24 h with this action`]
    : [`amount ${dec} is above 0.5`];
  const velocity = approve ? `{"used":"${(inWindow * 0.025).toFixed(3)}","limit":"500","count":${inWindow},"countLimit":2000,"window":"24 h"}` : 'null';
  return `"kind":"decision","approver":"8f3e2a1b9c7d6e50","decision":"${approve ? 'approve' : 'reject'}","rule":${approve ? '{"index":0,"name":"small BTC transfers"}' : 'null'},"reasons":${JSON.stringify(reasons)},"action_id":"${id}","client_id":"cc-7d41","type":"ApproveTransfer","asset":"BTC-TESTNET","amount":"${amount}","amountDecimal":"${dec}","destination":"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx","velocity":${velocity},"mode":"live","decidedAt":"${new Date(at).toISOString()}","expireTime":${Math.floor(at / 1000) + 3600}`;
}

/**
 * The `settled` record the approver's checkpoint carries for an action not expired yet
 * (lib/approver/decided.ts), made from its decision line; `counted`: with its approval.
 */
function settledJson(decisionLine: string, counted = true): string {
  const d = JSON.parse(decisionLine) as { action_id: string; client_id: string; decision: string; rule: unknown; decidedAt: string; expireTime: number; asset: string; amount: string };
  const approval = counted ? { asset: d.asset, amount: d.amount, countedAt: Date.parse(d.decidedAt) } : {};
  return JSON.stringify({ kind: 'settled', mode: 'live', client_id: d.client_id, action_id: d.action_id, decision: d.decision, rule: d.rule, decidedAt: d.decidedAt, expireTime: d.expireTime, ...approval });
}

function resultJson(i: number, at: number): string {
  const id = `act-${i.toString(16).padStart(8, '0')}-4f1e-9c2b-${(i * 2654435761 % 1e12).toString().padStart(12, '0')}`;
  return `"kind":"result","approver":"8f3e2a1b9c7d6e50","mode":"live","action_id":"${id}","client_id":"cc-7d41","ok":true,"statusCode":200,"at":"${new Date(at + 850).toISOString()}"`;
}

/**
 * What the approver's checkpoint at `at` (epoch ms) carries of the actions of the last 24 h
 * (`window`, oldest first, each with its decision line): a `settled` record per action not expired
 * yet, and one `velocity` record with the approvals whose action has expired.
 */
function carriedAt(window: ReadonlyArray<{ at: number; approve: boolean; line: string }>, at: number): string[] {
  const out: string[] = [];
  const old: Array<{ at: number; amount: string }> = [];
  for (const w of window) {
    if (w.at <= at - WINDOW) continue;
    const d = JSON.parse(w.line) as { expireTime: number; amount: string };
    if (d.expireTime * 1000 > at) out.push(w.approve ? settledJson(w.line) : settledJson(w.line, false));
    else if (w.approve) old.push({ at: w.at, amount: d.amount });
  }
  if (old.length > 0) out.push(JSON.stringify({ kind: 'velocity', mode: 'live', asset: 'BTC-TESTNET', from: old[0]!.at, at: old.map((o) => o.at - old[0]!.at), amount: old.map((o) => o.amount).join(',') }));
  return out;
}

/**
 * Write `lines` lines over `days` days ending at `end` into daily segments of `live`, the last
 * holding the last 12 h (see the file comment).
 */
export function writeHistory(live: string, lines: number, days: number, end: number): History {
  const actions = Math.floor(lines / 2);
  const start = end - days * DAY;
  // Segment boundaries: every 24 h, the last one 12 h before the end.
  const boundary = (k: number) => end - 12 * HOUR - (days - 1 - k) * DAY;
  let seq = 0;
  let head = GENESIS_HASH;
  let k = -1; // the segment being written (-1: the first, opened at `start`)
  let next = boundary(0);
  let buf: string[] = [];
  let file = '';
  let bytes = 0;
  let segments = 0;
  let carriedCount = 0;
  // The segment being written, as AuditLog counts it for its checkpoints (lib/audit/log.ts).
  let seg = { firstSeq: 1, bytes: 0, openingBytes: 0, lines: 0, since: 0, lastCheckpoint: 0, pointer: undefined as CheckpointPointer | undefined };
  const window: Array<{ at: number; approve: boolean; line: string }> = [];
  const push = (body: string) => {
    const line = `{"seq":${++seq},"prev":"${head}",${body}}`;
    head = lineHash(line);
    buf.push(line);
    return line;
  };
  const flush = (to: string) => {
    const text = buf.join('\n') + '\n';
    fs.writeFileSync(to, text, { mode: 0o600 });
    bytes += Buffer.byteLength(text);
    segments++;
    buf = [];
  };
  /** Push a line of the segment's (not its opening), writing a checkpoint line before it when AuditLog would. */
  const pushLine = (body: string, at: number) => {
    const size = Buffer.byteLength(`{"seq":${seq + 1},"prev":"${head}",${body}}`) + 1;
    if (seg.lines > 0 && seg.since + size > Math.max(DEFAULT_CHECKPOINT_MIN_BYTES, 2 * seg.lastCheckpoint)) {
      const carried = carriedAt(window, at);
      const offset = seg.openingBytes + seg.bytes;
      const ck = push(`"kind":"checkpoint","at":"${new Date(at).toISOString()}","carried":[${carried.join(',')}]`);
      const ckBytes = Buffer.byteLength(ck) + 1;
      seg.pointer = { seq, hash: head, offset, firstSeq: seg.firstSeq, openingBytes: seg.openingBytes, linesBefore: seg.lines };
      seg = { ...seg, bytes: seg.bytes + ckBytes, lines: seg.lines + 1, since: 0, lastCheckpoint: ckBytes };
    }
    const line = push(body);
    seg.bytes += size;
    seg.lines++;
    seg.since += size;
    return line;
  };
  let inWindow = 0;
  for (let i = 0; i < actions; i++) {
    const at = start + Math.floor(((i + 0.5) * days * DAY) / actions);
    while (at >= next && k < days - 1) {
      // Rotate: the segment so far is renamed after its first seq; the next opens with the state.
      file = rotatedSegmentPath(live, seg.firstSeq);
      flush(file);
      while (window.length && window[0].at <= next - WINDOW) window.shift();
      const carried = carriedAt(window, next);
      carriedCount = carried.length;
      const firstSeq = seq + 1;
      const opening = push(`"kind":"segment","previous":"${path.basename(file)}","at":"${new Date(next).toISOString()}","reason":"day","carried":[${carried.join(',')}]`);
      const openingBytes = Buffer.byteLength(opening) + 1;
      seg = { firstSeq, bytes: 0, openingBytes, lines: 0, since: 0, lastCheckpoint: openingBytes, pointer: undefined };
      k++;
      next = k < days - 1 ? boundary(k + 1) : Infinity;
    }
    while (window.length && window[0].at <= at - WINDOW) window.shift();
    inWindow = window.filter((w) => w.approve).length + 1;
    const approve = i % 13 !== 0;
    const d = pushLine(decisionJson(i, at, approve, inWindow), at);
    pushLine(resultJson(i, at), at);
    window.push({ at, approve, line: d });
  }
  flush(live);
  if (seg.pointer) fs.writeFileSync(checkpointPointerPath(live), JSON.stringify(seg.pointer), { mode: 0o600 });
  return { live, lines: seq, segments, bytes, carried: carriedCount, liveBytes: fs.statSync(live).size, sinceCheckpoint: seg.since };
}

/**
 * A copy of the chain of `history` (hard links; the live segment copied) closed cleanly, as
 * AuditLog closes it for the approver: a rotation whose new segment's opening line is the
 * checkpoint (a live segment above 1 MiB), else a checkpoint line at the end of the live segment
 * and its pointer when more than 64 KiB of lines came after the last one, else nothing (a start
 * reads the last checkpoint and those lines); a checkpoint carries the state at `end` as the
 * approver writes it.
 */
export function cleanStop(history: History, dir: string, end: number): History {
  fs.mkdirSync(dir);
  const from = path.dirname(history.live);
  for (const name of fs.readdirSync(from)) fs.linkSync(path.join(from, name), path.join(dir, name));
  const live = path.join(dir, path.basename(history.live));
  const text = fs.readFileSync(live, 'utf8');
  const ls = text.split('\n').slice(0, -1);
  const first = JSON.parse(ls[0]) as { seq: number };
  const last = JSON.parse(ls[ls.length - 1]) as { seq: number };
  // The state at `end`: the carried state of the opening line, aged to `end`, then this segment's decisions of the last 24 h.
  const opening = JSON.parse(ls[0]) as { carried: Array<Record<string, unknown>> };
  const window: Array<{ at: number; approve: boolean; line: string }> = [];
  const expired: Array<{ at: number; amount: string }> = [];
  for (const c of opening.carried) {
    if (c.kind === 'velocity') {
      const ats = c.at as number[];
      const amounts = String(c.amount).split(',');
      ats.forEach((t, i) => expired.push({ at: Number(c.from) + t, amount: amounts[i]! }));
    } else window.push({ at: Date.parse(String(c.decidedAt)), approve: c.decision === 'approve' && c.amount !== undefined, line: JSON.stringify(c) });
  }
  for (const l of ls.slice(1)) {
    const r = JSON.parse(l) as { kind: string; decision?: string; decidedAt?: string };
    if (r.kind === 'decision') window.push({ at: Date.parse(r.decidedAt!), approve: r.decision === 'approve', line: l });
  }
  const kept = carriedAt(window, end);
  const stillIn = expired.filter((e) => e.at > end - WINDOW);
  const velocity = kept.findIndex((k) => k.startsWith('{"kind":"velocity"'));
  const merged = [...stillIn, ...(velocity >= 0 ? (() => { const v = JSON.parse(kept[velocity]!); return (v.at as number[]).map((t, i) => ({ at: v.from + t, amount: String(v.amount).split(',')[i]! })); })() : [])];
  if (velocity >= 0) kept.splice(velocity, 1);
  if (merged.length > 0) kept.push(JSON.stringify({ kind: 'velocity', mode: 'live', asset: 'BTC-TESTNET', from: merged[0]!.at, at: merged.map((o) => o.at - merged[0]!.at), amount: merged.map((o) => o.amount).join(',') }));
  const prev = lineHash(ls[ls.length - 1]);
  if (Buffer.byteLength(text) - Buffer.byteLength(ls[0]) - 1 > DEFAULT_CLOSE_CHECKPOINT_BYTES) {
    // A large live segment: AuditLog rotates at the close, the new segment's opening line is the checkpoint.
    const rotated = rotatedSegmentPath(live, first.seq);
    fs.renameSync(live, rotated);
    const line = `{"seq":${last.seq + 1},"prev":"${prev}","kind":"segment","previous":"${path.basename(rotated)}","at":"${new Date(end).toISOString()}","reason":"close","carried":[${kept.join(',')}]}`;
    fs.writeFileSync(live, line + '\n', { mode: 0o600 });
    fs.rmSync(checkpointPointerPath(live), { force: true });
    return { ...history, live, lines: last.seq + 1, segments: history.segments + 1, carried: kept.length, liveBytes: Buffer.byteLength(line) + 1, sinceCheckpoint: 0 };
  }
  // Else a checkpoint line at the end of the live segment when the lines since the last one pass the approver's
  // threshold (a copy: the crash history keeps its own), and its pointer; else the live segment stays as it is.
  if (history.sinceCheckpoint <= DEFAULT_CHECKPOINT_MIN_BYTES) return { ...history, live };
  fs.rmSync(live);
  const line = `{"seq":${last.seq + 1},"prev":"${prev}","kind":"checkpoint","at":"${new Date(end).toISOString()}","carried":[${kept.join(',')}]}`;
  fs.writeFileSync(live, text + line + '\n', { mode: 0o600 });
  const openingBytes = Buffer.byteLength(ls[0]) + 1;
  const pointer: CheckpointPointer = { seq: last.seq + 1, hash: lineHash(line), offset: Buffer.byteLength(text), firstSeq: first.seq, openingBytes, linesBefore: ls.length - 1 };
  fs.rmSync(checkpointPointerPath(live), { force: true });
  fs.writeFileSync(checkpointPointerPath(live), JSON.stringify(pointer), { mode: 0o600 });
  return { ...history, live, lines: last.seq + 1, carried: kept.length, liveBytes: fs.statSync(live).size, sinceCheckpoint: 0 };
}


/**
 * Measure (see the file comment).
 * @param opts `lines`, `days`, `runs`.
 * @returns the rows: approver start-up after a crash and after a clean stop against empty
 *   (goal <= 3x), the history against 2 days (goal <= 2x), AuditLog.open alone (report), and the
 *   full verification of the history (info).
 */
export async function run(opts: Record<string, unknown> = {}): Promise<BenchRow[]> {
  const lines = Number(opts.lines ?? process.env.BENCH_AUDIT_LINES ?? 1_000_000);
  const days = Number(opts.days ?? 730);
  const runs = Number(opts.runs ?? 15);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-bench-audit-'));
  try {
    const end = Date.now();
    fs.mkdirSync(path.join(tmp, 'crash'));
    let t0 = Date.now();
    const crash = writeHistory(path.join(tmp, 'crash', 'approver.jsonl'), lines, days, end);
    const genMs = Date.now() - t0;
    const clean = cleanStop(crash, path.join(tmp, 'clean'), end);
    // The same traffic over 2 days only: what start-up costs without the years behind it.
    fs.mkdirSync(path.join(tmp, 'short'));
    const short = writeHistory(path.join(tmp, 'short', 'approver.jsonl'), Math.round((2 * lines) / days), 2, end);
    t0 = Date.now();
    // The clean-stop chain holds every segment of the crash one (hard links) and one more.
    for (const h of [clean, short]) {
      const v = verifyAuditChain(h.live);
      if (!v.ok || v.segments.length !== h.segments) throw new Error(`the generated history does not verify: ${JSON.stringify(v.bad)} (${v.segments.length} segments)`);
    }
    const verifyMs = Date.now() - t0;
    if (!verifyAuditFile(crash.live, { trustOpening: true }).ok) throw new Error('the generated live segment does not verify');
    const empty = path.join(tmp, 'empty', 'approver.jsonl');
    fs.mkdirSync(path.dirname(empty));
    fs.writeFileSync(empty, '', { mode: 0o600 });
    process.stderr.write(`history: ${crash.lines} lines in ${crash.segments} segments (${(crash.bytes / 1e6).toFixed(0)} MB) over ${days} days, written in ${(genMs / 1000).toFixed(1)} s; verified in ${(verifyMs / 1000).toFixed(1)} s\n`);

    const rules = compileRules(RULES);
    const client = async () => {
      throw new Error('not called at start-up');
    };
    const approverStart = (file: string) =>
      timeMs(async () => {
        const a = await Approver.open({ rules, auditFile: file, client });
        await a.close();
      });
    const logStart = (file: string) =>
      timeMs(async () => {
        const { log } = await AuditLog.open(file);
        await log.close();
      });
    const measurePair = (fn: (f: string) => Promise<number>, a: string, b: string) => alternatingMedians(fn, a, b, runs, 2);
    /** `file` against the empty file, alternating: [p50 of file, p50 of empty]. */
    const measure = (fn: (f: string) => Promise<number>, file: string) => measurePair(fn, file, empty);
    const [crashMs, emptyMs1] = await measure(approverStart, crash.live);
    const [longMs, shortMs] = await measurePair(approverStart, crash.live, short.live);
    const [cleanMs, emptyMs2] = await measure(approverStart, clean.live);
    const [logMs, logEmptyMs] = await measure(logStart, crash.live);
    const f = (ms: number) => `${ms.toFixed(2)} ms`;
    const scenario = `${(crash.lines / 1e6).toFixed(2)}M lines, ${days} d, ${crash.segments} daily segments`;
    return [
      atMost('audit', 'approver start-up p50, history (crash: live = last 12 h, read from its last checkpoint) vs empty', `${f(crashMs)} vs ${f(emptyMs1)}; ${scenario}; live ${(crash.liveBytes / 1e6).toFixed(2)} MB, ${(crash.sinceCheckpoint / 1024).toFixed(0)} KiB after its last checkpoint`, crashMs / emptyMs1, 3),
      atMost('audit', 'approver start-up p50, history (clean stop: checkpoint at close) vs empty', `${f(cleanMs)} vs ${f(emptyMs2)}; ${scenario}; ${clean.carried} records carried`, cleanMs / emptyMs2, 3),
      atMost('audit', 'approver start-up p50, history (crash) vs 2 days of the same traffic', `${f(longMs)} vs ${f(shortMs)}; ${scenario} vs ${short.lines} lines, 2 d`, longMs / shortMs, 2),
      { group: 'audit', measure: 'AuditLog.open + close p50, history (crash) vs empty', figures: `${f(logMs)} vs ${f(logEmptyMs)}; same history`, value: logMs / logEmptyMs, goal: 'report', pass: true },
      { group: 'audit', measure: 'verifyAuditChain of the whole history (what verify reads)', figures: `${(verifyMs / 1000).toFixed(1)} s for ${clean.lines + short.lines} lines, ${((crash.bytes + clean.liveBytes + short.bytes) / 1e6).toFixed(0)} MB`, value: verifyMs / 1000, goal: 'info', pass: true },
    ];
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

printWhenMain(module, () => run());
