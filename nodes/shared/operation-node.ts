/**
 * The one runtime shape of every operation node (DESIGN.md "A node file reads top to bottom:
 * read config, resolve input, call lib, send"): resolve the input from the editor and
 * `msg.payload`, apply the node's input options (decimal amounts, default expiry), call the
 * lib operation, and send `msg.payload` = body, `msg.statusCode` = HTTP status, `msg.custody` =
 * {@link CustodyTrace} (node type, operation, path ids used); on error set
 * `msg.statusCode` and call `done(err)` so Catch nodes receive it.
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { callOperation, submitOperation, resolveSubmission, resolveInputFrom, describeResolve, SUBMISSION_KINDS, decimalAmountsToBaseUnits, describeOperation, ConfigError, OperationSpec, CustodyClient, OperationDescription, type SubmissionKind } from '../../lib';
import { resolveInput, EditorField } from './input';
import { showError } from './status';
import { requestRunner, type RequestOutcome } from './request-runner';
import { partnerTxIdSource } from './business-key';
import type { CustodyConfigNode, OperationNodeDef, CustodyMessage, CustodyTrace } from './types';

/** How a node type maps its `operation` values to lib operations, and which editor fields it has. */
export interface OperationNodeType {
  /** The Node-RED type name, e.g. `custody-transfer`. */
  type: string;
  /** `operation` value -> lib operation, e.g. `{create: v1Operations.transfer.create}`. */
  operations: Record<string, OperationSpec>;
  /** Editor properties that are API fields (path ids, selected body fields), e.g. `company_id`. */
  editorFields: readonly EditorField[];
  /**
   * For the money-moving nodes: the submission kind their `resolve` operation looks up (lib
   * `resolveSubmission`): the operation is offered besides `operations`.
   */
  resolve?: SubmissionKind;
}

/** The operation name of the look-up of a payment whose outcome is unknown. */
export const RESOLVE_OPERATION = 'resolve';

/**
 * The trace an operation node leaves on its output msg (`msg.custody`): which node type and
 * operation answered, and the path ids the call used, so a later node (custody-track) knows the
 * kind of transaction and its owner without being told again.
 * @param type the node type, e.g. `custody-transfer`.
 * @param operation the operation, e.g. `create`.
 * @param input the resolved request fields; `company_id` and `client_id` are copied when they are non-empty strings.
 */
export function custodyTrace(type: string, operation: string, input: Record<string, unknown>): CustodyTrace {
  const trace: CustodyTrace = { type, operation };
  if (typeof input.company_id === 'string' && input.company_id) trace.company_id = input.company_id;
  if (typeof input.client_id === 'string' && input.client_id) trace.client_id = input.client_id;
  return trace;
}

/** `amountFormat` editor option: amounts are base units (default) or decimal strings in whole units. */
type AmountFormat = 'baseUnits' | 'decimal';

/**
 * Register an operation node type with Node-RED.
 * @param RED the Node-RED API passed to the node module.
 * @param nodeType the type name, operations and editor fields.
 */
