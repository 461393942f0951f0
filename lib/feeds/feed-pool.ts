/**
 * The feeds of one connection, shared: one feed per kind and key (a core client feed per core
 * client id, one liquidity hub feed, one wallets feed; spec section 6), opened with its first
 * subscriber and closed with its last, its client built again after a failure, and its health
 * told to its subscribers and to its watchers (who follow a feed's health without using it). The
 * shape of Node-RED's MQTT broker node (register/deregister), with plain callbacks: no Node-RED
 * here (docs/architecture.md, "The layers"; the config node `custody-config` is the glue).
 */
import type { CustodyClient } from '../client/client';
import { connectionFailureOf, type ConnectionFailure } from '../client/failure';
import type { Action } from '../api/v1/core-client';
import type { HubFeedMessage, WalletFeedMessage } from '../api/feeds';
import { CoreClientFeed, FeedConnectionError, type ActionListing, type FeedOptions, type FeedState, type SignedFeed } from './feed';
import { FailureReports } from './feed-health';
import { HubFeed } from './hub-feed';
import { WalletsFeed } from './wallets-feed';

/**
 * The health of a shared feed: its connection state and, while it is not connected, the failure
 * in force (the last failed attempt's cause: a refused handshake, an unreachable host, a client
 * that cannot be built). Example: `{state: 'disconnected', failure: {cause: 'badApiKey', statusCode: 401, msg: 'errPartnerAuth', ...}}`.
 */
export interface FeedHealth {
  state: FeedState;
  /** Absent while connected, and before the first failure. */
  failure?: ConnectionFailure;
}

/**
 * A log line of a shared feed, given to ONE of its users (the first that takes reports), so that
 * it is logged once and attributed to a user of the feed: `failing` once per cause
 * ({@link FailureReports}: again only when the cause changes, at most once a minute per cause),
 * `recovered` when a logged failure ends, `warning` once per distinct other problem (a message
 * that is not JSON, a failed catch-up read).
 */
export type FeedReport = { kind: 'failing'; failure: ConnectionFailure; error: Error } | { kind: 'recovered' } | { kind: 'warning'; error: Error };

/** The status callbacks of a feed subscription: the part every feed user has alike. */
export interface FeedStatusCallbacks {
  /** Called when the feed's health changes, and once at registration with the current one. */
  onHealth(health: FeedHealth): void;
  /** A user that logs the feed's problems for everyone: see {@link FeedReport}. Users without it log nothing. */
  onReport?(report: FeedReport): void;
}

/** Who watches the health of a core client feed without using it (an approver). */
export interface FeedWatcher {
  /** Called when the health changes, at registration, and with undefined while nobody uses that feed. */
  onHealth(health: FeedHealth | undefined): void;
}

/** Who listens to a shared core client feed (spec section 6, `/coreclient/{client_id}`). */
export interface FeedUser extends FeedStatusCallbacks {
  /** Called once per pending action id (see {@link CoreClientFeed}). */
  onAction(action: Action): void;
  /** Called after each catch-up read of the pending actions, once its actions were passed to `onAction` ({@link CoreClientFeed} `listing`). */
  onListing?(listing: ActionListing): void;
}

/** Who listens to a shared account-wide feed: `T` = HubFeedMessage (liquidity hub) or WalletFeedMessage (wallets). */
export interface AccountFeedUser<T> extends FeedStatusCallbacks {
  /** Called once per feed message, as received. */
  onMessage(message: T): void;
}

/** A membership of a shared feed (a user's, a watcher's, an approver's, a route's). */
export interface FeedMembership {
  /** Leave; the last member of a feed to leave closes it. */
  leave(): Promise<void>;
}

/**
 * What differs between the shared feeds: the key it is shared under, how to build one, its
 * message event and how a user takes a message; and other events passed on to the users, by
 * event name (the core client feed's `listing`).
 */
export interface FeedKind<U extends FeedStatusCallbacks> {
  key: string;
  make(client: CustodyClient, options: FeedOptions): SignedFeed;
  event: string;
  deliver(user: U, message: unknown): void;
  passOn?: Record<string, (user: U, value: unknown) => void>;
}

/** Options of a {@link FeedPool}. */
export interface FeedPoolOptions {
  /** The connection's signed client, built on first call. @throws why it cannot be built (rejects): the feed is then tried again later. */
  client(): Promise<CustodyClient>;
  /** The wait before building the client again after a failure, and a feed's longest reconnect delay, ms (default {@link feedRetryMs}). Read at each attempt. */
  retryMs?: () => number;
}

