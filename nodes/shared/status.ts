/**
 * Node status, set in one place (DESIGN.md "Status"): blue dot while requesting, green dot
 * with the time on success, red ring on error; feeds yellow ring connecting, green dot
 * connected, red ring disconnected (retrying).
 */
import type { Node } from 'node-red';
import type { FeedState } from '../../lib';

/** Blue dot "requesting". */
export function showRequesting(node: Node): void {
  node.status({ fill: 'blue', shape: 'dot', text: 'requesting' });
}

/** Green dot with the local time of the answer and the HTTP status. */
export function showSuccess(node: Node, statusCode: number): void {
  node.status({ fill: 'green', shape: 'dot', text: `${statusCode} at ${new Date().toLocaleTimeString()}` });
}

/** Red ring with a short error text (at most 60 characters). */
export function showError(node: Node, err: unknown): void {
  const text = err instanceof Error ? err.message : String(err);
  node.status({ fill: 'red', shape: 'ring', text: text.length > 60 ? text.slice(0, 57) + '...' : text });
}

/** Red ring "outcome unknown" with the payment's kind and key: it may have moved money. */
export function showOutcomeUnknown(node: Node, err: { kind: string; partner_txID: string }): void {
  const text = `outcome unknown: ${err.kind} ${err.partner_txID}`;
  node.status({ fill: 'red', shape: 'ring', text: text.length > 60 ? text.slice(0, 57) + '...' : text });
}

/**
 * Feed connection state as a status. With a `note` (a problem of the node's own, e.g. a memory
 * file it cannot write), the text is `<state> · <note>` and `connected` is a yellow dot instead
 * of a green one.
 */
export function showFeedState(node: Node, state: FeedState, note?: string): void {
  const text = (t: string): string => (note ? `${t} · ${note}` : t);
  switch (state) {
    case 'connecting':
      node.status({ fill: 'yellow', shape: 'ring', text: text('connecting') });
      break;
    case 'connected':
      node.status({ fill: note ? 'yellow' : 'green', shape: 'dot', text: text('connected') });
      break;
    case 'disconnected':
      node.status({ fill: 'red', shape: 'ring', text: text('disconnected (retrying)') });
      break;
    default:
      node.status({});
  }
}

/** Yellow ring with a note (at most 60 characters): the answer is not the end of the story. */
export function showNote(node: Node, note: string): void {
  node.status({ fill: 'yellow', shape: 'ring', text: note.length > 60 ? note.slice(0, 57) + '...' : note });
}
