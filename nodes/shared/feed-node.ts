/**
 * What the feed input nodes share (`custody-coreclient-feed`, `custody-hub-feed`,
 * `custody-wallets-feed`): the status shown from the shared feed's state, and leaving the
 * shared feed when the node closes. The feed itself is owned by the `custody-config` node.
 */
import type { Node, NodeAPI } from 'node-red';
import { showFeedHealth, showError, logFeedReport } from './status';
import { noConnectionError } from './node-setup';
import type { CustodyConfigNode, FeedHealth, FeedMembership, FeedStatusCallbacks } from './types';

/** What a feed node adds to {@link joinSharedFeed}; every part is optional. */
export interface FeedNodeHooks {
  /** Called first when the node closes, before the feed is left, e.g. to clear the node's own timers. */
  onClose?: () => void;
  /**
   * Called once the feed has been left (nothing more arrives), before `done`: release what the
   * node holds, e.g. a file. Awaited; a rejection is logged with `node.warn`.
   * @param removed true when the node was deleted from the flows (Node-RED's `close` argument).
   */
  release?: (removed: boolean) => Promise<void>;
  /** A note of the node's own added to the status text (see `showFeedState`), or undefined. */
  note?: () => string | undefined;
}

/** What {@link joinSharedFeed} returns. */
export interface FeedNodeStatus {
  /** Show the status again (the last feed health with the current note), e.g. after the note changed. */
  refresh(): void;
}

/**
 * Join a shared feed for `node` and leave it when the node closes (then release, clear the
 * status and call `done`, once the feed has been left: the last member closes the websocket).
 * The status shows the feed's health (status.ts `showFeedHealth`: the cause while it fails); the
 * node logs the feed's reports when the config node gives them to it (one user per feed logs,
 * status.ts `logFeedReport`), so a log line leads to a node that uses the feed.
 * @param RED the Node-RED API of the node's module (the status texts of its catalog).
 * @param node the feed node.
 * @param join subscribes with the given status callbacks (plus the node's own message callback)
 *   and returns the membership, e.g. `(status) => connection.subscribeHubFeed({...status, onMessage})`.
 * @param hooks what the node adds: see {@link FeedNodeHooks}.
 */
export function joinSharedFeed(RED: NodeAPI, node: Node, join: (status: FeedStatusCallbacks) => FeedMembership, hooks: FeedNodeHooks = {}): FeedNodeStatus {
  /** The last health shown. */
  let shown: FeedHealth | undefined;
  let closing = false;
  let membership: FeedMembership | undefined = join({
    onHealth(health: FeedHealth) {
      shown = health;
      if (!closing) showFeedHealth(RED, node, health, hooks.note?.());
    },
    onReport(report) {
      if (!closing) logFeedReport(RED, node, report);
    },
  });
  node.on('close', (removed: boolean, done: () => void) => {
    closing = true;
    const m = membership;
    membership = undefined;
    hooks.onClose?.();
    (m ? m.leave() : Promise.resolve())
      .then(() => hooks.release?.(removed === true))
      .catch((err: Error) => node.warn(RED._('common.errors.closing', { message: err.message })))
      .finally(() => {
        node.status({});
        done();
      });
  });
  return {
    refresh() {
      if (shown && !closing) showFeedHealth(RED, node, shown, hooks.note?.());
    },
  };
}

/**
 * {@link joinSharedFeed} for a feed of the node's connection; without a connection, the node
 * shows the no-connection error (red ring) and joins nothing.
 * @param RED the Node-RED API of the node's module.
 * @param node the feed node.
 * @param connection the node's `custody-config` node, or null (see `createConnectedNode`).
 * @param join subscribes to the connection's feed with the given status callbacks, e.g.
 *   `(c, status) => c.subscribeHubFeed({...status, onMessage})`.
 * @param hooks what the node adds: see {@link FeedNodeHooks}.
 * @returns the status handle of {@link joinSharedFeed}, or undefined without a connection.
 */
export function joinConnectionFeed(
  RED: NodeAPI,
  node: Node,
  connection: CustodyConfigNode | null,
  join: (connection: CustodyConfigNode, status: FeedStatusCallbacks) => FeedMembership,
  hooks: FeedNodeHooks = {},
): FeedNodeStatus | undefined {
  if (!connection) {
    showError(node, noConnectionError(RED));
    return undefined;
  }
  return joinSharedFeed(RED, node, (status) => join(connection, status), hooks);
}
