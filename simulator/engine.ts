/**
 * The simulator's in-memory core: the state document, the business clock, the look-up indexes
 * and the event bus the websocket feeds listen to. Business rules live in network/ (companies,
 * trusted parties, core clients, funds, wallets, deposits, ledger), custody.ts, transactions.ts,
 * withdrawals.ts, swaps.ts and exchanges.ts; they all work on an {@link Engine}.
 *
 * Indexes (indexes.ts): every read path of the API, the feeds and the expiry timer finds its
 * records through an index instead of walking a whole collection or a whole fund ledger. They
 * are kept in one place: the constructor derives them from the state document (a restart), and
 * the engine's write methods below store a record or change what an index keys on and update
 * every index in the same call ({@link putWallet}, {@link putFund}, {@link putExchange},
 * {@link putConnection}, {@link putAction}, {@link setActionStatus}, {@link putTx},
 * {@link setTxStatus}, {@link publishQuote}, {@link appendLedger}, {@link putSweep}). The
 * domain code never writes those collections, nor an index, itself. Records are always read, and
 * written, through {@link Engine.state} (the persistence may hand the engine a change-tracking
 * view of the document).
 */
import { EventEmitter } from 'node:events';
import type {
  ActionRecord,
  ActionStatus,
  CustodyKind,
  CustodyTxRecord,
  ExchangeRecord,
  FundRecord,
  LedgerEntry,
  SimState,
  SwapRecord,
  SwapTakeRecord,
  SweepRecord,
  TransferRecord,
  WalletConnectionRecord,
  WalletRecord,
  WithdrawalRecord,
} from './model';
import { partnerKey, sweepPartnerKey } from './model';
import type { Store } from './store';
import { Indexes, type IndexSnapshot, type LedgerFilter } from './indexes';
import type { HubFeedMessage, WalletFeedMessage } from '../lib/api/feeds';

export type { LedgerDirection, LedgerFilter, LedgerPosition, IndexSnapshot } from './indexes';

/** One entry of {@link Engine.eventLog}. */
export interface EngineEventRecord {
  /** increasing sequence number, from 1 after each start */
  seq: number;
  event: 'hub' | 'walletTx';
  message: HubFeedMessage | WalletFeedMessage;
}

/** How many events {@link Engine.eventLog} keeps. */
export const EVENT_LOG_SIZE = 1000;

/**
 * Which POST calls answer `existing` for a `partner_txID` already used (`SimulatorOptions.dedupe`):
 * `all` (the default) dedupes transfers, withdrawals, swap makes, swap takes and sweeps; `transfers`
 * only transfers, the one call spec section 3 ("Moves shown") promises it for: a repeated
 * partner_txID on the other kinds makes a new transaction (status `new`).
 */
export type DedupeMode = 'all' | 'transfers';

/** A custody transaction of one of the four kinds, as stored. */
export type CustodyTx = TransferRecord | WithdrawalRecord | SwapRecord | SwapTakeRecord;

/** Options of an {@link Engine} (from `SimulatorOptions`). */
export interface EngineOptions {
  /** default `all`; see {@link DedupeMode} */
  dedupe?: DedupeMode;
}

/** Events emitted by the engine. Feeds send them only after the state holding them is written. */
export interface EngineEvents {
  /** A new pending action for a core client (sent on its feed). */
  action: [ActionRecord];
  /** A quote newly published to the liquidity hub (sent on the hub feed). */
  hub: [HubFeedMessage];
  /** A movement of a wallet's balance: deposit, transfer, withdrawal, swap leg, sweep (sent on the wallets feed). */
  walletTx: [WalletFeedMessage];
}

/**
 * Shared context of the business rules. All mutations are synchronous and go through
 * {@link Engine.state}: with persistence, the Store's tracking view records each write and
 * schedules it (group commit); domain code also calls {@link Engine.changed}.
 */
export class Engine extends EventEmitter<EngineEvents> {
  /** The persisted state document (owned by the Store). */
  readonly state: SimState;
  /** every index, derived from {@link state} (see the module comment) */
  private readonly indexes: Indexes;
  /**
   * The last hub and walletTx events with a sequence number, newest last (not persisted): at
   * least the last {@link EVENT_LOG_SIZE} and at most twice as many (trimmed in batches, so an
   * event costs O(1)); read them with {@link recentEvents}, served by `GET /_simulator/events`
   * so tests and flows can see what the hub and wallets feeds are given.
   */
  readonly eventLog: EngineEventRecord[] = [];
  private eventSeq = 0;
  /** which calls dedupe on `partner_txID` ({@link DedupeMode}) */
  readonly dedupe: DedupeMode;

