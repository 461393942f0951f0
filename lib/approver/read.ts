/**
 * The read step of the approver's pipeline (approver.ts): the action's details (GET
 * /coreclient/{client_id}/action/{action_id}, spec section 4) when the msg lacks them, or when it
 * may have been decided before (a takeover, a recent data loss of Redis: docs/scale-out.md); and
 * the outcome of an action another instance decided.
 */
import type { CustodyClient } from '../client/client';
import { abortableSleep } from '../support/backoff';
import { type Action } from '../api/v1/core-client';
import type { Entry } from './book';
import { AGAIN, type ApproverCore } from './core';
import { bareDecision } from './facts';
import type { ApproverOutcome, DecidedRecord, DecisionRecord } from './types';
import { getAction } from '../client/v1/core-client';

/** What the approver knows of an action before its decision: the action as read, and why it is decided (again). */
export interface ReadAction {
  action: Record<string, unknown>;
  reasons: string[];
}

/**
 * Read the action when its details are missing or it must be read (a takeover, a recent data
 * loss of Redis). @returns the action and the reasons so far; a held or skipped outcome when
 * it is no longer pending; {@link AGAIN} when a takeover could not read it.
 */
export async function readAction(core: ApproverCore, client: CustodyClient, input: Record<string, unknown>, clientId: string, actionId: string, earlier: Entry | undefined, mustRead: boolean): Promise<ReadAction | ApproverOutcome | typeof AGAIN> {
  let action: Record<string, unknown> = { ...input, client_id: clientId, action_id: actionId };
  const reasons: string[] = [];
  if (earlier?.state === 'failed') reasons.push('decided again: the earlier call failed');
  if (!mustRead && action.details && typeof action.details === 'object' && action.type) return { action, reasons };
  try {
    const read = await getAction(client, { client_id: clientId, action_id: actionId });
    if (read.data.status !== 'pending') {
      const a = { ...action, ...read.data, client_id: clientId, action_id: actionId };
      const why = mustRead ? `the action is ${read.data.status}, not pending: decided before (another instance, or before Redis lost its data): nothing to decide` : `the action is ${read.data.status}, not pending: nothing to decide`;
      return { decision: bareDecision(a, clientId, actionId, 'hold', [why], core.mode, core.opts.now()), output: core.claims.shared ? 'skipped' : 'held', action: a };
    }
    action = { ...action, ...(read.data as Action), client_id: clientId, action_id: actionId };
  } catch (e) {
    if (mustRead) {
      // Not knowing whether it is still pending, a takeover must not call: try again later.
      core.claims.warn(`action ${actionId}: could not be read before taking it over (${(e as Error).message})`);
      await abortableSleep(1000, core.closing.signal);
      return AGAIN;
    }
    reasons.push(`details: the action could not be read (${(e as Error).message}): conditions that need them fail`);
  }
  return { action, reasons };
}

/** The action was decided by another instance (or by this one before a restart): no msg, nothing sent. */
export function decidedElsewhere(core: ApproverCore, record: string, entry: Entry, action: Record<string, unknown>): ApproverOutcome {
  let parsed: DecidedRecord;
  try {
    parsed = JSON.parse(record) as DecidedRecord;
  } catch {
    parsed = { decision: bareDecision(action, String(action.client_id), String(action.action_id), 'hold', ['decided by another instance (its record could not be read)'], core.mode, core.opts.now()), output: 'held', instance: 'unknown' };
  }
  const decision: DecisionRecord = { ...parsed.decision, ...(parsed.instance !== core.claims.instance ? { decidedBy: parsed.instance } : {}) };
  entry.decision = decision;
  entry.state = 'done';
  entry.elsewhere = true;
  return { decision, output: 'skipped', action };
}
