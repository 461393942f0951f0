/**
 * The send/status/error rules every request-sending node shares (docs/nodes.md "The msg
 * contract (every node)": output, errors, status): `registerOperationNode` (v1 and v2) runs
 * each input msg through one {@link RequestRunner}.
 */
import type { Node, NodeAPI, NodeMessageInFlow } from 'node-red';
import { ApiError, OutcomeUnknownError } from '../../lib';
import { showRequesting, showSuccess, showError, showNote, showOutcomeUnknown } from './status';
import type { CustodyMessage } from './types';

/** What a successful request leaves for the status: the HTTP status and, when the answer is not final, a note. */
export interface RequestOutcome {
  /** The HTTP status of the answer, shown in the green status. */
  statusCode: number;
  /** A plain-words note shown as a yellow status instead of the green one (v2 nodes). */
  note?: string;
}

/**
 * Run one msg's request: `work` sets `msg.payload` and `msg.statusCode` and resolves to the
 * outcome; then the msg is sent and `done()` called. On failure `msg.statusCode` is the HTTP
 * status of the error answer (deleted when no answer came or nothing was sent), `msg.outcome`
 * says what the failure tells (`refused`, `notSent`, `outcomeUnknown`; see `MessageOutcome`),
 * and `done(err)` is called, so Catch nodes receive it.
 */
export type RequestRunner = (
  msg: CustodyMessage,
  send: (m: NodeMessageInFlow) => void,
  done: (err?: Error) => void,
  work: () => Promise<RequestOutcome>,
) => void;

/**
 * A runner for `node` that sets one status per burst, not per msg: blue when the first request
 * of a burst starts; when its last ends, green with the HTTP status (yellow with the note of the
 * last request to end, when it has one), unless one of the burst failed: a red ring stays until
 * the next burst.
 * @param RED the Node-RED API of the node's module (the status texts of its catalog).
 * @param node the node whose status it sets.
 */
export function requestRunner(RED: NodeAPI, node: Node): RequestRunner {
  let inFlight = 0;
  /** Failures in the current burst: the status stays red after its last request. */
  let burstFailures = 0;
  let lastNote: string | undefined;
  return (msg, send, done, work) => {
    if (inFlight++ === 0) showRequesting(RED, node);
    work().then(
      (outcome) => {
        lastNote = outcome.note;
        if (--inFlight === 0) {
          if (burstFailures === 0) {
            if (lastNote) showNote(node, lastNote);
            else showSuccess(RED, node, outcome.statusCode);
          }
          burstFailures = 0;
        }
        send(msg);
        done();
      },
      (err: Error) => {
        if (--inFlight > 0) burstFailures++;
        else burstFailures = 0;
        // The HTTP status of the answer; none when no answer came or nothing was sent.
        if (err instanceof ApiError && err.statusCode > 0) msg.statusCode = err.statusCode;
        else delete msg.statusCode;
        // What the failure tells about the request's effect (docs/nodes.md "Retries: the three failure kinds").
        msg.outcome = err instanceof ApiError ? err.failure : 'notSent';
        if (err instanceof OutcomeUnknownError) showOutcomeUnknown(RED, node, err);
        else showError(node, err);
        done(err);
      },
    );
  };
}
