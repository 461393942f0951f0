/**
 * The wallets feed, `{ws_base_url}/wallets/feed` (spec section 6: "live feed of wallet
 * transactions"; the service's documentation examples for the shape, which the spec does not show): one
 * per API key, not per core client; one message per movement of a wallet's balance.
 */
import { CustodyClient } from '../client/client';
import { AccountFeed, type FeedOptions } from './feed';

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
