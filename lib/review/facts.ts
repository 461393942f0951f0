/**
 * What a reviewer sees of a held action (docs/nodes.md "custody-review"): where the money goes,
 * where it comes from, net, fee and gross, and the action's own words (spec section 2 "Action"
 * detail fields). Pure: no I/O.
 */
import type { Review } from './store';

/**
 * The facts a reviewer decides on, from the action's details (spec section 2 "Action" detail
 * fields), as `GET /custody/reviews` gives them.
 */
export interface ReviewFacts {
  /** Asset code of the amounts. */
  asset?: string;
  /** Net amount (what the destination receives), fee and gross (net plus fee: what leaves the source), decimal units of `asset`. */
  net?: string;
  fee?: string;
  gross?: string;
  /**
   * Where the money goes: `details.recipientAddress`, an L2 wallet id or short code for a transfer,
   * a swap take or a sweep (`wallet`), an L1 address for a withdrawal (`address`); `name`:
   * `details.recipientAddressName` (the recipient company, or the whitelist entry).
   */
  destination: { kind: 'wallet' | 'address' | 'unknown'; value: string; name?: string };
  /** Where it comes from: `details.fundID` (and a wallet id when the details name one). */
  source: { fundID?: string; walletID?: string };
  reference?: string;
  benefitOf?: string;
  accountNo?: string;
  /** `initiatorName`, with `initiatedBy` in brackets when both are known. */
  initiator?: string;
}

/** The facts a reviewer decides on, from a review's details and amounts (see {@link ReviewFacts}). */
export function factsOf(r: Review): ReviewFacts {
  const d = r.details;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
  const txType = str(d.txType) ?? '';
  const kind = txType === 'withdrawal' ? 'address' : ['transfer', 'swapTake', 'sweep'].includes(txType) ? 'wallet' : 'unknown';
  const name = str(d.recipientAddressName);
  const initiator = [str(d.initiatorName) ?? r.initiatorName, str(d.initiatedBy) ?? r.initiatedBy].filter(Boolean);
  const walletID = str(d.walletID) ?? str(d.wallet_id);
  return {
    ...(r.amounts ? r.amounts : r.amount ? { asset: r.amount.asset, net: r.amount.decimal } : {}),
    destination: { kind, value: str(d.recipientAddress) ?? '', ...(name ? { name } : {}) },
    source: { ...(str(d.fundID) ? { fundID: str(d.fundID) } : {}), ...(walletID ? { walletID } : {}) },
    ...(str(d.reference) ? { reference: str(d.reference) } : {}),
    ...(str(d.benefitOf) ? { benefitOf: str(d.benefitOf) } : {}),
    ...(str(d.accountNo) ? { accountNo: str(d.accountNo) } : {}),
    ...(initiator.length ? { initiator: initiator.length === 2 && initiator[0] !== initiator[1] ? `${initiator[0]} (${initiator[1]})` : String(initiator[0]) } : {}),
  };
}

/** A review as the admin API and the sidebar show it: with its distinct approvals so far and its {@link ReviewFacts}. */
export type ReviewView = Review & { approvals: number; facts: ReviewFacts };

/** `r` as the admin API and the sidebar show it. */
export function viewOf(r: Review): ReviewView {
  return { ...r, approvals: new Set(r.votes.filter((v) => v.decision === 'approve').map((v) => v.reviewer.toLowerCase())).size, facts: factsOf(r) };
}
