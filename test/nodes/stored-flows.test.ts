/**
 * Stored flows stay compatible (docs/nodes.md "Fields: TypedInputs, look-ups, the operation from
 * the msg"): the 11 example flows as they were before TypedInputs and generated dialogs
 * (test/fixtures/examples-before/, copies of examples/*.json: fields as fixed text, no
 * `<field>Type`) load into the real Node-RED runtime with the built-in simulator, and every
 * operation node in them sends exactly the request the runtime of before sent.
 *
 * "The request of before" is computed independently of the new runtime: the old input rule
 * (nodes/shared/input.ts `resolveInput` over each node's editor fields as the node modules
 * listed them before, `partner_txID` from the node's template, `expires` from "Expires after",
 * decimal amounts converted) and lib's `prepareOperation`; each node is driven with a payload
 * made from its operation's schema, through a recording server that stands in for the API. Either
 * both send the same method, path, query and body, or both refuse the same way, before sending.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import helper from 'node-red-node-test-helper';
import { sharedSimulator, stopSharedSimulator } from '../../simulator/shared';
import { prepareOperation, toBaseUnits, type OperationSpec, type JsonSchema } from '../../lib';
import { PALETTE, paletteSpecs, type OperationNodeType } from '../../nodes/shared/palette';
import { resolveInput, type EditorField } from '../../nodes/shared/input';
import { parsePartnerTxIdTemplate } from '../../nodes/shared/business-key';
import { CountingServer, SIMULATOR_ASSETS } from '../helpers/counting-server';
import { Inbox, loadCollecting, sendAndWait, startHelperServer, stopHelperServer, TAB, CONFIG } from '../helpers/node-flows';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-stored-flows-'));
process.env.CUSTODYFLOW_SIMULATOR_DATA = dataDir;
helper.init(require.resolve('node-red'));

const fixtures = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'examples-before');
const core = path.dirname(require.resolve('@node-red/nodes/package.json'));

/** Every custody node module, and the core nodes the examples use. */
const nodeModules = [
  ...Object.keys(require('../../../package.json')['node-red'].nodes).map((t: string) => require(`../../nodes/${t}/${t}`)),
  ...['common/20-inject', 'common/21-debug', 'common/90-comment', 'common/60-link', 'function/10-function', 'function/10-switch', 'function/15-change', 'network/21-httprequest', 'parsers/70-CSV', 'sequence/17-split', 'storage/10-file'].map((f) =>
    require(path.join(core, 'core', `${f}.js`)),
  ),
];

/**
 * node-red-node-test-helper registers its own catch node once per catch node of a flow, and a
 * second registration fails ("catch already registered"): example 11 has two. The second is
 * skipped. Called in `before`: every test file's `helper.init` replaces the helper's module table.
 */
function registerCatchOnce(): () => void {
  const helperModules = (helper as unknown as { _nodeModules: Record<string, (red: unknown) => unknown> })._nodeModules;
  const coreCatch = helperModules.catch;
  // The other test files list the core catch module too; the helper skips it only when its own is that same function.
  const restore = () => {
    helperModules.catch = coreCatch;
  };
  helperModules.catch = (red: unknown) => {
    try {
      return coreCatch(red);
    } catch (e) {
      if (/already registered/.test((e as Error).message)) return undefined;
      throw e;
    }
  };
  return restore;
}

/** The editor fields of each v1 operation node as its module listed them before TypedInputs. */
const EDITOR_FIELDS_BEFORE: Record<string, readonly EditorField[]> = {
  'custody-assets': [['type', 'feeType'], 'asset'],
  'custody-company': ['company_id', 'query'],
  'custody-trusted-party': ['company_id', 'trustedparty_id'],
  'custody-fund': ['company_id', 'fund_id', 'wallet_id', 'direction'],
  'custody-transfer': ['company_id', 'wallet_id', 'counterparty_wallet_address', 'tx_id'],
  'custody-core-client': ['company_id', 'client_id', 'action_id'],
  'custody-action': ['client_id', 'action_id'],
  'custody-withdraw': ['company_id', 'wallet_id', 'address', 'tx_id'],
  'custody-swap-make': ['company_id', 'send_wallet_id', 'receive_wallet_id', 'tx_id'],
  'custody-swap-take': ['company_id', 'swap_id', 'send_wallet_id', 'receive_wallet_id', 'tx_id'],
  'custody-liquidity-hub': ['company_id', 'tx_id', 'action_id'],
  'custody-sweep': ['client_id', 'wallet_id', 'recipient_wallet_id', 'tx_id'],
  'custody-read': ['fund_id', 'wallet_id', 'direction'],
};

