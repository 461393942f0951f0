/**
 * The embedded Custody Partner API simulator (simulator/README.md).
 *
 * Serves the v1 partner API at `/api/v1/p` over HTTP, or HTTPS (TLS 1.2+) when given a
 * certificate, with core client websocket feeds at `/api/v1/p/coreclient/{client_id}/feed`,
 * the liquidity hub feed at `/api/v1/p/liquidityhub/feed` and the wallets feed at
 * `/api/v1/p/wallets/feed` (see feeds.ts); the v2 workspace calls at `/api/v2` (`x-token`, see
 * v2/routes.ts); and loopback-only control endpoints at `/_simulator` (see control.ts) and
 * `/_simulator/v2` (see v2/routes.ts). Overview: simulator/README.md.
 *
 * Data folder (`SimulatorOptions.dataDir`, created with mode 0700):
 * - `partner-private-key.pem` (PKCS#8, mode 0600) and `partner-public-key.pem` (SPKI, mode 0600):
 *   the partner account's RSA 2048 key pair, generated on first start; the public key is the
 *   registered one.
 * - `partner-private-key.pkcs1.pem` (PKCS#1, PEM label `RSA PRIVATE KEY`, mode 0600): the same private
 *   key in PKCS#1, for clients that read that form only (e.g. Go clients built on
 *   `x509.ParsePKCS1PrivateKey`); written beside the PKCS#8 file on first start, and on the start
 *   of an existing data folder that lacks it (or holds another key in it).
 * - `partner-api-key.txt` (mode 0600): the account's API key, for pasting into a client's
 *   configuration (the command line prints its path, never the key).
 * - `partner-readonly-api-key.txt` (mode 0600): the account's second API key, with the read-only
 *   permission (spec section 4 "Read-only subset"; writes answer 403, see auth.ts). It signs with
 *   the same key pair. Provisioned on first start, and on the start of an existing data folder
 *   that lacks it.
 * - `v2-token.txt` (mode 0600): the `x-token` of the v2 workspace's API key `k.partner`
 *   (`Simulator.v2.token`), written on first start (and when missing).
 * - `state.json` (mode 0600): everything else (API key, read-only API key, companies, funds,
 *   wallets, custody transactions, actions, ledger, nonce marks, clock offset, demo ids, the v2
 *   workspace with its tokens): a snapshot, written atomically on first start, on compaction
 *   and on stop; `journal.jsonl` (mode 0600): the changes since the snapshot, one fdatasync'ed
 *   line per group commit (store.ts, journal.ts). Neither is written when `persist` is false.
 *
 * The command line (cli.ts) prints the paths of the key and token files, never their content.
 *
 * No Node-RED import. Project imports: lib/client/signing.ts (verification), lib/api/operations.ts
 * and lib/api/v1 (the routes and their request schemas), lib/api/feeds.ts (the feed message types).
 */
