/**
 * Request bodies of payments (spec section 4: POST transfer, withdraw and atomicswap/make), as the
 * tests and the benches send them: every field filled with a valid value, from the ids of the
 * simulator's demo dataset or from made-up ids for a server that only records requests; `fields`
 * replace any of them. No network, no simulator: plain objects.
 */
import type { DemoDataset } from '../../simulator';
import type { SwapMakeRequest, TransferRequest, WithdrawRequest } from '../../lib';

let seq = 0;

/**
 * An id not made before by this process (or an earlier run): `<label>-<pid>-<epoch ms>-<n>`, for
 * partner_txIDs and names that must be fresh.
 */
export function uniqueId(label: string): string {
  return `${label}-${process.pid}-${Date.now()}-${++seq}`;
}

/** A partner_txID not used before in this process: `test-<pid>-<epoch ms>-<n>`. */
function freshPartnerTxId(): string {
  return uniqueId('test');
}

/**
 * The ids a request body is built from: a {@link DemoDataset} (the simulator's demo), or made-up
 * ids for a server that only records requests.
 */
export interface PaymentIds {
  company_id: string;
  wallets: { 'BTC-TESTNET': { wallet_id: string }; 'ETH-TESTNET': { wallet_id: string } };
  counterparty: { wallets: { 'BTC-TESTNET': { wallet_id: string } } };
  /** the whitelisted withdrawal address per asset */
  whitelist: { 'BTC-TESTNET': string };
}

/** Wall-clock epoch seconds an hour ahead (the default `expires`). */
function anHourAhead(): number {
  return Math.floor(Date.now() / 1000) + 3600;
}

/**
 * A transfer of 1000000 base units (0.01 BTC-TESTNET) from the demo BTC-TESTNET wallet
 * (`wallet_id`) to the counterparty fund's BTC-TESTNET wallet, `expires` an hour ahead on the
 * wall clock (epoch seconds), a fresh `partner_txID`; `fields` replace any field (a field set to
 * `undefined` is left out of the JSON body).
 * @returns the lib input: the spec's body plus `company_id` (the demo company).
 */
export function transferRequest(demo: PaymentIds, fields: Partial<TransferRequest> & { company_id?: string } = {}): TransferRequest & { company_id: string } {
  return {
    company_id: demo.company_id,
    wallet_id: demo.wallets['BTC-TESTNET'].wallet_id,
    counterparty_wallet_address: demo.counterparty.wallets['BTC-TESTNET'].wallet_id,
    expires: anHourAhead(),
    benefit_of: 'Test customer',
    account_no: 'ACC-1',
    reference: 'test transfer',
    partner_txID: freshPartnerTxId(),
    send: { symbol: 'BTC-TESTNET', amount: 1000000 },
    ...fields,
  };
}

/**
 * A withdrawal: the fields of {@link transferRequest} (without `counterparty_wallet_address`) to the
 * demo fund's whitelisted BTC-TESTNET `address` ({@link DemoDataset.whitelist}); `fields` replace
 * any field.
 * @returns the lib input: the spec's body plus `company_id` (the demo company).
 */
export function withdrawalRequest(demo: PaymentIds, fields: Partial<WithdrawRequest> & { company_id?: string } = {}): WithdrawRequest & { company_id: string } {
  const { counterparty_wallet_address, ...transfer } = transferRequest(demo);
  void counterparty_wallet_address;
  return { ...transfer, address: demo.whitelist['BTC-TESTNET'], ...fields };
}

/**
 * A swap quote (maker side) selling 1000 base units from the demo BTC-TESTNET wallet for 20000
 * base units into the demo ETH-TESTNET wallet, `expires` an hour ahead on the wall clock (epoch
 * seconds), a fresh `partner_txID`, not added to the liquidity hub unless `fields` say so;
 * `fields` replace any field.
 * @returns the lib input: the spec's body plus `company_id` (the demo company).
 */
