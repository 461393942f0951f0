/**
 * The liquidity hub feed, `{ws_base_url}/liquidityhub/feed` (spec section 6; the
 * service's documentation examples): one message per swap quote newly published to the liquidity hub (POST
 * /company/{company_id}/liquidityhub) with its TxID and Status (spec: "TxID and Status", for
 * example `taker_pending`; the service's documentation examples show `{txID, status}`). Both casings are accepted.
 */
import { CustodyClient } from '../client/client';
import { AccountFeed, type FeedOptions } from './feed';

/**
 * The account's liquidity hub feed. It reconnects by itself like every {@link AccountFeed}, but
 * has NO catch-up: the service re-sends nothing on reconnect and the API has no list of
 * "quotes published since". A gap (state `disconnected`, then `connected` again) therefore
 * means that quotes published while it was disconnected were missed; GET
 * /company/{company_id}/liquidityhub lists the quotes currently on the hub, to resynchronise
 * when that matters.
 *
 * Events (besides `state` and `error`, see {@link AccountFeed}):
 * - `quote` (message: HubFeedMessage): one per message that is a JSON object with a string
 *   `txID` or `TxID` (spec section 6 says "TxID and Status", the service's documentation examples `txID`/`status`), as
 *   received: neither casing is renamed (no dedupe: the service does not repeat messages). Other
 *   messages are reported as `error` and dropped.
 */
export class HubFeed extends AccountFeed {
  /**
   * @param client the signed client of the account (its base URL gives the feed URL, ws:// or wss://).
   */
  constructor(client: CustodyClient, options: FeedOptions = {}) {
    super(client, '/liquidityhub/feed', { event: 'quote', idField: ['txID', 'TxID'], label: 'liquidity hub feed' }, options);
  }
}
