/**
 * Balance movements and faucet deposits (spec section 2 "Ledger entry" for deposits, section 6
 * wallets feed): every movement of a wallet's booked balance is announced on the wallets feed.
 */
import type { Engine } from '../engine';
import { badRequest } from '../errors';
import { newChainTxId } from '../ids';
import type { WalletRecord } from '../model';
import { getWallet } from './wallets';
import type { WalletFeedMessage } from '../../lib/api/feeds';

/** Details of a balance movement for the wallets feed (simulator/README.md "Wallets feed events": negative amounts outgoing). */
export interface Movement {
  tx_id: string;
  chain_tx_id: string;
  /** final status of the transaction, e.g. `approved_transfer` */
  status: string;
  /** gross base units (positive); for outgoing the debit, for incoming the credit */
  amount: number;
  /** base units of fees inside `amount` (0 for incoming) */
  fee: number;
  sweep_tx?: boolean;
}

/**
 * Move a wallet's booked balance and announce it on the wallets feed (engine event `walletTx`):
 * `direction` out debits `m.amount`, in credits it. The feed message has negative amount, fee
 * and net_amount for outgoing.
 */
export function moveBalance(eng: Engine, wallet: WalletRecord, direction: 'in' | 'out', m: Movement, now: number): void {
  const sign = direction === 'out' ? -1 : 1;
  wallet.balance += sign * m.amount;
  eng.changed();
  const msg: WalletFeedMessage = {
    Status: m.status,
    amount: sign * m.amount,
    asset: wallet.asset,
    chain_tx_id: m.chain_tx_id,
    fee: m.fee === 0 ? 0 : sign * m.fee,
    net_amount: sign * (m.amount - m.fee),
    sweep_tx: m.sweep_tx ?? false,
    timestamp: now,
    tx_id: m.tx_id,
    wallet_id: wallet.wallet_id,
  };
  eng.emitWalletTx(msg);
}

/**
 * A deposit from the faucet (control endpoint `POST /_simulator/faucet`): credits the wallet and
 * writes a `deposit` ledger entry (TxID, status and counterparty fields empty, fees 0: spec section 2)
 * and emits a wallets feed event (`Status` `confirmed`, `tx_id` '').
 * @param amount positive safe integer, base units.
 * @throws 404 unknown wallet; 400 when the new balance would not be a safe integer.
 */
export function faucetDeposit(eng: Engine, walletIdOrCode: string, amount: number): { wallet_id: string; asset: string; amount: number; balance: number; chainTxID: string } {
  const w = getWallet(eng, walletIdOrCode);
  if (!Number.isSafeInteger(w.balance + amount)) throw badRequest('amount: the balance would exceed the largest safe integer');
  const chainTxID = newChainTxId();
  moveBalance(eng, w, 'in', { tx_id: '', chain_tx_id: chainTxID, status: 'confirmed', amount, fee: 0 }, eng.now());
  eng.appendLedger(w, {
    TxID: '',
    chainTxID,
    fundID: w.fund_id,
    timestamp: eng.now(),
    expireTime: 0,
    status: '',
    type: 'deposit',
    asset: w.asset,
    amount,
    fees: 0,
    netAmount: amount,
    counterpartyID: '',
    counterpartyName: '',
    address: w.address,
    reference: '',
    benefitOf: '',
    accountNo: '',
  });
  return { wallet_id: w.wallet_id, asset: w.asset, amount, balance: w.balance, chainTxID };
}
