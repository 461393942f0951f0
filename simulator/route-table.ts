/**
 * The API routes the simulator serves, as data: every operation of lib's {@link REGISTRY} (v1 and
 * v2) and the few routes the simulator serves beyond it ({@link EXTRA_ENTRIES}), grouped by
 * route (method and path template) in the order a router must try them. routes.ts and
 * v2/routes.ts register exactly these routes, each with one handler keyed by {@link entryKey};
 * no API path is written anywhere else in the simulator.
 */
import { REGISTRY, registryEntry, routePattern, type ApiVersion, type RegistryEntry } from '../lib/api/registry';
import type { OperationSpec } from '../lib/api/spec';

/** `node.operation`, the key of a handler: `custody-transfer.create`. */
export function entryKey(e: Pick<RegistryEntry, 'node' | 'operation'>): string {
  return `${e.node}.${e.operation}`;
}

/** An entry like `base` with another operation name and the given declaration fields changed. */
function variant(base: RegistryEntry, operation: string, change: Partial<OperationSpec> & { source: string }): RegistryEntry {
  return { ...base, operation, spec: { ...base.spec, ...change } };
}

const take = registryEntry('custody-swap-take', 'take');
const sweepStart = registryEntry('custody-sweep', 'start');
const sweepStatus = registryEntry('custody-sweep', 'status');
const hubList = registryEntry('custody-liquidity-hub', 'list');
const approveTake = registryEntry('custody-liquidity-hub', 'approveTake');

/**
 * Routes the simulator serves that lib's registry does not declare (no node sends them), in
 * registry-entry form so that lib can take them over unchanged; until then they are the one place
 * that adds API routes. Each is a variant of a registry entry where it can be:
 * - `custody-swap-take.takeWithTxId`: POST take with a trailing tx_id (spec section 4: "written
 *   both with and without a trailing tx_id"; swap_id in the body rules);
 * - `custody-liquidity-hub.listAll`: GET /liquidityhub, every quote of the hub (OpenAPI `/liquidityhub`);
 * - `custody-liquidity-hub.rejectTake`: DELETE /company/{company_id}/action/{action_id}, the
 *   maker's rejection of a taker's swap action (simulator; the counterpart of approveTake);
 * - `custody-sweep.getStatus`: GET /coreclient/{client_id}/sweep/{tx_id} (OpenAPI);
 * - `custody-sweep.statusByTxId`: POST /coreclient/{client_id}/sweep/{tx_id} with the id in the
 *   path (the spec's literal `.../sweep/tx_id` is `custody-sweep.status`).
 */
export const EXTRA_ENTRIES: readonly RegistryEntry[] = [
  variant(take, 'takeWithTxId', { path: `${take.spec.path}/{tx_id}`, source: 'spec section 4: the take written with a trailing tx_id; OpenAPI /company/{company_id}/atomicswap/take/{tx_id}' }),
  variant(hubList, 'listAll', { path: '/liquidityhub', source: 'OpenAPI GET /liquidityhub' }),
  variant(approveTake, 'rejectTake', { method: 'DELETE', source: "simulator: the maker rejects a taker's swap action" }),
  variant(sweepStatus, 'getStatus', { method: 'GET', path: `${sweepStart.spec.path}/{tx_id}`, body: undefined, source: 'OpenAPI GET /coreclient/{client_id}/sweep/{tx_id}' }),
  variant(sweepStatus, 'statusByTxId', { path: `${sweepStart.spec.path}/{tx_id}`, body: undefined, source: 'simulator: the sweep status with the tx_id in the path' }),
];

/** One route: a method and path template, and the entries declaring it (several when they share it). */
export interface ApiRoute {
  method: RegistryEntry['spec']['method'];
  /** Path template below the version prefix, `{ids}` in braces. */
  path: string;
  /** Registry entries (and {@link EXTRA_ENTRIES}) of this route, registry first. */
  entries: RegistryEntry[];
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
 * Every route of one API version, entries sharing a route (same method, same template up to the
 * names of its ids) grouped, in the order a router must try them: where two templates could
 * match one path, the one with a literal segment at the first place they differ comes first
 * (`/company/search` before `/company/{company_id}`); else registry order.
 */
export function apiRoutes(version: ApiVersion): ApiRoute[] {
  const routes = new Map<string, ApiRoute>();
  for (const e of [...REGISTRY, ...EXTRA_ENTRIES]) {
    if (e.version !== version) continue;
    const key = `${e.spec.method} ${e.spec.path.replace(/\{\w+\}/g, '{}').replace(/\/$/, '')}`;
    const route = routes.get(key);
    if (route) route.entries.push(e);
    else routes.set(key, { method: e.spec.method, path: e.spec.path, entries: [e] });
  }
  return [...routes.values()].sort((a, b) => compareSpecificity(a.path, b.path));
}

/**
 * The entry a request of `method` to `path` (below the version prefix) is routed to, as the
 * router tries them ({@link apiRoutes} order; with or without a trailing `/`), or undefined.
 * For answers given before the route runs (a refused authentication), so they are checked too.
 */
export function routeEntry(version: ApiVersion, method: string, path: string): RegistryEntry | undefined {
  const candidates = path.endsWith('/') ? [path, path.slice(0, -1)] : [path, `${path}/`];
  return apiRoutes(version).find((r) => r.method === method && candidates.some((c) => routePattern(r.path).test(c)))?.entries[0];
}
