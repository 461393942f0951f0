/**
 * The facts of an action as the rules read them ({@link actionFacts}), and the decision records
 * made without rules: a bare one ({@link bareDecision}) and the mark of an action that expired
 * before it could be approved ({@link markExpired}). Pure: no call, no clock of its own.
 */
import type { ActionFacts, Decision } from './rules';
import type { ApproverMode, DecisionRecord } from './types';

/** A non-empty string, or a number as text; undefined otherwise. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** An integer amount in base units from a JSON number or digit text; undefined otherwise. */
function baseUnits(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

/**
 * The facts the rules read, from an action and its details (spec section 2 detail fields;
 * OpenAPI ActionDetailApproveTransfer names the destination `recipientID`; a wallet connection
 * request's details carry `wallet.walletID`, OpenAPI ActionDetailApproveNewWalletConnect).
 */
export function actionFacts(action: Record<string, unknown>, clientId: string): ActionFacts {
  const details = action.details && typeof action.details === 'object' ? (action.details as Record<string, unknown>) : undefined;
  const d = details ?? {};
  const wallet = d.wallet && typeof d.wallet === 'object' ? (d.wallet as Record<string, unknown>) : {};
  return {
    action_id: String(action.action_id ?? action.id),
    client_id: clientId,
    type: str(action.type) ?? '',
    expireTime: Number(action.expireTime) || 0,
    asset: str(d.asset) ?? str(wallet.asset),
    amount: baseUnits(d.amount),
    destination: str(d.recipientAddress) ?? str(d.recipientID),
    companyID: str(d.companyID),
    fundID: str(d.fundID),
    walletID: str(d.walletID) ?? str(d.wallet_id) ?? str(wallet.walletID),
    reference: typeof d.reference === 'string' ? d.reference : undefined,
    benefitOf: typeof d.benefitOf === 'string' ? d.benefitOf : undefined,
    expires: Number(d.expires) || undefined,
    hasDetails: details !== undefined,
  };
}

/**
 * A decision record with no facts beyond the ids (for an action that was not decided by rules).
 * @param nowMs the time of the decision, epoch ms.
 */
export function bareDecision(action: Record<string, unknown>, clientId: string, actionId: string, decision: Decision, reasons: string[], mode: ApproverMode, nowMs: number): DecisionRecord {
  return {
    decision,
    rule: null,
    reasons,
    action_id: actionId,
    client_id: clientId,
    type: str(action.type) ?? '',
    asset: null,
    amount: null,
    amountDecimal: null,
    destination: null,
    velocity: null,
    mode,
    decidedAt: new Date(nowMs).toISOString(),
    ...(Number(action.expireTime) >= 0 && action.expireTime !== undefined ? { expireTime: Number(action.expireTime) } : {}),
  };
}

/**
 * When the action can no longer be approved (its `expireTime`, or its transaction's `expires`,
 * epoch seconds, is past): mark `decision` expired with the reason.
 * @param nowMs the time now, epoch ms.
 * @returns true when it did.
 */
export function markExpired(decision: DecisionRecord, facts: ActionFacts, nowMs: number): boolean {
  const now = nowMs / 1000;
  let reason: string | undefined;
  if (facts.expireTime > 0 && facts.expireTime <= now) reason = `expired: the action expired at ${new Date(facts.expireTime * 1000).toISOString()}: not approved`;
  else if (facts.expires !== undefined && facts.expires > 0 && facts.expires <= now) reason = `expired: the transaction expired at ${new Date(facts.expires * 1000).toISOString()}: not approved`;
  if (!reason) return false;
  decision.expired = true;
  decision.reasons.push(reason);
  return true;
}
