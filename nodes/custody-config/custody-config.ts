/**
 * `custody-config`: the config node. Holds the environment, the credentials (`apiKey`,
 * `privateKey`, `token`, `pin`: Node-RED password credentials, never in flows.json), the key
 * source (the PEM private key, or a key on a PKCS#11 token opened at deploy) and the signing
 * mode; owns one signed client, shared by every node that uses it, and the connection's shared
 * feeds (lib/feeds FeedPool: a core client feed per core client, the liquidity hub and wallets
 * feeds; spec sections 5 and 6) and approvers (lib/feeds ApproverRegistry), in the shape of
 * Node-RED's mqtt-broker node: nodes register and deregister, this node is the glue (Node-RED
 * texts, status, log, credentials, close). Source: docs/configuration.md. lib/feeds is loaded at
 * a connection's first feed or approver user, lib/coordination when a connection coordinates
 * through Redis (nodes/shared/services.ts): a deployment using neither loads neither.
 */
import type { NodeAPI, NodeDef, Node } from 'node-red';
import { ConfigError, KeySourceError, CLOSE_GRACE_MS, journalFile, openSharedJournal } from '../../lib';
import type { CustodyClient, WorkspaceClient, KeySource, JournalLease, PaymentJournal } from '../../lib';
import type { FeedPool, ApproverRegistry } from '../../lib/feeds';
import type { Coordinator, FailoverInfo, SharedSubmissionJournal } from '../../lib/coordination';
import type { Simulator } from '../../simulator';
import type { CustodyConfigNode } from '../shared/types';
import { buildV1Client, buildV2Client, coordinated, coordinatorOptionsOf, environmentOf, keySourceOf, redact, secretsOf, usesToken, type ConnectionCredentials, type ConnectionSettings } from './connection';
import { registerAdminRoutes } from './admin';
import { builtInSimulator, journalDir, lazyClient, SIMULATOR_CONTEXT_KEY } from './clients';
import { coordinationLib, feedsLib } from '../shared/services';

/** Editor properties of `custody-config`: the name and the {@link ConnectionSettings} (connection.ts). */
type ConfigDef = NodeDef & ConnectionSettings;

export = function register(RED: NodeAPI): void {
  const userDir = (): string | undefined => (RED.settings as { userDir?: string }).userDir;

  function CustodyConfig(this: Node<ConnectionCredentials> & CustodyConfigNode, def: ConfigDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    node.environment = environmentOf(def);
    const credentials: ConnectionCredentials = node.credentials || {};
    let closed = false;
    /** The journal file of the account, known once the client is built (it names the account). */
    let accountJournalFile: string | undefined;
    /** The lease on the shared journal, once opened. */
    let journalLease: Promise<JournalLease> | undefined;

    /**
     * The process's built-in simulator, started on first use. Its addresses (never a key) are put in
     * the global context as `custodyflowSimulator` = `{baseUrl, controlUrl, v2BaseUrl}`, so a flow can
     * reach the simulator's control endpoints (e.g. an end user's wallet connection request, example
     * 09) with Node-RED's own http request node: the simulator listens on a port chosen at start.
     */
    async function startSimulator(): Promise<Simulator> {
      const sim = await builtInSimulator(userDir());
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
      accountJournalFile = journalFile(journalDir(userDir()), built.accountBase, built.accountApiKey);
      return built.client;
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
    // The v2 client: the simulator's provisioned workspace and token, or the configured ones.
    const v2Client = lazyClient((): Promise<WorkspaceClient> => buildV2Client(def, credentials, startSimulator), () => closed, closedError);
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

    /** The shared feeds and the approvers of this connection, made at their first user (lib/feeds is loaded then). */
    let pool: FeedPool | undefined;
    let approvers: ApproverRegistry | undefined;
    const feeds = (): FeedPool => (pool ??= new (feedsLib().FeedPool)({ client: () => node.client() }));
    const registry = (): ApproverRegistry => (approvers ??= new (feedsLib().ApproverRegistry)());
    node.subscribeFeed = (clientId, user) => feeds().subscribeCoreClient(clientId, user);
    node.subscribeHubFeed = (user) => feeds().subscribeHub(user);
    node.subscribeWalletsFeed = (user) => feeds().subscribeWallets(user);
    node.watchFeed = (clientId, watcher) => feeds().watchCoreClient(clientId, watcher);
    node.registerApprover = (approver) => registry().register(approver);
    node.routeFeed = (clientId, targets) => registry().route(clientId, targets);

    node.on('close', (_removed: boolean, done: () => void) => {
      closed = true;
      const stopping = pool?.close();
      approvers?.close();
      const pending = v1Client.take();
      // Both clients' close() stop new requests and retries at once, let the requests on the wire
      // finish within CLOSE_GRACE_MS (an approve or a payment in flight is not cut in half by a
      // redeploy), cancel the rest and resolve once all have settled, so no request of this
      // deployment answers after done().
      const closingWorkspace = v2Client.take()?.then((c) => c.close(CLOSE_GRACE_MS), () => undefined);
      const lease = journalLease;
      journalLease = undefined;
      Promise.resolve(stopping)
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

  // The credentials (connection.ts): all `password`, never sent back to the editor.
  RED.nodes.registerType('custody-config', CustodyConfig as unknown as Parameters<NodeAPI['nodes']['registerType']>[1], {
    credentials: { apiKey: { type: 'password' }, privateKey: { type: 'password' }, token: { type: 'password' }, redisPassword: { type: 'password' }, redisSentinelPassword: { type: 'password' }, pin: { type: 'password' } },
  });

  // "Test connection" and the id lookups of the edit dialogs (admin.ts). A test of the simulator
  // environment starts the process's built-in simulator, as the first node using it would.
  registerAdminRoutes(RED, () => builtInSimulator(userDir()));
};
