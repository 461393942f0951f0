/**
 * The v2 workspace calls under `/api/v2` (spec section 4 "v2 endpoints"), their `x-token`
 * authentication (spec section 5.8; 401 with the section 7 body when the token is missing or
 * wrong), and the control endpoints under `/_simulator/v2` (loopback only, JSON only).
 *
 * The API routes are lib's operations of version v2 (route-table.ts), one handler each:
 * policies (list, create, update: an update request to approve), portfolios (create, read) and
 * their wallets (create with `waitForAddress`, read), and the simulator's actions (read, approve
 * and reject as the token's API key; the service wants a BLS signature).
 *
 * Control endpoints (below `/_simulator/v2`):
 * | GET | / | `{workspaceID, humans, apiKeys}` (ids and associations, never tokens) |
 * | POST | /actions/{actionID}/approve | `{user_id}` (member id `m.alice`, user id, e-mail or username): a human approves on the signing app |
 * | POST | /actions/{actionID}/reject | `{user_id}` |
 * | POST | /wallets/{walletID}/transactions | `{}`: a transaction of the wallet awaiting its policy's approvals (an action of type `transaction`) |
 */
import { timingSafeEqual } from 'node:crypto';
import type { Engine } from '../engine';
import { SimError } from '../errors';
import { controlGuard, createRouter, guard, mountOperations, noRoute, route, type OperationHandlers, type RouteHandler, type SimRequest, type SimRouter } from '../http';
import { V2_CONTROL_PREFIX, V2_PREFIX } from '../paths';
import { validate } from '../validation';
import { businessMs, v2State, type V2ApiKey } from './state';
import * as ws from './workspace';
import type { PolicyBody } from '../../lib/api/v2/policy';
import type { ConnectPlugin, PortfolioType } from '../../lib/api/v2/portfolio';

/** 401 with the section 7 body (spec section 7: msg `Unauthorized`, reason `empty token` when missing). */
function unauthorized(reason: string): SimError {
  return new SimError(401, 'Unauthorized', reason);
}

/** The API key the `x-token` guard authenticated (`res.locals.key`). */
function keyOf(locals: Record<string, unknown>): V2ApiKey {
  return locals.key as V2ApiKey;
}

/** Pending waits of wallet creations, ended by {@link V2Service.close}. */
class Waits {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly wakers = new Set<() => void>();
  closed = false;

  /** Resolve after `ms` (real time), or at once when closed. */
  sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.timers.delete(t);
        this.wakers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.timers.add(t);
      this.wakers.add(done);
    });
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.wakers]) w();
  }
}

/** The v2 routers and what must be stopped with the simulator. */
export interface V2Service {
  /** mount at {@link V2_PREFIX} */
  api: SimRouter;
  /** mount at {@link V2_CONTROL_PREFIX} (before the v1 control router) */
  control: SimRouter;
  /** end every pending `waitForAddress` wait (the simulator is stopping) */
  close(): void;
}

/** Build the v2 routers. */
export function v2Service(eng: Engine): V2Service {
  const waits = new Waits();

  /** The `x-token` check (spec section 5.8): 401 `empty token` or `invalid token`; the key goes to `res.locals.key`. */
  const authenticate = (req: SimRequest, locals: Record<string, unknown>): void => {
    const h = req.headers['x-token'];
    const token = Array.isArray(h) ? h[0] : h;
    if (!token) throw unauthorized('empty token');
    const given = Buffer.from(token);
    const key = Object.values(v2State(eng).apiKeys).find((k) => {
      const want = Buffer.from(k.token);
      return want.length === given.length && timingSafeEqual(want, given);
    });
    if (!key) throw unauthorized('invalid token');
    locals.key = key;
  };

  /** The handler of every v2 operation, by operationId (lib/api/operations.ts). Bodies arrive validated against the operation's schemas. */
  const handlers = {
    listPolicies: ({ params }) => ({ policies: Object.values(ws.checkWorkspace(eng, params.workspaceID).policies).map(ws.policyView) }),
    createPolicy: ({ params, body }) => ws.createPolicy(eng, params.workspaceID, body as PolicyBody),
    updatePolicy: ({ params, body, locals }) => ws.updatePolicy(eng, params.workspaceID, params.policyID, body as PolicyBody, keyOf(locals).id),
    getWorkspaceAction: ({ params }) => ws.actionView(ws.getAction(eng, params.actionID)),
    approveWorkspaceAction: ({ params, locals }) => ws.actionView(ws.decide(eng, params.actionID, keyOf(locals).id, true)),
    rejectWorkspaceAction: ({ params, locals }) => ws.actionView(ws.decide(eng, params.actionID, keyOf(locals).id, false)),
    createPortfolio: ({ params, body }) => ws.createAccount(eng, params.workspaceID, body as { name: string; type?: PortfolioType }),
    getPortfolio: ({ params }) => ws.accountView(eng, params.workspaceID, params.accountID),
    createPortfolioWallet: async ({ params, body }) => {
      const b = body as { name: string; connectPlugin: ConnectPlugin; policyID: string; waitForAddress?: number };
      const { walletID } = ws.createWallet(eng, params.workspaceID, params.accountID, b);
      // Wait (real time) up to waitForAddress seconds for the key computation (business clock):
      // the answer comes as soon as the address is there, or with '' when the wait ends first.
      // After each wait the wallet is read again from the state (no reference kept across ticks).
      const current = () => v2State(eng).wallets[walletID];
      const deadline = Date.now() + (b.waitForAddress ?? 0) * 1000;
      await eng.store.commit();
      while (!waits.closed && businessMs(eng) < current().addressReadyAtMs && Date.now() < deadline) {
        await waits.sleep(Math.min(100, deadline - Date.now(), current().addressReadyAtMs - businessMs(eng)));
      }
      const view = ws.walletView(eng, current());
      return { walletID: view.walletID, address: view.address };
    },
    getPortfolioWallet: ({ params }) => ws.walletView(eng, ws.getWallet(eng, params.workspaceID, params.accountID, params.walletID)),
  } satisfies OperationHandlers<'v2'>;

  const api = createRouter();
  api.use(guard(eng, 'v2', (req, res) => authenticate(req, res.locals)));
  mountOperations(api, eng, 'v2', handlers);
  api.use(noRoute(eng, V2_PREFIX));

  // The control endpoints' guard (loopback caller and Host, JSON POSTs), as the v1 control router's.
  const c = (fn: RouteHandler) => route(eng, fn, { before: controlGuard });
  const userId = (body: unknown): string => validate<{ user_id: string }>('userDecision', body).user_id;
  const control = createRouter();
  control.get(
    '/',
    c(() => {
      const v2 = v2State(eng);
      return {
        workspaceID: v2.workspaceID,
        humans: Object.values(v2.humans),
        apiKeys: Object.values(v2.apiKeys).map((k) => ({ id: k.id, name: k.name, associated: k.associated })),
      };
    }),
  );
  control.post('/actions/:actionID/approve', c(({ params, body }) => ws.actionView(ws.decide(eng, params.actionID, ws.humanMemberId(eng, userId(body)), true))));
  control.post('/actions/:actionID/reject', c(({ params, body }) => ws.actionView(ws.decide(eng, params.actionID, ws.humanMemberId(eng, userId(body)), false))));
  control.post('/wallets/:walletID/transactions', c(({ params }) => ws.actionView(ws.createTransaction(eng, params.walletID))));
  control.use(noRoute(eng, V2_CONTROL_PREFIX, 'no control endpoint', controlGuard));

  return { api, control, close: () => waits.close() };
}
