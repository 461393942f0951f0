/**
 * `custody-config`: the config node. Holds the environment, the credentials (`apiKey`,
 * `privateKey`, `token`, `pin`: Node-RED password credentials, never in flows.json), the key
 * source (the PEM private key, or a key on a PKCS#11 token opened at deploy) and the signing
 * mode; owns one signed client and one websocket per core client feed, shared by every node
 * that uses it (the pattern of Node-RED's mqtt-broker node). Source: docs/configuration.md;
 * spec section 5. It also owns one liquidity hub feed and one wallets feed (spec section
 * 6), shared the same way by the `custody-hub-feed` and `custody-wallets-feed` nodes. lib/feeds is
 * loaded when a connection's first feed user subscribes, lib/coordination when a connection
 * coordinates through Redis (nodes/shared/services.ts): a deployment using neither loads neither.
 */
import os from 'node:os';
import path from 'node:path';
import type { NodeAPI, NodeDef, Node } from 'node-red';
import { ConfigError, KeySourceError, CLOSE_GRACE_MS, connectionFailureOf, journalFile, openSharedJournal } from '../../lib';
import type { CustodyClient, WorkspaceClient, KeySource, Action, HubFeedMessage, WalletFeedMessage, JournalLease, PaymentJournal } from '../../lib';
import type { FeedState, FeedOptions, SignedFeed, ActionListing, FailureReports } from '../../lib/feeds';
import type { Coordinator, FailoverInfo, SharedSubmissionJournal } from '../../lib/coordination';
import type { Simulator } from '../../simulator';
import type { CustodyConfigNode, FeedUser, FeedMembership, FeedStatusCallbacks, FeedHealth, FeedReport, FeedWatcher, ApproverEntry } from '../shared/types';
import { buildV1Client, buildV2Client, coordinated, coordinatorOptionsOf, environmentOf, keySourceOf, redact, secretsOf, usesToken, type ConnectionCredentials, type ConnectionSettings } from './connection';
import { registerAdminRoutes } from './admin';
import { coordinationLib, feedsLib } from '../shared/services';

/** Editor properties of `custody-config`: the name and the {@link ConnectionSettings} (connection.ts). */
type ConfigDef = NodeDef & ConnectionSettings;

/** Credentials of `custody-config` (all `password`: never sent back to the editor): see connection.ts. */
type ConfigCredentials = ConnectionCredentials;

/** A shared feed and the nodes listening to it; `feed` is set once the client is built. */
interface SharedFeed<U extends FeedStatusCallbacks> {
  feed?: SignedFeed;
  /** The timer of the next attempt to build the client, after a failure. */
  retry?: NodeJS.Timeout;
  users: Set<U>;
  /** The health the users were last told. */
  health: FeedHealth;
  /** When a failure or a recovery is worth a log line (lib FailureReports). */
  reports: FailureReports;
  /** The last warning logged (a problem other than the connection's), so that it is logged once. */
  lastWarning?: string;
}

/**
 * What differs between the shared feeds (core client feeds, liquidity hub, wallets): the key it
 * is shared under, how to build one, its message event and how a user takes a
 * message; and other events passed on to the users, by event name (the core client feed's `listing`).
 */
interface FeedKind<U extends FeedStatusCallbacks> {
  key: string;
  make(client: CustodyClient, options: FeedOptions): SignedFeed;
  event: string;
  deliver(user: U, message: unknown): void;
  passOn?: Record<string, (user: U, value: unknown) => void>;
}

/**
 * A client built on first use and shared; a failed build is retried by the next caller (the
 * failure is reported to that caller).
 */
interface LazyClient<T> {
  /** The client, building it first when needed. @throws ConfigError once the config node is closed (rejects). */
  get(): Promise<T>;
  /** Forget the client (the next `get` builds a new one). @returns the one built or being built, if any, to close it. */
  take(): Promise<T> | undefined;
}

/**
 * A {@link LazyClient} over `build`.
 * @param isClosed true once the config node is closed: `get` then rejects without building.
 * @param closedError the error `get` rejects with once closed.
 */
