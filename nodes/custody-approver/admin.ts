/**
 * The admin HTTP API of `custody-approver` (docs/policies.md), on Node-RED's `RED.httpAdmin`
 * behind `RED.auth.needsPermission('custody.policy.read')` (no login 401; a logged-in user
 * without the scope 401, as Node-RED answers), registered once by the node module:
 *
 * - `POST /custody/approvers/{node id}/simulate` with `{rules, defaultDecision, from, to}`: lib
 *   `simulate` (docs/nodes.md "Simulating a draft") of the draft over the recorded history of the
 *   deployed approver `{node id}` (its audit file, every segment) and the audit files of the
 *   deployed custody-review nodes on the same connection (actions a person decided there are shown
 *   as such). Answers 200 with lib's `SimulationResult`.
 * - `POST /custody/approvers/{node id}/try` with `{rules, defaultDecision, action}`: the deployed
 *   approver's `Approver.tryAction` (lib/approver/approver.ts): the draft's decision for one
 *   action typed by hand, the approver's current velocity windows read, not consumed. Answers 200
 *   with lib's `TryResult`.
 *
 * - `GET /custody/approvers/policy-schema`: the JSON Schema of a policy file
 *   (schemas/approval-policy.schema.json, lib's `POLICY_SCHEMA_FILE`), as the package ships it; the
 *   dialog checks an imported policy file against it.
 *
 * Errors: 400 `{error, field}` naming the field (a bad draft `rules[2].maxAmount`,
 * `defaultDecision`; a bad period `from`, `to`; a bad action `action.amount`; a body that is no
 * JSON object `body`); 404 `{error, node}` when `{node id}` is not a deployed custody-approver,
 * or one that could not start (why in `error`); 503 `{error, node}` (and `Retry-After: 1`) while
 * it is starting (opening and verifying its audit file), or, for a trial, while the shared velocity
 * windows cannot be read (coordination through Redis unavailable); 500 `{error}` otherwise (an audit file
 * that cannot be read). Neither route writes an audit line, touches a velocity window or calls the
 * API (the engine is pure); the trial only reads the asset's scale from the connection's cached
 * asset list (GET /assets) when the action gives no `scale`. Numbers that lib holds as bigint are
 * answered as decimal text.
 *
 * This file loads no lib/approver code at import (types only): a handler loads it on its first
 * request, through nodes/shared/services.ts.
 */
import fs from 'node:fs';
import type { NodeAPI } from 'node-red';
import type { Request, Response } from 'express';
import type { Approver } from '../../lib/approver';
import { approverLib } from '../shared/services';
import { auditFileOf } from '../shared/node-setup';

/** The admin path of a deployed approver's simulation, below Node-RED's admin root. */
export const SIMULATE_PATH = '/custody/approvers/:id/simulate';

/** The admin path of a deployed approver's trial of one action, below Node-RED's admin root. */
export const TRY_PATH = '/custody/approvers/:id/try';

/** The admin path of the policy file's JSON Schema, below Node-RED's admin root. */
export const SCHEMA_PATH = '/custody/approvers/policy-schema';

/** The scope every route of this file needs. */
export const POLICY_READ_SCOPE = 'custody.policy.read';

/** One deployed approver node as the admin API sees it. */
export interface ApproverNodeEntry {
  id: string;
  name: string;
  /** Its connection (custody-config node id), '' when none. */
  connection: string;
  /** Its audit file's live segment (absolute path). */
  auditFile: string;
  /** The approver once it decides: undefined while it starts. */
  approver?: Approver;
  /** Why it could not start (its status error), when it could not. */
  failed?: string;
}

/** The approver nodes deployed now, by node id (added by each node at construction, removed at its close). */
export const approverNodes = new Map<string, ApproverNodeEntry>();

/** An error answer with its status. */
class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** JSON text of `v` with bigints as decimal text. */
function toJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

function send(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.status(status);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.type('application/json').send(toJson(body));
}

/** Answer `e`: an {@link AdminError} by its status, a lib ValidationError 400 naming its field, anything else 500. */
function sendError(res: Response, e: unknown): void {
  if (e instanceof AdminError) {
    send(res, e.status, { error: e.message, ...e.extra }, e.status === 503 ? { 'Retry-After': '1' } : {});
    return;
  }
  const v = e as { code?: unknown; field?: unknown; message?: unknown };
  if (v?.code === 'EINPUT' && typeof v.field === 'string') {
    send(res, 400, { error: String(v.message), field: v.field });
    return;
  }
  if (v?.code === 'ECOORDINATION') {
    send(res, 503, { error: String(v.message) }, { 'Retry-After': '1' });
    return;
  }
  send(res, 500, { error: e instanceof Error ? e.message : String(e) });
}

