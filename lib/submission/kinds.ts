/**
 * What differs between the money-moving calls of the submission journal (spec section 4;
 * section 2 "Ledger entry"): one table, read by the journal's keys, the sending, the look-up and
 * the nodes, so none of them spells a kind's fields again.
 */
import type { SubmissionKind, SubmissionRef } from '../errors';
// Types only: lib/v1 imports lib/operation, which imports this module.
import type { TransactionKind } from '../v1/states';

/** How one money-moving call is named and found. */
export interface SubmissionKindInfo {
  /** The transaction it makes, as lib/v1/states.ts names it (its GET, its owner path id). */
  transaction: TransactionKind;
  /** The path id that owns it: `company_id`, or `client_id` (the exchange core client) for sweeps; the same as `TRANSACTION_STATES[transaction].owner` (test/submission.test.ts checks it). */
  owner: 'company_id' | 'client_id';
  /** The body field naming the wallet that pays. */
  payingWallet: 'wallet_id' | 'send_wallet_id';
  /** Ledger entry types it leaves on the paying wallet (OpenAPI TxHistoryItem names). */
  ledgerTypes: readonly string[];
}

/** Every {@link SubmissionKind}: POST transfer, withdraw, atomicswap/make, atomicswap/take, coreclient sweep. */
export const SUBMISSION_KINDS: Readonly<Record<SubmissionKind, SubmissionKindInfo>> = {
  transfer: { transaction: 'transfer', owner: 'company_id', payingWallet: 'wallet_id', ledgerTypes: ['transferOut'] },
  withdraw: { transaction: 'withdrawal', owner: 'company_id', payingWallet: 'wallet_id', ledgerTypes: ['withdraw'] },
  swapMake: { transaction: 'swapMake', owner: 'company_id', payingWallet: 'send_wallet_id', ledgerTypes: ['swapOut'] },
  swapTake: { transaction: 'swapTake', owner: 'company_id', payingWallet: 'send_wallet_id', ledgerTypes: ['swapOut'] },
  sweep: { transaction: 'sweep', owner: 'client_id', payingWallet: 'wallet_id', ledgerTypes: ['transferOut'] },
};

/**
 * The reference of a payment: kind, owner path id and key.
 * @param kind the call; @param ids the call's path ids (the kind's owner is read); @param partnerTxId the key.
 */
export function submissionRef(kind: SubmissionKind, ids: { company_id?: unknown; client_id?: unknown }, partnerTxId: string): SubmissionRef {
  const owner = SUBMISSION_KINDS[kind].owner;
  return { kind, partner_txID: partnerTxId, [owner]: String(ids[owner] ?? '') };
}

/** The owner id of a payment: its `client_id` for a sweep, else its `company_id` (empty when absent). */
export function ownerOf(ref: SubmissionRef): string {
  return ref[SUBMISSION_KINDS[ref.kind].owner] ?? '';
}