function lazyClient<T>(build: () => Promise<T>, isClosed: () => boolean, closedError: () => Error): LazyClient<T> {
  let promise: Promise<T> | undefined;
  return {
    get() {
      if (isClosed()) return Promise.reject(closedError());
      if (!promise) {
        promise = build();
        promise.catch(() => {
          promise = undefined;
        });
      }
      return promise;
    },
    take() {
      const p = promise;
      promise = undefined;
      return p;
    },
  };
}

/**
 * The process's built-in simulator (simulator/shared.ts `sharedSimulator`), loaded on the first
 * call: the simulator's modules (and `router`) are required here and nowhere else on the pack's
 * load path, so a Node-RED that never uses the built-in simulator does not load them and the pack
 * adds little to a Node-RED start (docs/performance.md, the footprint group;
 * test/nodes/lazy-simulator.test.ts).
 * @param userDir Node-RED's user directory, for the data folder ({@link simulatorDataDir}).
 * @throws what `Simulator.start` throws (rejects); a failed start is retried by the next call.
 */
function builtInSimulator(userDir: string | undefined): Promise<Simulator> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { sharedSimulator } = require('../../simulator/shared') as typeof import('../../simulator/shared');
  return sharedSimulator(simulatorDataDir(userDir));
}

/** Global context key under which the built-in simulator's addresses are published (see `startSimulator`). */
const SIMULATOR_CONTEXT_KEY = 'custodyflowSimulator';

/**
 * How long a feed waits before building its client again after a failure, and the longest delay
 * between two connection attempts of a feed (ms): 30000, or `$CUSTODYFLOW_FEED_RETRY_MS` (a
 * whole number of at least 1; meant for tests, which shorten a long outage to many quick retries).
 */
function feedRetryMs(): number {
  const v = Number(process.env.CUSTODYFLOW_FEED_RETRY_MS);
  return Number.isInteger(v) && v >= 1 ? v : 30000;
}

/** The text that tells two healths apart for their users (a new attempt of the same failure is no change; another socket error of an unreachable server is). */
function healthKey(h: FeedHealth): string {
  return h.state === 'connected' ? 'connected' : h.failure ? `failing|${h.failure.key}|${h.failure.code ?? ''}` : h.state;
}

/**
 * Where the built-in simulator keeps its state: `$CUSTODYFLOW_SIMULATOR_DATA`, else
 * `<userDir>/custodyflow-simulator`, else a folder in the OS temp dir.
 */
function simulatorDataDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_SIMULATOR_DATA || path.join(userDir || os.tmpdir(), 'custodyflow-simulator');
}

/**
 * Where the submission journals live: `$CUSTODYFLOW_JOURNAL_DIR`, else
 * `<userDir>/custodyflow/journal`, else a folder in the OS temp dir. A file per API account.
 */
function journalDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_JOURNAL_DIR || path.join(userDir || os.tmpdir(), 'custodyflow', 'journal');
}

