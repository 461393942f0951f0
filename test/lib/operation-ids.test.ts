/**
 * Operations by operationId (lib/api/operations.ts) and the palette that maps node types to them
 * (nodes/shared/palette.ts):
 * - an operationId is the OpenAPI's (partner-api-openapi.yaml) wherever the OpenAPI declares one
 *   for the same method and path (its operations kept in test/fixtures/openapi-operations.json); the others are camelCase
 *   verb and noun;
 * - the palette reaches every operationId exactly once, and each node type's operation names send
 *   the same calls (version, method, path, retry class) as the node tables did before operations
 *   were keyed by operationId, so saved flows (`operation: "create"`) load unchanged;
 * - the simulator's extra routes (simulator/route-table.ts) have ids of their own.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { API_OPERATIONS, OPERATIONS, apiOperation, type OperationId } from '../../lib/api/operations';
import { OPERATION_NODE_TYPES, PALETTE, paletteOperations, paletteVersion } from '../../nodes/shared/palette';
import { OPERATION_NODES } from '../../nodes/shared/editor-table';
import { EXTRA_OPERATIONS } from '../../simulator/route-table';

/**
 * The operations of the published OpenAPI description, as a fixture in this repository
 * (test/fixtures/openapi-operations.json: method, path template, operationId where it names one),
 * so the check runs on any clone.
 */
const FIXTURE = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'openapi-operations.json');

/**
 * The OpenAPI description itself, when this machine has it (`CUSTODYFLOW_OPENAPI`, else
 * `../shared/reference/` beside the repository): the fixture is checked against it.
 */
const OPENAPI = process.env.CUSTODYFLOW_OPENAPI || path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'reference', 'partner-api-openapi.yaml');

/** One operation of the OpenAPI: method, path template, operationId (absent when it has none). */
interface OpenApiOperation {
  method: string;
  path: string;
  operationId?: string;
}

/** The operations under `paths` of an OpenAPI YAML document, read with js-yaml. */
function openApiOperations(file: string): OpenApiOperation[] {
  const doc = yaml.load(fs.readFileSync(file, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ['get', 'post', 'put', 'delete', 'patch'].includes(m))
      .map(([m, o]) => ({ method: m.toUpperCase(), path: p, ...(o.operationId ? { operationId: o.operationId } : {}) })),
  );
}

/** The fixture's operations. */
function fixtureOperations(): OpenApiOperation[] {
  return (JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as { operations: OpenApiOperation[] }).operations;
}

/** A template with its ids as `{}`, to compare routes whatever the ids are named. */
const route = (method: string, template: string) => `${method} ${template.replace(/\{\w+\}/g, '{}').replace(/(.)\/$/, '$1')}`;

