/**
 * The wallets feed, `{ws_base_url}/wallets/feed` (spec section 6: "live feed of wallet
 * transactions"; NOTES.md "Feed messages" for the shape, which the spec does not show): one
 * per API key, not per core client; one message per movement of a wallet's balance.
 */
import { CustodyClient } from './client';
import { AccountFeed, type FeedOptions } from './feed';
import { W, type OpenWire } from './wire';
import { objectSchema } from './schema-kit';

/**
 * A wallets feed message: one wallet transaction (spec section 6: "live feed of wallet
 * transactions", payload "not shown"; the shape is NOTES.md "Feed messages", field names as the
 * service sends them, including the capital `Status`). All ten fields required: `Status` text,
 * `amount` (gross), `fee`, `net_amount` base units of `asset`, negative for outgoing;
 * `chain_tx_id` (empty when none), `sweep_tx` (true for a sweep), `timestamp` epoch seconds,
 * `tx_id` (empty for a deposit), `wallet_id` (the wallet whose balance moved). Other fields are allowed and kept.
 */
export const walletFeedMessageSchema = objectSchema(['Status', 'amount', 'asset', 'chain_tx_id', 'fee', 'net_amount', 'sweep_tx', 'timestamp', 'tx_id', 'wallet_id'], {
  Status: W.text,
  amount: W.baseUnits,
  asset: W.id,
  chain_tx_id: W.text,
  fee: W.baseUnits,
  net_amount: W.baseUnits,
  sweep_tx: W.boolean,
  timestamp: W.epochSeconds,
  // Empty for a deposit, as a deposit's `TxID` in the ledger (spec section 2 "Ledger entry").
  tx_id: W.text,
  wallet_id: W.id,
});

/** A wallets feed message ({@link walletFeedMessageSchema}), as received: other fields kept (`[field: string]: unknown`). */
export type WalletFeedMessage = OpenWire<typeof walletFeedMessageSchema>;

/**
 * The wallets feed of the client's API key. It reconnects by itself like every
 * {@link AccountFeed} and has no catch-up: movements while it was disconnected are not re-sent
 * (GET /wallet/{wallet_id}/history and the fund ledger,
 * GET /company/{company_id}/fund/{fund_id}/ledger, list past movements).
 *
 * Events (besides `state` and `error`, see {@link AccountFeed}):
 * - `transaction` (message: WalletFeedMessage): one per message that is a JSON object with a
 *   string `wallet_id`, as received. Other messages are reported as `error` and dropped.
 */
export class WalletsFeed extends AccountFeed {
  /**
   * @param client the signed client of the API key whose wallets feed this is.
   */
  constructor(client: CustodyClient, options: FeedOptions = {}) {
    super(client, '/wallets/feed', { event: 'transaction', idField: 'wallet_id', label: 'wallets feed' }, options);
  }
}
