/**
 * The "Spec coverage" table (docs/spec-coverage.md), checked row by row against the running parts:
 * - the node's operation, as a real Node-RED runtime serves it to the editor
 *   (`GET <admin>/custody/operations/<type>`, built from the declarations the runtime sends), sends
 *   exactly the row's call;
 * - the simulator (started here, over real sockets, signed or with `x-token`) has a route for it:
 *   the answer may be anything but the catch-all "no route" 404.
 * Every row of spec section 4 must be in the table: the test also counts them per group.
 */
import '../helpers/isolated-dirs';
import '../helpers/red-catalogs';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { Simulator } from '../../simulator';
import { ApiError, CustodyClient, WorkspaceClient } from '../../lib';
import { readSpecCoverageTable, type SpecCoverageRow } from '../helpers/readme-table';

helper.init(require.resolve('node-red'));

/** One row of the "Spec coverage" table (docs/spec-coverage.md). */
type Row = SpecCoverageRow;

/** The rows of the "Spec coverage" table in docs/spec-coverage.md. */
const readTable = readSpecCoverageTable;

/** Every node module that has operations. */
const OPERATION_NODES = [
  'custody-assets',
  'custody-company',
  'custody-trusted-party',
  'custody-fund',
  'custody-transfer',
  'custody-withdraw',
  'custody-swap-make',
  'custody-swap-take',
  'custody-liquidity-hub',
  'custody-core-client',
  'custody-action',
  'custody-sweep',
  'custody-read',
  'custody-policy',
  'custody-portfolio',
];

describe('spec coverage: the docs/spec-coverage.md table against the runtime and the simulator', function () {
  this.timeout(60000);
  const rows = readTable();
  let dataDir: string;
  let sim: Simulator;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-coverage-'));
    sim = await Simulator.start({ dataDir, port: 0, persist: false });
    const modules = [require('../../nodes/custody-config/custody-config'), ...OPERATION_NODES.map((t) => require(`../../nodes/${t}/${t}`))];
    await helper.load(modules, [{ id: 'tab', type: 'tab', label: 'coverage' }]);
  });

  after(async () => {
    await helper.unload();
    await sim?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists every endpoint of spec section 4 once (43 v1 rows, 5 v2 rows)', () => {
    const specs = rows.map((r) => `${r.spec}`);
    assert.equal(new Set(specs).size, specs.length, 'a spec endpoint is listed twice');
    assert.equal(rows.filter((r) => r.simulator.includes('/api/v1/p/')).length, 43);
    assert.equal(rows.filter((r) => r.simulator.includes('/api/v2/')).length, 5);
  });

  it("each row's node operation sends exactly the row's call", async () => {
    const described = new Map<string, Record<string, { call: string }>>();
    for (const type of new Set(rows.map((r) => r.node))) {
      const res = await helper.request().get(`/custody/operations/${type}`).expect(200);
      described.set(type, res.body);
    }
    for (const r of rows) {
      const op = described.get(r.node)?.[r.operation];
      assert.ok(op, `${r.node} has no operation ${r.operation}`);
      assert.equal(op.call.split('?')[0], r.call, `${r.node} ${r.operation}`);
    }
  });

  it("the simulator answers each row's route (no catch-all 404)", async () => {
    const v1 = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, attempts: 1 });
    const v2 = new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: sim.v2.token, workspaceId: sim.v2.workspaceId });
    // Demo ids where the demo has them; made-up ids elsewhere (a "not found" is still a route).
    const ids: Record<string, string> = {
      company_id: 'demo-company',
      fund_id: 'demo-fund',
      wallet_id: 'demo-btc-testnet',
      client_id: 'demo-approver',
      workspaceID: sim.v2.workspaceId,
      tx_id: 'coverage-probe',
      action_id: 'coverage-probe',
      trustedparty_id: 'coverage-probe',
      policyID: 'coverage-probe',
      accountID: 'coverage-probe',
    };
    try {
      for (const r of rows) {
        const [method, route] = r.simulator.split(' ');
        assert.equal(method, r.method, `${r.spec}: the simulator route's method`);
        const isV2 = route.startsWith('/api/v2/');
        const relative = route.replace(/^\/api\/v(1\/p|2)/, '').replace(/\{(\w+)\}/g, (_m, name: string) => {
          assert.ok(ids[name], `no probe id for {${name}}`);
          return encodeURIComponent(ids[name]);
        });
        const body = method === 'POST' || method === 'PUT' ? {} : undefined;
        let reason = '';
        try {
          await (isV2 ? v2 : v1).request(r.method, relative, { body });
        } catch (err) {
          assert.ok(err instanceof ApiError, `${r.spec}: ${String(err)}`);
          reason = String((err.detail as { reason?: string } | undefined)?.reason ?? '');
          assert.ok(err.statusCode !== 404 || !reason.startsWith('path: no route'), `${r.spec}: the simulator has no route (${reason})`);
        }
      }
    } finally {
      await v1.close();
      v2.close();
    }
  });
});
