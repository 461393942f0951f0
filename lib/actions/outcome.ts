/**
 * What became of an approve (PUT) or reject
 * (DELETE) call of `/coreclient/{client_id}/action/{action_id}` whose answer never came (a
 * timeout, a reset, a 5xx, the client closed by a redeploy while the request was in flight: an
 * ApiError whose `failure` is `outcomeUnknown`, lib/api/errors.ts). Such a call is never counted as
 * failed: the action is read (GET /coreclient/{client_id}/action/{action_id}, spec section 4;
 * statuses pending, expired, approved, rejected, spec section 3) and, for a transfer or a
 * withdrawal, its transaction too (GET /company/{company_id}/transfer|withdraw/{tx_id}: the
 * Transaction object's `approvers[]` name the action by `actionID` with its `status`, spec
 * section 2), until the answer is definite. A decision that did not take effect, or whose
 * outcome is still unknown after a while, comes back with {@link ActionNotAppliedError} or
 * lib/api/errors.ts `OutcomeUnknownError` (made for the action call: an `ActionCallRef`).
 */
import type { CustodyClient } from '../client/client';
import { ApiError } from '../api/errors';
import { getAction } from '../client/v1/core-client';
import { readTransaction } from '../client/read-transaction';

/** What a call on a core client action asks: approve (PUT) or reject (DELETE), spec section 4. */
export type ActionVerdict = 'approve' | 'reject';

/**
 * What a call that decides an action led to: `applied` (the API did what the decision asked),
 * `notApplied` (definitely not: refused, not sent, or read back as not done), `unknown` (not
 * known yet: still being resolved).
 */
export type CallOutcome = 'applied' | 'notApplied' | 'unknown';

/** One reading of an action whose call's outcome is unknown (see {@link readCallOutcome}). */
export interface OutcomeReading {
  /** `applied` / `notApplied`: definite; `pending`: the action is still pending (definite only once the call is surely over). */
  outcome: 'applied' | 'notApplied' | 'pending';
  /** The action's status as read (`pending`, `expired`, `approved`, `rejected`), or '' when it could not be read. */
  status: string;
  /** The transaction's status (`txStatus`), when it was read. */
  txStatus?: string;
  /** Why, in words. */
  why: string;
}

/** The transaction kinds whose GET answer names the approving actions (`approvers[].actionID`). */
const TX_KIND: Record<string, 'transfer' | 'withdrawal'> = { transfer: 'transfer', withdrawal: 'withdrawal' };

/**
 * Read what became of `decision`'s call on action `action_id` of core client `client_id`.
 * @param details the action's `details` when known (`txType`, `txID`, `companyID`: the
 *   transaction is read too when the action is still pending).
 * @returns the reading; an action approved when the decision was to approve (or rejected when it
 *   was to reject) is `applied`; one decided the other way or expired is `notApplied`.
 * @throws {ApiError} when the action cannot be read (any failure of its GET): the reading is
 *   then still unknown; the caller tries again later. A failed read of the transaction is not
 *   thrown: the action's own status stands.
 */
export async function readCallOutcome(
  client: CustodyClient,
  ids: { client_id: string; action_id: string },
  decision: ActionVerdict,
  details?: Record<string, unknown>,
): Promise<OutcomeReading> {
  const wanted = decision === 'approve' ? 'approved' : 'rejected';
  const status = String((await getAction(client, ids)).data.status ?? '');
  if (status === wanted) return { outcome: 'applied', status, why: `the action is ${status}` };
  if (status === 'approved' || status === 'rejected') return { outcome: 'notApplied', status, why: `the action is ${status}: decided otherwise, not by this call` };
  if (status === 'expired') return { outcome: 'notApplied', status, why: 'the action expired before the call took effect' };
  const kind = TX_KIND[String(details?.txType ?? '')];
  const txId = details?.txID;
  const companyId = details?.companyID;
  if (kind && typeof txId === 'string' && typeof companyId === 'string') {
    try {
      const tx = await readTransaction(client, kind, { tx_id: txId, company_id: companyId });
      const approvers = Array.isArray(tx.answer.approvers) ? (tx.answer.approvers as Array<Record<string, unknown>>) : [];
      const mine = approvers.find((a) => a && a.actionID === ids.action_id);
      if (mine && mine.status === wanted) return { outcome: 'applied', status, txStatus: tx.status, why: `the ${kind} lists the action as ${wanted}` };
      return { outcome: 'pending', status, txStatus: tx.status, why: `the action is pending (the ${kind} is ${tx.status ?? 'without a status'})` };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
  }
  return { outcome: 'pending', status, why: 'the action is still pending' };
}

/**
 * A call that decided an action did not take effect, as found by reading the action after its
 * outcome was unknown (the action expired, or was decided otherwise, or stayed pending). `code`
 * is `ENOTAPPLIED`; `cause` `{outcome: 'notApplied', status, why}`.
 */
export class ActionNotAppliedError extends Error {
  override name = 'ActionNotAppliedError';
  /** Always `ENOTAPPLIED`. */
  readonly code = 'ENOTAPPLIED';
  constructor(message: string, override readonly cause: { outcome: 'notApplied'; status: string; why: string }) {
    super(message);
  }
}
