/**
 * The clients of a `custody-config` connection, built from its settings and credentials, and the
 * connection test of its edit dialog ("Test connection", docs/configuration.md). One code path
 * builds the clients for the deployed node (custody-config.ts) and for a test of what the dialog
 * holds, so a test passes exactly when the deployed node would work.
 *
 * No Node-RED import: the admin routes (admin.ts) are the glue. Source: docs/configuration.md;
 * spec section 5 (authentication), section 7 (errors), section 4 (GET /assets, GET v2
 * policies).
 */
import { ApiError, ConfigError, CustodyClient, KeySourceError, Pkcs11KeySource, WorkspaceClient, listAssets, listPolicies, resolveBaseUrl, resolveV2BaseUrl } from '../../lib';
import type { KeySource, KeySourceFailure } from '../../lib';
import { failureCauseOf, type FailureCause } from '../../lib';
import type { Environment, SigningMode } from '../../lib';
import type { CoordinatorOptions } from '../../lib/coordination';
import type { Simulator } from '../../simulator';
import { coordinationLib } from '../shared/services';

/** The editor properties of a connection that decide where and how it signs (the `custody-config` defaults). */
export interface ConnectionSettings {
  environment?: Environment;
  /** v1 base URL, for `custom`. */
  baseUrl?: string;
  signingMode?: SigningMode;
  /** Request timeout in seconds (text or number); default 30. */
  timeout?: number | string;
  /** Built-in simulator only: sign with the account's full API key (default) or its read-only key. */
  simulatorV1Key?: 'full' | 'readOnly';
  /** v2 base URL; empty: the environment's default. */
  v2BaseUrl?: string;
  /** v2 workspace id; empty in simulator mode: the provisioned workspace. */
  workspaceId?: string;
  /** Simulator mode: whose v2 token the v2 nodes use, `k.partner` (default) or `k.agent`. */
  simulatorApiKey?: string;
  /** Coordination of several Node-RED instances on this API key (docs/scale-out.md): `none` (default) or `redis`. */
  coordination?: 'none' | 'redis';
  /** How Redis is reached (docs/scale-out.md "Reaching Redis"): `standalone` (by `redisUrl`; the default, also when absent), `sentinel` or `cluster`. */
  redisMode?: 'standalone' | 'sentinel' | 'cluster';
  /** Standalone: `redis://host:port/db` or `rediss://...` (no password in it: see the `redisPassword` credential). */
  redisUrl?: string;
  /** Sentinel: the sentinels, `host:port` separated by commas or spaces (port default 26379). */
  redisSentinels?: string;
  /** Sentinel: the master's name as the sentinels monitor it (default `mymaster`). */
  redisMasterName?: string;
  /** Cluster: seed nodes, `host:port` separated by commas or spaces (port default 6379). */
  redisClusterNodes?: string;
  /** Connect to Redis with TLS. */
  redisTls?: boolean;
  /** Prefix of the Redis keys (default `custodyflow:`); instances that coordinate share it. */
  redisKeyPrefix?: string;
  /** Lease of an approver's claim on an action, seconds (default 60). */
  claimLeaseSeconds?: number | string;
  /**
   * Where the RSA private key is (hosted and custom environments; the built-in simulator signs
   * with its own key): `pem` (default, the `privateKey` credential) or `pkcs11` (a key on a
   * PKCS#11 token, signing with `CKM_SHA256_RSA_PKCS`; docs/configuration.md "Keys on a PKCS#11 token").
   */
  keySource?: 'pem' | 'pkcs11';
  /** PKCS#11: path of the vendor's module (shared library), e.g. `/usr/lib/softhsm/libsofthsm2.so`. */
  pkcs11Module?: string;
  /** PKCS#11: the token's label (or give `pkcs11Slot`). */
  pkcs11TokenLabel?: string;
  /** PKCS#11: the decimal slot id, when no token label is given. */
  pkcs11Slot?: string;
  /** PKCS#11: the private key's `CKA_LABEL` (and/or `pkcs11KeyId`). */
  pkcs11KeyLabel?: string;
  /** PKCS#11: the private key's `CKA_ID` in hex, e.g. `01`. */
  pkcs11KeyId?: string;
}

