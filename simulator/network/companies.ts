/**
 * Companies (spec section 2 "Company", section 4; OpenAPI `/company`, `/company/{company_id}`,
 * `/company/search`).
 */
import type { Engine } from '../engine';
import type { Company, CompanyFields } from '../../lib/api/v1/company';
import { badRequest, forbidden, notFound } from '../errors';
import { newId } from '../ids';
import type { CompanyRecord } from '../model';

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
