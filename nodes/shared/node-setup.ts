/**
 * The first lines of every custody flow node's constructor, written once: the stored properties
 * brought to the node type's latest shape (nodes/shared/migrate.ts), Node-RED's `createNode`, the
 * `custody-config` node its `connection` property names, and the error a node without a usable
 * connection shows and answers (`connection: ...`, code ECONFIG).
 */
import os from 'node:os';
import path from 'node:path';
import type { Node, NodeAPI } from 'node-red';
import { ConfigError } from '../../lib';
import type { ConnectedNodeDef, CustodyConfigNode } from './types';
import { migrate, type Migrated, type TypedFieldTable } from './migrate';
import { typedFieldDefaults } from './editor-table';

/** The operation nodes' TypedInput properties, for the migrations (built on first use). */
let typedFields: TypedFieldTable | undefined;

/**
 * Bring a node's stored properties to its type's latest shape, in place (nodes/shared/migrate.ts
 * `migrate`): before anything reads them. Node-RED hands each constructor its own copy of the
 * flow's node object, so the flows file is not changed; the editor saves the new shape once
 * the node's dialog is opened and the flow deployed.
 * @param def the node's properties as Node-RED passes them (with `type`).
 * @returns the versions it went from and to.
 */
export function migrateNodeProperties(def: Record<string, unknown>): Migrated {
  typedFields ??= typedFieldDefaults();
  const m = migrate(String(def.type), def, typedFields);
  if (m.stored !== def) {
    for (const key of Object.keys(def)) if (!(key in m.stored)) delete def[key];
    Object.assign(def, m.stored);
  }
  return m;
}

/**
 * Migrate the node's stored properties ({@link migrateNodeProperties}: `def` is changed in place),
 * create the node (Node-RED's `RED.nodes.createNode`) and find its connection. A node stored by a
 * later release (a `schemaVersion` above its type's latest) is read as it is, with a warning.
 * @param RED the Node-RED API of the node's module.
 * @param node the node being constructed (`this` of its constructor).
 * @param def the node's editor properties.
 * @returns the `custody-config` node `def.connection` names, or null when there is none (not
 *   set, deleted, or disabled).
 */
export function createConnectedNode(RED: NodeAPI, node: Node, def: ConnectedNodeDef): CustodyConfigNode | null {
  const migrated = migrateNodeProperties(def as unknown as Record<string, unknown>);
  RED.nodes.createNode(node, def);
  if (migrated.from > migrated.latest) node.warn(RED._('common.errors.laterSchemaVersion', { version: migrated.from, latest: migrated.latest }));
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