/** The credentials of a connection (Node-RED `password` credentials). Secrets: never logged, never answered. */
export interface ConnectionCredentials {
  apiKey?: string;
  privateKey?: string;
  token?: string;
  /** The Redis password of the coordination (docs/scale-out.md): the master's and replicas', or every cluster node's. */
  redisPassword?: string;
  /** Sentinel: the sentinels' own password (their `requirepass`). */
  redisSentinelPassword?: string;
  /** The user PIN of the PKCS#11 token (key source `pkcs11`). */
  pin?: string;
}

/** The credentials of a connection as a list, for {@link redact}: every secret it may hold. */
export function secretsOf(credentials: ConnectionCredentials): Array<string | undefined> {
  return [credentials.apiKey, credentials.privateKey, credentials.token, credentials.redisPassword, credentials.redisSentinelPassword, credentials.pin];
}

/** True when the connection signs on a PKCS#11 token: key source `pkcs11` in a hosted or custom environment. */
export function usesToken(settings: ConnectionSettings): boolean {
  return settings.keySource === 'pkcs11' && environmentOf(settings) !== 'simulator';
}

/**
 * The PKCS#11 key source of a connection (not opened: the token is not touched yet), or
 * undefined when it does not sign on a token ({@link usesToken}).
 * @throws {ConfigError} naming `pkcs11.module`, `pkcs11.token`, `pkcs11.slot`, `pkcs11.key`,
 *   `pkcs11.keyId` or `pkcs11.pin` when missing or malformed; {KeySourceError} `bindingMissing`
 *   when the optional package `pkcs11js` is not installed.
 */
export function keySourceOf(settings: ConnectionSettings, credentials: ConnectionCredentials): KeySource | undefined {
  if (!usesToken(settings)) return undefined;
  const text = (v: string | undefined): string | undefined => (v || '').trim() || undefined;
  return new Pkcs11KeySource({
    module: text(settings.pkcs11Module) ?? '',
    tokenLabel: text(settings.pkcs11TokenLabel),
    slot: text(settings.pkcs11Slot),
    keyLabel: text(settings.pkcs11KeyLabel),
    keyId: text(settings.pkcs11KeyId),
    pin: credentials.pin ?? '',
  });
}

/** True when `settings` coordinate several instances through Redis. */
export function coordinated(settings: ConnectionSettings): boolean {
  return settings.coordination === 'redis';
}

/** Where Redis is, by `redisMode` (lib CoordinatorOptions `url`, `sentinels` and `masterName`, or `clusterNodes`). @throws {ConfigError} naming the setting. */
function redisWhere(settings: ConnectionSettings, credentials: ConnectionCredentials): Pick<CoordinatorOptions, 'url' | 'sentinels' | 'masterName' | 'sentinelPassword' | 'clusterNodes'> {
  const mode = settings.redisMode || 'standalone';
  const { DEFAULT_MASTER_NAME, parseRedisAddresses } = coordinationLib();
  if (mode === 'sentinel') {
    const masterName = (settings.redisMasterName ?? DEFAULT_MASTER_NAME).trim();
    if (!masterName) throw new ConfigError('redisMasterName: the name the sentinels monitor the master by, e.g. mymaster');
    return {
      sentinels: parseRedisAddresses(settings.redisSentinels ?? '', 'redisSentinels', 26379),
      masterName,
      ...(credentials.redisSentinelPassword ? { sentinelPassword: credentials.redisSentinelPassword } : {}),
    };
  }
  if (mode === 'cluster') return { clusterNodes: parseRedisAddresses(settings.redisClusterNodes ?? '', 'redisClusterNodes', 6379) };
  if (mode !== 'standalone') throw new ConfigError(`redisMode: standalone, sentinel or cluster, got ${JSON.stringify(String(mode))}`);
  const url = (settings.redisUrl || '').trim();
  if (!url) throw new ConfigError('redisUrl: set the Redis URL (redis://host:port) of the coordination, or set coordination to none');
  return { url };
}

/**
 * The coordinator options of a connection with coordination `redis` (lib CoordinatorOptions):
 * Redis by URL, through Sentinel or a Cluster (`redisMode`).
 * @throws {ConfigError} naming `redisMode`, `redisUrl` (empty), `redisSentinels` or `redisClusterNodes`
 *   (not a host:port list), `redisMasterName` (empty), or `claimLeaseSeconds` (not a number of at least 1).
 */