export function registerOperationNode(RED: NodeAPI, nodeType: OperationNodeType): void {
  function OperationNode(this: Node, def: OperationNodeDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const connection = RED.nodes.getNode(def.connection) as CustodyConfigNode | null;
    const resolving = Boolean(nodeType.resolve) && def.operation === RESOLVE_OPERATION;
    const spec: OperationSpec | undefined = nodeType.operations[def.operation];
    const amountFormat: AmountFormat = def.amountFormat === 'decimal' ? 'decimal' : 'baseUnits';
    const expiresAfter = Number(def.expiresAfter);
    const defaultExpiry = spec && describeOperation(spec).expires && Number.isInteger(expiresAfter) && expiresAfter > 0 ? expiresAfter : 0;
    const config = def as Record<string, unknown>;
    const runRequest = requestRunner(RED, node);

    if (!connection) showError(node, new ConfigError(`connection: ${RED._('common.errors.noConnection')}`));
    else if (!spec && !resolving) showError(node, new ConfigError(`operation: ${RED._('common.errors.unknownOperation', { operation: JSON.stringify(def.operation) })}`));
    else node.status({});
    // After the first status: a partnerTxId refused at deploy turns it red.
    // The money-moving operation's key setting also names the payment `resolve` looks up.
    const keyed = spec ?? (resolving ? Object.values(nodeType.operations).find((o) => o.submission) : undefined);
    const partnerTxId = partnerTxIdSource(RED, node, config, keyed);

    async function run(client: CustodyClient, msg: CustodyMessage): Promise<RequestOutcome> {
      let input = resolveInput(config, nodeType.editorFields, msg.payload);
      if (partnerTxId) input.partner_txID = await partnerTxId(msg);
      if (resolving) return resolvePayment(client, msg, input);
      if (defaultExpiry && input.expires === undefined) input.expires = Math.floor(Date.now() / 1000) + defaultExpiry;
      if (amountFormat === 'decimal') input = await decimalAmountsToBaseUnits(client, spec!, input);
      msg.custody = custodyTrace(nodeType.type, def.operation, input);
      if (spec!.submission) {
        // Money moves: through the config node's submission journal, exactly once.
        const res = await submitOperation(client, spec!, input, { journal: await connection!.journal() });
        msg.payload = res.data;
        msg.statusCode = res.statusCode;
        msg.outcome = res.outcome;
        return { statusCode: res.statusCode, note: res.outcome === 'existing' ? RED._('common.status.existing', { tx_id: (res.data as { tx_id?: string }).tx_id ?? '' }).trim() : undefined };
      }
      const res = await callOperation(client, spec!, input);
      msg.payload = res.data;
      msg.statusCode = res.statusCode;
      return { statusCode: res.statusCode };
    }

    /** The `resolve` operation: look a payment up (lib `resolveSubmission`); `msg.payload` = its result. */
    async function resolvePayment(client: CustodyClient, msg: CustodyMessage, input: Record<string, unknown>): Promise<RequestOutcome> {
      const result = await resolveSubmission(client, resolveInputFrom(nodeType.resolve!, input), await connection!.journal());
      msg.payload = result;
      delete msg.statusCode;
      msg.custody = custodyTrace(nodeType.type, RESOLVE_OPERATION, input);
      return { statusCode: 200, note: result.result === 'found' ? undefined : result.result === 'ambiguous' ? RED._('common.status.ambiguous') : result.keyFreed ? RED._('common.status.notFoundKeyFreed') : RED._('common.status.notFoundYet') };
    }

    node.on('input', (msg: NodeMessageInFlow, send: (m: NodeMessageInFlow) => void, done: (err?: Error) => void) => {
      const out = msg as CustodyMessage;
      if (!connection) return done(new ConfigError(`connection: ${RED._('common.errors.noConnection')}`));
      if (!spec && !resolving) return done(new ConfigError(`operation: ${RED._('common.errors.expectedOperation', { operations: [...Object.keys(nodeType.operations), ...(nodeType.resolve ? [RESOLVE_OPERATION] : [])].join(', '), operation: JSON.stringify(def.operation) })}`));
      runRequest(out, send, done, () => connection.client().then((client) => run(client, out)));
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      node.status({});
      done();
    });
  }

  registerWithEditorDescription(RED, nodeType.type, OperationNode, editorDescription(nodeType));
}

/**
 * Register a request-sending node type (v1 operation nodes, v2 workspace nodes) with Node-RED,
 * and serve what its edit dialog shows per operation at
 * `GET <admin>/custody/operations/<type>` (behind the type's read permission). The edit dialog
 * reads its per-operation rows and tips from there (resources/custody-editor.js), so they come
 * from the same declarations the runtime sends.
 * @param RED the Node-RED API.
 * @param type the node type name, e.g. `custody-transfer`.
 * @param constructor the node's constructor.
 * @param described the per-operation description, served as JSON.
 */
export function registerWithEditorDescription(RED: NodeAPI, type: string, constructor: (this: Node, def: OperationNodeDef) => void, described: unknown): void {
  RED.nodes.registerType(type, constructor as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
  RED.httpAdmin.get(`/custody/operations/${type}`, RED.auth.needsPermission(`${type}.read`), (_req, res) => {
    res.json(described);
  });
}

/** Per operation: its description plus the editor properties (rows) it uses. */
export interface EditorOperation extends OperationDescription {
  /** Editor properties shown for this operation: its API fields, `partnerTxId`, `amountFormat`, `expiresAfter`. */
  properties: string[];
}

/**
 * What the edit dialog of a node type shows per operation: served at
 * `GET <admin>/custody/operations/<type>`.
 */
export function editorDescription(nodeType: OperationNodeType): Record<string, EditorOperation> {
  const out: Record<string, EditorOperation> = {};
  for (const [operation, spec] of Object.entries(nodeType.operations)) {
    const d = describeOperation(spec);
    const topLevel = new Set(d.fields.map((f) => f.split('.')[0]));
    const properties = nodeType.editorFields
      .map((e) => (typeof e === 'string' ? [e, e] : e))
      .filter(([field]) => topLevel.has(field))
      .map(([, property]) => property);
    if (topLevel.has('partner_txID')) properties.push('partnerTxId'); // the business key row (nodes/shared/business-key.ts)
    if (d.amounts) properties.push('amountFormat');
    if (d.expires) properties.push('expiresAfter');
    // The node fills `expires` from "Expires after" when the msg has none.
    const required = d.expires ? d.required.map((f) => (f === 'expires' ? 'expires (or Expires after)' : f)) : d.required;
    out[operation] = { ...d, required, properties };
  }
  if (nodeType.resolve) {
    // Its rows: the owner id and the key; the other fields it reads come from msg.payload.
    const owner = SUBMISSION_KINDS[nodeType.resolve].owner;
    const properties = nodeType.editorFields.map((e) => (typeof e === 'string' ? e : e[1])).filter((p) => p === owner);
    out[RESOLVE_OPERATION] = { ...describeResolve(nodeType.resolve), properties: [...properties, 'partnerTxId'] };
  }
  return out;
}
