/**
 * The simulated network, one module per aggregate under network/: users, companies, trusted
 * parties, core clients, custody groups, funds, wallets, deposits and the ledger. Sources: spec
 * sections 2 and 4 (Company, Trusted network, Funds, deposits, ledger; Core clients), OpenAPI
 * paths `/company/{company_id}/fund`, `/company/{company_id}/fund/{fund_id}`,
 * `/company/{company_id}/fund/{fund_id}/wallet`, `/wallet/{wallet_id}`.
 *
 * Every function validates meaning (existence, membership, ranges) and throws a `SimError`
 * (errors.ts); the JSON shape of request bodies is checked before, in validation.ts.
 */
export { ensureUsers, findUser } from './network/users';
export { companyView, createCompany, getCompany, searchCompanies, updateCompany } from './network/companies';
export { acceptInvitation, addTrustedParty, listTrustedParties, removeTrustedParty } from './network/trusted-parties';
export { coreClientView, createCoreClient, getCoreClient, listCoreClients } from './network/core-clients';
export { entityView, policyView, type EntityView, type PolicyView } from './network/custody-groups';
export { companyHoldings, fundWallets, getWallet, walletView, type WalletView } from './network/wallets';
export { addWallets, createFund, fundDeposits, fundDetailView, getFund, type FundInput } from './network/funds';
export { faucetDeposit, moveBalance, type Movement } from './network/deposits';
export { fundLedger, ledgerDirection, ledgerMovedBalance } from './network/ledger';