export function coordinatorOptionsOf(settings: ConnectionSettings, credentials: ConnectionCredentials): CoordinatorOptions {
  const where = redisWhere(settings, credentials);
  const leaseText = settings.claimLeaseSeconds === undefined || settings.claimLeaseSeconds === '' ? '60' : String(settings.claimLeaseSeconds);
  const lease = Number(leaseText);
  if (!Number.isFinite(lease) || lease < 1) throw new ConfigError(`claimLeaseSeconds: a number of seconds, at least 1, got ${JSON.stringify(leaseText)}`);
  return {
    ...where,
    tls: settings.redisTls === true,
    ...(credentials.redisPassword ? { password: credentials.redisPassword } : {}),
    keyPrefix: (settings.redisKeyPrefix || '').trim() || coordinationLib().DEFAULT_KEY_PREFIX,
    leaseMs: Math.round(lease * 1000),
  };
}

/** Starts (or returns) the process's built-in simulator. */
export type SimulatorStarter = () => Promise<Simulator>;

/** Options of the client builders beyond the settings. */
export interface BuildOptions {
  /** Attempts of an idempotent request (default the client's, 3); the connection test uses 1, to answer at once. */
  attempts?: number;
  /**
   * The deployed node's key source ({@link keySourceOf}, made once per deployment, so a refused
   * PIN is not tried again by a rebuild); absent: made here when the settings need one, and
   * closed again when the build fails.
   */
  keySource?: KeySource;
}

/** The environment of `settings`, `simulator` when none is set. */
export function environmentOf(settings: ConnectionSettings): Environment {
  return settings.environment || 'simulator';
}

/** The request timeout of `settings` in milliseconds: `timeout` seconds when a positive number, else 30 s. */
export function timeoutMsOf(settings: ConnectionSettings): number {
  return (Number(settings.timeout) > 0 ? Number(settings.timeout) : 30) * 1000;
}

/** A v1 client and what names its API account (for the submission journal's file). */
export interface BuiltV1 {
  client: CustodyClient;
  /** The base URL the account is reached at (`built-in-simulator` for the built-in simulator, whose port changes per start). */
  accountBase: string;
  /** The API key that names the account (the full key in simulator mode). A secret. */
  accountApiKey: string;
}

/**
 * Build the v1 client of a connection.
 * @param startSimulator called in simulator mode only.
 * @throws {ConfigError} naming `apiKey` or `privateKey` when missing (hosted environments), or
 *   the bad base URL; {KeyFormatError} when the private key cannot be parsed (never quoting it);
 *   with key source `pkcs11`, what {@link keySourceOf} throws and {KeySourceError} when the token
 *   refuses (wrong PIN, no such token or key, key not RSA-2048+; nothing sent);
 *   what `startSimulator` throws.
 */
export async function buildV1Client(settings: ConnectionSettings, credentials: ConnectionCredentials, startSimulator: SimulatorStarter, options: BuildOptions = {}): Promise<BuiltV1> {
  const environment = environmentOf(settings);
  if (coordinated(settings) && settings.signingMode === 'nonce') {
    // Nonces must reach the API in increasing order per key; instances sending on one key each
    // have their own order. Refused rather than half-working (docs/scale-out.md "Nonce signing is refused
    // with coordination").
    throw new ConfigError('signingMode: nonce signing cannot be used with coordination (several instances on one API key send out of nonce order); use timestamp signing');
  }
  const common = { signingMode: settings.signingMode || 'timestamp', timeoutMs: timeoutMsOf(settings), ...(options.attempts ? { attempts: options.attempts } : {}) };
  if (environment === 'simulator') {
    const sim = await startSimulator();
    // The read-only key is signed with the same account key pair (simulator/README.md "Read-only key").
    const apiKey = settings.simulatorV1Key === 'readOnly' ? sim.account.readOnlyApiKey : sim.account.apiKey;
    return {
      client: new CustodyClient({ baseUrl: sim.baseUrl, apiKey, privateKey: sim.account.privateKeyPem, ...common }),
      accountBase: 'built-in-simulator',
      accountApiKey: sim.account.apiKey,
    };
  }
  const baseUrl = resolveBaseUrl(environment, settings.baseUrl);
  if (!credentials.apiKey) throw new ConfigError('apiKey: set the API key in the custody-config node');
  if (usesToken(settings)) {
    // Opened (logged in, key found and checked, one probe signature) before the client exists: a refusal sends nothing.
    const keySource = options.keySource ?? keySourceOf(settings, credentials)!;
    try {
      await keySource.open();
      return { client: new CustodyClient({ baseUrl, apiKey: credentials.apiKey, keySource, ...common }), accountBase: baseUrl, accountApiKey: credentials.apiKey };
    } catch (err) {
      if (!options.keySource) await keySource.close();
      throw err;
    }
  }
  if (!credentials.privateKey) throw new ConfigError('privateKey: set the RSA private key (PEM) in the custody-config node');
  return {
    client: new CustodyClient({ baseUrl, apiKey: credentials.apiKey, privateKey: credentials.privateKey, ...common }),
    accountBase: baseUrl,
    accountApiKey: credentials.apiKey,
  };
}