/** The body as an object. @throws {AdminError} 400 naming `body` otherwise. */
function bodyOf(req: Request, expected: string): Record<string, unknown> {
  const body = req.body as unknown;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new AdminError(400, `body: expected a JSON object ${expected}`, { field: 'body' });
  return body as Record<string, unknown>;
}

/** The started approver entry `id`. @throws {AdminError} 404 (not deployed, could not start) or 503 (starting). */
function startedEntry(id: string): ApproverNodeEntry & { approver: Approver } {
  const entry = approverNodes.get(id);
  const quoted = JSON.stringify(id).slice(0, 60);
  if (!entry) throw new AdminError(404, `no deployed custody-approver node ${quoted}`, { node: id });
  if (entry.failed !== undefined) throw new AdminError(404, `custody-approver node ${quoted} is deployed but does not decide: ${entry.failed}`, { node: id });
  if (!entry.approver) throw new AdminError(503, `custody-approver node ${quoted} is starting (opening its audit file): try again`, { node: id });
  return entry as ApproverNodeEntry & { approver: Approver };
}

/** The audit files of the deployed custody-review nodes on `connection` (none when it is ''). */
export function reviewAuditFiles(RED: NodeAPI, connection: string): string[] {
  const files: string[] = [];
  if (!connection) return files;
  RED.nodes.eachNode((n) => {
    const def = n as unknown as { id: string; type: string; connection?: string; auditFile?: string; d?: boolean };
    if (def.type === 'custody-review' && def.connection === connection && def.d !== true) files.push(auditFileOf(RED, def.id, def.auditFile));
  });
  return files;
}

/** Register the routes (once per Node-RED process: from the node module's register function). */
export function registerApproverRoutes(RED: NodeAPI): void {
  RED.httpAdmin.get(SCHEMA_PATH, RED.auth.needsPermission(POLICY_READ_SCOPE), (_req: Request, res: Response) => {
    fs.promises.readFile(approverLib().POLICY_SCHEMA_FILE, 'utf8').then(
      (text) => res.status(200).type('application/json').send(text),
      (e) => sendError(res, e),
    );
  });

  RED.httpAdmin.post(SIMULATE_PATH, RED.auth.needsPermission(POLICY_READ_SCOPE), (req: Request, res: Response) => {
    (async () => {
      const body = bodyOf(req, '{"rules": [...], "defaultDecision": "hold" | "reject", "from": ISO 8601, "to": ISO 8601}');
      const entry = startedEntry(String(req.params.id));
      const { simulate, compileDraft, simulationPeriod } = approverLib();
      // Checked before anything is read (simulate checks them again).
      compileDraft({ rules: body.rules, defaultDecision: body.defaultDecision });
      simulationPeriod({ from: body.from as string | number | undefined, to: body.to as string | number | undefined });
      return simulate({
        rules: body.rules,
        defaultDecision: body.defaultDecision,
        from: body.from as string | number | undefined,
        to: body.to as string | number | undefined,
        auditFile: entry.auditFile,
        reviewAuditFile: reviewAuditFiles(RED, entry.connection),
      });
    })().then(
      (result) => send(res, 200, result),
      (e) => sendError(res, e),
    );
  });

  RED.httpAdmin.post(TRY_PATH, RED.auth.needsPermission(POLICY_READ_SCOPE), (req: Request, res: Response) => {
    (async () => {
      const body = bodyOf(req, '{"rules": [...], "defaultDecision": "hold" | "reject", "action": {"type": ..., "asset": ..., "amount": ...}}');
      const entry = startedEntry(String(req.params.id));
      const action = body.action;
      if (!action || typeof action !== 'object' || Array.isArray(action)) {
        approverLib().compileDraft({ rules: body.rules, defaultDecision: body.defaultDecision });
        throw new AdminError(400, 'action: expected an object {type, asset, amount, destination, source, reference, at}', { field: 'action' });
      }
      return entry.approver.tryAction({ rules: body.rules, defaultDecision: body.defaultDecision }, action as Parameters<Approver['tryAction']>[1]);
    })().then(
      (result) => send(res, 200, result),
      (e) => sendError(res, e),
    );
  });
}
