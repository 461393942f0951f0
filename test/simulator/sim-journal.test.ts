/**
 * The simulator's journal, which keeps the cost of persisting a change constant as the history
 * grows (simulator/store.ts, simulator/journal.ts; docs/architecture.md "The simulator"): nothing
 * acknowledged is lost when the simulator process is killed (SIGKILL) in the middle of a burst of
 * signed POST transfers and approvals, before and after a compaction; a torn last journal line is
 * ignored and cut; a state.json of an older simulator (no journalSeq, no journal) loads; a crash
 * between a snapshot's rename and the journal's truncation loads correctly. Real simulator (in this
 * process or the command line in a child process), real sockets, lib's CustodyClient with the
 * account's real keys.
 */
import '../helpers/isolated-dirs';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator, DATA_FILES, type DemoDataset } from '../../simulator';
import { CustodyClient } from '../../lib';
import { JOURNAL_FILE } from '../../simulator/journal';
import { COMPACT_BYTES_ENV } from '../../simulator/store';
import { until } from '../helpers/support';
import { spawnCliSimulator } from '../helpers/sim-cli';
import { bodyOf, transferRequest } from '../helpers/requests';

/** Start the command line simulator (persistence on) on `dataDir`; resolves with its base URL. */
async function startCli(dataDir: string, env: Record<string, string> = {}): Promise<{ cli: ChildProcess; baseUrl: string }> {
  const { cli, out } = spawnCliSimulator(dataDir, [], env);
  const baseUrl = await until(() => /base URL:\s+(\S+)/.exec(out())?.[1], 'the base URL on stdout', 20000);
  return { cli, baseUrl };
}

async function kill(cli: ChildProcess): Promise<void> {
  if (cli.exitCode !== null || cli.signalCode !== null) return;
  const exited = new Promise((r) => cli.once('exit', r));
  cli.kill('SIGKILL');
  await exited;
}

function clientFor(dataDir: string, baseUrl: string): CustodyClient {
  return new CustodyClient({
    baseUrl,
    apiKey: fs.readFileSync(path.join(dataDir, DATA_FILES.apiKey), 'utf8').trim(),
    privateKey: fs.readFileSync(path.join(dataDir, DATA_FILES.privateKey), 'utf8'),
  });
}

/**
 * Check the loaded state is consistent around the demo BTC wallet: every transfer from it has
 * its actions and its debit ledger entry with the matching status; the wallet's `held` is the
 * sum of its pending transfers and its balance the start balance less the approved ones.
 */
function assertConsistent(sim: Simulator, demo: DemoDataset, startBalance: number): void {
  const s = sim.engine.state;
  const walletId = demo.wallets['BTC-TESTNET'].wallet_id;
  const txs = Object.values(s.transfers).filter((t) => t.wallet_id === walletId);
  const entries = new Map((s.ledger[demo.fund_id] ?? []).filter((r) => r.wallet_id === walletId).map((r) => [r.entry.TxID, r.entry]));
  let held = 0;
  let spent = 0;
  for (const t of txs) {
    for (const a of t.actionIDs) assert.ok(s.actions[a], `action ${a} of ${t.txID}`);
    const e = entries.get(t.txID);
    assert.ok(e, `ledger entry of ${t.txID}`);
    if (t.txStatus === 'pending_transfer') {
      held += t.amount;
      assert.equal(e.status, 'pending', `entry of pending ${t.txID}`);
      assert.equal(s.actions[t.actionIDs[0]].status, 'pending');
    } else {
      assert.equal(t.txStatus, 'approved_transfer');
      spent += t.amount;
      assert.equal(e.status, 'approved', `entry of approved ${t.txID}`);
      assert.equal(s.actions[t.actionIDs[0]].status, 'approved');
      assert.equal(t.approvals.length, 1);
    }
  }
  assert.equal(s.wallets[walletId].held, held, 'held = the pending transfers');
  assert.equal(s.wallets[walletId].balance, startBalance - spent, 'balance = start less the approved transfers');
}

