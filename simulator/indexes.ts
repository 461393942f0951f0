/**
 * The engine's look-up indexes: every read path of the API, the feeds and the expiry timer finds
 * its records through one of them instead of walking a whole collection or a whole fund ledger
 * (simulator/README.md "Files": engine.ts). They are not persisted, and they are maintained in
 * one place: {@link Indexes.rebuild} derives them from the state document on start, and the
 * engine's write methods (engine.ts `putWallet`, `putTx`, `setTxStatus`, `appendLedger`, ...)
 * update them with the state they write. Domain code never reaches this class: the engine holds
 * it privately. They hold ids, keys and positions (strings and numbers) only, never references to
 * objects inside the state document, which is always read through the engine's `state`.
 */
import type { ActionRecord, CustodyTxRecord, ExchangeRecord, FundRecord, LedgerEntry, SimState, SwapRecord, WalletConnectionRecord, WalletRecord } from './model';
import { isLive, ledgerDirection } from './model';
import { ExpiryHeap } from './expiry-heap';
import { normaliseShortCode } from './ids';

/** True for a quote listed by the liquidity hub (before its time and take filters): published and `taker_pending`. */
function inHub(s: SwapRecord): boolean {
  return s.txStatus === 'taker_pending' && s.hubAdded > 0;
}

/**
 * Where a ledger entry is: `state.ledger[fund_id][index]`. Ledger arrays only grow (entries are
 * appended, some updated in place), so a position stays valid.
 */
export interface LedgerPosition {
  fund_id: string;
  /** index into `state.ledger[fund_id]`, from 0 = the oldest entry */
  index: number;
}

/** Direction filter of a fund ledger page (`direction` query; model/ledger.ts `ledgerDirection`). */
export type LedgerDirection = 'all' | 'in' | 'out';

/** Filters of {@link Indexes.ledgerPositions}; absent = no filter. */
export interface LedgerFilter {
  /** a wallet id (not a short code) */
  walletId?: string;
  /** an asset code */
  asset?: string;
  /** default `all` */
  direction?: LedgerDirection;
}

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

const dirPositions = (): DirPositions => ({ all: [], in: [], out: [] });

