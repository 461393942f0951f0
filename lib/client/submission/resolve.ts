/**
 * Resolving a payment whose outcome is unknown (docs/nodes.md "Money safety"): look the transaction up instead of
 * sending it blindly again. Sources: spec section 2 "Ledger entry" (TxID, timestamp, status,
 * type, amount, netAmount, reference), section 4 read-only subset (GET /funds/, GET
 * /funds/{fund_id}/ledger, GET /wallets/{wallet_id}/history) and the kinds' GETs.
 *
 * {@link resolveSubmission} finds the fund of the paying wallet (GET /funds/), reads that
 * wallet's outgoing ledger entries (pending ones included) and its history since the first
 * attempt, and keeps the entries of the payment's kind whose `reference` and amount match and
 * whose `TxID` no other journaled payment holds. History items (which carry no reference) are
 * confirmed by reading their transaction. One match: found (recorded in the journal: later
 * requests with the key are answered with that `tx_id`). None: not found; once the payment's
 * `expires` has passed (plus {@link ResolveInput.skewSeconds}, default {@link RESOLVE_SKEW_SECONDS}), nothing can still appear, so the key
 * is freed. Several: ambiguous (the key stays held; the candidates are listed).
 */
import { ApiError, ValidationError } from '../../api/errors';
import type { CustodyClient } from '../client';
import { type OperationDescription } from '../../request/prepare';
import { readOperations } from '../../api/v1/read';
import type { LedgerEntry, WalletHistory } from '../../api/v1/fund';
import { SUBMISSION_KINDS, submissionRef, type SubmissionRef, type TransactionKind } from '../../api/kinds';
import type { JournalState, PaymentJournal } from './journal';
import { callOperation } from '../call';
import { readTransaction } from '../read-transaction';

/** Seconds of clock difference allowed between this client and the service when comparing times. */
export const RESOLVE_SKEW_SECONDS = 120;

/** What to look up. */
export interface ResolveInput extends SubmissionRef {
  /**
   * The request's fields, for a payment the journal does not hold (another machine sent it, or
   * the journal was lost): the paying wallet (`wallet_id`, or `send_wallet_id` for swaps),
   * `reference`, `send.amount` (base units) and `expires`. Ignored when the journal holds the key.
   */
  body?: Record<string, unknown>;
  /** Look from this time (epoch seconds); default the journal's first attempt, else 24 hours ago. */
  since?: number;
  /** Clock difference allowed between client and service, seconds (default {@link RESOLVE_SKEW_SECONDS}). */
  skewSeconds?: number;
}

/** The answer of {@link resolveSubmission}. */
export interface ResolveResult {
  /** `found`: one transaction matches; `notFound`: none; `ambiguous`: several (see `candidates`). */
  result: 'found' | 'notFound' | 'ambiguous';
  kind: TransactionKind;
  company_id?: string;
  client_id?: string;
  partner_txID: string;
  /** The transaction's id when found. */
  tx_id?: string;
  /** The matching transaction ids when ambiguous. */
  candidates?: string[];
  /** True when the key was freed: not found after the payment's `expires`; a new request with it will be sent. */
  keyFreed: boolean;
  /** The journal's state of the key before this lookup, or `none`. */
  journal: JournalState | 'none';
  /** The payment's `expires` (epoch seconds; 0 when unknown). */
  expires: number;
  /** The time the lookup started from (epoch seconds). */
  since: number;
  /** What it means, in words. */
  note: string;
}

/** The `reference` of a transaction as its GET answers it (Transaction `reference`, sweep `reference`, nested details). */
function referenceOf(data: unknown): string | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  for (const v of [d.reference, (d.statusDetails as Record<string, unknown> | undefined)?.reference, (d.status_details as Record<string, unknown> | undefined)?.reference]) {
    if (typeof v === 'string') return v;
  }
  return undefined;
}

/** A wallet of a fund as GET /funds/ lists it. */
interface ListedFund {
  fund_id: string;
  company_id?: string;
  wallets?: Array<{ wallet_id?: string; short_code?: string }>;
}

