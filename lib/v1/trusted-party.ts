/**
 * The trusted network of a company (spec section 2 "Trusted party", section 4 "Trusted network";
 * OpenAPI `/company/{company_id}/trustedparty`).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec, S, EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from '../operation';

/** A trusted party entry; `type` is `user` or `core-client` (NOTES.md), `created` epoch seconds. */
export interface TrustedParty {
  trusted_entity_id: string;
  name: string;
  type: string;
  address: string;
  internal?: boolean;
  created: number;
}

/** GET /company/{company_id}/trustedparty answer. */
export interface TrustedPartyList {
  company_id: string;
  total_count: number;
  list: TrustedParty[];
}

/** Plain success body `{code: 200, msg: "OK"}` (NOTES.md). */
export interface OkBody {
  code: number;
  msg: string;
}

/** Operation declarations of this group, by id. */
export const trustedPartyOperations = {
  add: {
    method: 'POST',
    path: '/company/{company_id}/trustedparty',
    source: 'spec section 4, POST /company/{company_id}/trustedparty',
    body: {
      type: 'object',
      required: ['address', 'type'],
      properties: { address: S.text(EMAIL_MAX_LENGTH), type: { type: 'string', enum: ['user', 'core-client'] }, name: S.optionalText(NAME_MAX_LENGTH) },
    },
  },
  list: { method: 'GET', path: '/company/{company_id}/trustedparty', idempotent: true, source: 'spec section 4, GET /company/{company_id}/trustedparty' },
  remove: {
    method: 'DELETE',
    path: '/company/{company_id}/trustedparty/{trustedparty_id}',
    source: 'spec section 4, DELETE /company/{company_id}/trustedparty/{trustedparty_id}',
  },
} satisfies Record<string, OperationSpec>;

/**
 * Invite a trusted party: `address` is a user's e-mail (or a core client id with type
 * `core-client`). A user joins only after accepting; a core client at once.
 */
export function addTrustedParty(client: CustodyClient, input: { company_id: string; address: string; type: string; name?: string }): Promise<ApiResponse<OkBody>> {
  return callOperation<OkBody>(client, trustedPartyOperations.add, input);
}

/** List a company's trusted parties. */
export function listTrustedParties(client: CustodyClient, input: { company_id: string }): Promise<ApiResponse<TrustedPartyList>> {
  return callOperation<TrustedPartyList>(client, trustedPartyOperations.list, input);
}

/** Remove a trusted party. */
export function removeTrustedParty(client: CustodyClient, input: { company_id: string; trustedparty_id: string }): Promise<ApiResponse<OkBody>> {
  return callOperation<OkBody>(client, trustedPartyOperations.remove, input);
}
