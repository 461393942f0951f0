/**
 * The simulator serves exactly lib's operations (lib/api/operations.ts): every operation of
 * API_OPERATIONS (v1 and v2) is a route of the simulator's routers, every route those routers
 * serve is an operation (or one of route-table.ts's EXTRA_OPERATIONS, the routes lib does not declare),
 * each answers over real sockets (no catch-all 404), and no API path is written in the
 * simulator's sources outside route-table.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError, CustodyClient, WorkspaceClient } from '../../lib';
import { operationsForRoute, API_OPERATIONS, routePattern, type ApiVersion, type ApiOperation } from '../../lib/api/operations';
import { Simulator } from '../../simulator';
import type { Authenticator } from '../../simulator/auth';
import { routerPath, type SimRouter } from '../../simulator/http';
import { apiRoutes, EXTRA_OPERATIONS } from '../../simulator/route-table';

type RegistryEntry = ApiOperation<string>;
const REGISTRY = API_OPERATIONS;
const EXTRA_ENTRIES: readonly RegistryEntry[] = Object.values(EXTRA_OPERATIONS);
const entriesForRoute = operationsForRoute;
/** An operation's key: its operationId. */
const entryKey = (e: RegistryEntry): string => e.id;
import { apiRouter } from '../../simulator/routes';
import { v2Service } from '../../simulator/v2/routes';

/** `METHOD /router/:path` of every route a router serves (its 404 fallback has no route). */
function served(router: SimRouter): string[] {
  const stack = (router as unknown as { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> }).stack;
  return stack.flatMap((l) => (l.route ? Object.keys(l.route.methods).map((m) => `${m.toUpperCase()} ${l.route!.path}`) : []));
}

/** The registry and extra entries a served route (`GET /company/:company_id`) stands for. */
function entriesOf(version: ApiVersion, route: string): RegistryEntry[] {
  const [method, p] = route.split(' ');
  const concrete = p.replace(/:\w+/g, 'probe-id');
  // the router matches with and without a trailing `/`, as a registry template may be written (`/funds/`).
  const matches = (e: RegistryEntry): boolean => e.version === version && e.spec.method === method && [concrete, `${concrete}/`].some((c) => routePattern(e.spec.path).test(c));
  return [...REGISTRY, ...EXTRA_ENTRIES].filter(matches);
}

describe('simulator routes come from the registry', function () {
  this.timeout(60000);
  let dataDir: string;
  let sim: Simulator;
  const routers: Record<ApiVersion, string[]> = { v1: [], v2: [] };

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-sim-registry-'));
    sim = await Simulator.start({ dataDir, port: 0, persist: false });
    // The routers as the simulator builds them; the authenticator is not called while routes are listed.
    routers.v1 = served(apiRouter(sim.engine, {} as Authenticator, false));
    const v2 = v2Service(sim.engine);
    routers.v2 = served(v2.api);
    v2.close();
  });

  after(async () => {
    await sim?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves every registry entry, v1 and v2', () => {
    const missing = REGISTRY.filter((e) => !routers[e.version].includes(`${e.spec.method} ${routerPath(e.spec.path)}`)).map(entryKey);
    assert.deepEqual(missing, []);
    assert.ok(routers.v1.length >= 45 && routers.v2.length >= 10, `${routers.v1.length} v1 and ${routers.v2.length} v2 routes`);
  });

  it('serves no API route without a registry entry (or an extra entry), and each route once', () => {
    for (const version of ['v1', 'v2'] as const) {
      const orphans = routers[version].filter((r) => entriesOf(version, r).length === 0);
      assert.deepEqual(orphans, [], `${version} routes without an entry`);
      assert.equal(new Set(routers[version]).size, routers[version].length, `${version}: a route registered twice`);
    }
    // The extras are few, named, and none of them shadows a registry entry.
    assert.deepEqual(EXTRA_ENTRIES.map(entryKey).sort(), ['getSweep', 'getSweepStatusByTxId', 'listAllLiquidityHub', 'rejectSwapTake', 'takeSwapWithTxId']);
    for (const e of EXTRA_ENTRIES) assert.deepEqual(entriesForRoute(e.version, e.spec.method, e.spec.path.replace(/\{\w+\}/g, 'probe-id')).filter((x) => x.spec.path === e.spec.path), [], entryKey(e));
  });

  it('tries a literal segment before an id where two routes could match one path', () => {
    const order = apiRoutes('v1').map((r) => `${r.method} ${r.path}`);
    assert.ok(order.indexOf('GET /company/search') < order.indexOf('GET /company/{company_id}'));
    assert.ok(order.indexOf('POST /coreclient/{client_id}/sweep/tx_id') < order.indexOf('POST /coreclient/{client_id}/sweep/{tx_id}'));
  });

  it('answers every entry over real sockets (no catch-all 404), signed or with x-token', async () => {
    const v1 = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, attempts: 1 });
    const v2 = new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: sim.v2.token, workspaceId: sim.v2.workspaceId });
    const ids: Record<string, string> = { company_id: 'demo-company', fund_id: 'demo-fund', wallet_id: 'demo-btc-testnet', client_id: 'demo-approver', workspaceID: sim.v2.workspaceId };
    try {
      for (const e of [...REGISTRY, ...EXTRA_ENTRIES]) {
        const p = e.spec.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(ids[name] ?? 'probe-id'));
        const body = e.spec.method === 'POST' || e.spec.method === 'PUT' ? {} : undefined;
        try {
          await (e.version === 'v2' ? v2 : v1).request(e.spec.method, p, { body });
        } catch (err) {
          assert.ok(err instanceof ApiError, `${entryKey(e)}: ${String(err)}`);
          const reason = String((err.detail as { reason?: string } | undefined)?.reason ?? '');
          assert.ok(!reason.startsWith('path: no route'), `${entryKey(e)}: ${e.spec.method} ${p}: ${reason}`);
        }
      }
    } finally {
      await v1.close();
      v2.close();
    }
  });

  it('writes no API path in the simulator sources outside route-table.ts', () => {
    const root = path.resolve(__dirname, '..', '..', '..', 'simulator');
    const files = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(path.join(dir, d.name)) : d.name.endsWith('.ts') ? [path.join(dir, d.name)] : []));
    const paths = new Set([...REGISTRY, ...EXTRA_ENTRIES].flatMap((e) => [e.spec.path, routerPath(e.spec.path)]));
    // Control endpoints are below /_simulator, not API paths, even where a name is the same.
    const notApi = new Set(['control.ts: /account']);
    const found: string[] = [];
    for (const f of files(root)) {
      if (path.basename(f) === 'route-table.ts') continue;
      // String literals only: comments may name the routes they document.
      const code = fs.readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/(['`])(\/[^'`$]*)\1/g)) if (paths.has(m[2])) found.push(`${path.relative(root, f)}: ${m[2]}`);
    }
    assert.deepEqual(found.filter((x) => !notApi.has(x)), []);
  });
});