/**
 * Look a payment up and record what was found in the journal (see the module comment).
 * @param client the signed client (reads only: nothing is sent that could move money).
 * @param input the payment, and its fields when the journal does not hold it.
 * @param journal the submission journal, when there is one (a file, or one shared through Redis).
 * @throws what the journal's reads throw (rejects), e.g. a shared journal's `CoordinationUnavailableError`.
 * @returns found (with `tx_id`), not found (`keyFreed` once past `expires`) or ambiguous.
 * @throws {ValidationError} `partner_txID` when neither the journal nor `input.body` says which
 *   wallet paid; `wallet_id` when no fund of the account holds that wallet.
 * @throws {ApiError} when a read fails, a history item's transaction read included (only a
 *   refusal, e.g. 404 for a transaction of another kind, rules an item out); the journal is then
 *   left as it was.
 */
export async function resolveSubmission(client: CustodyClient, input: ResolveInput, journal?: PaymentJournal): Promise<ResolveResult> {
  const info = SUBMISSION_KINDS[input.kind];
  const ref: SubmissionRef = submissionRef(input.kind, input, input.partner_txID);
  const now = Math.floor(Date.now() / 1000);
  const entry = await journal?.get(ref);
  const state: ResolveResult['journal'] = entry?.state ?? 'none';
  const body = entry?.body ?? input.body;
  const expires = Number((body as { expires?: unknown } | undefined)?.expires) || 0;
  const since = input.since ?? entry?.firstAttempt ?? now - 24 * 3600;
  const base = { ...ref, journal: state, expires, since };

  if (entry && (entry.state === 'answered' || entry.state === 'found') && entry.tx_id) {
    return { ...base, result: 'found', tx_id: entry.tx_id, keyFreed: false, note: `the journal holds its answer: ${entry.tx_id}` };
  }
  const walletField = info.payingWallet;
  const wallet = body?.[walletField];
  if (!body || typeof wallet !== 'string' || !wallet) {
    throw new ValidationError('partner_txID', `${JSON.stringify(ref.partner_txID)} is not in the submission journal: give ${walletField}, reference and send.amount (and since) to look it up`);
  }
  const reference = typeof body.reference === 'string' ? body.reference : '';
  const send = body.send as { amount?: unknown } | undefined;
  const amount = typeof send?.amount === 'number' ? send.amount : undefined;
  const skew = input.skewSeconds ?? RESOLVE_SKEW_SECONDS;
  const from = since - skew;

  // The paying wallet's fund (ids or short codes are both accepted in payments: spec section 2).
  const funds = await callOperation<{ list?: ListedFund[] }>(client, readOperations.funds, {});
  const fund = (funds.data.list ?? []).find((f) => (f.wallets ?? []).some((w) => w.wallet_id === wallet || w.short_code === wallet));
  if (!fund) throw new ValidationError(walletField, `no fund of this account holds wallet ${JSON.stringify(wallet)}`);
  const walletId = fund.wallets!.find((w) => w.wallet_id === wallet || w.short_code === wallet)!.wallet_id!;

  const amountMatches = (gross: number, net: number) => amount === undefined || Math.abs(net) === amount || Math.abs(gross) === amount;
  const free = async (txId: string) => {
    const holder = await journal?.holderOf(txId);
    return !holder || holder === entry?.key;
  };
  const found = new Set<string>();
  const ledger = await callOperation<{ List?: LedgerEntry[] }>(client, readOperations.fundLedger, { fund_id: fund.fund_id, wallet_id: walletId, direction: 'out' });
  for (const e of ledger.data.List ?? []) {
    if (!e.TxID || e.timestamp < from || !info.ledgerTypes.includes(e.type)) continue;
    if (e.reference !== reference || !amountMatches(e.amount, e.netAmount) || !(await free(e.TxID))) continue;
    found.add(e.TxID);
  }
  // History items carry no reference: confirm each new one by reading its transaction.
  const history = await callOperation<WalletHistory>(client, readOperations.walletHistory, { wallet_id: walletId, since: Math.max(0, from) });
  for (const h of history.data.history ?? []) {
    if (!h.tx_id || found.has(h.tx_id) || h.timestamp < from || h.amount > 0 || !amountMatches(h.amount, h.net_amount) || !(await free(h.tx_id))) continue;
    let tx;
    try {
      tx = await readTransaction(client, info.transaction, { ...ref, tx_id: h.tx_id });
    } catch (e) {
      // Refused (a 404: not a transaction of this kind): not a candidate. Any other failure
      // (a timeout, a 5xx) says nothing about it: the lookup fails and the journal stays as it
      // was, rather than "not found" freeing the key of a payment that may exist.
      if (e instanceof ApiError && e.failure === 'refused') continue;
      throw e;
    }
    if (referenceOf(tx.answer) === reference) found.add(h.tx_id);
  }

  const candidates = [...found];
  if (candidates.length === 1) {
    if (entry) await journal!.found(entry, candidates[0]);
    return { ...base, result: 'found', tx_id: candidates[0], keyFreed: false, note: `found ${candidates[0]}: requests with this partner_txID are answered with it` };
  }
  if (candidates.length > 1) {
    return { ...base, result: 'ambiguous', candidates, keyFreed: false, note: `${candidates.length} transactions match reference ${JSON.stringify(reference)} and the amount: the key stays held; check them and use a unique reference per payment` };
  }
  const over = expires > 0 && now > expires + skew;
  if (over && entry) await journal!.free(entry, 'notFound');
  return {
    ...base,
    result: 'notFound',
    keyFreed: over && Boolean(entry),
    note: over
      ? 'not found after its expires: it was never made; the key is free, a new request with it will be sent'
      : `not found yet; the key stays held until its expires (${expires ? new Date((expires + skew) * 1000).toISOString() : 'unknown'}): resolve again after that to free it`,
  };
}

