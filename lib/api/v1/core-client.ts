/**
 * Core clients and their actions (spec section 2 "Core client", "Action"; section 4 "Core
 * clients and actions"; OpenAPI `/coreclient`, `/coreclient/{client_id}/actions`,
 * `/coreclient/{client_id}/action/{action_id}`).
 */
import { W, okBodySchema, type Wire } from '../wire';
import { objectSchema, optionalFieldsSchema, arrayOf, listSchema, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S } from '../spec';

/**
 * A core client (spec section 2 "Core client"), all fields required: `id`, `name`, `feed` (its
 * websocket URL, `{ws_base_url}/coreclient/{client_id}/feed`), `timestamp` epoch seconds (the spec
 * overrides the OpenAPI CoreClientInfo, which types `timestamp` as a string).
 */
export const coreClientSchema = objectSchema(['id', 'name', 'feed', 'timestamp'], {
  id: W.id,
  name: W.text,
  feed: { type: 'string', pattern: '^wss?://[^/]+/.*coreclient/[^/]+/feed$' },
  timestamp: W.epochSeconds,
});

/** A core client ({@link coreClientSchema}); `feed` is its websocket URL, `timestamp` epoch seconds. */
export type CoreClient = Wire<typeof coreClientSchema>;

/** GET /coreclient answer: `count`, `clients[]` (spec section 4; OpenAPI CoreClientsInfo). */
export const coreClientListSchema = objectSchema(['count', 'clients'], { count: W.count, clients: arrayOf(coreClientSchema) });

/** GET /coreclient answer ({@link coreClientListSchema}). */
export type CoreClientList = Wire<typeof coreClientListSchema>;

/**
 * Action types (spec section 2 "Action": ApproveWithdraw, ApproveTransfer, RejectWithdraw,
 * RejectTransfer, ApproveSwap, ApproveSwapTake) and `ApproveNewWalletConnect`, a wallet connection
 * request to an exchange core client (spec section 2: such requests "also arrive as actions";
 * the type name is the documentation examples').
 */
export const ACTION_TYPES = ['ApproveWithdraw', 'ApproveTransfer', 'RejectWithdraw', 'RejectTransfer', 'ApproveSwap', 'ApproveSwapTake', 'ApproveNewWalletConnect'] as const;

/** An action type: one of {@link ACTION_TYPES}. */
export type ActionType = (typeof ACTION_TYPES)[number];

/** Action statuses (spec section 3: pending, expired, approved, rejected). */
export const ACTION_STATUSES = ['pending', 'expired', 'approved', 'rejected'] as const;

/** An action status: one of {@link ACTION_STATUSES}. */
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/**
 * The `details` of a single action read (spec section 2 "Action" lists txtype, txID, asset,
 * amount, fees, net amount, reference, ...; the names are the OpenAPI ActionDetailApprove*'s).
 * None is required: which are present depends on the action type (a wallet connection request
 * carries `clientData` and `wallet`, the service's documentation examples). Amounts base units, times epoch seconds.
 */
export const actionDetailsSchema = optionalFieldsSchema({
  txType: W.text,
  txID: W.text,
  asset: W.text,
  amount: W.unsignedBaseUnits,
  fees: W.unsignedBaseUnits,
  netAmount: W.unsignedBaseUnits,
  reference: W.text,
  benefitOf: W.text,
  accountNo: W.text,
  companyID: W.text,
  fundID: W.text,
  initiatedTime: W.epochSeconds,
  expires: W.epochSeconds,
  recipientAddress: W.text,
  recipientAddressName: W.text,
  recipientID: W.text,
  recipientName: W.text,
  initiatedBy: W.text,
  initiatorName: W.text,
  initiatorType: W.text,
  clientData: { type: 'object', properties: { customer_email: W.text, customer_id: W.text } },
  wallet: { type: 'object', properties: { walletID: W.text, name: W.text, asset: W.text, type: { type: 'integer' }, typeCode: W.text } },
});

/**
 * An action (spec section 2 "Action"): `id` (not the tx_id), `type`, `status`, `timestamp` and
 * `expireTime` (epoch seconds) required; `coreClientID` (spec: present in feed messages; the service's documentation examples:
 * in single-action reads) and `details` ({@link actionDetailsSchema}) optional.
 */
