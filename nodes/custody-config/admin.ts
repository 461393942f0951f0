/**
 * The admin endpoints of `custody-config` (docs/configuration.md "Test connection" and "Look-ups"),
 * registered once with Node-RED's `RED.httpAdmin` behind `RED.auth.needsPermission`:
 *
 * - `POST <admin>/custodyflow/config/test` (permission `custody-config.write`): the dialog's
 *   "Test connection". Body: the dialog's settings ({@link ConnectionSettings}) plus `id` (the
 *   config node's id) and the credential fields `apiKey`, `privateKey`, `token`, `pin` as the dialog
 *   holds them: the text typed, or Node-RED's placeholder `__PWRD__` for a credential left
 *   unchanged, which is replaced by the stored credential of the deployed custody-config node
 *   `id` (none when `id` is not one). Answers
 *   200 with a {@link TestAnswer} (`ok` false with a `cause` when the connection fails; the v1
 *   key's SHA-256 `fingerprint`, PEM or PKCS#11, once its key source opened), 400
 *   `{cause: 'input', message}` for a body that is not such an object. Write permission,
 *   because it signs with the stored credentials towards a URL the request chooses, as a deploy can.
 * - `GET <admin>/custodyflow/lookup/:kind?connection=<config node id>&company_id=&fund_id=&query=`
 *   (permission `custody-config.read`): `[{value, label}]` of the deployed connection's API
 *   account (lookup.ts), cached {@link LOOKUP_CACHE_MS} per connection, kind and context.
 *   Errors: 400 `{cause: 'input', message}` (unknown kind, missing `connection`, an id the API
 *   call refuses), 404 `{cause: 'notDeployed', message}` (no deployed custody-config node with
 *   that id), 409 `{cause: 'config', message}` (the deployed connection cannot be used), 502
 *   `{cause, message, statusCode, code}` (the API call failed; causes as the test's).
 * - `GET <admin>/custodyflow/config/:id/coordination` (permission `custody-config.read`): the
 *   coordination of the deployed custody-config node `id` as its `coordinationStatus()` tells it
 *   (nodes/shared/types.ts `CoordinationStatus`: `{coordination: 'none'}`, or `'redis'` with the
 *   coordinator's `state`, `reason`, `instance`, `mode`, `master` (`host:port`), `masterSince`
 *   (epoch ms) and `failovers`), for the dialog's state line. 404
 *   `{cause: 'notDeployed', message}` when no custody-config node `id` is deployed.
 *
 * Coordination through Redis (docs/scale-out.md) in the test: when the body's `coordination` is
 * `redis`, the test also connects a lib {@link Coordinator} with the options the deployed node
 * would use (connection.ts `coordinatorOptionsOf`: the dialog's `redisMode` and, per mode,
 * `redisUrl` (standalone), `redisSentinels` and `redisMasterName` (Sentinel) or
 * `redisClusterNodes` (Cluster); `redisTls`, `redisKeyPrefix`, `claimLeaseSeconds`; the
 * credentials `redisPassword` and `redisSentinelPassword`, each typed or `__PWRD__` for the
 * deployed node's stored one), waits up to {@link REDIS_TEST_MS} for it to be ready and closes
 * it; the outcome is the answer's `redis` ({@link RedisTestResult}), naming the master it reached
 * (`host:port`; with Sentinel, the one the sentinels named). Connecting writes at
 * most the `epoch` key every instance writes on its first connect; no claim is taken. The API part
 * is tested with the coordination too, so nonce signing is refused as at deploy (cause `config`).
 *
 * No answer and no log line holds a secret: messages are passed through {@link redact} with the
 * credentials in use (the Redis and sentinel passwords included).
 */
import type { NodeAPI } from 'node-red';
import type { Request, Response } from 'express';
import { ConfigError, ValidationError } from '../../lib';
import type { Coordinator, CoordinationState, CoordinatorOptions, RedisMode } from '../../lib/coordination';
import { coordinationLib } from '../shared/services';
import type { CoordinationStatus, CustodyConfigNode } from '../shared/types';
import {
  coordinatorOptionsOf,
  describeFailure,
  redact,
  secretsOf,
  testConnection,
  type ConnectionCredentials,
  type ConnectionSettings,
  type FailureCause,
  type SimulatorStarter,
  type TestAnswer,
} from './connection';
import { isLookupKind, LookupCache, LOOKUP_KINDS, type LookupContext } from './lookup';

