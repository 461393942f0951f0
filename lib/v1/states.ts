/**
 * The states of the transactions a flow can follow (spec section 3 "States and transitions"),
 * written once: per kind its status values, which of them are final, the GET operation that
 * reads it and where its answer keeps the status and `expires`.
 *
 * Sources:
 * - transfers and withdrawals: spec section 3 "Transfer tx status values", "Withdrawal tx status
 *   values" (field `txStatus` of the Transaction object, spec section 2);
 * - the short values `pending`, `approved`, `rejected`, `expired` of the walkthrough (spec
 *   section 3, "The walkthrough example ... also shows short values of txStatus"), accepted for
 *   every kind;
 * - swap quotes (make), swap takes and sweeps: the spec does not show their status values
 *   ("Sweep tx_status values: not shown"; only `taker_pending` is named, on the liquidity hub
 *   feed). The names below are the built-in simulator's (simulator/swaps.ts, simulator/state.ts
 *   `SwapStatus`, `SwapTakeStatus`; simulator/exchanges.ts `approved_sweep`). The hosted service
 *   may use others: an unknown status is never final, so tracking goes on until the
 *   transaction's `expires` plus the margin and then reports a timeout with the last status seen.
 */
import type { CustodyClient, ApiResponse } from '../client';
import { getTransfer, TRANSFER_STATUSES } from './transfer';
import { getWithdraw, WITHDRAWAL_STATUSES } from './withdraw';
import { getSwapMake, getSwapTake, SWAP_STATUSES, SWAP_TAKE_STATUSES } from './swap';
import { getSweep } from './sweep';

/**
 * The kinds of transaction that can be followed: `transfer` and `withdrawal` (spec section 3),
 * `swapMake` (a swap quote, the maker's transaction), `swapTake` (the taker's transaction),
 * `sweep` (an exchange core client's sweep).
 */
export type TransactionKind = 'transfer' | 'withdrawal' | 'swapMake' | 'swapTake' | 'sweep';

/** Every {@link TransactionKind}, in the order the editor lists them. */
export const TRANSACTION_KINDS: readonly TransactionKind[] = ['transfer', 'withdrawal', 'swapMake', 'swapTake', 'sweep'];

/** The path ids that name a transaction of a kind: `company_id` for all kinds but sweeps, `client_id` (the exchange core client) for sweeps; always `tx_id`. */
export interface TransactionIds {
  tx_id: string;
  company_id?: string;
  client_id?: string;
}

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
  /**
   * Read one transaction of the kind with its lib GET operation (the operation's own TSDoc
   * gives its source: spec section 4 or OpenAPI path).
   * @throws {ValidationError} for a missing or malformed path id; {ApiError} on a non-2xx answer.
   */
  read(client: CustodyClient, ids: TransactionIds): Promise<ApiResponse<unknown>>;
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
 * @param get the kind's lib GET operation (getTransfer, getWithdraw, getSwapMake, getSwapTake).
 * @param source where the status values come from.
 */
function companyKind(statuses: readonly string[], final: readonly string[], get: (client: CustodyClient, ids: { company_id: string; tx_id: string }) => Promise<ApiResponse<unknown>>, source: string): KindStates {
  return { statuses, final, owner: 'company_id', statusField: 'txStatus', read: (client, ids) => get(client, { company_id: ids.company_id as string, tx_id: ids.tx_id }), source };
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
    getTransfer,
    'spec section 3, "Transfer tx status values"',
  ),
  withdrawal: companyKind(
    WITHDRAWAL_STATUSES,
    ['initiate_rejected_withdrawal', 'expired_withdrawal', 'approved_withdrawal', 'custody_rejected_withdrawal', 'chain_rejected_withdrawal'],
    getWithdraw,
    'spec section 3, "Withdrawal tx status values"',
  ),
  swapMake: companyKind(
    // taker_pending: approved by the maker's custodians, open for a taker; not final (the quote
    // settles with a taker, or expires, or is cancelled).
    SWAP_STATUSES,
    ['approved_swap', 'custody_rejected_swap', 'expired_swap', 'cancelled_swap'],
    getSwapMake,
    'not shown by the spec (only taker_pending, section 3); the built-in simulator\'s values (simulator/swaps.ts)',
  ),
  swapTake: companyKind(
    SWAP_TAKE_STATUSES,
    ['approved_swap_take', 'custody_rejected_swap_take', 'expired_swap_take', 'cancelled_swap_take'],
    getSwapTake,
    'not shown by the spec; the built-in simulator\'s values (simulator/swaps.ts)',
  ),
  sweep: {
    // The simulator settles a sweep at once; no pending value is known.
    statuses: ['approved_sweep'],
    final: ['approved_sweep'],
    owner: 'client_id',
    statusField: 'tx_status',
    read: (client, ids) => getSweep(client, { client_id: ids.client_id as string, tx_id: ids.tx_id }),
    source: 'not shown by the spec ("Sweep tx_status values: not shown"); the built-in simulator\'s value (simulator/exchanges.ts)',
  },
};

/** True when `kind` is a {@link TransactionKind}. */
export function isTransactionKind(kind: unknown): kind is TransactionKind {
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(TRANSACTION_STATES, kind);
}

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

/** One read of a transaction: the GET answer and what it says. */
export interface TransactionRead {
  /** The parsed GET answer, as received. */
  answer: Record<string, unknown>;
  /** The HTTP status of the answer. */
  statusCode: number;
  /** The status (`txStatus`, `tx_status` for sweeps); undefined when the answer has none. */
  status?: string;
  /** The transaction's `expires`, epoch seconds; undefined when the answer has none. */
  expires?: number;
  /** {@link isFinalState} of `status`. */
  final: boolean;
}

/**
 * Read a transaction of `kind` with the kind's lib GET operation (getTransfer, getWithdraw,
 * getSwapMake, getSwapTake, getSweep) and pick out its status and `expires`.
 * @param client the signed client.
 * @param kind the transaction kind.
 * @param ids `tx_id` and the kind's owner id (`company_id`, or `client_id` for sweeps).
 * @throws {ValidationError} for a missing or malformed path id (nothing sent).
 * @throws {ApiError} on a non-2xx answer (404 for an unknown transaction) or no answer.
 */
export async function readTransaction(client: CustodyClient, kind: TransactionKind, ids: TransactionIds): Promise<TransactionRead> {
  const states = TRANSACTION_STATES[kind];
  const res = await states.read(client, ids);
  const answer = (res.data && typeof res.data === 'object' ? res.data : {}) as Record<string, unknown>;
  const status = typeof answer[states.statusField] === 'string' ? (answer[states.statusField] as string) : undefined;
  const expiresValue = Number(answer.expires);
  const expires = Number.isFinite(expiresValue) && expiresValue > 0 ? expiresValue : undefined;
  return { answer, statusCode: res.statusCode, status, expires, final: isFinalState(kind, status) };
}
