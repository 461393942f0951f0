/**
 * Wallets (spec section 2 "Wallet"; OpenAPI FundWalletInfo, `/wallet/{wallet_id}`,
 * `/company/{company_id}/holding`): creation inside a fund, look-up by id or short code, the
 * wallet view with its policies and exchange connections, holdings per company.
 */
import type { Engine } from '../engine';
import type { NewWallet } from '../../lib/api/v1/fund';
import { badRequest, notFound } from '../errors';
import { newAddress, newId, newShortCode } from '../ids';
import { findAsset } from '../assets';
import type { CompanyRecord, FundRecord, WalletRecord } from '../model';
import { getCompany } from './companies';
import { isBlankGroup, makeCustodyGroup, policyView, storeGroup, type PolicyView } from './custody-groups';

/**
 * Check the wallets of a request (`field` names them in errors) and return one maker per wallet,
 * which creates it (with its custody groups) once everything passed.
 * @throws 400 unknown asset or bad custody group, naming the field.
 */
export function checkWalletInputs(eng: Engine, company: CompanyRecord, wallets: NewWallet[], field: string, walletIds: string[] = []): (() => WalletRecord)[] {
  // Validate everything first, then create, so a bad wallet creates nothing.
  return wallets.map((w, i) => {
    if (!findAsset(w.asset)) throw badRequest(`${field}[${i}].asset: unknown asset ${w.asset}`);
    const gw = isBlankGroup(w.custodygroup_withdraw) ? null : makeCustodyGroup(eng, company, w.custodygroup_withdraw!, `${field}[${i}].custodygroup_withdraw`, 'withdraw policy');
    const gt = isBlankGroup(w.custodygroup_tx) ? null : makeCustodyGroup(eng, company, w.custodygroup_tx!, `${field}[${i}].custodygroup_tx`, 'tx policy');
    return () => {
      const fundPlaceholder = ''; // filled by caller
      const { address, address_type } = newAddress(w.asset);
      const wallet: WalletRecord = {
        wallet_id: walletIds[i] ?? newId(),
        fund_id: fundPlaceholder,
        company_id: company.company_id,
        name: w.name ?? `${w.asset} wallet`,
        asset: w.asset,
        type: w.type ?? 0,
        address,
        address_type,
        short_code: newShortCode((c) => eng.shortCodeTaken(c)),
        balance: 0,
        held: 0,
        custodygroup_withdraw: gw ? storeGroup(eng, gw) : '',
        custodygroup_tx: gt ? storeGroup(eng, gt) : '',
        created: eng.now(),
      };
      return wallet;
    };
  });
}

/** Create the wallets of `makers` in a fund (the fund's custody groups where a wallet has none) and store them. @returns their ids. */
export function attachWallets(eng: Engine, fund: FundRecord, makers: (() => WalletRecord)[]): string[] {
  return makers.map((make) => {
    const w = make();
    w.fund_id = fund.fund_id;
    if (!w.custodygroup_withdraw) w.custodygroup_withdraw = fund.custodygroup_withdraw;
    if (!w.custodygroup_tx) w.custodygroup_tx = fund.custodygroup_tx;
    eng.putWallet(w);
    return w.wallet_id;
  });
}

/**
 * A wallet by id or short code.
 * @throws 404 naming `field` when unknown.
 */
export function getWallet(eng: Engine, idOrShortCode: string, field = 'wallet_id'): WalletRecord {
  const w = eng.findWallet(idOrShortCode);
  if (!w) throw notFound(`${field}: no wallet with id or short code "${idOrShortCode}"`);
  return w;
}

/** FundWalletInfo of the OpenAPI (`balance` is the booked balance in base units). */
export interface WalletView {
  wallet_id: string;
  name: string;
  asset: string;
  type: number;
  status: string;
  address: string;
  address_type: string;
  short_code: string;
  balance: number;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  policy_withdraw: PolicyView;
  policy_tx: PolicyView;
  /** exchange connections (exchanges.ts): status `Active` once approved, `Pending` before; null when none */
  connected: { client_id: string; counterparty_id: string; name: string; status: string }[] | null;
}

/** Wallet record -> FundWalletInfo. */
export function walletView(eng: Engine, w: WalletRecord): WalletView {
  return {
    wallet_id: w.wallet_id,
    name: w.name,
    asset: w.asset,
    type: w.type,
    status: 'ready',
    address: w.address,
    address_type: w.address_type,
    short_code: w.short_code,
    balance: w.balance,
    custodygroup_withdraw: w.custodygroup_withdraw,
    custodygroup_tx: w.custodygroup_tx,
    policy_withdraw: policyView(eng, w.custodygroup_withdraw),
    policy_tx: policyView(eng, w.custodygroup_tx),
    connected: connectedList(eng, w.wallet_id),
  };
}

/** The wallet's connection requests not rejected, oldest first (through the engine's index: no scan of every connection). */
function connectedList(eng: Engine, walletId: string): WalletView['connected'] {
  const list = eng
    .connectionIdsOfWallet(walletId)
    .map((id) => eng.state.connections?.[id])
    .filter((c) => c !== undefined && c.wallet_id === walletId && c.status !== 'rejected')
    .map((c) => ({
      client_id: c!.client_id,
      counterparty_id: c!.clientData.customer_id,
      name: eng.exchangeOfClient(c!.client_id)?.name ?? '',
      status: c!.status === 'approved' ? 'Active' : 'Pending',
    }));
  return list.length ? list : null;
}

/** Wallets of a fund in creation order (`created`, ties in the order added), through the engine's index of wallets per fund. */
export function fundWallets(eng: Engine, fundId: string): WalletRecord[] {
  return eng
    .walletIdsOfFund(fundId)
    .map((id) => eng.state.wallets[id])
    .filter((w) => w !== undefined && w.fund_id === fundId)
    .sort((a, b) => a.created - b.created);
}

/** GET /company/{company_id}/holding -> `{total_count, holdings:[{code, amount}]}` summed over the company's wallets. @throws 404 */
export function companyHoldings(eng: Engine, companyId: string): { total_count: number; holdings: { code: string; amount: number }[] } {
  getCompany(eng, companyId);
  const sums = new Map<string, number>();
  for (const id of eng.walletIdsOfCompany(companyId)) {
    const w = eng.state.wallets[id];
    if (w && w.company_id === companyId) sums.set(w.asset, (sums.get(w.asset) ?? 0) + w.balance);
  }
  const holdings = [...sums].map(([code, amount]) => ({ code, amount }));
  return { total_count: holdings.length, holdings };
}
