/**
 * The v2 workspace calls' records (spec section 2 "v2 resources"), kept in `SimState.v2`: the
 * workspace's human members and API keys, policies, actions awaiting approval, portfolios and
 * wallets. Times are epoch seconds of the business clock; `addressReadyAtMs` epoch milliseconds.
 */
/** A human member of the workspace: a network user under a member id. */
export interface V2HumanMember {
  /** member id, e.g. `m.alice` */
  id: string;
  /** the network user's id (`GET /_simulator/users`) */
  userID: string;
  username: string;
}

/** How an API key can sign approvals (spec section 4 rules): key pairs, a signing agent, or not at all. */
export type ApiKeyAssociation = 'keyPairs' | 'signingAgent' | 'none';

/** An API key of the workspace. `token` is its `x-token`: a secret. */
export interface V2ApiKey {
  /** member id, e.g. `k.partner` */
  id: string;
  name: string;
  token: string;
  associated: ApiKeyAssociation;
}

/** A policy (spec section 2). */
export interface V2Policy {
  policyID: string;
  name: string;
  policyType: 'admin' | 'transaction';
  systemType: number;
  actionsGoverned: string[];
  expressionContentType: 'application/json';
  expression: V2Expression;
  adminPolicyID: string;
  adminLocked: boolean;
  allowDuplicates: boolean;
  /** epoch seconds */
  created: number;
}

/** The expression tree of spec section 2 (top level type 1, member rules type 2). */
export interface V2Expression {
  type: number;
  operation: number;
  threshold: number;
  rules: Array<{ type: number; operation: number; threshold: number; arguments: { id: string } }>;
}

/** An item awaiting approval: a policy update request, or a transaction of a wallet. */
export interface V2Action {
  actionID: string;
  type: 'policyUpdate' | 'transaction';
  status: 'pending' | 'approved' | 'rejected';
  workspaceID: string;
  /** the policy changed (policyUpdate) or governing the wallet (transaction) */
  policyID: string;
  /** the policy whose members decide, and its threshold, fixed when the action was made */
  governingPolicyID: string;
  governingMembers: string[];
  threshold: number;
  approvers: string[];
  /** who rejected, when rejected */
  rejectedBy: string;
  /** the full body to apply on approval (policyUpdate) */
  proposed?: Omit<V2Policy, 'policyID' | 'systemType' | 'actionsGoverned' | 'created'>;
  /** the wallet (transaction) */
  walletID?: string;
  /** member id or `k.*` of who made it */
  requestedBy: string;
  /** epoch seconds */
  timestamp: number;
}

/** A portfolio (spec section 2, `accountID`, `name`, `type`). */
export interface V2Account {
  accountID: string;
  name: string;
  type: 'standard' | 'exchange';
  created: number;
}

/** A wallet (spec section 2); `address` is shown only from `addressReadyAtMs` on. */
export interface V2Wallet {
  walletID: string;
  accountID: string;
  name: string;
  connectPlugin: 'defi' | 'wc';
  policyID: string;
  address: string;
  /** business-clock epoch milliseconds at which the key computation ends */
  addressReadyAtMs: number;
  created: number;
}

/** Everything of the v2 workspace calls (`SimState.v2`). */
export interface V2State {
  workspaceID: string;
  humans: Record<string, V2HumanMember>;
  apiKeys: Record<string, V2ApiKey>;
  policies: Record<string, V2Policy>;
  actions: Record<string, V2Action>;
  accounts: Record<string, V2Account>;
  wallets: Record<string, V2Wallet>;
}
