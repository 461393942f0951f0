/**
 * Node status, set in one place (docs/nodes.md "The msg contract (every node)", Status): blue
 * dot while requesting, green dot
 * with the time on success, red ring on error; feeds yellow ring connecting, green dot
 * connected, red ring disconnected (retrying). The texts are the `common.status.*` entries of
 * the node's message catalog (nodes/shared/locales/<lang>/common.json, merged into every node's
 * catalog by scripts/copy-assets.ts), looked up with the `RED._` of the node's module.
 */
import type { Node, NodeAPI } from 'node-red';
import type { FeedState } from '../../lib';

/** A status text cut to at most 60 characters. */
function short(text: string): string {
  return text.length > 60 ? text.slice(0, 57) + '...' : text;
}

/**
 * Blue dot "requesting".
 * @param RED the Node-RED API of the node's module (its `_` reads the node's catalog).
 * @param node the node whose status it sets.
 */
export function showRequesting(RED: NodeAPI, node: Node): void {
  node.status({ fill: 'blue', shape: 'dot', text: RED._('common.status.requesting') });
}

/**
 * Green dot with the HTTP status and the local time of the answer.
 * @param RED the Node-RED API of the node's module.
 * @param node the node whose status it sets.
 * @param statusCode the HTTP status of the answer.
 */
export function showSuccess(RED: NodeAPI, node: Node, statusCode: number): void {
  node.status({ fill: 'green', shape: 'dot', text: RED._('common.status.success', { statusCode, time: new Date().toLocaleTimeString() }) });
}

/** Red ring with a short error text (the Error's message, at most 60 characters). */
export function showError(node: Node, err: unknown): void {
  const text = err instanceof Error ? err.message : String(err);
  node.status({ fill: 'red', shape: 'ring', text: short(text) });
}

/**
 * Red ring "outcome unknown" with the payment's kind and key: it may have moved money.
 * @param RED the Node-RED API of the node's module.
 * @param node the node whose status it sets.
 * @param err the payment whose outcome is unknown.
 */
export function showOutcomeUnknown(RED: NodeAPI, node: Node, err: { kind: string; partner_txID: string }): void {
  node.status({ fill: 'red', shape: 'ring', text: short(RED._('common.status.outcomeUnknown', { kind: err.kind, partner_txID: err.partner_txID })) });
}

/**
 * Feed connection state as a status. With a `note` (a problem of the node's own, e.g. a memory
 * file it cannot write), the text is `<state> · <note>` and `connected` is a yellow dot instead
 * of a green one.
 * @param RED the Node-RED API of the node's module.
 * @param node the feed node.
 * @param state the feed's connection state.
 * @param note the node's own problem, already in words, or undefined.
 */
export function showFeedState(RED: NodeAPI, node: Node, state: FeedState, note?: string): void {
  const text = (t: string): string => (note ? RED._('common.status.withNote', { state: t, note }) : t);
  switch (state) {
    case 'connecting':
      node.status({ fill: 'yellow', shape: 'ring', text: text(RED._('common.status.connecting')) });
      break;
    case 'connected':
      node.status({ fill: note ? 'yellow' : 'green', shape: 'dot', text: text(RED._('common.status.connected')) });
      break;
    case 'disconnected':
      node.status({ fill: 'red', shape: 'ring', text: text(RED._('common.status.disconnected')) });
      break;
    default:
      node.status({});
  }
}

/** Yellow ring with a note (at most 60 characters): the answer is not the end of the story. */
export function showNote(node: Node, note: string): void {
  node.status({ fill: 'yellow', shape: 'ring', text: short(note) });
}
