/**
 * Reading a transaction of any money-moving kind (lib/api/kinds.ts) with the kind's GET
 * operation, and what its answer says against the kind's states (spec section 3 "States and
 * transitions", lib/api/states.ts).
 */
import { CustodyClient } from './client';
import type { TransactionIds, TransactionKind } from '../api/kinds';
import type { ApiResponse } from './transport';
import { getTransfer } from './v1/transfer';
import { getWithdraw } from './v1/withdraw';
import { getSwapMake, getSwapTake } from './v1/swap';
import { getSweep } from './v1/sweep';
import { TRANSACTION_STATES, isFinalState } from '../api/states';

/** A kind's read: its GET operation with the kind's owner path id and `tx_id`. */
type Read = (client: CustodyClient, ids: TransactionIds) => Promise<ApiResponse<unknown>>;

/** Each kind's GET operation (the operation's own TSDoc gives its source: spec section 4 or OpenAPI path). */
const READS: Readonly<Record<TransactionKind, Read>> = {
  transfer: (client, ids) => getTransfer(client, { company_id: ids.company_id as string, tx_id: ids.tx_id }),
  withdrawal: (client, ids) => getWithdraw(client, { company_id: ids.company_id as string, tx_id: ids.tx_id }),
  swapMake: (client, ids) => getSwapMake(client, { company_id: ids.company_id as string, tx_id: ids.tx_id }),
  swapTake: (client, ids) => getSwapTake(client, { company_id: ids.company_id as string, tx_id: ids.tx_id }),
  sweep: (client, ids) => getSweep(client, { client_id: ids.client_id as string, tx_id: ids.tx_id }),
};

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
  const res = await READS[kind](client, ids);
  const answer = (res.data && typeof res.data === 'object' ? res.data : {}) as Record<string, unknown>;
  const status = typeof answer[states.statusField] === 'string' ? (answer[states.statusField] as string) : undefined;
  const expiresValue = Number(answer.expires);
  const expires = Number.isFinite(expiresValue) && expiresValue > 0 ? expiresValue : undefined;
  return { answer, statusCode: res.statusCode, status, expires, final: isFinalState(kind, status) };
}
