/**
 * The messages of the websocket feeds (spec section 6): their JSON schemas and types. The feeds
 * themselves (connection, signing, reconnects) are lib/feeds/.
 */
import { objectSchema } from './schema-kit';
import { W, type Wire, type OpenWire } from './wire';
import { ACTION_TYPES } from './v1/core-client';

/**
 * A core client feed message (spec section 6: "one JSON message per pending action:
 * coreClientID, expireTime, id (action id), status (`pending`), timestamp, type (ApproveTransfer,
 * ApproveWithdraw, ApproveSwap, ApproveSwapTake)"; rule 4: exchange core clients also receive
 * wallet connection requests, type `ApproveNewWalletConnect`, the service's documentation examples). All six fields are
 * required; `status` is `pending`; `timestamp` and `expireTime` epoch seconds. Other fields are
 * allowed. The `type` list is `ACTION_TYPES` (lib/api/v1/core-client.ts), which also holds the
 * spec's RejectTransfer and RejectWithdraw.
 */
export const coreClientFeedMessageSchema = objectSchema(['coreClientID', 'expireTime', 'id', 'status', 'timestamp', 'type'], {
  coreClientID: W.id,
  expireTime: W.epochSeconds,
  id: W.id,
  status: { const: 'pending' },
  timestamp: W.epochSeconds,
  type: { type: 'string', enum: ACTION_TYPES },
});

/** A core client feed message ({@link coreClientFeedMessageSchema}); an {@link Action} with `coreClientID`. */
export type CoreClientFeedMessage = Wire<typeof coreClientFeedMessageSchema>;

/**
 * A liquidity hub feed message (spec section 6: "a line per newly posted swap quote with its TxID
 * and Status (for example taker_pending)"; the service's documentation examples: `{"txID","status"}`). The
 * spec's casing (`TxID`, `Status`) and the documentation examples' (`txID`, `status`) are both accepted, each field
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
 * A wallets feed message: one wallet transaction (spec section 6: "live feed of wallet
 * transactions", payload "not shown"; the shape is the service's documentation examples, field names as the
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
