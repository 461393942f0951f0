/**
 * The one runtime of every operation node, v1 and v2 (read config, resolve input, call lib,
 * send), driven by nodes/shared/palette.ts (the operationId each operation sends, declared in
 * lib/api/operations.ts) and nodes/shared/editor-table.ts (which editor
 * property fills which field): read the editor's TypedInput fields for the msg and merge them
 * over `msg.payload`, apply the node's input options (business key, decimal amounts, default
 * expiry), call the lib operation, and send `msg.payload` = body, `msg.statusCode` = HTTP status;
 * v1 nodes add `msg.custody` = {@link CustodyTrace}, v2 nodes `msg.note` when the answer is not
 * final. On error `msg.statusCode` is set and `done(err)` called, so Catch nodes receive it.
 *
 * The operation is the node's `operation` property, or with {@link OPERATION_FROM_MSG} the msg's
 * `msg.operation`, one of the node's operations (else refused with `EINPUT` naming `operation`).
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import {
  callOperation,
  submitOperation,
  resolveSubmission,
  SUBMISSION_KINDS,
  decimalAmountsToBaseUnits,
  restateAmountsInDecimals,
  describeOperation,
  callWorkspaceOperation,
  ConfigError,
  ValidationError,
  type TransactionKind,
  type ApiVersion,
  type ApiResponse,
  type OperationSpec,
  type CustodyClient,
  type WorkspaceClient,
  type OperationDescription,
  resolveInputFrom,
  describeResolve,
} from '../../lib';
import { isPlainObject, type EditorField } from './input';
import { showError } from './status';
import { requestRunner, type RequestOutcome } from './request-runner';
import { partnerTxIdSource } from './business-key';
import { fieldReader, refusingReader, type FieldReader } from './typed-field';
import { OPERATION_NODES, OPERATION_FROM_MSG, RESOLVE_OPERATION, fieldOf, type NodeOperation } from './editor-table';
import { paletteSpecs, paletteVersion, type OperationNodeType } from './palette';
import type { CustodyConfigNode, OperationNodeDef, CustodyMessage, CustodyTrace } from './types';
import { createConnectedNode, noConnectionError } from './node-setup';

export { RESOLVE_OPERATION, OPERATION_FROM_MSG };

/** The msg of an operation node: v2 nodes add `note`, in words, when the answer is not final. */
export type OperationMessage = CustodyMessage & { note?: string; operation?: unknown };

/**
 * What the node's own code does for one operation, when not the plain call of its operationId
 * (the v2 policy built from a form, a wallet's wait for its address).
 */
export interface OperationBehaviour {
  /**
   * Send the request(s).
   * @param client the connection's v2 client.
   * @param input the request fields: `msg.payload` with the applied editor fields over it.
   * @param editor every editor property this operation shows, read for this msg (undefined when empty).
   */
  run?(client: WorkspaceClient, input: Record<string, unknown>, editor: Record<string, unknown>): Promise<ApiResponse>;
  /** A note when the answer is not final (shown as a yellow status and set as `msg.note`). */
  note?(data: unknown, input: Record<string, unknown>): string | undefined;
}

/** How a node module registers its operation node: the type, and the v2 behaviours of its operations. */
export interface OperationNodeOptions {
  /** The node type, a key of the palette (nodes/shared/palette.ts) and of the editor table. */
  type: OperationNodeType;
  /** Per operation name: what the node's own code does instead of the plain call. */
  behaviours?: Record<string, OperationBehaviour>;
  /**
   * Per v1 operation name: the answer's `msg.payload` made from the parsed body and the request
   * fields (e.g. custody-action adds the `action_id` it decided to `{code, msg}`).
   */
  answers?: Record<string, (data: unknown, input: Record<string, unknown>, context: AnswerContext) => unknown>;
}

/** What an answer hook ({@link OperationNodeOptions.answers}) may use besides the body and the request. */
export interface AnswerContext {
  /** The node's Amounts option: `baseUnits` or `decimal`. */
  amountFormat: AmountFormat;
  /** The connection's client (e.g. the asset's scale, cached, for an answer in decimals). */
  client: CustodyClient;
}

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
export type AmountFormat = 'baseUnits' | 'decimal';