  /** @param opts see {@link EngineOptions} (checked by `Simulator.start`). */
  constructor(
    readonly store: Store,
    opts: EngineOptions = {},
  ) {
    super();
    this.dedupe = opts.dedupe ?? 'all';
    this.indexes = new Indexes(() => this.state);
    // The rebuild only reads, and the indexes keep ids and positions: it walks the untracked
    // document (the journal's tracking views cost about 3x per read, 0.5 s at 100,000 transfers
    // of a restart's budget), then every later read and write goes through the tracked one.
    this.state = store.raw;
    this.indexes.rebuild();
    this.state = store.state;
    this.on('hub', (m) => this.log('hub', m));
    this.on('walletTx', (m) => this.log('walletTx', m));
  }

  private log(event: 'hub' | 'walletTx', message: HubFeedMessage | WalletFeedMessage): void {
    this.eventLog.push({ seq: ++this.eventSeq, event, message });
    if (this.eventLog.length >= 2 * EVENT_LOG_SIZE) this.eventLog.splice(0, this.eventLog.length - EVENT_LOG_SIZE);
  }

  /** The last {@link EVENT_LOG_SIZE} events (oldest first) with a sequence number above `after`. */
  recentEvents(after = 0): EngineEventRecord[] {
    const log = this.eventLog;
    const out: EngineEventRecord[] = [];
    for (let i = Math.max(0, log.length - EVENT_LOG_SIZE); i < log.length; i++) if (log[i].seq > after) out.push(log[i]);
    return out;
  }

  /**
   * Every index as plain data (indexes.ts `Indexes.snapshot`): an engine made afresh on the same
   * state gives an equal snapshot when the write methods kept the indexes exact.
   */
  indexSnapshot(): IndexSnapshot {
    return this.indexes.snapshot();
  }

  // ------------------------------------------------------------ network: wallets, funds, exchanges, connections

  /** Store a new wallet (its fund, company and short code set) and index it: short code, wallets per fund and per company. */
  putWallet(w: WalletRecord): void {
    this.state.wallets[w.wallet_id] = w;
    this.indexes.addWallet(w);
  }

  /** Store a new fund with its empty ledger and index it (funds per company). */
  putFund(f: FundRecord): void {
    this.state.funds[f.fund_id] = f;
    this.state.ledger[f.fund_id] = [];
    this.indexes.addFund(f);
  }

  /** Store an exchange and index it by its core client. */
  putExchange(x: ExchangeRecord): void {
    this.state.exchanges[x.id] = x;
    this.indexes.addExchange(x);
  }

  /** Store a new wallet connection request and index it (per wallet and per exchange core client). */
  putConnection(c: WalletConnectionRecord): void {
    this.state.connections[c.id] = c;
    this.indexes.addConnection(c);
  }

  /** True when a short code is already used by a wallet. */
  shortCodeTaken(code: string): boolean {
    return this.indexes.walletIdOfShortCode(code) !== undefined;
  }

  /**
   * Find a wallet by id or by short code (spec section 2: a short code works wherever a wallet id does).
   * @returns the wallet or undefined.
   */
  findWallet(idOrShortCode: string): WalletRecord | undefined {
    const byId = this.state.wallets[idOrShortCode];
    if (byId) return byId;
    const id = this.indexes.walletIdOfShortCode(idOrShortCode);
    return id ? this.state.wallets[id] : undefined;
  }

  /** Wallet ids of a fund in the order they were added (the caller sorts by `created` where the API says so). */
  walletIdsOfFund(fundId: string): readonly string[] {
    return this.indexes.walletIdsOfFund(fundId);
  }

  /** Wallet ids of a company in the order they were added. */
  walletIdsOfCompany(companyId: string): readonly string[] {
    return this.indexes.walletIdsOfCompany(companyId);
  }

  /** Fund ids of a company in creation order. */
  fundIdsOfCompany(companyId: string): readonly string[] {
    return this.indexes.fundIdsOfCompany(companyId);
  }

  /** Ids of a wallet's connection requests, oldest first (any status). */
  connectionIdsOfWallet(walletId: string): readonly string[] {
    return this.indexes.connectionIdsOfWallet(walletId);
  }

  /** Ids of the connection requests made to an exchange core client, oldest first (any status). */
  connectionIdsOfClient(clientId: string): readonly string[] {
    return this.indexes.connectionIdsOfClient(clientId);
  }

  /**
   * The exchange run by a core client, or undefined: the first of `state.exchanges` whose
   * `client_id` it is. Checked against the state (a scan only if the index disagrees with it).
   */
  exchangeOfClient(clientId: string): ExchangeRecord | undefined {
    const id = this.indexes.exchangeIdOfClient(clientId);
    if (id === undefined) return undefined;
    const x = this.state.exchanges[id];
    if (x && x.client_id === clientId) return x;
    return Object.values(this.state.exchanges).find((e) => e.client_id === clientId);
  }

