/**
 * The demo dataset gives each automated approver of the example flows a core client of its own
 * (simulator/README.md "Demo dataset"): `demo-withdraw-approver` guards `demo-withdraw-fund`
 * (its BTC-TESTNET address whitelisted) and `demo-swap-approver` guards `demo-swap-fund`, each
 * the only custodian of both custody groups of its fund, funded by faucet deposits; a state file
 * written before they existed gets them on the next start.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator } from '../../simulator';
import { accountClient, signedCall } from '../helpers/simulated';

/** The custodians, wallet balances (base units) and whitelist of a demo fund, read through the partner API. */
async function fundOf(sim: Simulator, fundId: string): Promise<{ custodians: Array<Array<number | string>>; balances: Record<string, number>; whitelisted: string[] }> {
  const client = accountClient(sim);
  try {
    const company = sim.demo.company_id;
    const fund = await signedCall(client, 'GET', `/company/${company}/fund/${fundId}`);
    assert.equal(fund.status, 200, JSON.stringify(fund.data));
    type Policy = { threshold: number; members: Array<{ type: string; id: string }> };
    const f = fund.data as { policy_withdraw: Policy; policy_tx: Policy; wallets: Array<{ wallet_id: string; balance: number }> };
    const wl = await signedCall(client, 'GET', `/company/${company}/fund/${fundId}/whitelist`);
    const balances: Record<string, number> = {};
    for (const w of f.wallets) balances[w.wallet_id] = w.balance;
    return {
      custodians: [f.policy_withdraw, f.policy_tx].map((p) => [p.threshold, ...p.members.map((m) => `${m.type} ${m.id}`)]),
      balances,
      whitelisted: ((wl.data as { list?: Array<{ address: string }> }).list ?? []).map((e) => e.address),
    };
  } finally {
    client.close();
  }
}

describe('simulator demo dataset: one core client per automated approver of the examples', function () {
  this.timeout(60000);

  it('demo-withdraw-approver and demo-swap-approver each guard a fund of their own; an older state file gets them on restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-demo-approvers-'));
    let sim: Simulator | undefined;
    try {
      sim = await Simulator.start({ dataDir, port: 0 });
      const seen = async (s: Simulator) => ({ withdraw: await fundOf(s, 'demo-withdraw-fund'), swap: await fundOf(s, 'demo-swap-fund') });
      const first = await seen(sim);
      assert.deepEqual(first.withdraw.custodians, [[1, 'core-client demo-withdraw-approver'], [1, 'core-client demo-withdraw-approver']]);
      assert.deepEqual(first.swap.custodians, [[1, 'core-client demo-swap-approver'], [1, 'core-client demo-swap-approver']]);
      assert.deepEqual(first.withdraw.balances, { 'demo-withdraw-btc-testnet': 100000000 });
      assert.deepEqual(first.swap.balances, { 'demo-swap-btc-testnet': 500000000, 'demo-swap-eth-testnet': 20000000000 });
      assert.deepEqual(first.withdraw.whitelisted, ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx']);
      await sim.stop();
      sim = undefined;

      // A state file from before: without the two core clients, their funds and wallets.
      const file = path.join(dataDir, 'state.json');
      const state = JSON.parse(fs.readFileSync(file, 'utf8'));
      for (const id of ['demo-withdraw-approver', 'demo-swap-approver']) {
        delete state.coreClients[id];
        delete state.companies['demo-company'].trusted[id];
      }
      for (const id of ['demo-withdraw-fund', 'demo-swap-fund']) {
        delete state.funds[id];
        delete state.ledger[id];
        delete state.whitelists[id];
      }
      for (const id of Object.keys(state.wallets)) if (['demo-withdraw-fund', 'demo-swap-fund'].includes(state.wallets[id].fund_id)) delete state.wallets[id];
      fs.writeFileSync(file, JSON.stringify(state));
      fs.rmSync(path.join(dataDir, 'journal.jsonl'), { force: true });

      sim = await Simulator.start({ dataDir, port: 0 });
      assert.deepEqual(await seen(sim), first);
    } finally {
      await sim?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