/** Push `value` onto the list of `key` in `map`, creating the list. */
function pushTo<K>(map: Map<K, string[]>, key: K, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Every index as plain, ordered data ({@link Indexes.snapshot}): what a rebuild from the state must reproduce. */
export interface IndexSnapshot {
  shortCodes: [string, string][];
  walletsByFund: [string, string[]][];
  walletsByCompany: [string, string[]][];
  fundsByCompany: [string, string[]][];
  connectionsByWallet: [string, string[]][];
  connectionsByClient: [string, string[]][];
  exchangeByClient: [string, string][];
  /** quote ids in creation order */
  swapOrder: string[];
  hubSwaps: string[];
  pendingByCustodian: [string, string[]][];
  /** watched transactions with the `expires` they are watched for, by tx id */
  expiryWatch: [string, number][];
  debitPositions: [string, LedgerPosition][];
  ledger: [string, { count: number; all: DirPositions; wallets: [string, DirPositions & { assets: string[] }][]; assets: [string, DirPositions][] }][];
}

/** Entries of a map sorted by key (the order a map is filled in is not part of what it says). */
const sorted = <V>(m: Map<string, V>): [string, V][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The engine's indexes; see the module comment. Only the engine holds an instance. */
export class Indexes {
  /** short code (normalised) -> wallet id */
  private readonly shortCodes = new Map<string, string>();
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
  /** ids of swap quotes published to the liquidity hub and `taker_pending` */
  private readonly hubSwaps = new Set<string>();
  /** custodian id (core client, user or company id) -> ids of its pending actions, in creation order */
  private readonly pendingByCustodian = new Map<string, Set<string>>();
  /**
   * ids of custody transactions (any kind) that can still expire (model/custody.ts `isLive`). The due ones
   * are found through {@link expiryHeap}, ordered by `expires`, so the expiry never walks this set.
   */
  private readonly pendingTxs = new Set<string>();
  /** the transactions under expiry watch by (expires, order of watch); closed ones are dropped when they reach the top */
  private readonly expiryHeap = new ExpiryHeap();
  private expirySeq = 0;
  /** smallest `expires` among the watched transactions (epoch seconds, business clock); Infinity when none */
  nextExpiry = Infinity;
  /**
   * tx id of a custody transaction (any kind) -> the position of its debit ledger entry: the
   * entry of the wallet the transaction debits (`tx.wallet_id`; transferOut, withdraw, swapOut).
   */
  private readonly debitPositions = new Map<string, LedgerPosition>();
  /** fund id -> positions of its ledger entries per filter (see {@link ledgerPositions}) */
  private readonly ledgerIndexes = new Map<string, FundLedgerIndex>();

  /** @param read the state document as the engine reads it now (untracked during the rebuild). */
  constructor(private readonly read: () => SimState) {}

  /** A custody transaction of any kind by tx id, or undefined. */
  private findTx(txId: string): CustodyTxRecord | undefined {
    const s = this.read();
    return s.transfers[txId] ?? s.withdrawals[txId] ?? s.swaps[txId] ?? s.swapTakes[txId];
  }

  /** Build every index from the state document (one pass over each collection and each fund ledger): on every start. */
  rebuild(): void {
    const s = this.read();
    for (const w of Object.values(s.wallets)) this.addWallet(w);
    for (const f of Object.values(s.funds)) this.addFund(f);
    for (const c of Object.values(s.connections ?? {})) this.addConnection(c);
    for (const x of Object.values(s.exchanges ?? {})) this.addExchange(x);
    for (const a of Object.values(s.actions)) this.addAction(a);
    for (const coll of [s.transfers, s.withdrawals, s.swaps, s.swapTakes] as Record<string, CustodyTxRecord>[]) {
      for (const tx of Object.values(coll)) this.addTx(tx);
    }
    for (const fundId of Object.keys(s.ledger)) this.catchUpLedger(fundId);
  }

  // ------------------------------------------------------------ network

  addWallet(w: WalletRecord): void {
    this.shortCodes.set(normaliseShortCode(w.short_code), w.wallet_id);
    pushTo(this.walletsByFund, w.fund_id, w.wallet_id);
    pushTo(this.walletsByCompany, w.company_id, w.wallet_id);
  }

  addFund(f: FundRecord): void {
    pushTo(this.fundsByCompany, f.company_id, f.fund_id);
  }

  addConnection(c: WalletConnectionRecord): void {
    pushTo(this.connectionsByWallet, c.wallet_id, c.id);
    pushTo(this.connectionsByClient, c.client_id, c.id);
  }

  /** The first exchange of a client wins, as a search in `state.exchanges` order would. */
  addExchange(x: ExchangeRecord): void {
    if (!this.exchangeByClient.has(x.client_id)) this.exchangeByClient.set(x.client_id, x.id);
  }

  walletIdOfShortCode(code: string): string | undefined {
    return this.shortCodes.get(normaliseShortCode(code));
  }

  walletIdsOfFund(fundId: string): readonly string[] {
    return this.walletsByFund.get(fundId) ?? [];
  }

  walletIdsOfCompany(companyId: string): readonly string[] {
    return this.walletsByCompany.get(companyId) ?? [];
  }

  fundIdsOfCompany(companyId: string): readonly string[] {
    return this.fundsByCompany.get(companyId) ?? [];
  }

  connectionIdsOfWallet(walletId: string): readonly string[] {
    return this.connectionsByWallet.get(walletId) ?? [];
  }

  connectionIdsOfClient(clientId: string): readonly string[] {
    return this.connectionsByClient.get(clientId) ?? [];
  }

  exchangeIdOfClient(clientId: string): string | undefined {
    return this.exchangeByClient.get(clientId);
  }

  // ------------------------------------------------------------ actions

  /** A pending action joins its custodian's pending list (call in creation order). */
  addAction(a: ActionRecord): void {
    if (a.status !== 'pending') return;
    let set = this.pendingByCustodian.get(a.custodianID);
    if (!set) this.pendingByCustodian.set(a.custodianID, (set = new Set()));
    set.add(a.id);
  }

  /** An action left pending: it leaves its custodian's pending list. */
  actionDecided(a: ActionRecord): void {
    const set = this.pendingByCustodian.get(a.custodianID);
    if (!set) return;
    set.delete(a.id);
    if (set.size === 0) this.pendingByCustodian.delete(a.custodianID);
  }

  /** Ids of a custodian's pending actions in creation order. */
  pendingActionIdsOf(custodianId: string): Iterable<string> {
    return this.pendingByCustodian.get(custodianId) ?? [];
  }

  // ------------------------------------------------------------ transactions, expiry, hub

  /** A custody transaction just stored: its quote order (swaps), its hub listing, its expiry watch when live. */
  addTx(tx: CustodyTxRecord): void {
    if (tx.kind === 'swapMake') {
      if (!this.swapOrdinals.has(tx.txID)) this.swapOrdinals.set(tx.txID, this.swapCount++);
      if (inHub(tx as SwapRecord)) this.hubSwaps.add(tx.txID);
    }
    if (isLive(tx)) this.watchExpiry(tx);
  }

  /** A transaction's status or hub listing changed: keep the expiry watch and the hub in step. */
  txChanged(tx: CustodyTxRecord): void {
    if (!isLive(tx)) this.pendingTxs.delete(tx.txID);
    else if (!this.pendingTxs.has(tx.txID)) this.watchExpiry(tx);
    if (tx.kind === 'swapMake') {
      if (inHub(tx as SwapRecord)) this.hubSwaps.add(tx.txID);
      else this.hubSwaps.delete(tx.txID);
    }
  }

  private watchExpiry(tx: CustodyTxRecord): void {
    this.pendingTxs.add(tx.txID);
    this.expiryHeap.push({ expires: tx.expires, seq: ++this.expirySeq, txId: tx.txID });
    this.nextExpiry = Math.min(this.nextExpiry, tx.expires);
  }

  /**
   * Take the live transactions whose `expires` is at or before `now` (epoch seconds) out of the
   * watch, earliest first (ties in the order they were put under watch), and set
   * {@link nextExpiry} to the earliest `expires` still watched. A transaction found no longer
   * live is dropped; one whose `expires` moved past `now` is watched again. Cost O(k log n) for
   * k due or closed items, n watched; nothing else is walked.
   */
  takeDueExpiries(now: number): string[] {
    const due: string[] = [];
    const later: CustodyTxRecord[] = [];
    for (let top = this.expiryHeap.peek(); top; top = this.expiryHeap.peek()) {
      if (!this.pendingTxs.has(top.txId)) {
        this.expiryHeap.pop(); // closed since: drop
        continue;
      }
      if (top.expires > now) break;
      this.expiryHeap.pop();
      this.pendingTxs.delete(top.txId);
      const tx = this.findTx(top.txId);
      if (!tx || !isLive(tx)) continue;
      if (tx.expires <= now) due.push(top.txId);
      else later.push(tx);
    }
    this.nextExpiry = this.expiryHeap.peek()?.expires ?? Infinity;
    for (const tx of later) this.watchExpiry(tx); // not due after all (its expires changed)
    return due;
  }

  /** Ids of the quotes in the liquidity hub, in no particular order (the engine sorts them). */
  hubQuoteIds(): Iterable<string> {
    return this.hubSwaps;
  }

  /** A quote's place in the creation order of `state.swaps` (Infinity when unknown). */
  swapOrdinal(txId: string): number {
    return this.swapOrdinals.get(txId) ?? Infinity;
  }

  // ------------------------------------------------------------ ledger

  /**
   * Index the entries appended to `state.ledger[fundId]` since the last call (none, one, or a
   * whole ledger on start): their positions per wallet, asset and direction, and the position of
   * each custody transaction's debit entry (an entry whose `TxID` names a custody transaction
   * and whose wallet is the one the transaction debits).
   * @returns the position of the fund's newest entry (-1 when it has none).
   */
  catchUpLedger(fundId: string): number {
    const records = this.read().ledger[fundId] ?? [];
    let idx = this.ledgerIndexes.get(fundId);
    if (!idx) this.ledgerIndexes.set(fundId, (idx = { count: 0, all: dirPositions(), wallets: new Map(), assets: new Map() }));
    for (; idx.count < records.length; idx.count++) {
      const r = records[idx.count];
      const pos = idx.count;
      const dir = ledgerDirection(r.entry.type);
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
      const tx = r.entry.TxID ? this.findTx(r.entry.TxID) : undefined;
      if (tx && r.wallet_id === tx.wallet_id) this.debitPositions.set(tx.txID, { fund_id: fundId, index: pos });
    }
    return records.length - 1;
  }

  /** See engine.ts `ledgerPositions`. */
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
      const records = this.read().ledger[fundId];
      return w[dir].filter((p) => records[p].entry.asset === filter.asset);
    }
    if (filter.asset !== undefined) return idx.assets.get(filter.asset)?.[dir] ?? [];
    return idx.all[dir];
  }

  /** The debit ledger entry of a custody transaction, read through the state; undefined when it has none. */
  debitEntry(txId: string): LedgerEntry | undefined {
    const pos = this.debitPositions.get(txId);
    return pos ? this.read().ledger[pos.fund_id]?.[pos.index]?.entry : undefined;
  }

  // ------------------------------------------------------------ comparison

  /**
   * Every index as plain data, map entries sorted by key, lists in their own order: two engines
   * over the same state give equal snapshots when their indexes agree. The expiry watch is the
   * set of live heap items (closed ones still in the heap are not part of what it says).
   */
  snapshot(): IndexSnapshot {
    for (const fundId of Object.keys(this.read().ledger)) this.catchUpLedger(fundId);
    const watch = new Map<string, number>();
    for (const item of this.expiryHeap.items()) if (this.pendingTxs.has(item.txId)) watch.set(item.txId, item.expires);
    const lists = (m: Map<string, string[]>) => sorted(m).map(([k, v]) => [k, [...v]] as [string, string[]]);
    return {
      shortCodes: sorted(this.shortCodes),
      walletsByFund: lists(this.walletsByFund),
      walletsByCompany: lists(this.walletsByCompany),
      fundsByCompany: lists(this.fundsByCompany),
      connectionsByWallet: lists(this.connectionsByWallet),
      connectionsByClient: lists(this.connectionsByClient),
      exchangeByClient: sorted(this.exchangeByClient),
      swapOrder: [...this.swapOrdinals].sort((a, b) => a[1] - b[1]).map(([id]) => id),
      hubSwaps: [...this.hubSwaps].sort(),
      pendingByCustodian: sorted(this.pendingByCustodian).map(([k, v]) => [k, [...v]] as [string, string[]]),
      expiryWatch: sorted(watch),
      debitPositions: sorted(this.debitPositions),
      ledger: sorted(this.ledgerIndexes).map(([fundId, l]) => [
        fundId,
        {
          count: l.count,
          all: l.all,
          wallets: sorted(l.wallets).map(([id, w]) => [id, { all: w.all, in: w.in, out: w.out, assets: [...w.assets].sort() }] as [string, DirPositions & { assets: string[] }]),
          assets: sorted(l.assets),
        },
      ]),
    };
  }
}
