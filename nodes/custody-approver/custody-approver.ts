/**
 * `custody-approver`: decides each pending action of a core client by ordered rules (first
 * match wins; approve, reject, or hold for a person), then approves (PUT) or rejects (DELETE)
 * it through lib, once per action id across restarts, redeploys and feed re-sends, with every
 * decision in a hash-chained audit file written before the call. Source: spec section 2
 * "Action", section 4 `PUT`/`DELETE /coreclient/{client_id}/action/{action_id}`, section 6;
 * the engine is lib/approver (no Node-RED there).
 *
 * Input: `msg.payload` with `client_id` and `action_id` (as `custody-coreclient-feed` sends
 * it; `details` read when missing). Outputs: 1 approved, 2 rejected, 3 held; each msg has
 * `msg.payload` = the action with its details, `msg.decision` (lib DecisionRecord, with
 * `outcome` `applied` when a call was made) and, when an answer came, `msg.statusCode`. A call
 * refused, not sent, or resolved as not applied: `done(err)` with `msg.decision` attached
 * (`outcome: 'notApplied'`). A call whose outcome is unknown (a timeout, a reset, a 5xx, a
 * redeploy mid-call) waits while lib resolves it by reading the action (at most lib's
 * REPORT_UNKNOWN_AFTER_MS, 2 minutes), then leaves by its output once applied; still unknown,
 * it goes to Catch with `msg.outcomeUnknown = true`, `msg.decision.outcome = 'unknown'` and
 * the error code `EOUTCOMEUNKNOWN`, and the status counts it until it is resolved.
 * With coordination on the connection (Redis, docs/scale-out.md), an action decided by another
 * instance sends no msg here (counted as "decided elsewhere"), and while Redis is unavailable
 * the node holds the actions in hand and shows so in its status.
 *
 * Its status also shows the health of its core client's feed on the same connection (a
 * `custody-coreclient-feed` node of that core client): red ring `feed: <cause>` while the feed
 * fails, yellow ring while it connects, the counts (green) once it is connected; with no feed of
 * that core client on the connection, the counts. Two approvers of one core client on one
 * connection are each warned at start (naming the other) and show it in their status.
 *
 * Its admin API (admin.ts, docs/policies.md): a draft of the rules simulated over this node's audit
 * file, or tried on one action with its velocity windows read; the node enters itself in admin.ts's
 * `approverNodes` at construction (its approver once open) and leaves at close.
 */
import type { NodeAPI, Node, NodeMessageInFlow } from 'node-red';
import { ConfigError } from '../../lib';
import type { Approver, ApproverOutput, CompiledRule } from '../../lib/approver';
import type { Coordinator } from '../../lib/coordination';
import { approverLib } from '../shared/services';
import { editorSeconds, isPlainObject } from '../shared/input';
import { failureText, showError } from '../shared/status';
import { readSetting } from '../shared/typed-field';
import { auditFileOf, createConnectedNode, noConnectionError } from '../shared/node-setup';
import type { ConnectedNodeDef, FeedHealth, FeedMembership } from '../shared/types';
import { approverNodes, registerApproverRoutes, type ApproverNodeEntry } from './admin';

/** Editor properties of `custody-approver` (flows.json). */
interface ApproverDef extends ConnectedNodeDef {
  /** Core client id (its TypedInput type in `clientIdType`: str, env, global, flow; read at start); empty: `msg.payload.client_id`. */
  clientId?: string;
  /** lib ApprovalRule[]: ordered, first match wins. */
  rules?: unknown;
  /** `hold` (default) or `reject`: what applies when no rule matches. */
  defaultDecision?: string;
  /** Decide, audit and send the msg; call nothing. */
  dryRun?: boolean;
  /** Audit file path; empty: `<userDir>/custodyflow-audit/<node id>.jsonl`; relative: below the user directory. */
  auditFile?: string;
  /** How long a fund's whitelist (and a short code's wallet id) is kept, in seconds (default 60). */
  whitelistCacheSeconds?: string | number;
}

/** The port of each output; `skipped` (decided by another instance, docs/scale-out.md) sends no msg. */
const OUTPUT_INDEX: Record<ApproverOutput, number | undefined> = { approved: 0, rejected: 1, held: 2, skipped: undefined };

