/**
 * `custody-request`: any signed call by method and path, the escape hatch for calls the other
 * nodes do not cover (docs/nodes.md, the node table and "The msg contract (every node)"; lib
 * `signedRequest`). Method, path and body are TypedInputs (method: a fixed method or a msg
 * property; path: str, msg, flow, global, env, jsonata; body: msg (default `msg.payload`), json,
 * jsonata, flow, global, env, or none; a msg property is sent as it is, none when absent); an empty
 * method or path reads `msg.method` / `msg.path`. A node saved before the types is migrated at
 * construction (nodes/shared/migrate.ts `requestTypes`). The path is checked before anything is sent: it must
 * stay below the configured base URL; a call that a typed node covers (a declared v1 operation,
 * lib `checkDeclaredOperation`) is checked like that node checks it, then its body sent as
 * given. Only GET is retried. Status and done/send through the shared `requestRunner`. Output as every operation node:
 * `msg.payload` = the response body, `msg.statusCode` = the HTTP status; errors to `done(err)`.
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { ConfigError, REQUEST_METHODS, signedRequest } from '../../lib';
import { showError } from '../shared/status';
import { requestRunner } from '../shared/request-runner';
import type { CustodyMessage } from '../shared/types';
import { createConnectedNode, noConnectionError } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';
import { fieldReader, storedType, type FieldReader } from '../shared/typed-field';

/** Editor properties of `custody-request` (each a TypedInput whose type is in `<property>Type`; migrated to these types when saved without them). */
interface RequestNodeDef extends ConnectedNodeDef {
  /** GET, POST, PUT, DELETE (type `str`), a msg property (type `msg`), or empty: `msg.method`. */
  method?: string;
  methodType?: string;
  /** A path below the base URL (may carry a query string), typed str, msg, flow, global, env or jsonata; empty: `msg.path`. */
  path?: string;
  pathType?: string;
  /**
   * The body of POST and PUT: `none`, or a value of type msg (default `payload`: the msg's
   * property as it is, no body when absent), json, jsonata, flow, global or env.
   */
  body?: string;
  bodyType?: string;
}

/** The msg of `custody-request`: `method` and `path` when the editor leaves them empty. */
type RequestMessage = CustodyMessage & { method?: unknown; path?: unknown };

/** The TypedInput types of `method`: a fixed method (`str`) or a msg property. */
const METHOD_TYPES = ['str', 'msg'];

/** The TypedInput types of `body` (the dialog's; json and the others are checked by their reader). */
const BODY_TYPES = ['msg', 'json', 'jsonata', 'flow', 'global', 'env', 'none'];

export = function register(RED: NodeAPI): void {
  /** A msg property, undefined when it (or an object on its way) is missing. */
  function messageProperty(msg: RequestMessage, expression: string): unknown {
    try {
      return RED.util.getMessageProperty(msg, expression);
    } catch {
      return undefined;
    }
  }

  /**
   * The reader of a body of type msg: the msg's property as it is (no body when it is absent).
   * @throws {ConfigError} naming `body` when the property does not parse.
   */
  function messageReader(expression: string): FieldReader {
    const property = expression.replace(/^msg\./, '');
    try {
      RED.util.normalisePropertyExpression(property);
    } catch (e) {
      throw new ConfigError(`body: ${JSON.stringify(expression)} is not a msg property: ${(e as Error).message}`);
    }
    return (msg) => Promise.resolve(messageProperty(msg as RequestMessage, property));
  }

  function CustodyRequest(this: Node, def: RequestNodeDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const config = def as unknown as Record<string, unknown>;
    // Every type is set: a node saved before them is migrated in createConnectedNode.
    const methodType = storedType(config, 'method') ?? '';
    const methodText = (def.method ?? '').trim();
    const method = methodType === 'str' ? methodText.toUpperCase() : '';
    const bodyType = storedType(config, 'body') ?? '';
    const sendBody = bodyType !== 'none';
    const run = requestRunner(RED, node);
    let configError: Error | undefined;
    let pathOf: FieldReader = () => Promise.resolve(undefined);
    let bodyOf: FieldReader | undefined;
    try {
      if (!METHOD_TYPES.includes(methodType)) throw new ConfigError(`methodType: ${JSON.stringify(methodType)} is not one of ${METHOD_TYPES.join(', ')}`);
      if (!bodyType) throw new ConfigError(`bodyType: not set, expected one of ${BODY_TYPES.join(', ')}`);
      if (methodType === 'msg' && !methodText) throw new ConfigError('method: the msg property is empty');
      if (method && !(REQUEST_METHODS as readonly string[]).includes(method)) throw new ConfigError(`method: ${RED._('custody-request.errors.method', { method: JSON.stringify(def.method) })}`);
      pathOf = fieldReader(RED, node, config, 'path', 'path', 'text');
      if (bodyType === 'msg') bodyOf = messageReader((def.body || 'payload').trim());
      else if (bodyType !== 'none') bodyOf = fieldReader(RED, node, { body: def.body || 'payload', bodyType }, 'body', 'body', 'json');
    } catch (e) {
      configError = e as Error;
    }

    if (!connection) showError(node, noConnectionError(RED));
    else if (configError) showError(node, configError);
    else node.status({});

    node.on('input', (msg: NodeMessageInFlow, send: (m: NodeMessageInFlow) => void, done: (err?: Error) => void) => {
      const out = msg as RequestMessage;
      if (!connection) return done(noConnectionError(RED));
      if (configError) return done(configError);
      run(out, send, done, async () => {
        const fromMsg = methodType === 'msg' ? messageProperty(out, methodText.replace(/^msg\./, '')) : out.method;
        const m = method || (typeof fromMsg === 'string' ? fromMsg : '');
        const given = await pathOf(out);
        const p = typeof given === 'string' ? given : typeof out.path === 'string' ? out.path : '';
        const hasBody = sendBody && (m.trim().toUpperCase() === 'POST' || m.trim().toUpperCase() === 'PUT');
        const client = await connection.client();
        const body = hasBody && bodyOf ? await bodyOf(out) : undefined;
        // Checked (the path; a call a typed node covers, as that node checks it) before sending.
        const res = await signedRequest(client, { method: m, path: p, body });
        out.payload = res.data;
        out.statusCode = res.statusCode;
        return { statusCode: res.statusCode };
      });
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      node.status({});
      done();
    });
  }

  RED.nodes.registerType('custody-request', CustodyRequest as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