export = function register(RED: NodeAPI): void {
  function CustodyConfig(this: Node<ConfigCredentials> & CustodyConfigNode, def: ConfigDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    node.environment = environmentOf(def);
    const credentials: ConfigCredentials = node.credentials || {};
    let closed = false;
    /** The journal file of the account, known once the client is built (it names the account). */
    let accountJournalFile: string | undefined;
    /** The lease on the shared journal, once opened. */
    let journalLease: Promise<JournalLease> | undefined;
    /** The shared feeds by {@link FeedKind} key: one per core client, the liquidity hub, the wallets feed. */
    const feeds = new Map<string, SharedFeed<FeedStatusCallbacks>>();

    /**
     * The process's built-in simulator, started on first use. Its addresses (never a key) are put in
     * the global context as `custodyflowSimulator` = `{baseUrl, controlUrl, v2BaseUrl}`, so a flow can
     * reach the simulator's control endpoints (e.g. an end user's wallet connection request, example
     * 09) with Node-RED's own http request node: the simulator listens on a port chosen at start.
     */
    async function startSimulator(): Promise<Simulator> {
      const sim = await builtInSimulator((RED.settings as { userDir?: string }).userDir);
      node.context().global.set(SIMULATOR_CONTEXT_KEY, { baseUrl: sim.baseUrl, controlUrl: sim.controlUrl, v2BaseUrl: sim.v2.baseUrl });
      return sim;
    }

    /**
     * With key source `pkcs11`: the deployment's key source, made and opened at deploy, before
     * anything is sent (a refusal is logged once and shown on the nodes using this connection);
     * every client build signs with it, so a refused PIN is never tried again before a redeploy.
     */
    let keySource: KeySource | undefined;
    let keySourceError: Error | undefined;
    if (usesToken(def)) {
      try {
        keySource = keySourceOf(def, credentials);
      } catch (e) {
        keySourceError = e as Error;
      }
      const refused = (err: Error): void => {
        if (closed) return;
        const message = redact(err.message, secretsOf(credentials));
        node.error(RED._('custody-config.errors.keySource', { message }));
        // The nodes of this connection show it at once, before a msg comes (each says it again when one fails).
        // A token's refusal by its name (e.g. `pinIncorrect`, `tokenNotFound`); the log line says the rest.
        const short = message.length > 60 ? `${message.slice(0, 59)}…` : message;
        const text = err instanceof KeySourceError ? RED._('custody-config.status.keySource', { reason: err.reason }) : short;
        RED.nodes.eachNode((n: { id: string; connection?: string }) => {
          if (n.connection === node.id) RED.nodes.getNode(n.id)?.status({ fill: 'red', shape: 'ring', text });
        });
      };
      if (keySourceError) setImmediate(() => refused(keySourceError!));
      else keySource!.open().catch(refused);
    }

    async function build(): Promise<CustodyClient> {
      if (keySourceError) throw keySourceError;
      const built = await buildV1Client(def, credentials, startSimulator, keySource ? { keySource } : {});
      // The built-in simulator listens on a new port each start: its journal is named by its account alone.
      accountJournalFile = journalFile(journalDir((RED.settings as { userDir?: string }).userDir), built.accountBase, built.accountApiKey);
      return built.client;
    }

    /** The v2 client: the simulator's provisioned workspace and token, or the configured ones. */
    function buildWorkspace(): Promise<WorkspaceClient> {
      return buildV2Client(def, credentials, startSimulator);
    }

    /** The Redis coordination (docs/scale-out.md), made at deploy when `coordination` is `redis`; or why it could not be. */
    let coordinator: Coordinator | undefined;
    let coordinationError: Error | undefined;
    if (coordinated(def)) {
      try {
        coordinator = new (coordinationLib().Coordinator)(coordinatorOptionsOf(def, credentials));
      } catch (e) {
        coordinationError = e as Error;
        node.error(RED._('custody-config.errors.coordination', { message: coordinationError.message }));
      }
      let wasReady = false;
      coordinator?.on('state', (state: string, reason?: string) => {
        // Said once per change, never with the password (ioredis' messages name host and port only).
        if (state === 'ready') {
          if (wasReady) node.log(RED._('custody-config.coordination.back', { instance: coordinator!.instance }));
          else node.log(RED._('custody-config.coordination.connected', { instance: coordinator!.instance }));
          wasReady = true;
        } else if (state === 'down') node.warn(RED._('custody-config.coordination.down', { reason: reason ? ` (${reason})` : '' }));
        else if (state === 'recovering') node.warn(RED._('custody-config.errors.coordination', { message: reason ?? RED._('custody-config.coordination.lostData') }));
      });
      coordinator?.on('warning', (text: string) => node.warn(RED._('custody-config.errors.coordination', { message: text })));
      // Which master, and since when: a failover is handled like a data loss (the 'recovering' line follows).
      coordinator?.on('failover', (f: FailoverInfo) => {
        const since = new Date(f.at).toISOString();
        if (f.from === f.to) node.warn(RED._('custody-config.coordination.restarted', { to: f.to, since }));
        else node.warn(RED._('custody-config.coordination.failover', { to: f.to, from: f.from, since }));
      });
    }
    node.coordinator = async () => {
      if (coordinationError) throw coordinationError;
      return coordinator;
    };
    node.coordinationStatus = () => {
      if (!coordinated(def)) return { coordination: 'none' };
      if (!coordinator) return { coordination: 'redis', state: 'closed', reason: coordinationError?.message ?? '' };
      const c = coordinator;
      return { coordination: 'redis', state: c.state, reason: c.reason, instance: c.instance, mode: c.mode, master: c.master, masterSince: c.masterSince, failovers: c.failovers };
    };

    const closedError = (): Error => new ConfigError(RED._('custody-config.errors.closed'));
    const v1Client = lazyClient(build, () => closed, closedError);
    const v2Client = lazyClient(buildWorkspace, () => closed, closedError);
    node.client = v1Client.get;
    node.workspaceClient = v2Client.get;
    /** With coordination: the journal shared through Redis over this process's file journal (made once). */
    let sharedJournal: SharedSubmissionJournal | undefined;
    node.journal = async (): Promise<PaymentJournal> => {
      await node.client();
      if (closed) throw closedError();
      if (coordinationError) throw coordinationError;
      if (!journalLease) {
        journalLease = openSharedJournal(accountJournalFile!);
        journalLease.catch(() => (journalLease = undefined));
      }
      const local = (await journalLease).journal;
      if (!coordinator) return local;
      if (closed) throw closedError();
      sharedJournal ??= new (coordinationLib().SharedSubmissionJournal)(local, coordinator);
      return sharedJournal;
    };

    /** Watchers of a feed's health (approvers), by feed key; told of the entry's health while it exists. */
    const watchers = new Map<string, Set<FeedWatcher>>();

    /** Tell the users and watchers of `entry` its new health, when it differs from the last one told. */
    function setHealth(key: string, entry: SharedFeed<FeedStatusCallbacks>, health: FeedHealth): void {
      if (healthKey(health) === healthKey(entry.health)) return;
      entry.health = health;
      entry.users.forEach((u) => u.onHealth(health));
      watchers.get(key)?.forEach((w) => w.onHealth(health));
    }

    /** Give `report` to the entry's reporting user: the first that takes reports (none: not logged). */
    function report(entry: SharedFeed<FeedStatusCallbacks>, r: FeedReport): void {
      for (const u of entry.users) {
        if (u.onReport) {
          u.onReport(r);
          return;
        }
      }
    }

    /** A failed attempt of `entry` (the client could not be built, or the feed could not connect). */
    function failed(key: string, entry: SharedFeed<FeedStatusCallbacks>, err: Error): void {
      const failure = connectionFailureOf(err);
      const { log } = entry.reports.failed(failure);
      setHealth(key, entry, { state: entry.feed?.state === 'connecting' ? 'disconnected' : (entry.feed?.state ?? 'disconnected'), failure });
      if (log) report(entry, { kind: 'failing', failure, error: err });
    }

    /** Build the client and open the shared feed `entry` of `kind`; on failure report it and try again later. */
    function openFeed<U extends FeedStatusCallbacks>(kind: FeedKind<U>, entry: SharedFeed<U>): void {
      const shared = entry as unknown as SharedFeed<FeedStatusCallbacks>;
      node.client().then(
        (client) => {
          if (feeds.get(kind.key) !== shared) return; // everyone left meanwhile
          const retryMs = feedRetryMs();
          const feed = kind.make(client, { maxDelayMs: retryMs, minDelayMs: Math.min(500, retryMs) });
          entry.feed = feed;
          feed.on(kind.event, (message: unknown) => entry.users.forEach((u) => kind.deliver(u, message)));
          for (const [event, pass] of Object.entries(kind.passOn ?? {})) feed.on(event, (value: unknown) => entry.users.forEach((u) => pass(u, value)));
          feed.on('state', (state: FeedState) => {
            if (feeds.get(kind.key) !== shared) return; // left by everyone (being stopped): its watchers were told
            if (state === 'connected') {
              const { log } = entry.reports.recovered();
              entry.lastWarning = undefined;
              setHealth(kind.key, shared, { state });
              if (log) report(shared, { kind: 'recovered' });
            } else {
              const failure = entry.reports.current;
              setHealth(kind.key, shared, failure ? { state, failure } : { state });
            }
          });
          feed.on('error', (err: Error) => {
            if (feeds.get(kind.key) !== shared) return;
            if (err instanceof feedsLib().FeedConnectionError) return failed(kind.key, shared, err);
            // Another problem (a message that is not JSON, a failed catch-up read): once per distinct one.
            if (err.message !== entry.lastWarning) report(shared, { kind: 'warning', error: err });
            entry.lastWarning = err.message;
          });
          feed.start();
        },
        (err: Error) => {
          if (feeds.get(kind.key) !== shared) return;
          // Usually a configuration that cannot work until it is redeployed (e.g. no private key);
          // a passing failure (the built-in simulator not starting) heals: try again in a while.
          failed(kind.key, shared, err);
          entry.retry = setTimeout(() => {
            entry.retry = undefined;
            if (feeds.get(kind.key) === shared && !closed) openFeed(kind, entry);
          }, feedRetryMs());
        },
      );
    }

    /** Join the shared feed of `kind`: the first user opens it, the last to leave closes it. */
    function subscribe<U extends FeedStatusCallbacks>(kind: FeedKind<U>, user: U): FeedMembership {
      let entry = feeds.get(kind.key) as SharedFeed<U> | undefined;
      if (!entry) {
        entry = { users: new Set(), health: { state: 'connecting' }, reports: new (feedsLib().FailureReports)() };
        feeds.set(kind.key, entry as unknown as SharedFeed<FeedStatusCallbacks>);
        watchers.get(kind.key)?.forEach((w) => w.onHealth(entry!.health));
        openFeed(kind, entry);
      }
      const joined = entry;
      joined.users.add(user);
      user.onHealth(joined.health);
      return {
        leave: async () => {
          joined.users.delete(user);
          if (joined.users.size === 0 && feeds.get(kind.key) === (joined as unknown as SharedFeed<FeedStatusCallbacks>)) {
            feeds.delete(kind.key);
            clearTimeout(joined.retry);
            if (!closed) watchers.get(kind.key)?.forEach((w) => w.onHealth(undefined));
            await joined.feed?.stop();
          }
        },
      };
    }

    /** The key of the shared feed of core client `clientId`. */
    const coreClientKey = (clientId: string): string => `coreclient/${clientId}`;

    node.watchFeed = (clientId: string, watcher: FeedWatcher): FeedMembership => {
      const key = coreClientKey(clientId);
      let set = watchers.get(key);
      if (!set) watchers.set(key, (set = new Set()));
      set.add(watcher);
      watcher.onHealth(feeds.get(key)?.health);
      const mine = set;
      return {
        leave: async () => {
          mine.delete(watcher);
          if (mine.size === 0 && watchers.get(key) === mine) watchers.delete(key);
        },
      };
    };

    /**
     * The approvers of this connection and the feed nodes' wires to them: which approver watches
     * which core client (its own **Core client id**, else the core client of a feed node wired to
     * it). Several on one core client decide each action more than once: each is told of the others.
     */
    const approvers = new Set<ApproverEntry>();
    /** The core client ids of the feed nodes wired to a node, by node id, each with its count of feed nodes. */
    const routes = new Map<string, Map<string, number>>();
    /** What each approver was last told (`<clientId>|<other ids>`), so it is told only of changes. */
    const told = new Map<ApproverEntry, string>();

    /** The core clients `a` watches. */
    function clientsOf(a: ApproverEntry): string[] {
      return a.clientId ? [a.clientId] : [...(routes.get(a.id)?.keys() ?? [])];
    }

    /** Tell each approver its core client and the other approvers of it, where that changed. */
    function tellApprovers(): void {
      if (closed) return;
      const byClient = new Map<string, ApproverEntry[]>();
      for (const a of approvers) for (const c of clientsOf(a)) byClient.set(c, [...(byClient.get(c) ?? []), a]);
      for (const a of approvers) {
        const clientId = clientsOf(a)[0] ?? '';
        const others = clientsOf(a).flatMap((c) => byClient.get(c) ?? []).filter((o, i, all) => o !== a && all.indexOf(o) === i);
        const text = `${clientId}|${others.map((o) => o.id).join(',')}`;
        if (told.get(a) === text) continue;
        told.set(a, text);
        a.onOthers(clientId, others.map((o) => ({ id: o.id, name: o.name })));
      }
    }

    node.registerApprover = (approver: ApproverEntry): FeedMembership => {
      approvers.add(approver);
      tellApprovers();
      return {
        leave: async () => {
          if (!approvers.delete(approver)) return;
          told.delete(approver);
          tellApprovers();
        },
      };
    };

    node.routeFeed = (clientId: string, targets: string[]): FeedMembership => {
      for (const t of targets) {
        const m = routes.get(t) ?? new Map<string, number>();
        m.set(clientId, (m.get(clientId) ?? 0) + 1);
        routes.set(t, m);
      }
      tellApprovers();
      return {
        leave: async () => {
          for (const t of targets) {
            const m = routes.get(t);
            if (!m) continue;
            const n = (m.get(clientId) ?? 1) - 1;
            if (n > 0) m.set(clientId, n);
            else m.delete(clientId);
            if (m.size === 0) routes.delete(t);
          }
          tellApprovers();
        },
      };
    };

    node.subscribeFeed = (clientId: string, user: FeedUser): FeedMembership =>
      subscribe<FeedUser>(
        {
          key: coreClientKey(clientId),
          make: (client, options) => new (feedsLib().CoreClientFeed)(client, clientId, options),
          event: 'action',
          deliver: (u, action: Action) => u.onAction(action),
          passOn: { listing: (u, listing) => u.onListing?.(listing as ActionListing) },
        },
        user,
      );
    node.subscribeHubFeed = (user) =>
      subscribe({ key: 'liquidityhub', make: (client, options) => new (feedsLib().HubFeed)(client, options), event: 'quote', deliver: (u, message: HubFeedMessage) => u.onMessage(message) }, user);
    node.subscribeWalletsFeed = (user) =>
      subscribe({ key: 'wallets', make: (client, options) => new (feedsLib().WalletsFeed)(client, options), event: 'transaction', deliver: (u, message: WalletFeedMessage) => u.onMessage(message) }, user);

    node.on('close', (_removed: boolean, done: () => void) => {
      closed = true;
      const stopping = Array.from(feeds.values(), (f) => {
        clearTimeout(f.retry);
        return f.feed?.stop();
      });
      feeds.clear();
      watchers.clear();
      approvers.clear();
      routes.clear();
      const pending = v1Client.take();
      // Both clients' close() stop new requests and retries at once, let the requests on the wire
      // finish within CLOSE_GRACE_MS (an approve or a payment in flight is not cut in half by a
      // redeploy), cancel the rest and resolve once all have settled, so no request of this
      // deployment answers after done().
      const closingWorkspace = v2Client.take()?.then((c) => c.close(CLOSE_GRACE_MS), () => undefined);
      const lease = journalLease;
      journalLease = undefined;
      Promise.allSettled(stopping)
        .then(() => Promise.allSettled([pending?.then((c) => c.close(CLOSE_GRACE_MS), () => undefined), closingWorkspace]))
        // The journal closes after the requests: their answers are recorded first.
        .then(() => sharedJournal?.close())
        .then(() => lease?.then((l) => l.release(), () => undefined))
        // The token's sessions after the last signature (a built client closed it already: idempotent).
        .then(() => keySource?.close())
        // Redis last: the journal's and the approvers' last writes go out first.
        .then(() => coordinator?.close())
        .catch((err: Error) => node.warn(RED._('common.errors.closing', { message: err.message })))
        .finally(() => done());
    });
  }

  RED.nodes.registerType('custody-config', CustodyConfig as unknown as Parameters<NodeAPI['nodes']['registerType']>[1], {
    credentials: {
      apiKey: { type: 'password' },
      privateKey: { type: 'password' },
      token: { type: 'password' },
      redisPassword: { type: 'password' },
      redisSentinelPassword: { type: 'password' },
      pin: { type: 'password' },
    },
  });

  // "Test connection" and the id lookups of the edit dialogs (admin.ts). A test of the simulator
  // environment starts the process's built-in simulator, as the first node using it would.
  registerAdminRoutes(RED, () => builtInSimulator((RED.settings as { userDir?: string }).userDir));
};