type FlowNode = Record<string, any> & { id: string; type: string };

/** The fixtures: file name and nodes. */
function fixtureFlows(): Array<{ file: string; nodes: FlowNode[] }> {
  return fs
    .readdirSync(fixtures)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, nodes: JSON.parse(fs.readFileSync(path.join(fixtures, file), 'utf8')) }));
}

const NOW = Math.floor(Date.now() / 1000);

/** A valid-looking value of a schema (required properties only): ids `id-<name>`, asset codes BTC-TESTNET. */
function sample(schema: JsonSchema, name: string): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return sample((schema.anyOf as JsonSchema[])[0], name);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      for (const k of (schema.required as string[] | undefined) ?? []) if (props[k]) out[k] = sample(props[k], k);
      return out;
    }
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => sample(schema.items as JsonSchema, name));
    case 'integer':
    case 'number':
      return name === 'expires' ? NOW + 7200 : name === 'amount' ? 150000 : Math.max(Number(schema.minimum ?? 1), 1);
    case 'boolean':
      return false;
    case 'string':
      if (String(schema.pattern ?? '').startsWith('^[A-Z0-9]')) return 'BTC-TESTNET';
      return `${name}-x`.padEnd(Number(schema.minLength ?? 0), 'x').slice(0, Number(schema.maxLength ?? 64));
    default:
      return `${name}-x`;
  }
}

/** A payload for an operation: its path ids, required query and body fields, and what the examples' key templates read. */
function payloadFor(spec: OperationSpec): Record<string, unknown> {
  const p: Record<string, unknown> = { invoice: 'INV-7', order: 'ORD-7', quote: 'Q-7' };
  for (const id of spec.path.match(/\{(\w+)\}/g) ?? []) p[id.slice(1, -1)] = `${id.slice(1, -1)}-payload`;
  Object.assign(p, sample({ type: 'object', ...spec.query } as JsonSchema, 'query'), sample({ type: 'object', ...spec.body } as JsonSchema, 'body'));
  if (spec.body?.properties.partner_txID) p.partner_txID = 'payload-key';
  return p;
}

/** `msg.<path>` of a msg (the template placeholders of the examples are plain dotted paths). */
function at(msg: Record<string, unknown>, p: string): unknown {
  return p.replace(/^msg\./, '').split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), msg);
}

/** The request the runtime of before sent for a node and msg, or the refusal it made. */
function requestBefore(def: FlowNode, msg: Record<string, unknown>): { method: string; path: string; query?: Record<string, unknown>; body?: Record<string, unknown> } | { refused: string } {
  const spec = paletteSpecs(def.type as OperationNodeType)[def.operation];
  const input = resolveInput(def, EDITOR_FIELDS_BEFORE[def.type], msg.payload);
  if (def.partnerTxId && spec.body?.properties.partner_txID) {
    input.partner_txID = parsePartnerTxIdTemplate(def.partnerTxId)
      .map((part) => ('text' in part ? part.text : String(at(msg, part.path)).trim()))
      .join('');
  }
  const expiresAfter = Number(def.expiresAfter);
  if (spec.body?.properties.expires && Number.isInteger(expiresAfter) && expiresAfter > 0 && input.expires === undefined) input.expires = NOW + expiresAfter;
  if (def.amountFormat === 'decimal') {
    for (const a of spec.amounts ?? []) {
      const code = at(input, a.asset);
      const amount = at(input, a.amount);
      const asset = SIMULATOR_ASSETS.find((x) => x.code === code);
      if (typeof amount !== 'string' || !asset) continue;
      const converted = Number(toBaseUnits(amount, asset.scale));
      const [obj, key] = a.amount.includes('.') ? a.amount.split('.') : [undefined, a.amount];
      if (obj) input[obj] = { ...(input[obj] as Record<string, unknown>), [key]: converted };
      else input[key] = converted;
    }
  }
  try {
    const req = prepareOperation(spec, input);
    return { method: spec.method, path: req.path, query: req.query, body: req.body };
  } catch (e) {
    return { refused: (e as Error).message };
  }
}

