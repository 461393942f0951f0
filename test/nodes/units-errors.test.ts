/**
 * Errors in the units the user chose (docs/nodes.md "The payment fields" and "The msg contract
 * (every node)"): with Amounts *decimal*, a transfer's refusals say amounts in decimals with the
 * asset (an amount of 0, an amount above the balance as the simulator refuses it, 9 decimal places
 * for an 8-decimal asset), read from the node status (cause first) and from a Catch node; the
 * API's own error body stays in `msg.error.cause`; base units mode says base units as before.
 * A bad "Expires after" says its range; the approver lists every bad field of every rule at
 * deploy. Real Node-RED (node-red-node-test-helper) against the built-in simulator.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { fromBaseUnits } from '../../lib';
import { CONFIG, Inbox, TAB, demoTransferFields, lastStatusOf, loadCollecting, operationFlow, sendAndWait, str } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { uniqueId } from '../helpers/requests';
import { until } from '../helpers/support';

const dataDir = simulatorDataDir('cf-units-errors-');
const nodeModules = redNodes(['custody-config', 'custody-transfer', 'custody-approver']);

describe('errors in the units the user chose, in Node-RED with the simulator', function () {
  this.timeout(60000);
  let sim: Simulator;
  const inbox: Inbox = new Map();
  const simulator = useRedRuntime(dataDir);
  before(() => {
    sim = simulator();
  });

  /** A transfer node `op` sending BTC-TESTNET from the demo wallet; the amount is `msg.payload.amount`. */
  function transfer(props: Record<string, unknown>): Record<string, unknown> {
    const demo = sim.demo;
    return {
      operation: 'create',
      ...demoTransferFields(demo, { value: 'payload.amount', type: 'msg' }, str('units')),
      partnerTxId: 'units-{{payload.key}}',
      partnerTxIdType: 'template',
      expiresAfter: '3600',
      ...props,
    };
  }

  async function load(props: Record<string, unknown>): Promise<void> {
    await loadCollecting(nodeModules, operationFlow('custody-transfer', transfer(props)), {}, inbox, ['out', 'caught']);
  }

  /** Send `amount` into the node; the Catch node's msg and the node's status after it. */
  async function refusal(amount: unknown): Promise<{ caught: any; status: { fill?: string; text?: string } }> {
    const r = await sendAndWait(inbox, { payload: { amount, key: uniqueId('u') } });
    assert.ok(r.caught, `refused, not sent: ${JSON.stringify(r.out?.payload)}`);
    const status = await until(() => {
      const s = lastStatusOf(helper.getNode('op'));
      return s?.fill === 'red' ? s : undefined;
    }, 'a red status');
    return { caught: r.caught, status };
  }

  describe('Amounts: decimal', () => {
    beforeEach(() => load({ amountFormat: 'decimal' }));

    it('an amount of 0: "send.amount: at least 0.00000001 BTC-TESTNET, got 0" at Catch and in the status', async () => {
      const { caught, status } = await refusal('0');
      assert.equal(caught.error.code, 'EINPUT');
      assert.equal(caught.error.message, 'ValidationError: send.amount: at least 0.00000001 BTC-TESTNET, got 0');
      assert.equal(status.text, 'send.amount: at least 0.00000001 BTC-TESTNET, got 0');
    });

    it('9 decimal places for BTC-TESTNET (8): names the asset and its 8 decimals, at Catch and in the status', async () => {
      const { caught, status } = await refusal('0.000000001');
      assert.equal(caught.error.code, 'EINPUT');
      assert.equal(caught.error.message, 'ValidationError: send.amount: at most 8 decimal places for BTC-TESTNET, got 0.000000001 (9 places); amounts are never rounded');
      assert.match(status.text!, /^send\.amount: at most 8 decimal places for BTC-TESTNET/);
    });

    it('an amount above the balance: the API refusal in decimals with the asset; the API body unchanged in msg.error.cause; the cause first in the status', async () => {
      const { caught, status } = await refusal('1000');
      const cause = caught.error.cause;
      assert.equal(caught.statusCode, 400);
      assert.equal(cause.statusCode, 400);
      // The simulator's words, in base units (fee 0.001 %, rounded up: 1000000 for 1000 BTC).
      const original = /^send\.amount: insufficient balance: 100001000000 needed \(amount 100000000000 \+ fees 1000000\), (\d+) available$/.exec(cause.detail.reason);
      assert.ok(original, cause.detail.reason);
      const available = fromBaseUnits(original[1], 100000000);
      assert.equal(
        caught.error.message,
        `ApiError: POST /company/${sim.demo.company_id}/transfer: 400 Bad Request (send.amount: insufficient balance: 1000.01 BTC-TESTNET needed (amount 1000 BTC-TESTNET + fees 0.01 BTC-TESTNET), ${available} BTC-TESTNET available)`,
      );
      assert.equal(status.text!.slice(0, 57), 'send.amount: insufficient balance: 1000.01 BTC-TESTNET needed (amount 1000 BTC-TESTNET + fees 0.01 BTC-TESTNET)'.slice(0, 57));
    });
  });

  describe('Amounts: base units, as before', () => {
    beforeEach(() => load({ amountFormat: 'baseUnits' }));

    it('an amount of 0: "send.amount: must be >= 1, got 0"', async () => {
      const { caught, status } = await refusal('0');
      assert.equal(caught.error.message, 'ValidationError: send.amount: must be >= 1, got 0');
      assert.equal(status.text, 'send.amount: must be >= 1, got 0');
    });

    it('an amount above the balance: the API words in base units, the cause first in the status', async () => {
      const { caught, status } = await refusal('100000000000');
      assert.match(caught.error.message, /: 400 Bad Request \(send\.amount: insufficient balance: 100001000000 needed \(amount 100000000000 \+ fees 1000000\), \d+ available\)$/);
      assert.equal(caught.error.message, `ApiError: POST /company/${sim.demo.company_id}/transfer: 400 Bad Request (${caught.error.cause.detail.reason})`);
      assert.match(status.text!, /^send\.amount: insufficient balance: 100001000000 needed/);
    });

    it('a decimal amount: refused naming the unit', async () => {
      const { caught } = await refusal('0.015');
      assert.match(caught.error.message, /^ValidationError: send\.amount: a whole number of base units \(Amounts: base units\), got "0\.015"/);
    });
  });

  describe('"Expires after" out of its range', () => {
    for (const expiresAfter of ['-100', '0', 'abc', '1.5']) {
      it(`${JSON.stringify(expiresAfter)}: red at deploy and each msg without expires refused with the range, not "expires: required"`, async () => {
        await load({ amountFormat: 'decimal', expiresAfter });
        const deployed = lastStatusOf(helper.getNode('op'));
        const says = `expiresAfter: Expires after must be a whole number of seconds, 1 or more (the default is 3600), or empty to take msg.payload.expires; got ${JSON.stringify(expiresAfter)}`;
        assert.equal(deployed?.fill, 'red');
        assert.equal(deployed?.text, says.slice(0, 57) + '...');
        const { caught } = await refusal('0.001');
        assert.equal(caught.error.code, 'ECONFIG');
        assert.equal(caught.error.message, `ConfigError: ${says}`);
      });
    }

    it('empty: expires is read from msg.payload, and required there', async () => {
      await load({ amountFormat: 'decimal', expiresAfter: '' });
      const { caught } = await refusal('0.001');
      assert.equal(caught.error.message, 'ValidationError: expires: required');
    });
  });

  describe('custody-approver rules', () => {
    it('lists every bad field of every rule at deploy: in the status (first field first) and at Catch for each msg', async () => {
      const rules = [
        { name: '', decision: 'allow', maxAmount: '1,5' },
        { name: 'ok', decision: 'approve' },
        { name: 'window', decision: 'hold', from: '9:00', to: '17:00', timeZone: 'Mars/Olympus', velocityCount: 'many' },
      ];
      const flow = [
        TAB,
        { ...CONFIG, z: 'tab' },
        { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: true, auditFile: path.join(dataDir, 'audit.jsonl'), rules, wires: [[], [], []], x: 100, y: 100 },
        { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
        { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
        { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
      ];
      await loadCollecting(nodeModules, flow, {}, inbox, ['out', 'caught']);
      const expected = [
        'rules[0].name: a name for the rule',
        'rules[0].decision: one of approve, reject, hold, got "allow"',
        'rules[0].maxAmount: a decimal number of whole units such as "0.5", got "1,5"',
        'rules[2].velocityCount: a whole number, got "many"',
        'rules[2].from: a time HH:MM (24 h), got "9:00"',
        'rules[2].timeZone: an IANA time zone name such as "Europe/Zurich", got "Mars/Olympus"',
      ].join('; ');
      const status = await until(() => {
        const s = lastStatusOf(helper.getNode('ap'));
        return s?.fill === 'red' ? s : undefined;
      }, 'a red status');
      assert.equal(status.text, expected.slice(0, 57) + '...');
      const r = await sendAndWait(inbox, { payload: { client_id: 'demo-approver', action_id: 'a-1' } }, 'ap');
      assert.equal(r.caught?.error?.message, `ConfigError: ${expected}`);
    });
  });
});