/**
 * The look-up a node's `resolve` operation makes, from a msg's fields: the kind's owner id
 * (`company_id`, `client_id` for sweeps) and `partner_txID` are required; `since` (epoch
 * seconds) is optional; the rest is the request's body for a key the journal does not hold.
 * @param kind the money-moving call; @param fields the msg's resolved fields (editor over `msg.payload`).
 * @throws {ValidationError} naming the owner id or `partner_txID` when missing, `since` when not epoch seconds.
 */
export function resolveInputFrom(kind: TransactionKind, fields: Record<string, unknown>): ResolveInput {
  const owner = SUBMISSION_KINDS[kind].owner;
  const ownerId = fields[owner];
  if (typeof ownerId !== 'string' || !ownerId.trim()) throw new ValidationError(owner, 'required');
  const key = fields.partner_txID;
  if (typeof key !== 'string' || !key.trim()) throw new ValidationError('partner_txID', 'required: the key of the payment to look up');
  const since = fields.since === undefined ? undefined : Number(fields.since);
  if (since !== undefined && !(Number.isInteger(since) && since >= 0)) throw new ValidationError('since', 'must be epoch seconds (a non-negative integer)');
  return { ...submissionRef(kind, fields, key), body: fields, since };
}

/**
 * What an editor shows of the `resolve` look-up of a kind, in the shape of
 * `describeOperation`: its calls (reads only), the fields it reads and the required ones.
 */
export function describeResolve(kind: TransactionKind): OperationDescription {
  const { owner, payingWallet } = SUBMISSION_KINDS[kind];
  return {
    call: 'GET /funds/, GET /funds/{fund_id}/ledger, GET /wallets/{wallet_id}/history (a look-up: reads only)',
    fields: [owner, 'partner_txID', payingWallet, 'reference', 'send.amount', 'expires', 'since'],
    required: [owner, 'partner_txID'],
    amounts: false,
    expires: false,
  };
}
