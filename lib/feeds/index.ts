/**
 * The public entry of the feeds service (`@custodyflow/node-red-custody/feeds`; nodes import it
 * as `lib/feeds`): the signed websocket feeds of spec section 6, each reconnecting with back-off
 * and reading what it missed on reconnect, and the core client feed's durable memory of the action
 * ids it has sent. Loaded only by what uses a feed (a feed node, a connection's first feed user),
 * never by the package root (lib/index.ts).
 *
 * - feed.ts: {@link CoreClientFeed} (the pending actions of one core client, `action` and `listing`
 *   events), {@link AccountFeed} and {@link SignedFeed} (the shared socket, states, back-off),
 *   {@link FeedConnectionError} (a connection or handshake failure, spec section 6).
 * - hub-feed.ts / wallets-feed.ts: {@link HubFeed} (liquidity hub quotes) and {@link WalletsFeed}
 *   (wallet transactions) of the account.
 * - feed-pool.ts: {@link FeedPool}, a connection's shared feeds (one per kind and key, opened with
 *   the first subscriber, closed with the last, retried, their health told to users and watchers).
 * - approver-registry.ts: {@link ApproverRegistry}, which approver watches which core client's feed.
 * - feed-health.ts: {@link FailureReports}, when a failing or recovered feed is worth a log line.
 * - sent-ids.ts: {@link SentIds}, the action ids a core client feed node has sent (spec section 6
 *   rule 2: a reconnect sends every pending action again), one file per node and core client.
 */
export { CoreClientFeed, AccountFeed, SignedFeed, FeedConnectionError, type FeedOptions, type FeedState, type CoreClientFeedOptions, type AccountFeedMessages, type ActionListing } from './feed';
export { FailureReports, type FailureReportsOptions } from './feed-health';
export { HubFeed } from './hub-feed';
export { WalletsFeed } from './wallets-feed';
export { SentIds, sentIdsFile, removeSentIdsFiles, type SentRecord, type SentAction, type ActionIdListing, type SentIdsOptions } from './sent-ids';
export { FeedPool, feedRetryMs, type FeedPoolOptions, type FeedKind, type FeedHealth, type FeedReport, type FeedStatusCallbacks, type FeedWatcher, type FeedUser, type AccountFeedUser, type FeedMembership } from './feed-pool';
export { ApproverRegistry, type ApproverEntry } from './approver-registry';
