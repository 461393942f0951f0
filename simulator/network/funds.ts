/**
 * Funds (spec section 2 "Fund", section 4 "Funds, deposits, ledger"; OpenAPI
 * `/company/{company_id}/fund`, `/company/{company_id}/fund/{fund_id}`,
 * `/company/{company_id}/fund/{fund_id}/wallet`, `/company/{company_id}/fund/{fund_id}/deposit`).
 */
import type { Engine } from '../engine';
import type { CustodyGroup, NewWallet } from '../../lib/api/v1/fund';
import { badRequest, notFound } from '../errors';
import { newId } from '../ids';
import type { FundRecord } from '../model';
import { getCompany } from './companies';
import { makeCustodyGroup, policyView, storeGroup } from './custody-groups';
import { attachWallets, checkWalletInputs, fundWallets, walletView } from './wallets';

/** A fund to create (OpenAPI Fund). */
export interface FundInput {
  name: string;
  description?: string;
  custodygroup_withdraw: CustodyGroup;
  custodygroup_tx: CustodyGroup;
  wallets?: NewWallet[];
}

/**
 * POST /company/{company_id}/fund (OpenAPI Fund). Custody groups are required; wallets optional.
 * @param fixed fixed ids for the fund and its wallets (the demo dataset's); random when omitted.
 * @returns `{fund_id, custodygroup_withdraw, custodygroup_tx}` (OpenAPI CreateFundResponse) and the new wallet ids.
 * @throws 404 unknown company; 400 bad custody group or wallet (reason names the field).
 */
export function createFund(
  eng: Engine,
  companyId: string,
  input: FundInput,
  fixed: { fund_id?: string; wallet_ids?: string[] } = {},
): { fund_id: string; custodygroup_withdraw: string; custodygroup_tx: string; wallets: string[] } {
  const company = getCompany(eng, companyId);
  const gw = makeCustodyGroup(eng, company, input.custodygroup_withdraw, 'custodygroup_withdraw', 'withdraw policy');
  const gt = makeCustodyGroup(eng, company, input.custodygroup_tx, 'custodygroup_tx', 'tx policy');
  const makers = checkWalletInputs(eng, company, input.wallets ?? [], 'wallets', fixed.wallet_ids);
  const fund: FundRecord = {
    fund_id: fixed.fund_id ?? newId(),
    company_id: companyId,
    name: input.name,
    description: input.description ?? '',
    custodygroup_withdraw: storeGroup(eng, gw),
    custodygroup_tx: storeGroup(eng, gt),
    created: eng.now(),
  };
  eng.putFund(fund);
  const wallets = attachWallets(eng, fund, makers);
  eng.changed();
  return { fund_id: fund.fund_id, custodygroup_withdraw: fund.custodygroup_withdraw, custodygroup_tx: fund.custodygroup_tx, wallets };
}

/** @throws 404 unknown company, or fund not in that company. */
export function getFund(eng: Engine, companyId: string, fundId: string): FundRecord {
  getCompany(eng, companyId);
  const f = eng.state.funds[fundId];
  if (!f || f.company_id !== companyId) throw notFound(`fund_id: no fund ${fundId} in company ${companyId}`);
  return f;
}

/**
 * POST /company/{company_id}/fund/{fund_id}/wallet (OpenAPI FundWallet) -> `{wallets:[ids]}`.
 * @throws 404 unknown company/fund; 400 empty list, unknown asset or bad custody group.
 */
export function addWallets(eng: Engine, companyId: string, fundId: string, wallets: NewWallet[]): { wallets: string[] } {
  const fund = getFund(eng, companyId, fundId);
  if (wallets.length === 0) throw badRequest('wallets: at least one wallet is required');
  const makers = checkWalletInputs(eng, eng.state.companies[companyId], wallets, 'wallets');
  const ids = attachWallets(eng, fund, makers);
  eng.changed();
  return { wallets: ids };
}

/** GET /company/{company_id}/fund/{fund_id} -> FundDetail (OpenAPI). @throws 404 */
export function fundDetailView(eng: Engine, companyId: string, fundId: string): Record<string, unknown> {
  const f = getFund(eng, companyId, fundId);
  const company = eng.state.companies[companyId];
  const wallets = fundWallets(eng, fundId);
  return {
    fund_id: f.fund_id,
    name: f.name,
    description: f.description,
    custodygroup_withdraw: f.custodygroup_withdraw,
    custodygroup_tx: f.custodygroup_tx,
    policy_withdraw: policyView(eng, f.custodygroup_withdraw),
    policy_tx: policyView(eng, f.custodygroup_tx),
    members: [
      {
        entity: { id: company.company_id, name: company.name, type: 'company', company: { name: company.name } },
        permissions: { admin: true },
      },
    ],
    assets: [...new Set(wallets.map((w) => w.asset))],
    wallets: wallets.map((w) => walletView(eng, w)),
  };
}

/** GET /company/{company_id}/fund/{fund_id}/deposit -> `{total_count, list:[{asset, address, balance}]}`. @throws 404 */
export function fundDeposits(eng: Engine, companyId: string, fundId: string): { total_count: number; list: { asset: string; address: string; balance: number }[] } {
  getFund(eng, companyId, fundId);
  const list = fundWallets(eng, fundId).map((w) => ({ asset: w.asset, address: w.address, balance: w.balance }));
  return { total_count: list.length, list };
}
