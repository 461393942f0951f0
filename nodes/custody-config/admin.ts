/**
 * The admin endpoints of `custody-config` (issue 10), registered once with Node-RED's
 * `RED.httpAdmin` behind `RED.auth.needsPermission`:
 *
 * - `POST <admin>/custodyflow/config/test` (permission `custody-config.write`): the dialog's
 *   "Test connection". Body: the dialog's settings ({@link ConnectionSettings}) plus `id` (the
 *   config node's id) and the credential fields `apiKey`, `privateKey`, `token` as the dialog
 *   holds them: the text typed, or Node-RED's placeholder `__PWRD__` for a credential left
 *   unchanged, which is replaced by the stored credential of the deployed custody-config node
 *   `id` (none when `id` is not one). Answers
 *   200 with a {@link TestAnswer} (`ok` false with a `cause` when the connection fails), 400
 *   `{cause: 'input', message}` for a body that is not such an object. Write permission,
 *   because it signs with the stored credentials towards a URL the request chooses, as a deploy can.
 * - `GET <admin>/custodyflow/lookup/:kind?connection=<config node id>&company_id=&fund_id=&query=`
 *   (permission `custody-config.read`): `[{value, label}]` of the deployed connection's API
 *   account (lookup.ts), cached {@link LOOKUP_CACHE_MS} per connection, kind and context.
 *   Errors: 400 `{cause: 'input', message}` (unknown kind, missing `connection`, an id the API
 *   call refuses), 404 `{cause: 'notDeployed', message}` (no deployed custody-config node with
 *   that id), 409 `{cause: 'config', message}` (the deployed connection cannot be used), 502
 *   `{cause, message, statusCode, code}` (the API call failed; causes as the test's).
 *
 * No answer and no log line holds a secret: messages are passed through {@link redact} with the
 * credentials in use.
 */
import type { NodeAPI } from 'node-red';
import type { Request, Response } from 'express';
import { ValidationError } from '../../lib';
import type { CustodyConfigNode } from '../shared/types';
import { describeFailure, testConnection, type ConnectionCredentials, type ConnectionSettings, type SimulatorStarter } from './connection';
import { isLookupKind, LookupCache, LOOKUP_KINDS, type LookupContext } from './lookup';

/** The path of the connection test, below Node-RED's admin root. */
export const TEST_PATH = '/custodyflow/config/test';
/** The path of the lookups, below Node-RED's admin root (`:kind` one of lookup.ts LOOKUP_KINDS). */
export const LOOKUP_PATH = '/custodyflow/lookup/:kind';
/** The permission of the connection test. */
export const TEST_PERMISSION = 'custody-config.write';
/** The permission of the lookups. */
export const LOOKUP_PERMISSION = 'custody-config.read';

/** What Node-RED's editor sends for a password credential left unchanged (runtime lib/nodes/credentials.js). */
export const UNCHANGED_CREDENTIAL = '__PWRD__';

/** The credential fields of `custody-config`. */
const CREDENTIAL_FIELDS = ['apiKey', 'privateKey', 'token'] as const;
/** The settings fields the test takes from the body, each a string (or the timeout a number). */
const SETTING_FIELDS = ['environment', 'baseUrl', 'signingMode', 'timeout', 'simulatorV1Key', 'v2BaseUrl', 'workspaceId', 'simulatorApiKey'] as const;
const ENVIRONMENTS = new Set(['simulator', 'sandbox', 'play', 'production', 'custom']);
/** Longest context value a lookup accepts (an id or a typed text). */
const MAX_CONTEXT_LENGTH = 200;

/**
 * The credentials a test uses: each field as the dialog sent it, except the unchanged-credential
 * placeholder, replaced by the stored credential of node `id` (none when `id` has none).
 */
export function resolveCredentials(sent: Record<string, unknown>, stored: ConnectionCredentials | undefined): ConnectionCredentials {
  const out: ConnectionCredentials = {};
  for (const k of CREDENTIAL_FIELDS) {
    const v = sent[k];
    if (v === UNCHANGED_CREDENTIAL) {
      if (stored?.[k]) out[k] = stored[k];
    } else if (typeof v === 'string' && v !== '') out[k] = v;
  }
  return out;
}

/** The settings of a test body; @throws {ValidationError} naming the field for a value of the wrong type or an unknown environment. */
export function settingsFrom(body: Record<string, unknown>): ConnectionSettings {
  const out: Record<string, unknown> = {};
  for (const k of SETTING_FIELDS) {
    const v = body[k];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' && !(k === 'timeout' && typeof v === 'number')) throw new ValidationError(k, 'a string');
    out[k] = v;
  }
  if (out.environment !== undefined && !ENVIRONMENTS.has(out.environment as string)) throw new ValidationError('environment', 'one of simulator, sandbox, play, production, custom');
  return out as ConnectionSettings;
}