/** One operation of a node, resolved against its palette entry. */
interface ResolvedOperation {
  name: string;
  /** The declaration it sends (the paying operation's for `resolve`). */
  spec: OperationSpec | undefined;
  resolving: boolean;
  table: NodeOperation;
  /** The editor properties it shows. */
  properties: string[];
}

/** The operations of a node type, by name, with their declarations. */
function nodeOperations(type: OperationNodeType): Map<string, ResolvedOperation> {
  const table = OPERATION_NODES[type];
  const specs = paletteSpecs(type);
  const described = editorDescription(type);
  const out = new Map<string, ResolvedOperation>();
  for (const [name, op] of Object.entries(table.operations)) {
    const resolving = Boolean(table.resolve) && name === RESOLVE_OPERATION;
    const spec = resolving ? undefined : specs[op.spec ?? name];
    if (!resolving && !spec) throw new Error(`${type}: operation ${name} has no palette operation ${op.spec ?? name}`);
    out.set(name, { name, spec, resolving, table: op, properties: described[name].properties });
  }
  return out;
}

/**
 * The error of a simulator-only operation on a connection to a hosted environment, or
 * undefined when it may run (environment `simulator` or `custom`; lib checks a custom address).
 */
function simulatorOnlyError(RED: NodeAPI, op: ResolvedOperation, connection: CustodyConfigNode): ConfigError | undefined {
  if (!op.table.simulatorOnly) return undefined;
  const environment = connection.environment ?? 'simulator';
  if (environment === 'simulator' || environment === 'custom') return undefined;
  return new ConfigError(`operation: ${RED._('common.errors.simulatorOnly', { operation: op.name, environment })}`);
}

/**
 * Register an operation node type with Node-RED, and serve what its edit dialog shows per
 * operation at `GET <admin>/custody/operations/<type>` (behind the type's read permission).
 * @param RED the Node-RED API passed to the node module.
 * @param options the node type and its v2 behaviours.
 */
