/**
 * The simulator's data model and its persistence.
 *
 * Everything lives in one JSON document ({@link SimState}) kept in memory and written to
 * `<dataDir>/state.json` (mode 0600) atomically: write `state.json.tmp`, fsync, rename over
 * `state.json`, fsync the folder. A restart loads it back, so nothing is lost.
 *
 * Group commit ({@link Store}): a mutation calls {@link Store.markDirty}; at most one write is in
 * flight; writes that pile up behind it are merged into the next one. A request's response is
 * sent only after {@link Store.commit} resolves, i.e. after a write that includes every change
 * made before the call has completed. So a benchmark pushing hundreds of requests per second
 * costs a few writes per second, not one per request.
 *
 * Units: amounts are base units (integers), times are Unix epoch seconds of the business clock.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { V2State } from './v2/state';
import type { ApproverRecord } from '../lib/v1/transfer';

export type { ApproverRecord };

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

/** A human user registered in the simulated network (stands in for a signing-app user). */
export interface NetworkUser {
  /** user id, also the `trusted_entity_id` once the user joins a company's trusted network. */
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  username: string;
}

/** A trusted party of a company (spec section 2, "Trusted party"; NOTES: type `user` or `core-client`). */
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

/** Transfer status values (spec section 3, "Transfer tx status values") used by the simulator. */
export type TransferStatus = 'pending_transfer' | 'approved_transfer' | 'custody_rejected_transfer' | 'expired_transfer';

/** Withdrawal status values (spec section 3, "Withdrawal tx status values") used by the simulator. */
export type WithdrawalStatus = 'pending_withdrawal' | 'approved_withdrawal' | 'custody_rejected_withdrawal' | 'expired_withdrawal' | 'chain_rejected_withdrawal';

/**
 * Status values of an atomic swap quote (the maker's transaction). Spec section 3 names only
 * `taker_pending` (a published quote); the others follow the transfer pattern (simulator's choice):
 * `pending_swap` awaits the maker's custodians; `taker_pending` approved, open for a taker;
 * `approved_swap` settled with a taker; `custody_rejected_swap`, `expired_swap`, `cancelled_swap`
 * (DELETE make/{tx_id}).
 */
export type SwapStatus = 'pending_swap' | 'taker_pending' | 'approved_swap' | 'custody_rejected_swap' | 'expired_swap' | 'cancelled_swap';

/**
 * Status values of a swap take (the taker's transfer-out; simulator's choice after the transfer
 * pattern): `pending_swap_take` awaits the taker's custodians and the company approval;
 * `approved_swap_take` settled; `custody_rejected_swap_take` (a custodian or the company rejected);
 * `expired_swap_take` (the quote expired first); `cancelled_swap_take` (the maker cancelled the quote).
 */
export type SwapTakeStatus = 'pending_swap_take' | 'approved_swap_take' | 'custody_rejected_swap_take' | 'expired_swap_take' | 'cancelled_swap_take';

/** Kinds of custody transactions sharing the approval machinery (transactions.ts). */
export type TxKind = 'transfer' | 'withdrawal' | 'swap' | 'take';

/**
 * What every custody transaction has (transfers, withdrawals, swap quotes, swap takes): an origin
 * wallet debited `amount` (= netAmount + fees) on settlement, a hold while pending, custodians
 * from a custody group of the origin wallet snapshotted at creation, one action per custodian.
 */
export interface CustodyTxRecord {
  /** absent in state files written before withdrawals existed: a transfer */
  kind?: TxKind;
  txID: string;
  company_id: string;
  fund_id: string;
  /** origin wallet */
  wallet_id: string;
  partner_txID: string;
  asset: string;
  /** base units the other side receives */
  netAmount: number;
  /** base units, see assets.ts for the rule */
  fees: number;
  /** gross base units taken from the origin wallet = netAmount + fees */
  amount: number;
  /** epoch seconds (business clock) */
  expires: number;
  initiatedTimestamp: number;
  reference: string;
  benefitOf: string;
  accountNo: string;
  thresholdRequired: number;
  /** trusted entity ids of the custody group at creation time */
  custodians: string[];
  /** action ids, one per custodian, same order as `custodians` */
  actionIDs: string[];
  approvals: ApproverRecord[];
  txStatus: string;
  /** epoch seconds when the status left pending, 0 while pending */
  finished: number;
  /** true while amount is reserved on the origin wallet */
  held: boolean;
}