/**
 * Build the v2 (workspace) client of a connection: the simulator's provisioned workspace and
 * token, or the configured ones.
 * @throws {ConfigError} naming `simulatorApiKey`, `workspaceId`, `token` or `v2BaseUrl`; what `startSimulator` throws.
 */
export async function buildV2Client(settings: ConnectionSettings, credentials: ConnectionCredentials, startSimulator: SimulatorStarter, options: BuildOptions = {}): Promise<WorkspaceClient> {
  const environment = environmentOf(settings);
  const common = { timeoutMs: timeoutMsOf(settings), ...(options.attempts ? { attempts: options.attempts } : {}) };
  if (environment === 'simulator') {
    const sim = await startSimulator();
    const keyId = settings.simulatorApiKey || 'k.partner';
    const key = sim.v2.apiKeys.find((k) => k.id === keyId);
    if (!key) throw new ConfigError(`simulatorApiKey: expected one of ${sim.v2.apiKeys.map((k) => k.id).join(', ')}`);
    return new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: key.token, workspaceId: (settings.workspaceId || '').trim() || sim.v2.workspaceId, ...common });
  }
  const baseUrl = resolveV2BaseUrl(environment, settings.v2BaseUrl);
  if (!(settings.workspaceId || '').trim()) throw new ConfigError('workspaceId: set the v2 workspace id in the custody-config node');
  if (!credentials.token) throw new ConfigError('token: set the v2 token (x-token) in the custody-config node');
  return new WorkspaceClient({ baseUrl, token: credentials.token, workspaceId: settings.workspaceId!.trim(), ...common });
}

/**
 * Whether the connection has the v2 calls configured: always in simulator mode (it provisions a
 * workspace and token), else when a v2 token or a workspace id is set (one without the other is
 * tested, and fails naming the missing one).
 */
export function v2Configured(settings: ConnectionSettings, credentials: ConnectionCredentials): boolean {
  return environmentOf(settings) === 'simulator' || !!credentials.token || !!(settings.workspaceId || '').trim();
}

/** Why a connection failed (lib/client/failure.ts). */
export type { FailureCause };

/** A failure as the test endpoint and the lookups answer it: never a secret. */
export interface DescribedFailure {
  cause: FailureCause;
  /** What failed and what to check, in words (the API's message and reason included, secrets removed). */
  message: string;
  /** A key source's refusal (cause `config`): why, e.g. `pinIncorrect` (lib KeySourceFailure). */
  reason?: KeySourceFailure;
  /** The HTTP status; 0 when no answer came; absent for a `config` failure. */
  statusCode?: number;
  /** The body's `code`, or the socket error code (e.g. `ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`). */
  code?: number | string;
}