/**
 * The default retry delay of a feed, ms: 30000, or `$CUSTODYFLOW_FEED_RETRY_MS` (a whole number
 * of at least 1; meant for tests, which shorten a long outage to many quick retries).
 */
export function feedRetryMs(): number {
  const v = Number(process.env.CUSTODYFLOW_FEED_RETRY_MS);
  return Number.isInteger(v) && v >= 1 ? v : 30000;
}

/** The text that tells two healths apart for their users (a new attempt of the same failure is no change; another socket error of an unreachable server is). */
function healthKey(h: FeedHealth): string {
  return h.state === 'connected' ? 'connected' : h.failure ? `failing|${h.failure.key}|${h.failure.code ?? ''}` : h.state;
}

/** A shared feed and its users; `feed` is set once the client is built. */
interface SharedFeed {
  feed?: SignedFeed;
  /** The timer of the next attempt to build the client, after a failure. */
  retry?: NodeJS.Timeout;
  users: Set<FeedStatusCallbacks>;
  /** The health the users were last told. */
  health: FeedHealth;
  /** When a failure or a recovery is worth a log line. */
  reports: FailureReports;
  /** The last warning reported (a problem other than the connection's), so that it is reported once. */
  lastWarning?: string;
}

/** The key of the shared feed of core client `clientId`. */
const coreClientKey = (clientId: string): string => `coreclient/${clientId}`;

/**
 * The shared feeds of one connection (see the file comment). After {@link close} nothing opens
 * again and nobody is told anything.
 */
export class FeedPool {
  readonly #options: FeedPoolOptions;
  /** The shared feeds by {@link FeedKind} key. */
  readonly #feeds = new Map<string, SharedFeed>();
  /** Watchers of a feed's health, by feed key; told of the feed's health while it exists. */
  readonly #watchers = new Map<string, Set<FeedWatcher>>();
  #closed = false;

  constructor(options: FeedPoolOptions) {
    this.#options = options;
  }

  #retryMs(): number {
    return (this.#options.retryMs ?? feedRetryMs)();
  }

  /** The health of the feed under `key`, undefined while nobody uses it. */
  health(key: string): FeedHealth | undefined {
    return this.#feeds.get(key)?.health;
  }

  /** Join the core client feed of `clientId` (spec section 6): the first user opens it, the last to leave closes it. */
  subscribeCoreClient(clientId: string, user: FeedUser): FeedMembership {
    return this.subscribe<FeedUser>(
      {
        key: coreClientKey(clientId),
        make: (client, options) => new CoreClientFeed(client, clientId, options),
        event: 'action',
        deliver: (u, action) => u.onAction(action as Action),
        passOn: { listing: (u, listing) => u.onListing?.(listing as ActionListing) },
      },
      user,
    );
  }

  /** Join the account's liquidity hub feed (spec section 6), shared like {@link subscribeCoreClient}. */
  subscribeHub(user: AccountFeedUser<HubFeedMessage>): FeedMembership {
    return this.subscribe({ key: 'liquidityhub', make: (client, options) => new HubFeed(client, options), event: 'quote', deliver: (u, m) => u.onMessage(m as HubFeedMessage) }, user);
  }

  /** Join the wallets feed of the connection's API key (spec section 6), shared like {@link subscribeCoreClient}. */
  subscribeWallets(user: AccountFeedUser<WalletFeedMessage>): FeedMembership {
    return this.subscribe({ key: 'wallets', make: (client, options) => new WalletsFeed(client, options), event: 'transaction', deliver: (u, m) => u.onMessage(m as WalletFeedMessage) }, user);
  }