export function registerOperationNode(RED: NodeAPI, options: OperationNodeOptions): void {
  const type = options.type;
  const version: ApiVersion = paletteVersion(type);
  const table = OPERATION_NODES[type];
  const operations = nodeOperations(type);
  const names = [...operations.keys()];
  const paying = Object.values(paletteSpecs(type)).find((o) => o.submission);

  function OperationNode(this: Node, def: OperationNodeDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const config = def as Record<string, unknown>;
    const fromMsg = def.operation === OPERATION_FROM_MSG;
    const fixed = fromMsg ? undefined : operations.get(def.operation);
    const amountFormat: AmountFormat = def.amountFormat === 'decimal' ? 'decimal' : 'baseUnits';
    const expiresAfter = expiresAfterOf(RED, def.expiresAfter);
    const runRequest = requestRunner(RED, node);

    // Each editor property's reader, checked now: a typed value that can never work turns the
    // status red (when the operation uses it) and refuses the msgs that need it.
    const readers = new Map<string, FieldReader>();
    const refused = new Map<string, Error>();
    for (const property of table.fields) {
      const f = fieldOf(type, property);
      if (f.custom) continue;
      try {
        readers.set(property, fieldReader(RED, node, config, property, f.field, f.kind));
      } catch (e) {
        refused.set(property, e as Error);
        readers.set(property, refusingReader(e as Error));
      }
    }
    const firstRefusal = (op: ResolvedOperation | undefined) => [...refused].find(([p]) => !op || op.properties.includes(p))?.[1];
    const simulatorOnly = connection && fixed ? simulatorOnlyError(RED, fixed, connection) : undefined;

    if (!connection) showError(node, noConnectionError(RED));
    else if (!fixed && !fromMsg) showError(node, new ConfigError(`operation: ${RED._('common.errors.unknownOperation', { operation: JSON.stringify(def.operation) })}`));
    else if (simulatorOnly) showError(node, simulatorOnly);
    else if (firstRefusal(fixed)) showError(node, firstRefusal(fixed));
    else if (expiresAfter instanceof Error && [...operations.values()].some((o) => (!fixed || o === fixed) && o.properties.includes('expiresAfter'))) showError(node, expiresAfter);
    else node.status({});
    // After the first status: a partnerTxId refused at deploy turns it red. The money-moving
    // operation's key setting also names the payment `resolve` looks up.
    const keyed = fixed ? (fixed.resolving ? paying : fixed.spec) : paying;
    const partnerTxId = partnerTxIdSource(RED, node, config, keyed);

    /** The operation of this msg: the node's, or `msg.operation` checked against the node's list. */
    function operationOf(msg: OperationMessage): ResolvedOperation {
      if (fixed) return fixed;
      const name = msg.operation;
      const op = typeof name === 'string' ? operations.get(name) : undefined;
      if (!op) throw new ValidationError('operation', `msg.operation: expected one of ${names.join(', ')}, got ${shortText(name)}`);
      const sim = simulatorOnlyError(RED, op, connection!);
      if (sim) throw sim;
      return op;
    }

    /** The editor properties `op` shows, read for `msg`; then `msg.payload` with the applied ones over it. */
    async function readInput(op: ResolvedOperation, msg: OperationMessage): Promise<{ input: Record<string, unknown>; editor: Record<string, unknown> }> {
      const input: Record<string, unknown> = isPlainObject(msg.payload) ? { ...msg.payload } : {};
      const editor: Record<string, unknown> = {};
      for (const property of table.fields) {
        const f = fieldOf(type, property);
        if (f.custom) {
          editor[property] = config[property];
          continue;
        }
        // Read only for the operations that show it (a msg property of another operation's
        // field need not exist). A node saved before TypedInputs is migrated at construction.
        if (!op.properties.includes(property)) continue;
        const value = await readers.get(property)!(msg);
        editor[property] = value;
        if (f.applied === false || value === undefined) continue;
        setField(input, f.field, f.kind === 'amount' && amountFormat === 'baseUnits' ? baseUnitsOf(f.field, value) : value);
      }
      return { input, editor };
    }

    async function run(msg: OperationMessage): Promise<RequestOutcome> {
      const op = operationOf(msg);
      let { input, editor } = await readInput(op, msg);
      if (partnerTxId && (op.resolving || (op.spec && describeOperation(op.spec).fields.includes('partner_txID')))) input.partner_txID = await partnerTxId(msg);
      if (version === 'v2') return runWorkspace(op, msg, input, editor);
      const client = await connection!.client();
      if (op.resolving) return resolvePayment(client, msg, input);
      const spec = op.spec!;
      if (describeOperation(spec).expires && input.expires === undefined && expiresAfter !== undefined) {
        if (expiresAfter instanceof Error) throw expiresAfter;
        input.expires = Math.floor(Date.now() / 1000) + expiresAfter;
      }
      if (amountFormat === 'decimal') input = await decimalAmountsToBaseUnits(client, spec, input);
      msg.custody = custodyTrace(type, op.name, input);
      const sent = input;
      // In decimal mode, the API's words about an amount are restated in decimals with the asset.
      const restated = (e: unknown) => (amountFormat === 'decimal' ? restateAmountsInDecimals(client, spec, sent, e) : Promise.resolve(e)).then((x) => Promise.reject(x));
      if (spec.submission) {
        // Money moves: through the config node's submission journal, exactly once.
        const res = await submitOperation(client, spec, input, { journal: await connection!.journal() }).catch(restated);
        msg.payload = res.data;
        msg.statusCode = res.statusCode;
        msg.outcome = res.outcome;
        return { statusCode: res.statusCode, note: res.outcome === 'existing' ? RED._('common.status.existing', { tx_id: (res.data as { tx_id?: string }).tx_id ?? '' }).trim() : undefined };
      }
      const res = await callOperation(client, spec, input).catch(restated);
      const answer = options.answers?.[op.name];
      msg.payload = answer ? await answer(res.data, input, { amountFormat, client }) : res.data;
      msg.statusCode = res.statusCode;
      return { statusCode: res.statusCode };
    }

    /** A v2 operation: over the connection's v2 client (`x-token`); `msg.note` when the answer is not final. */
    async function runWorkspace(op: ResolvedOperation, msg: OperationMessage, input: Record<string, unknown>, editor: Record<string, unknown>): Promise<RequestOutcome> {
      if (typeof connection!.workspaceClient !== 'function') throw new ConfigError(`connection: ${RED._('common.errors.noV2Support')}`);
      const client = await connection!.workspaceClient();
      const behaviour = options.behaviours?.[op.name];
      const res = behaviour?.run ? await behaviour.run(client, input, editor) : await callWorkspaceOperation(client, op.spec!, input);
      msg.payload = res.data;
      msg.statusCode = res.statusCode;
      const note = behaviour?.note?.(res.data, input);
      if (note) msg.note = note;
      else delete msg.note;
      return { statusCode: res.statusCode, note };
    }

    /** The `resolve` operation: look a payment up (lib `resolveSubmission`); `msg.payload` = its result. */
    async function resolvePayment(client: CustodyClient, msg: OperationMessage, input: Record<string, unknown>): Promise<RequestOutcome> {
      const result = await resolveSubmission(client, resolveInputFrom(table.resolve!, input), await connection!.journal());
      msg.payload = result;
      delete msg.statusCode;
      msg.custody = custodyTrace(type, RESOLVE_OPERATION, input);
      return { statusCode: 200, note: result.result === 'found' ? undefined : result.result === 'ambiguous' ? RED._('common.status.ambiguous') : result.keyFreed ? RED._('common.status.notFoundKeyFreed') : RED._('common.status.notFoundYet') };
    }

    node.on('input', (msg: NodeMessageInFlow, send: (m: NodeMessageInFlow) => void, done: (err?: Error) => void) => {
      const out = msg as OperationMessage;
      if (!connection) return done(noConnectionError(RED));
      if (!fixed && !fromMsg) return done(new ConfigError(`operation: ${RED._('common.errors.expectedOperation', { operations: [...names, OPERATION_FROM_MSG].join(', '), operation: JSON.stringify(def.operation) })}`));
      if (simulatorOnly) return done(simulatorOnly);
      runRequest(out, send, done, () => run(out));
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      node.status({});
      done();
    });
  }

  RED.nodes.registerType(type, OperationNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
  const described = editorDescription(type);
  RED.httpAdmin.get(`/custody/operations/${type}`, RED.auth.needsPermission(`${type}.read`), (_req, res) => {
    res.json(described);
  });
}

/**
 * The node's "Expires after" (`expiresAfter`, docs/nodes.md "The payment fields"): seconds from
 * now that fill `expires` when the msg has none.
 * @param value the property as deployed: text or a number.
 * @returns the seconds (a positive whole number); undefined when empty (the msg must then carry
 *   `expires`); a {@link ConfigError} naming the setting and its range for anything else (`-100`,
 *   `0`, `1.5`, `abc`), thrown when a msg without `expires` needs it.
 */
function expiresAfterOf(RED: NodeAPI, value: unknown): number | undefined | ConfigError {
  const text = value === undefined || value === null ? '' : String(value).trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text) && Number(text) >= 1 && Number.isSafeInteger(Number(text))) return Number(text);
  return new ConfigError(`expiresAfter: ${RED._('common.errors.expiresAfter', { value: shortText(value) })}`);
}