import { createPrivateKey, generateKeyPair, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { loadPrivateKey, loadPublicKey } from '../lib/client/signing';
import { Authenticator } from './auth';
import { controlRouter } from './control';
import { createDemo, upgradeDemo } from './demo';
import { Engine, type DedupeMode } from './engine';
import { FeedHub } from './feeds';
import { HttpFaults } from './faults';
import { createRouter, errorHandler, pathOf, rawBodyParser, requestListener, sendJson, type RequestHandler } from './http';
import { ensureUsers } from './network';
import { apiRouter } from './routes';
import { API_PREFIX, CONTROL_PREFIX, V2_CONTROL_PREFIX, V2_PREFIX } from './paths';
import { emptyState, type DemoDataset, type SimState } from './model';
import { Store } from './store';
import { JOURNAL_CHECK_ENV } from './journal';
import { CHECK_ENV } from './response-check';
import { applyExpiry } from './transactions';
import { ensureV2 } from './v2/state';
import { v2Service } from './v2/routes';

export type { DemoDataset, DemoWallet } from './model';
export type { DedupeMode } from './engine';

/** Options of {@link Simulator.start}. */
export interface SimulatorOptions {
  /** folder for keys and state; created when missing */
  dataDir: string;
  /** TCP port; 0 (the default) picks an ephemeral port */
  port?: number;
  /** interface to listen on; default `127.0.0.1` */
  host?: string;
  /** serve HTTPS (TLS 1.2 or later) and wss feeds with this PEM certificate and key */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** accepted distance in seconds between `x-timestamp` and the real wall clock; default 60 */
  timestampWindowSeconds?: number;
  /**
   * Default true: every change is written to `state.json` before its response is sent. False
   * keeps the state in memory only (keys are still provisioned in `dataDir`): for benchmarks
   * that measure clients, where the growing state file would make the simulator the bottleneck,
   * and for throwaway runs.
   */
  persist?: boolean;
  /**
   * Which POST calls answer `existing` (the original tx_id) for a `partner_txID` already used.
   * `all` (the default): transfers, withdrawals, swap makes, swap takes and sweeps (semantics
   * chosen by the simulator). `transfers`: only transfers, the one call spec section 3 ("Moves
   * shown") promises it for; a repeated partner_txID on a withdrawal, swap make, swap take or
   * sweep then makes a new transaction (status `new`), as a service that does not dedupe them
   * would. For testing clients that must not rely on more than the spec.
   */
  dedupe?: DedupeMode;
}

/** The provisioned partner account. Treat `privateKeyPem` as a secret: never log it. */
export interface SimulatorAccount {
  /** base64 text, sent as `x-api-key` */
  apiKey: string;
  /** PKCS#8 PEM RSA 2048 private key that signs requests */
  privateKeyPem: string;
  /** SPKI PEM public key registered with the simulator */
  publicKeyPem: string;
  /**
   * Base64 text: the account's read-only API key (spec section 4 "Read-only subset"), sent as
   * `x-api-key` and signed with the same `privateKeyPem`; GETs only, writes answer 403. A secret
   * like `apiKey`: never log it.
   */
  readOnlyApiKey: string;
}

/**
 * The provisioned v2 workspace (spec section 4 "v2 endpoints"). `token` and each API key's
 * `token` are secrets (`x-token`): never log them.
 */
export interface SimulatorV2 {
  /** e.g. `http://127.0.0.1:PORT/api/v2` */
  baseUrl: string;
  /** the provisioned workspace */
  workspaceId: string;
  /** the `x-token` of the partner's API key `k.partner` (what the config node uses) */
  token: string;
  /** every API key of the workspace with its token: `k.partner`, `k.agent` (signing agent), `k.unassociated` */
  apiKeys: Array<{ id: string; name: string; associated: string; token: string }>;
}

/** File names inside the data folder. */
export const DATA_FILES = { privateKey: 'partner-private-key.pem', privateKeyPkcs1: 'partner-private-key.pkcs1.pem', publicKey: 'partner-public-key.pem', apiKey: 'partner-api-key.txt', state: 'state.json', v2Token: 'v2-token.txt', readOnlyApiKey: 'partner-readonly-api-key.txt' } as const;

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.access(file);
    return true;
  } catch {
    return false;
  }
}

async function writeSecret(file: string, text: string): Promise<void> {
  await fsp.writeFile(file, text, { mode: 0o600 });
  await fsp.chmod(file, 0o600);
}

/**
 * Make the one-line secret file `file` (mode 0600) hold `secret`: written when missing or when it
 * holds something else (e.g. `state.json` was deleted and the state provisioned new keys), so the
 * files beside the state always match what the running simulator accepts.
 */
