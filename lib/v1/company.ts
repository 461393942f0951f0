/**
 * Companies (spec section 2 "Company", section 4 "Company"; OpenAPI `/company`, `/company/{company_id}`, `/company/search`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec, S, NAME_MAX_LENGTH, DOMAIN_MAX_LENGTH, REFERENCE_MAX_LENGTH } from '../operation';

/** Company fields as sent (spec section 2); `name` is required on create. */
export interface CompanyFields {
  name?: string;
  city?: string;
  /** ISO 3166-1 alpha-2 code. */
  country?: string;
  domain?: string;
  ref?: string;
}

/** A company as returned by GET /company/{company_id}. */
export interface Company extends CompanyFields {
  company_id: string;
}

/** GET /company/search answer. */
export interface CompanySearchResult {
  total_count: number;
  matches: Array<{ company_id: string; name: string; domain?: string }>;
}

const fields = {
  name: S.name,
  city: S.optionalText(NAME_MAX_LENGTH),
  country: { type: 'string', maxLength: 2, pattern: '^[A-Z]{2}$' },
  domain: S.optionalText(DOMAIN_MAX_LENGTH),
  ref: S.optionalText(REFERENCE_MAX_LENGTH),
};

/** Operation declarations of this group, by id. */
export const companyOperations = {
  create: { method: 'POST', path: '/company', source: 'spec section 4, POST /company', body: { type: 'object', required: ['name'], properties: fields } },
  get: { method: 'GET', path: '/company/{company_id}', idempotent: true, source: 'spec section 4, GET /company/{company_id}' },
  update: {
    method: 'PUT',
    path: '/company/{company_id}',
    idempotent: true,
    source: 'spec section 4, PUT /company/{company_id}',
    body: { type: 'object', minProperties: 1, properties: fields },
  },
  search: {
    method: 'GET',
    path: '/company/search',
    idempotent: true,
    source: 'spec section 4, GET /company/search; section 8: a 3-letter query',
    // The bound is the spec's (section 8: a 3-letter query), not one of the pack's *_MAX_LENGTH.
    query: { type: 'object', required: ['query'], properties: { query: { type: 'string', minLength: 3, maxLength: 3 } } },
  },
} satisfies Record<string, OperationSpec>;

/** Create a company. @throws {ValidationError} when `name` is missing; {ApiError} on a non-2xx answer. */
export function createCompany(client: CustodyClient, input: CompanyFields): Promise<ApiResponse<Company>> {
  return callOperation<Company>(client, companyOperations.create, { ...input });
}

/** Read a company. @throws {ValidationError} for a missing `company_id`; {ApiError} (404 when unknown). */
export function getCompany(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<Company>> {
  return callOperation<Company>(client, companyOperations.get, input);
}

/** Update a company; omitted fields stay unchanged. Answers `{company_id, ref}`. */
export function updateCompany(client: CustodyClient, input: CompanyFields & { company_id: string }): Promise<ApiResponse<{ company_id: string; ref?: string }>> {
  return callOperation(client, companyOperations.update, { ...input });
}

/** Search companies by a 3-letter query. @throws {ValidationError} when `query` is not 3 characters. */
export function searchCompanies(client: CustodyClient, input: { query: string }): Promise<ApiResponse<CompanySearchResult>> {
  return callOperation<CompanySearchResult>(client, companyOperations.search, input);
}
