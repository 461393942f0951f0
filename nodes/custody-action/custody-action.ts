/**
 * `custody-action`: the `action` operations of spec section 4 (see `lib/api/v1`), one per
 * `operation` value. Editor fields (TypedInputs, nodes/shared/editor-table.ts): client_id,action_id; any of them left empty is
 * read from `msg.payload`, with every other request field. The answer (`{code, msg}`, spec section
 * 4 `PUT`/`DELETE /coreclient/{client_id}/action/{action_id}`) is sent with the `action_id` and
 * `client_id` it decided (docs/nodes.md "custody-action").
 */
import type { NodeAPI } from 'node-red';
import { registerOperationNode } from '../shared/operation-node';

export = function register(RED: NodeAPI): void {
  const withIds = (data: unknown, input: Record<string, unknown>) => (data && typeof data === 'object' && !Array.isArray(data) ? { ...data, action_id: input.action_id, client_id: input.client_id } : data);
  registerOperationNode(RED, { type: 'custody-action', answers: { approve: withIds, reject: withIds } });
};
