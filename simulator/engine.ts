/**
 * The simulator's in-memory core: the state document, the business clock, look-up indexes
 * and the event bus the websocket feeds listen to. Business rules live in network.ts
 * (companies, trusted parties, core clients, funds, wallets, deposits, ledger) and
 * transactions.ts (transfers, actions, expiry); both work on an {@link Engine}.
 *
 * Indexes (issue 11, "indexes for every read path ... so no request scans history"): every read
 * path of the API, the feeds and the expiry timer finds its records through an index of the
 * engine instead of walking a whole collection or a whole fund ledger. The indexes are not
 * persisted: the constructor rebuilds them from the state document (a restart), and the domain
 * code keeps them up to date where records are created and where statuses change. They hold
 * ids, keys and positions (strings and numbers) only, never references to objects inside the
 * state document: a record is always read, and written, through {@link Engine.state} (the
 * persistence may hand the engine a change-tracking view of the document). Where an index can
 * go stale (a status changed by code that did not tell the engine) the read path checks the
 * record it finds and drops what no longer matches, so the answers stay exact.
 */
import { EventEmitter } from 'node:events';
import type { ActionRecord, ActionStatus, CustodyTxRecord, ExchangeRecord, FundRecord, LedgerEntry, LedgerRecord, SimState, Store, SwapRecord, WalletConnectionRecord, WalletRecord } from './state';
import { normaliseShortCode } from './ids';
import type { HubFeedMessage, WalletFeedMessage } from '../lib/api/feeds';

/** One entry of {@link Engine.eventLog}. */
export interface EngineEventRecord {
  /** increasing sequence number, from 1 after each start */
  seq: number;
  event: 'hub' | 'walletTx';
  message: HubFeedMessage | WalletFeedMessage;
}

/** How many events {@link Engine.eventLog} keeps. */
export const EVENT_LOG_SIZE = 1000;

/** True for a transaction that can still expire: pending custody, or a quote waiting for a taker. */
export function isLive(tx: CustodyTxRecord): boolean {
  return tx.txStatus.startsWith('pending_') || tx.txStatus === 'taker_pending';
}

/**
 * Which POST calls answer `existing` for a `partner_txID` already used (`SimulatorOptions.dedupe`):
 * `all` (the default) dedupes transfers, withdrawals, swap makes, swap takes and sweeps; `transfers`
 * only transfers, the one call spec section 3 ("Moves shown") promises it for: a repeated
 * partner_txID on the other kinds makes a new transaction (status `new`).
 */
export type DedupeMode = 'all' | 'transfers';

/**
 * Where a ledger entry is: `state.ledger[fund_id][index]` (a {@link LedgerRecord}). Ledger arrays
 * only grow (entries are appended, some updated in place), so a position stays valid.
 */
export interface LedgerPosition {
  fund_id: string;
  /** index into `state.ledger[fund_id]`, from 0 = the oldest entry */
  index: number;
}

/** Direction filter of a fund ledger page (`direction` query; network.ts `ledgerDirection`). */
export type LedgerDirection = 'all' | 'in' | 'out';

/** Positions into one fund's ledger array, oldest first, per direction. */
interface DirPositions {
  all: number[];
  in: number[];
  out: number[];
}

/** The positions of one fund's ledger entries per filter of GET .../fund/{fund_id}/ledger. */
interface FundLedgerIndex {
  /** how many entries of `state.ledger[fund_id]` are indexed (the first `count`) */
  count: number;
  /** every entry */
  all: DirPositions;
  /** per wallet id; `assets` = every asset seen among that wallet's entries */
  wallets: Map<string, DirPositions & { assets: Set<string> }>;
  /** per asset code */
  assets: Map<string, DirPositions>;
}

/** Filters of {@link Engine.ledgerPositions}; absent = no filter. */
export interface LedgerFilter {
  /** a wallet id (not a short code) */
  walletId?: string;
  /** an asset code */
  asset?: string;
  /** default `all` */
  direction?: LedgerDirection;
}

