/**
 * The custody transactions (transfers, withdrawals, swap quotes, swap takes) and the custodians'
 * actions (spec sections 2 "Transaction object", "Action", 3 "States and transitions", 4
 * "Withdrawals", "Atomic swaps and liquidity hub"). Amounts are base units, times epoch seconds
 * of the business clock.
 */
import type { ApproverRecord, TransferStatus } from '../../lib/api/v1/transfer';
import type { WithdrawalStatus } from '../../lib/api/v1/withdraw';
import type { SwapStatus, SwapTakeStatus } from '../../lib/api/v1/swap';
import type { TransactionKind } from '../../lib/api/kinds';

export type { ApproverRecord };

/**
 * The status values a simulated transaction carries in `txStatus`: lib's (spec section 3 for
 * transfers and withdrawals; lib/api/v1/swap.ts for swaps and takes), declared once there.
 */
export type { TransferStatus, WithdrawalStatus, SwapStatus, SwapTakeStatus };

/**
 * The kinds of custody transaction, which share the approval machinery (simulator/custody.ts): lib's
 * money-moving kinds (lib/api/kinds.ts `TransactionKind`, the same names) except `sweep`, which
 * settles at once without custody. State files of older simulators spelt `swapMake` `swap` and
 * `swapTake` `take`; the store maps them when it loads (simulator/upgrade.ts).
 */
export type CustodyKind = Exclude<TransactionKind, 'sweep'>;

export type { TransactionKind };

/**
 * What every custody transaction has (transfers, withdrawals, swap quotes, swap takes): an origin
 * wallet debited `amount` (= netAmount + fees) on settlement, a hold while pending, custodians
 * from a custody group of the origin wallet snapshotted at creation, one action per custodian.
 */
export interface CustodyTxRecord {
  /** absent in state files written before withdrawals existed: a transfer */
  kind?: CustodyKind;
  txID: string;
  company_id: string;
  fund_id: string;
  /** origin wallet */
  wallet_id: string;
  partner_txID: string;
  asset: string;
  /** base units the other side receives */
  netAmount: number;
  /** base units, see assets.ts for the rule */
  fees: number;
  /** gross base units taken from the origin wallet = netAmount + fees */
  amount: number;
  /** epoch seconds (business clock) */
  expires: number;
  initiatedTimestamp: number;
  reference: string;
  benefitOf: string;
  accountNo: string;
  thresholdRequired: number;
  /** trusted entity ids of the custody group at creation time */
  custodians: string[];
  /** action ids, one per custodian, same order as `custodians` */
  actionIDs: string[];
  approvals: ApproverRecord[];
  txStatus: string;
  /** epoch seconds when the status left pending, 0 while pending */
  finished: number;
  /** true while amount is reserved on the origin wallet */
  held: boolean;
}

/** A withdrawal to a whitelisted L1 address (spec sections 2, 3, 4 "Withdrawals"). */
export interface WithdrawalRecord extends CustodyTxRecord {
  kind: 'withdrawal';
  /** the whitelisted L1 address */
  address: string;
  /** the whitelist entry's name */
  addressName: string;
  /** chain transaction id once approved, '' before */
  chainTxID: string;
  txStatus: WithdrawalStatus;
}

/** An atomic swap quote made by a company (spec section 4 "Atomic swaps and liquidity hub"). */
export interface SwapRecord extends CustodyTxRecord {
  kind: 'swapMake';
  /** maker's wallet that receives `receive` */
  receive_wallet_id: string;
  receive_asset: string;
  /** base units the maker receives (net) */
  receive_amount: number;
  add_to_liquidity_hub: boolean;
  /** epoch seconds when published to the liquidity hub, 0 when not published */
  hubAdded: number;
  /** tx id of the take that is pending or settled, '' when none */
  takeID: string;
  txStatus: SwapStatus;
}

/** The taker's side of an atomic swap: a transfer-out that needs custody and the company's approval. */
export interface SwapTakeRecord extends CustodyTxRecord {
  kind: 'swapTake';
  /** tx id of the quote taken */
  swap_id: string;
  /** taker's wallet that receives the maker's `send` */
  receive_wallet_id: string;
  /** the company-level action approved with PUT /company/{company_id}/action/{action_id} */
  companyActionID: string;
  txStatus: SwapTakeStatus;
}


/** A transfer (spec sections 2 and 3). */
export interface TransferRecord extends CustodyTxRecord {
  kind?: 'transfer';
  recipient_wallet_id: string;
  recipient_fund_id: string;
  recipient_company_id: string;
  txStatus: TransferStatus;
}

/** Action status values (spec section 2, "Action"). */
export type ActionStatus = 'pending' | 'expired' | 'approved' | 'rejected';

/** Action types of spec section 2 used by the simulator; `ApproveNewWalletConnect` is OpenAPI ActionDetailApproveNewWalletConnect. */
export type ActionType = 'ApproveTransfer' | 'ApproveWithdraw' | 'ApproveSwap' | 'ApproveSwapTake' | 'ApproveNewWalletConnect';

/** A custodian's approval item: one per custodian per transaction (spec section 2, "Action"). */
export interface ActionRecord {
  id: string;
  type: ActionType;
  status: ActionStatus;
  /** epoch seconds */
  timestamp: number;
  /** epoch seconds (the transaction's `expires`; 0 for a wallet connection request, which never expires) */
  expireTime: number;
  /** the transaction (or wallet connection request) the action decides */
  txID: string;
  /** trusted entity id of the custodian (core client id or user id); the company id for a company-level action */
  custodianID: string;
  custodianType: 'core-client' | 'user' | 'company';
}


/** True for a transaction that can still expire: pending custody, or a quote waiting for a taker. */
export function isLive(tx: CustodyTxRecord): boolean {
  return tx.txStatus.startsWith('pending_') || tx.txStatus === 'taker_pending';
}
