/**
 * The API routes the simulator serves, as data: every operation of lib's `OPERATIONS`
 * (lib/api/operations.ts, v1 and v2) and the few routes the simulator serves beyond it
 * ({@link EXTRA_OPERATIONS}), one route per operationId, in the order a router must try them.
 * routes.ts and v2/routes.ts give each exactly one handler, in a record keyed by operationId
 * ({@link OperationHandlers} in http.ts); no API path is written anywhere else in the simulator.
 */
import { API_OPERATIONS, apiOperation, routePattern, type ApiOperation, type ApiVersion, type OperationId, type OperationIdOf } from '../lib/api/operations';
import type { OperationSpec } from '../lib/api/spec';

/** An operation like `base`'s with another operationId and the given declaration fields changed. */
function variant<const Id extends string>(id: Id, base: OperationId, change: Partial<OperationSpec> & { source: string }): ApiOperation<Id> {
  const b = apiOperation(base);
  return { ...b, id, spec: { ...b.spec, ...change } };
}

const sweepPath = apiOperation('startSweep').spec.path;

/**
 * Routes the simulator serves that lib does not declare (no node sends them), in the form of lib's
 * operations so that lib can take them over unchanged; they are the one place that adds API
 * routes. Each is a variant of a lib operation (all v1):
 * - `takeSwapWithTxId`: POST take with a trailing tx_id (spec section 4: "written both with and
 *   without a trailing tx_id"; swap_id in the body rules);
 * - `listAllLiquidityHub`: GET /liquidityhub, every quote of the hub (OpenAPI `/liquidityhub`);
 * - `rejectSwapTake`: DELETE /company/{company_id}/action/{action_id}, the maker's rejection of a
 *   taker's swap action (simulator; the counterpart of `approveSwapTake`);
 * - `getSweep`: GET /coreclient/{client_id}/sweep/{tx_id} (OpenAPI);
 * - `getSweepStatusByTxId`: POST /coreclient/{client_id}/sweep/{tx_id} with the id in the path (the
 *   spec's literal `.../sweep/tx_id` is `getSweepStatus`).
 */
export const EXTRA_OPERATIONS = {
  takeSwapWithTxId: variant('takeSwapWithTxId', 'takeSwap', { path: `${apiOperation('takeSwap').spec.path}/{tx_id}`, source: 'spec section 4: the take written with a trailing tx_id; OpenAPI /company/{company_id}/atomicswap/take/{tx_id}' }),
  listAllLiquidityHub: variant('listAllLiquidityHub', 'listLiquidityHub', { path: '/liquidityhub', source: 'OpenAPI GET /liquidityhub' }),
  rejectSwapTake: variant('rejectSwapTake', 'approveSwapTake', { method: 'DELETE', source: "simulator: the maker rejects a taker's swap action" }),
  getSweep: variant('getSweep', 'getSweepStatus', { method: 'GET', path: `${sweepPath}/{tx_id}`, body: undefined, source: 'OpenAPI GET /coreclient/{client_id}/sweep/{tx_id}' }),
  getSweepStatusByTxId: variant('getSweepStatusByTxId', 'getSweepStatus', { path: `${sweepPath}/{tx_id}`, body: undefined, source: 'simulator: the sweep status with the tx_id in the path' }),
} as const;

/** The operationId of a route the simulator serves beyond lib's: a key of {@link EXTRA_OPERATIONS}. */
export type ExtraOperationId = keyof typeof EXTRA_OPERATIONS;

/** The operationIds the simulator serves in one API version: lib's, and for v1 the extras. */
export type SimOperationId<V extends ApiVersion> = OperationIdOf<V> | (V extends 'v1' ? ExtraOperationId : never);

/** Every operation the simulator serves: lib's, then the extras. */
export const SIM_OPERATIONS: readonly ApiOperation<OperationId | ExtraOperationId>[] = [...API_OPERATIONS, ...Object.values(EXTRA_OPERATIONS)];

/** One route: a method and path template, and the one operation served there. */
export interface ApiRoute {
  method: OperationSpec['method'];
  /** Path template below the version prefix, `{ids}` in braces. */
  path: string;
  /** The operation of this route. */
  operation: ApiOperation<OperationId | ExtraOperationId>;
}

/** The segments of a template as 0 (literal) or 1 (`{id}`): a literal segment is tried before an id. */
function specificity(path: string): number[] {
  return path.split('/').filter(Boolean).map((s) => (/^\{\w+\}$/.test(s) ? 1 : 0));
}

function compareSpecificity(a: string, b: string): number {
  const x = specificity(a);
  const y = specificity(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/**
 * Every route of one API version, in the order a router must try them: where two templates could
 * match one path, the one with a literal segment at the first place they differ comes first
 * (`/company/search` before `/company/{company_id}`); else {@link SIM_OPERATIONS} order.
 * @throws {Error} when two operations share a route (same method, same template up to the names of
 *   its ids): one route is one operation.
 */
export function apiRoutes(version: ApiVersion): ApiRoute[] {
  const routes = new Map<string, ApiRoute>();
  for (const o of SIM_OPERATIONS) {
    if (o.version !== version) continue;
    const key = `${o.spec.method} ${o.spec.path.replace(/\{\w+\}/g, '{}').replace(/\/$/, '')}`;
    const other = routes.get(key);
    if (other) throw new Error(`simulator: ${version} ${key} is declared by ${other.operation.id} and ${o.id}`);
    routes.set(key, { method: o.spec.method, path: o.spec.path, operation: o });
  }
  return [...routes.values()].sort((a, b) => compareSpecificity(a.path, b.path));
}

/**
 * The operation a request of `method` to `path` (below the version prefix) is routed to, as the
 * router tries them ({@link apiRoutes} order; with or without a trailing `/`), or undefined.
 * For answers given before the route runs (a refused authentication), so they are checked too.
 */
export function routeOperation(version: ApiVersion, method: string, path: string): ApiOperation<OperationId | ExtraOperationId> | undefined {
  const candidates = path.endsWith('/') ? [path, path.slice(0, -1)] : [path, `${path}/`];
  return apiRoutes(version).find((r) => r.method === method && candidates.some((c) => routePattern(r.path).test(c)))?.operation;
}