/** A withdrawal to a whitelisted L1 address (spec sections 2, 3, 4 "Withdrawals"). */
export interface WithdrawalRecord extends CustodyTxRecord {
  kind: 'withdrawal';
  /** the whitelisted L1 address */
  address: string;
  /** the whitelist entry's name */
  addressName: string;
  /** chain transaction id once approved, '' before */
  chainTxID: string;
  txStatus: WithdrawalStatus;
}

/** An atomic swap quote made by a company (spec section 4 "Atomic swaps and liquidity hub"). */
export interface SwapRecord extends CustodyTxRecord {
  kind: 'swap';
  /** maker's wallet that receives `receive` */
  receive_wallet_id: string;
  receive_asset: string;
  /** base units the maker receives (net) */
  receive_amount: number;
  add_to_liquidity_hub: boolean;
  /** epoch seconds when published to the liquidity hub, 0 when not published */
  hubAdded: number;
  /** tx id of the take that is pending or settled, '' when none */
  takeID: string;
  txStatus: SwapStatus;
}

/** The taker's side of an atomic swap: a transfer-out that needs custody and the company's approval. */
export interface SwapTakeRecord extends CustodyTxRecord {
  kind: 'take';
  /** tx id of the quote taken */
  swap_id: string;
  /** taker's wallet that receives the maker's `send` */
  receive_wallet_id: string;
  /** the company-level action approved with PUT /company/{company_id}/action/{action_id} */
  companyActionID: string;
  txStatus: SwapTakeStatus;
}

/** An exchange that end users connect wallets to (spec section 2 "Exchange"; GET /exchanges). */
export interface ExchangeRecord {
  id: string;
  name: string;
  url: string;
  logourl: string;
  /** the exchange core client: receives wallet connection requests and runs sweeps */
  client_id: string;
  /** metadata the end user supplies to connect */
  fields: { id: string; type: string; name: string }[];
}

/** An end user's request to connect a wallet to an exchange (an `ApproveNewWalletConnect` action). */
export interface WalletConnectionRecord {
  /** id of the request (the action's `txID`) */
  id: string;
  client_id: string;
  wallet_id: string;
  clientData: { customer_email: string; customer_id: string };
  action_id: string;
  /** pending until the exchange core client approves (connected, wallet Active) or rejects */
  status: 'pending' | 'approved' | 'rejected';
  /** epoch seconds */
  created: number;
}

/** A sweep run by an exchange core client (spec section 4 "Exchanges and sweeps"). */
export interface SweepRecord {
  tx_id: string;
  client_id: string;
  partner_txID: string;
  wallet_id: string;
  recipient_wallet_id: string;
  asset: string;
  /** base units received (send.amount) */
  net_amount: number;
  fees: number;
  /** gross base units debited = net_amount + fees */
  amount: number;
  reference: string;
  /** epoch seconds */
  expires: number;
  initiated_timestamp: number;
  /** epoch seconds of the settlement */
  settled: number;
  action_id: string;
  chain_tx_id: string;
  tx_status: string;
}

/** A whitelisted external address of a fund (spec section 4, OpenAPI FundWhitelist). */
export interface WhitelistRecord {
  name: string;
  asset: string;
  address: string;
  /** epoch seconds */
  created: number;
}

/** A transfer (spec sections 2 and 3). */
export interface TransferRecord extends CustodyTxRecord {
  kind?: 'transfer';
  recipient_wallet_id: string;
  recipient_fund_id: string;
  recipient_company_id: string;
  txStatus: TransferStatus;
}

/** Action status values (spec section 2, "Action"). */
export type ActionStatus = 'pending' | 'expired' | 'approved' | 'rejected';

/** Action types of spec section 2 used by the simulator (NOTES: ApproveNewWalletConnect). */
export type ActionType = 'ApproveTransfer' | 'ApproveWithdraw' | 'ApproveSwap' | 'ApproveSwapTake' | 'ApproveNewWalletConnect';