/** What to check, per cause: the first words of a failure's message. */
const ADVICE: Record<FailureCause, string> = {
  config: 'The connection settings cannot be used',
  badApiKey: 'The API key was refused: check the API key (and that it belongs to this environment)',
  badSignature: 'The signature was refused: the private key is not the one registered with this API key',
  badTimestamp: 'The x-timestamp or x-nonce was refused: check the clock of the Node-RED host (timestamp signing) or the nonce counter',
  badToken: 'The v2 token was refused: check the v2 token',
  forbidden: 'The API key lacks the permission for this call, or the account is not set up',
  tls: 'The TLS connection failed: the server certificate is not trusted (self-signed, wrong host name, expired) or the server does not speak TLS 1.2 or later',
  unreachable: 'The server cannot be reached: check the host name and port (name not resolved, connection refused or no route)',
  timeout: 'No answer within the timeout: check the address, a firewall or proxy, or raise the timeout',
  network: 'The connection failed without an answer',
  http: 'The server answered with an error: check the base URL (its version path)',
};

/** The first words of a key source's refusal. */
const KEY_SOURCE_ADVICE = 'The signing key cannot be used (nothing was sent)';

/**
 * The cause of a failed call, told apart for the editor.
 * @param err what a client call or a client builder threw.
 * @param api which call failed: `v2` maps a 401 to `badToken`.
 * @param secrets texts to remove from the message wherever they appear (the credentials in use).
 */
export function describeFailure(err: unknown, api: 'v1' | 'v2' = 'v1', secrets: ReadonlyArray<string | undefined> = []): DescribedFailure {
  const clean = (text: string) => redact(text, secrets);
  const cause = failureCauseOf(err, api);
  if (err instanceof KeySourceError) return { cause, reason: err.reason, message: clean(`${KEY_SOURCE_ADVICE}: ${err.message}`) };
  if (cause === 'config') return { cause, message: clean(`${ADVICE.config}: ${(err as Error).message}`) };
  if (err instanceof ApiError) return { cause, message: clean(`${ADVICE[cause]} (${err.message})`), statusCode: err.statusCode, code: err.code };
  const message = err instanceof Error ? err.message : String(err);
  return { cause: 'network', message: clean(`${ADVICE.network} (${message})`) };
}

/**
 * `text` with every occurrence of each secret (of 4 characters or more; a PEM key also by each
 * of its base64 lines) replaced by `[redacted]`.
 */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  const parts: string[] = [];
  for (const s of secrets) {
    if (!s) continue;
    parts.push(s);
    if (s.includes('PRIVATE KEY')) parts.push(...s.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length >= 16 && !l.startsWith('-----')));
  }
  for (const p of parts.filter((p) => p.length >= 4).sort((a, b) => b.length - a.length)) out = out.split(p).join('[redacted]');
  return out;
}

/** How an answer names an environment (the dialog's words). */
const ENVIRONMENT_NAMES: Record<Environment, string> = { simulator: 'the built-in simulator', sandbox: 'Sandbox', play: 'Play', production: 'Production', custom: 'the custom URL' };

/** One step of a connection test: the v1 call or the v2 call. */
export interface TestStep {
  ok: boolean;
  /** The call made, e.g. `GET /assets` (no host, no secret). */
  call: string;
  /** Milliseconds the call took (client build included). */
  ms: number;
  /** v1: the number of assets GET /assets listed. */
  assets?: number;
  /** v2: the number of policies of the workspace. */
  policies?: number;
  /** v2: the workspace tested. */
  workspaceId?: string;
  /** The failure, when `ok` is false. */
  failure?: DescribedFailure;
}

/**
 * The answer of a connection test (`POST <admin>/custodyflow/config/test`). Never holds a secret.
 * `ok` is true when every step passed; otherwise `cause` and `message` are the first failed
 * step's (`step` names it). Example:
 * `{ok: true, environment: 'sandbox', baseUrl: 'https://sandbox-api.qredo.network/api/v1/p', message: 'Connected: GET /assets listed 4 assets (120 ms).', v1: {...}}`.
 */
