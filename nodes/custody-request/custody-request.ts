/**
 * `custody-request`: any signed call by method and path, the escape hatch for calls the other
 * nodes do not cover (docs/nodes.md, the node table and "The msg contract (every node)"; lib
 * `signedRequest`). Method and path come from the
 * editor, else from `msg.method` and `msg.path`; the body of POST and PUT is `msg.payload`
 * (unless the editor's Body is "none"). The path is checked before anything is sent: it must
 * stay below the configured base URL; a call that a typed node covers (a declared v1 operation,
 * lib `checkDeclaredOperation`) is checked like that node checks it, then its body sent as
 * given. Only GET is retried. Status and done/send through the shared `requestRunner`. Output as every operation node:
 * `msg.payload` = the response body, `msg.statusCode` = the HTTP status; errors to `done(err)`.
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { ConfigError, signedRequest } from '../../lib';
import { showError } from '../shared/status';
import { requestRunner } from '../shared/request-runner';
import type { CustodyMessage } from '../shared/types';
import { createConnectedNode, noConnectionError } from '../shared/node-setup';
import type { ConnectedNodeDef } from '../shared/types';
import { REQUEST_METHODS } from '../../lib/request/signed-request';

/** Editor properties of `custody-request`. */
interface RequestNodeDef extends ConnectedNodeDef {
  /** GET, POST, PUT, DELETE, or empty: `msg.method`. */
  method?: string;
  /** A path below the base URL (may carry a query string), or empty: `msg.path`. */
  path?: string;
  /** `payload` (default): POST and PUT send `msg.payload`; `none`: no body. */
  body?: string;
}

/** The msg of `custody-request`: `method` and `path` when the editor leaves them empty. */
type RequestMessage = CustodyMessage & { method?: unknown; path?: unknown };

export = function register(RED: NodeAPI): void {
  function CustodyRequest(this: Node, def: RequestNodeDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const method = (def.method ?? '').trim().toUpperCase();
    const path = (def.path ?? '').trim();
    const sendBody = def.body !== 'none';
    const run = requestRunner(RED, node);

    if (!connection) showError(node, noConnectionError(RED));
    else if (method && !(REQUEST_METHODS as readonly string[]).includes(method)) showError(node, new ConfigError(`method: ${RED._('custody-request.errors.method', { method: JSON.stringify(def.method) })}`));
    else node.status({});

    node.on('input', (msg: NodeMessageInFlow, send: (m: NodeMessageInFlow) => void, done: (err?: Error) => void) => {
      const out = msg as RequestMessage;
      if (!connection) return done(noConnectionError(RED));
      const m = method || (typeof out.method === 'string' ? out.method : '');
      const p = path || (typeof out.path === 'string' ? out.path : '');
      const hasBody = sendBody && (m.trim().toUpperCase() === 'POST' || m.trim().toUpperCase() === 'PUT');
      run(out, send, done, async () => {
        const client = await connection.client();
        // Checked (the path; a call a typed node covers, as that node checks it) before sending.
        const res = await signedRequest(client, { method: m, path: p, body: hasBody ? out.payload : undefined });
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
