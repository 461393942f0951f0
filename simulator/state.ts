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
}

/** A core client (spec section 2, "Core client"). The feed URL is built per request from the Host header. */
export interface CoreClientRecord {
  id: string;
  name: string;
  /** epoch seconds */
  timestamp: number;
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

/** An approver record of the Transaction object (spec section 2). Names blank and userID = client id for a core client. */
export interface ApproverRecord {
  actionID: string;
  firstName: string;
  lastName: string;
  status: string;
  /** epoch seconds */
  timestamp: number;
  userID: string;
  username: string;
}

/** A transfer (spec sections 2 and 3). */
export interface TransferRecord {
  txID: string;
  company_id: string;
  fund_id: string;
  wallet_id: string;
  recipient_wallet_id: string;
  recipient_fund_id: string;
  recipient_company_id: string;
  partner_txID: string;
  asset: string;
  /** base units the recipient receives (= send.amount) */
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
  /** trusted entity ids of the transfer custody group at creation time */
  custodians: string[];
  /** action ids, one per custodian, same order as `custodians` */
  actionIDs: string[];
  approvals: ApproverRecord[];
  txStatus: TransferStatus;
  /** epoch seconds when the status left pending, 0 while pending */
  finished: number;
  /** true while amount is reserved on the origin wallet */
  held: boolean;
}

/** Action status values (spec section 2, "Action"). */
export type ActionStatus = 'pending' | 'expired' | 'approved' | 'rejected';

/** A custodian's approval item: one per custodian per transaction (spec section 2, "Action"). */
export interface ActionRecord {
  id: string;
  type: 'ApproveTransfer';
  status: ActionStatus;
  /** epoch seconds */
  timestamp: number;
  /** epoch seconds (the transaction's `expires`) */
  expireTime: number;
  txID: string;
  /** trusted entity id of the custodian (core client id or user id) */
  custodianID: string;
  custodianType: 'core-client' | 'user';
}

/** A ledger entry (spec section 2, "Ledger entry") plus the wallet it belongs to (not sent). */
export interface LedgerRecord {
  wallet_id: string;
  entry: LedgerEntry;
}

/** A ledger entry exactly as sent under `List` (spec section 2; capitalised `TxID`). */
export interface LedgerEntry {
  TxID: string;
  chainTxID: string;
  fundID: string;
  timestamp: number;
  expireTime: number;
  status: string;
  type: 'deposit' | 'transferIn' | 'transferOut';
  asset: string;
  amount: number;
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
  /** ledger entries per fund id, oldest first */
  ledger: Record<string, LedgerRecord[]>;
  /** `company_id + "\n" + partner_txID` -> tx id (idempotency is per company) */
  partnerTxIndex: Record<string, string>;
  demo: DemoDataset | null;
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
  };
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
    return parsed;
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
