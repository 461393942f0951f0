/**
 * The simulator's data model and its persistence.
 *
 * Everything lives in one JSON document ({@link SimState}) kept in memory. Persistence (issue 11,
 * "Simulator persistence whose cost per change is constant"; details in journal.ts):
 * - the {@link Store} hands the document out wrapped in a tracking proxy that records which
 *   units (a transfer, a wallet, one ledger entry...) changed;
 * - group commit: a mutation marks the store dirty; at most one journal write is in flight;
 *   changes that pile up behind it go into the next one. Each write appends one line holding
 *   the current JSON of every changed unit to `<dataDir>/journal.jsonl` (mode 0600) and
 *   fdatasyncs it. A request's response is sent only after {@link Store.commit} resolves, i.e.
 *   after the line holding its change is on disk;
 * - snapshot `<dataDir>/state.json` (mode 0600), written atomically (tmp, fsync, rename, fsync
 *   the folder) with the `journalSeq` it includes: on first start, when the journal grows past
 *   max(4 MB, a quarter of the snapshot) (compaction: a restart parses at most 1.25 times the
 *   snapshot; the journal is then rewritten to the lines after
 *   the snapshot), and on {@link Store.close} (stop), which leaves an empty journal;
 * - a restart reads the snapshot and replays the journal lines after its `journalSeq`; a torn
 *   last line (never acknowledged) is dropped. state.json files of older simulators (no
 *   `journalSeq`, no journal) load as before, through {@link upgradeState}.
 *
 * Units: amounts are base units (integers), times are Unix epoch seconds of the business clock.
 */
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { ChangeTracker, JOURNAL_FILE, SNAPSHOT_FILE, jsonDifferences, readDataFolder } from './journal';
import { syncDir, writeAtomic } from '../lib/support/durable/atomic';
import type { V2State } from './v2/state';
import type { ApproverRecord, TransferStatus } from '../lib/api/v1/transfer';
import type { WithdrawalStatus } from '../lib/api/v1/withdraw';
import type { SwapStatus, SwapTakeStatus } from '../lib/api/v1/swap';

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

/**
 * The status values a simulated transaction carries in `txStatus`: lib's (spec section 3 for
 * transfers and withdrawals; lib/v1/swap.ts for swaps and takes), declared once there.
 */
export type { TransferStatus, WithdrawalStatus, SwapStatus, SwapTakeStatus };

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
 * every start (engine.ts `debitPositions`).
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
  // Files written since are already keyed per kind: leave them as they are (a start with
  // 100,000 transactions would otherwise spend most of a second re-keying; issue 11).
  const current = /^(?:transfer|withdrawal|swap|take)\n|^coreclient:/;
  if (s.partnerTxIndex && Object.keys(s.partnerTxIndex).every((k) => current.test(k))) return s;
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

/** What {@link Store.load} learnt about a data folder, for the Store made on its state. */
interface LoadedMeta {
  lastSeq: number;
  journalBytes: number;
  snapshotBytes: number;
}

/** Documents returned by {@link Store.load}, with where their folder's journal stands. */
const loadedMeta = new WeakMap<object, LoadedMeta>();

/**
 * Environment variable: the journal size in bytes from which a compaction is considered
 * (default {@link DEFAULT_COMPACT_BYTES}); for tests and benchmarks that want compactions early.
 */
export const COMPACT_BYTES_ENV = 'CUSTODYFLOW_SIM_JOURNAL_COMPACT_BYTES';

/** Default smallest journal (bytes) that triggers a compaction: 4 MB. */
export const DEFAULT_COMPACT_BYTES = 4 * 1024 * 1024;

/** The snapshot text of `raw` carrying `journalSeq` (the last journal line it includes). */
function snapshotText(raw: SimState, journalSeq: number): string {
  const t = JSON.stringify(raw);
  return t.slice(0, -1) + (t.length > 2 ? ',' : '') + `"journalSeq":${journalSeq}}`;
}

/**
 * Owns the state document, its journal and its snapshot. See the module comment for the group
 * commit, the journal and the compaction.
 */
