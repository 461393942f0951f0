/**
 * Node status, set in one place (docs/nodes.md "The msg contract (every node)", Status): blue
 * dot while requesting, green dot
 * with the time on success, red ring on error; feeds yellow ring connecting, green dot
 * connected, red ring disconnected (retrying), red ring with the cause while a connection fails
 * ("auth failed (401 errPartnerAuth)", "unreachable (ECONNREFUSED)", "TLS: <code>"). The texts are the `common.status.*` entries of
 * the node's message catalog (nodes/shared/locales/<lang>/common.json, merged into every node's
 * catalog by scripts/copy-assets.ts), looked up with the `RED._` of the node's module.
 */
import type { Node, NodeAPI } from 'node-red';
import { ApiError, OutcomeUnknownError, type ConnectionFailure } from '../../lib';
import type { FeedState } from '../../lib/feeds';
import type { FeedHealth, FeedReport } from './types';

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

/**
 * An error as a status says it, the cause first (the status is cut at 60 characters): for an
 * answer of the API with a reason (spec section 7 `detail.reason`, as the message states it,
 * e.g. restated in decimals), `<reason> (<HTTP status> <msg>)`: `send.amount: insufficient
 * balance: 1000.01 BTC-TESTNET needed … (400 Bad Request)`; for any other error its message
 * (`send.amount: at least 0.00000001 BTC-TESTNET, got 0`).
 */
export function errorStatusText(err: unknown): string {
  if (err instanceof ApiError && !(err instanceof OutcomeUnknownError) && err.statusCode > 0 && err.statedReason) return `${err.statedReason} (${err.statusCode} ${err.msg})`;
  return err instanceof Error ? err.message : String(err);
}

/** Red ring with a short error text ({@link errorStatusText}, at most 60 characters). */
export function showError(node: Node, err: unknown): void {
  node.status({ fill: 'red', shape: 'ring', text: short(errorStatusText(err)) });
}

/**
 * Red ring "outcome unknown" with the payment's kind and key: it may have moved money. For an
 * action call's {@link OutcomeUnknownError} (no payment), the error's message ({@link showError}).
 * @param RED the Node-RED API of the node's module.
 * @param node the node whose status it sets.
 * @param err the call whose outcome is unknown.
 */
export function showOutcomeUnknown(RED: NodeAPI, node: Node, err: OutcomeUnknownError): void {
  if (err.kind === undefined || err.partner_txID === undefined) return showError(node, err);
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

/**
 * A connection failure in a few words (the `common.health.*` texts), e.g. `auth failed (401
 * errPartnerAuth)` for a refused API key or signature (spec section 7: HTTP status and the
 * body's `msg`), `unreachable (ECONNREFUSED)`, `unreachable (timeout)`, `TLS: DEPTH_ZERO_SELF_SIGNED_CERT`,
 * `HTTP 404 Not Found`, `not usable: apiKey: set the API key ...`.
 * @param RED the Node-RED API of the node's module.
 * @param failure the failure (lib connectionFailureOf).
 */
export function failureText(RED: NodeAPI, failure: ConnectionFailure): string {
  const status = failure.statusCode ?? 0;
  const msg = failure.msg ?? '';
  switch (failure.cause) {
    case 'badApiKey':
    case 'badSignature':
    case 'badTimestamp':
    case 'badToken':
      return RED._('common.health.authFailed', { status, msg });
    case 'forbidden':
      return RED._('common.health.forbidden', { status, msg });
    case 'unreachable':
      return RED._('common.health.unreachable', { code: String(failure.code ?? '') });
    case 'timeout':
      return RED._('common.health.timeout');
    case 'tls':
      return RED._('common.health.tls', { code: String(failure.code ?? msg) });
    case 'http':
      return RED._('common.health.http', { status, msg });
    case 'config':
      return RED._('common.health.config', { message: msg });
    default:
      return RED._('common.health.network', { code: String(failure.code ?? msg) });
  }
}

/**
 * A feed's health as a status: red ring with the cause while a failure is in force and the feed
 * is not connected ({@link failureText}), else {@link showFeedState}.
 * @param RED the Node-RED API of the node's module.
 * @param node the node whose status it sets.
 * @param health the feed's health.
 * @param note the node's own problem, already in words, or undefined (see {@link showFeedState}).
 */
export function showFeedHealth(RED: NodeAPI, node: Node, health: FeedHealth, note?: string): void {
  if (health.failure && health.state !== 'connected') {
    const text = failureText(RED, health.failure);
    node.status({ fill: 'red', shape: 'ring', text: short(note ? RED._('common.status.withNote', { state: text, note }) : text) });
  } else showFeedState(RED, node, health.state, note);
}

/**
 * Log a feed's report for the node (one node per shared feed logs them, so each is logged once):
 * `failing` with `node.error`, `recovered` with `node.log`, `warning` with `node.warn`. No text
 * holds a secret (lib's failure messages never quote a key).
 * @param RED the Node-RED API of the node's module.
 * @param node the node that logs.
 * @param report what to log.
 */
export function logFeedReport(RED: NodeAPI, node: Node, report: FeedReport): void {
  if (report.kind === 'failing') node.error(RED._('common.health.failing', { cause: failureText(RED, report.failure), message: report.error.message }));
  else if (report.kind === 'recovered') node.log(RED._('common.health.recovered'));
  else node.warn(RED._('common.health.warning', { message: report.error.message }));
}