async function syncSecretFile(file: string, secret: string): Promise<void> {
  let current: string | undefined;
  try {
    current = await fsp.readFile(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current?.trim() !== secret) await writeSecret(file, secret + '\n');
}

/**
 * Make `partner-private-key.pkcs1.pem` (mode 0600) hold `privateKeyPem` in PKCS#1: written when
 * missing or when it holds something else (e.g. a key file replaced by hand).
 * @returns the file's path.
 */
async function syncPkcs1File(dataDir: string, privateKeyPem: string): Promise<string> {
  const file = path.join(dataDir, DATA_FILES.privateKeyPkcs1);
  const pkcs1 = createPrivateKey(privateKeyPem).export({ type: 'pkcs1', format: 'pem' }).toString();
  let current: string | undefined;
  try {
    current = await fsp.readFile(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== pkcs1) await writeSecret(file, pkcs1);
  return file;
}

/** Generate (or, on a first start with key files already present, reuse) the RSA key pair. */
async function provisionKeys(dataDir: string): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const privFile = path.join(dataDir, DATA_FILES.privateKey);
  const pubFile = path.join(dataDir, DATA_FILES.publicKey);
  if ((await exists(privFile)) && (await exists(pubFile))) {
    const privateKeyPem = await fsp.readFile(privFile, 'utf8');
    const publicKeyPem = await fsp.readFile(pubFile, 'utf8');
    loadPrivateKey(privateKeyPem);
    loadPublicKey(publicKeyPem);
    return { privateKeyPem, publicKeyPem };
  }
  const { privateKey, publicKey } = await new Promise<{ privateKey: string; publicKey: string }>((resolve, reject) =>
    generateKeyPair(
      'rsa',
      { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } },
      (err, pub, priv) => (err ? reject(err) : resolve({ publicKey: pub, privateKey: priv })),
    ),
  );
  await writeSecret(privFile, privateKey);
  await writeSecret(pubFile, publicKey);
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/**
 * Give the state a read-only API key when it has none, and make sure the data folder's
 * `partner-readonly-api-key.txt` (mode 0600) holds it.
 * @returns the key, its file and whether the key is new (the state must then be written).
 */
async function provisionReadOnlyKey(state: SimState, dataDir: string): Promise<{ key: string; file: string; created: boolean }> {
  const created = !state.readOnlyApiKey;
  if (created) state.readOnlyApiKey = randomBytes(32).toString('base64');
  const key = state.readOnlyApiKey!;
  const file = path.join(dataDir, DATA_FILES.readOnlyApiKey);
  await syncSecretFile(file, key);
  return { key, file, created };
}

/**
 * The journal check (journal.ts {@link JOURNAL_CHECK_ENV}): compare a fresh load of the data
 * folder with the state in memory; a difference is appended to the response check's file
 * ({@link CHECK_ENV}) as one violation line, or thrown when that is not set.
 * @throws {Error} listing the differences when there is no response check file to report to.
 */
async function journalCheck(store: Store, dataDir: string): Promise<void> {
  let diffs: string[];
  try {
    diffs = await store.verify();
  } catch (err) {
    diffs = [`reload failed: ${(err as Error).message}`];
  }
  if (!diffs.length) return;
  const file = process.env[CHECK_ENV];
  if (!file) throw new Error(`simulator: the journal of ${dataDir} does not reload to the state in memory:\n  ${diffs.join('\n  ')}`);
  await fsp.appendFile(file, JSON.stringify({ at: new Date().toISOString(), what: `journal check ${dataDir}`, violations: diffs, body: null }) + '\n');
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * A running simulator. Create with {@link Simulator.start}; end with {@link Simulator.stop}.
 */
export class Simulator {
  /** e.g. `http://127.0.0.1:PORT/api/v1/p` (`https` with TLS) */
  readonly baseUrl: string;
  /** e.g. `http://127.0.0.1:PORT/_simulator` */
  readonly controlUrl: string;
  /** the TCP port listened on */
  readonly port: number;
  /** the partner account (API key and key pair) */
  readonly account: SimulatorAccount;
  /** ids of the demo dataset */
  readonly demo: DemoDataset;
  /** path of the private key file (PKCS#8 PEM, mode 0600) */
  readonly privateKeyPath: string;
  /** path of the same private key in PKCS#1 PEM (PEM label `RSA PRIVATE KEY`, mode 0600), for clients that read PKCS#1 only */
  readonly privateKeyPkcs1Path: string;
  /** path of the API key file (mode 0600) */
  readonly apiKeyPath: string;
  /** path of the read-only API key file (mode 0600) */
  readonly readOnlyApiKeyPath: string;
  /** the data folder */
  readonly dataDir: string;
  /** the v2 workspace, its base URL and tokens */
  readonly v2: SimulatorV2;
  private readonly v2Close: () => void;

  private stopping: Promise<void> | null = null;

  private constructor(
    fields: { baseUrl: string; controlUrl: string; port: number; account: SimulatorAccount; demo: DemoDataset; privateKeyPath: string; privateKeyPkcs1Path: string; apiKeyPath: string; dataDir: string; v2: SimulatorV2; v2Close: () => void; readOnlyApiKeyPath: string },
    private readonly server: http.Server,
    private readonly feeds: FeedHub,
    private readonly store: Store,
    private readonly timer: NodeJS.Timeout,
    /**
     * The in-memory engine, for tests: emitting its events (`hub`, `walletTx`, `action`) sends
     * feed messages as the business rules would. Not part of the simulated API; mutate nothing else.
     */
    readonly engine: Engine,
  ) {
    this.baseUrl = fields.baseUrl;
    this.controlUrl = fields.controlUrl;
    this.port = fields.port;
    this.account = fields.account;
    this.demo = fields.demo;
    this.privateKeyPath = fields.privateKeyPath;
    this.privateKeyPkcs1Path = fields.privateKeyPkcs1Path;
    this.apiKeyPath = fields.apiKeyPath;
    this.readOnlyApiKeyPath = fields.readOnlyApiKeyPath;
    this.dataDir = fields.dataDir;
    this.v2 = fields.v2;
    this.v2Close = fields.v2Close;
  }

  /**
   * Start a simulator: load or provision the data folder, build the demo dataset on first start,
   * listen.
   * @throws when `dedupe` is neither `all` nor `transfers`, the data folder cannot be used, the
   *   state file is corrupt, the private key file of an existing state is missing, or the port
   *   cannot be bound.
   */
  static async start(opts: SimulatorOptions): Promise<Simulator> {
    if (opts.dedupe !== undefined && opts.dedupe !== 'all' && opts.dedupe !== 'transfers') throw new Error(`simulator: dedupe must be 'all' or 'transfers', not ${String(opts.dedupe)}`);
    const dataDir = path.resolve(opts.dataDir);
    const host = opts.host ?? '127.0.0.1';
    const tls = !!opts.tls;
    await fsp.mkdir(dataDir, { recursive: true, mode: 0o700 });

    let state = await Store.load(dataDir);
    let account: Omit<SimulatorAccount, 'readOnlyApiKey'>;
    const privFile = path.join(dataDir, DATA_FILES.privateKey);
    if (state) {
      let privateKeyPem: string;
      try {
        privateKeyPem = await fsp.readFile(privFile, 'utf8');
      } catch {
        throw new Error(`simulator: ${privFile} is missing; the state in ${dataDir} cannot be used without it`);
      }
      account = { apiKey: state.apiKey, privateKeyPem, publicKeyPem: state.publicKeyPem };
    } else {
      const keys = await provisionKeys(dataDir);
      state = emptyState(randomBytes(32).toString('base64'), keys.publicKeyPem);
      account = { apiKey: state.apiKey, ...keys };
    }
    const apiKeyFile = path.join(dataDir, DATA_FILES.apiKey);
    await syncSecretFile(apiKeyFile, account.apiKey);
    const pkcs1File = await syncPkcs1File(dataDir, account.privateKeyPem);
    // Every write from here on goes through the store's tracking proxy (journaled).
    const store = new Store(state, dataDir, opts.persist ?? true);
    const readOnly = await provisionReadOnlyKey(store.state, dataDir);
    const eng = new Engine(store, { dedupe: opts.dedupe });
    ensureUsers(eng);
    const v2State = ensureV2(eng);
    const v2TokenFile = path.join(dataDir, DATA_FILES.v2Token);
    await syncSecretFile(v2TokenFile, v2State.apiKeys['k.partner'].token);
    if (!state.demo) createDemo(eng);
    else upgradeDemo(eng);
    applyExpiry(eng);
    await store.flush();

    const auth = new Authenticator(eng, loadPublicKey(state.publicKeyPem), opts.timestampWindowSeconds ?? 60);
    const feeds = new FeedHub(eng, auth, tls);
    // The app: every body read first (1 MB at most), then the routers by prefix, the 404 of
    // anything else, the error handler (http.ts).
    const app = createRouter();
    app.use(rawBodyParser());
    const faults = new HttpFaults();
    app.use(API_PREFIX, faults.middleware, apiRouter(eng, auth, tls));
    const v2 = v2Service(eng);
    app.use(V2_PREFIX, v2.api);
    app.use(V2_CONTROL_PREFIX, v2.control);
    app.use(CONTROL_PREFIX, controlRouter(eng, feeds, faults));
    const unrouted: RequestHandler = (req, res) => sendJson(res, 404, { code: 404, msg: 'Not Found', detail: { reason: `path: no route ${req.method} ${pathOf(req)}` } });
    app.use(unrouted);
    app.use(errorHandler);

    const listener = requestListener(app);
    const server: http.Server = tls
      ? (https.createServer({ cert: opts.tls!.cert, key: opts.tls!.key, minVersion: 'TLSv1.2' }, listener) as unknown as http.Server)
      : http.createServer(listener);
    server.keepAliveTimeout = 30000;
    server.on('upgrade', (req, socket, head) => feeds.handleUpgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const origin = `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}`;
    const timer = setInterval(() => applyExpiry(eng), 1000);
    timer.unref();
    return new Simulator(
      {
        baseUrl: origin + API_PREFIX,
        controlUrl: origin + CONTROL_PREFIX,
        port,
        account: { ...account, readOnlyApiKey: readOnly.key },
        demo: state.demo!,
        privateKeyPath: privFile,
        privateKeyPkcs1Path: pkcs1File,
        apiKeyPath: apiKeyFile,
        dataDir,
        v2: {
          baseUrl: origin + V2_PREFIX,
          workspaceId: v2State.workspaceID,
          token: v2State.apiKeys['k.partner'].token,
          apiKeys: Object.values(v2State.apiKeys).map((k) => ({ id: k.id, name: k.name, associated: k.associated, token: k.token })),
        },
        v2Close: v2.close,
        readOnlyApiKeyPath: readOnly.file,
      },
      server,
      feeds,
      store,
      timer,
      eng,
    );
  }

  /**
   * Stop: close the HTTP server, every websocket and the expiry timer, then flush the state to
   * disk and write a full snapshot (state.json alone then holds it; the journal is removed).
   * With {@link JOURNAL_CHECK_ENV} set, checks first that the folder reloads to the state in
   * memory. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.timer);
      this.v2Close();
      await this.feeds.close();
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
      await this.store.flush();
      if (process.env[JOURNAL_CHECK_ENV]) await journalCheck(this.store, this.dataDir);
      await this.store.close();
    })();
    return this.stopping;
  }
}