  /** Watch the health of the core client feed of `clientId` (opened by its users, never by a watcher) until `leave`. */
  watchCoreClient(clientId: string, watcher: FeedWatcher): FeedMembership {
    const key = coreClientKey(clientId);
    let set = this.#watchers.get(key);
    if (!set) this.#watchers.set(key, (set = new Set()));
    set.add(watcher);
    watcher.onHealth(this.health(key));
    const mine = set;
    return {
      leave: async () => {
        mine.delete(watcher);
        if (mine.size === 0 && this.#watchers.get(key) === mine) this.#watchers.delete(key);
      },
    };
  }

  /** Join the shared feed of `kind`: the first user opens it, the last to leave closes it (its watchers are then told undefined). */
  subscribe<U extends FeedStatusCallbacks>(kind: FeedKind<U>, user: U): FeedMembership {
    let entry = this.#feeds.get(kind.key);
    if (!entry) {
      const created: SharedFeed = { users: new Set(), health: { state: 'connecting' }, reports: new FailureReports() };
      entry = created;
      this.#feeds.set(kind.key, created);
      this.#watchers.get(kind.key)?.forEach((w) => w.onHealth(created.health));
      this.#open(kind as unknown as FeedKind<FeedStatusCallbacks>, created);
    }
    const joined = entry;
    joined.users.add(user);
    user.onHealth(joined.health);
    return {
      leave: async () => {
        joined.users.delete(user);
        if (joined.users.size === 0 && this.#feeds.get(kind.key) === joined) {
          this.#feeds.delete(kind.key);
          clearTimeout(joined.retry);
          if (!this.#closed) this.#watchers.get(kind.key)?.forEach((w) => w.onHealth(undefined));
          await joined.feed?.stop();
        }
      },
    };
  }

  /** Stop every feed and forget every user and watcher. Resolves once every feed has stopped (never rejects). */
  async close(): Promise<void> {
    this.#closed = true;
    const stopping = Array.from(this.#feeds.values(), (f) => {
      clearTimeout(f.retry);
      return f.feed?.stop();
    });
    this.#feeds.clear();
    this.#watchers.clear();
    await Promise.allSettled(stopping);
  }

  /** Tell the users and watchers of `entry` its new health, when it differs from the last one told. */
  #setHealth(key: string, entry: SharedFeed, health: FeedHealth): void {
    if (healthKey(health) === healthKey(entry.health)) return;
    entry.health = health;
    entry.users.forEach((u) => u.onHealth(health));
    this.#watchers.get(key)?.forEach((w) => w.onHealth(health));
  }

  /** Give `r` to the entry's reporting user: the first that takes reports (none: not reported). */
  #report(entry: SharedFeed, r: FeedReport): void {
    for (const u of entry.users) {
      if (u.onReport) return u.onReport(r);
    }
  }

  /** A failed attempt of `entry` (the client could not be built, or the feed could not connect). */
  #failed(key: string, entry: SharedFeed, err: Error): void {
    const failure = connectionFailureOf(err);
    const { log } = entry.reports.failed(failure);
    this.#setHealth(key, entry, { state: entry.feed?.state === 'connecting' ? 'disconnected' : (entry.feed?.state ?? 'disconnected'), failure });
    if (log) this.#report(entry, { kind: 'failing', failure, error: err });
  }

  /** Build the client and open the shared feed `entry` of `kind`; on failure report it and try again later. */
  #open(kind: FeedKind<FeedStatusCallbacks>, entry: SharedFeed): void {
    const current = (): boolean => this.#feeds.get(kind.key) === entry;
    this.#options.client().then(
      (client) => {
        if (!current()) return; // everyone left meanwhile
        const retryMs = this.#retryMs();
        const feed = kind.make(client, { maxDelayMs: retryMs, minDelayMs: Math.min(500, retryMs) });
        entry.feed = feed;
        feed.on(kind.event, (message: unknown) => entry.users.forEach((u) => kind.deliver(u, message)));
        for (const [event, pass] of Object.entries(kind.passOn ?? {})) feed.on(event, (value: unknown) => entry.users.forEach((u) => pass(u, value)));
        feed.on('state', (state: FeedState) => {
          if (!current()) return; // left by everyone (being stopped): its watchers were told
          if (state === 'connected') {
            const { log } = entry.reports.recovered();
            entry.lastWarning = undefined;
            this.#setHealth(kind.key, entry, { state });
            if (log) this.#report(entry, { kind: 'recovered' });
          } else {
            const failure = entry.reports.current;
            this.#setHealth(kind.key, entry, failure ? { state, failure } : { state });
          }
        });
        feed.on('error', (err: Error) => {
          if (!current()) return;
          if (err instanceof FeedConnectionError) return this.#failed(kind.key, entry, err);
          // Another problem (a message that is not JSON, a failed catch-up read): once per distinct one.
          if (err.message !== entry.lastWarning) this.#report(entry, { kind: 'warning', error: err });
          entry.lastWarning = err.message;
        });
        feed.start();
      },
      (err: Error) => {
        if (!current()) return;
        // Usually a configuration that cannot work until it is redeployed (e.g. no private key);
        // a passing failure (the built-in simulator not starting) heals: try again in a while.
        this.#failed(kind.key, entry, err);
        // The same wait at every retry.
        entry.retry = setTimeout(() => {
          entry.retry = undefined;
          if (current() && !this.#closed) this.#open(kind, entry);
        }, this.#retryMs());
      },
    );
  }
}