  // ------------------------------------------------------------ actions

  /** Store a new action and index it: a pending action joins its custodian's pending list (creation order). */
  putAction(a: ActionRecord): void {
    this.state.actions[a.id] = a;
    this.indexes.addAction(a);
  }

  /**
   * Set an action's status (spec section 2 "Action": pending, approved, rejected, expired),
   * through {@link state}, and keep the pending index in step.
   * @param id an action id of `state.actions` (unknown ids are ignored).
   */
  setActionStatus(id: string, status: ActionStatus): void {
    const a = this.state.actions[id];
    if (!a) return;
    a.status = status;
    if (status !== 'pending') this.indexes.actionDecided(a);
  }

  /**
   * Ids of a custodian's pending actions, oldest first: by `timestamp` (epoch seconds), ties in
   * creation order: the order of `Object.values(state.actions)` filtered and stably sorted, as
   * GET /coreclient/{client_id}/actions and the core client feed's catch-up on connect (spec
   * sections 4 and 6) answer. Cost O(p) for the custodian's p pending actions (O(p log p) when
   * timestamps are out of creation order).
   */
  pendingActionIds(custodianId: string): string[] {
    const actions = this.state.actions;
    const ids: string[] = [];
    let sorted = true;
    let last = -Infinity;
    for (const id of this.indexes.pendingActionIdsOf(custodianId)) {
      const a = actions[id];
      if (!a || a.status !== 'pending' || a.custodianID !== custodianId) continue;
      if (a.timestamp < last) sorted = false;
      last = a.timestamp;
      ids.push(id);
    }
    if (!sorted) ids.sort((x, y) => actions[x].timestamp - actions[y].timestamp); // stable: ties keep creation order
    return ids;
  }

  // ------------------------------------------------------------ custody transactions

  /** A custody transaction of any kind by tx id, or undefined. */
  findTx(txId: string): CustodyTxRecord | undefined {
    const s = this.state;
    return s.transfers[txId] ?? s.withdrawals[txId] ?? s.swaps[txId] ?? s.swapTakes[txId];
  }

  /**
   * Store a new custody transaction in the collection of its kind (a record without `kind` is a
   * transfer), register its `partner_txID` for its company and kind (the first transaction keeps
   * it; written whatever {@link dedupe} says) and index it: a quote's creation order, the expiry
   * watch while it is live (model/custody.ts `isLive`).
   */
  putTx(tx: CustodyTx): void {
    const s = this.state;
    if (tx.kind === 'withdrawal') s.withdrawals[tx.txID] = tx;
    else if (tx.kind === 'swapMake') s.swaps[tx.txID] = tx;
    else if (tx.kind === 'swapTake') s.swapTakes[tx.txID] = tx;
    else s.transfers[tx.txID] = tx;
    if (tx.partner_txID) s.partnerTxIndex[partnerKey(tx.kind ?? 'transfer', tx.company_id, tx.partner_txID)] ??= tx.txID;
    this.indexes.addTx(tx);
  }

  /** The tx id of the transaction of `kind` this company created with this `partner_txID`, or undefined. */
  txIdOfPartnerId(kind: CustodyKind, companyId: string, partnerTxID: string): string | undefined {
    return this.state.partnerTxIndex[partnerKey(kind, companyId, partnerTxID)];
  }

  /**
   * Set a custody transaction's `txStatus`, through {@link state}, and keep the expiry watch and
   * the liquidity hub in step (a transaction no longer live leaves the watch; a quote no longer
   * `taker_pending` leaves the hub). Unknown ids are ignored.
   */
  setTxStatus(txId: string, status: string): void {
    const tx = this.findTx(txId);
    if (!tx) return;
    tx.txStatus = status;
    this.indexes.txChanged(tx);
  }

  /** Publish a quote to the liquidity hub at `now` (epoch seconds): sets its `hubAdded` and lists it. */
  publishQuote(txId: string, now: number): void {
    const swap = this.state.swaps[txId];
    if (!swap) return;
    swap.hubAdded = now;
    this.indexes.txChanged(swap);
  }

  /** Smallest `expires` among the transactions under expiry watch (epoch seconds, business clock); Infinity when none. */
  get nextExpiry(): number {
    return this.indexes.nextExpiry;
  }

  /**
   * Take the ids of the live transactions whose `expires` is at or before `now` (epoch seconds)
   * out of the expiry watch, earliest first (ties in the order they were put under watch). Cost
   * O(k log n) for k due or closed items, n watched; nothing else is walked.
   * @returns tx ids; the caller checks each is still live (expiring one may close another).
   */
  takeDueExpiries(now: number): string[] {
    return this.indexes.takeDueExpiries(now);
  }

