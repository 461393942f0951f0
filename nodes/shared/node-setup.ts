/**
 * The first lines of every custody flow node's constructor, written once: Node-RED's
 * `createNode`, the `custody-config` node its `connection` property names, and the error a node
 * without a usable connection shows and answers (`connection: ...`, code ECONFIG).
 */
import os from 'node:os';
import path from 'node:path';
import type { Node, NodeAPI } from 'node-red';
import { ConfigError } from '../../lib';
import type { ConnectedNodeDef, CustodyConfigNode } from './types';

/**
 * Create the node (Node-RED's `RED.nodes.createNode`) and find its connection.
 * @param RED the Node-RED API of the node's module.
 * @param node the node being constructed (`this` of its constructor).
 * @param def the node's editor properties.
 * @returns the `custody-config` node `def.connection` names, or null when there is none (not
 *   set, deleted, or disabled).
 */
export function createConnectedNode(RED: NodeAPI, node: Node, def: ConnectedNodeDef): CustodyConfigNode | null {
  RED.nodes.createNode(node, def);
  return RED.nodes.getNode(def.connection) as CustodyConfigNode | null;
}

/**
 * The error of a node without a usable connection: `connection: <common.errors.noConnection>`
 * in the node's language, code ECONFIG.
 * @param RED the Node-RED API of the node's module (its catalog holds the common texts).
 * @returns a new {@link ConfigError}.
 */
export function noConnectionError(RED: NodeAPI): ConfigError {
  return new ConfigError(`connection: ${RED._('common.errors.noConnection')}`);
}

/**
 * The Node-RED user directory (`RED.settings.userDir`, else `~/.node-red`), where the pack keeps
 * its durable files (docs/nodes.md: the approver's and the review's audit files, the review queue).
 */
export function userDirOf(RED: NodeAPI): string {
  return (RED.settings as { userDir?: string }).userDir || path.join(os.homedir(), '.node-red');
}

/**
 * The audit file of a node (docs/audit.md): its `auditFile` setting (relative: below the user
 * directory), or `<userDir>/custodyflow-audit/<node id>.jsonl` when empty.
 */
export function auditFileOf(RED: NodeAPI, nodeId: string, setting: string | undefined): string {
  return path.resolve(userDirOf(RED), (setting || '').trim() || path.join('custodyflow-audit', `${nodeId}.jsonl`));
}
