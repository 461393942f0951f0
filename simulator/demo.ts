/**
 * The demo dataset created on first start, through the same functions the API routes use, so
 * example flows move money at once:
 *
 * - company "Demo Treasury Ltd";
 * - core client "Demo approver", added as a trusted party (type `core-client`, joins at once);
 * - fund "Demo fund", both custody groups `{threshold: 1, members: [core client]}`, with a
 *   BTC-TESTNET wallet funded with 5 BTC-TESTNET (500000000 base units) and an ETH-TESTNET
 *   wallet funded with 20 ETH-TESTNET (20000000000 base units) by faucet deposits (deposit
 *   ledger entries written);
 * - alice@custody.example invited and accepted as a trusted party;
 * - fund "Counterparty fund" in the same company, custody groups `{threshold: 1, members: [alice]}`,
 *   with empty BTC-TESTNET and ETH-TESTNET wallets to receive transfers;
 * - core client "Demo manual approver", trusted party, custodian (threshold 1) of fund "Manual fund"
 *   with a BTC-TESTNET wallet funded with 1 BTC-TESTNET: its actions wait for a person.
 *
 * The demo's ids are fixed ({@link DEMO_IDS}), so the example flows can name them and run on
 * any fresh machine; everything created through the API gets random ids.
 */
import type { Engine } from './engine';
import * as net from './network';
import type { DemoDataset, DemoWallet } from './state';

/** The fixed ids of the demo dataset, named in the example flows. */
export const DEMO_IDS = Object.freeze({
  company_id: 'demo-company',
  core_client_id: 'demo-approver',
  fund_id: 'demo-fund',
  wallets: ['demo-btc-testnet', 'demo-eth-testnet'],
  counterparty_fund_id: 'demo-counterparty-fund',
  counterparty_wallets: ['demo-counterparty-btc-testnet', 'demo-counterparty-eth-testnet'],
  manual_core_client_id: 'demo-manual-approver',
  manual_fund_id: 'demo-manual-fund',
  manual_wallets: ['demo-manual-btc-testnet'],
});

function demoWallet(eng: Engine, id: string): DemoWallet {
  const w = eng.state.wallets[id];
  return { wallet_id: w.wallet_id, short_code: w.short_code, address: w.address };
}

/**
 * Build the demo dataset and store it in the state (`state.demo`).
 * @returns its ids.
 */
export function createDemo(eng: Engine): DemoDataset {
  const company = net.createCompany(eng, { name: 'Demo Treasury Ltd', city: 'London', country: 'GB', domain: 'demo-treasury.example', ref: 'demo' }, DEMO_IDS.company_id);
  const cid = company.company_id;
  const client = net.createCoreClient(eng, 'Demo approver', DEMO_IDS.core_client_id);
  net.addTrustedParty(eng, cid, { address: client.id, type: 'core-client', name: 'Demo approver' });
  const group = { threshold: 1, members: [client.id] };
  const fund = net.createFund(eng, cid, {
    name: 'Demo fund',
    description: 'Demo fund approved by the Demo approver core client',
    custodygroup_withdraw: group,
    custodygroup_tx: group,
    wallets: [
      { name: 'Demo BTC-TESTNET wallet', asset: 'BTC-TESTNET' },
      { name: 'Demo ETH-TESTNET wallet', asset: 'ETH-TESTNET' },
    ],
  }, { fund_id: DEMO_IDS.fund_id, wallet_ids: DEMO_IDS.wallets });
  const [btc, eth] = fund.wallets;
  net.faucetDeposit(eng, btc, 500000000);
  net.faucetDeposit(eng, eth, 20000000000);

  const alice = net.findUser(eng, 'alice@custody.example')!;
  net.addTrustedParty(eng, cid, { address: alice.email, type: 'user' });
  net.acceptInvitation(eng, cid, alice.email);
  const aliceGroup = { threshold: 1, members: [alice.id] };
  const cp = net.createFund(eng, cid, {
    name: 'Counterparty fund',
    description: 'Receives demo transfers; custodian alice@custody.example',
    custodygroup_withdraw: aliceGroup,
    custodygroup_tx: aliceGroup,
    wallets: [
      { name: 'Counterparty BTC-TESTNET wallet', asset: 'BTC-TESTNET' },
      { name: 'Counterparty ETH-TESTNET wallet', asset: 'ETH-TESTNET' },
    ],
  }, { fund_id: DEMO_IDS.counterparty_fund_id, wallet_ids: DEMO_IDS.counterparty_wallets });
  const manualClient = net.createCoreClient(eng, 'Demo manual approver', DEMO_IDS.manual_core_client_id);
  net.addTrustedParty(eng, cid, { address: manualClient.id, type: 'core-client', name: 'Demo manual approver' });
  const manualGroup = { threshold: 1, members: [manualClient.id] };
  const manual = net.createFund(
    eng,
    cid,
    {
      name: 'Manual fund',
      description: 'Approved by hand through the Demo manual approver core client',
      custodygroup_withdraw: manualGroup,
      custodygroup_tx: manualGroup,
      wallets: [{ name: 'Manual BTC-TESTNET wallet', asset: 'BTC-TESTNET' }],
    },
    { fund_id: DEMO_IDS.manual_fund_id, wallet_ids: DEMO_IDS.manual_wallets },
  );
  net.faucetDeposit(eng, manual.wallets[0], 100000000);
  const demo: DemoDataset = {
    company_id: cid,
    fund_id: fund.fund_id,
    core_client_id: client.id,
    wallets: { 'BTC-TESTNET': demoWallet(eng, btc), 'ETH-TESTNET': demoWallet(eng, eth) },
    counterparty: {
      fund_id: cp.fund_id,
      custodian_user_id: alice.id,
      wallets: { 'BTC-TESTNET': demoWallet(eng, cp.wallets[0]), 'ETH-TESTNET': demoWallet(eng, cp.wallets[1]) },
    },
    manual: { core_client_id: manualClient.id, fund_id: manual.fund_id, wallets: { 'BTC-TESTNET': demoWallet(eng, manual.wallets[0]) } },
  };
  eng.state.demo = demo;
  eng.changed();
  return demo;
}
