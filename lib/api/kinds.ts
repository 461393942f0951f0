/**
 * The money-moving kinds of transaction, one name each, the spec's (section 3 "States and
 * transitions", section 4): a transfer, a withdrawal, a swap quote made (`swapMake`), a swap
 * taken (`swapTake`), an exchange core client's sweep. One table says what differs between them
 * (their owner path id, the wallet that pays, the ledger entries they leave), read by the
 * submission journal's keys, the sending, the look-up, the tracking and the nodes, so none of
 * them spells a kind's fields again.
 */
/**
 * A money-moving kind of transaction: `transfer` and `withdrawal` (spec section 3), `swapMake` (a
 * swap quote, the maker's transaction), `swapTake` (the taker's transaction), `sweep` (an exchange
 * core client's sweep). Each is made by one POST (transfer, withdraw, atomicswap/make,
 * atomicswap/take, coreclient sweep; spec section 4) and read by one GET.
 */
export type TransactionKind = 'transfer' | 'withdrawal' | 'swapMake' | 'swapTake' | 'sweep';

/** Every {@link TransactionKind}, in the order the editor lists them. */
export const TRANSACTION_KINDS: readonly TransactionKind[] = ['transfer', 'withdrawal', 'swapMake', 'swapTake', 'sweep'];

/** True when `kind` is a {@link TransactionKind}. */
export function isTransactionKind(kind: unknown): kind is TransactionKind {
  return typeof kind === 'string' && (TRANSACTION_KINDS as readonly string[]).includes(kind);
}

/** The path ids that name a transaction of a kind: `company_id` for all kinds but sweeps, `client_id` (the exchange core client) for sweeps; always `tx_id`. */
export interface TransactionIds {
  tx_id: string;
  company_id?: string;
  client_id?: string;
}

/** Who a submission belongs to: the path id of its call and the key the caller chose. */
export interface SubmissionRef {
  /** The money-moving call. */
  kind: TransactionKind;
  /** `company_id` of the call (every kind but `sweep`). */
  company_id?: string;
  /** `client_id` of the call (`sweep`). */
  client_id?: string;
  /** The caller's key of this payment. */
  partner_txID: string;
}

/** How one money-moving call is named and found. */
export interface SubmissionKindInfo {
  /** The transaction it makes (its GET, its owner path id): the kind itself. */
  transaction: TransactionKind;
  /** The path id that owns it: `company_id`, or `client_id` (the exchange core client) for sweeps; the same as `TRANSACTION_STATES[transaction].owner` (lib/api/states.ts). */
  owner: 'company_id' | 'client_id';
  /** The body field naming the wallet that pays. */
  payingWallet: 'wallet_id' | 'send_wallet_id';
  /** Ledger entry types it leaves on the paying wallet (OpenAPI TxHistoryItem names). */
  ledgerTypes: readonly string[];
}

/** Every money-moving call by its {@link TransactionKind}: POST transfer, withdraw, atomicswap/make, atomicswap/take, coreclient sweep. */
export const SUBMISSION_KINDS: Readonly<Record<TransactionKind, SubmissionKindInfo>> = {
  transfer: { transaction: 'transfer', owner: 'company_id', payingWallet: 'wallet_id', ledgerTypes: ['transferOut'] },
  withdrawal: { transaction: 'withdrawal', owner: 'company_id', payingWallet: 'wallet_id', ledgerTypes: ['withdraw'] },
  swapMake: { transaction: 'swapMake', owner: 'company_id', payingWallet: 'send_wallet_id', ledgerTypes: ['swapOut'] },
  swapTake: { transaction: 'swapTake', owner: 'company_id', payingWallet: 'send_wallet_id', ledgerTypes: ['swapOut'] },
  sweep: { transaction: 'sweep', owner: 'client_id', payingWallet: 'wallet_id', ledgerTypes: ['transferOut'] },
};

/**
 * The reference of a payment: kind, owner path id and key.
 * @param kind the call; @param ids the call's path ids (the kind's owner is read); @param partnerTxId the key.
 */
export function submissionRef(kind: TransactionKind, ids: { company_id?: unknown; client_id?: unknown }, partnerTxId: string): SubmissionRef {
  const owner = SUBMISSION_KINDS[kind].owner;
  return { kind, partner_txID: partnerTxId, [owner]: String(ids[owner] ?? '') };
}

/** The owner id of a payment: its `client_id` for a sweep, else its `company_id` (empty when absent). */
export function ownerOf(ref: SubmissionRef): string {
  return ref[SUBMISSION_KINDS[ref.kind].owner] ?? '';
}
