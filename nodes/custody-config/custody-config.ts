/**
 * `custody-config`: the config node. Holds the environment, the credentials (`apiKey`,
 * `privateKey`, `token`: Node-RED password credentials, never in flows.json) and the signing
 * mode; owns one signed client and one websocket per core client feed, shared by every node
 * that uses it (the pattern of Node-RED's mqtt-broker node). Source: DESIGN.md "The config
 * node"; spec section 5. It also owns one liquidity hub feed and one wallets feed (spec section
 * 6), shared the same way by the `custody-hub-feed` and `custody-wallets-feed` nodes.
 */
import os from 'node:os';
import path from 'node:path';
import type { NodeAPI, NodeDef, Node } from 'node-red';
import { CustodyClient, CoreClientFeed, ConfigError, resolveBaseUrl, Environment, SigningMode, FeedState, WorkspaceClient, resolveV2BaseUrl } from '../../lib';
import { HubFeed, WalletsFeed, type SignedFeed } from '../../lib';
import { sharedSimulator } from '../../simulator/shared';
import type { Simulator } from '../../simulator';
import type { CustodyConfigNode, FeedUser, FeedMembership } from '../shared/types';
import type { AccountFeedUser } from '../shared/types';

/** Editor properties of `custody-config`. */
interface ConfigDef extends NodeDef {
  environment?: Environment;
  baseUrl?: string;
  signingMode?: SigningMode;
  /** Request timeout in seconds. */
  timeout?: number | string;
  /** Built-in simulator only: sign with the account's full API key (default) or its read-only key. */
  simulatorV1Key?: 'full' | 'readOnly';
  /** v2 base URL; empty: the environment's default (spec section 4 `{base_url_v2}`). */
  v2BaseUrl?: string;
  /** v2 workspace id; empty in simulator mode: the provisioned workspace. */
  workspaceId?: string;
  /** Simulator mode: whose v2 token the v2 nodes use, `k.partner` (default) or `k.agent`. */
  simulatorApiKey?: string;
}

/** Credentials of `custody-config` (all `password`: never sent back to the editor). */
interface ConfigCredentials {
  apiKey?: string;
  privateKey?: string;
  token?: string;
}

/** A shared feed and the nodes listening to it; `feed` is set once the client is built, `error` while it cannot be. */
interface SharedFeed {
  feed?: CoreClientFeed;
  error?: Error;
  /** The timer of the next attempt to build the client, after a failure. */
  retry?: NodeJS.Timeout;
  users: Set<FeedUser>;
}

/** A shared account-wide feed (liquidity hub, wallets) and its users; as {@link SharedFeed}. */
interface SharedAccountFeed {
  feed?: SignedFeed;
  error?: Error;
  retry?: NodeJS.Timeout;
  users: Set<AccountFeedUser<unknown>>;
}

/** What differs between the account-wide feeds: a log label, how to build one, its message event. */
interface AccountFeedKind {
  label: string;
  make(client: CustodyClient): SignedFeed;
  event: string;
}

/** Global context key under which the built-in simulator's addresses are published (see `startSimulator`). */
const SIMULATOR_CONTEXT_KEY = 'custodyflowSimulator';

/** How long a feed waits before building its client again after a failure (ms). */
const FEED_REBUILD_DELAY_MS = 30000;

/**
 * Where the built-in simulator keeps its state: `$CUSTODYFLOW_SIMULATOR_DATA`, else
 * `<userDir>/custodyflow-simulator`, else a folder in the OS temp dir.
 */
function simulatorDataDir(userDir: string | undefined): string {
  return process.env.CUSTODYFLOW_SIMULATOR_DATA || path.join(userDir || os.tmpdir(), 'custodyflow-simulator');
}

