/**
 * The simulator's in-memory core: the state document, the business clock, look-up indexes
 * and the event bus the websocket feeds listen to. Business rules live in network.ts
 * (companies, trusted parties, core clients, funds, wallets, deposits, ledger) and
 * transactions.ts (transfers, actions, expiry); both work on an {@link Engine}.
 */
import { EventEmitter } from 'node:events';
import type { ActionRecord, SimState, Store, WalletRecord } from './state';
import { normaliseShortCode } from './ids';

/**
 * A liquidity hub feed message (spec section 6; NOTES.md "Feed messages"): one per quote newly
 * published to the hub, e.g. `{txID, status: 'taker_pending'}`.
 */
export interface HubFeedMessage {
  txID: string;
  status: string;
}

/**
 * A wallets feed message (spec section 6; NOTES.md "Feed messages"): one per wallet transaction
 * of the account. `amount`, `fee`, `net_amount` in base units, negative for outgoing;
 * `timestamp` epoch seconds; `sweep_tx` true when the movement is a sweep.
 */
export interface WalletFeedMessage {
  Status: string;
  amount: number;
  asset: string;
  chain_tx_id: string;
  fee: number;
  net_amount: number;
  sweep_tx: boolean;
  timestamp: number;
  tx_id: string;
  wallet_id: string;
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
  /** ids of transfers still pending */
  readonly pendingTransfers = new Set<string>();
  /** smallest `expires` among pending transfers (epoch seconds, business clock) */
  nextExpiry = Infinity;

  constructor(readonly store: Store) {
    super();
    this.state = store.state;
    for (const w of Object.values(this.state.wallets)) this.shortCodes.set(normaliseShortCode(w.short_code), w.wallet_id);
    for (const tx of Object.values(this.state.transfers)) {
      if (tx.txStatus === 'pending_transfer') {
        this.pendingTransfers.add(tx.txID);
        this.nextExpiry = Math.min(this.nextExpiry, tx.expires);
      }
    }
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