/** The path of the connection test, below Node-RED's admin root. */
export const TEST_PATH = '/custodyflow/config/test';
/** The path of the lookups, below Node-RED's admin root (`:kind` one of lookup.ts LOOKUP_KINDS). */
export const LOOKUP_PATH = '/custodyflow/lookup/:kind';
/** The permission of the connection test. */
export const TEST_PERMISSION = 'custody-config.write';
/** The permission of the lookups. */
export const LOOKUP_PERMISSION = 'custody-config.read';
/** The path of a deployed config node's coordination status, below Node-RED's admin root. */
export const COORDINATION_PATH = '/custodyflow/config/:id/coordination';
/** The permission of the coordination status. */
export const COORDINATION_PERMISSION = 'custody-config.read';
/** How long the test waits for Redis to be ready, ms. */
export const REDIS_TEST_MS = 5000;

/** What Node-RED's editor sends for a password credential left unchanged (runtime lib/nodes/credentials.js). */
export const UNCHANGED_CREDENTIAL = '__PWRD__';

/** The credential fields of `custody-config`. */
const CREDENTIAL_FIELDS = ['apiKey', 'privateKey', 'token', 'redisPassword', 'redisSentinelPassword', 'pin'] as const;
/** The settings fields the test takes from the body, each a string (or the timeout a number). */
const SETTING_FIELDS = ['environment', 'baseUrl', 'signingMode', 'timeout', 'simulatorV1Key', 'v2BaseUrl', 'workspaceId', 'simulatorApiKey', 'keySource', 'pkcs11Module', 'pkcs11TokenLabel', 'pkcs11Slot', 'pkcs11KeyLabel', 'pkcs11KeyId'] as const;
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
  if (out.keySource !== undefined && out.keySource !== 'pem' && out.keySource !== 'pkcs11') throw new ValidationError('keySource', 'pem or pkcs11');
  return out as ConnectionSettings;
}

/** The dialog's Coordination section, as a test body carries it (the coordination fields of {@link ConnectionSettings}). */
export type CoordinationSettings = Pick<ConnectionSettings, 'redisMode' | 'redisUrl' | 'redisSentinels' | 'redisMasterName' | 'redisClusterNodes' | 'redisTls' | 'redisKeyPrefix' | 'claimLeaseSeconds'> & { coordination: 'none' | 'redis' };

/** The Redis modes a test body may carry (connection.ts ConnectionSettings `redisMode`; empty: standalone). */
const REDIS_MODES = new Set(['standalone', 'sentinel', 'cluster']);

/** The credentials of the Redis test: the Redis password, and with Sentinel the sentinels' (each resolved: typed, or the stored one). */
export type RedisCredentials = Pick<ConnectionCredentials, 'redisPassword' | 'redisSentinelPassword'>;

/**
 * Why the Redis of a test failed:
 * - `config`: the settings cannot be used (no URL, a bad URL, a password in it, a bad sentinel or
 *   cluster node list, no master name, a bad lease); nothing was sent;
 * - `badPassword`: Redis (or, with Sentinel, a sentinel) refused the password (`WRONGPASS`) or asks for one (`NOAUTH`);
 * - `noMaster`: Sentinel only: the sentinels answered but know no master by that name;
 * - `unreachable`: the host name did not resolve, the connection was refused, or it closed;
 * - `tls`: the TLS handshake failed (untrusted certificate, wrong host name, not TLS);
 * - `timeout`: Redis was not ready within {@link REDIS_TEST_MS};
 * - `redis`: another refusal of Redis (for example `NOPERM` of an ACL user).
 */
export type RedisFailureCause = 'config' | 'badPassword' | 'noMaster' | 'unreachable' | 'tls' | 'timeout' | 'redis';