export const actionSchema = objectSchema(['id', 'type', 'status', 'timestamp', 'expireTime'], {
  id: W.id,
  type: { type: 'string', enum: ACTION_TYPES },
  status: { type: 'string', enum: ACTION_STATUSES },
  timestamp: W.epochSeconds,
  expireTime: W.epochSeconds,
  coreClientID: W.id,
  details: actionDetailsSchema,
});

/** An action ({@link actionSchema}); `timestamp` and `expireTime` epoch seconds. */
export type Action = Wire<typeof actionSchema>;

/** GET /coreclient/{client_id}/actions answer: `count`, `actions[]` (spec section 4; OpenAPI ActionsInfo). */
export const actionListSchema = objectSchema(['count', 'actions'], { count: W.count, actions: arrayOf(actionSchema) });

/** GET /coreclient/{client_id}/actions answer ({@link actionListSchema}). */
export type ActionList = Wire<typeof actionListSchema>;

/**
 * A wallet connected to an exchange core client, or pending its approval (OpenAPI
 * CoreClientWallet: `wallet_id`, `action_id`, `status` an action status, `expires` epoch seconds;
 * the spec does not show this payload, the OpenAPI requires none of its fields).
 */
export const coreClientWalletSchema = optionalFieldsSchema({ wallet_id: W.id, action_id: W.text, status: { type: 'string', enum: ACTION_STATUSES }, expires: W.epochSeconds });

/** A wallet connected to an exchange core client ({@link coreClientWalletSchema}). */
export type CoreClientWallet = Wire<typeof coreClientWalletSchema>;

/** GET /coreclient/{client_id}/wallets answer: `{wallets: [...]}` (OpenAPI). */
export const coreClientWalletListSchema = listSchema('wallets', coreClientWalletSchema);

/** GET /coreclient/{client_id}/wallets answer ({@link coreClientWalletListSchema}). */
export type CoreClientWalletList = Wire<typeof coreClientWalletListSchema>;

/**
 * The answer of PUT and DELETE /coreclient/{client_id}/action/{action_id}: the spec shows no body
 * ("approves the action", "rejects the action"); the OpenAPI answers the action
 * ({@link actionSchema}, ActionDetails), the service's documentation examples the plain success body
 * `{code, msg}`. Either is accepted.
 */
export const actionDecisionSchema = { anyOf: [okBodySchema, actionSchema] } as const;

/** The answer of approving or rejecting an action ({@link actionDecisionSchema}). */
export type ActionDecision = Wire<typeof actionDecisionSchema>;

/** Operation declarations of this group, by id. */
export const coreClientOperations = {
  create: operation('POST', '/coreclient', 'spec section 4, POST /coreclient', answers(coreClientSchema), { body: { type: 'object', required: ['name'], properties: { name: S.name } } }),
  list: readOperation('/coreclient', 'spec section 4, GET /coreclient (company_id required)', coreClientListSchema, { query: { type: 'object', required: ['company_id'], properties: { company_id: S.id } } }),
  actions: readOperation('/coreclient/{client_id}/actions', 'spec section 4, GET /coreclient/{client_id}/actions', actionListSchema),
  action: readOperation('/coreclient/{client_id}/action/{action_id}', 'spec section 4, GET /coreclient/{client_id}/action/{action_id}', actionSchema),
  wallets: readOperation('/coreclient/{client_id}/wallets', 'spec section 4, GET /coreclient/{client_id}/wallets; OpenAPI CoreClientWallet', coreClientWalletListSchema),
} satisfies Record<string, OperationSpec>;

/** Approve or reject a core client's action (spec section 4), by operation name. */
export const actionOperations = {
  approve: operation('PUT', '/coreclient/{client_id}/action/{action_id}', 'spec section 4, PUT /coreclient/{client_id}/action/{action_id}', answers(actionDecisionSchema)),
  reject: operation('DELETE', '/coreclient/{client_id}/action/{action_id}', 'spec section 4, DELETE /coreclient/{client_id}/action/{action_id}', answers(actionDecisionSchema)),
} satisfies Record<string, OperationSpec>;
