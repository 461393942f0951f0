/**
 * The v2 workspace calls under `/api/v2` (spec section 4 "v2 endpoints"), their `x-token`
 * authentication (spec section 5.8; 401 with the section 7 body when the token is missing or
 * wrong), and the control endpoints under `/_simulator/v2` (loopback only, JSON only).
 *
 * | Method | Path (below `/api/v2`) | Answer |
 * |---|---|---|
 * | GET | /workspaces/{workspaceID}/policies | `{policies: [...]}` |
 * | POST | /workspaces/{workspaceID}/policies | `{policyID}` |
 * | PUT | /workspaces/{workspaceID}/policies/{policyID} | `{actionID, policyID, status: 'pending'}`: an update request |
 * | POST | /workspaces/{workspaceID}/accounts | `{accountID}` |
 * | GET | /workspaces/{workspaceID}/accounts/{accountID} | `{accountID, name, type, wallets}` (simulator) |
 * | POST | /workspaces/{workspaceID}/accounts/{accountID}/wallets | `{walletID, address}`, `address` '' when `waitForAddress` was too short |
 * | GET | /workspaces/{workspaceID}/accounts/{accountID}/wallets/{walletID} | the wallet (simulator) |
 * | GET | /actions/{actionID} | the update request (or transaction approval) |
 * | PUT | /actions/{actionID} | approve as the token's API key (simulator; the service wants a BLS signature) |
 * | DELETE | /actions/{actionID} | reject as the token's API key (simulator) |
 *
 * Control endpoints (below `/_simulator/v2`):
 * | GET | / | `{workspaceID, humans, apiKeys}` (ids and associations, never tokens) |
 * | POST | /actions/{actionID}/approve | `{user_id}` (member id `m.alice`, user id, e-mail or username): a human approves on the signing app |
 * | POST | /actions/{actionID}/reject | `{user_id}` |
 * | POST | /wallets/{walletID}/transactions | `{}`: a transaction of the wallet awaiting its policy's approvals (an action of type `transaction`) |
 */
import { timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler, type Router } from 'express';
import Ajv, { type ErrorObject } from 'ajv';
import type { Engine } from '../engine';
import { badRequest, notFound, SimError, toErrorResponse } from '../errors';
import { parseJson, rawBody } from '../http';
import { controlGuard } from '../control';
import { businessMs, v2State, type V2ApiKey } from './state';
import * as ws from './workspace';

/** Path prefix of the v2 workspace calls (spec section 9). */
export const V2_PREFIX = '/api/v2';
/** Path prefix of the v2 control endpoints. */
export const V2_CONTROL_PREFIX = '/_simulator/v2';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
const text = { type: 'string', minLength: 1, pattern: '\\S' };
const rule = {
  type: 'object',
  required: ['type', 'operation', 'threshold', 'arguments'],
  properties: { type: { type: 'integer' }, operation: { type: 'integer' }, threshold: { type: 'integer' }, arguments: { type: 'object', required: ['id'], properties: { id: text } } },
};
const policyBody = ajv.compile({
  type: 'object',
  required: ['name', 'expression', 'expressionContentType', 'adminPolicyID', 'policyType'],
  properties: {
    name: text,
    expression: {
      type: 'object',
      required: ['type', 'operation', 'threshold', 'rules'],
      properties: { type: { type: 'integer' }, operation: { type: 'integer' }, threshold: { type: 'integer' }, rules: { type: 'array', minItems: 1, maxItems: 100, items: rule } },
    },
    expressionContentType: { enum: ['application/json'] },
    adminPolicyID: text,
    policyType: { enum: ['admin', 'transaction'] },
    adminLocked: { type: 'boolean' },
    allowDuplicates: { type: 'boolean' },
  },
});
const accountBody = ajv.compile({ type: 'object', required: ['name'], properties: { name: text, type: { enum: ['standard', 'exchange'] } } });
/** Longest accepted `waitForAddress`, seconds. */
const MAX_WAIT = 120;
const walletBody = ajv.compile({
  type: 'object',
  required: ['name', 'connectPlugin', 'policyID'],
  properties: { name: text, connectPlugin: { enum: ['defi', 'wc'] }, policyID: text, waitForAddress: { type: 'integer', minimum: 0, maximum: MAX_WAIT } },
});
const userBody = ajv.compile({ type: 'object', required: ['user_id'], properties: { user_id: text } });

