/**
 * Companies, the trusted network, core clients, funds, wallets, deposits and the ledger.
 * Sources: spec sections 2 and 4 (Company, Trusted network, Funds, deposits, ledger; Core
 * clients), OpenAPI paths `/company/{company_id}/fund`, `/company/{company_id}/fund/{fund_id}`,
 * `/company/{company_id}/fund/{fund_id}/wallet`, `/wallet/{wallet_id}`, NOTES.md "Shapes".
 *
 * Every function validates meaning (existence, membership, ranges) and throws a {@link SimError};
 * the JSON shape of request bodies is checked before, in validation.ts.
 */
import type { Engine } from './engine';
import type { Company, CompanyFields } from '../lib/api/v1/company';
import type { CoreClient } from '../lib/api/v1/core-client';
import type { CustodyGroup, NewWallet } from '../lib/api/v1/fund';
import { badRequest, conflict, forbidden, notFound } from './errors';
import { newAddress, newChainTxId, newId, newShortCode } from './ids';
import { findAsset } from './assets';
import type {
  CompanyRecord,
  CoreClientRecord,
  CustodyGroupRecord,
  FundRecord,
  LedgerEntry,
  NetworkUser,
  TrustedPartyRecord,
  WalletRecord,
} from './state';
import type { WalletFeedMessage } from '../lib/api/feeds';

// ---------------------------------------------------------------- users of the network

/** Human users pre-registered in the simulated network (the signing-app users). */
const SEED_USERS: ReadonlyArray<Omit<NetworkUser, 'id'>> = [
  { email: 'alice@custody.example', firstName: 'Alice', lastName: 'Archer', username: 'alice' },
  { email: 'bob@custody.example', firstName: 'Bob', lastName: 'Baker', username: 'bob' },
  { email: 'carol@custody.example', firstName: 'Carol', lastName: 'Carter', username: 'carol' },
];

/** Create the pre-registered users on first start (ids random, then persisted). */
export function ensureUsers(eng: Engine): void {
  for (const u of SEED_USERS) {
    if (!Object.values(eng.state.users).some((x) => x.email === u.email)) {
      const id = newId();
      eng.state.users[id] = { id, ...u };
      eng.changed();
    }
  }
}

/** A network user by id, e-mail (case-insensitive) or username; undefined when unknown. */
export function findUser(eng: Engine, idOrEmail: string): NetworkUser | undefined {
  const key = idOrEmail.trim().toLowerCase();
  return eng.state.users[idOrEmail] ?? Object.values(eng.state.users).find((u) => u.email === key || u.username === key);
}

// ---------------------------------------------------------------- companies

/** Company record -> Company object. */
export function companyView(c: CompanyRecord): Company {
  return { company_id: c.company_id, name: c.name, city: c.city, country: c.country, domain: c.domain, ref: c.ref };
}

/**
 * POST /company. `name` is required (checked by validation.ts).
 * @param id a fixed id (the demo dataset's); a new random id when omitted.
 */
export function createCompany(eng: Engine, input: CompanyFields, id = newId()): CompanyRecord {
  const company: CompanyRecord = {
    company_id: id,
    name: input.name ?? '',
    city: input.city ?? '',
    country: input.country ?? '',
    domain: input.domain ?? '',
    ref: input.ref ?? '',
    created: eng.now(),
    trusted: {},
    invitations: {},
  };
  eng.state.companies[company.company_id] = company;
  eng.changed();
  return company;
}

/** @throws 404 when the company does not exist; 403 when it belongs to another API account (CompanyRecord.account). */
export function getCompany(eng: Engine, companyId: string): CompanyRecord {
  const c = eng.state.companies[companyId];
  if (!c) throw notFound(`company_id: no company ${companyId}`);
  if (c.account !== eng.account) throw forbidden(`company_id: company ${companyId} belongs to another API account`);
  return c;
}

/** PUT /company/{company_id}: omitted fields unchanged. @returns `{company_id, ref}`. @throws 404 */
export function updateCompany(eng: Engine, companyId: string, input: CompanyFields): { company_id: string; ref: string } {
  const c = getCompany(eng, companyId);
  for (const k of ['name', 'city', 'country', 'domain', 'ref'] as const) {
    const v = input[k];
    if (v !== undefined) c[k] = v;
  }
  eng.changed();
  return { company_id: c.company_id, ref: c.ref };
}

/**
 * GET /company/search?query=: case-insensitive substring match on name or domain.
 * @throws 400 unless `query` is exactly 3 letters (spec section 8).
 */
