/**
 * Types shared by the nodes: the runtime side of the `custody-config` node as other nodes
 * see it. Node-RED glue only: lib knows no Node-RED (docs/architecture.md, "The layers").
 */
import type { Node, NodeDef, NodeMessageInFlow } from 'node-red';
import type { CustodyClient, HubFeedMessage, WalletFeedMessage, WorkspaceClient, Environment, PaymentJournal } from '../../lib';
import type { Coordinator, CoordinationState } from '../../lib/coordination';
import type { FeedWatcher, FeedUser, AccountFeedUser, FeedMembership, ApproverEntry } from '../../lib/feeds';

/** The shared feeds' shapes, owned by lib/feeds (feed-pool.ts, approver-registry.ts): the config node passes them through. */
export type { FeedHealth, FeedReport, FeedStatusCallbacks, FeedWatcher, FeedUser, AccountFeedUser, FeedMembership, ApproverEntry } from '../../lib/feeds';

/** The runtime `custody-config` node: owns one client and one websocket per core client feed. */
export interface CustodyConfigNode extends Node {
  /** The configured environment (`simulator` when none was set): lets a node refuse simulator-only operations against the hosted service. */
  environment?: Environment;
  /** The shared signed client; resolves once (starting the built-in simulator first when selected). @throws ConfigError, KeyFormatError (rejects). */
  client(): Promise<CustodyClient>;
  /** The shared v2 client (`x-token`, spec section 5.8); resolves once. @throws ConfigError naming `workspaceId`, `token` or `v2BaseUrl` (rejects). */
  workspaceClient(): Promise<WorkspaceClient>;
  /**
   * The submission journal of this connection's API account (lib `SubmissionJournal`; with
   * coordination, lib `SharedSubmissionJournal` over it, shared through Redis), opened on
   * first use in `<userDir>/custodyflow/journal/` (or `$CUSTODYFLOW_JOURNAL_DIR`) and shared by
   * every config node of the same account in this process.
   * @throws ConfigError when the client cannot be built; what the file system throws when the journal cannot be opened (rejects).
   */
  journal(): Promise<PaymentJournal>;
  /**
   * The coordination of this connection (several Node-RED instances on one API key,
   * docs/scale-out.md): the Redis {@link Coordinator} shared by the
   * nodes of this connection, or undefined when coordination is `none`.
   * @throws ConfigError for a bad Redis setting (rejects).
   */
  coordinator(): Promise<Coordinator | undefined>;
  /** Where the coordination stands (for the edit dialog): `none`, or `redis` with its state, why it is not ready, and this instance's name. */
  coordinationStatus(): CoordinationStatus;
  /** Join the feed of `clientId`; the first user opens it, the last to leave closes it. */
  subscribeFeed(clientId: string, user: FeedUser): FeedMembership;
  /** Watch the health of the feed of `clientId` (opened by its users, never by a watcher) until `leave`. */
  watchFeed(clientId: string, watcher: FeedWatcher): FeedMembership;
  /**
   * Register an approver until `leave`: it is told the core client it watches (its own, else
   * that of the feed nodes wired to it, see {@link routeFeed}) and, when another approver of this
   * connection watches the same core client, the others (`onOthers`).
   */
  registerApprover(approver: ApproverEntry): FeedMembership;
  /** A `custody-coreclient-feed` node of `clientId` sends to the nodes `targets` (its wires) until `leave`. */
  routeFeed(clientId: string, targets: string[]): FeedMembership;
  /** Join the account's liquidity hub feed (spec section 6); the first user opens it, the last to leave closes it. */
  subscribeHubFeed(user: AccountFeedUser<HubFeedMessage>): FeedMembership;
  /** Join the wallets feed of the connection's API key (spec section 6); the first user opens it, the last to leave closes it. */
  subscribeWalletsFeed(user: AccountFeedUser<WalletFeedMessage>): FeedMembership;
}

/** What {@link CustodyConfigNode.coordinationStatus} answers. */
export interface CoordinationStatus {
  coordination: 'none' | 'redis';
  state?: CoordinationState;
  /** Why it is not ready ('' when it is); never a secret. */
  reason?: string;
  /** This instance's name in claims and the audit stream. */
  instance?: string;
  /** How Redis is reached: `standalone`, `sentinel` or `cluster`. */
  mode?: 'standalone' | 'sentinel' | 'cluster';
  /** `host:port` of the Redis master in use ('' before the first connect). */
  master?: string;
  /** Since when that master is the one, epoch ms (0 before the first connect). */
  masterSince?: number;
  /** How often the master changed since deploy (a failover, or a restart). */
  failovers?: number;
}

/** The editor properties every flow node of the pack has: the id of its `custody-config` node. */
export interface ConnectedNodeDef extends NodeDef {
  /** The id of the `custody-config` node (empty or unknown: no connection). */
  connection: string;
}

/** Editor properties common to every operation node. */
export interface OperationNodeDef extends ConnectedNodeDef {
  operation: string;
  [field: string]: unknown;
}

/**
 * `msg.custody`: set by every v1 operation node after a successful call.
 * Example: `{type: 'custody-transfer', operation: 'create', company_id: 'c1'}`.
 */
export interface CustodyTrace {
  /** The node type that made the call, e.g. `custody-transfer`. */
  type: string;
  /** Its operation, e.g. `create`. */
  operation: string;
  /** The `company_id` path id the call used, when it had one. */
  company_id?: string;
  /** The `client_id` path id the call used (core client, sweeps), when it had one. */
  client_id?: string;
}

/**
 * `msg.outcome`: what a request did (docs/nodes.md "Retries: the three failure kinds"). Set by
 * the money-moving operations on success (`new`, `existing`) and by every request-sending node
 * on failure: `refused` (the API answered 4xx: nothing happened), `notSent` (nothing was sent:
 * bad input, a conflicting key, no connection), `outcomeUnknown` (the request may have had its
 * effect).
 */
export type MessageOutcome = 'new' | 'existing' | 'refused' | 'notSent' | 'outcomeUnknown';

/** The msg of an operation node: the contract adds `statusCode` (docs/nodes.md "The msg contract (every node)"), `custody` ({@link CustodyTrace}) and `outcome` ({@link MessageOutcome}). */
export type CustodyMessage = NodeMessageInFlow & { statusCode?: number; custody?: CustodyTrace; outcome?: MessageOutcome };
