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
 *   with a BTC-TESTNET wallet funded with 1 BTC-TESTNET: its actions wait for a person;
 * - whitelisted withdrawal addresses, a taker company, two exchanges and a dedicated wallet to
 *   connect and sweep: see {@link upgradeDemo}.
 *
 * The demo's ids are fixed ({@link DEMO_IDS}), so the example flows can name them and run on
 * any fresh machine; everything created through the API gets random ids.
 */
import type { Engine } from './engine';
import * as net from './network';
import type { DemoDataset, DemoWallet } from './model';
import { addWhitelist } from './withdrawals';
import { createExchange } from './exchanges';

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
  taker_company_id: 'demo-taker-company',
  taker_core_client_id: 'demo-taker-approver',
  taker_fund_id: 'demo-taker-fund',
  taker_wallets: ['demo-taker-btc-testnet', 'demo-taker-eth-testnet'],
  exchange_id: 'demo-exchange',
  exchange_client_id: 'demo-exchange-client',
  second_exchange_id: 'demo-exchange-2',
  second_exchange_client_id: 'demo-exchange-2-client',
  exchange_fund_id: 'demo-exchange-fund',
  exchange_wallets: ['demo-exchange-btc-testnet'],
  withdraw_core_client_id: 'demo-withdraw-approver',
  withdraw_fund_id: 'demo-withdraw-fund',
  withdraw_wallets: ['demo-withdraw-btc-testnet'],
  swap_core_client_id: 'demo-swap-approver',
  swap_fund_id: 'demo-swap-fund',
  swap_wallets: ['demo-swap-btc-testnet', 'demo-swap-eth-testnet'],
});

/** Whitelisted withdrawal addresses of the demo fund (fixed, so flows can name them; nothing is ever sent to a chain). */
export const DEMO_WHITELIST = Object.freeze({
  'BTC-TESTNET': 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
  'ETH-TESTNET': '0x00000000000000000000000000000000deadbeef',
});

function demoWallet(eng: Engine, id: string): DemoWallet {
  const w = eng.state.wallets[id];
  return { wallet_id: w.wallet_id, short_code: w.short_code, address: w.address };
}

/**
 * A demo fund named `<label> fund` whose one custodian (threshold 1) guards both withdrawals and
 * transfers, with one wallet per asset named `<label> <asset> wallet`, created through the API's own path.
 * @returns the fund id and its wallet ids, in `assets` order.
 */
