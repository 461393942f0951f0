/**
 * The records of the simulated network (spec section 2 "Company", "Trusted party", "Core
 * client", "Fund", "Wallet"; OpenAPI Fund, FundWalletInfo, FundWhitelist): what the state
 * document keeps per user, company, core client, custody group, fund, wallet and whitelisted
 * address. Amounts are base units (integers), times Unix epoch seconds of the business clock.
 */
/** A human user registered in the simulated network (stands in for a signing-app user). */
export interface NetworkUser {
  /** user id, also the `trusted_entity_id` once the user joins a company's trusted network. */
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  username: string;
}

/** A trusted party of a company (spec section 2, "Trusted party"): type `user` or `core-client`. */
export interface TrustedPartyRecord {
  trusted_entity_id: string;
  name: string;
  type: 'user' | 'core-client';
  /** e-mail for a user, the core client id for a core client. */
  address: string;
  internal: boolean;
  /** epoch seconds */
  created: number;
}

/** An invitation of a human user that waits for acceptance (control endpoint `trustedparty/accept`). */
export interface InvitationRecord {
  address: string;
  name: string;
  /** epoch seconds */
  created: number;
}

/** A company (spec section 2, "Company") with its trusted network. */
export interface CompanyRecord {
  company_id: string;
  name: string;
  city: string;
  country: string;
  domain: string;
  ref: string;
  /** epoch seconds */
  created: number;
  /** accepted trusted parties by trusted_entity_id */
  trusted: Record<string, TrustedPartyRecord>;
  /** pending invitations by lower-case e-mail */
  invitations: Record<string, InvitationRecord>;
  /**
   * The API account that owns the company. Absent: the simulator's partner account (the one API
   * key). Any other value is a foreign account (control endpoint `POST /_simulator/foreign/quote`):
   * the partner's key gets 403 on it, and cannot take its quotes (spec section 8).
   */
  account?: string;
}

/** A core client (spec section 2, "Core client"). The feed URL is built per request from the Host header. */
export interface CoreClientRecord {
  id: string;
  name: string;
  /** epoch seconds */
  timestamp: number;
  /** the API account that created it; absent = the partner account (see CompanyRecord.account) */
  account?: string;
}

/** A custody group `{threshold, members}` (OpenAPI NewCustodyGroup) with its id. Members are trusted entity ids. */
export interface CustodyGroupRecord {
  id: string;
  name: string;
  threshold: number;
  members: string[];
}

/** A fund (OpenAPI Fund / FundDetail). */
export interface FundRecord {
  fund_id: string;
  company_id: string;
  name: string;
  description: string;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  /** epoch seconds */
  created: number;
}

/** A wallet of a fund (OpenAPI FundWalletInfo). */
export interface WalletRecord {
  wallet_id: string;
  fund_id: string;
  company_id: string;
  name: string;
  asset: string;
  /** OpenAPI WalletType: 0 standard, 1 dedicated, 2 multi-counterparty */
  type: number;
  address: string;
  address_type: string;
  short_code: string;
  /** booked balance, base units */
  balance: number;
  /** base units reserved by pending outgoing transfers (amount + fees); available = balance - held */
  held: number;
  custodygroup_withdraw: string;
  custodygroup_tx: string;
  /** epoch seconds */
  created: number;
}


/** A whitelisted external address of a fund (spec section 4, OpenAPI FundWhitelist). */
export interface WhitelistRecord {
  name: string;
  asset: string;
  address: string;
  /** epoch seconds */
  created: number;
}

