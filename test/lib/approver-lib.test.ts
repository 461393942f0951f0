/**
 * lib/approver without Node-RED: rules refused at deploy naming the field, the weekly time
 * window in a named zone (wrapping midnight, daylight saving), velocity windows (edges, an
 * action counted once, removal, pruning), the audit file's chain (good, edited, deleted,
 * inserted, cut-off lines) and its group commit under 2,000 concurrent appends.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog, type CustodyClient, verifyAuditFile } from '../../lib';
import { Approver, compileRules, RulesError, type ApprovalRule, evaluateRules } from '../../lib/approver';
import { verifyAuditText, GENESIS_HASH } from '../../lib/audit';
import { VelocityLedger } from '../../lib/approver/velocity';
import type { ActionFacts, EvaluationContext } from '../../lib/approver/rules';

const facts = (over: Partial<ActionFacts> = {}): ActionFacts => ({
  action_id: 'a1',
  client_id: 'c1',
  type: 'ApproveTransfer',
  expireTime: 0,
  asset: 'BTC-TESTNET',
  amount: 1500015n,
  destination: 'w2',
  companyID: 'co',
  fundID: 'f1',
  hasDetails: true,
  ...over,
});

const ctx = (now: number, over: Partial<EvaluationContext> = {}): EvaluationContext => ({
  now,
  scale: 100000000,
  shortCodes: new Map(),
  velocity: () => ({ sum: 0n, count: 0 }),
  ...over,
});

describe('lib/approver: rules', () => {
  it('refuses bad rules at deploy, naming the field', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['not a list', /^rules: a list of rules/],
      [[{ decision: 'approve' }], /^rules\[0\]\.name: a name/],
      [[{ name: 'x', decision: 'allow' }], /^rules\[0\]\.decision: one of approve, reject, hold/],
      [[{ name: 'ok', decision: 'hold' }, { name: 'x', decision: 'approve', maxAmount: '1,5' }], /^rules\[1\]\.maxAmount: a decimal number/],
      [[{ name: 'x', decision: 'approve', minAmount: '2', maxAmount: '1' }], /^rules\[0\]\.minAmount: at most maxAmount/],
      [[{ name: 'x', decision: 'approve', referencePattern: '(' }], /^rules\[0\]\.referencePattern: a JavaScript regular expression/],
      [[{ name: 'x', decision: 'approve', days: ['mon'], timeZone: 'Mars/Olympus' }], /^rules\[0\]\.timeZone: an IANA time zone/],
      [[{ name: 'x', decision: 'approve', from: '9:00', to: '17:00' }], /^rules\[0\]\.from: a time HH:MM/],
      [[{ name: 'x', decision: 'approve', from: '09:00' }], /^rules\[0\]\.to: a time HH:MM: a daily window needs both/],
      [[{ name: 'x', decision: 'approve', velocityCount: '1.5' }], /^rules\[0\]\.velocityCount: a whole number/],
      [[{ name: 'x', decision: 'approve', velocityAmount: '1', velocityWindowHours: '0' }], /^rules\[0\]\.velocityWindowHours: a number of hours above 0/],
      [[{ name: 'x', decision: 'approve', days: ['monday'] }], /^rules\[0\]\.days: weekdays among/],
    ];
    for (const [raw, re] of cases) assert.throws(() => compileRules(raw), (e: Error & { code?: string }) => re.test(e.message) && e.code === 'EINPUT', JSON.stringify(raw));
  });

  it('lists every bad field of every rule in one error, in rule order', () => {
    const raw = [
      { name: '', decision: 'allow' },
      { name: 'fine', decision: 'hold' },
      { name: 'x', decision: 'approve', minAmount: '2', maxAmount: '1', velocityCount: '1.5', days: ['monday'], to: '25:00', referencePattern: '(' },
    ];
    assert.throws(
      () => compileRules(raw),
      (e: RulesError) =>
        e instanceof RulesError &&
        e.code === 'EINPUT' &&
        e.field === 'rules[0].name' &&
        e.errors.map((x) => x.field).join(' ') === 'rules[0].name rules[0].decision rules[2].minAmount rules[2].velocityCount rules[2].days rules[2].to rules[2].referencePattern' &&
        e.message === e.errors.map((x) => x.message).join('; '),
    );
  });

  it('a weekly window in a named zone: wraps midnight, follows daylight saving', () => {
    const rules = compileRules([{ name: 'nights in New York', decision: 'approve', days: ['fri', 'sat'], from: '22:00', to: '06:00', timeZone: 'America/New_York' }]);
    const at = (iso: string) => evaluateRules(rules, facts(), ctx(Date.parse(iso)), 'hold');
    // Friday 23:30 in New York (EST, UTC-5) = Saturday 04:30 UTC.
    assert.equal(at('2026-11-21T04:30:00Z').decision, 'approve');
    // Friday 21:59 in New York: before the window.
    assert.equal(at('2026-11-21T02:59:00Z').decision, 'hold');
    // Saturday 05:59 (still in Saturday's early hours): within; Sunday 01:00: not a listed day.
    assert.equal(at('2026-11-21T10:59:00Z').decision, 'approve');
    assert.match(at('2026-11-22T06:00:00Z').reasons[0], /time sun 01:00 is outside fri,sat 22:00-06:00 America\/New_York/);
    // In July New York is UTC-4: Friday 22:00 EDT = Saturday 02:00 UTC.
    assert.equal(at('2026-07-18T02:00:00Z').decision, 'approve');
    assert.equal(at('2026-07-18T01:59:00Z').decision, 'hold');
  });

  it('amount bounds compare base units exactly with the scale; bounds finer than the scale do not match', () => {
    const rules = compileRules([{ name: 'at most 0.01500015', decision: 'approve', maxAmount: '0.01500015' }]);
    assert.equal(evaluateRules(rules, facts(), ctx(0), 'hold').decision, 'approve');
    assert.equal(evaluateRules(rules, facts({ amount: 1500016n }), ctx(0), 'hold').decision, 'hold');
    const fine = compileRules([{ name: 'finer than satoshis', decision: 'approve', maxAmount: '0.000000001' }]);
    assert.match(evaluateRules(fine, facts(), ctx(0), 'reject').reasons[0], /amount: .*at most 8 decimal places/);
  });

  it('no rule, no approval: the default is hold or reject, and an approve rule needs its conditions', () => {
    assert.equal(evaluateRules([], facts(), ctx(0), 'hold').decision, 'hold');
    assert.equal(evaluateRules([], facts(), ctx(0), 'reject').decision, 'reject');
    const missing = compileRules([{ name: 'needs details', decision: 'approve', assets: ['BTC-TESTNET'] }]);
    const r = evaluateRules(missing, facts({ asset: undefined, hasDetails: false }), ctx(0), 'hold');
    assert.equal(r.decision, 'hold');
    assert.match(r.reasons[0], /asset: the action names no asset \(no details\)/);
  });
});

describe('lib/approver: velocity windows', () => {
  it('sums and counts (now - window, now], an action once, removal and pruning', () => {
    const v = new VelocityLedger();
    const h = 3600_000;
    v.add('BTC', 10n, 1 * h, 'a');
    v.add('BTC', 20n, 2 * h, 'b');
    v.add('BTC', 30n, 3 * h, 'c');
    v.add('ETH', 99n, 3 * h, 'e');
    assert.deepEqual(v.usage('BTC', 2 * h, 3 * h), { sum: 50n, count: 2 }); // (1h, 3h]: b and c
    assert.deepEqual(v.usage('BTC', 24 * h, 3 * h), { sum: 60n, count: 3 });
    v.add('BTC', 25n, 2 * h, 'b'); // the same action again replaces it
    assert.deepEqual(v.usage('BTC', 24 * h, 3 * h), { sum: 65n, count: 3 });
    v.add('BTC', 5n, 1.5 * h, 'late'); // out of order
    assert.deepEqual(v.usage('BTC', 2 * h, 3 * h), { sum: 60n, count: 3 });
    assert.equal(v.remove('b'), true);
    assert.deepEqual(v.usage('BTC', 24 * h, 3 * h), { sum: 45n, count: 3 });
    for (let i = 0; i < 1000; i++) v.add('BTC', 1n, 100 * h + i, `n${i}`);
    v.prune(100 * h + 1000, 24 * h);
    assert.deepEqual(v.usage('BTC', 24 * h, 100 * h + 1000), { sum: 1000n, count: 1000 });
    assert.deepEqual(v.usage('BTC', 1000 * h, 100 * h + 1000), { sum: 1000n, count: 1000 }, 'older approvals were forgotten');
  });

  it('two approvers on one audit file: the one without a velocity rule never forgets what the other one counts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-shared-book-'));
    const h = 3600_000;
    const base = Date.UTC(2026, 10, 25, 8);
    // Dry run: nothing is called (no rule reads the API), so the client is never used.
    const client = async () => ({}) as CustodyClient;
    const auditFile = path.join(dir, 'shared.jsonl');
    const open = (rules: ApprovalRule[], now: () => number) => Approver.open({ rules: compileRules(rules), mode: 'dryRun', auditFile, client, now });
    const action = (id: string) => ({ client_id: 'cc', action_id: id, type: 'ApproveTransfer', expireTime: 0, details: { asset: 'BTC-TESTNET', amount: 1000 } });
    let clock = base;
    const free = await open([{ name: 'all', decision: 'approve' }], () => clock);
    const limited = await open([{ name: 'two a day', decision: 'approve', velocityCount: '2', velocityWindowHours: '24' }], () => clock);
    try {
      assert.equal((await limited.decide(action('x1'))).output, 'approved');
      assert.equal((await limited.decide(action('x2'))).output, 'approved');
      clock = base + 2 * h;
      assert.equal((await free.decide(action('y1'))).output, 'approved');
      // x1 and x2 are still inside the 24 h window: the limit of 2 holds the third.
      assert.equal((await limited.decide(action('x3'))).output, 'held');
    } finally {
      await free.close();
      await limited.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('lib/approver: the audit file', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-audit-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('2,000 concurrent appends: each on disk when it resolves, one chain, mode 0600; reopening continues it', async () => {
    const file = path.join(dir, 'sub', 'a.jsonl');
    let { log } = await AuditLog.open(file);
    const appended = await Promise.all(Array.from({ length: 2000 }, (_x, i) => log.append({ kind: 'decision', n: i })));
    assert.deepEqual(appended.map((l) => l.seq), Array.from({ length: 2000 }, (_x, i) => i + 1));
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    let v = verifyAuditFile(file);
    assert.equal(v.ok, true);
    assert.equal(v.lines, 2000);
    assert.equal(v.head, log.head);
    await log.close();
    await assert.rejects(log.append({}), /closed/);
    ({ log } = await AuditLog.open(file));
    await log.append({ kind: 'result' });
    await log.close();
    v = verifyAuditFile(file);
    assert.equal(v.ok, true);
    assert.equal(v.lines, 2001);
    assert.equal(v.records[0].prev, GENESIS_HASH);
  });

  it('names the first bad line: edited, deleted, inserted, not JSON, cut off', async () => {
    const file = path.join(dir, 'b.jsonl');
    const { log } = await AuditLog.open(file);
    for (let i = 0; i < 5; i++) await log.append({ kind: 'decision', decision: 'approve', n: i });
    await log.close();
    const text = fs.readFileSync(file, 'utf8');
    const lines = text.split('\n').slice(0, -1);
    const join = (ls: string[]) => ls.join('\n') + '\n';
    const bad = (t: string) => verifyAuditText(t).bad;
    assert.equal(verifyAuditText(text).ok, true);
    assert.deepEqual(bad(join(lines.map((l, i) => (i === 1 ? l.replace('"approve"', '"reject"') : l)))), { line: 3, reason: 'prev does not match the SHA-256 of line 2: line 2 was edited, or a line was deleted or inserted' });
    assert.equal(bad(join(lines.filter((_l, i) => i !== 2)))!.line, 3);
    assert.equal(bad(join([...lines.slice(0, 2), lines[1], ...lines.slice(2)]))!.line, 3);
    assert.equal(bad(join(lines.map((l, i) => (i === 3 ? l.slice(0, -1) : l))))!.reason, 'not a JSON object');
    // A last line without its newline (cut inside the line, or just before the newline) is a cut-off write.
    assert.deepEqual(bad(text.slice(0, -10)), { line: 5, reason: 'the last line has no newline: a write was cut off' });
    assert.deepEqual(bad(text.slice(0, -1)), { line: 5, reason: 'the last line has no newline: a write was cut off' });
    await assert.rejects(
      (async () => {
        fs.writeFileSync(file, join(lines.filter((_l, i) => i !== 0)));
        await AuditLog.open(file);
      })(),
      (e: Error & { code?: string; line?: number }) => e.code === 'EAUDIT' && e.line === 1,
    );
  });
});
