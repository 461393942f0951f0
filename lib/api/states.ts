/**
 * The states of the transactions a flow can follow (spec section 3 "States and transitions"),
 * written once: per kind its status values, which of them are final, its owner path id and where
 * its GET answer keeps the status and `expires` (the reads: lib/client/read-transaction.ts).
 *
 * Sources:
 * - transfers and withdrawals: spec section 3 "Transfer tx status values", "Withdrawal tx status
 *   values" (field `txStatus` of the Transaction object, spec section 2);
 * - the short values `pending`, `approved`, `rejected`, `expired` of the walkthrough (spec
 *   section 3, "The walkthrough example ... also shows short values of txStatus"), accepted for
 *   every kind;
 * - swap quotes (make), swap takes and sweeps: the spec does not show their status values
 *   ("Sweep tx_status values: not shown"; only `taker_pending` is named, on the liquidity hub
 *   feed). The names below are the built-in simulator's (simulator/swaps.ts; lib/api/v1/swap.ts
 *   `SwapStatus`, `SwapTakeStatus`; simulator/exchanges.ts `approved_sweep`). The hosted service
 *   may use others: an unknown status is never final, so tracking goes on until the
 *   transaction's `expires` plus the margin and then reports a timeout with the last status seen.
 */
import { isTransactionKind, type TransactionKind } from './kinds';
import { TRANSFER_STATUSES } from './v1/transfer';
import { WITHDRAWAL_STATUSES } from './v1/withdraw';
import { SWAP_STATUSES, SWAP_TAKE_STATUSES } from './v1/swap';

/** What is known about the states of one kind. */
export interface KindStates {
  /** Every status value known for the kind, in the order of the source table. */
  statuses: readonly string[];
  /** The statuses after which nothing more happens to the transaction (a subset of `statuses`). */
  final: readonly string[];
  /** Which path id besides `tx_id` the kind's read needs. */
  owner: 'company_id' | 'client_id';
  /** Where the GET answer keeps the status: `txStatus` (camelCase Transaction object) or `tx_status` (the snake_case sweep transaction). Every answer keeps its expiry (epoch seconds) in `expires`. */
  statusField: 'txStatus' | 'tx_status';
  /** Where the status values come from. */
  source: string;
}

/** The final short status values (every short value but `pending`). */
export const SHORT_FINAL_STATUSES: readonly string[] = ['approved', 'rejected', 'expired'];

/**
 * The {@link KindStates} of a kind whose transactions a company owns and whose GET answer is a
 * camelCase Transaction object: read with `company_id` and `tx_id`, status in `txStatus`. Every
 * kind but sweeps.
 * @param statuses every status value known for the kind.
 * @param final the final ones among them.
 * @param source where the status values come from.
 */
function companyKind(statuses: readonly string[], final: readonly string[], source: string): KindStates {
  return { statuses, final, owner: 'company_id', statusField: 'txStatus', source };
}

/**
 * The states of each kind (see the module comment for sources). `approved_transfer` and
 * `approved_withdrawal` are final: custody is done and the spec shows no move out of them.
 * The built-in simulator can still chain-reject an approved withdrawal (a control endpoint);
 * `chain_rejected_*` is final too, and is reported when it is already the status at a read.
 */
export const TRANSACTION_STATES: Readonly<Record<TransactionKind, KindStates>> = {
  transfer: companyKind(
    TRANSFER_STATUSES,
    ['initiate_rejected_transfer', 'expired_transfer', 'approved_transfer', 'custody_rejected_transfer', 'chain_rejected_transfer'],
    'spec section 3, "Transfer tx status values"',
  ),
  withdrawal: companyKind(
    WITHDRAWAL_STATUSES,
    ['initiate_rejected_withdrawal', 'expired_withdrawal', 'approved_withdrawal', 'custody_rejected_withdrawal', 'chain_rejected_withdrawal'],
    'spec section 3, "Withdrawal tx status values"',
  ),
  swapMake: companyKind(
    // taker_pending: approved by the maker's custodians, open for a taker; not final (the quote
    // settles with a taker, or expires, or is cancelled).
    SWAP_STATUSES,
    ['approved_swap', 'custody_rejected_swap', 'expired_swap', 'cancelled_swap'],
    'not shown by the spec (only taker_pending, section 3); the built-in simulator\'s values (simulator/swaps.ts)',
  ),
  swapTake: companyKind(
    SWAP_TAKE_STATUSES,
    ['approved_swap_take', 'custody_rejected_swap_take', 'expired_swap_take', 'cancelled_swap_take'],
    'not shown by the spec; the built-in simulator\'s values (simulator/swaps.ts)',
  ),
  sweep: {
    // The simulator settles a sweep at once; no pending value is known.
    statuses: ['approved_sweep'],
    final: ['approved_sweep'],
    owner: 'client_id',
    statusField: 'tx_status',
    source: 'not shown by the spec ("Sweep tx_status values: not shown"); the built-in simulator\'s value (simulator/exchanges.ts)',
  },
};

/**
 * Whether `status` is final for `kind`: one of the kind's final values, or a final short value
 * (`approved`, `rejected`, `expired`). An unknown status is not final.
 * @param kind the transaction kind.
 * @param status the status as read (`txStatus`, or `tx_status` for sweeps).
 * @returns true when nothing more will happen to the transaction.
 */
export function isFinalState(kind: TransactionKind, status: string | undefined): boolean {
  if (typeof status !== 'string' || !isTransactionKind(kind)) return false;
  return TRANSACTION_STATES[kind].final.includes(status) || SHORT_FINAL_STATUSES.includes(status);
}