/** The node tables as they were before operations were keyed by operationId: `<type> <operation> <version> <method> <path> <retry>`. */
const NODE_TABLES_BEFORE = [
  'custody-assets assets v1 GET /assets read',
  'custody-assets fee v1 POST /fees read',
  'custody-company create v1 POST /company sendOnce',
  'custody-company get v1 GET /company/{company_id} read',
  'custody-company update v1 PUT /company/{company_id} read',
  'custody-company search v1 GET /company/search read',
  'custody-trusted-party add v1 POST /company/{company_id}/trustedparty sendOnce',
  'custody-trusted-party list v1 GET /company/{company_id}/trustedparty read',
  'custody-trusted-party remove v1 DELETE /company/{company_id}/trustedparty/{trustedparty_id} sendOnce',
  'custody-fund createFund v1 POST /company/{company_id}/fund sendOnce',
  'custody-fund addWallet v1 POST /company/{company_id}/fund/{fund_id}/wallet sendOnce',
  'custody-fund getFund v1 GET /company/{company_id}/fund/{fund_id} read',
  'custody-fund getWallet v1 GET /wallet/{wallet_id} read',
  'custody-fund walletHistory v1 GET /wallet/{wallet_id}/history read',
  'custody-fund deposits v1 GET /company/{company_id}/fund/{fund_id}/deposit read',
  'custody-fund ledger v1 GET /company/{company_id}/fund/{fund_id}/ledger read',
  'custody-fund holdings v1 GET /company/{company_id}/holding read',
  'custody-fund addWhitelist v1 POST /company/{company_id}/fund/{fund_id}/whitelist sendOnce',
  'custody-fund listWhitelist v1 GET /company/{company_id}/fund/{fund_id}/whitelist read',
  'custody-transfer create v1 POST /company/{company_id}/transfer deduped',
  'custody-transfer get v1 GET /company/{company_id}/transfer/{tx_id} read',
  'custody-core-client create v1 POST /coreclient sendOnce',
  'custody-core-client list v1 GET /coreclient read',
  'custody-core-client actions v1 GET /coreclient/{client_id}/actions read',
  'custody-core-client action v1 GET /coreclient/{client_id}/action/{action_id} read',
  'custody-core-client wallets v1 GET /coreclient/{client_id}/wallets read',
  'custody-action approve v1 PUT /coreclient/{client_id}/action/{action_id} sendOnce',
  'custody-action reject v1 DELETE /coreclient/{client_id}/action/{action_id} sendOnce',
  'custody-withdraw create v1 POST /company/{company_id}/withdraw deduped',
  'custody-withdraw get v1 GET /company/{company_id}/withdraw/{tx_id} read',
  'custody-swap-make make v1 POST /company/{company_id}/atomicswap/make deduped',
  'custody-swap-make get v1 GET /company/{company_id}/atomicswap/make/{tx_id} read',
  'custody-swap-make cancel v1 DELETE /company/{company_id}/atomicswap/make/{tx_id} sendOnce',
  'custody-swap-take take v1 POST /company/{company_id}/atomicswap/take deduped',
  'custody-swap-take get v1 GET /company/{company_id}/atomicswap/take/{tx_id} read',
  'custody-liquidity-hub publish v1 POST /company/{company_id}/liquidityhub sendOnce',
  'custody-liquidity-hub list v1 GET /company/{company_id}/liquidityhub read',
  'custody-liquidity-hub approveTake v1 PUT /company/{company_id}/action/{action_id} sendOnce',
  'custody-sweep exchanges v1 GET /exchanges read',
  'custody-sweep start v1 POST /coreclient/{client_id}/sweep deduped',
  'custody-sweep status v1 POST /coreclient/{client_id}/sweep/tx_id read',
  'custody-read account v1 GET /account read',
  'custody-read balance v1 GET /balance read',
  'custody-read funds v1 GET /funds/ read',
  'custody-read fund v1 GET /funds/{fund_id} read',
  'custody-read fundLedger v1 GET /funds/{fund_id}/ledger read',
  'custody-read trustedParties v1 GET /trustedparties read',
  'custody-read walletHistory v1 GET /wallets/{wallet_id}/history read',
  'custody-policy list v2 GET /workspaces/{workspaceID}/policies read',
  'custody-policy create v2 POST /workspaces/{workspaceID}/policies sendOnce',
  'custody-policy update v2 PUT /workspaces/{workspaceID}/policies/{policyID} sendOnce',
  'custody-policy getAction v2 GET /actions/{actionID} read',
  'custody-policy approveAction v2 PUT /actions/{actionID} sendOnce',
  'custody-policy rejectAction v2 DELETE /actions/{actionID} sendOnce',
  'custody-portfolio create v2 POST /workspaces/{workspaceID}/accounts sendOnce',
  'custody-portfolio createWallet v2 POST /workspaces/{workspaceID}/accounts/{accountID}/wallets sendOnce',
  'custody-portfolio get v2 GET /workspaces/{workspaceID}/accounts/{accountID} read',
  'custody-portfolio getWallet v2 GET /workspaces/{workspaceID}/accounts/{accountID}/wallets/{walletID} read',
];