function demoFund(
  eng: Engine,
  companyId: string,
  custodian: string,
  fund: { label: string; description: string; assets: string[]; fund_id: string; wallet_ids: string[] },
): { fund_id: string; wallets: string[] } {
  const group = { threshold: 1, members: [custodian] };
  return net.createFund(
    eng,
    companyId,
    {
      name: `${fund.label} fund`,
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

/** Faucet deposits (base units) of a trading fund's wallets: 5 BTC-TESTNET and 20 ETH-TESTNET. */
const TRADING_BALANCES = [500000000, 20000000000];

/**
 * A fund of `companyId` holding a BTC-TESTNET and an ETH-TESTNET wallet funded with
 * {@link TRADING_BALANCES}, whose custodian is a new core client added to the company's trusted
 * network ({@link trustedCoreClient}: `approver`).
 * @returns the core client's id, the fund id and its wallet ids (BTC-TESTNET, ETH-TESTNET).
 */
function tradingFund(
  eng: Engine,
  companyId: string,
  approver: { name: string; id: string },
  fund: { label: string; description: string; fund_id: string; wallet_ids: string[] },
): { core_client_id: string; fund_id: string; wallets: string[] } {
  const core_client_id = trustedCoreClient(eng, companyId, approver.name, approver.id);
  const made = demoFund(eng, companyId, core_client_id, { ...fund, assets: ['BTC-TESTNET', 'ETH-TESTNET'] });
  made.wallets.forEach((w, i) => net.faucetDeposit(eng, w, TRADING_BALANCES[i]));
  return { core_client_id, ...made };
}

/**
 * Build the demo dataset and store it in the state (`state.demo`).
 * @returns its ids.
 */
export function createDemo(eng: Engine): DemoDataset {
  const cid = net.createCompany(eng, { name: 'Demo Treasury Ltd', city: 'London', country: 'GB', domain: 'demo-treasury.example', ref: 'demo' }, DEMO_IDS.company_id).company_id;
  const fund = tradingFund(eng, cid, { name: 'Demo approver', id: DEMO_IDS.core_client_id }, {
    label: 'Demo',
    description: 'Demo fund approved by the Demo approver core client',
    fund_id: DEMO_IDS.fund_id,
    wallet_ids: DEMO_IDS.wallets,
  });
  const approver = fund.core_client_id;
  const [btc, eth] = fund.wallets;

  const alice = net.findUser(eng, 'alice@custody.example')!;
  net.addTrustedParty(eng, cid, { address: alice.email, type: 'user' });
  net.acceptInvitation(eng, cid, alice.email);
  const cp = demoFund(eng, cid, alice.id, {
    label: 'Counterparty',
    description: 'Receives demo transfers; custodian alice@custody.example',
    assets: ['BTC-TESTNET', 'ETH-TESTNET'],
    fund_id: DEMO_IDS.counterparty_fund_id,
    wallet_ids: DEMO_IDS.counterparty_wallets,
  });

  const manualApprover = trustedCoreClient(eng, cid, 'Demo manual approver', DEMO_IDS.manual_core_client_id);
  const manual = demoFund(eng, cid, manualApprover, {
    label: 'Manual',
    description: 'Approved by hand through the Demo manual approver core client',
    assets: ['BTC-TESTNET'],
    fund_id: DEMO_IDS.manual_fund_id,
    wallet_ids: DEMO_IDS.manual_wallets,
  });
  net.faucetDeposit(eng, manual.wallets[0], 100000000);

  const demo = {
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
  } as DemoDataset;
  eng.state.demo = demo;
  upgradeDemo(eng);
  return demo;
}

/**
 * Add the demo parts introduced with withdrawals, swaps and exchanges to a demo dataset that lacks
 * them (state files of older simulators; a no-op otherwise):
 * - whitelist: {@link DEMO_WHITELIST} for demo-fund BTC-TESTNET and ETH-TESTNET (withdrawals are
 *   approved by `demo-approver`, the fund's withdraw custody group);
 * - taker: company "Demo Taker Ltd" (`demo-taker-company`) of the same account, its core client
 *   `demo-taker-approver` (trusted, custodian threshold 1 of fund `demo-taker-fund`), wallets
 *   `demo-taker-btc-testnet` (5 BTC-TESTNET) and `demo-taker-eth-testnet` (20 ETH-TESTNET);
 * - exchanges "Simulated Exchange" (`demo-exchange`, core client `demo-exchange-client`) and
 *   "Simulated Exchange Two" (`demo-exchange-2`, `demo-exchange-2-client`), and fund
 *   `demo-exchange-fund` of the demo company (custodian `demo-approver`) with the dedicated
 *   (type 1) wallet `demo-exchange-btc-testnet` (1 BTC-TESTNET) that can be connected and swept;
 * - one core client per automated approver of the examples, each the custodian (threshold 1) of
 *   its own fund in the demo company, so no two approvers decide for one core client:
 *   `demo-withdraw-approver` of `demo-withdraw-fund` (`demo-withdraw-btc-testnet`, 1 BTC-TESTNET,
 *   {@link DEMO_WHITELIST} BTC-TESTNET address whitelisted) for withdrawals, and
 *   `demo-swap-approver` of `demo-swap-fund` (`demo-swap-btc-testnet` 5 BTC-TESTNET,
 *   `demo-swap-eth-testnet` 20 ETH-TESTNET) for swap quotes.
 */
export function upgradeDemo(eng: Engine): void {
  const demo = eng.state.demo;
  if (!demo) return;
  const cid = demo.company_id;
  if (!demo.whitelist && eng.state.companies[cid] && eng.state.funds[demo.fund_id]) {
    for (const asset of ['BTC-TESTNET', 'ETH-TESTNET'] as const) {
      addWhitelist(eng, cid, demo.fund_id, { name: `Demo ${asset} withdrawal address`, asset, address: DEMO_WHITELIST[asset] });
    }
    demo.whitelist = { ...DEMO_WHITELIST };
  }
  if (!demo.taker && !eng.state.companies[DEMO_IDS.taker_company_id]) {
    const tc = net.createCompany(eng, { name: 'Demo Taker Ltd', city: 'Zurich', country: 'CH', domain: 'demo-taker.example', ref: 'demo taker' }, DEMO_IDS.taker_company_id).company_id;
    const fund = tradingFund(eng, tc, { name: 'Demo taker approver', id: DEMO_IDS.taker_core_client_id }, {
      label: 'Taker',
      description: 'Takes demo swap quotes; approved by the Demo taker approver core client',
      fund_id: DEMO_IDS.taker_fund_id,
      wallet_ids: DEMO_IDS.taker_wallets,
    });
    demo.taker = {
      company_id: tc,
      core_client_id: fund.core_client_id,
      fund_id: fund.fund_id,
      wallets: { 'BTC-TESTNET': demoWallet(eng, fund.wallets[0]), 'ETH-TESTNET': demoWallet(eng, fund.wallets[1]) },
    };
  }
  if (!demo.exchange && !eng.state.exchanges[DEMO_IDS.exchange_id] && eng.state.coreClients[demo.core_client_id]) {
    createExchange(eng, { id: DEMO_IDS.exchange_id, name: 'Simulated Exchange', url: 'https://exchange.example', logourl: 'https://exchange.example/logo.svg', client_id: DEMO_IDS.exchange_client_id, clientName: 'Simulated Exchange core client' });
    createExchange(eng, { id: DEMO_IDS.second_exchange_id, name: 'Simulated Exchange Two', url: 'https://exchange-two.example', logourl: 'https://exchange-two.example/logo.svg', client_id: DEMO_IDS.second_exchange_client_id, clientName: 'Simulated Exchange Two core client' });
    const group = { threshold: 1, members: [demo.core_client_id] };
    const fund = net.createFund(
      eng,
      cid,
      {
        name: 'Exchange fund',
        description: 'A dedicated wallet to connect to the Simulated Exchange and sweep',
        custodygroup_withdraw: group,
        custodygroup_tx: group,
        wallets: [{ name: 'Exchange BTC-TESTNET wallet', asset: 'BTC-TESTNET', type: 1 }],
      },
      { fund_id: DEMO_IDS.exchange_fund_id, wallet_ids: DEMO_IDS.exchange_wallets },
    );
    net.faucetDeposit(eng, fund.wallets[0], 100000000);
    demo.exchange = { exchange_id: DEMO_IDS.exchange_id, client_id: DEMO_IDS.exchange_client_id, fund_id: fund.fund_id, wallets: { 'BTC-TESTNET': demoWallet(eng, fund.wallets[0]) } };
  }
  if (eng.state.companies[cid] && !eng.state.coreClients[DEMO_IDS.withdraw_core_client_id]) {
    const payout = trustedCoreClient(eng, cid, 'Demo withdraw approver', DEMO_IDS.withdraw_core_client_id);
    const fund = demoFund(eng, cid, payout, {
      label: 'Withdraw',
      description: 'Pays out to whitelisted addresses; approved by the Demo withdraw approver core client',
      assets: ['BTC-TESTNET'],
      fund_id: DEMO_IDS.withdraw_fund_id,
      wallet_ids: DEMO_IDS.withdraw_wallets,
    });
    net.faucetDeposit(eng, fund.wallets[0], 100000000);
    addWhitelist(eng, cid, fund.fund_id, { name: 'Demo BTC-TESTNET withdrawal address', asset: 'BTC-TESTNET', address: DEMO_WHITELIST['BTC-TESTNET'] });
  }
  if (eng.state.companies[cid] && !eng.state.coreClients[DEMO_IDS.swap_core_client_id]) {
    tradingFund(eng, cid, { name: 'Demo swap approver', id: DEMO_IDS.swap_core_client_id }, {
      label: 'Swap',
      description: 'Makes demo swap quotes; approved by the Demo swap approver core client',
      fund_id: DEMO_IDS.swap_fund_id,
      wallet_ids: DEMO_IDS.swap_wallets,
    });
  }
  eng.changed();
}