/** A custodian's approval item: one per custodian per transaction (spec section 2, "Action"). */
export interface ActionRecord {
  id: string;
  type: ActionType;
  status: ActionStatus;
  /** epoch seconds */
  timestamp: number;
  /** epoch seconds (the transaction's `expires`; 0 for a wallet connection request, which never expires) */
  expireTime: number;
  /** the transaction (or wallet connection request) the action decides */
  txID: string;
  /** trusted entity id of the custodian (core client id or user id); the company id for a company-level action */
  custodianID: string;
  custodianType: 'core-client' | 'user' | 'company';
}

/**
 * A ledger entry (spec section 2, "Ledger entry") plus the wallet it belongs to (not sent). A
 * custody transaction's debit entry is written pending at creation and updated in place later
 * (custody.ts); every other entry is written once, when its money moves.
 */
export interface LedgerRecord {
  wallet_id: string;
  entry: LedgerEntry;
}

/**
 * A ledger entry exactly as sent under `List` (spec section 2; capitalised `TxID`). Amounts are
 * base units of `asset`; times epoch seconds of the business clock. For deposits `TxID`,
 * `status` and the counterparty fields are '' and `fees` 0 (spec).
 */
export interface LedgerEntry {
  /** the custody transaction's or sweep's tx id; '' for a deposit */
  TxID: string;
  /** '' until the transaction settles */
  chainTxID: string;
  fundID: string;
  /** when written: a custody transaction's creation time (kept when it settles), a deposit's, credit entry's or sweep's settlement time */
  timestamp: number;
  /** the transaction's `expires`; 0 for a deposit */
  expireTime: number;
  /**
   * `pending` (a custody transaction not settled yet: pending custody, or a swap quote open for
   * a taker), `approved` (settled: the money moved), `rejected` (custody or initiator
   * rejection), `expired`, `cancelled` (a swap quote or take cancelled), `chain_rejected` (a
   * withdrawal refunded after the chain refused it); '' for a deposit. Only deposits and
   * `approved` entries moved a balance (network.ts `ledgerMovedBalance`).
   */
  status: string;
  /** OpenAPI TxHistoryItem type values; `withdraw` for withdrawals, `swapOut`/`swapIn` for swap legs */
  type: 'deposit' | 'transferIn' | 'transferOut' | 'withdraw' | 'swapIn' | 'swapOut';
  asset: string;
  /** gross: netAmount + fees for a debit entry, netAmount for a credit entry or deposit */
  amount: number;
  /** paid by this wallet (0 for credit entries and deposits) */
  fees: number;
  netAmount: number;
  counterpartyID: string;
  counterpartyName: string;
  address: string;
  reference: string;
  benefitOf: string;
  accountNo: string;
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
  /** nonce high-water mark per API key (decimal string, compared as BigInt) */
  nonceMarks: Record<string, string>;
  /** business clock = real time + this offset (seconds) */
  clockOffsetSeconds: number;
  users: Record<string, NetworkUser>;
  companies: Record<string, CompanyRecord>;
  coreClients: Record<string, CoreClientRecord>;
  custodyGroups: Record<string, CustodyGroupRecord>;
  funds: Record<string, FundRecord>;
  wallets: Record<string, WalletRecord>;
  transfers: Record<string, TransferRecord>;
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
  /** withdrawals by tx id (this and the collections below are absent in older state files: see {@link upgradeState}) */
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
 * Bring a version 1 state document written by an older simulator up to date: collections added
 * since (withdrawals, swaps, swap takes, whitelists) default to empty; the partner_txID index is
 * re-keyed per kind of transaction. The version stays 1. The ledger needs nothing: older files
 * have no pending entries (a transaction then pending gets its entry when it settles, as
 * before; custody.ts `ledgerFor`), and the index of debit entries is rebuilt from the ledger on
 * every start (engine.ts `debitEntries`).
 */
export function upgradeState(s: SimState): SimState {
  s.withdrawals ??= {};
  s.swaps ??= {};
  s.swapTakes ??= {};
  s.whitelists ??= {};
  s.exchanges ??= {};
  s.connections ??= {};
  s.sweeps ??= {};
  // The partner_txID index was keyed `company_id\npartner_txID` for every kind at once; it is now
  // keyed per kind (custody.ts idemKey). Re-key every entry from the transaction it names (sweeps,
  // `coreclient:` keys, are not custody records and stay as they are).
  const index: Record<string, string> = {};
  for (const [key, txId] of Object.entries(s.partnerTxIndex ?? {})) {
    const tx: CustodyTxRecord | undefined = s.transfers?.[txId] ?? s.withdrawals[txId] ?? s.swaps[txId] ?? s.swapTakes[txId];
    index[tx?.partner_txID ? `${tx.kind ?? 'transfer'}\n${tx.company_id}\n${tx.partner_txID}` : key] = txId;
  }
  s.partnerTxIndex = index;
  return s;
}

interface Waiter {
  gen: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Owns the state document and its file. See the module comment for the group commit.
 */
export class Store {
  /** Path of the state file. */
  readonly file: string;
  private gen = 0;
  private flushedGen = 0;
  private writing = false;
  private scheduled = false;
  private waiters: Waiter[] = [];