describe('operations by operationId', () => {
  it('an operationId is the OpenAPI one wherever the OpenAPI names the same method and path; the others are camelCase verb and noun', () => {
    const openApi = fixtureOperations();
    assert.ok(openApi.length >= 50, `${openApi.length} OpenAPI operations read`);
    const named = new Map(openApi.filter((o) => o.operationId).map((o) => [route(o.method, o.path), o.operationId!]));
    assert.ok(named.size >= 5, `${named.size} OpenAPI operationIds read`);
    const ours = [...API_OPERATIONS, ...Object.values(EXTRA_OPERATIONS)];
    const taken: string[] = [];
    for (const o of ours) {
      const theirs = named.get(route(o.spec.method, o.spec.path));
      if (theirs) {
        assert.equal(o.id, theirs, `${o.spec.method} ${o.spec.path}: the OpenAPI's operationId`);
        taken.push(o.id);
      } else {
        assert.match(o.id, /^[a-z]+(?:[A-Z][a-z0-9]*)+$/, `${o.spec.method} ${o.spec.path}: ${o.id} is camelCase verb and noun`);
      }
    }
    // The OpenAPI names five operations, none of them a route the pack sends or serves (the
    // automated approver's /coreclient/feed and /coreclient/action/{action_id}, the wallet policy):
    // a route added for one of them must take its id.
    const served = new Set(ours.map((o) => route(o.spec.method, o.spec.path)));
    assert.deepEqual(taken, []);
    assert.deepEqual([...named].filter(([r]) => !served.has(r)).map(([, id]) => id).sort(), [
      'delete-coreclient-action-action_id',
      'get-coreclient-action-action_id',
      'get-coreclient-feed',
      'put-coreclient-action-action_id',
      'update-wallet-policy',
    ]);
  });

  it('the fixture of the OpenAPI operations is what the OpenAPI description holds (where this machine has it)', function () {
    if (!fs.existsSync(OPENAPI)) this.skip();
    assert.deepEqual(fixtureOperations(), openApiOperations(OPENAPI));
  });

  it('one operation per route and id, lib and the simulator extras together', () => {
    const ours = [...API_OPERATIONS, ...Object.values(EXTRA_OPERATIONS)];
    const ids = ours.map((o) => o.id);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    const routes = ours.map((o) => `${o.version} ${route(o.spec.method, o.spec.path)}`);
    assert.equal(new Set(routes).size, routes.length, 'one operation per route');
    assert.equal(API_OPERATIONS.length, Object.keys(OPERATIONS).length);
    for (const o of API_OPERATIONS) assert.equal(apiOperation(o.id), o);
  });

  it('the palette reaches every operationId exactly once, with the calls of the node tables before', () => {
    const reached = OPERATION_NODE_TYPES.flatMap((type) => Object.values(paletteOperations(type)));
    assert.deepEqual([...reached].sort(), (Object.keys(OPERATIONS) as OperationId[]).sort(), 'every operationId, once');
    const now = OPERATION_NODE_TYPES.flatMap((type) =>
      Object.entries(paletteOperations(type)).map(([name, id]) => {
        const o = apiOperation(id);
        return `${type} ${name} ${o.version} ${o.spec.method} ${o.spec.path} ${o.retry}`;
      }),
    );
    assert.deepEqual(now, NODE_TABLES_BEFORE);
  });

  it('each node type speaks one API version, and the editor table has exactly the palette node types', () => {
    for (const type of OPERATION_NODE_TYPES) paletteVersion(type);
    assert.deepEqual(Object.keys(OPERATION_NODES).sort(), Object.keys(PALETTE).sort());
    // Every name of the Operation select sends a palette operation (or is the `resolve` look-up).
    for (const type of OPERATION_NODE_TYPES) {
      const table = OPERATION_NODES[type];
      for (const [name, op] of Object.entries(table.operations)) {
        if (table.resolve && name === 'resolve') continue;
        assert.ok(paletteOperations(type)[op.spec ?? name], `${type} ${name}`);
      }
    }
  });
});
