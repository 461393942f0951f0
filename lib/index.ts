/**
 * The public API of the library, the package root (`@custodyflow/node-red-custody`): what a
 * program that talks to the Custody Partner API calls. The signed clients (v1 and v2 workspace),
 * every operation as a typed call or by its declaration, the exactly-once submission of payments
 * and the audit log; the errors they throw and the types of their inputs and answers: lib's
 * layers 0 to 3 (support, audit, api, request, client), and nothing of a service.
 *
 * The services have an entry each, loaded only by what uses them (an empty Node-RED flow loads
 * none): `@custodyflow/node-red-custody/feeds` (lib/feeds: the websocket feeds),
 * `/tracking` (lib/tracking: the transaction tracker), `/approver` (lib/approver: the automated
 * approver), `/review` (lib/review: the review queue), `/actions` (lib/actions: approving or
 * rejecting an action and resolving its outcome), `/coordination` (lib/coordination: several
 * instances through Redis). Everything else in lib/ is internal and may change in any release
 * (the layers and the entries: docs/architecture.md).
 */

// Errors (spec section 7) and what a failure tells about its effect.
export {
  ApiError,
  ValidationError,
  ConfigError,
  OutcomeUnknownError,
  SubmissionConflictError,
  OUTCOME_UNKNOWN_CODE,
  failureKindOf,
  shortValue,
  type FailureKind,
  type ApiErrorBody,
  type ApiErrorDetail,
  type ActionCallRef,
  type LastAttempt,
} from './api/errors';

// Amounts in base units (spec section 2).
export { isPlainObject } from './support/objects';
export { toBaseUnits, fromBaseUnits } from './api/amounts';

// The money-moving kinds and their states (spec section 3).
export { TRANSACTION_KINDS, isTransactionKind, SUBMISSION_KINDS, type TransactionKind, type TransactionIds, type SubmissionKindInfo, type SubmissionRef } from './api/kinds';
export { TRANSACTION_STATES, isFinalState, type KindStates } from './api/states';

// Operation declarations (spec section 4): every operation by its operationId.
export type { HttpMethod, JsonSchema, OperationSpec } from './api/spec';
export { OPERATIONS, API_OPERATIONS, apiOperation, isOperationId, type OperationId, type OperationIdOf, type ApiOperation, type ApiVersion, type RetryClass } from './api/operations';
export { ACTION_TYPES, ACTION_STATUSES } from './api/v1/core-client';
export { POLICY_TYPES } from './api/v2/policy';
export { PORTFOLIO_TYPES, CONNECT_PLUGINS, type ConnectPlugin } from './api/v2/portfolio';

// The types of the v1 requests and answers (spec sections 2 and 4).
export type { Asset, AssetList, FeeRequest, FeeQuote } from './api/v1/assets';
export type { Company, CompanyFields, CompanyUpdated, CompanySearchResult } from './api/v1/company';
export type { CoreClient, CoreClientList, CoreClientWalletList, Action, ActionList, ActionType, ActionStatus, ActionDecision } from './api/v1/core-client';
export type { Fund, Wallet, NewWallet, CustodyGroup, CreateFundResponse, WalletIdList, WalletHistory, Ledger, LedgerEntry, LedgerFilter, DepositList, Whitelist, Holdings } from './api/v1/fund';
export type { LiquidityHubList, LiquidityHubItem } from './api/v1/liquidity-hub';
export type { TransferRequest, TransferCreated, TransferStatus } from './api/v1/transfer';
export type { WithdrawRequest, WithdrawCreated, WithdrawalStatus, Transaction } from './api/v1/withdraw';
export type { SwapMakeRequest, SwapMade, SwapTakeRequest, SwapTaken, SwapTransaction } from './api/v1/swap';
export type { SweepRequest, SweepStarted, SweepTransaction, ExchangeList } from './api/v1/sweep';
export type { TrustedParty, TrustedPartyList } from './api/v1/trusted-party';
export type { OkBody } from './api/wire';

// The types of the v2 requests and answers (spec section 2 "v2 resources").
export type { PolicyDefinition, PolicyMember, PolicyBody, PolicyExpression, PolicyType, WorkspacePolicy, PolicyList, PolicyCreated, PolicyUpdateRequest, WorkspaceAction } from './api/v2/policy';
export type { Portfolio, PortfolioType, PortfolioWallet, PortfolioWithWallets, PortfolioCreated, CreatedWallet } from './api/v2/portfolio';

