/**
 * `partner_txID` from a business key (nodes/shared/business-key.ts): the `partnerTxId` TypedInput
 * (types template, msg, jsonata, str) of the money-moving operations, in the real Node-RED
 * runtime (node-red-node-test-helper).
 *
 * - "template parsing" and "partnerTxIdSource in the runtime" test the module alone (the latter
 *   through a small probe node that calls it): they need nothing else.
 * - "the money-moving nodes" send through custody-transfer, custody-withdraw, custody-swap-make,
 *   custody-swap-take and custody-sweep: they need `partnerTxIdSource` wired into the `run` of
 *   nodes/shared/operation-node.ts (the resolved key into `input.partner_txID`).
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';
import type { Node, NodeAPI, NodeMessageInFlow } from 'node-red';
import { sharedSimulator } from '../../simulator/shared';
import type { Simulator } from '../../simulator';
import { ConfigError } from '../../lib';
import { paletteSpecs } from '../../nodes/shared/palette';
import { parsePartnerTxIdTemplate, partnerTxIdSource } from '../../nodes/shared/business-key';
import { editorDescription } from '../../nodes/shared/operation-node';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting, sendAndWait, operationFlow } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useCountingServer, useRedRuntime } from '../helpers/red-setup';

const dataDir = simulatorDataDir('cf-business-key-');

/**
 * A node type `key-probe` that builds the key of each msg with {@link partnerTxIdSource} for the
 * transfer operation named by its `operation` and sends it as `msg.key` (null: no source).
 */
function probeModule(RED: NodeAPI): void {
  RED.nodes.registerType('key-probe', function (this: Node, def: Record<string, unknown>) {
    RED.nodes.createNode(this, def as never);
    const spec = paletteSpecs('custody-transfer')[String(def.operation)];
    const source = partnerTxIdSource(RED, this, def, spec);
    const onInput = (msg: NodeMessageInFlow, send: (m: NodeMessageInFlow) => void, done: (err?: Error) => void): void => {
      const out = msg as NodeMessageInFlow & { key?: string | null };
      if (!source) {
        out.key = null;
        send(out);
        return done();
      }
      source(msg).then(
        (key) => {
          out.key = key;
          send(out);
          done();
        },
        (err: Error) => done(err),
      );
    };
    this.on('input', onInput as never);
  } as never);
}

const nodeModules = [...redNodes(['custody-config', 'custody-transfer', 'custody-withdraw', 'custody-swap-make', 'custody-swap-take', 'custody-sweep']), probeModule];


const inbox: Inbox = new Map();

async function load(flow: object[], credentials: object = {}): Promise<void> {
  await loadCollecting(nodeModules, flow, credentials, inbox, ['out', 'caught']);
}

async function ok(msg: Record<string, unknown>): Promise<any> {
  const r = await sendAndWait(inbox, msg);
  if (r.caught) throw new Error('caught: ' + r.caught.error?.message);
  return r.out;
}

async function refused(msg: Record<string, unknown>): Promise<any> {
  const r = await sendAndWait(inbox, msg);
  if (r.out) throw new Error('expected an error, got output ' + JSON.stringify(r.out.payload ?? r.out.key));
  return r.caught;
}

/** The last status node `id` set (the helper spies on Node.prototype.status, shared by all nodes). */
function statusOf(id: string): { fill?: string; shape?: string; text?: string } | undefined {
  const node = helper.getNode(id) as any;
  const calls = node.status.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === node);
  return calls.length ? calls[calls.length - 1].args[0] : undefined;
}

const now = () => Math.floor(Date.now() / 1000);

