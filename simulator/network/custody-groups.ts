/**
 * Custody groups (OpenAPI NewCustodyGroup, Policy, Entity): the custodians and threshold of a
 * fund's or a wallet's transfers and withdrawals, checked against the company's trusted network.
 */
import type { Engine } from '../engine';
import type { CustodyGroup } from '../../lib/api/v1/fund';
import { badRequest } from '../errors';
import { newId } from '../ids';
import type { CompanyRecord, CustodyGroupRecord } from '../model';

/** True when a wallet's custody group is left out: absent, or no members and no threshold (the fund's applies). */
export function isBlankGroup(g: CustodyGroup | null | undefined): boolean {
  return g == null || ((g.members === undefined || g.members.length === 0) && (g.threshold === undefined || g.threshold === 0));
}

/**
 * Check a custody group and store it.
 * @throws 400 naming `field` when a member is not a trusted party of the company, members repeat,
 *   or threshold is outside 1..members.length.
 */
export function makeCustodyGroup(eng: Engine, company: CompanyRecord, g: CustodyGroup, field: string, name: string): CustodyGroupRecord {
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

/** Store a checked custody group. @returns its id. */
export function storeGroup(eng: Engine, g: CustodyGroupRecord): string {
  eng.state.custodyGroups[g.id] = g;
  return g.id;
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