/** The Redis part of a test answer. Never holds a secret. */
export interface RedisTestResult {
  ok: boolean;
  /** How Redis was reached (absent when the settings could not be used). */
  mode?: RedisMode;
  /** Standalone: the URL tested (it holds no password: one with a password is refused); absent when it could not be used. */
  url?: string;
  /** Sentinel: the master's name asked for. */
  masterName?: string;
  /** `host:port` of the Redis master reached (with Sentinel: the one the sentinels named; with Cluster: the one serving the prefix's hash slot); absent when none was. */
  master?: string;
  tls: boolean;
  /** The key prefix as used (with Cluster, a hash tag: `{custodyflow}:`). */
  keyPrefix: string;
  /** The coordinator's state when the test ended (`ready`, or `recovering` when Redis lost its data lately). */
  state?: CoordinationState;
  /** Milliseconds until the outcome. */
  ms: number;
  /** The failure, when `ok` is false. */
  cause?: RedisFailureCause;
  /** One line for the dialog. */
  message: string;
}

/** A test answer with coordination: a {@link TestAnswer}, plus `redis` when the dialog's coordination is `redis`. */
export type CoordinatedTestAnswer = Omit<TestAnswer, 'step' | 'cause'> & {
  /** The first failed step: `v1`, `v2`, or `redis` (Redis, or a setting coordination refuses). */
  step?: 'v1' | 'v2' | 'redis';
  cause?: FailureCause | RedisFailureCause;
  /** Absent when the dialog's coordination is `none`. */
  redis?: RedisTestResult;
};

/** What to check, per Redis failure cause: the first words of its message. */
const REDIS_ADVICE: Record<RedisFailureCause, string> = {
  config: 'The coordination settings cannot be used',
  badPassword: 'Redis refused the password: check the Redis password',
  noMaster: 'The sentinels know no master by that name: check the master name (sentinel monitor <name> in sentinel.conf)',
  unreachable: 'Redis cannot be reached: check the host name and port (name not resolved, connection refused or closed)',
  tls: 'The TLS connection to Redis failed: the server certificate is not trusted (self-signed, wrong host name, expired) or the server does not speak TLS',
  timeout: 'Redis was not ready in time: check the address, a firewall, or whether the server speaks TLS as set',
  redis: 'Redis refused the connection',
};

/** The first words of a `badPassword` of the sentinels (Sentinel mode). */
const SENTINEL_PASSWORD_ADVICE = 'The sentinels refused the password: check the sentinel password';

/**
 * The coordination settings of a test body.
 * @throws {ValidationError} naming the field for a value of the wrong type, or a coordination other than none or redis.
 */
export function coordinationFrom(body: Record<string, unknown>): CoordinationSettings {
  const c = body.coordination;
  if (c !== undefined && c !== null && c !== '' && c !== 'none' && c !== 'redis') throw new ValidationError('coordination', "'none' or 'redis'");
  const out: CoordinationSettings = { coordination: c === 'redis' ? 'redis' : 'none' };
  const mode = body.redisMode;
  if (mode !== undefined && mode !== null && mode !== '') {
    if (typeof mode !== 'string' || !REDIS_MODES.has(mode)) throw new ValidationError('redisMode', "'standalone', 'sentinel' or 'cluster'");
    out.redisMode = mode as CoordinationSettings['redisMode'];
  }
  for (const k of ['redisUrl', 'redisSentinels', 'redisMasterName', 'redisClusterNodes', 'redisKeyPrefix'] as const) {
    const v = body[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new ValidationError(k, 'a string');
    out[k] = v;
  }
  const tls = body.redisTls;
  if (tls !== undefined && tls !== null && tls !== '') {
    if (typeof tls === 'boolean') out.redisTls = tls;
    else if (tls === 'true' || tls === 'false') out.redisTls = tls === 'true';
    else throw new ValidationError('redisTls', 'a boolean');
  }
  const lease = body.claimLeaseSeconds;
  if (lease !== undefined && lease !== null && lease !== '') {
    if (typeof lease !== 'number' && typeof lease !== 'string') throw new ValidationError('claimLeaseSeconds', 'a number');
    out.claimLeaseSeconds = lease;
  }
  return out;
}

/** The cause of a Redis connection failure, from the client's last error text (ioredis's, or the socket's). */
function redisCause(reason: string): RedisFailureCause {
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(reason)) return 'badPassword';
  // The sentinels answered, without a master of that name: an error (Redis 7) or a nil reply (ioredis then names no last error).
  if (/No such master/i.test(reason) || (/^All sentinels are unreachable\b/.test(reason) && !/Last error:/.test(reason))) return 'noMaster';
  if (/certificate|ssl|tls|EPROTO|wrong version number|self[- ]signed/i.test(reason)) return 'tls';
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NONAME|ENETUNREACH|EHOSTUNREACH|EHOSTDOWN|EADDRNOTAVAIL|ECONNRESET|connection to Redis closed|Connection is closed/i.test(reason)) return 'unreachable';
  if (/ETIMEDOUT/i.test(reason)) return 'timeout';
  return 'redis';
}

