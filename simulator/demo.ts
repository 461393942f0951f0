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
 * A demo fund whose one custodian (threshold 1) guards both withdrawals and transfers, with one
 * wallet per asset named `<label> <asset> wallet`, created through the API's own path.
 * @returns the fund id and its wallet ids, in `assets` order.
 */
function demoFund(
  eng: Engine,
  companyId: string,
  custodian: string,
  fund: { label: string; name: string; description: string; assets: string[]; fund_id: string; wallet_ids: string[] },
): { fund_id: string; wallets: string[] } {
  const group = { threshold: 1, members: [custodian] };
  return net.createFund(
    eng,
    companyId,
    {
      name: fund.name,
      description: fund.description,
      custodygroup_withdraw: group,
      custodygroup_tx: group,
      wallets: fund.assets.map((asset) => ({ name: `${fund.label} ${asset} wallet`, asset })),
    },
    { fund_id: fund.fund_id, wallet_ids: fund.wallet_ids },
  );
}

/** A core client added to the company's trusted network (it joins at once). */
function trustedCoreClient(eng: Engine, companyId: string, name: string, id: string): string {
  const client = net.createCoreClient(eng, name, id);
  net.addTrustedParty(eng, companyId, { address: client.id, type: 'core-client', name });
  return client.id;
}

/**
 * Build the demo dataset and store it in the state (`state.demo`).
 * @returns its ids.
 */
export function createDemo(eng: Engine): DemoDataset {
  const cid = net.createCompany(eng, { name: 'Demo Treasury Ltd', city: 'London', country: 'GB', domain: 'demo-treasury.example', ref: 'demo' }, DEMO_IDS.company_id).company_id;
  const approver = trustedCoreClient(eng, cid, 'Demo approver', DEMO_IDS.core_client_id);
  const fund = demoFund(eng, cid, approver, {
    label: 'Demo',
    name: 'Demo fund',
    description: 'Demo fund approved by the Demo approver core client',
    assets: ['BTC-TESTNET', 'ETH-TESTNET'],
    fund_id: DEMO_IDS.fund_id,
    wallet_ids: DEMO_IDS.wallets,
  });
  const [btc, eth] = fund.wallets;
  net.faucetDeposit(eng, btc, 500000000);
  net.faucetDeposit(eng, eth, 20000000000);

  const alice = net.findUser(eng, 'alice@custody.example')!;
  net.addTrustedParty(eng, cid, { address: alice.email, type: 'user' });
  net.acceptInvitation(eng, cid, alice.email);
  const cp = demoFund(eng, cid, alice.id, {
    label: 'Counterparty',
    name: 'Counterparty fund',
    description: 'Receives demo transfers; custodian alice@custody.example',
    assets: ['BTC-TESTNET', 'ETH-TESTNET'],
    fund_id: DEMO_IDS.counterparty_fund_id,
    wallet_ids: DEMO_IDS.counterparty_wallets,
  });

  const manualApprover = trustedCoreClient(eng, cid, 'Demo manual approver', DEMO_IDS.manual_core_client_id);
  const manual = demoFund(eng, cid, manualApprover, {
    label: 'Manual',
    name: 'Manual fund',
    description: 'Approved by hand through the Demo manual approver core client',
    assets: ['BTC-TESTNET'],
    fund_id: DEMO_IDS.manual_fund_id,
    wallet_ids: DEMO_IDS.manual_wallets,
  });
  net.faucetDeposit(eng, manual.wallets[0], 100000000);

  const demo: DemoDataset = {
    company_id: cid,
    fund_id: fund.fund_id,
    core_client_id: approver,
    wallets: { 'BTC-TESTNET': demoWallet(eng, btc), 'ETH-TESTNET': demoWallet(eng, eth) },
    counterparty: {
      fund_id: cp.fund_id,
      custodian_user_id: alice.id,
      wallets: { 'BTC-TESTNET': demoWallet(eng, cp.wallets[0]), 'ETH-TESTNET': demoWallet(eng, cp.wallets[1]) },
    },
    manual: { core_client_id: manualApprover, fund_id: manual.fund_id, wallets: { 'BTC-TESTNET': demoWallet(eng, manual.wallets[0]) } },
  };
  eng.state.demo = demo;
  eng.changed();
  return demo;
}
