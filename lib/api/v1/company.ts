/**
 * Companies (spec section 2 "Company", section 4 "Company"; OpenAPI `/company`, `/company/{company_id}`, `/company/search`).
 */
import { W, CONFLICT_RESPONSE, type Wire } from '../wire';
import { objectSchema, optionalFieldsSchema, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S, NAME_MAX_LENGTH, DOMAIN_MAX_LENGTH, REFERENCE_MAX_LENGTH } from '../spec';


/**
 * A company as the API returns it (spec section 2 "Company"): `company_id` (assigned by the
 * service) and `name` required; `city`, `country` (ISO 3166-1 alpha-2, or empty), `domain`,
 * `ref` (the partner's own reference) optional.
 */
export const companySchema = objectSchema(['company_id', 'name'], {
  company_id: W.id,
  name: W.text,
  city: W.text,
  country: { type: 'string', pattern: '^(?:[A-Z]{2})?$' },
  domain: W.text,
  ref: W.text,
});

/** A company as returned by POST /company and GET /company/{company_id} ({@link companySchema}). */
export type Company = Wire<typeof companySchema>;

/** PUT /company/{company_id} answer: `company_id` and `ref` (spec section 4; OpenAPI CreateCompanyResponse). */
export const companyUpdatedSchema = objectSchema(['company_id', 'ref'], { company_id: W.id, ref: W.text });

/** PUT /company/{company_id} answer ({@link companyUpdatedSchema}). */
export type CompanyUpdated = Wire<typeof companyUpdatedSchema>;

/**
 * GET /company/search answer (spec section 4; OpenAPI CompanySearchResponse): `total_count` and
 * `matches[]` of `{company_id, name, domain}`. `domain` is optional as it is on a company.
 */
export const companySearchResultSchema = objectSchema(['total_count', 'matches'], {
  total_count: W.count,
  matches: { type: 'array', items: { type: 'object', required: ['company_id', 'name'], properties: { company_id: W.id, name: W.text, domain: W.text } } },
});

/** GET /company/search answer ({@link companySearchResultSchema}). */
export type CompanySearchResult = Wire<typeof companySearchResultSchema>;

/**
 * Company fields as sent (spec section 2 "Company"): `name`, `city`, `country` (ISO 3166-1
 * alpha-2), `domain`, `ref`; none required here: `name` is required on create (the create body
 * adds it), an update sends any of them (at least one).
 */
export const companyFieldsSchema = optionalFieldsSchema({
  name: S.name,
  city: S.optionalText(NAME_MAX_LENGTH),
  country: { type: 'string', maxLength: 2, pattern: '^[A-Z]{2}$' },
  domain: S.optionalText(DOMAIN_MAX_LENGTH),
  ref: S.optionalText(REFERENCE_MAX_LENGTH),
});

/** Company fields as sent ({@link companyFieldsSchema}); `name` is required on create. */
export type CompanyFields = Wire<typeof companyFieldsSchema>;

/** Operation declarations of this group, by id. */
export const companyOperations = {
  // Spec section 4: "Company object with company_id" (the spec overrides the OpenAPI's
  // CreateCompanyResponse `{company_id, ref}`). 409: OpenAPI ("already exists").
  create: operation('POST', '/company', 'spec section 4, POST /company', { ...answers(companySchema), ...CONFLICT_RESPONSE }, { body: { ...companyFieldsSchema, required: ['name'] } }),
  get: readOperation('/company/{company_id}', 'spec section 4, GET /company/{company_id}', companySchema),
  update: operation('PUT', '/company/{company_id}', 'spec section 4, PUT /company/{company_id}', answers(companyUpdatedSchema), {
    idempotent: true,
    body: { ...companyFieldsSchema, minProperties: 1 },
  }),
  search: readOperation('/company/search', 'spec section 4, GET /company/search; section 8: a 3-letter query', companySearchResultSchema, {
    // The bound is the spec's (section 8: a 3-letter query), not one of the pack's *_MAX_LENGTH.
    query: { type: 'object', required: ['query'], properties: { query: { type: 'string', minLength: 3, maxLength: 3 } } },
  }),
} satisfies Record<string, OperationSpec>;
