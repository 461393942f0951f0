/**
 * What the feed input nodes share (`custody-coreclient-feed`, `custody-hub-feed`,
 * `custody-wallets-feed`): the status shown from the shared feed's state, and leaving the
 * shared feed when the node closes. The feed itself is owned by the `custody-config` node.
 */
import type { Node } from 'node-red';
import type { FeedState } from '../../lib';
import { showFeedState, showError } from './status';
import type { FeedMembership, FeedStatusCallbacks } from './types';


/**
 * Join a shared feed for `node` and leave it when the node closes (then clear the status and
 * call `done`, once the feed has been left: the last member closes the websocket).
 * @param node the feed node.
 * @param join subscribes with the given status callbacks (plus the node's own message callback)
 *   and returns the membership, e.g. `(status) => connection.subscribeHubFeed({...status, onMessage})`.
 * @param onClose called first when the node closes, e.g. to clear the node's own timers.
 */
export function joinSharedFeed(node: Node, join: (status: FeedStatusCallbacks) => FeedMembership, onClose?: () => void): void {
  let membership: FeedMembership | undefined = join({
    onState(state: FeedState) {
      showFeedState(node, state);
    },
    onUnusable(err: Error) {
      showError(node, err);
    },
  });
  node.on('close', (_removed: boolean, done: () => void) => {
    const m = membership;
    membership = undefined;
    onClose?.();
    (m ? m.leave() : Promise.resolve()).finally(() => {
      node.status({});
      done();
    });
  });
}