// The feeds' messages (spec section 6).
export type { CoreClientFeedMessage, HubFeedMessage, WalletFeedMessage } from './api/feeds';

// Preparing a request without sending it.
export { prepareOperation, describeOperation, type OperationDescription } from './request/prepare';
export { prepareSignedRequest, REQUEST_METHODS, type SignedRequest } from './request/signed-request';
export { buildPolicyBody, buildPolicyExpression, memberRule, policyMembers } from './request/policy-body';

// Signing (spec section 5) and the signed clients.
export { sign, verify, signingPayload, loadPrivateKey, loadPublicKey, KeyFormatError, type SigningInput } from './client/signing';
export { BASE_URLS, resolveBaseUrl, checkBaseUrl, type Environment } from './client/environments';
export { CustodyClient, CLOSE_GRACE_MS, type ClientOptions, type SigningMode } from './client/client';
export { failureCauseOf, connectionFailureOf, type FailureCause, type ConnectionFailure } from './client/failure';
export { PemKeySource, KeySourceError, fingerprintOf, signWith, type KeySource, type KeySourceFailure } from './client/key-source';
export { Pkcs11KeySource, MIN_RSA_BITS, type Pkcs11Options } from './client/pkcs11/source';
export { pkcs11Registry, type Pkcs11ModuleState } from './client/pkcs11/token';
export type { ApiResponse, RequestOptions } from './client/transport';
export { WorkspaceClient, type WorkspaceClientOptions, type WorkspaceRequestOptions } from './client/v2/client';
export { V2_BASE_URLS, resolveV2BaseUrl } from './client/v2/environments';

// Sending operations: by declaration, by method and path, or as typed calls.
export { callOperation, submitOperation, checkAssetCodes } from './client/call';
export { signedRequest } from './client/signed-request';
export { callWorkspaceOperation } from './client/v2/call';
export { readTransaction, type TransactionRead } from './client/read-transaction';
export { listAssets, quoteFee, assetScale, decimalAmountsToBaseUnits, restateAmountsInDecimals, feeQuoteInDecimals, FEE_DECIMAL_FIELDS, type FeeQuoteWithDecimals } from './client/v1/assets';
export { createCompany, getCompany, updateCompany, searchCompanies } from './client/v1/company';
export { createCoreClient, listCoreClients, listActions, getAction, getPendingAction, listCoreClientWallets, approveAction, rejectAction } from './client/v1/core-client';
export { createFund, addWallet, getFund, getWallet, getWalletHistory, getDeposits, getLedger, getHoldings, addWhitelist, listWhitelist } from './client/v1/fund';
export { publishQuote, listLiquidityHub, approveSwapTake } from './client/v1/liquidity-hub';
export { readAccount, readBalance, readFunds, readFund, readFundLedger, readTrustedParties, readWalletHistory } from './client/v1/read';
export { makeSwap, getSwapMake, cancelSwap, takeSwap, getSwapTake } from './client/v1/swap';
export { listExchanges, startSweep, getSweep } from './client/v1/sweep';
export { createTransfer, getTransfer } from './client/v1/transfer';
export { addTrustedParty, listTrustedParties, removeTrustedParty } from './client/v1/trusted-party';
export { createWithdraw, getWithdraw } from './client/v1/withdraw';
export { listPolicies, findAdminPolicy, createPolicy, addPolicyMember, getWorkspaceAction, approveWorkspaceAction, rejectWorkspaceAction } from './client/v2/policy';
export { createPortfolio, createPortfolioWallet, getPortfolio, getPortfolioWallet } from './client/v2/portfolio';

// Exactly-once payments: the submission journal, the sending and the look-up after an unknown outcome.
export { SubmissionJournal, openSharedJournal, journalFile, type PaymentJournal, type JournalEntry, type JournalState, type JournalOptions, type JournalLease } from './client/submission/journal';
export { submitRequest, type SubmitOptions, type SubmitResult, type SubmitOutcome } from './client/submission/submit';
export { resolveSubmission, resolveInputFrom, describeResolve, type ResolveInput, type ResolveResult } from './client/submission/resolve';

// The audit log (docs/audit.md): the hash-chained, append-only file of the approver and the review.
export { AuditLog, AuditFileError, verifyAuditFile, verifyAuditChain, verifyAuditFolder, type AuditLogOptions, type AuditHead, type HeadHook, type AuditLine, type AuditVerification, type ChainVerification } from './audit';
