/**
 * Assets and fees. Source: spec section 2 ("Asset", "Fee request and response") and section 8.
 *
 * Fee rule (the simulator's decision; spec: "0.1 bps (0.001%)" on transfers, swaps and
 * withdrawals, none on deposits):
 *   fees = ceil(netAmount / 100000) base units (0.001% of the net amount, rounded UP to a whole
 *   base unit, so any non-zero amount pays at least 1 base unit), amountToSend = netAmount + fees.
 * In POST /fees the request `amount` is the net amount; in a transfer `send.amount` is the net
 * amount the recipient receives, and the origin wallet is debited amountToSend.
 */

import type { Asset, FeeQuote } from '../lib/api/v1/assets';

/** The four supported assets. BTC scale 10^8, ETH scale 10^9 (spec section 2; ETH amounts in gwei). */
export const ASSETS: readonly Asset[] = Object.freeze([
  { code: 'BTC', name: 'Bitcoin', unitCode: 'BTC', scale: 100000000, enabled: true, testAsset: false },
  { code: 'BTC-TESTNET', name: 'Bitcoin Testnet', unitCode: 'BTC-TEST', scale: 100000000, enabled: true, testAsset: true },
  { code: 'ETH', name: 'Ethereum', unitCode: 'ETH', scale: 1000000000, enabled: true, testAsset: false },
  { code: 'ETH-TESTNET', name: 'Ethereum Testnet', unitCode: 'ETH-TEST', scale: 1000000000, enabled: true, testAsset: true },
]);

/** The asset with that code, or undefined. Codes are case-sensitive (`BTC-TESTNET`). */
export function findAsset(code: string): Asset | undefined {
  return ASSETS.find((a) => a.code === code);
}

/**
 * Fee for a net amount in base units: ceil(netAmount * 0.001%) = ceil(netAmount / 100000).
 * @param netAmount a non-negative safe integer (base units).
 * @returns the quote; `amountToSend` may exceed Number.MAX_SAFE_INTEGER only for absurd inputs,
 *   which callers reject (see {@link isSafeQuote}).
 */
export function feeFor(netAmount: number): FeeQuote {
  const n = BigInt(netAmount);
  const fees = Number((n + 99999n) / 100000n);
  return { netAmount, fees, amountToSend: netAmount + fees };
}

/** True when every number of the quote is a safe integer. */
export function isSafeQuote(q: FeeQuote): boolean {
  return Number.isSafeInteger(q.fees) && Number.isSafeInteger(q.amountToSend);
}