export function searchCompanies(eng: Engine, query: unknown): { total_count: number; matches: { company_id: string; name: string; domain: string }[] } {
  if (typeof query !== 'string' || !/^[A-Za-z]{3}$/.test(query)) throw badRequest('query: must be exactly 3 letters');
  const q = query.toLowerCase();
  const matches = Object.values(eng.state.companies)
    .filter((c) => c.name.toLowerCase().includes(q) || c.domain.toLowerCase().includes(q))
    .map((c) => ({ company_id: c.company_id, name: c.name, domain: c.domain }));
  return { total_count: matches.length, matches };
}

// ---------------------------------------------------------------- trusted network

/**
 * POST /company/{company_id}/trustedparty `{address, type, name?}`.
 * - type `core-client`: `address` is the core client id; it joins at once (trusted_entity_id = client id).
 * - type `user`: `address` is the e-mail of a registered network user; an invitation is stored and the
 *   user joins when it is accepted (`POST /_simulator/trustedparty/accept`).
 * @throws 404 company unknown, unknown core client, or no registered user with that e-mail;
 *   400 unsupported type; 409 already a trusted party.
 */
export function addTrustedParty(eng: Engine, companyId: string, input: { address: string; type: string; name?: string }): void {
  const company = getCompany(eng, companyId);
  if (input.type === 'core-client') {
    const client = eng.state.coreClients[input.address];
    if (!client || client.account !== eng.account) throw notFound(`address: no core client ${input.address}`);
    if (company.trusted[client.id]) throw conflict(`address: core client ${client.id} is already a trusted party`);
    company.trusted[client.id] = {
      trusted_entity_id: client.id,
      name: input.name || client.name,
      type: 'core-client',
      address: client.id,
      internal: false,
      created: eng.now(),
    };
    eng.changed();
    return;
  }
  if (input.type !== 'user') throw badRequest('type: must be "user" or "core-client"');
  const user = findUser(eng, input.address);
  if (!user || user.email !== input.address.trim().toLowerCase()) {
    throw notFound(`address: no user registered in the network with e-mail ${input.address}`);
  }
  if (company.trusted[user.id]) throw conflict(`address: ${user.email} is already a trusted party`);
  company.invitations[user.email] = { address: user.email, name: input.name || `${user.firstName} ${user.lastName}`, created: eng.now() };
  eng.changed();
}

/**
 * The invited user accepts (control endpoint). @returns the new trusted party.
 * @throws 404 unknown company or no pending invitation for that address; 409 already trusted.
 */
export function acceptInvitation(eng: Engine, companyId: string, address: string): TrustedPartyRecord {
  const company = getCompany(eng, companyId);
  const user = findUser(eng, address);
  if (user && company.trusted[user.id]) throw conflict(`address: ${user.email} is already a trusted party`);
  const inv = user ? company.invitations[user.email] : undefined;
  if (!user || !inv) throw notFound(`address: no pending invitation for ${address} in company ${companyId}`);
  delete company.invitations[user.email];
  const tp: TrustedPartyRecord = { trusted_entity_id: user.id, name: inv.name, type: 'user', address: user.email, internal: false, created: eng.now() };
  company.trusted[user.id] = tp;
  eng.changed();
  return tp;
}

/** GET /company/{company_id}/trustedparty. @throws 404 */
export function listTrustedParties(eng: Engine, companyId: string): { company_id: string; total_count: number; list: TrustedPartyRecord[] } {
  const company = getCompany(eng, companyId);
  const list = Object.values(company.trusted).map((t) => ({ ...t }));
  return { company_id: companyId, total_count: list.length, list };
}

/**
 * DELETE /company/{company_id}/trustedparty/{trustedparty_id} (a pending invitation can be
 * withdrawn by passing the e-mail address).
 * @throws 404 unknown company or party; 409 when the party is a custodian of one of the company's
 *   funds or wallets (remove it from custody first: money must never lose its approvers silently).
 */
export function removeTrustedParty(eng: Engine, companyId: string, partyId: string): void {
  const company = getCompany(eng, companyId);
  if (!company.trusted[partyId]) {
    const key = partyId.trim().toLowerCase();
    if (company.invitations[key]) {
      delete company.invitations[key];
      eng.changed();
      return;
    }
    throw notFound(`trustedparty_id: no trusted party ${partyId} in company ${companyId}`);
  }
  for (const fid of eng.fundIdsOfCompany(companyId)) {
    const f = eng.state.funds[fid];
    if (!f || f.company_id !== companyId) continue;
    const groups = [f.custodygroup_tx, f.custodygroup_withdraw];
    for (const w of fundWallets(eng, f.fund_id)) groups.push(w.custodygroup_tx, w.custodygroup_withdraw);
    if (groups.some((g) => eng.state.custodyGroups[g]?.members.includes(partyId))) {
      throw conflict(`trustedparty_id: ${partyId} is a custodian of fund ${f.fund_id}`);
    }
  }
  delete company.trusted[partyId];
  eng.changed();
}

