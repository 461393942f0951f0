/**
 * A company's trusted network (spec section 2 "Trusted party", section 4; OpenAPI
 * `/company/{company_id}/trustedparty`, `/company/{company_id}/trustedparty/{trustedparty_id}`):
 * core clients join at once, human users through an invitation they accept.
 */
import type { Engine } from '../engine';
import { badRequest, conflict, notFound } from '../errors';
import type { TrustedPartyRecord } from '../model';
import { getCompany } from './companies';
import { findUser } from './users';
import { fundWallets } from './wallets';

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