  /**
   * The quotes listed by the liquidity hub before the time and take filters: published
   * (`hubAdded` > 0) and `taker_pending`, ordered by `hubAdded` then by creation order (what a
   * stable sort of `Object.values(state.swaps)` gives). Cost O(h log h), h quotes in the hub.
   */
  hubQuoteIds(): string[] {
    const swaps = this.state.swaps;
    const ids: string[] = [];
    for (const id of this.indexes.hubQuoteIds()) {
      const s = swaps[id];
      if (s && s.txStatus === 'taker_pending' && s.hubAdded > 0) ids.push(id);
    }
    return ids.sort((x, y) => swaps[x].hubAdded - swaps[y].hubAdded || this.indexes.swapOrdinal(x) - this.indexes.swapOrdinal(y));
  }

  // ------------------------------------------------------------ sweeps

  /** Store a sweep and register its `partner_txID` for its exchange core client (the first sweep keeps it). */
  putSweep(sweep: SweepRecord): void {
    this.state.sweeps[sweep.tx_id] = sweep;
    if (sweep.partner_txID) this.state.partnerTxIndex[sweepPartnerKey(sweep.client_id, sweep.partner_txID)] ??= sweep.tx_id;
  }

  /** The tx id of the sweep this exchange core client ran with this `partner_txID`, or undefined. */
  sweepIdOfPartnerId(clientId: string, partnerTxID: string): string | undefined {
    return this.state.partnerTxIndex[sweepPartnerKey(clientId, partnerTxID)];
  }

  // ------------------------------------------------------------ ledger

  /**
   * Append a ledger entry of a wallet to `state.ledger[wallet.fund_id]` and index it (its
   * positions per filter; the debit entry of a custody transaction, see {@link debitEntry}).
   * @returns its position in the fund's ledger array (0 = the oldest).
   */
  appendLedger(wallet: WalletRecord, entry: LedgerEntry): number {
    (this.state.ledger[wallet.fund_id] ??= []).push({ wallet_id: wallet.wallet_id, entry });
    return this.indexes.catchUpLedger(wallet.fund_id);
  }

  /**
   * Positions into `state.ledger[fundId]`, oldest first, of the entries that pass the filters of
   * a fund ledger page (spec section 4 "Funds, deposits, ledger"; network/ledger.ts `fundLedger`):
   * wallet, asset and direction (model/ledger.ts `ledgerDirection`). The direction of an entry is
   * taken when it is indexed: an entry updated in place keeps its direction (a debit entry stays
   * a debit). The array returned is the index's own: do not modify it. Cost O(1) (O(wallet
   * entries) in the one case of a wallet whose entries hold several assets, which the simulator
   * never writes).
   */
  ledgerPositions(fundId: string, filter: LedgerFilter = {}): readonly number[] {
    return this.indexes.ledgerPositions(fundId, filter);
  }

  /**
   * The debit ledger entry of a custody transaction (the entry of `tx.wallet_id`, written pending
   * at creation), read through {@link state} so an update in place is a write into the state
   * document; undefined when the transaction has none (a transaction of an older state file
   * still pending when it was written).
   */
  debitEntry(txId: string): LedgerEntry | undefined {
    return this.indexes.debitEntry(txId);
  }

  // ------------------------------------------------------------ accounts, events, clock

  /**
   * The API account the engine acts for: undefined = the partner account of the API key
   * (CompanyRecord.account absent). Set only inside {@link asAccount}.
   */
  account: string | undefined;

  /** Run `fn` acting for another API account (the simulated foreign account of swaps.ts). */
  asAccount<T>(account: string, fn: () => T): T {
    const saved = this.account;
    this.account = account;
    try {
      return fn();
    } finally {
      this.account = saved;
    }
  }

  /**
   * Emit a wallets feed event for a wallet movement, unless the wallet belongs to another API
   * account (the wallets feed is per API key: simulator/README.md "Wallets feed events").
   */
  emitWalletTx(msg: WalletFeedMessage): void {
    const w = this.state.wallets[msg.wallet_id];
    if (w && this.state.companies[w.company_id]?.account) return;
    this.emit('walletTx', msg);
  }

  /** Business clock: Unix epoch seconds of real time plus the offset set by `POST /_simulator/clock/advance`. */
  now(): number {
    return Math.floor(Date.now() / 1000) + this.state.clockOffsetSeconds;
  }

  /** Mark the state changed (schedules a write). */
  changed(): void {
    this.store.markDirty();
  }
}