// ---------------------------------------------------------------- core clients

/** Build the view; `wsBase` is e.g. `ws://127.0.0.1:8780/api/v1/p` (from the request's Host header). */
export function coreClientView(c: CoreClientRecord, wsBase: string): CoreClient {
  return { id: c.id, name: c.name, feed: `${wsBase}/coreclient/${c.id}/feed`, timestamp: c.timestamp };
}

/**
 * POST /coreclient `{name}`.
 * @param id a fixed id (the demo dataset's); a new random id when omitted.
 */
export function createCoreClient(eng: Engine, name: string, id = newId()): CoreClientRecord {
  const c: CoreClientRecord = { id, name, timestamp: eng.now() };
  if (eng.account) c.account = eng.account;
  eng.state.coreClients[c.id] = c;
  eng.changed();
  return c;
}

/** @throws 404 unknown core client; 403 a core client of another API account */
export function getCoreClient(eng: Engine, clientId: string): CoreClientRecord {
  const c = eng.state.coreClients[clientId];
  if (!c) throw notFound(`client_id: no core client ${clientId}`);
  if (c.account !== eng.account) throw forbidden(`client_id: core client ${clientId} belongs to another API account`);
  return c;
}

/**
 * GET /coreclient?company_id=: the core clients that are trusted parties of the company.
 * @throws 400 company_id missing; 404 unknown company.
 */
export function listCoreClients(eng: Engine, companyId: unknown): CoreClientRecord[] {
  if (typeof companyId !== 'string' || companyId === '') throw badRequest('company_id: query parameter is required');
  const company = getCompany(eng, companyId);
  return Object.values(company.trusted)
    .filter((t) => t.type === 'core-client' && eng.state.coreClients[t.trusted_entity_id])
    .map((t) => eng.state.coreClients[t.trusted_entity_id]);
}

// ---------------------------------------------------------------- funds and wallets

/** A fund to create (OpenAPI Fund). */
export interface FundInput {
  name: string;
  description?: string;
  custodygroup_withdraw: CustodyGroup;
  custodygroup_tx: CustodyGroup;
  wallets?: NewWallet[];
}

function isBlankGroup(g: CustodyGroup | null | undefined): boolean {
  return g == null || ((g.members === undefined || g.members.length === 0) && (g.threshold === undefined || g.threshold === 0));
}

/**
 * Check a custody group and store it.
 * @throws 400 naming `field` when a member is not a trusted party of the company, members repeat,
 *   or threshold is outside 1..members.length.
 */
function makeCustodyGroup(eng: Engine, company: CompanyRecord, g: CustodyGroup, field: string, name: string): CustodyGroupRecord {
  const members = g.members ?? [];
  if (members.length === 0) throw badRequest(`${field}.members: at least one custodian is required`);
  const seen = new Set<string>();
  members.forEach((m, i) => {
    if (!company.trusted[m]) throw badRequest(`${field}.members[${i}]: ${m} is not a trusted party of company ${company.company_id}`);
    if (seen.has(m)) throw badRequest(`${field}.members[${i}]: ${m} is listed twice`);
    seen.add(m);
  });
  const threshold = g.threshold;
  if (typeof threshold !== 'number' || !Number.isInteger(threshold) || threshold < 1 || threshold > members.length) {
    throw badRequest(`${field}.threshold: must be an integer from 1 to ${members.length} (the number of members)`);
  }
  return { id: newId(), name, threshold, members: [...members] };
}

function storeGroup(eng: Engine, g: CustodyGroupRecord): string {
  eng.state.custodyGroups[g.id] = g;
  return g.id;
}