export class Store {
  /** Path of the snapshot file (`<dataDir>/state.json`). */
  readonly file: string;
  /** Path of the journal file (`<dataDir>/journal.jsonl`). */
  readonly journalFile: string;
  /**
   * The state document the domain code reads and writes: with persistence, a tracking proxy of
   * {@link raw} (every write through it is journaled); without, the document itself.
   */
  readonly state: SimState;
  /** The plain document behind {@link state} (serialised for snapshots; never write through it). */
  readonly raw: SimState;
  /** Journal size (bytes) from which a compaction is considered ({@link COMPACT_BYTES_ENV}). */
  readonly compactBytes: number;
  private readonly tracker: ChangeTracker<SimState> | null;
  private gen = 0;
  private flushedGen = 0;
  private writing = false;
  private scheduled = false;
  private waiters: Waiter[] = [];
  /** seq of the last journal line written (or included in the snapshot) */
  private seq = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  /** the next write is a full snapshot (a new document, or recovery after a failed append) */
  private needSnapshot = false;
  /** a new document: the old journal, if any, is removed before its first snapshot */
  private fresh = false;
  private fh: FileHandle | null = null;
  /** a compaction whose snapshot is being written; `tail` holds the lines written after it */
  private compaction: { seq: number; tail: string[]; done: boolean; written: Promise<void> } | null = null;
  /** counts of what the store wrote (for benchmarks and tests): journal lines, snapshots */
  readonly stats = { lines: 0, snapshots: 0, compactions: 0 };

  /**
   * @param state the document: one returned by {@link Store.load}, or a new one (then the first
   *   write is a full snapshot, and any journal left in the folder is removed first).
   * @param persist false keeps the state in memory only: commits resolve without writing
   *   (`SimulatorOptions.persist`).
   */
  constructor(
    state: SimState,
    dataDir: string,
    private readonly persist = true,
  ) {
    this.file = path.join(dataDir, SNAPSHOT_FILE);
    this.journalFile = path.join(dataDir, JOURNAL_FILE);
    this.raw = state;
    const env = Number(process.env[COMPACT_BYTES_ENV]);
    this.compactBytes = Number.isFinite(env) && env > 0 ? env : DEFAULT_COMPACT_BYTES;
    if (!persist) {
      this.tracker = null;
      this.state = state;
      return;
    }
    this.tracker = new ChangeTracker(state, () => this.markDirty());
    this.state = this.tracker.proxy;
    const meta = loadedMeta.get(state);
    if (meta) {
      this.seq = meta.lastSeq;
      this.journalBytes = meta.journalBytes;
      this.snapshotBytes = meta.snapshotBytes;
    } else {
      this.fresh = true;
      this.needSnapshot = true;
      this.markDirty();
    }
  }