  /**
   * @param persist false keeps the state in memory only: commits resolve without writing
   *   (`SimulatorOptions.persist`).
   */
  constructor(
    readonly state: SimState,
    dataDir: string,
    private readonly persist = true,
  ) {
    this.file = path.join(dataDir, 'state.json');
  }

  /**
   * Load the state file of a data folder.
   * @returns the state, or null when there is no file yet.
   * @throws {Error} when the file exists but is not a state document of version 1.
   */
  static async load(dataDir: string): Promise<SimState | null> {
    let text: string;
    try {
      text = await fsp.readFile(path.join(dataDir, 'state.json'), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    const parsed = JSON.parse(text) as SimState;
    if (!parsed || parsed.version !== 1) throw new Error(`simulator: ${path.join(dataDir, 'state.json')} is not a version 1 state file`);
    return upgradeState(parsed);
  }

  /** Record that the state changed; a write is scheduled (on the next turn of the event loop). */
  markDirty(): void {
    this.gen++;
    this.schedule();
  }

  /** True when every change has been written. */
  get clean(): boolean {
    return this.flushedGen >= this.gen;
  }

  /**
   * Resolve once a write that includes every change made so far has completed.
   * Resolves at once when nothing is dirty.
   * @throws the file system error of the write that failed (the change stays dirty and is retried
   *   by the next write).
   */
  commit(): Promise<void> {
    if (this.flushedGen >= this.gen) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ gen: this.gen, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    // setImmediate: the mutating handler finishes first, and concurrent requests batch up.
    setImmediate(() => {
      this.scheduled = false;
      void this.writeLoop();
    });
  }

  private async writeLoop(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.flushedGen < this.gen) {
        const target = this.gen;
        try {
          await this.writeFile(this.persist ? JSON.stringify(this.state) : '');
          this.flushedGen = target;
          this.settle((w) => w.gen <= target, null);
        } catch (err) {
          this.settle((w) => w.gen <= target, err);
          break;
        }
      }
    } finally {
      this.writing = false;
    }
    if (this.flushedGen < this.gen && this.waiters.length > 0) this.schedule();
  }

  private settle(match: (w: Waiter) => boolean, err: unknown): void {
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (!match(w)) keep.push(w);
      else if (err) w.reject(err);
      else w.resolve();
    }
    this.waiters = keep;
  }

  private async writeFile(text: string): Promise<void> {
    if (!this.persist) return;
    const tmp = this.file + '.tmp';
    const fh = await fsp.open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, this.file);
    try {
      const dir = await fsp.open(path.dirname(this.file), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch {
      // fsync of a directory is not supported everywhere (e.g. Windows); the rename is still atomic.
    }
  }

  /** Write everything still dirty and wait for it (used by stop()). */
  async flush(): Promise<void> {
    while (!this.clean) await this.commit();
    while (this.writing || this.scheduled) await new Promise((r) => setImmediate(r));
  }
}