const dirPositions = (): DirPositions => ({ all: [], in: [], out: [] });

/** The direction of a ledger entry type (the rule of network.ts `ledgerDirection`, repeated here so the engine does not import the domain modules). */
function directionOf(type: string): 'in' | 'out' {
  return type === 'deposit' || type.endsWith('In') ? 'in' : 'out';
}

/** Push `value` onto the list of `key` in `map`, creating the list. */
function pushTo<K>(map: Map<K, string[]>, key: K, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** One entry of the expiry heap: a live transaction's `expires` (epoch seconds) and the order it was put under watch. */
interface ExpiryItem {
  expires: number;
  seq: number;
  txId: string;
}

/** Binary min-heap of {@link ExpiryItem} by (expires, seq): the transactions to expire, earliest first. */
class ExpiryHeap {
  private readonly items: ExpiryItem[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): ExpiryItem | undefined {
    return this.items[0];
  }

  push(item: ExpiryItem): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!ExpiryHeap.less(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): ExpiryItem | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && ExpiryHeap.less(a[l], a[m])) m = l;
        if (r < a.length && ExpiryHeap.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }

  private static less(x: ExpiryItem, y: ExpiryItem): boolean {
    return x.expires < y.expires || (x.expires === y.expires && x.seq < y.seq);
  }
}

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
 * Shared context of the business rules. All mutations are synchronous; each calls
 * {@link Engine.changed} so the {@link Store} writes them (group commit).
 */
export class Engine extends EventEmitter<EngineEvents> {
  /** The persisted state document (owned by the Store). */
  readonly state: SimState;
  /** short code (normalised) -> wallet id */
  private readonly shortCodes = new Map<string, string>();
  /**
   * ids of custody transactions (any kind) that can still expire: pending custody, or a swap
   * quote open for a taker (see transactions.ts `applyExpiry`). {@link takeDueExpiries} finds
   * the due ones through a heap ordered by `expires`, so the expiry never walks this set.
   */
  readonly pendingTxs = new Set<string>();
  /** smallest `expires` among {@link pendingTxs} (epoch seconds, business clock); Infinity when none */
  nextExpiry = Infinity;
  /** the transactions under expiry watch by (expires, order of watch); closed ones are dropped when they reach the top */
  private readonly expiryHeap = new ExpiryHeap();
  private expirySeq = 0;
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
  /**
   * tx id of a custody transaction (any kind) -> the position of its debit ledger entry: the
   * entry, in `state.ledger`, of the wallet the transaction debits (`tx.wallet_id`; transferOut,
   * withdraw, swapOut). Written pending at creation and updated in place when the transaction
   * ends (custody.ts), so no update scans the ledger; read it with {@link debitEntry}. Not
   * persisted: rebuilt from the ledger on start. Transactions of older state files that settled
   * before pending entries existed are found too; those still pending then have none.
   */
  private readonly debitPositions = new Map<string, LedgerPosition>();
  /** fund id -> positions of its ledger entries per filter (see {@link ledgerPositions}) */
  private readonly ledgerIndexes = new Map<string, FundLedgerIndex>();
  /**
   * custodian id (core client, user or company id) -> ids of its actions that were pending when
   * last seen, in creation order (the order of `state.actions`); see {@link pendingActionIds}
   */
  private readonly pendingByCustodian = new Map<string, Set<string>>();
  /** fund id -> wallet ids in the order they were added */
  private readonly walletsByFund = new Map<string, string[]>();
  /** company id -> wallet ids in the order they were added */
  private readonly walletsByCompany = new Map<string, string[]>();
  /** company id -> fund ids in the order they were created */
  private readonly fundsByCompany = new Map<string, string[]>();
  /** wallet id -> ids of its wallet connection requests, oldest first */
  private readonly connectionsByWallet = new Map<string, string[]>();
  /** exchange core client id -> ids of the wallet connection requests made to it, oldest first */
  private readonly connectionsByClient = new Map<string, string[]>();
  /** exchange core client id -> id of the first exchange (in `state.exchanges` order) it runs */
  private readonly exchangeByClient = new Map<string, string>();
  /** swap quote id -> its place in the creation order of `state.swaps` (ties of the hub listing) */
  private readonly swapOrdinals = new Map<string, number>();
  private swapCount = 0;
  /** ids of swap quotes published to the liquidity hub and still `taker_pending` when last seen */
  private readonly hubSwaps = new Set<string>();

