/**
 * The fund ledger (spec section 2 "Ledger entry"; OpenAPI TxHistoryItem). Amounts are base units
 * of the entry's asset, times epoch seconds of the business clock.
 */
/**
 * A ledger entry (spec section 2, "Ledger entry") plus the wallet it belongs to (not sent). A
 * custody transaction's debit entry is written pending at creation and updated in place later
 * (simulator/custody.ts); every other entry is written once, when its money moves.
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
   * `approved` entries moved a balance (simulator/network/ledger.ts `ledgerMovedBalance`).
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


/**
 * The direction of a ledger entry type, one rule for every type: `deposit` and every type ending
 * in `In` (transferIn, swapIn, ...) are `in`; every other type (transferOut, withdraw, swap,
 * swapOut, sweeps, ...) is `out`. Types are those of OpenAPI TxHistoryItem. The `direction`
 * filter of GET /company/{company_id}/fund/{fund_id}/ledger and the engine's ledger index use it.
 */
export function ledgerDirection(type: string): 'in' | 'out' {
  return type === 'deposit' || type.endsWith('In') ? 'in' : 'out';
}