function checkWalletInputs(eng: Engine, company: CompanyRecord, wallets: NewWallet[], field: string, walletIds: string[] = []): (() => WalletRecord)[] {
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

function attachWallets(eng: Engine, fund: FundRecord, makers: (() => WalletRecord)[]): string[] {
  return makers.map((make) => {
    const w = make();
    w.fund_id = fund.fund_id;
    if (!w.custodygroup_withdraw) w.custodygroup_withdraw = fund.custodygroup_withdraw;
    if (!w.custodygroup_tx) w.custodygroup_tx = fund.custodygroup_tx;
    eng.state.wallets[w.wallet_id] = w;
    eng.indexWallet(w);
    return w.wallet_id;
  });
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
  eng.state.funds[fund.fund_id] = fund;
  eng.indexFund(fund);
  eng.state.ledger[fund.fund_id] = [];
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

/**
 * A wallet by id or short code.
 * @throws 404 naming `field` when unknown.
 */
export function getWallet(eng: Engine, idOrShortCode: string, field = 'wallet_id'): WalletRecord {
  const w = eng.findWallet(idOrShortCode);
  if (!w) throw notFound(`${field}: no wallet with id or short code "${idOrShortCode}"`);
  return w;
}

/** Entity of a policy member (OpenAPI Entity). */
export interface EntityView {
  type: 'user' | 'core-client';
  id: string;
  name: string;
  user?: { firstName: string; lastName: string; email: string; username: string };
  coreClient?: { name: string };
}

/** Policy of OpenAPI (`{id, name, threshold, members: Entity[]}`). */
export interface PolicyView {
  id: string;
  name: string;
  threshold: number;
  members: EntityView[];
}

/** Describe a trusted entity id as a policy member. */
export function entityView(eng: Engine, entityId: string): EntityView {
  const u = eng.state.users[entityId];
  if (u) {
    return { type: 'user', id: u.id, name: `${u.firstName} ${u.lastName}`, user: { firstName: u.firstName, lastName: u.lastName, email: u.email, username: u.username } };
  }
  const c = eng.state.coreClients[entityId];
  return { type: 'core-client', id: entityId, name: c?.name ?? '', coreClient: { name: c?.name ?? '' } };
}

/** Custody group -> Policy view. */
export function policyView(eng: Engine, groupId: string): PolicyView {
  const g = eng.state.custodyGroups[groupId];
  if (!g) return { id: groupId, name: '', threshold: 0, members: [] };
  return { id: g.id, name: g.name, threshold: g.threshold, members: g.members.map((m) => entityView(eng, m)) };
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

// ---------------------------------------------------------------- deposits and ledger

/** Details of a balance movement for the wallets feed (NOTES.md: negative amounts outgoing). */
export interface Movement {
  tx_id: string;
  chain_tx_id: string;
  /** final status of the transaction, e.g. `approved_transfer` */
  status: string;
  /** gross base units (positive); for outgoing the debit, for incoming the credit */
  amount: number;
  /** base units of fees inside `amount` (0 for incoming) */
  fee: number;
  sweep_tx?: boolean;
}

/**
 * Move a wallet's booked balance and announce it on the wallets feed (engine event `walletTx`):
 * `direction` out debits `m.amount`, in credits it. The feed message has negative amount, fee
 * and net_amount for outgoing.
 */
export function moveBalance(eng: Engine, wallet: WalletRecord, direction: 'in' | 'out', m: Movement, now: number): void {
  const sign = direction === 'out' ? -1 : 1;
  wallet.balance += sign * m.amount;
  eng.changed();
  const msg: WalletFeedMessage = {
    Status: m.status,
    amount: sign * m.amount,
    asset: wallet.asset,
    chain_tx_id: m.chain_tx_id,
    fee: m.fee === 0 ? 0 : sign * m.fee,
    net_amount: sign * (m.amount - m.fee),
    sweep_tx: m.sweep_tx ?? false,
    timestamp: now,
    tx_id: m.tx_id,
    wallet_id: wallet.wallet_id,
  };
  eng.emitWalletTx(msg);
}

/**
 * Append a ledger entry for a wallet (to `state.ledger[wallet.fund_id]`) and index it
 * (`Engine.catchUpLedger`).
 * @returns its position in the fund's ledger array (0 = the oldest).
 */
export function writeLedger(eng: Engine, wallet: WalletRecord, entry: LedgerEntry): number {
  (eng.state.ledger[wallet.fund_id] ??= []).push({ wallet_id: wallet.wallet_id, entry });
  eng.changed();
  return eng.catchUpLedger(wallet.fund_id);
}

/**
 * A deposit from the faucet (control endpoint `POST /_simulator/faucet`): credits the wallet and
 * writes a `deposit` ledger entry (TxID, status and counterparty fields empty, fees 0: spec section 2)
 * and emits a wallets feed event (`Status` `confirmed`, `tx_id` '').
 * @param amount positive safe integer, base units.
 * @throws 404 unknown wallet; 400 when the new balance would not be a safe integer.
 */
export function faucetDeposit(eng: Engine, walletIdOrCode: string, amount: number): { wallet_id: string; asset: string; amount: number; balance: number; chainTxID: string } {
  const w = getWallet(eng, walletIdOrCode);
  if (!Number.isSafeInteger(w.balance + amount)) throw badRequest('amount: the balance would exceed the largest safe integer');
  const chainTxID = newChainTxId();
  moveBalance(eng, w, 'in', { tx_id: '', chain_tx_id: chainTxID, status: 'confirmed', amount, fee: 0 }, eng.now());
  writeLedger(eng, w, {
    TxID: '',
    chainTxID,
    fundID: w.fund_id,
    timestamp: eng.now(),
    expireTime: 0,
    status: '',
    type: 'deposit',
    asset: w.asset,
    amount,
    fees: 0,
    netAmount: amount,
    counterpartyID: '',
    counterpartyName: '',
    address: w.address,
    reference: '',
    benefitOf: '',
    accountNo: '',
  });
  return { wallet_id: w.wallet_id, asset: w.asset, amount, balance: w.balance, chainTxID };
}

/**
 * The direction of a ledger entry type, one rule for every type: `deposit` and every type ending
 * in `In` (transferIn, swapIn, ...) are `in`; every other type (transferOut, withdraw, swap,
 * swapOut, sweeps, ...) is `out`. Types are those of OpenAPI TxHistoryItem.
 */
export function ledgerDirection(type: string): 'in' | 'out' {
  return type === 'deposit' || type.endsWith('In') ? 'in' : 'out';
}

/**
 * True when a ledger entry moved its wallet's balance: a deposit (status '') or an entry with
 * status `approved`. Entries `pending`, `rejected`, `expired`, `cancelled` (custody transactions
 * that have not settled or never will) and `chain_rejected` (a withdrawal refunded by the chain)
 * moved nothing; the fund ledger lists them, the wallet history leaves them out.
 */
export function ledgerMovedBalance(e: LedgerEntry): boolean {
  return e.type === 'deposit' || e.status === 'approved';
}

/**
 * GET /company/{company_id}/fund/{fund_id}/ledger -> `{Total, List}`, newest first (in the order
 * written: a custody transaction's debit entry sits where it was written pending, at creation).
 * Every entry, whatever its status (see {@link ledgerMovedBalance}).
 * Filters (all optional): `asset` (a known asset code), `wallet_id` (id or short code, must be in
 * the fund), `direction` `all` | `in` (deposit, transferIn, swapIn) | `out` (transferOut,
 * withdraw, swapOut), see {@link ledgerDirection}; paging `offset`, `limit`. `Total` counts the
 * filtered entries before paging.
 * @throws 404 unknown company/fund; 400 naming the field for an unknown asset, a bad direction,
 *   offset or limit, a wallet not in the fund, or a parameter given twice.
 */
export function fundLedger(eng: Engine, companyId: string, fundId: string, q: Record<string, unknown>): { Total: number; List: LedgerEntry[] } {
  getFund(eng, companyId, fundId);
  const str = (k: string): string | undefined => {
    const v = q[k];
    if (v !== undefined && typeof v !== 'string') throw badRequest(`${k}: must be given once, as plain text`);
    return v === '' ? undefined : v;
  };
  const direction = str('direction') ?? 'all';
  if (!['all', 'in', 'out'].includes(direction)) throw badRequest('direction: must be all, in or out');
  const asset = str('asset');
  if (asset !== undefined && !findAsset(asset)) throw badRequest(`asset: unknown asset ${asset}`);
  let walletId: string | undefined;
  const wq = str('wallet_id');
  if (wq) {
    const w = eng.findWallet(wq);
    if (!w || w.fund_id !== fundId) throw badRequest(`wallet_id: no wallet "${wq}" in fund ${fundId}`);
    walletId = w.wallet_id;
  }
  const int = (k: string, dflt: number): number => {
    const v = str(k);
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v)) throw badRequest(`${k}: must be a non-negative integer`);
    return Number(v);
  };
  const offset = int('offset', 0);
  const limit = int('limit', Number.MAX_SAFE_INTEGER);
  // The filtered entries come from the engine's index (positions, oldest first): the page is
  // read from the newest end without walking the ledger (issue 11).
  const positions = eng.ledgerPositions(fundId, { walletId, asset, direction: direction as 'all' | 'in' | 'out' });
  const records = eng.state.ledger[fundId] ?? [];
  const total = positions.length;
  const List: LedgerEntry[] = [];
  for (let i = offset; i < total && i - offset < limit; i++) List.push(records[positions[total - 1 - i]].entry);
  return { Total: total, List };
}