/**
 * Set one request field of `input`, a dotted path filling a nested object (`send.symbol`): the
 * object on the way is copied from `input` (`msg.payload.send` when given, so its other fields
 * stay) or made, and `msg.payload` itself is not changed.
 */
function setField(input: Record<string, unknown>, field: string, value: unknown): void {
  const keys = field.split('.');
  let target = input;
  for (const key of keys.slice(0, -1)) {
    const next: Record<string, unknown> = isPlainObject(target[key]) ? { ...(target[key] as Record<string, unknown>) } : {};
    target[key] = next;
    target = next;
  }
  target[keys[keys.length - 1]] = value;
}

/**
 * An amount given in an editor field while the node's amounts are base units: a whole number
 * (text of digits, or a number) as the API's integer.
 * @param field the request field named in the error, e.g. `send.amount`.
 * @throws {ValidationError} naming `field` for anything else (a decimal such as "0.015" is
 *   refused, not rounded: the node's Amounts option says which unit the field holds).
 */
function baseUnitsOf(field: string, value: unknown): unknown {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (text !== undefined && /^\d+$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  throw new ValidationError(field, `a whole number of base units (Amounts: base units), got ${shortText(value)}; for whole units such as "0.015" set Amounts to decimal`);
}

/** A msg value for an error message: text quoted, anything else by its JSON or type. */
function shortText(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** Per operation: its description plus the editor properties (rows) it uses. */
export interface EditorOperation extends OperationDescription {
  /** Editor properties shown for this operation: its API fields, `partnerTxId`, `amountFormat`, `expiresAfter`. */
  properties: string[];
}

/**
 * The shape {@link editorDescription} also takes: a node type's operations and its editor
 * fields (`field` or `[field, property]`), for a type that is not in the editor table.
 */
export interface EditorDescriptionInput {
  /** The node type. */
  type: string;
  /** Operation name -> declaration. */
  operations: Record<string, OperationSpec>;
  /** The editor properties that are API fields. */
  editorFields: readonly EditorField[];
  /** The submission kind of a `resolve` operation, if any. */
  resolve?: TransactionKind;
}

/**
 * What the edit dialog of a node type shows per operation: served at
 * `GET <admin>/custody/operations/<type>`, and written into the generated dialogs.
 * @param node an operation node type of the editor table, or its shape ({@link EditorDescriptionInput}).
 */
export function editorDescription(node: OperationNodeType | EditorDescriptionInput): Record<string, EditorOperation> {
  const input: EditorDescriptionInput & { table?: Record<string, NodeOperation> } =
    typeof node === 'string'
      ? {
          type: node,
          operations: paletteSpecs(node),
          editorFields: OPERATION_NODES[node].fields.map((p) => [fieldOf(node, p).field, p] as const),
          resolve: OPERATION_NODES[node].resolve,
          table: OPERATION_NODES[node].operations,
        }
      : node;
  const names = input.table ? Object.keys(input.table) : Object.keys(input.operations);
  const pairs = input.editorFields.map((e) => (typeof e === 'string' ? ([e, e] as const) : e));
  const out: Record<string, EditorOperation> = {};
  for (const name of names) {
    if (name === RESOLVE_OPERATION && input.resolve) continue;
    const op = input.table?.[name];
    const spec = input.operations[op?.spec ?? name];
    const d = describeOperation(spec);
    if (op?.properties) {
      // An operation the node builds itself (v2): its own rows and field lists.
      // workspaceID defaults to the connection's workspace: not something the user must give.
      const required = [...(op.required ?? d.required)].filter((f) => f !== 'workspaceID');
      out[name] = { ...d, fields: [...(op.fields ?? d.fields)], required, properties: [...op.properties] };
      continue;
    }
    const topLevel = new Set(d.fields.map((f) => f.split('.')[0]));
    const properties = pairs.filter(([field]) => topLevel.has(field.split('.')[0])).map(([, property]) => property);
    if (topLevel.has('partner_txID')) properties.push('partnerTxId'); // the business key row (nodes/shared/business-key.ts)
    if (d.amounts) properties.push('amountFormat');
    if (d.expires) properties.push('expiresAfter');
    // The node fills `expires` from "Expires after" when the msg has none.
    const required = d.expires ? d.required.map((f) => (f === 'expires' ? 'expires (or Expires after)' : f)) : d.required;
    out[name] = { ...d, required, properties };
  }
  if (input.resolve) {
    // Its rows: the owner id and the key; the other fields it reads come from msg.payload.
    const owner = SUBMISSION_KINDS[input.resolve].owner;
    const properties = pairs.filter(([field]) => field === owner).map(([, property]) => property);
    out[RESOLVE_OPERATION] = { ...describeResolve(input.resolve), properties: [...properties, 'partnerTxId'] };
  }
  return out;
}