/** Wait for `ms`. */
const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Where a test reached Redis, in words: the URL, the Sentinel master, or the Cluster node. */
function reached(result: RedisTestResult, sentinels: number, seeds: number): string {
  const tls = result.tls ? ' (TLS)' : '';
  if (result.mode === 'sentinel') return `Redis ready through Sentinel: master ${JSON.stringify(result.masterName)} at ${result.master} (${sentinels} ${sentinels === 1 ? 'sentinel' : 'sentinels'})${tls}`;
  if (result.mode === 'cluster') return `Redis Cluster ready: the key prefix's hash slot is at ${result.master} (${seeds} seed ${seeds === 1 ? 'node' : 'nodes'})${tls}`;
  return `Redis ready at ${result.url}${tls}`;
}

/**
 * Test the Redis of the dialog's coordination settings: connect a {@link Coordinator} with the
 * options a deployed node would use (connection.ts `coordinatorOptionsOf`: standalone, Sentinel
 * or Cluster), wait up to `ms` for it to be ready (or recovering), then close it. The first
 * connection error ends the wait (after a short grace for the error that explains a closed
 * connection).
 * @param credentials the Redis password and the sentinel password (resolved: typed, or the stored ones).
 * @returns the outcome, with the master reached; never rejects, never holds a password.
 */
export async function testRedis(settings: CoordinationSettings, credentials: RedisCredentials, ms = REDIS_TEST_MS): Promise<RedisTestResult> {
  const started = Date.now();
  const tls = settings.redisTls === true;
  const result: RedisTestResult = { ok: false, tls, keyPrefix: '', ms: 0, message: '' };
  const clean = (text: string) => redact(text, [credentials.redisPassword, credentials.redisSentinelPassword]);
  const fail = (cause: RedisFailureCause, detail: string): RedisTestResult => {
    result.ms = Date.now() - started;
    result.cause = cause;
    // ioredis words what the sentinels refused as "All sentinels are unreachable ... Last error: ...".
    const advice = cause === 'badPassword' && /^All sentinels/.test(detail) ? SENTINEL_PASSWORD_ADVICE : REDIS_ADVICE[cause];
    result.message = clean(`${advice}${detail ? ` (${detail})` : ''}`);
    return result;
  };
  const passwords: RedisCredentials = {};
  if (credentials.redisPassword) passwords.redisPassword = credentials.redisPassword;
  if (credentials.redisSentinelPassword) passwords.redisSentinelPassword = credentials.redisSentinelPassword;
  const { Coordinator, DEFAULT_MASTER_NAME } = coordinationLib();
  let coordinator: Coordinator;
  let options: CoordinatorOptions;
  try {
    options = coordinatorOptionsOf(settings, passwords);
    coordinator = new Coordinator({ ...options, connectTimeoutMs: Math.max(1000, ms - 500) });
  } catch (e) {
    return fail('config', e instanceof ConfigError ? e.message : 'the Redis client could not be created');
  }
  result.mode = coordinator.mode;
  result.keyPrefix = coordinator.prefix;
  if (coordinator.mode === 'standalone') result.url = options.url;
  if (coordinator.mode === 'sentinel') result.masterName = options.masterName ?? DEFAULT_MASTER_NAME;
  try {
    const deadline = started + ms;
    let seen = '';
    let graceUntil = 0;
    while (Date.now() < deadline && coordinator.state !== 'ready' && coordinator.state !== 'recovering') {
      if (coordinator.reason && !seen) {
        seen = coordinator.reason;
        graceUntil = Date.now() + 200;
      }
      if (seen && Date.now() >= graceUntil) break;
      await wait(25);
    }
    result.state = coordinator.state;
    if (coordinator.state === 'ready' || coordinator.state === 'recovering') {
      result.ok = true;
      result.ms = Date.now() - started;
      if (coordinator.master) result.master = coordinator.master;
      const recovering = coordinator.state === 'recovering' ? ', recovering from a data loss' : '';
      result.message = clean(`${reached(result, options.sentinels?.length ?? 0, options.clusterNodes?.length ?? 0)}, key prefix ${JSON.stringify(result.keyPrefix)}${recovering} (${result.ms} ms).`);
      return result;
    }
    const reason = coordinator.reason;
    if (!reason) return fail('timeout', `not ready within ${Math.round(ms / 1000)} s`);
    return fail(redisCause(reason), reason);
  } finally {
    await coordinator.close().catch(() => undefined);
  }
}