describe('simulator journal: persistence whose cost per change is constant', function () {
  this.timeout(120000);
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const running: Simulator[] = [];
  const mkdir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-journal-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    for (const c of children.splice(0)) await kill(c);
    for (const s of running.splice(0)) await s.stop();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  /**
   * Provision a folder in process, then run the command line on it and kill it (SIGKILL) after
   * `n` acknowledged transfers from 8 concurrent workers (every third also approved by the core
   * client); restart in process and check every acknowledged change is there.
   */
  async function burstAndKill(env: Record<string, string>, n: number): Promise<{ dataDir: string; snapshotSeq: number }> {
    const dataDir = mkdir();
    const first = await Simulator.start({ dataDir, port: 0 });
    const demo = first.demo;
    const startBalance = first.engine.state.wallets[demo.wallets['BTC-TESTNET'].wallet_id].balance;
    await first.stop();

    const { cli, baseUrl } = await startCli(dataDir, env);
    children.push(cli);
    const client = clientFor(dataDir, baseUrl);
    const created: string[] = [];
    const approved: string[] = [];
    const claimed = new Set<string>();
    let seq = 0;
    let killed = false;
    const worker = async (): Promise<void> => {
      while (!killed) {
        const i = ++seq;
        try {
          const r = await client.request<any>('POST', `/company/${demo.company_id}/transfer`, {
            body: bodyOf(transferRequest(demo, { benefit_of: 'journal test', account_no: 'ACC-J', reference: `burst ${i}`, partner_txID: `journal-${i}`, send: { symbol: 'BTC-TESTNET', amount: 1000 + i } })),
          });
          created.push(r.data.tx_id);
          if (i % 3 === 0) {
            // Approve a pending action no other worker took (the list has no tx ids: the detail has).
            const list = await client.request<any>('GET', `/coreclient/${demo.core_client_id}/actions`);
            const action = (list.data.actions as any[]).find((a) => !claimed.has(a.id));
            if (action) {
              claimed.add(action.id);
              const detail = await client.request<any>('GET', `/coreclient/${demo.core_client_id}/action/${action.id}`);
              await client.request('PUT', `/coreclient/${demo.core_client_id}/action/${action.id}`);
              approved.push(detail.data.details.txID);
            }
          }
        } catch (err) {
          if (killed) return;
          throw err;
        }
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());
    const all = Promise.all(workers);
    await Promise.race([until(() => (created.length >= n ? true : undefined), `${n} acknowledged transfers`, 60000), all]);
    const snapshotSeq = JSON.parse(fs.readFileSync(path.join(dataDir, DATA_FILES.state), 'utf8')).journalSeq as number;
    killed = true;
    await kill(cli);
    await all;
    client.close();
    assert.ok(created.length >= n);

    const again = await Simulator.start({ dataDir, port: 0 });
    running.push(again);
    const s = again.engine.state;
    for (const id of created) assert.ok(s.transfers[id], `acknowledged transfer ${id} is there`);
    for (const id of approved) assert.equal(s.transfers[id].txStatus, 'approved_transfer', `acknowledged approval of ${id}`);
    assertConsistent(again, demo, startBalance);
    return { dataDir, snapshotSeq };
  }

  it('loses nothing acknowledged when killed (SIGKILL) in the middle of a burst of transfers and approvals', async () => {
    await burstAndKill({}, 40);
  });

  it('loses nothing acknowledged when killed after compactions (snapshot + journal tail)', async () => {
    const { dataDir, snapshotSeq } = await burstAndKill({ [COMPACT_BYTES_ENV]: '30000' }, 150);
    assert.ok(snapshotSeq > 0, `the snapshot was rewritten by a compaction (journalSeq ${snapshotSeq})`);
    assert.ok(fs.statSync(path.join(dataDir, JOURNAL_FILE)).size < 200000, 'the journal was cut at the compaction');
  });

  it('ignores a torn last journal line, cuts it, and appends after it', async () => {
    const dataDir = mkdir();
    let sim = await Simulator.start({ dataDir, port: 0 });
    await sim.stop();
    const seq = JSON.parse(fs.readFileSync(path.join(dataDir, DATA_FILES.state), 'utf8')).journalSeq as number;
    const journal = path.join(dataDir, JOURNAL_FILE);
    const good = `{"seq":${seq + 1},"ops":[[["clockOffsetSeconds"],42]]}\n`;
    fs.writeFileSync(journal, good + `{"seq":${seq + 2},"ops":[[["clockOffsetSeconds"],4`, { mode: 0o600 });
    sim = await Simulator.start({ dataDir, port: 0 });
    running.push(sim);
    assert.equal(sim.engine.state.clockOffsetSeconds, 42, 'the whole line is replayed');
    assert.equal(fs.readFileSync(journal, 'utf8'), good, 'the torn line is cut');
    const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
    const company = await client.request<any>('POST', '/company', { body: { name: 'After the torn line' } });
    client.close();
    const lines = fs.readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    assert.ok(lines.length >= 2);
    assert.deepEqual(lines.map((l) => JSON.parse(l).seq), lines.map((_, i) => seq + 1 + i), 'appended after the good line, seqs in order');
    // Read the folder as a restart after a crash would (the in-memory store is left running).
    const copy = mkdir();
    for (const f of fs.readdirSync(dataDir)) fs.copyFileSync(path.join(dataDir, f), path.join(copy, f));
    const reread = await Simulator.start({ dataDir: copy, port: 0 });
    running.push(reread);
    assert.equal(reread.engine.state.companies[company.data.company_id].name, 'After the torn line');
    assert.equal(reread.engine.state.clockOffsetSeconds, 42);
  });

  it('loads a state.json of an older simulator (no journalSeq, no journal) and journals on top of it', async () => {
    const dataDir = mkdir();
    let sim = await Simulator.start({ dataDir, port: 0 });
    const demo = sim.demo;
    await sim.stop();
    const file = path.join(dataDir, DATA_FILES.state);
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    delete state.journalSeq;
    fs.writeFileSync(file, JSON.stringify(state), { mode: 0o600 });
    assert.ok(!fs.existsSync(path.join(dataDir, JOURNAL_FILE)));
    sim = await Simulator.start({ dataDir, port: 0 });
    assert.deepEqual(sim.demo, demo);
    const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
    const company = await client.request<any>('POST', '/company', { body: { name: 'On an old file' } });
    client.close();
    assert.ok(fs.statSync(path.join(dataDir, JOURNAL_FILE)).size > 0, 'the change is in the journal');
    const copy = mkdir();
    for (const f of fs.readdirSync(dataDir)) fs.copyFileSync(path.join(dataDir, f), path.join(copy, f));
    await sim.stop();
    const reread = await Simulator.start({ dataDir: copy, port: 0 });
    running.push(reread);
    assert.equal(reread.engine.state.companies[company.data.company_id].name, 'On an old file');
  });

  it('loads a folder left between a snapshot rename and the journal truncation: lines up to journalSeq are skipped', async () => {
    const dataDir = mkdir();
    const sim = await Simulator.start({ dataDir, port: 0 });
    const users = Object.keys(sim.engine.state.users).length;
    await sim.stop();
    const seq = JSON.parse(fs.readFileSync(path.join(dataDir, DATA_FILES.state), 'utf8')).journalSeq as number;
    assert.ok(seq >= 1);
    // Lines the snapshot already includes (a stale value that a later change replaced before the
    // snapshot), then one after it; and the leftover temp file of the journal rewrite.
    const user = { id: 'journal-user', email: 'journal@custody.example', firstName: 'J', lastName: 'L', username: 'journal' };
    fs.writeFileSync(
      path.join(dataDir, JOURNAL_FILE),
      `{"seq":${seq - 1},"ops":[[["clockOffsetSeconds"],1000]]}\n{"seq":${seq},"ops":[[["clockOffsetSeconds"],2000]]}\n{"seq":${seq + 1},"ops":[[["users","journal-user"],${JSON.stringify(user)}]]}\n`,
      { mode: 0o600 },
    );
    fs.writeFileSync(path.join(dataDir, JOURNAL_FILE + '.tmp'), 'partial', { mode: 0o600 });
    const again = await Simulator.start({ dataDir, port: 0 });
    running.push(again);
    assert.equal(again.engine.state.clockOffsetSeconds, 0, 'lines included in the snapshot are not replayed');
    assert.deepEqual(again.engine.state.users['journal-user'], user, 'the line after the snapshot is');
    assert.equal(Object.keys(again.engine.state.users).length, users + 1);
    assert.ok(!fs.existsSync(path.join(dataDir, JOURNAL_FILE + '.tmp')), 'the leftover temp file is removed');
  });

  it('stops with state.json alone holding the state (mode 0600), the journal removed', async () => {
    const dataDir = mkdir();
    const sim = await Simulator.start({ dataDir, port: 0 });
    const client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
    const company = await client.request<any>('POST', '/company', { body: { name: 'Before stop' } });
    client.close();
    assert.equal(fs.statSync(path.join(dataDir, JOURNAL_FILE)).mode & 0o777, 0o600);
    await sim.stop();
    assert.ok(!fs.existsSync(path.join(dataDir, JOURNAL_FILE)));
    const state = JSON.parse(fs.readFileSync(path.join(dataDir, DATA_FILES.state), 'utf8'));
    assert.equal(state.companies[company.data.company_id].name, 'Before stop');
  });
});