/** The first value of a query parameter as a string ('' when absent or not text). */
function queryText(v: unknown): string {
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' ? first : '';
}

/**
 * Register the admin endpoints (once per Node-RED process: call it from the node module's
 * register function).
 * @param startSimulator starts the built-in simulator, for a test of the simulator environment.
 */
export function registerAdminRoutes(RED: NodeAPI, startSimulator: SimulatorStarter): void {
  /** Per deployed config node: its lookup cache (dropped with the node object at a redeploy). */
  const caches = new WeakMap<object, LookupCache>();

  RED.httpAdmin.post(TEST_PATH, RED.auth.needsPermission(TEST_PERMISSION), (req: Request, res: Response) => {
    const body = req.body as unknown;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      res.status(400).json({ cause: 'input', message: 'expected a JSON object: the dialog settings and credentials' });
      return;
    }
    const sent = body as Record<string, unknown>;
    let settings: ConnectionSettings;
    try {
      settings = settingsFrom(sent);
    } catch (e) {
      res.status(400).json({ cause: 'input', message: (e as Error).message });
      return;
    }
    const id = typeof sent.id === 'string' ? sent.id : '';
    // Only a deployed custody-config node's credentials: never another node type's that happen to share a field name.
    const storedNode = id ? RED.nodes.getNode(id) : null;
    const stored = storedNode && storedNode.type === 'custody-config' ? (RED.nodes.getCredentials(id) as ConnectionCredentials | undefined) : undefined;
    const credentials = resolveCredentials(sent, stored);
    testConnection(settings, credentials, startSimulator).then(
      (answer) => {
        if (!answer.ok) RED.log.debug(`custody-config test connection (${answer.environment}): ${answer.cause}`);
        res.json(answer);
      },
      (err: unknown) => {
        // testConnection answers failures itself; this is a bug: answer without detail.
        const f = describeFailure(err, 'v1', [credentials.apiKey, credentials.privateKey, credentials.token]);
        res.status(500).json({ ok: false, cause: f.cause, message: f.message });
      },
    );
  });

  RED.httpAdmin.get(LOOKUP_PATH, RED.auth.needsPermission(LOOKUP_PERMISSION), (req: Request, res: Response) => {
    const kind = req.params.kind;
    if (!isLookupKind(kind)) {
      res.status(400).json({ cause: 'input', message: `kind: expected one of ${LOOKUP_KINDS.join(', ')}` });
      return;
    }
    const connection = queryText(req.query.connection);
    if (!connection) {
      res.status(400).json({ cause: 'input', message: 'connection: the id of a deployed custody-config node is required' });
      return;
    }
    const context: LookupContext = {};
    for (const k of ['company_id', 'fund_id', 'query'] as const) {
      const v = queryText(req.query[k]).trim();
      if (v.length > MAX_CONTEXT_LENGTH) {
        res.status(400).json({ cause: 'input', message: `${k}: at most ${MAX_CONTEXT_LENGTH} characters` });
        return;
      }
      if (v) context[k] = v;
    }
    const node = RED.nodes.getNode(connection) as CustodyConfigNode | null;
    if (!node || node.type !== 'custody-config') {
      res.status(404).json({ cause: 'notDeployed', message: `connection: no deployed custody-config node ${JSON.stringify(connection.slice(0, 40))}; deploy the flow first (lookups use the deployed connection)` });
      return;
    }
    const stored = (RED.nodes.getCredentials(connection) ?? {}) as ConnectionCredentials;
    const secrets = [stored.apiKey, stored.privateKey, stored.token];
    let cache = caches.get(node);
    if (!cache) {
      cache = new LookupCache();
      caches.set(node, cache);
    }
    const lookups = cache;
    node
      .client()
      .then(
        (client) => lookups.lookup(client, kind, context),
        (err: unknown) => {
          throw Object.assign(new Error('unusable'), { unusable: err });
        },
      )
      .then(
        (options) => res.json(options),
        (err: unknown) => {
          const unusable = (err as { unusable?: unknown }).unusable;
          if (unusable !== undefined) {
            const f = describeFailure(unusable, 'v1', secrets);
            res.status(409).json({ cause: 'config', message: f.message });
          } else if (err instanceof ValidationError) {
            res.status(400).json({ cause: 'input', message: describeFailure(err, 'v1', secrets).message.replace(/^[^:]*: /, '') });
          } else {
            const f = describeFailure(err, 'v1', secrets);
            RED.log.debug(`custody lookup ${kind}: ${f.cause}`);
            res.status(502).json(f);
          }
        },
      );
  });
}
