/**
 * Funds and wallets. The spec leaves their creation and objects out ("not shown"); the shapes
 * follow the OpenAPI: POST /company/{company_id}/fund (Fund -> CreateFundResponse),
 * POST /company/{company_id}/fund/{fund_id}/wallet (FundWallet -> WalletIDList),
 * GET /company/{company_id}/fund/{fund_id} (FundDetail), GET /wallet/{wallet_id} (FundWalletInfo).
 */
import { CustodyClient, ApiResponse } from '../client';
import { callOperation, OperationSpec, S, JsonSchema } from '../operation';

/** A custody group: `threshold` approvals needed among `members` (trusted entity ids). */
export interface CustodyGroup {
  threshold: number;
  members: string[];
}

/** A wallet to create (OpenAPI NewWallet); `type` 0 standard, 1 dedicated, 2 multi-counterparty. */
export interface NewWallet {
  name: string;
  asset: string;
  type?: number;
  custodygroup_withdraw?: CustodyGroup | null;
  custodygroup_tx?: CustodyGroup | null;
  connect?: Array<{ counterparty_id: string; client_id: string }> | null;
}

/** A custody policy as read back (OpenAPI Policy). */
export interface Policy {
  id: string;
  name: string;
  threshold: number;
  members: Array<{ type: string; id: string; name: string; [k: string]: unknown }>;
}

/** A wallet as read back (OpenAPI FundWalletInfo; NOTES.md "Wallet"); `balance` in base units. */
export interface Wallet {
  wallet_id: string;
  name: string;
  asset: string;
  type: number;
  status: string;
  address: string;
  address_type?: string;
  /** Three English words separated by spaces; usable wherever a wallet id is. */
  short_code: string;
  balance: number;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  policy_withdraw?: Policy;
  policy_tx?: Policy;
  connected?: unknown;
}

/** A fund as read back (OpenAPI FundDetail). */
export interface Fund {
  fund_id: string;
  name: string;
  description?: string;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  policy_withdraw?: Policy;
  policy_tx?: Policy;
  members?: unknown;
  assets?: string[];
  wallets: Wallet[];
}

/** POST fund answer (OpenAPI CreateFundResponse): the new fund id and its custody group ids. */
export interface CreateFundResponse {
  fund_id: string;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
}

const custodyGroup: JsonSchema = {
  type: 'object',
  required: ['threshold', 'members'],
  properties: { threshold: { type: 'integer', minimum: 1 }, members: { type: 'array', minItems: 1, items: S.text } },
};
const newWallet: JsonSchema = {
  type: 'object',
  required: ['name', 'asset'],
  properties: {
    name: S.text,
    asset: S.assetCode,
    type: { type: 'integer', enum: [0, 1, 2] },
    custodygroup_withdraw: { anyOf: [custodyGroup, { type: 'null' }] },
    custodygroup_tx: { anyOf: [custodyGroup, { type: 'null' }] },
    connect: { anyOf: [{ type: 'array', items: { type: 'object', properties: { counterparty_id: S.text, client_id: S.text } } }, { type: 'null' }] },
  },
};

/** Operation declarations of this group, by id. */
export const fundOperations = {
  createFund: {
    method: 'POST',
    path: '/company/{company_id}/fund',
    source: 'OpenAPI POST /company/{company_id}/fund (schema Fund)',
    body: {
      type: 'object',
      required: ['name', 'custodygroup_withdraw', 'custodygroup_tx'],
      properties: { name: S.text, description: S.optionalText, custodygroup_withdraw: custodyGroup, custodygroup_tx: custodyGroup, wallets: { type: 'array', items: newWallet } },
    },
  },
  addWallet: {
    method: 'POST',
    path: '/company/{company_id}/fund/{fund_id}/wallet',
    source: 'OpenAPI POST /company/{company_id}/fund/{fund_id}/wallet (schema FundWallet)',
    body: { type: 'object', required: ['wallets'], properties: { wallets: { type: 'array', minItems: 1, items: newWallet } } },
  },
  getFund: { method: 'GET', path: '/company/{company_id}/fund/{fund_id}', idempotent: true, source: 'OpenAPI GET /company/{company_id}/fund/{fund_id}' },
  getWallet: { method: 'GET', path: '/wallet/{wallet_id}', idempotent: true, source: 'spec section 4, GET wallet/{wallet_id}; OpenAPI FundWalletInfo' },
} satisfies Record<string, OperationSpec>;

/** Create a fund with its custody groups (and optionally wallets). */
export function createFund(
  client: CustodyClient,
  input: { company_id: string; name: string; description?: string; custodygroup_withdraw: CustodyGroup; custodygroup_tx: CustodyGroup; wallets?: NewWallet[] },
): Promise<ApiResponse<CreateFundResponse>> {
  return callOperation<CreateFundResponse>(client, fundOperations.createFund, { ...input });
}

/** Add wallets to a fund; blank custody groups use the fund's. Answers `{wallets: [wallet ids]}`. */
export function addWallet(client: CustodyClient, input: { company_id: string; fund_id: string; wallets: NewWallet[] }): Promise<ApiResponse<{ wallets: string[] }>> {
  return callOperation(client, fundOperations.addWallet, input);
}

/** Read a fund with all its wallets (each with short_code and balance). */
export function getFund(client: CustodyClient, input: { company_id: string; fund_id: string }): Promise<ApiResponse<Fund>> {
  return callOperation<Fund>(client, fundOperations.getFund, input);
}

/** Read a wallet by id or short code. */
export function getWallet(client: CustodyClient, input: { wallet_id: string }): Promise<ApiResponse<Wallet>> {
  return callOperation<Wallet>(client, fundOperations.getWallet, input);
}
