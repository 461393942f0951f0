/**
 * The public entry of lib/actions (`@custodyflow/node-red-custody/actions`; nodes import it as
 * `lib/actions`): approving or rejecting a core client action (spec section 4, `PUT`/`DELETE
 * /coreclient/{client_id}/action/{action_id}`), reading the outcome of such a call
 * (outcome.ts: {@link readCallOutcome}, {@link ActionNotAppliedError}; a call still unknown is
 * lib/api/errors.ts `OutcomeUnknownError`, from the package root) and resolving an unknown one with the one delay table
 * (resolve.ts: {@link resolveCallOutcome}, {@link RESOLVE_DELAYS_MS}); shared by the approver and
 * the review (docs/nodes.md). Never loaded by the package root (lib/index.ts).
 */
export * from './outcome';
export { OutcomeUnknownError, type ActionCallRef, type LastAttempt } from '../api/errors';
export * from './resolve';