  /** @param opts see {@link EngineOptions} (checked by `Simulator.start`). */
  constructor(
    readonly store: Store,
    opts: EngineOptions = {},
  ) {
    super();
    this.dedupe = opts.dedupe ?? 'all';
    // The rebuild only reads, and the indexes keep ids and positions: it walks the untracked
    // document (the journal's tracking views cost about 3x per read, 0.5 s at 100,000 transfers
    // of a restart's budget), then every later read and write goes through the tracked one.
    this.state = store.raw;
    this.rebuildIndexes();
    this.state = store.state;
    this.on('hub', (m) => this.log('hub', m));
    this.on('walletTx', (m) => this.log('walletTx', m));
  }

  /**
   * Build every index from the state document (one pass over each collection and each fund
   * ledger): called by the constructor, i.e. on every start.
   */
  private rebuildIndexes(): void {
    const s = this.state;
    for (const w of Object.values(s.wallets)) this.indexWallet(w);
    for (const f of Object.values(s.funds)) this.indexFund(f);
    for (const c of Object.values(s.connections ?? {})) this.indexConnection(c);
    for (const x of Object.values(s.exchanges ?? {})) this.indexExchange(x);
    for (const sw of Object.values(s.swaps)) {
      this.indexSwap(sw);
      if (sw.txStatus === 'taker_pending' && sw.hubAdded > 0) this.hubSwaps.add(sw.txID);
    }
    for (const a of Object.values(s.actions)) this.indexAction(a);
    for (const coll of [s.transfers, s.withdrawals, s.swaps, s.swapTakes] as Record<string, CustodyTxRecord>[]) {
      for (const tx of Object.values(coll)) if (isLive(tx)) this.trackExpiry(tx);
    }
    for (const [fundId, records] of Object.entries(s.ledger)) {
      this.catchUpLedger(fundId);
      records.forEach((r, index) => {
        const tx = r.entry.TxID ? this.findTx(r.entry.TxID) : undefined;
        if (tx && r.wallet_id === tx.wallet_id) this.debitPositions.set(tx.txID, { fund_id: fundId, index });
      });
    }
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

  /** Every custody transaction of every kind (walks every collection: for start-up and tests, not for request paths). */
  allTxs(): CustodyTxRecord[] {
    const s = this.state;
    return [...Object.values(s.transfers), ...Object.values(s.withdrawals), ...Object.values(s.swaps), ...Object.values(s.swapTakes)];
  }

  /** A custody transaction of any kind by tx id, or undefined. */
  findTx(txId: string): CustodyTxRecord | undefined {
    const s = this.state;
    return s.transfers[txId] ?? s.withdrawals[txId] ?? s.swaps[txId] ?? s.swapTakes[txId];
  }

  // ------------------------------------------------------------ expiry (transactions.ts applyExpiry)

  /** Put a transaction under expiry watch (until `expires` on the business clock). */
  trackExpiry(tx: CustodyTxRecord): void {
    this.pendingTxs.add(tx.txID);
    this.expiryHeap.push({ expires: tx.expires, seq: ++this.expirySeq, txId: tx.txID });
    this.nextExpiry = Math.min(this.nextExpiry, tx.expires);
  }

  /** Stop watching a transaction's expiry (it left pending; its heap item is dropped when it reaches the top). */
  untrackExpiry(txId: string): void {
    this.pendingTxs.delete(txId);
  }

  /**
   * Take the ids of the watched transactions whose `expires` is at or before `now` (epoch
   * seconds), earliest first (ties in the order they were put under watch), out of the watch,
   * and set {@link nextExpiry} to the earliest `expires` still watched. Cost: O(k log n) for k
   * due or closed items, n watched; nothing else is walked (issue 11).
   * @returns tx ids; the caller checks each is still live.
   */
  takeDueExpiries(now: number): string[] {
    const due: string[] = [];
    for (let top = this.expiryHeap.peek(); top; top = this.expiryHeap.peek()) {
      if (!this.pendingTxs.has(top.txId)) {
        this.expiryHeap.pop(); // closed since: drop
        continue;
      }
      if (top.expires > now) break;
      this.expiryHeap.pop();
      this.pendingTxs.delete(top.txId);
      due.push(top.txId);
    }
    this.nextExpiry = this.expiryHeap.peek()?.expires ?? Infinity;
    return due;
  }

  // ------------------------------------------------------------ ledger positions

  /**
   * Index the entries appended to `state.ledger[fundId]` since the last call (none, one, or a
   * whole ledger after a restart). Called by network.ts `writeLedger` after each append and by
   * every ledger read, so the index never misses an entry whoever appended it.
   * @returns the position of the fund's newest entry (-1 when it has none).
   */
  catchUpLedger(fundId: string): number {
    const records = this.state.ledger[fundId] ?? [];
    let idx = this.ledgerIndexes.get(fundId);
    if (!idx) this.ledgerIndexes.set(fundId, (idx = { count: 0, all: dirPositions(), wallets: new Map(), assets: new Map() }));
    for (; idx.count < records.length; idx.count++) {
      const r = records[idx.count];
      const pos = idx.count;
      const dir = directionOf(r.entry.type);
      let w = idx.wallets.get(r.wallet_id);
      if (!w) idx.wallets.set(r.wallet_id, (w = { ...dirPositions(), assets: new Set() }));
      w.assets.add(r.entry.asset);
      let a = idx.assets.get(r.entry.asset);
      if (!a) idx.assets.set(r.entry.asset, (a = dirPositions()));
      idx.all.all.push(pos);
      idx.all[dir].push(pos);
      w.all.push(pos);
      w[dir].push(pos);
      a.all.push(pos);
      a[dir].push(pos);
    }
    return records.length - 1;
  }

  /**
   * Positions into `state.ledger[fundId]`, oldest first, of the entries that pass the filters of
   * a fund ledger page (spec section 4 "Funds, deposits, ledger"; network.ts `fundLedger`):
   * wallet, asset and direction (by entry type: `deposit` and types ending in `In` are `in`,
   * every other `out`). The direction of an entry is taken when it is indexed: an entry updated in
   * place keeps its direction (a debit entry stays a debit). The array returned is the index's
   * own: do not modify it. Cost O(1) (O(wallet entries) in the one case of a wallet whose entries
   * hold several assets, which the simulator never writes).
   */
  ledgerPositions(fundId: string, filter: LedgerFilter = {}): readonly number[] {
    this.catchUpLedger(fundId);
    const idx = this.ledgerIndexes.get(fundId)!;
    const dir = filter.direction ?? 'all';
    if (filter.walletId !== undefined) {
      const w = idx.wallets.get(filter.walletId);
      if (!w) return [];
      if (filter.asset === undefined) return w[dir];
      if (!w.assets.has(filter.asset)) return [];
      if (w.assets.size === 1) return w[dir];
      const records = this.state.ledger[fundId];
      return w[dir].filter((p) => records[p].entry.asset === filter.asset);
    }
    if (filter.asset !== undefined) return idx.assets.get(filter.asset)?.[dir] ?? [];
    return idx.all[dir];
  }

  /** The ledger record at a position, read through {@link state}; undefined when there is none. */
  ledgerRecord(pos: LedgerPosition): LedgerRecord | undefined {
    return this.state.ledger[pos.fund_id]?.[pos.index];
  }

  /** Remember where a custody transaction's debit ledger entry is (see {@link debitEntry}). */
  setDebitPosition(txId: string, pos: LedgerPosition): void {
    this.debitPositions.set(txId, pos);
  }

  /**
   * The debit ledger entry of a custody transaction (the entry of `tx.wallet_id`, written pending
   * at creation), read through {@link state} so an update in place is a write into the state
   * document; undefined when the transaction has none (an older state file's).
   */
  debitEntry(txId: string): LedgerEntry | undefined {
    const pos = this.debitPositions.get(txId);
    return pos ? this.ledgerRecord(pos)?.entry : undefined;
  }

  // ------------------------------------------------------------ actions

  /**
   * Index an action stored in `state.actions` (call right after storing it, so the index keeps
   * the creation order): a pending action joins its custodian's pending list.
   */
  indexAction(a: ActionRecord): void {
    if (a.status !== 'pending') return;
    let set = this.pendingByCustodian.get(a.custodianID);
    if (!set) this.pendingByCustodian.set(a.custodianID, (set = new Set()));
    set.add(a.id);
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
    if (status !== 'pending') this.pendingByCustodian.get(a.custodianID)?.delete(id);
  }

  /**
   * Ids of a custodian's pending actions, oldest first: by `timestamp` (epoch seconds), ties in
   * creation order: the order of `Object.values(state.actions)` filtered and stably sorted, as
   * GET /coreclient/{client_id}/actions and the core client feed's catch-up on connect (spec
   * sections 4 and 6) answer. Actions found no longer pending leave the index. Cost O(p) for
   * the custodian's p pending actions (O(p log p) when timestamps are out of creation order).
   */
  pendingActionIds(custodianId: string): string[] {
    const set = this.pendingByCustodian.get(custodianId);
    if (!set) return [];
    const actions = this.state.actions;
    const ids: string[] = [];
    let sorted = true;
    let last = -Infinity;
    for (const id of set) {
      const a = actions[id];
      if (!a || a.status !== 'pending' || a.custodianID !== custodianId) {
        set.delete(id);
        continue;
      }
      if (a.timestamp < last) sorted = false;
      last = a.timestamp;
      ids.push(id);
    }
    if (set.size === 0) this.pendingByCustodian.delete(custodianId);
    if (!sorted) ids.sort((x, y) => actions[x].timestamp - actions[y].timestamp); // stable: ties keep creation order
    return ids;
  }

  // ------------------------------------------------------------ funds, wallets, exchanges, swaps

  /** Index a newly created wallet (its fund, company and short code must be set): short code, wallets per fund and per company. */
  indexWallet(w: WalletRecord): void {
    this.shortCodes.set(normaliseShortCode(w.short_code), w.wallet_id);
    pushTo(this.walletsByFund, w.fund_id, w.wallet_id);
    pushTo(this.walletsByCompany, w.company_id, w.wallet_id);
  }

  /** Wallet ids of a fund in the order they were added (the caller sorts by `created` where the API says so). */
  walletIdsOfFund(fundId: string): readonly string[] {
    return this.walletsByFund.get(fundId) ?? [];
  }

  /** Wallet ids of a company in the order they were added. */
  walletIdsOfCompany(companyId: string): readonly string[] {
    return this.walletsByCompany.get(companyId) ?? [];
  }

  /** Index a newly created fund (funds per company). */
  indexFund(f: FundRecord): void {
    pushTo(this.fundsByCompany, f.company_id, f.fund_id);
  }

  /** Fund ids of a company in creation order. */
  fundIdsOfCompany(companyId: string): readonly string[] {
    return this.fundsByCompany.get(companyId) ?? [];
  }

  /** Index a new wallet connection request (per wallet and per exchange core client). */
  indexConnection(c: WalletConnectionRecord): void {
    pushTo(this.connectionsByWallet, c.wallet_id, c.id);
    pushTo(this.connectionsByClient, c.client_id, c.id);
  }

  /** Ids of a wallet's connection requests, oldest first (any status). */
  connectionIdsOfWallet(walletId: string): readonly string[] {
    return this.connectionsByWallet.get(walletId) ?? [];
  }

  /** Ids of the connection requests made to an exchange core client, oldest first (any status). */
  connectionIdsOfClient(clientId: string): readonly string[] {
    return this.connectionsByClient.get(clientId) ?? [];
  }

  /** Index an exchange stored in `state.exchanges` (by its core client; the first exchange of a client wins, as a search in `state.exchanges` order would). */
  indexExchange(x: ExchangeRecord): void {
    if (!this.exchangeByClient.has(x.client_id)) this.exchangeByClient.set(x.client_id, x.id);
  }

  /**
   * The exchange run by a core client, or undefined: the first of `state.exchanges` whose
   * `client_id` it is. Checked against the state (a scan only if the index disagrees with it).
   */
  exchangeOfClient(clientId: string): ExchangeRecord | undefined {
    const id = this.exchangeByClient.get(clientId);
    const x = id === undefined ? undefined : this.state.exchanges[id];
    if (x && x.client_id === clientId) return x;
    if (id === undefined) return undefined;
    // the indexed exchange was replaced: find it the slow way and re-index
    const found = Object.values(this.state.exchanges).find((e) => e.client_id === clientId);
    if (found) this.exchangeByClient.set(clientId, found.id);
    else this.exchangeByClient.delete(clientId);
    return found;
  }

  /** Index a swap quote just stored in `state.swaps` (its creation order). */
  indexSwap(s: SwapRecord): void {
    if (!this.swapOrdinals.has(s.txID)) this.swapOrdinals.set(s.txID, this.swapCount++);
  }

  /** Record that a quote was published to the liquidity hub (swaps.ts `publish`). */
  indexHubQuote(txId: string): void {
    this.hubSwaps.add(txId);
  }

  /**
   * The quotes listed by the liquidity hub before the time and take filters: published
   * (`hubAdded` > 0) and `taker_pending`, ordered by `hubAdded` then by creation order (what a
   * stable sort of `Object.values(state.swaps)` gives). Quotes found no longer `taker_pending`
   * leave the index for good (that status is never re-entered). Cost O(h log h), h quotes in the hub.
   */
  hubQuoteIds(): string[] {
    const swaps = this.state.swaps;
    const ids: string[] = [];
    for (const id of this.hubSwaps) {
      const s = swaps[id];
      if (!s || s.txStatus !== 'taker_pending' || !(s.hubAdded > 0)) {
        if (!s || s.txStatus !== 'taker_pending') this.hubSwaps.delete(id);
        continue;
      }
      ids.push(id);
    }
    const ord = (id: string) => this.swapOrdinals.get(id) ?? Infinity;
    return ids.sort((x, y) => swaps[x].hubAdded - swaps[y].hubAdded || ord(x) - ord(y));
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
   * account (the wallets feed is per API key: NOTES.md).
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

  /** True when a short code is already used by a wallet. */
  shortCodeTaken(code: string): boolean {
    return this.shortCodes.has(normaliseShortCode(code));
  }

  /**
   * Find a wallet by id or by short code (spec section 2: a short code works wherever a wallet id does).
   * @returns the wallet or undefined.
   */
  findWallet(idOrShortCode: string): WalletRecord | undefined {
    const byId = this.state.wallets[idOrShortCode];
    if (byId) return byId;
    const id = this.shortCodes.get(normaliseShortCode(idOrShortCode));
    return id ? this.state.wallets[id] : undefined;
  }
}
