/**
 * Stored node properties and their migrations (docs/architecture.md "Stored node properties and
 * migrations", nodes/shared/migrate.ts): the chain as pure functions (each step, the version
 * stamped, idempotence at the latest version, a later version left as it is, the input never
 * changed), and in the real Node-RED runtime (node-red-node-test-helper, a counting server for the
 * API): a node saved in each old shape sends exactly what the same node saved in the new shape
 * sends, and one stored by a later release is read as it is, with a warning.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import { SCHEMA_VERSION_PROPERTY, latestVersion, migrate, migrationsOf, requestTypes, storedVersion, typeUntypedProperties, type StoredProperties } from '../../nodes/shared/migrate';
import { FIELD_TYPES, OPERATION_NODES, fieldOf, typedFieldDefaults } from '../../nodes/shared/editor-table';
import type { OperationNodeType } from '../../nodes/shared/palette';
import { CountingServer } from '../helpers/counting-server';
import { Inbox, loadCollecting, operationFlow, sendAndWait } from '../helpers/node-flows';
import { redNodes, useCountingServer, useHelperServer } from '../helpers/red-setup';

const table = typedFieldDefaults();
const run = (type: string, stored: StoredProperties) => migrate(type, stored, table);

describe('the migrations of stored node properties (nodes/shared/migrate.ts)', () => {
  it('the table has every operation node, each TypedInput property with its field\'s first type; custom rows are left out', () => {
    assert.deepEqual(Object.keys(table).sort(), Object.keys(OPERATION_NODES).sort());
    for (const type of Object.keys(OPERATION_NODES) as OperationNodeType[]) {
      for (const property of OPERATION_NODES[type].fields) {
        const f = fieldOf(type, property);
        assert.equal(table[type][property], f.custom ? undefined : FIELD_TYPES[f.kind][0], `${type} ${property}`);
      }
    }
    assert.equal(table['custody-policy'].threshold, 'num');
    assert.equal(table['custody-policy'].adminLocked, 'bool');
    assert.equal(table['custody-policy'].members, undefined);
  });

  it('each node type with TypedInputs has one migration (version 1); the others none, and store no version', () => {
    for (const type of [...Object.keys(OPERATION_NODES), 'custody-request', 'custody-coreclient-feed', 'custody-approver', 'custody-review', 'custody-track']) {
      assert.equal(latestVersion(type, table), 1, type);
    }
    for (const type of ['custody-config', 'custody-hub-feed', 'custody-wallets-feed', 'inject']) {
      const stored = { type, name: 'x' };
      const m = run(type, stored);
      assert.equal(m.stored, stored, type);
      assert.equal(m.latest, 0);
      assert.equal(SCHEMA_VERSION_PROPERTY in m.stored, false);
    }
  });

  it('operation nodes 0 -> 1: a property saved without <property>Type gets the type its text was read as; a typed one stays', () => {
    const stored = { type: 'custody-transfer', operation: 'create', company_id: ' c1 ', wallet_id: '', sendAmount: null, tx_idType: 'msg', tx_id: 'payload.tx' };
    const before = JSON.stringify(stored);
    const m = run('custody-transfer', stored);
    assert.equal(JSON.stringify(stored), before, 'the input is not changed');
    assert.deepEqual([m.from, m.to, m.latest], [0, 1, 1]);
    assert.equal(m.stored.schemaVersion, 1);
    assert.equal(m.stored.company_id, ' c1 ', 'the text stays (the reader trims it, as before)');
    assert.equal(m.stored.company_idType, 'str');
    assert.equal(m.stored.wallet_idType, 'str');
    assert.equal(m.stored.sendAmount, '', 'null: empty');
    assert.equal(m.stored.sendAmountType, 'str');
    assert.equal(m.stored.tx_idType, 'msg', 'a typed property stays');
    assert.equal(m.stored.tx_id, 'payload.tx');
    // A v2 node: numbers and yes/no fields get num and bool, their stored values as they are.
    const policy = run('custody-policy', { type: 'custody-policy', operation: 'create', threshold: '2', adminLocked: true, allowDuplicates: false }).stored;
    assert.deepEqual([policy.thresholdType, policy.threshold, policy.adminLockedType, policy.adminLocked, policy.allowDuplicatesType], ['num', '2', 'bool', true, 'bool']);
    assert.equal(policy.membersType, undefined, 'a custom row is no TypedInput');
  });

  it('custody-request 0 -> 1: empty method reads msg.method, a method is str, path str, body payload or none', () => {
    const cases: Array<[StoredProperties, StoredProperties]> = [
      [{ method: '', path: '', body: 'payload' }, { method: 'method', methodType: 'msg', path: '', pathType: 'str', body: 'payload', bodyType: 'msg' }],
      [{ method: 'POST', path: '/company', body: 'none' }, { method: 'POST', methodType: 'str', path: '/company', pathType: 'str', body: '', bodyType: 'none' }],
      [{}, { method: 'method', methodType: 'msg', path: '', pathType: 'str', body: 'payload', bodyType: 'msg' }],
      [{ method: 'GET', methodType: 'str', path: 'p', pathType: 'flow', body: '{}', bodyType: 'json' }, { method: 'GET', methodType: 'str', path: 'p', pathType: 'flow', body: '{}', bodyType: 'json' }],
    ];
    for (const [stored, expected] of cases) assert.deepEqual(requestTypes(stored), expected, JSON.stringify(stored));
    assert.equal(run('custody-request', { type: 'custody-request', method: 'PUT' }).stored.schemaVersion, 1);
  });

  it('the core client id settings 0 -> 1: str; the core client feed\'s details on when absent, kept when set', () => {
    for (const [type, property] of [['custody-approver', 'clientId'], ['custody-review', 'clientId'], ['custody-track', 'client_id'], ['custody-coreclient-feed', 'clientId']]) {
      const m = run(type, { type, [property]: 'cc1' }).stored;
      assert.equal(m[`${property}Type`], 'str', type);
      assert.equal(m[property], 'cc1');
      assert.equal(run(type, { type, [property]: 'CLIENT', [`${property}Type`]: 'env' }).stored[`${property}Type`], 'env', `${type}: typed stays`);
    }
    assert.equal(run('custody-coreclient-feed', { type: 'custody-coreclient-feed' }).stored.details, true);
    assert.equal(run('custody-coreclient-feed', { type: 'custody-coreclient-feed', details: false }).stored.details, false);
  });

  it('idempotent: at the latest version nothing runs (the same object back), and each step run twice gives what it gave once', () => {
    for (const type of [...Object.keys(OPERATION_NODES), 'custody-request', 'custody-coreclient-feed', 'custody-approver', 'custody-review', 'custody-track']) {
      const once = run(type, { type, operation: 'x', method: '', body: 'none' }).stored;
      const twice = run(type, once);
      assert.equal(twice.stored, once, `${type}: at the latest version, left as it is`);
      assert.deepEqual([twice.from, twice.to], [1, 1]);
      for (const step of migrationsOf(type, table)) assert.deepEqual(step(step(once)), step(once), `${type}: a step is idempotent`);
    }
    assert.deepEqual(typeUntypedProperties({ a: 'str' })({ a: 'x', aType: 'env' }), { a: 'x', aType: 'env' });
  });

  it('a version above the latest (saved by a later release) is left as it is; anything but a whole number of 0 or more (or its text) is version 0', () => {
    const later = { type: 'custody-fund', schemaVersion: 7, company_id: 'c1' };
    const m = run('custody-fund', later);
    assert.equal(m.stored, later, 'left as it is');
    assert.deepEqual([m.from, m.to, m.latest], [7, 7, 1]);
    for (const v of ['x', '', '-1', '1.5', -1, 1.5, null, undefined, true]) assert.equal(storedVersion({ schemaVersion: v }), 0, String(v));
    assert.equal(storedVersion({ schemaVersion: '1' }), 1, 'the decimal text a dialog saves');
    assert.equal(storedVersion({ schemaVersion: 2 }), 2);
    assert.equal(run('custody-fund', { type: 'custody-fund', schemaVersion: 'x', company_id: 'c1' }).stored.company_idType, 'str', 'not a version: 0, migrated');
    const fromDialog = { type: 'custody-fund', schemaVersion: '1', company_id: 'c1', company_idType: 'env' };
    assert.equal(run('custody-fund', fromDialog).stored, fromDialog, 'at the latest, as text: left as it is');
  });
});

describe('a node saved in an old shape, in the Node-RED runtime: it sends what the new shape sends', function () {
  this.timeout(60000);
  const nodeModules = redNodes(['custody-config', 'custody-fund', 'custody-transfer', 'custody-request']);
  const server = new CountingServer();
  const { creds } = useCountingServer(server);
  useHelperServer();
  const inbox: Inbox = new Map();
  let runs = 0;

  /** Load `props` as node `op` of `type`, send each msg; what reached the server (GET /assets left out) and how each msg ended. */
  async function behaviour(type: string, props: Record<string, unknown>, msgs: Array<Record<string, unknown>>): Promise<{ sent: string[]; ends: string[] }> {
    await helper.unload();
    await loadCollecting(nodeModules, operationFlow(type, props, { environment: 'custom', baseUrl: server.baseUrl }), creds, inbox, ['out', 'caught']);
    server.seen.length = 0;
    const ends: string[] = [];
    // A payment key is fresh per run (the submission journal would answer a repeated one itself), named KEY in what is compared.
    const key = `key-${process.pid}-${++runs}`;
    for (const msg of msgs) {
      const copy = structuredClone(msg) as { payload?: Record<string, unknown> };
      if (copy.payload?.partner_txID === 'KEY') copy.payload.partner_txID = key;
      const r = await sendAndWait(inbox, copy);
      ends.push(r.caught ? `caught ${r.caught.error?.code} ${r.caught.error?.message}` : `out ${r.out.statusCode}`);
    }
    const sent = server.seen.filter((s) => !/\/assets\/?(\?|$)/.test(s.url)).map((s) => `${s.method} ${s.url} ${s.body}`.split(key).join('KEY'));
    return { sent, ends };
  }

  const cases: Array<{ name: string; type: string; old: Record<string, unknown>; current: Record<string, unknown>; msgs: Array<Record<string, unknown>>; expected: string[] }> = [
    {
      name: 'custody-fund getFund, ids as fixed text (before TypedInputs): the text trimmed, an empty one read from msg.payload',
      type: 'custody-fund',
      old: { operation: 'getFund', company_id: ' c1 ', fund_id: '', wallet_id: 'w1', direction: '' },
      current: { schemaVersion: 1, operation: 'getFund', company_id: ' c1 ', company_idType: 'str', fund_id: '', fund_idType: 'str', wallet_id: 'w1', wallet_idType: 'str', direction: '', directionType: 'str' },
      msgs: [{ payload: { fund_id: 'f-from-msg', company_id: 'ignored' } }],
      expected: ['GET /api/v1/p/company/c1/fund/f-from-msg '],
    },
    {
      name: 'custody-transfer create, payment fields as fixed text',
      type: 'custody-transfer',
      old: { operation: 'create', company_id: 'c1', wallet_id: 'w1', counterparty_wallet_address: 'addr-1', sendAsset: 'BTC-TESTNET', sendAmount: '1500', reference: 'INV-1', benefit_of: 'Alice', account_no: '', expiresAfter: '' },
      current: {
        schemaVersion: 1, operation: 'create', expiresAfter: '',
        company_id: 'c1', company_idType: 'str', wallet_id: 'w1', wallet_idType: 'str', counterparty_wallet_address: 'addr-1', counterparty_wallet_addressType: 'str',
        sendAsset: 'BTC-TESTNET', sendAssetType: 'str', sendAmount: '1500', sendAmountType: 'str', reference: 'INV-1', referenceType: 'str',
        benefit_of: 'Alice', benefit_ofType: 'str', account_no: '', account_noType: 'str',
      },
      msgs: [{ payload: { partner_txID: 'KEY', expires: 4102444800, account_no: 'AC-9' } }],
      expected: ['POST /api/v1/p/company/c1/transfer {"wallet_id":"w1","counterparty_wallet_address":"addr-1","expires":4102444800,"benefit_of":"Alice","account_no":"AC-9","reference":"INV-1","partner_txID":"KEY","send":{"symbol":"BTC-TESTNET","amount":1500}}'],
    },
    {
      name: 'custody-request with an empty method and path, body "payload": msg.method, msg.path, msg.payload as it is (none when absent)',
      type: 'custody-request',
      old: { method: '', path: '', body: 'payload' },
      current: { schemaVersion: 1, method: 'method', methodType: 'msg', path: '', pathType: 'str', body: 'payload', bodyType: 'msg' },
      msgs: [{ method: 'PUT', path: '/coreclient/cc1/action/a1' }, { method: 'post', path: '/company', payload: { name: 'X' } }, { path: '/assets' }],
      expected: ['PUT /api/v1/p/coreclient/cc1/action/a1 ', 'POST /api/v1/p/company {"name":"X"}'],
    },
    {
      name: 'custody-request POST with body "none"',
      type: 'custody-request',
      old: { method: 'POST', path: '/company/c1/custom', body: 'none' },
      current: { schemaVersion: 1, method: 'POST', methodType: 'str', path: '/company/c1/custom', pathType: 'str', body: '', bodyType: 'none' },
      msgs: [{ payload: { name: 'not sent' } }],
      expected: ['POST /api/v1/p/company/c1/custom '],
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const old = await behaviour(c.type, c.old, c.msgs);
      const current = await behaviour(c.type, c.current, c.msgs);
      assert.deepEqual(old.sent, c.expected, `the old shape sends the expected requests (${old.ends.join('; ')})`);
      assert.deepEqual(old, current, 'the old shape behaves as the new one');
    });
  }

  it('a node stored by a later release (schemaVersion above the latest) is read as it is, with a warning', async () => {
    const props = { schemaVersion: 99, operation: 'getFund', company_id: 'c1', company_idType: 'str', fund_id: 'f1', fund_idType: 'str' };
    const r = await behaviour('custody-fund', props, [{ payload: {} }]);
    assert.deepEqual(r.sent, ['GET /api/v1/p/company/c1/fund/f1 ']);
    const node = helper.getNode('op') as any;
    const warnings = node.warn.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === node).map((c: { args: [string] }) => c.args[0]);
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0], /stored by a later release \(schemaVersion 99; this release knows up to 1\)/);
  });
});