/**
 * A test answer with the Redis outcome: `ok` only when the API steps and Redis passed; the first
 * failure (the API's first) gives `step`, `cause` and the start of `message`.
 */
export function withRedis(answer: TestAnswer, redis: RedisTestResult | undefined): CoordinatedTestAnswer {
  if (!redis) return answer;
  const out: CoordinatedTestAnswer = { ...answer, redis };
  if (!answer.ok) {
    out.message = `${answer.message} Redis: ${redis.ok ? 'OK.' : redis.message}`;
  } else if (!redis.ok) {
    out.ok = false;
    out.step = 'redis';
    out.cause = redis.cause;
    out.message = `${redis.message}. API: ${answer.message}`;
  } else {
    out.message = `${answer.message} ${redis.message}`;
  }
  return out;
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
    let coordination: CoordinationSettings;
    try {
      settings = settingsFrom(sent);
      coordination = coordinationFrom(sent);
    } catch (e) {
      res.status(400).json({ cause: 'input', message: (e as Error).message });
      return;
    }
    const id = typeof sent.id === 'string' ? sent.id : '';
    // Only a deployed custody-config node's credentials: never another node type's that happen to share a field name.
    const storedNode = id ? RED.nodes.getNode(id) : null;
    const stored = storedNode && storedNode.type === 'custody-config' ? (RED.nodes.getCredentials(id) as ConnectionCredentials | undefined) : undefined;
    const credentials = resolveCredentials(sent, stored);
    const secrets = secretsOf(credentials);
    // The API part with the coordination too: the same refusals as at deploy (nonce signing).
    const apiSettings: ConnectionSettings = { ...settings, coordination: coordination.coordination };
    Promise.all([testConnection(apiSettings, credentials, startSimulator), coordination.coordination === 'redis' ? testRedis(coordination, credentials) : undefined]).then(
      ([answer, redis]) => {
        const out = withRedis(answer, redis);
        if (!out.ok) RED.log.debug(redact(`custody-config test connection (${out.environment}${redis ? ', Redis' : ''}): ${out.step} ${out.cause}`, secrets));
        res.json(out);
      },
      (err: unknown) => {
        // testConnection and testRedis answer failures themselves; this is a bug: answer without detail.
        const f = describeFailure(err, 'v1', secrets);
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
    const secrets = secretsOf(stored);
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

  RED.httpAdmin.get(COORDINATION_PATH, RED.auth.needsPermission(COORDINATION_PERMISSION), (req: Request, res: Response) => {
    const id = String(req.params.id ?? '');
    const node = RED.nodes.getNode(id) as CustodyConfigNode | null;
    if (!node || node.type !== 'custody-config') {
      res.status(404).json({ cause: 'notDeployed', message: `no deployed custody-config node ${JSON.stringify(id.slice(0, 40))}; deploy the flow first` });
      return;
    }
    const status = node.coordinationStatus();
    const stored = (RED.nodes.getCredentials(id) ?? {}) as ConnectionCredentials;
    // Only the fields of a CoordinationStatus, and no secret in the reason.
    const out: CoordinationStatus = { coordination: status.coordination === 'redis' ? 'redis' : 'none' };
    if (status.state) out.state = status.state;
    if (status.reason) out.reason = redact(String(status.reason), [stored.redisPassword, stored.redisSentinelPassword]);
    if (status.instance) out.instance = String(status.instance);
    if (status.mode) out.mode = status.mode;
    if (status.master) out.master = String(status.master);
    if (typeof status.masterSince === 'number' && status.masterSince > 0) out.masterSince = status.masterSince;
    if (typeof status.failovers === 'number') out.failovers = status.failovers;
    res.json(out);
  });
}