export interface TestAnswer {
  ok: boolean;
  environment: Environment;
  /** The v1 base URL tested (the simulator's loopback address in simulator mode); absent when it could not be resolved. */
  baseUrl?: string;
  /** One line for the dialog. */
  message: string;
  /** Where the v1 key is: `pem` (the private key credential, or the simulator's key) or `pkcs11` (a token). */
  keySource: 'pem' | 'pkcs11';
  /**
   * The SHA-256 of the v1 key's public key (SPKI DER), lowercase hex: what
   * `openssl pkey -pubin -outform DER | openssl dgst -sha256` prints; absent when the key could not be used.
   */
  fingerprint?: string;
  /** The first failed step: `v1` or `v2`. */
  step?: 'v1' | 'v2';
  cause?: FailureCause;
  /** A key source's refusal: why (e.g. `pinIncorrect`, `tokenNotFound`, `keyNotFound`). */
  reason?: KeySourceFailure;
  statusCode?: number;
  code?: number | string;
  v1: TestStep;
  /** Absent when v2 is not configured ({@link v2Configured}). */
  v2?: TestStep;
}

/**
 * Test a connection: sign GET /assets with the given settings and credentials (one attempt, no
 * retry) and, when v2 is configured, list the workspace's policies with the v2 token. Clients
 * built here are closed before the answer.
 * @param startSimulator called in simulator mode only.
 * @returns the answer; never rejects for a failed call (the failure is in the answer).
 */
export async function testConnection(settings: ConnectionSettings, credentials: ConnectionCredentials, startSimulator: SimulatorStarter): Promise<TestAnswer> {
  const environment = environmentOf(settings);
  const secrets = secretsOf(credentials);
  const answer: TestAnswer = { ok: false, environment, keySource: usesToken(settings) ? 'pkcs11' : 'pem', message: '', v1: { ok: false, call: 'GET /assets', ms: 0 } };
  let started = Date.now();
  let v1: CustodyClient | undefined;
  try {
    const built = await buildV1Client(settings, credentials, startSimulator, { attempts: 1 });
    v1 = built.client;
    answer.baseUrl = v1.baseUrl;
    answer.fingerprint = await v1.keySource?.fingerprint();
    const res = await listAssets(v1);
    answer.v1 = { ok: true, call: 'GET /assets', ms: Date.now() - started, assets: Array.isArray(res.data.assets) ? res.data.assets.length : 0 };
  } catch (err) {
    answer.v1 = { ok: false, call: 'GET /assets', ms: Date.now() - started, failure: describeFailure(err, 'v1', secrets) };
  } finally {
    await v1?.close();
  }
  if (v2Configured(settings, credentials)) {
    started = Date.now();
    let v2: WorkspaceClient | undefined;
    const call = 'GET {v2}/workspaces/{workspaceID}/policies';
    try {
      v2 = await buildV2Client(settings, credentials, startSimulator, { attempts: 1 });
      const res = await listPolicies(v2);
      const policies = (res.data as { policies?: unknown[] }).policies;
      answer.v2 = { ok: true, call, ms: Date.now() - started, policies: Array.isArray(policies) ? policies.length : 0, workspaceId: v2.workspaceId };
    } catch (err) {
      answer.v2 = { ok: false, call, ms: Date.now() - started, failure: describeFailure(err, 'v2', secrets) };
    } finally {
      await v2?.close();
    }
  }
  const failed = !answer.v1.ok ? answer.v1 : answer.v2 && !answer.v2.ok ? answer.v2 : undefined;
  if (failed) {
    const f = failed.failure!;
    answer.step = failed === answer.v1 ? 'v1' : 'v2';
    answer.cause = f.cause;
    if (f.statusCode !== undefined) answer.statusCode = f.statusCode;
    if (f.code !== undefined) answer.code = f.code;
    if (f.reason) answer.reason = f.reason;
    answer.message = answer.step === 'v2' ? `v1 OK (GET /assets listed ${answer.v1.assets} assets); v2 failed: ${f.message}` : f.message;
  } else {
    answer.ok = true;
    const v2 = answer.v2 ? ` v2 workspace ${answer.v2.workspaceId}: ${answer.v2.policies} ${answer.v2.policies === 1 ? 'policy' : 'policies'} (${answer.v2.ms} ms).` : '';
    const key = answer.fingerprint ? ` Key${answer.keySource === 'pkcs11' ? ' on the PKCS#11 token' : ''}: SHA-256 fingerprint ${answer.fingerprint}.` : '';
    answer.message = `Connected to ${ENVIRONMENT_NAMES[environment] ?? environment}: GET /assets listed ${answer.v1.assets} assets (${answer.v1.ms} ms).${key}${v2}`;
  }
  return answer;
}
