/**
 * `npm run bench -- simulate` (docs/performance.md): simulating a draft rule set against the
 * recorded history (lib/approver/simulate.ts, docs/nodes.md "Simulating a draft"). A dry-run
 * Approver decides 100,000 actions (two assets, three destinations, a velocity limit reached,
 * references and funds varied) into an audit log that rotates (16 MiB segments) and writes
 * checkpoint lines; then a draft with a lower velocity count is simulated over that history:
 * every decision line read from disk, streamed, and decided again. The figure is recorded
 * decisions per second (median of the runs); goal at least 20,000.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Approver, compileRules, simulate, type ApprovalRule } from '../lib/approver';
import { atLeast, median, printWhenMain, type BenchRow } from './table';
import { assetsOnlyClient, inTempDir, pendingAction } from './harness';

const BTC = 'BTC-TESTNET';
const ETH = 'ETH-TESTNET';

const RULES: ApprovalRule[] = [
  { name: 'reject big', decision: 'reject', minAmount: '1' },
  { name: 'btc daily', decision: 'approve', assets: [BTC], destinations: ['w-a', 'w-b'], maxAmount: '0.5', velocityCount: '400', velocityWindowHours: '24' },
  { name: 'eth invoices', decision: 'approve', assets: [ETH], destinations: ['w-a', 'w-b'], sources: ['fund-1'], referencePattern: '^INV-', maxAmount: '0.5', velocityAmount: '50' },
];

/** The i-th pending action, with its details. */
function action(i: number, expireTime: number): Record<string, unknown> {
  const asset = i % 2 === 0 ? BTC : ETH;
  const scale = asset === BTC ? 10n ** 8n : 10n ** 18n;
  const id = `sim-${i.toString(16).padStart(6, '0')}-4f1e-9c2b-5d7a0e3c1b29`;
  return pendingAction(
    id,
    'cc-7d41',
    {
      asset,
      amount: ((scale * BigInt(1 + ((i * 37) % 120))) / 100n).toString(),
      recipientAddress: ['w-a', 'w-b', 'w-c'][Math.floor(i / 2) % 3],
      companyID: 'co-1',
      fundID: i % 5 === 0 ? 'fund-2' : 'fund-1',
      reference: i % 7 === 0 ? `X-${i}` : `INV-${i}`,
      benefitOf: 'Acme',
    },
    expireTime,
  );
}

/** A client answering GET /assets only (the scale each decision line records). */
const client = assetsOnlyClient({ [BTC]: 1e8, [ETH]: 1e18 });

/**
 * Measure (see the file comment).
 * @param opts `decisions` (default 100,000), `runs` (default 3).
 * @returns one row: recorded decisions simulated per second (goal >= 20,000).
 * @throws {Error} when the simulation does not replay every recorded decision.
 */
export async function run(opts: Record<string, unknown> = {}): Promise<BenchRow[]> {
  const n = Number(opts.decisions ?? 100_000);
  const runs = Number(opts.runs ?? 3);
  return inTempDir('cf-bench-simulate-', async (tmp) => {
    const auditFile = path.join(tmp, 'audit', 'approver.jsonl');
    // The history runs ahead of the wall clock, one action a second (the book prunes by the wall clock).
    const t0 = Date.now();
    let clock = t0;
    const a = await Approver.open({ rules: compileRules(RULES), mode: 'dryRun', auditFile, client: async () => client, approverId: 'simulate-bench', now: () => clock, auditOptions: { maxSegmentBytes: 16 * 1024 * 1024, rotateDaily: false } });
    const expireTime = Math.floor(t0 / 1000) + 30 * 86400;
    const recordStart = Date.now();
    for (let i = 0; i < n; i += 1000) {
      const burst = Array.from({ length: Math.min(1000, n - i) }, (_, k) => action(i + k, expireTime));
      clock = t0 + i * 1000;
      await Promise.all(burst.map((x) => a.decide(x)));
    }
    await a.close();
    const recordMs = Date.now() - recordStart;
    const draft = RULES.map((r) => (r.name === 'btc daily' ? { ...r, velocityCount: '200' } : r));
    const rates: number[] = [];
    let last;
    for (let i = 0; i < runs; i++) {
      const started = process.hrtime.bigint();
      last = await simulate({ auditFile, rules: draft, defaultDecision: 'hold', from: t0, to: t0 + n * 1000 });
      const s = Number(process.hrtime.bigint() - started) / 1e9;
      if (last.replayed !== n) throw new Error(`replayed ${last.replayed} of ${n} recorded decisions`);
      rates.push(n / s);
    }
    const rate = median(rates);
    const changed = Object.entries(last!.counts).filter(([k]) => k !== 'unchanged').map(([k, v]) => `${v} ${k}`).join(', ');
    return [
      atLeast(
        'simulate',
        `recorded decisions simulated per second, ${n.toLocaleString('en-US')} decisions`,
        `${Math.round(rate).toLocaleString('en-US')}/s (${last!.read.segments} segments, ${last!.read.lines.toLocaleString('en-US')} lines; ${changed || 'no change'}; recorded in ${(recordMs / 1000).toFixed(0)} s)`,
        Math.round(rate),
        20_000,
        '/s',
      ),
    ];
  });
}

printWhenMain(module, run);
