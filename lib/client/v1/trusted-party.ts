/**
 * The typed calls of the operations declared in lib/api/v1/trusted-party.ts (sent through
 * lib/client/call.ts).
 */
import { CustodyClient } from '../client';
import type { ApiResponse } from '../transport';
import type { OkBody } from '../../api/wire';
import { callOperation } from '../call';
import { trustedPartyOperations, type TrustedPartyList } from '../../api/v1/trusted-party';

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
