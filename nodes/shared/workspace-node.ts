/**
 * The runtime shape of the v2 operation nodes (`custody-policy`, `custody-portfolio`): the same
 * contract as `registerOperationNode` (read config, resolve input, call lib, send
 * `msg.payload` = body and `msg.statusCode`; errors to `done(err)` with `msg.statusCode`), over
 * the config node's {@link WorkspaceClient} (`x-token`). An operation may add a plain-words
 * `msg.note` and a yellow status when its answer is not the end of the story (an update request
 * awaiting approval, a wallet address still being computed).
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { ApiResponse, ConfigError, describeOperation, OperationSpec, WorkspaceClient, OperationDescription } from '../../lib';
import { resolveInput, EditorField } from './input';
import { showError } from './status';
import { requestRunner } from './request-runner';
import { registerWithEditorDescription } from './operation-node';
import type { CustodyConfigNode, OperationNodeDef, CustodyMessage } from './types';

/** The msg of a v2 node: `note` says in words what the answer means when it is not final. */
export type WorkspaceMessage = CustodyMessage & { note?: string };

/** One operation of a v2 node. */
export interface WorkspaceOperation {
  /** the request it sends (for the editor's call and field list) */
  spec: OperationSpec;
  /** editor properties (rows) this operation uses */
  properties: string[];
  /** fields to list as read from msg.payload, when not those of `spec` */
  fields?: string[];
  /** required fields to list, when not those of `spec` */
  required?: string[];
  /** send the request(s); `config` is the node's editor properties */
  run(client: WorkspaceClient, input: Record<string, unknown>, config: Record<string, unknown>): Promise<ApiResponse>;
  /** a note when the answer is not final (shown as a yellow status and set as `msg.note`) */
  note?(data: unknown, input: Record<string, unknown>): string | undefined;
  /**
   * true for an operation made up for the simulator (not in the spec, lib
   * `SIMULATOR_ONLY_OPERATIONS`): refused with ECONFIG, before anything is sent, unless the
   * connection's environment is `simulator` or `custom` (lib then also requires a loopback v2
   * address: a standalone simulator).
   */
  simulatorOnly?: boolean;
}

/** A v2 node type: its operations and the editor properties that are API fields. */
export interface WorkspaceNodeType {
  type: string;
  operations: Record<string, WorkspaceOperation>;
  editorFields: readonly EditorField[];
}

/**
 * The error of a simulator-only operation on a connection to a hosted environment, or
 * undefined when it may run (environment `simulator` or `custom`; lib checks a custom address).
 */
function simulatorOnlyError(RED: NodeAPI, name: string, op: WorkspaceOperation, connection: CustodyConfigNode): ConfigError | undefined {
  if (!op.simulatorOnly) return undefined;
  const environment = connection.environment ?? 'simulator';
  if (environment === 'simulator' || environment === 'custom') return undefined;
  return new ConfigError(`operation: ${RED._('common.errors.simulatorOnly', { operation: name, environment })}`);
}

/** What the edit dialog shows per operation (served at `GET <admin>/custody/operations/<type>`). */
function describe(nodeType: WorkspaceNodeType): Record<string, OperationDescription & { properties: string[] }> {
  const out: Record<string, OperationDescription & { properties: string[] }> = {};
  for (const [name, op] of Object.entries(nodeType.operations)) {
    const d = describeOperation(op.spec);
    // workspaceID defaults to the connection's workspace: not something the user must give.
    const required = (op.required ?? d.required).filter((f) => f !== 'workspaceID');
    out[name] = { ...d, fields: op.fields ?? d.fields, required, properties: op.properties };
  }
  return out;
}

/**
 * Register a v2 operation node type with Node-RED.
 * @param RED the Node-RED API.
 * @param nodeType the type name, operations and editor fields.
 */
export function registerWorkspaceNode(RED: NodeAPI, nodeType: WorkspaceNodeType): void {
  function WorkspaceNode(this: Node, def: OperationNodeDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const connection = RED.nodes.getNode(def.connection) as CustodyConfigNode | null;
    const op: WorkspaceOperation | undefined = nodeType.operations[def.operation];
    const config = def as Record<string, unknown>;
    const runRequest = requestRunner(RED, node);

    const simulatorOnly = connection && op ? simulatorOnlyError(RED, def.operation, op, connection) : undefined;
    if (!connection) showError(node, new ConfigError(`connection: ${RED._('common.errors.noConnection')}`));
    else if (!op) showError(node, new ConfigError(`operation: ${RED._('common.errors.unknownOperation', { operation: JSON.stringify(def.operation) })}`));
    else if (simulatorOnly) showError(node, simulatorOnly);
    else node.status({});

    node.on('input', (msg: NodeMessageInFlow, send: (m: NodeMessageInFlow) => void, done: (err?: Error) => void) => {
      const out = msg as WorkspaceMessage;
      if (!connection) return done(new ConfigError(`connection: ${RED._('common.errors.noConnection')}`));
      if (!op) return done(new ConfigError(`operation: ${RED._('common.errors.expectedOperation', { operations: Object.keys(nodeType.operations).join(', '), operation: JSON.stringify(def.operation) })}`));
      if (simulatorOnly) return done(simulatorOnly);
      if (typeof connection.workspaceClient !== 'function') return done(new ConfigError(`connection: ${RED._('common.errors.noV2Support')}`));
      const input = resolveInput(config, nodeType.editorFields, msg.payload);
      runRequest(out, send, done, () =>
        connection
          .workspaceClient()
          .then((client) => op.run(client, input, config))
          .then((res) => {
            out.payload = res.data;
            out.statusCode = res.statusCode;
            const note = op.note?.(res.data, input);
            if (note) out.note = note;
            else delete out.note;
            return { statusCode: res.statusCode, note };
          }),
      );
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      node.status({});
      done();
    });
  }

  registerWithEditorDescription(RED, nodeType.type, WorkspaceNode, describe(nodeType));
}

/** A boolean editor property: `true`/`"true"` is true, anything else false. */
export function flag(v: unknown): boolean {
  return v === true || v === 'true';
}