export = function register(RED: NodeAPI): void {
  registerApproverRoutes(RED);

  function ApproverNode(this: Node, def: ApproverDef) {
    const connection = createConnectedNode(RED, this, def);
    const node = this;
    const clientIdSetting = readSetting(RED, node, def as unknown as Record<string, unknown>, 'clientId');
    const clientId = clientIdSetting.value ?? '';
    const dryRun = def.dryRun === true;
    const auditFile = auditFileOf(RED, node.id, def.auditFile);
    const counts: Record<ApproverOutput, number> = { approved: 0, rejected: 0, held: 0, skipped: 0 };
    /** Calls whose outcome is unknown (being resolved), as the approver last said. */
    let unknownCount = 0;
    /** With coordination: why decisions wait for Redis ('' when they do not). */
    let waitingFor = '';
    let coordinated = false;
    /** False once the approver could not be made (its error is the status). */
    let usable = true;
    /** The health of its core client's feed on the connection; undefined while none is open. */
    let feedHealth: FeedHealth | undefined;
    /** The other approvers of the same core client on the connection. */
    let others: Array<{ id: string; name: string }> = [];
    /** The core client whose feed is watched ('' until known: the configured one, else that of a feed node wired to it, else the first msg's). */
    let watched = '';
    const memberships: FeedMembership[] = [];

    function showCounts(): void {
      if (!usable) return;
      if (waitingFor) {
        node.status({ fill: 'red', shape: 'ring', text: RED._('custody-approver.status.waitingForRedis', { reason: waitingFor.replace(/^coordination: /, '').slice(0, 80) }) });
        return;
      }
      if (feedHealth && feedHealth.state !== 'connected') {
        let state: string;
        if (feedHealth.failure) state = failureText(RED, feedHealth.failure);
        else if (feedHealth.state === 'connecting') state = RED._('common.status.connecting');
        else state = RED._('common.status.disconnected');
        node.status({ fill: feedHealth.failure ? 'red' : 'yellow', shape: 'ring', text: RED._('custody-approver.status.feed', { state }) });
        return;
      }
      if (others.length) {
        node.status({ fill: 'yellow', shape: 'dot', text: RED._('custody-approver.status.shared', { clientId: watched }) });
        return;
      }
      const { approved, rejected, held, skipped } = counts;
      const text = coordinated
        ? dryRun
          ? RED._('custody-approver.status.dryRunCoordinatedCounts', { approved, rejected, held, skipped })
          : RED._('custody-approver.status.coordinatedCounts', { approved, rejected, held, skipped })
        : dryRun
          ? RED._('custody-approver.status.dryRunCounts', { approved, rejected, held })
          : RED._('custody-approver.status.counts', { approved, rejected, held });
      const unknown = unknownCount;
      node.status({ fill: unknown > 0 ? 'yellow' : dryRun ? 'yellow' : 'green', shape: unknown > 0 ? 'ring' : 'dot', text: unknown > 0 ? text + RED._('custody-approver.status.unknownSuffix', { unknown }) : text });
    }

    /** The approver, once the configuration checks out and the audit file verifies; rejects with why not. */
    const ready: Promise<Approver> = (async () => {
      if (!connection) throw noConnectionError(RED);
      const { Approver, compileRules } = approverLib();
      const defaultDecision = def.defaultDecision || 'hold';
      if (defaultDecision !== 'hold' && defaultDecision !== 'reject') throw new ConfigError(`defaultDecision: ${RED._('custody-approver.errors.defaultDecision', { value: JSON.stringify(defaultDecision) })}`);
      const cacheSeconds = editorSeconds(RED, def.whitelistCacheSeconds, 'whitelistCacheSeconds', 60, 0);
      let rules: CompiledRule[];
      try {
        rules = compileRules(def.rules);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
      let coordinator: Coordinator | undefined;
      try {
        coordinator = await connection.coordinator();
      } catch (e) {
        throw new ConfigError(RED._('custody-approver.errors.coordination', { message: (e as Error).message }));
      }
      coordinated = coordinator !== undefined;
      return Approver.open({
        rules,
        defaultDecision,
        mode: dryRun ? 'dryRun' : 'live',
        auditFile,
        cacheMs: cacheSeconds * 1000,
        approverId: node.id,
        client: () => connection.client(),
        coordinator,
        onCoordinationWait: (reason) => {
          waitingFor = reason;
          showCounts();
        },
        // Each head of the audit chain goes to Node-RED's log, to be shipped off the machine and checked with `custodyflow-audit verify --head` (docs/audit.md).
        onAuditHead: (head) => node.log(RED._('custody-approver.log.auditHead', { seq: head.seq, hash: head.hash, file: head.file, head: `${head.seq}:${head.hash}` })),
        onUnknownChange: (unknown, resolved) => {
          unknownCount = unknown;
          // A resolution that ends after its msg went to Catch (or after a restart) is logged once.
          if (resolved) node.log(RED._('custody-approver.errors.resolved', { action: resolved.action_id, outcome: resolved.outcome, why: resolved.why }));
          showCounts();
        },
      });
    })();
    /** Watch the health of `id`'s feed on the connection (once). */
    function watch(id: string): void {
      if (watched || !connection || !id) return;
      watched = id;
      memberships.push(
        connection.watchFeed(id, {
          onHealth(health) {
            feedHealth = health;
            showCounts();
          },
        }),
      );
    }
    if (connection) {
      if (clientId) watch(clientId);
      /** The other approvers already warned about, by id. */
      const warned = new Set<string>();
      memberships.push(
        connection.registerApprover({
          id: node.id,
          name: node.name || '',
          clientId,
          onOthers(watching, list) {
            watch(watching);
            others = list;
            const fresh = list.filter((o) => !warned.has(o.id));
            fresh.forEach((o) => warned.add(o.id));
            if (fresh.length) node.warn(RED._('custody-approver.errors.sharedClient', { clientId: watching, others: fresh.map((o) => (o.name ? `"${o.name}" (${o.id})` : o.id)).join(', ') }));
            showCounts();
          },
        }),
      );
    }

    // What the admin API (admin.ts: simulate, try) reads of this node.
    const entry: ApproverNodeEntry = { id: node.id, name: node.name || '', connection: def.connection || '', auditFile };
    approverNodes.set(node.id, entry);
    ready.then((a) => {
      entry.approver = a;
      unknownCount = a.unknown;
      showCounts();
    }, (err: Error) => {
      entry.failed = err.message;
      usable = false;
      showError(node, err);
      node.error(RED._('custody-approver.errors.notDeciding', { message: err.message }));
    });

    node.on('input', (msg: NodeMessageInFlow, send: (m: Array<NodeMessageInFlow | null>) => void, done: (err?: Error) => void) => {
      const out = msg as NodeMessageInFlow & { decision?: unknown; statusCode?: number };
      const payload = isPlainObject(msg.payload) ? msg.payload : {};
      if (clientIdSetting.error) return done(clientIdSetting.error);
      if (!clientId && typeof payload.client_id === 'string') watch(payload.client_id);
      ready
        .then((approver) => approver.decide(clientId ? { ...payload, client_id: clientId } : payload))
        .then(
          (outcome) => {
            out.payload = outcome.action;
            out.decision = outcome.decision;
            if (outcome.statusCode) out.statusCode = outcome.statusCode;
            else delete out.statusCode;
            if (outcome.error) {
              if (outcome.decision.outcome === 'unknown') (out as { outcomeUnknown?: boolean }).outcomeUnknown = true;
              showError(node, outcome.error);
              return done(outcome.error);
            }
            if (!outcome.decision.redelivered) counts[outcome.output]++;
            showCounts();
            const port = OUTPUT_INDEX[outcome.output];
            if (port !== undefined) {
              const ports: Array<NodeMessageInFlow | null> = [null, null, null];
              ports[port] = out;
              send(ports);
            }
            done();
          },
          (err: Error) => {
            showError(node, err);
            done(err);
          },
        );
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      usable = false;
      if (approverNodes.get(node.id) === entry) approverNodes.delete(node.id);
      memberships.splice(0).forEach((m) => void m.leave());
      ready
        .then((approver) => approver.close(), () => undefined)
        .catch((err: Error) => node.warn(RED._('custody-approver.errors.closingAudit', { message: err.message })))
        .finally(() => {
          node.status({});
          done();
        });
    });
  }

  RED.nodes.registerType('custody-approver', ApproverNode as unknown as Parameters<NodeAPI['nodes']['registerType']>[1]);
};
