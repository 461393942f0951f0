/**
 * `custody-policy`: the v2 policies of a workspace (spec section 2 "v2 resources", section 4
 * "v2 endpoints"): `list`, `create` (the expression is built from the editor's threshold and
 * members, or given whole in `msg.payload.expression`), `addMember` (the full policy body with
 * an extra member rule, PUT: the answer is an update request awaiting approval), and the update
 * request itself: `getAction`, `approveAction` (as the connection's API key). `getAction` and
 * `approveAction` are simulator only (not in the spec): refused with ECONFIG on a hosted environment.
 */
import type { NodeAPI } from 'node-red';
import { createPolicy, listPolicies, addPolicyMember, getWorkspaceAction, approveWorkspaceAction, ValidationError, PolicyMember, PolicyExpression } from '../../lib';
import { isPlainObject, flag } from '../shared/input';
import { registerOperationNode } from '../shared/operation-node';

/** The editor's threshold: a whole number, or undefined when left empty. @throws {ValidationError} naming `threshold`. */
function editorThreshold(RED: NodeAPI, v: unknown): number | undefined {
  const s = String(v ?? '').trim();
  if (s === '') return undefined;
  if (!/^\d+$/.test(s)) throw new ValidationError('threshold', RED._('custody-policy.errors.threshold', { value: JSON.stringify(s) }));
  return Number(s);
}

/** The editor's members (`[{kind, id}]`), without empty rows; undefined when none. */
function editorMembers(v: unknown): PolicyMember[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const members = v.filter((m) => isPlainObject(m) && typeof m.id === 'string' && m.id.trim() !== '').map((m) => ({ id: String(m.id).trim(), kind: m.kind === 'apiKey' ? 'apiKey' : 'human' }) as PolicyMember);
  return members.length ? members : undefined;
}

/** A boolean from the editor (true wins) or else from msg.payload. */
function booleanField(editor: Record<string, unknown>, property: string, input: Record<string, unknown>, field: string): boolean {
  if (flag(editor[property])) return true;
  return typeof input[field] === 'boolean' ? (input[field] as boolean) : false;
}

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, {
    type: 'custody-policy',
    behaviours: {
      list: { run: (client, input) => listPolicies(client, input) },
      create: {
        run: (client, input, editor) => {
          const adminLocked = booleanField(editor, 'adminLocked', input, 'adminLocked');
          const allowDuplicates = booleanField(editor, 'allowDuplicates', input, 'allowDuplicates');
          const threshold = editorThreshold(RED, editor.threshold);
          const members = editorMembers(editor.members);
          if (threshold === undefined && members === undefined && input.expression !== undefined) {
            // The whole expression of spec section 2 given in msg.payload.
            return createPolicy(client, { ...input, expression: input.expression as PolicyExpression, adminLocked, allowDuplicates, policyType: 'transaction' });
          }
          return createPolicy(client, {
            workspaceID: input.workspaceID as string | undefined,
            name: input.name as string,
            threshold: (threshold ?? input.threshold) as number,
            members: (members ?? input.members) as PolicyMember[],
            adminPolicyID: (input.adminPolicyID as string) ?? '',
            policyType: 'transaction',
            adminLocked,
            allowDuplicates,
          });
        },
      },
      addMember: {
        run: (client, input) => addPolicyMember(client, input as { policyID: string; memberID: string; workspaceID?: string }),
        note: (data, input) => {
          const d = data as { actionID?: string; status?: string };
          if (d.status !== 'pending') return undefined;
          return RED._('custody-policy.status.memberPending', { actionID: String(d.actionID), memberID: String(input.memberID), policyID: String(input.policyID) });
        },
      },
      getAction: {
        run: (client, input) => getWorkspaceAction(client, input as { actionID: string }),
        note: (data) => pendingNote(RED, data),
      },
      approveAction: {
        run: (client, input) => approveWorkspaceAction(client, input as { actionID: string }),
        note: (data) => pendingNote(RED, data),
      },
    },
  });
};

/** A note for an update request that is still pending after this answer (the text of the node's catalog). */
function pendingNote(RED: NodeAPI, data: unknown): string | undefined {
  const d = data as { actionID?: string; status?: string; approvedCount?: number; threshold?: number };
  if (d.status !== 'pending') return undefined;
  return RED._('custody-policy.status.actionPending', { actionID: String(d.actionID), approved: d.approvedCount ?? 0, threshold: d.threshold ?? '?' });
}
