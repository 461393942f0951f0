/**
 * The simulator's in-memory core: the state document, the business clock, look-up indexes
 * and the event bus the websocket feeds listen to. Business rules live in network.ts
 * (companies, trusted parties, core clients, funds, wallets, deposits, ledger) and
 * transactions.ts (transfers, actions, expiry); both work on an {@link Engine}.
 */
import { EventEmitter } from 'node:events';
import type { ActionRecord, CustodyTxRecord, LedgerEntry, SimState, Store, WalletRecord } from './state';
import { normaliseShortCode } from './ids';
import type { HubFeedMessage } from '../lib/hub-feed';
import type { WalletFeedMessage } from '../lib/wallets-feed';

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
   * quote open for a taker (see transactions.ts `applyExpiry`)
   */
  readonly pendingTxs = new Set<string>();
  /** smallest `expires` among {@link pendingTxs} (epoch seconds, business clock) */
  nextExpiry = Infinity;
  /**
   * The last {@link EVENT_LOG_SIZE} hub and walletTx events with a sequence number, newest last
   * (not persisted): served by `GET /_simulator/events` so tests and flows can see what the
   * hub and wallets feeds are given.
   */
  readonly eventLog: EngineEventRecord[] = [];
  private eventSeq = 0;
  /** which calls dedupe on `partner_txID` ({@link DedupeMode}) */
  readonly dedupe: DedupeMode;
  /**
   * tx id of a custody transaction (any kind) -> its debit ledger entry: the entry, in
   * `state.ledger`, of the wallet the transaction debits (`tx.wallet_id`; transferOut, withdraw,
   * swapOut). Written pending at creation and updated in place when the transaction ends
   * (custody.ts), so no update scans the ledger. Not persisted: rebuilt from the ledger on
   * start. Transactions of older state files that settled before pending entries existed are
   * found too; those still pending then have none.
   */
  readonly debitEntries = new Map<string, LedgerEntry>();

  /** @param opts see {@link EngineOptions} (checked by `Simulator.start`). */
  constructor(
    readonly store: Store,
    opts: EngineOptions = {},
  ) {
    super();
    this.state = store.state;
    this.dedupe = opts.dedupe ?? 'all';
    for (const w of Object.values(this.state.wallets)) this.shortCodes.set(normaliseShortCode(w.short_code), w.wallet_id);
    for (const tx of this.allTxs()) {
      if (isLive(tx)) this.trackExpiry(tx);
    }
    for (const records of Object.values(this.state.ledger)) {
      for (const r of records) {
        const tx = r.entry.TxID ? this.findTx(r.entry.TxID) : undefined;
        if (tx && r.wallet_id === tx.wallet_id) this.debitEntries.set(tx.txID, r.entry);
      }
    }
    this.on('hub', (m) => this.log('hub', m));
    this.on('walletTx', (m) => this.log('walletTx', m));
  }

  private log(event: 'hub' | 'walletTx', message: HubFeedMessage | WalletFeedMessage): void {
    this.eventLog.push({ seq: ++this.eventSeq, event, message });
    if (this.eventLog.length > EVENT_LOG_SIZE) this.eventLog.splice(0, this.eventLog.length - EVENT_LOG_SIZE);
  }

  /** Every custody transaction of every kind. */
  allTxs(): CustodyTxRecord[] {
    const s = this.state;
    return [...Object.values(s.transfers), ...Object.values(s.withdrawals), ...Object.values(s.swaps), ...Object.values(s.swapTakes)];
  }

  /** A custody transaction of any kind by tx id, or undefined. */
  findTx(txId: string): CustodyTxRecord | undefined {
    const s = this.state;
    return s.transfers[txId] ?? s.withdrawals[txId] ?? s.swaps[txId] ?? s.swapTakes[txId];
  }

  /** Put a transaction under expiry watch (until `expires` on the business clock). */
  trackExpiry(tx: CustodyTxRecord): void {
    this.pendingTxs.add(tx.txID);
    this.nextExpiry = Math.min(this.nextExpiry, tx.expires);
  }

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

  /** Index a newly created wallet's short code. */
  indexWallet(w: WalletRecord): void {
    this.shortCodes.set(normaliseShortCode(w.short_code), w.wallet_id);
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