describe('partner_txID from a business key (partnerTxId)', function () {
  this.timeout(60000);

  useRedRuntime(dataDir, { startSimulator: false });

  describe('template parsing', () => {
    it('splits text and {{path}} placeholders (spaces inside the braces ignored)', () => {
      assert.deepEqual(parsePartnerTxIdTemplate('inv-{{payload.invoice}}'), [{ text: 'inv-' }, { path: 'payload.invoice' }]);
      assert.deepEqual(parsePartnerTxIdTemplate('{{ topic }}/{{payload.line}}-x'), [{ path: 'topic' }, { text: '/' }, { path: 'payload.line' }, { text: '-x' }]);
    });

    it('refuses unbalanced braces, an empty placeholder and a template without placeholder, naming partnerTxId', () => {
      const cases: Array<[string, RegExp]> = [
        ['inv-{{payload.invoice', /"\{\{" at position 4 has no closing "\}\}"/],
        ['inv-{{payload.invoice}', /has no closing "\}\}"/],
        ['inv-payload.invoice}}', /"\}\}" at position 19 has no opening "\{\{"/],
        ['inv-{{a}{{b}}', /before the next brace/],
        ['inv-{payload.invoice}', /single "\{" at position 4/],
        ['inv-{{}}', /empty placeholder/],
        ['inv-{{   }}', /empty placeholder/],
        ['inv-1001', /no \{\{placeholder\}\}: fixed text makes every msg the same payment/],
      ];
      for (const [template, expected] of cases) {
        assert.throws(() => parsePartnerTxIdTemplate(template), (e: Error) => {
          assert.ok(e instanceof ConfigError, template);
          assert.match(e.message, new RegExp(`^partnerTxId: template ${JSON.stringify(template).replace(/[{}[\]()*+?.\\^$|]/g, '\\$&')}: `));
          assert.match(e.message, expected);
          return true;
        });
      }
    });

    it('the edit dialog shows the partnerTxId row exactly for the operations that send partner_txID', () => {
      const rows = (type: string, operations: Record<string, never>) =>
        Object.entries(editorDescription({ type, operations, editorFields: [] }))
          .filter(([, d]) => d.properties.includes('partnerTxId'))
          .map(([op]) => op);
      assert.deepEqual(rows('custody-transfer', paletteSpecs('custody-transfer') as never), ['create']);
      assert.deepEqual(rows('custody-withdraw', paletteSpecs('custody-withdraw') as never), ['create']);
      assert.deepEqual(rows('custody-swap-make', paletteSpecs('custody-swap-make') as never), ['make']);
      assert.deepEqual(rows('custody-swap-take', paletteSpecs('custody-swap-take') as never), ['take']);
      assert.deepEqual(rows('custody-sweep', paletteSpecs('custody-sweep') as never), ['start']);
      assert.deepEqual(rows('custody-liquidity-hub', paletteSpecs('custody-liquidity-hub') as never), []);
    });
  });

  describe('partnerTxIdSource in the runtime (a probe node calling it)', () => {
    const probe = (props: Record<string, unknown>) => operationFlow('key-probe', { operation: 'create', ...props });

    it('template, msg, jsonata and str build the key from the msg; the result is trimmed; a number is text', async () => {
      const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
        [{ partnerTxId: 'inv-{{payload.invoice}}', partnerTxIdType: 'template' }, { payload: { invoice: 'INV-1001' } }, 'inv-INV-1001'],
        [{ partnerTxId: ' {{topic}}/{{ msg.payload.line }} ', partnerTxIdType: 'template' }, { topic: 'order-7', payload: { line: 2 } }, 'order-7/2'],
        [{ partnerTxId: 'inv-{{payload.invoice}}' }, { payload: { invoice: ' INV-1002 ' } }, 'inv-INV-1002'],
        [{ partnerTxId: 'payload.invoice', partnerTxIdType: 'msg' }, { payload: { invoice: '  INV-1003\n' } }, 'INV-1003'],
        [{ partnerTxId: 'msg.payload.order', partnerTxIdType: 'msg' }, { payload: { order: 42 } }, '42'],
        [{ partnerTxId: '"inv-" & payload.invoice', partnerTxIdType: 'jsonata' }, { payload: { invoice: 'INV-1004' } }, 'inv-INV-1004'],
        [{ partnerTxId: 'payload.n * 2', partnerTxIdType: 'jsonata' }, { payload: { n: 21 } }, '42'],
        [{ partnerTxId: ' fixed-key ', partnerTxIdType: 'str' }, { payload: {} }, 'fixed-key'],
      ];
      for (const [props, msg, key] of cases) {
        await load(probe(props));
        assert.equal((await ok(msg)).key, key, JSON.stringify(props));
        await helper.unload();
      }
    });

    it('no source when partnerTxId is empty or blank, or the operation sends no partner_txID', async () => {
      for (const props of [{}, { partnerTxId: '' }, { partnerTxId: '   ', partnerTxIdType: 'msg' }, { operation: 'get', partnerTxId: 'inv-{{payload.invoice}}' }]) {
        await load(probe(props));
        assert.equal((await ok({ payload: { partner_txID: 'from-payload' } })).key, null, JSON.stringify(props));
        await helper.unload();
      }
    });

    it('refuses a msg it cannot build the key from, with EINPUT naming partner_txID and what was read', async () => {
      const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
        [{ partnerTxId: 'inv-{{payload.invoice}}' }, { payload: {} }, 'partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is missing'],
        [{ partnerTxId: 'inv-{{payload.invoice}}' }, { payload: 'text' }, 'partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is missing'],
        [{ partnerTxId: 'inv-{{payload.order.id}}' }, { payload: {} }, 'partner_txID: template "inv-{{payload.order.id}}": msg.payload.order.id is missing'],
        [{ partnerTxId: 'inv-{{payload.invoice}}' }, { payload: { invoice: '  ' } }, 'partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is empty'],
        [{ partnerTxId: 'inv-{{payload.invoice}}' }, { payload: { invoice: { no: 1 } } }, 'partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is an object, expected text or a number'],
        [{ partnerTxId: 'inv-{{payload.invoice}}' }, { payload: { invoice: null } }, 'partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is null, expected text or a number'],
        [{ partnerTxId: 'payload.invoice', partnerTxIdType: 'msg' }, { payload: {} }, 'partner_txID: msg.payload.invoice is missing'],
        [{ partnerTxId: 'payload.invoice', partnerTxIdType: 'msg' }, { payload: { invoice: true } }, 'partner_txID: msg.payload.invoice is a boolean, expected text or a number'],
        [{ partnerTxId: 'payload.invoice', partnerTxIdType: 'jsonata' }, { payload: {} }, 'partner_txID: JSONata "payload.invoice": the result is missing'],
        [{ partnerTxId: '$trim(payload.invoice)', partnerTxIdType: 'jsonata' }, { payload: { invoice: ' ' } }, 'partner_txID: JSONata "$trim(payload.invoice)": the result is empty'],
        [{ partnerTxId: 'payload', partnerTxIdType: 'jsonata' }, { payload: { a: 1 } }, 'partner_txID: JSONata "payload": the result is an object, expected text or a number'],
      ];
      for (const [props, msg, message] of cases) {
        await load(probe(props));
        const caught = await refused(msg);
        assert.equal(caught.error.code, 'EINPUT', message);
        assert.equal(caught.error.message, `ValidationError: ${message}`);
        await helper.unload();
      }
    });

    it('refuses at deploy what can never work: red status, and every msg refused with ECONFIG naming partnerTxId', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ partnerTxId: 'inv-{{payload.invoice' }, /^partnerTxId: template "inv-\{\{payload.invoice": "\{\{" at position 4 has no closing "\}\}"/],
        [{ partnerTxId: 'inv-{{}}' }, /^partnerTxId: template "inv-\{\{\}\}": empty placeholder/],
        [{ partnerTxId: 'INV-1001', partnerTxIdType: 'template' }, /^partnerTxId: template "INV-1001": no \{\{placeholder\}\}/],
        [{ partnerTxId: 'inv-{{payload..x}}' }, /^partnerTxId: template "inv-\{\{payload\.\.x\}\}": placeholder "payload\.\.x" is not a msg property/],
        [{ partnerTxId: 'payload.', partnerTxIdType: 'msg' }, /^partnerTxId: "payload\." is not a msg property/],
        [{ partnerTxId: '"inv-" & (', partnerTxIdType: 'jsonata' }, /^partnerTxId: JSONata "\\"inv-\\" & \(" does not parse/],
        [{ partnerTxId: 'inv', partnerTxIdType: 'num' }, /^partnerTxIdType: unknown type "num" of partnerTxId/],
      ];
      for (const [props, expected] of cases) {
        await load(probe(props));
        const status = statusOf('op');
        assert.deepEqual([status?.fill, status?.shape], ['red', 'ring'], `${JSON.stringify(props)}: red status at deploy`);
        assert.match(status?.text ?? '', /^partnerTxId|^partnerTxIdType/);
        for (const msg of [{ payload: { invoice: 'INV-1' } }, { payload: { invoice: 'INV-2' } }]) {
          const caught = await refused(msg);
          assert.equal(caught.error.code, 'ECONFIG');
          assert.match(caught.error.message.replace(/^ConfigError: /, ''), expected);
        }
        await helper.unload();
      }
    });
  });

  describe('the money-moving nodes (need partnerTxIdSource wired into operation-node run)', () => {
    const server = new CountingServer();
    const { creds } = useCountingServer(server);
    /** The request bodies received, parsed. */
    // The payments' bodies (the asset check's GET /assets has none).
    const bodies = () => server.seen.filter((s) => s.method === 'POST').map((s) => JSON.parse(s.body));

    beforeEach(() => {
      server.seen.length = 0;
      server.requests = 0;
    });

    const custom = (type: string, props: Record<string, unknown>) => operationFlow(type, props, { environment: 'custom', baseUrl: server.baseUrl });

    /**
     * Per node: its money-moving operation, the editor path ids, and a valid msg.payload without
     * partner_txID. Built when a test runs, not when the file loads: `expires` is 600 s from now,
     * and mocha loads every file before the first test of a suite that runs for minutes.
     */
    const moneyNodes = (): Array<[string, Record<string, unknown>, Record<string, unknown>]> => [
      ['custody-transfer', { operation: 'create', company_id: 'c1' }, { wallet_id: 'w1', counterparty_wallet_address: 'w2', expires: now() + 600, benefit_of: 'b', account_no: 'a', reference: 'r', send: { symbol: 'BTC-TESTNET', amount: 1000 } }],
      ['custody-withdraw', { operation: 'create', company_id: 'c1' }, { wallet_id: 'w1', address: 'tb1qaddr', expires: now() + 600, benefit_of: 'b', account_no: 'a', reference: 'r', send: { symbol: 'BTC-TESTNET', amount: 1000 } }],
      ['custody-swap-make', { operation: 'make', company_id: 'c1' }, { send_wallet_id: 'w1', receive_wallet_id: 'w2', expires: now() + 600, reference: 'r', send: { symbol: 'BTC-TESTNET', amount: 1000 }, receive: { symbol: 'ETH-TESTNET', amount: 5000 } }],
      ['custody-swap-take', { operation: 'take', company_id: 'c1' }, { swap_id: 'q-77', send_wallet_id: 'w1', receive_wallet_id: 'w2', reference: 'r' }],
      ['custody-sweep', { operation: 'start', client_id: 'cc1' }, { wallet_id: 'w1', recipient_wallet_id: 'w2', expires: now() + 600, reference: 'r', send: { symbol: 'BTC-TESTNET', amount: 1000 } }],
    ];

    it('each of the five nodes sends the key its partnerTxId builds, winning over msg.payload.partner_txID', async () => {
      for (const [type, props, payload] of moneyNodes()) {
        await load(custom(type, { ...props, partnerTxId: 'order-{{payload.order}}', partnerTxIdType: 'template' }), creds);
        await ok({ payload: { ...payload, order: 'ORD-1', partner_txID: 'ignored' } });
        await helper.unload();
      }
      assert.deepEqual(bodies().map((b) => b.partner_txID), ['order-ORD-1', 'order-ORD-1', 'order-ORD-1', 'order-ORD-1', 'order-ORD-1']);
      assert.ok(bodies().every((b) => !('order' in b)), 'the business fields are not sent');
    });

    it('the swap take keys on the quote it takes: template take-{{payload.swap_id}}', async () => {
      const [type, props, payload] = moneyNodes()[3];
      await load(custom(type, { ...props, partnerTxId: 'take-{{payload.swap_id}}' }), creds);
      await ok({ payload });
      assert.equal(bodies()[0].partner_txID, 'take-q-77');
    });

    it('custody-transfer with each type: template, msg, jsonata, str', async () => {
      const [type, props, payload] = moneyNodes()[0];
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ partnerTxId: 'inv-{{payload.invoice}}', partnerTxIdType: 'template' }, 'inv-INV-1001'],
        [{ partnerTxId: 'payload.invoice', partnerTxIdType: 'msg' }, 'INV-1001'],
        [{ partnerTxId: '"inv-" & $lowercase(payload.invoice)', partnerTxIdType: 'jsonata' }, 'inv-inv-1001'],
        [{ partnerTxId: 'one-payment-only', partnerTxIdType: 'str' }, 'one-payment-only'],
      ];
      for (const [keyProps] of cases) {
        await load(custom(type, { ...props, ...keyProps }), creds);
        await ok({ payload: { ...payload, invoice: 'INV-1001' } });
        await helper.unload();
      }
      assert.deepEqual(bodies().map((b) => b.partner_txID), cases.map(([, key]) => key));
    });

    it('left empty (the default), the key is msg.payload.partner_txID, as before; a sweep without one is refused', async () => {
      const [type, props, payload] = moneyNodes()[0];
      for (const keyProps of [{}, { partnerTxId: '', partnerTxIdType: 'template' }, { partnerTxId: '  ', partnerTxIdType: 'msg' }]) {
        await load(custom(type, { ...props, ...keyProps }), creds);
        await ok({ payload: { ...payload, partner_txID: 'from-payload' } });
        const caught = await refused({ payload });
        assert.equal(caught.error.message, 'ValidationError: partner_txID: required');
        await helper.unload();
      }
      assert.deepEqual(bodies().map((b) => b.partner_txID), ['from-payload', 'from-payload', 'from-payload']);
      const [sweepType, sweepProps, sweepPayload] = moneyNodes()[4];
      await load(custom(sweepType, sweepProps), creds);
      // The API takes a sweep without partner_txID, but the submission journal keys it on one.
      const keyless = await refused({ payload: { ...sweepPayload, partner_txID: undefined } });
      assert.equal(keyless.error.message, 'ValidationError: partner_txID: required');
      assert.equal(bodies().length, 3, 'nothing sent');
    });

    it('an operation without partner_txID ignores a key left in the dialog (transfer get)', async () => {
      await load(custom('custody-transfer', { operation: 'get', company_id: 'c1', partnerTxId: 'inv-{{payload.invoice}}' }), creds);
      await ok({ payload: { tx_id: 't1' } });
      assert.deepEqual(server.seen.map((s) => `${s.method} ${s.url}`), ['GET /api/v1/p/company/c1/transfer/t1']);
    });

    it('refuses a msg without its key before anything is sent, naming partner_txID and the placeholder', async () => {
      const [type, props, payload] = moneyNodes()[0];
      await load(custom(type, { ...props, partnerTxId: 'inv-{{payload.invoice}}' }), creds);
      const missing = await refused({ payload: { ...payload, partner_txID: 'not-used' } });
      assert.equal(missing.error.code, 'EINPUT');
      assert.equal(missing.error.message, 'ValidationError: partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is missing');
      assert.equal(missing.statusCode, undefined, 'no answer: no msg.statusCode');
      const empty = await refused({ payload: { ...payload, invoice: '' } });
      assert.equal(empty.error.message, 'ValidationError: partner_txID: template "inv-{{payload.invoice}}": msg.payload.invoice is empty');
      await helper.unload();
      await load(custom(type, { ...props, partnerTxId: '$trim(payload.invoice)', partnerTxIdType: 'jsonata' }), creds);
      const blank = await refused({ payload: { ...payload, invoice: '   ' } });
      assert.equal(blank.error.message, 'ValidationError: partner_txID: JSONata "$trim(payload.invoice)": the result is empty');
      assert.equal(server.requests, 0, 'nothing was sent');
      assert.deepEqual([statusOf('op')?.fill, statusOf('op')?.shape], ['red', 'ring']);
    });

    it('a bad template is refused at deploy: red status naming partnerTxId, every msg refused, nothing sent', async () => {
      for (const [type, props, payload] of moneyNodes()) {
        await load(custom(type, { ...props, partnerTxId: 'inv-{{payload.invoice}' }), creds);
        const status = statusOf('op');
        assert.deepEqual([status?.fill, status?.shape], ['red', 'ring'], type);
        assert.match(status?.text ?? '', /^partnerTxId: template/);
        const caught = await refused({ payload: { ...payload, invoice: 'INV-1', partner_txID: 'p' } });
        assert.equal(caught.error.code, 'ECONFIG');
        assert.match(caught.error.message, /^ConfigError: partnerTxId: template "inv-\{\{payload\.invoice\}": "\{\{" at position 4 has no closing "\}\}"/);
        await helper.unload();
      }
      assert.equal(server.requests, 0, 'nothing was sent');
    });

    describe('against the simulator', () => {
      let sim: Simulator;
      before(async () => {
        sim = await sharedSimulator(dataDir);
      });

      it('the same business key twice is one transfer: the second answer is existing, with the same tx_id', async () => {
        const invoice = `INV-${process.pid}-${Date.now()}`;
        await load(operationFlow('custody-transfer', { operation: 'create', company_id: sim.demo.company_id, amountFormat: 'decimal', expiresAfter: '600', partnerTxId: 'inv-{{payload.invoice}}', partnerTxIdType: 'template' }));
        const payload = {
          invoice,
          wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id,
          counterparty_wallet_address: sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id,
          benefit_of: 'Business key test',
          account_no: 'ACC-BK',
          reference: `Invoice ${invoice}`,
          send: { symbol: 'BTC-TESTNET', amount: '0.0001' },
        };
        const first = await ok({ payload });
        const second = await ok({ payload });
        assert.equal(first.payload.status, 'new');
        assert.equal(second.payload.status, 'existing');
        assert.equal(second.payload.tx_id, first.payload.tx_id);
        await helper.unload();
        await load(operationFlow('custody-transfer', { operation: 'get', company_id: sim.demo.company_id }));
        const tx = await ok({ payload: { tx_id: first.payload.tx_id } });
        assert.equal(tx.payload.reference, `Invoice ${invoice}`);
      });
    });
  });
});
