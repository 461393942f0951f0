/**
 * The liquidity hub feed, `{ws_base_url}/liquidityhub/feed` (spec section 6; NOTES.md "Feed
 * messages"): one message per swap quote newly published to the liquidity hub (POST
 * /company/{company_id}/liquidityhub) with its TxID and Status (spec: "TxID and Status", for
 * example `taker_pending`; NOTES.md shows `{txID, status}`). Both casings are accepted.
 */
import { CustodyClient } from './client';
import { AccountFeed, type FeedOptions } from './feed';
import { W, type OpenWire } from './wire';

/**
 * A liquidity hub feed message (spec section 6: "a line per newly posted swap quote with its TxID
 * and Status (for example taker_pending)"; NOTES.md "Feed messages": `{"txID","status"}`). The
 * spec's casing (`TxID`, `Status`) and NOTES.md's (`txID`, `status`) are both accepted, each field
 * on its own: a message must carry the swap's id (`txID` or `TxID`) and its status (`status` or
 * `Status`), as text (the status values are not listed: "for example taker_pending"). Other fields
 * are allowed and kept.
 */
export const hubFeedMessageSchema = {
  type: 'object',
  properties: { txID: W.id, TxID: W.id, status: W.text, Status: W.text },
  allOf: [{ anyOf: [{ required: ['txID'] }, { required: ['TxID'] }] }, { anyOf: [{ required: ['status'] }, { required: ['Status'] }] }],
} as const;

/**
 * A liquidity hub feed message ({@link hubFeedMessageSchema}), as received: read the id as
 * `message.txID ?? message.TxID` and the status as `message.status ?? message.Status` (a union of
 * the casings' combinations); other fields are kept (`[field: string]: unknown`). {@link HubFeed}
 * drops a message without a string `txID` or `TxID`.
 */
export type HubFeedMessage = OpenWire<typeof hubFeedMessageSchema>;

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
 *   `txID` or `TxID` (spec section 6 says "TxID and Status", NOTES.md `txID`/`status`), as
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