export function swapQuoteRequest(demo: PaymentIds, fields: Partial<SwapMakeRequest> & { company_id?: string } = {}): SwapMakeRequest & { company_id: string } {
  return {
    company_id: demo.company_id,
    send_wallet_id: demo.wallets['BTC-TESTNET'].wallet_id,
    receive_wallet_id: demo.wallets['ETH-TESTNET'].wallet_id,
    expires: anHourAhead(),
    reference: 'test swap quote',
    partner_txID: freshPartnerTxId(),
    send: { symbol: 'BTC-TESTNET', amount: 1000 },
    receive: { symbol: 'ETH-TESTNET', amount: 20000 },
    ...fields,
  };
}

/**
 * The body to POST by hand (the company is in the path): `request` without `company_id`.
 */
export function bodyOf<T extends { company_id?: string }>(request: T): Omit<T, 'company_id'> {
  const { company_id, ...body } = request;
  void company_id;
  return body;
}

/** `expires` ten minutes ahead on the wall clock (epoch seconds): the requests to a recording server. */
function tenMinutesAhead(): number {
  return Math.floor(Date.now() / 1000) + 600;
}

/**
 * Made-up ids for a server that only records what it gets (a counting server): company `c1`,
 * wallets `w1` (BTC-TESTNET) and `w2` (ETH-TESTNET, and the transfers' recipient), the BTC testnet
 * address `mkLaDxYkiaYWfmPf3NdnrMCTNu9ZcpHgd6` as the whitelisted one.
 */
const RECORDED_IDS: PaymentIds = {
  company_id: 'c1',
  wallets: { 'BTC-TESTNET': { wallet_id: 'w1' }, 'ETH-TESTNET': { wallet_id: 'w2' } },
  counterparty: { wallets: { 'BTC-TESTNET': { wallet_id: 'w2' } } },
  whitelist: { 'BTC-TESTNET': 'mkLaDxYkiaYWfmPf3NdnrMCTNu9ZcpHgd6' },
};

/** The fields of a recorded transfer or withdrawal other than the ids: 1000 base units, `p-1`, `b`, `a`, `r`, ten minutes. */
function recordedPayment(): Partial<TransferRequest> {
  return { expires: tenMinutesAhead(), benefit_of: 'b', account_no: 'a', reference: 'r', partner_txID: 'p-1', send: { symbol: 'BTC-TESTNET', amount: 1000 } };
}

/**
 * A transfer with the made-up ids of a recording server ({@link RECORDED_IDS}): `w1` to `w2`,
 * 1000 base units of BTC-TESTNET, `expires` ten minutes ahead, partner_txID `p-1`, the custom
 * fields `b`, `a`, `r`; `fields` replace any field.
 */
export function recordedTransfer(fields: Partial<TransferRequest> & { company_id?: string } = {}): TransferRequest & { company_id: string } {
  return transferRequest(RECORDED_IDS, { ...recordedPayment(), ...fields });
}

/**
 * A withdrawal with the made-up ids of a recording server: the fields of {@link recordedTransfer}
 * (without `counterparty_wallet_address`) to the address `mkLaDxYkiaYWfmPf3NdnrMCTNu9ZcpHgd6`;
 * `fields` replace any field.
 */
export function recordedWithdrawal(fields: Partial<WithdrawRequest> & { company_id?: string } = {}): WithdrawRequest & { company_id: string } {
  return withdrawalRequest(RECORDED_IDS, { ...recordedPayment(), ...fields });
}

/**
 * A swap quote with the made-up ids of a recording server: 1000 BTC-TESTNET base units from `w1`
 * for 2000 ETH-TESTNET base units into `w2`, `expires` ten minutes ahead, partner_txID `m-1`,
 * reference `r`; `fields` replace any field.
 */
export function recordedSwapQuote(fields: Partial<SwapMakeRequest> & { company_id?: string } = {}): SwapMakeRequest & { company_id: string } {
  return swapQuoteRequest(RECORDED_IDS, { expires: tenMinutesAhead(), reference: 'r', partner_txID: 'm-1', receive: { symbol: 'ETH-TESTNET', amount: 2000 }, ...fields });
}
