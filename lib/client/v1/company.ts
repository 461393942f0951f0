/**
 * The typed calls of the operations declared in lib/api/v1/company.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import { type CompanyFields, type Company, companyOperations, type CompanyUpdated, type CompanySearchResult } from '../../api/v1/company';
import type { ApiResponse } from '../transport';
import { callOperation } from '../call';

/** Create a company. @throws {ValidationError} when `name` is missing; {ApiError} on a non-2xx answer. */
export function createCompany(client: CustodyClient, input: CompanyFields): Promise<ApiResponse<Company>> {
  return callOperation<Company>(client, companyOperations.create, { ...input });
}

/** Read a company. @throws {ValidationError} for a missing `company_id`; {ApiError} (404 when unknown). */
export function getCompany(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<Company>> {
  return callOperation<Company>(client, companyOperations.get, input);
}

/** Update a company; omitted fields stay unchanged. Answers `{company_id, ref}`. */
export function updateCompany(client: CustodyClient, input: CompanyFields & { company_id: string }): Promise<ApiResponse<CompanyUpdated>> {
  return callOperation(client, companyOperations.update, { ...input });
}

/** Search companies by a 3-letter query. @throws {ValidationError} when `query` is not 3 characters. */
export function searchCompanies(client: CustodyClient, input: { query: string }): Promise<ApiResponse<CompanySearchResult>> {
  return callOperation<CompanySearchResult>(client, companyOperations.search, input);
}