describe('stored flows: the examples as saved before TypedInputs', function () {
  this.timeout(120000);
  const inbox: Inbox = new Map();
  let restoreCatch = () => {};

  before(async () => {
    restoreCatch = registerCatchOnce();
    await sharedSimulator(dataDir);
    await startHelperServer();
  });
  afterEach(async () => {
    await helper.unload();
  });
  after(async () => {
    restoreCatch();
    await stopHelperServer();
    await stopSharedSimulator();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('the fixtures are the 11 examples of before: fields as fixed text, no <field>Type', () => {
    const flows = fixtureFlows();
    assert.equal(flows.length, 11);
    for (const { file, nodes } of flows) {
      for (const n of nodes.filter((x) => x.type in PALETTE)) {
        const typed = Object.keys(n).filter((k) => k.endsWith('Type') && k !== 'partnerTxIdType' && k.slice(0, -4) in n);
        assert.deepEqual(typed, [], `${file}: ${n.type} ${n.id} has no <field>Type`);
      }
    }
  });

  for (const { file, nodes } of fixtureFlows()) {
    it(`loads "${file}" with the built-in simulator: every node is created, no custody node refuses its settings`, async () => {
      await helper.load(nodeModules as any, nodes as any, {});
      for (const n of nodes.filter((x) => x.type !== 'tab')) {
        assert.ok(helper.getNode(n.id), `${file}: node ${n.type} ${n.id} is created`);
      }
      for (const n of nodes.filter((x) => x.type in PALETTE)) {
        assert.equal(helper.getNode(n.connection)?.type, 'custody-config', `${file}: ${n.type} ${n.id} has its connection`);
      }
    });
  }

  describe('every v1 operation node of the fixtures sends the request it sent before (a recording server for the API)', () => {
    const server = new CountingServer({
      answer: (request, s) =>
        /\/assets\/?(\?|$)/.test(request.url) ? { status: 200, body: JSON.stringify({ assets: s.assets }) } : { status: 200, body: JSON.stringify({ tx_id: 'tx-recorded', status: 'new' }) },
    });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const creds = { cfg: { apiKey: 'c3RvcmVkLWZsb3dzLXRlc3Q=', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() } };
    before(() => server.start());
    after(() => server.stop());

    const cases = fixtureFlows().flatMap(({ file, nodes }) => nodes.filter((n) => n.type in EDITOR_FIELDS_BEFORE).map((n) => ({ file, node: n })));

    /** The cases where the runtime of before refused the msg (the schema-made payload did not fit). */
    const refusedCases: string[] = [];

    it(`covers the ${cases.length} v1 operation nodes of the fixtures`, () => {
      assert.ok(cases.length >= 30, `${cases.length} cases`);
    });

    after(() => {
      // Most cases must really send: a refusal on both sides proves less.
      assert.ok(refusedCases.length <= 3, `refused on both sides: ${refusedCases.join('; ')}`);
    });

    for (const { file, node } of cases) {
      it(`${file.slice(0, 2)} ${node.type} ${node.operation}${node.name ? ` "${node.name}"` : ''}`, async () => {
        const spec = paletteSpecs(node.type as OperationNodeType)[node.operation];
        const payload = payloadFor(spec);
        if (node.amountFormat === 'decimal') {
          for (const a of spec.amounts ?? []) {
            if (a.amount.includes('.')) (payload[a.amount.split('.')[0]] as Record<string, unknown>)[a.amount.split('.')[1]] = '0.0015';
            else payload[a.amount] = '0.0015';
          }
        }
        const msg = { payload, order: 'ORD-7' };
        const expected = requestBefore(node, msg);
        const saved = { ...node, z: 'tab', connection: 'cfg', wires: [['out']] };
        await loadCollecting(
          nodeModules,
          [TAB, { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: server.baseUrl }, saved, { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 }, { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 }, { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 }],
          creds,
          inbox,
          ['out', 'caught'],
        );
        server.seen.length = 0;
        const r = await sendAndWait(inbox, msg, node.id);
        // GET /assets is the asset check of a request with an asset code; of `assets`, the request itself.
        const sent = spec.path === '/assets' ? server.seen : server.seen.filter((s) => !/\/assets\/?(\?|$)/.test(s.url));
        if ('refused' in expected) {
          refusedCases.push(`${node.type} ${node.operation}: ${expected.refused}`);
          assert.equal(sent.length, 0, 'nothing sent');
          assert.equal(r.caught?.error?.message, expected.refused);
          return;
        }
        assert.ok(sent.length >= 1, `sent: ${r.caught?.error?.message ?? ''}`);
        const url = new URL(sent[0].url, 'http://h');
        assert.equal(sent[0].method, expected.method);
        assert.equal(url.pathname, `/api/v1/p${expected.path}`);
        const query = Object.fromEntries(url.searchParams);
        assert.deepEqual(query, Object.fromEntries(Object.entries(expected.query ?? {}).map(([k, v]) => [k, String(v)])));
        assert.deepEqual(sent[0].body ? JSON.parse(sent[0].body) : undefined, expected.body && Object.keys(expected.body).length ? expected.body : sent[0].body ? {} : undefined);
      });
    }
  });

  describe('the v2 nodes of the fixtures send what they sent before', () => {
    const server = new CountingServer({
      path: '/api/v2',
      answer: (request) =>
        request.method === 'GET' && /\/policies$/.test(request.url)
          ? { status: 200, body: JSON.stringify({ policies: [{ policyID: 'admin-1', policyType: 'admin', name: 'Admin', expression: { type: 1, operation: 1, threshold: 1, rules: [{ type: 2, operation: 3, threshold: 0, arguments: { id: 'm.alice' } }] }, expressionContentType: 'application/json', adminPolicyID: '', adminLocked: false, allowDuplicates: false }] }) }
          : { status: 200, body: JSON.stringify({ policyID: 'p-1', accountID: 'a-1', walletID: 'w-1', address: 'addr', actionID: 'act-1', status: 'approved' }) },
    });
    before(() => server.start());
    after(() => server.stop());

    const v2 = fixtureFlows().flatMap(({ nodes }) => nodes.filter((n) => n.type === 'custody-policy' || n.type === 'custody-portfolio'));

    /** Run a fixture's v2 node with `payload`; the requests it sent (method, path, body). */
    async function run(node: FlowNode, payload: Record<string, unknown>): Promise<Array<{ method: string; path: string; body: any }>> {
      await helper.unload();
      await loadCollecting(
        nodeModules,
        [TAB, { ...CONFIG, z: 'tab', environment: 'custom', baseUrl: 'http://127.0.0.1:1/api/v1/p', v2BaseUrl: server.baseUrl, workspaceId: 'ws-1' }, { ...node, z: 'tab', connection: 'cfg', wires: [['out']] }, { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 }, { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 }, { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 }],
        { cfg: { token: 'stored-flows-token' } },
        inbox,
        ['out', 'caught'],
      );
      server.seen.length = 0;
      const r = await sendAndWait(inbox, { payload }, node.id);
      assert.equal(r.caught, undefined, r.caught?.error?.message);
      return server.seen.map((s) => ({ method: s.method, path: new URL(s.url, 'http://h').pathname, body: s.body ? JSON.parse(s.body) : undefined }));
    }

    it('policy create: name, threshold, members and adminLocked from the form', async () => {
      const node = v2.find((n) => n.type === 'custody-policy' && n.operation === 'create')!;
      const sent = await run(node, {});
      const post = sent.find((s) => s.method === 'POST')!;
      assert.equal(post.path, '/api/v2/workspaces/ws-1/policies');
      assert.deepEqual(post.body, {
        name: 'Treasury',
        expression: { type: 1, operation: 1, threshold: 2, rules: ['m.alice', 'm.bob'].map((id) => ({ type: 2, operation: 3, threshold: 0, arguments: { id } })) },
        expressionContentType: 'application/json',
        adminPolicyID: 'admin-1',
        policyType: 'transaction',
        adminLocked: true,
        allowDuplicates: false,
      });
    });

    it('portfolio create and create wallet: the names, type, plugin and wait of the form', async () => {
      const create = await run(v2.find((n) => n.type === 'custody-portfolio' && n.operation === 'create')!, {});
      assert.deepEqual(create, [{ method: 'POST', path: '/api/v2/workspaces/ws-1/accounts', body: { name: 'Operations', type: 'standard' } }]);
      const wallet = await run(v2.find((n) => n.type === 'custody-portfolio' && n.operation === 'createWallet')!, { accountID: 'a-1', policyID: 'p-1' });
      assert.deepEqual(wallet, [{ method: 'POST', path: '/api/v2/workspaces/ws-1/accounts/a-1/wallets', body: { name: 'Treasury wallet', connectPlugin: 'defi', policyID: 'p-1', waitForAddress: 6 } }]);
    });

    it('policy list and approve update request: the path of before', async () => {
      assert.deepEqual((await run(v2.find((n) => n.type === 'custody-policy' && n.operation === 'list')!, {})).map((s) => `${s.method} ${s.path}`), ['GET /api/v2/workspaces/ws-1/policies']);
      assert.deepEqual((await run(v2.find((n) => n.type === 'custody-policy' && n.operation === 'approveAction')!, { actionID: 'act-1' })).map((s) => `${s.method} ${s.path}`), ['PUT /api/v2/actions/act-1']);
    });
  });
});