function check<T>(fn: ReturnType<typeof ajv.compile>, body: unknown): T {
  if (body === undefined) throw badRequest('body: a JSON object is required');
  if (!fn(body)) {
    const e = fn.errors![0] as ErrorObject;
    let field = e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');
    if (e.keyword === 'required') field = field ? `${field}.${(e.params as { missingProperty: string }).missingProperty}` : (e.params as { missingProperty: string }).missingProperty;
    const what = e.keyword === 'required' ? 'is required' : e.keyword === 'enum' ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}` : (e.message ?? 'is invalid');
    throw badRequest(`${field || 'body'}: ${what}`);
  }
  return body as T;
}

/** 401 with the section 7 body (spec section 7: msg `Unauthorized`, reason `empty token` when missing). */
function unauthorized(reason: string): SimError {
  return new SimError(401, 'Unauthorized', reason);
}

interface Ctx {
  req: Request;
  params: Record<string, string>;
  body: unknown;
  /** the authenticated API key (API routes) */
  key: V2ApiKey;
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
  api: Router;
  /** mount at {@link V2_CONTROL_PREFIX} (before the v1 control router) */
  control: Router;
  /** end every pending `waitForAddress` wait (the simulator is stopping) */
  close(): void;
}

/** Build the v2 routers. */
export function v2Service(eng: Engine): V2Service {
  const waits = new Waits();

  const authenticate = (req: Request): V2ApiKey => {
    const h = req.headers['x-token'];
    const token = Array.isArray(h) ? h[0] : h;
    if (!token) throw unauthorized('empty token');
    const given = Buffer.from(token);
    const key = Object.values(v2State(eng).apiKeys).find((k) => {
      const want = Buffer.from(k.token);
      return want.length === given.length && timingSafeEqual(want, given);
    });
    if (!key) throw unauthorized('invalid token');
    return key;
  };

  /** Wrap a handler (sync or async): authenticate, parse, run, commit the state, answer 200 or the section 7 body. */
  const handler = (fn: (ctx: Ctx) => unknown, auth: (req: Request) => V2ApiKey | undefined): RequestHandler => (req, res) => {
    void (async () => {
      let status = 200;
      let body: unknown;
      try {
        const key = auth(req);
        body = await fn({ req, params: req.params as Record<string, string>, body: parseJson(rawBody(req)), key: key! });
      } catch (err) {
        [status, body] = toErrorResponse(err);
      }
      try {
        await eng.store.commit();
      } catch (err) {
        [status, body] = toErrorResponse(new Error('state write failed'));
      }
      if (!res.headersSent && !res.destroyed) res.status(status).json(body);
    })();
  };
  const h = (fn: (ctx: Ctx) => unknown) => handler(fn, authenticate);

  const api = express.Router();
  api.get('/workspaces/:workspaceID/policies', h(({ params }) => ({ policies: Object.values(ws.checkWorkspace(eng, params.workspaceID).policies).map(ws.policyView) })));
  api.post('/workspaces/:workspaceID/policies', h(({ params, body }) => ws.createPolicy(eng, params.workspaceID, check<ws.PolicyInput>(policyBody, body))));
  api.put('/workspaces/:workspaceID/policies/:policyID', h(({ params, body, key }) => ws.updatePolicy(eng, params.workspaceID, params.policyID, check<ws.PolicyInput>(policyBody, body), key.id)));
  api.post('/workspaces/:workspaceID/accounts', h(({ params, body }) => ws.createAccount(eng, params.workspaceID, check<{ name: string; type?: 'standard' | 'exchange' }>(accountBody, body))));
  api.get('/workspaces/:workspaceID/accounts/:accountID', h(({ params }) => ws.accountView(eng, params.workspaceID, params.accountID)));
  api.post(
    '/workspaces/:workspaceID/accounts/:accountID/wallets',
    h(async ({ params, body }) => {
      const b = check<{ name: string; connectPlugin: 'defi' | 'wc'; policyID: string; waitForAddress?: number }>(walletBody, body);
      const w = ws.createWallet(eng, params.workspaceID, params.accountID, b);
      // Wait (real time) up to waitForAddress seconds for the key computation (business clock):
      // the answer comes as soon as the address is there, or with '' when the wait ends first.
      const deadline = Date.now() + (b.waitForAddress ?? 0) * 1000;
      await eng.store.commit();
      while (!waits.closed && businessMs(eng) < w.addressReadyAtMs && Date.now() < deadline) {
        await waits.sleep(Math.min(100, deadline - Date.now(), w.addressReadyAtMs - businessMs(eng)));
      }
      const view = ws.walletView(eng, w);
      return { walletID: view.walletID, address: view.address };
    }),
  );
  api.get('/workspaces/:workspaceID/accounts/:accountID/wallets/:walletID', h(({ params }) => ws.walletView(eng, ws.getWallet(eng, params.workspaceID, params.accountID, params.walletID))));
  api.get('/actions/:actionID', h(({ params }) => ws.actionView(ws.getAction(eng, params.actionID))));
  api.put('/actions/:actionID', h(({ params, key }) => ws.actionView(ws.decide(eng, params.actionID, key.id, true))));
  api.delete('/actions/:actionID', h(({ params, key }) => ws.actionView(ws.decide(eng, params.actionID, key.id, false))));
  api.all(
    '*',
    h(({ req }) => {
      throw notFound(`path: no route ${req.method} ${V2_PREFIX}${req.path} in the simulator`);
    }),
  );

  // The control endpoints' guard (loopback caller and Host, JSON POSTs), as the v1 control router's.
  const c = (fn: (ctx: Ctx) => unknown) =>
    handler(fn, (req) => {
      controlGuard(req);
      return undefined;
    });
  const control = express.Router();
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
  control.post('/actions/:actionID/approve', c(({ params, body }) => ws.actionView(ws.decide(eng, params.actionID, ws.humanMemberId(eng, check<{ user_id: string }>(userBody, body).user_id), true))));
  control.post('/actions/:actionID/reject', c(({ params, body }) => ws.actionView(ws.decide(eng, params.actionID, ws.humanMemberId(eng, check<{ user_id: string }>(userBody, body).user_id), false))));
  control.post('/wallets/:walletID/transactions', c(({ params }) => ws.actionView(ws.createTransaction(eng, params.walletID))));
  control.all(
    '*',
    c(({ req }) => {
      throw notFound(`path: no control endpoint ${req.method} ${V2_CONTROL_PREFIX}${req.path}`);
    }),
  );

  return { api, control, close: () => waits.close() };
}