export = function register(RED: NodeAPI): void {
  function CustodyConfig(this: Node<ConfigCredentials> & CustodyConfigNode, def: ConfigDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const environment: Environment = def.environment || 'simulator';
    const signingMode: SigningMode = def.signingMode || 'timestamp';
    const timeoutSeconds = Number(def.timeout) > 0 ? Number(def.timeout) : 30;
    const credentials: ConfigCredentials = node.credentials || {};
    let clientPromise: Promise<CustodyClient> | undefined;
    let closed = false;
    const feeds = new Map<string, SharedFeed>();

    /**
     * The process's built-in simulator, started on first use. Its addresses (never a key) are put in
     * the global context as `custodyflowSimulator` = `{baseUrl, controlUrl, v2BaseUrl}`, so a flow can
     * reach the simulator's control endpoints (e.g. an end user's wallet connection request, example
     * 09) with Node-RED's own http request node: the simulator listens on a port chosen at start.
     */
    async function startSimulator(): Promise<Simulator> {
      const sim = await sharedSimulator(simulatorDataDir((RED.settings as { userDir?: string }).userDir));
      node.context().global.set(SIMULATOR_CONTEXT_KEY, { baseUrl: sim.baseUrl, controlUrl: sim.controlUrl, v2BaseUrl: sim.v2.baseUrl });
      return sim;
    }

    async function build(): Promise<CustodyClient> {
      const timeoutMs = timeoutSeconds * 1000;
      if (environment === 'simulator') {
        const sim = await startSimulator();
        // The read-only key is signed with the same account key pair (simulator README).
        const apiKey = def.simulatorV1Key === 'readOnly' ? sim.account.readOnlyApiKey : sim.account.apiKey;
        return new CustodyClient({ baseUrl: sim.baseUrl, apiKey, privateKey: sim.account.privateKeyPem, signingMode, timeoutMs });
      }
      const baseUrl = resolveBaseUrl(environment, def.baseUrl);
      if (!credentials.apiKey) throw new ConfigError('apiKey: set the API key in the custody-config node');
      if (!credentials.privateKey) throw new ConfigError('privateKey: set the RSA private key (PEM) in the custody-config node');
      return new CustodyClient({ baseUrl, apiKey: credentials.apiKey, privateKey: credentials.privateKey, signingMode, timeoutMs });
    }

    let workspacePromise: Promise<WorkspaceClient> | undefined;

    /** The v2 client: the simulator's provisioned workspace and token, or the configured ones. */
    async function buildWorkspace(): Promise<WorkspaceClient> {
      const timeoutMs = timeoutSeconds * 1000;
      if (environment === 'simulator') {
        const sim = await startSimulator();
        const keyId = def.simulatorApiKey || 'k.partner';
        const key = sim.v2.apiKeys.find((k) => k.id === keyId);
        if (!key) throw new ConfigError(`simulatorApiKey: expected one of ${sim.v2.apiKeys.map((k) => k.id).join(', ')}`);
        return new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: key.token, workspaceId: (def.workspaceId || '').trim() || sim.v2.workspaceId, timeoutMs });
      }
      const baseUrl = resolveV2BaseUrl(environment, def.v2BaseUrl);
      if (!(def.workspaceId || '').trim()) throw new ConfigError('workspaceId: set the v2 workspace id in the custody-config node');
      if (!credentials.token) throw new ConfigError('token: set the v2 token (x-token) in the custody-config node');
      return new WorkspaceClient({ baseUrl, token: credentials.token, workspaceId: def.workspaceId!.trim(), timeoutMs });
    }

    node.workspaceClient = () => {
      if (closed) return Promise.reject(new ConfigError('connection: the custody-config node was closed'));
      if (!workspacePromise) {
        workspacePromise = buildWorkspace();
        workspacePromise.catch(() => {
          workspacePromise = undefined;
        });
      }
      return workspacePromise;
    };

    node.client = () => {
      if (closed) return Promise.reject(new ConfigError('connection: the custody-config node was closed'));
      if (!clientPromise) {
        clientPromise = build();
        // A failed build is retried by the next caller (the failure is reported to that caller).
        clientPromise.catch(() => {
          clientPromise = undefined;
        });
      }
      return clientPromise;
    };

    /** Build the client and open the shared feed of `entry`; on failure report it and try again later. */
    function openFeed(clientId: string, entry: SharedFeed): void {
      node.client().then(
        (client) => {
          if (feeds.get(clientId) !== entry) return; // everyone left meanwhile
          entry.error = undefined;
          const feed = new CoreClientFeed(client, clientId);
          entry.feed = feed;
          let lastWarned = '';
          feed.on('action', (action) => entry.users.forEach((u) => u.onAction(action)));
          feed.on('state', (state: FeedState, reason?: string) => {
            if (state === 'connected') lastWarned = '';
            entry.users.forEach((u) => u.onState(state, reason));
          });
          feed.on('error', (err: Error) => {
            // Warn once per distinct failure, so a long outage does not flood the log.
            if (err.message !== lastWarned) node.warn(`core client feed ${clientId}: ${err.message}`);
            lastWarned = err.message;
          });
          feed.start();
        },
        (err: Error) => {
          // Usually a configuration that cannot work until it is redeployed (e.g. no private key);
          // a passing failure (the built-in simulator not starting) heals: try again in a while.
          entry.error = err;
          node.error(`core client feed ${clientId}: ${err.message}`);
          entry.users.forEach((u) => u.onUnusable(err));
          entry.retry = setTimeout(() => {
            entry.retry = undefined;
            if (feeds.get(clientId) === entry && !closed) openFeed(clientId, entry);
          }, FEED_REBUILD_DELAY_MS);
        },
      );
    }

    node.subscribeFeed = (clientId: string, user: FeedUser): FeedMembership => {
      let entry = feeds.get(clientId);
      if (!entry) {
        entry = { users: new Set() };
        feeds.set(clientId, entry);
        openFeed(clientId, entry);
      }
      const joined = entry;
      joined.users.add(user);
      if (joined.error) user.onUnusable(joined.error);
      else user.onState(joined.feed ? joined.feed.state : 'connecting');
      return {
        leave: async () => {
          joined.users.delete(user);
          if (joined.users.size === 0 && feeds.get(clientId) === joined) {
            feeds.delete(clientId);
            clearTimeout(joined.retry);
            await joined.feed?.stop();
          }
        },
      };
    };

    /** The shared liquidity hub and wallets feeds, by kind label. */
    const accountFeeds = new Map<string, SharedAccountFeed>();

    /** Build the client and open the shared account feed `entry`; on failure report it and try again in 30 s (as openFeed). */
    function openAccountFeed(kind: AccountFeedKind, entry: SharedAccountFeed): void {
      node.client().then(
        (client) => {
          if (accountFeeds.get(kind.label) !== entry) return; // everyone left meanwhile
          entry.error = undefined;
          const feed = kind.make(client);
          entry.feed = feed;
          let lastWarned = '';
          feed.on(kind.event, (message: unknown) => entry.users.forEach((u) => u.onMessage(message)));
          feed.on('state', (state: FeedState, reason?: string) => {
            if (state === 'connected') lastWarned = '';
            entry.users.forEach((u) => u.onState(state, reason));
          });
          feed.on('error', (err: Error) => {
            if (err.message !== lastWarned) node.warn(`${kind.label}: ${err.message}`);
            lastWarned = err.message;
          });
          feed.start();
        },
        (err: Error) => {
          entry.error = err;
          node.error(`${kind.label}: ${err.message}`);
          entry.users.forEach((u) => u.onUnusable(err));
          entry.retry = setTimeout(() => {
            entry.retry = undefined;
            if (accountFeeds.get(kind.label) === entry && !closed) openAccountFeed(kind, entry);
          }, FEED_REBUILD_DELAY_MS);
        },
      );
    }

    /** Join the shared account feed of `kind`: the first user opens it, the last to leave closes it. */
    function subscribeAccountFeed(kind: AccountFeedKind, user: AccountFeedUser<unknown>): FeedMembership {
      let entry = accountFeeds.get(kind.label);
      if (!entry) {
        entry = { users: new Set() };
        accountFeeds.set(kind.label, entry);
        openAccountFeed(kind, entry);
      }
      const joined = entry;
      joined.users.add(user);
      if (joined.error) user.onUnusable(joined.error);
      else user.onState(joined.feed ? joined.feed.state : 'connecting');
      return {
        leave: async () => {
          joined.users.delete(user);
          if (joined.users.size === 0 && accountFeeds.get(kind.label) === joined) {
            accountFeeds.delete(kind.label);
            clearTimeout(joined.retry);
            await joined.feed?.stop();
          }
        },
      };
    }

    node.subscribeHubFeed = (user) =>
      subscribeAccountFeed({ label: 'liquidity hub feed', make: (client) => new HubFeed(client), event: 'quote' }, user);
    node.subscribeWalletsFeed = (user) =>
      subscribeAccountFeed({ label: 'wallets feed', make: (client) => new WalletsFeed(client), event: 'transaction' }, user);

    node.on('close', (_removed: boolean, done: () => void) => {
      closed = true;
      const stopping = Array.from(feeds.values(), (f) => {
        clearTimeout(f.retry);
        return f.feed?.stop();
      });
      feeds.clear();
      for (const f of accountFeeds.values()) {
        clearTimeout(f.retry);
        stopping.push(f.feed?.stop());
      }
      accountFeeds.clear();
      const pending = clientPromise;
      clientPromise = undefined;
      const pendingWorkspace = workspacePromise;
      workspacePromise = undefined;
      pendingWorkspace?.then((c) => c.close(), () => undefined);
      Promise.allSettled(stopping)
        .then(() => (pending ? pending.then((c) => c.close(), () => undefined) : undefined))
        .finally(() => done());
    });
  }

  RED.nodes.registerType('custody-config', CustodyConfig as unknown as Parameters<NodeAPI['nodes']['registerType']>[1], {
    credentials: {
      apiKey: { type: 'password' },
      privateKey: { type: 'password' },
      token: { type: 'password' },
    },
  });
};