  /**
   * Load a data folder: the snapshot `state.json`, then the journal lines after its
   * `journalSeq`; a torn last journal line is cut off the file. Leftover `.tmp` files of an
   * interrupted write are removed.
   * @returns the state (upgraded, {@link upgradeState}), or null when there is no snapshot yet.
   * @throws {Error} when the snapshot is not a state document of version 1, or the journal is
   *   corrupt before its last line.
   */
  static async load(dataDir: string): Promise<SimState | null> {
    const r = await readDataFolder(dataDir, (s) => void upgradeState(s as unknown as SimState));
    if (!r.state) return null;
    const journal = path.join(dataDir, JOURNAL_FILE);
    if (r.journalBytes > r.journalGoodBytes) {
      const fh = await fsp.open(journal, 'r+');
      try {
        await fh.truncate(r.journalGoodBytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
    await fsp.rm(path.join(dataDir, SNAPSHOT_FILE + '.tmp'), { force: true });
    await fsp.rm(journal + '.tmp', { force: true });
    const state = r.state as unknown as SimState;
    loadedMeta.set(state, { lastSeq: r.lastSeq, journalBytes: r.journalGoodBytes, snapshotBytes: r.snapshotBytes });
    return state;
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
   * Resolve once a write that includes every change made so far has completed (its journal
   * line fdatasync'ed). Resolves at once when nothing is dirty.
   * @throws the file system error of the write that failed (the change stays dirty and is
   *   written by the next write, as part of a full snapshot).
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
      while (this.flushedGen < this.gen || this.compaction?.done) {
        if (this.compaction?.done) {
          await this.finishCompaction();
          continue;
        }
        const target = this.gen;
        try {
          if (this.persist) {
            if (this.needSnapshot) await this.fullSnapshot();
            else await this.appendLine();
          }
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
    if ((this.flushedGen < this.gen && this.waiters.length > 0) || this.compaction?.done) this.schedule();
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

  private async journal(): Promise<FileHandle> {
    if (!this.fh) {
      this.fh = await fsp.open(this.journalFile, 'a', 0o600);
      // The file may be new: make its folder entry durable before the first line counts.
      await syncDir(path.dirname(this.journalFile));
    }
    return this.fh;
  }

  private async closeJournal(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (fh) await fh.close().catch(() => undefined);
  }

  /** Append one line with every change recorded so far and fdatasync it; start a compaction when due. */
  private async appendLine(): Promise<void> {
    const tracker = this.tracker!;
    if (!tracker.hasChanges) return;
    const seq = this.seq + 1;
    const line = `{"seq":${seq},"ops":${tracker.take()}}\n`;
    // A compaction's snapshot is the state exactly after this line (taken in the same turn).
    const due = !this.compaction && this.journalBytes > Math.max(this.compactBytes, this.snapshotBytes / 4);
    const snap = due ? snapshotText(this.raw, seq) : undefined;
    try {
      const fh = await this.journal();
      await fh.writeFile(line, 'utf8');
      await fh.datasync();
    } catch (err) {
      // The line may be partly written: the changes it held go into a full snapshot instead.
      this.needSnapshot = true;
      await this.closeJournal();
      throw err;
    }
    this.seq = seq;
    this.journalBytes += Buffer.byteLength(line);
    this.stats.lines++;
    if (this.compaction) this.compaction.tail.push(line);
    if (snap !== undefined) this.startCompaction(seq, snap);
  }

  /**
   * Write the snapshot in the background while lines keep being appended (they are kept in
   * `tail`); {@link finishCompaction} then rewrites the journal to those lines.
   */
  private startCompaction(seq: number, text: string): void {
    const c = { seq, tail: [] as string[], done: false, written: Promise.resolve() };
    c.written = writeAtomic(this.file, text).then(
      () => {
        this.snapshotBytes = Buffer.byteLength(text);
        this.stats.snapshots++;
        c.done = true;
        if (!this.writing) this.schedule();
      },
      () => {
        // The old snapshot and the whole journal stay: still correct; retried when due again.
        if (this.compaction === c) this.compaction = null;
      },
    );
    this.compaction = c;
  }

  /**
   * After a compaction's snapshot is renamed into place: replace the journal by the lines
   * written after it (tmp, fsync, rename, fsync the folder). Runs inside the write loop, so no
   * append is in flight. A crash at any point loads correctly: lines up to the snapshot's
   * `journalSeq` are skipped.
   */
  private async finishCompaction(): Promise<void> {
    const c = this.compaction!;
    this.compaction = null;
    try {
      const tail = c.tail.join('');
      await this.closeJournal();
      await writeAtomic(this.journalFile, tail);
      this.journalBytes = Buffer.byteLength(tail);
      this.stats.compactions++;
    } catch {
      // The journal keeps every line: still correct; the next compaction tries again.
      await this.closeJournal();
    }
  }

  /**
   * Write the whole document as the snapshot, then remove the journal (a new document: remove
   * the journal first, so lines of an older document never apply to it).
   */
  private async fullSnapshot(): Promise<void> {
    if (this.compaction) {
      await this.compaction.written;
      this.compaction = null;
    }
    this.tracker?.take();
    const text = snapshotText(this.raw, this.seq);
    await this.closeJournal();
    if (this.fresh) {
      await fsp.rm(this.journalFile, { force: true });
      await syncDir(path.dirname(this.journalFile));
    }
    await writeAtomic(this.file, text);
    if (!this.fresh) {
      await fsp.rm(this.journalFile, { force: true });
      await syncDir(path.dirname(this.journalFile));
    }
    this.fresh = false;
    this.needSnapshot = false;
    this.snapshotBytes = Buffer.byteLength(text);
    this.journalBytes = 0;
    this.stats.snapshots++;
  }

  /** Write everything still dirty and wait for it, and for a compaction under way (used by start and stop). */
  async flush(): Promise<void> {
    for (;;) {
      if (!this.clean) await this.commit();
      else if (this.compaction && !this.compaction.done) await this.compaction.written;
      else if (this.writing || this.scheduled || this.compaction) await new Promise((r) => setImmediate(r));
      else return;
    }
  }

  /**
   * Flush, then write a full snapshot and remove the journal, so `state.json` alone holds the
   * state (used by `Simulator.stop()`). Costs a full serialisation (seconds for a 200 MB state).
   * No-op without persistence.
   */
  async close(): Promise<void> {
    await this.flush();
    if (!this.persist) return;
    this.writing = true;
    try {
      if (this.journalBytes > 0 || this.needSnapshot || this.tracker!.hasChanges) {
        const target = this.gen;
        this.needSnapshot = true;
        await this.fullSnapshot();
        this.flushedGen = target;
      }
    } finally {
      this.writing = false;
      await this.closeJournal();
    }
  }

  /**
   * The journal check ({@link JOURNAL_CHECK_ENV} in journal.ts): read the data folder afresh
   * (snapshot + journal) and compare it with the document in memory, key order ignored. Call
   * after {@link flush}.
   * @returns the differences (`path: in memory ..., reloaded ...`), empty when they agree or
   *   without persistence.
   */
  async verify(): Promise<string[]> {
    if (!this.persist) return [];
    const r = await readDataFolder(path.dirname(this.file), (s) => void upgradeState(s as unknown as SimState));
    const memory = JSON.parse(JSON.stringify(this.raw)) as unknown;
    return jsonDifferences(memory, r.state);
  }
}
