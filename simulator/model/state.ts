/**
 * The simulator's state document: everything it keeps, in one JSON document held in memory and
 * persisted by the store (simulator/store.ts). The records themselves are declared per concern beside
 * this file. Amounts are base units (integers), times Unix epoch seconds of the business clock.
 */
import type { ActionRecord, CustodyKind, SwapRecord, SwapTakeRecord, TransferRecord, WithdrawalRecord } from './custody';
import type { ExchangeRecord, SweepRecord, WalletConnectionRecord } from './exchanges';
import type { LedgerRecord } from './ledger';
import type { CompanyRecord, CoreClientRecord, CustodyGroupRecord, FundRecord, NetworkUser, WalletRecord, WhitelistRecord } from './network';
import type { V2State } from './v2';

/** Ids of one demo wallet. `short_code` works wherever `wallet_id` does. */
export interface DemoWallet {
  wallet_id: string;
  short_code: string;
  address: string;
}

/**
 * Ids of the demo dataset created on first start (see demo.ts); served by `GET /_simulator/demo`.
 * The counterparty fund belongs to the same company (`company_id`).
 */
export interface DemoDataset {
  company_id: string;
  fund_id: string;
  core_client_id: string;
  wallets: { 'BTC-TESTNET': DemoWallet; 'ETH-TESTNET': DemoWallet };
  counterparty: {
    fund_id: string;
    /** trusted_entity_id (user id) of the human custodian of the counterparty fund (alice) */
    custodian_user_id: string;
    wallets: { 'BTC-TESTNET': DemoWallet; 'ETH-TESTNET': DemoWallet };
  };
  /**
   * A fund whose custodian is a second core client that no example approves automatically,
   * so its actions stay pending until approved or rejected by hand.
   */
  manual: {
    core_client_id: string;
    fund_id: string;
    wallets: { 'BTC-TESTNET': DemoWallet };
  };
  /** whitelisted withdrawal addresses of the demo fund, per asset */
  whitelist: { 'BTC-TESTNET': string; 'ETH-TESTNET': string };
  /** a second company of the same account that takes the demo company's swap quotes */
  taker: {
    company_id: string;
    core_client_id: string;
    fund_id: string;
    wallets: { 'BTC-TESTNET': DemoWallet; 'ETH-TESTNET': DemoWallet };
  };
  /** a simulated exchange, its exchange core client, and a dedicated wallet of the demo company that can be connected to it and swept */
  exchange: {
    exchange_id: string;
    client_id: string;
    fund_id: string;
    wallets: { 'BTC-TESTNET': DemoWallet };
  };
}

/** A public key registered through the control endpoint, with the API key it was given (partners.ts). */
export interface RegisteredPartnerKey {
  /** the registered RSA public key, SPKI PEM (a PKCS#1 `RSA PUBLIC KEY` is stored converted) */
  publicKeyPem: string;
  /** SHA-256 (hex) of the public key's DER (SPKI): how the control endpoint names it */
  fingerprint: string;
  /** when it was registered, epoch seconds of the business clock */
  registered: number;
}

/** The whole persisted state. */
export interface SimState {
  version: 1;
  /** the partner account's API key (base64 text) */
  apiKey: string;
  /** the registered public key (SPKI PEM) */
  publicKeyPem: string;
  /**
   * The account's second API key, with the read-only permission (spec section 4 "Read-only
   * subset"; auth.ts): base64 text, signs with the same key pair. Provisioned at start when
   * missing (state files written before it existed lack it).
   */
  readOnlyApiKey?: string;
  /**
   * Further API keys of the account, each with its own registered public key, by API key:
   * registered through the control endpoint `POST /_simulator/partners` (partners.ts), as a
   * partner registers a public key with the service and gets an API key for it. Absent
   * until the first registration.
   */
  partnerKeys?: Record<string, RegisteredPartnerKey>;
  /** nonce high-water mark per API key (decimal string, compared as BigInt) */
  nonceMarks: Record<string, string>;
  /** business clock = real time + this offset (seconds) */
  clockOffsetSeconds: number;
  /** network users by user id */
  users: Record<string, NetworkUser>;
  /** companies by company id */
  companies: Record<string, CompanyRecord>;
  /** core clients by id */
  coreClients: Record<string, CoreClientRecord>;
  /** custody groups by id (a fund's and its wallets' `custodygroup_tx`, `custodygroup_withdraw`) */
  custodyGroups: Record<string, CustodyGroupRecord>;
  /** funds by fund id */
  funds: Record<string, FundRecord>;
  /** wallets by wallet id (short codes are found through the engine's index) */
  wallets: Record<string, WalletRecord>;
  /** transfers by tx id */
  transfers: Record<string, TransferRecord>;
  /** custodians' actions by action id, in creation order */
  actions: Record<string, ActionRecord>;
  /** ledger entries per fund id, in the order written (oldest first); see {@link LedgerRecord} */
  ledger: Record<string, LedgerRecord[]>;
  /**
   * `kind + "\n" + company_id + "\n" + partner_txID` -> tx id of the first transaction with it
   * (idempotency is per company and kind of transaction); sweeps `"coreclient:" + client_id +
   * "\n" + partner_txID`. Written whatever `SimulatorOptions.dedupe` says; consulted per it.
   */
  partnerTxIndex: Record<string, string>;
  demo: DemoDataset | null;
  /** withdrawals by tx id (this and the collections below are absent in older state files: see upgrade.ts) */
  withdrawals: Record<string, WithdrawalRecord>;
  /** swap quotes (maker side) by tx id */
  swaps: Record<string, SwapRecord>;
  /** swap takes (taker side) by tx id */
  swapTakes: Record<string, SwapTakeRecord>;
  /** whitelisted addresses per fund id */
  whitelists: Record<string, WhitelistRecord[]>;
  /** exchanges by id */
  exchanges: Record<string, ExchangeRecord>;
  /** wallet connection requests by id */
  connections: Record<string, WalletConnectionRecord>;
  /** sweeps by tx id */
  sweeps: Record<string, SweepRecord>;
  /** the v2 workspace calls' state (simulator/v2/state.ts); provisioned when absent */
  v2?: V2State;
}

/** A fresh empty state for a new account. */
export function emptyState(apiKey: string, publicKeyPem: string): SimState {
  return {
    version: 1,
    apiKey,
    publicKeyPem,
    nonceMarks: {},
    clockOffsetSeconds: 0,
    users: {},
    companies: {},
    coreClients: {},
    custodyGroups: {},
    funds: {},
    wallets: {},
    transfers: {},
    actions: {},
    ledger: {},
    partnerTxIndex: {},
    demo: null,
    withdrawals: {},
    swaps: {},
    swapTakes: {},
    whitelists: {},
    exchanges: {},
    connections: {},
    sweeps: {},
  };
}


/**
 * Key of `SimState.partnerTxIndex` for a custody transaction: idempotency is per company and per
 * kind of call (spec section 3), so a withdrawal with the partner_txID of an earlier transfer is
 * a new withdrawal, not that transfer.
 */
export function partnerKey(kind: CustodyKind, companyId: string, partnerTxID: string): string {
  return `${kind}\n${companyId}\n${partnerTxID}`;
}

/** Key of `SimState.partnerTxIndex` for a sweep: idempotency is per exchange core client. */
export function sweepPartnerKey(clientId: string, partnerTxID: string): string {
  return `coreclient:${clientId}\n${partnerTxID}`;
}
