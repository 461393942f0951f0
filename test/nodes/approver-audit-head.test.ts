/**
 * `custody-approver` in the real Node-RED runtime (node-red-node-test-helper) logs its audit
 * chain's head through Node-RED's log when it closes (docs/audit.md, "The head: a cut tail or an
 * edited last line"): the line names the seq, hash and file, and `custodyflow-audit verify
 * --head` passes with what it names, and fails once the file's last line is cut off.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useCountingServer, useHelperServer } from '../helpers/red-setup';
import { until } from '../helpers/support';
import { main } from '../../lib/audit/cli';

const dataDir = simulatorDataDir('cf-approver-head-');
const nodeModules = redNodes(['custody-config', 'custody-approver']);
const OUTS = ['approved', 'rejected', 'held', 'caught'] as const;

/** Run `custodyflow-audit` in-process: its exit code and what it printed. */
function cli(...argv: string[]): { code: number; out: string } {
  const out: string[] = [];
  const code = main(argv, (s) => out.push(s), (s) => out.push(s));
  return { code, out: out.join('\n') };
}

/** The messages Node-RED's log got from node `id` at info level (node.log), as the helper's spy saw them. */
function infoLinesOf(id: string): string[] {
  const spy = (helper as unknown as { log(): { args: unknown[][]; INFO: number } }).log();
  return spy.args.map((a) => a[0] as { level?: number; id?: string; msg?: unknown }).filter((e) => e && e.id === id && e.level === spy.INFO).map((e) => String(e.msg));
}

describe('custody-approver: the audit head in Node-RED log', function () {
  this.timeout(30000);
  const server = new CountingServer({
    answer: (request, s) => (request.url.endsWith('/assets') ? { status: 200, body: JSON.stringify({ assets: [{ code: 'BTC-TESTNET', scale: 100000000 }] }) } : { status: 200, body: s.body }),
  });
  const { creds } = useCountingServer(server);
  useHelperServer();
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('logs "audit head: seq N sha256 H; check it later with: custodyflow-audit verify "file" --head N:H" at close; verify --head passes with it, and fails on the file with its last line cut off', async () => {
    const auditFile = path.join(dataDir, 'audit-head.jsonl');
    const inbox: Inbox = new Map();
    const flow = [
      TAB,
      { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: server.baseUrl },
      { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: true, auditFile, rules: [{ name: 'small', decision: 'approve', maxAmount: '1' }], wires: [['approved'], ['rejected'], ['held']], x: 100, y: 100 },
      ...OUTS.map((id) => ({ id, z: 'tab', type: 'helper', x: 100, y: 100 })),
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
    ];
    await loadCollecting(nodeModules, flow, creds, inbox, [...OUTS]);
    const details = { txID: 't1', asset: 'BTC-TESTNET', amount: 1000000, recipientAddress: 'w2', fundID: 'f1', companyID: 'c1' };
    for (const [i, amount] of [1000000, 500000000].entries()) {
      helper.getNode('ap').receive({ payload: { client_id: 'cc1', action_id: `a${i}`, id: `a${i}`, type: 'ApproveTransfer', status: 'pending', expireTime: 0, details: { ...details, amount } } });
    }
    await until(() => (inbox.get('approved')!.length + inbox.get('held')!.length >= 2 ? true : undefined), 'two decisions');
    assert.equal(infoLinesOf('ap').filter((m) => m.startsWith('audit head')).length, 0, 'no head before 1,000 lines, an hour, or close');

    // The node's close, as a deploy or a stop runs it (the helper's unload restores its log spy before it stops the flows).
    await (helper.getNode('ap') as unknown as { close(removed: boolean): Promise<void> }).close(false);
    const heads = infoLinesOf('ap').filter((m) => m.startsWith('audit head'));
    assert.equal(heads.length, 1, `one head logged at close: ${JSON.stringify(heads)}`);
    const m = /^audit head: seq (\d+) sha256 ([0-9a-f]{64}); check it later with: custodyflow-audit verify "(.+)" --head (\d+):([0-9a-f]{64})$/.exec(heads[0]);
    assert.ok(m, heads[0]);
    const [, seq, hash, file, seqAgain, hashAgain] = m;
    assert.equal(file, auditFile);
    assert.deepEqual([seqAgain, hashAgain], [seq, hash]);
    const lines = fs.readFileSync(auditFile, 'utf8').split('\n').slice(0, -1);
    assert.equal(Number(seq), lines.length, 'the head is the last line');
    assert.equal(cli('verify', auditFile, '--head', `${seq}:${hash}`).code, 0);

    fs.writeFileSync(auditFile, lines.slice(0, -1).map((l) => l + '\n').join(''));
    assert.equal(cli('verify', auditFile).code, 0, 'the cut chain is valid on its own');
    const r = cli('verify', auditFile, '--head', `${seq}:${hash}`);
    assert.equal(r.code, 1);
    assert.match(r.out, new RegExp(`the chain ends at seq ${lines.length - 1}, before the logged head ${seq}`));
  });
});
