/**
 * The payment flow of the scale-out tests (test/e2e/scale-out-payment.test.ts,
 * test/e2e/scale-out-failover.test.ts): a button per key, each sending the same withdrawal (one
 * `partner_txID` per key) through one custody-withdraw node on the scale-out config node
 * (bench/scale-out.ts `FLOW_IDS.config`); every output and error appended as a JSON line to
 * `payments.jsonl` in the instance's user directory.
 */
import type { SimInfo } from '../../bench/harness';
import { BASE_URL_ENV, FLOW_IDS, jsonLines, type Instance } from '../../bench/scale-out';
import { catchNode, fileNode, functionNode } from './flow-nodes';

/** What an instance recorded: one line per output (`withdraw`) or error (`error`). */
export interface PaymentLine {
  node: 'withdraw' | 'error';
  /** The key of the button clicked. */
  button: string;
  /** `msg.outcome`: `new`, `existing`, or on an error `refused`, `notSent`, `outcomeUnknown`. */
  outcome?: string;
  tx_id?: string;
  status?: string;
  code?: string;
  message?: string;
}

/**
 * The payment nodes on their own tab `paytab`, on the config node `FLOW_IDS.config`: a button per
 * key (`pay-<key>`, its msg.topic the key), each building the same withdrawal body (demo
 * ETH-TESTNET wallet to its whitelisted address, `partner_txID` `<prefix>-<key>`) into one
 * custody-withdraw node; outputs and errors as JSON lines in `payments.jsonl`.
 */
export function paymentNodes(sim: SimInfo, prefix: string, keys: string[]): object[] {
  const demo = sim.demo;
  const buttons = keys.flatMap((key, i) => [
    { id: `pay-${key}`, z: 'paytab', type: 'inject', name: `pay ${key}`, props: [{ p: 'payload' }, { p: 'topic', vt: 'str' }], topic: key, payload: '', payloadType: 'date', x: 120, y: 80 + 60 * i, wires: [[`body-${key}`]] },
    functionNode(
      `body-${key}`,
      `withdrawal ${key}`,
      `msg.payload = ${JSON.stringify({
        wallet_id: demo.wallets['ETH-TESTNET'].wallet_id,
        address: demo.whitelist['ETH-TESTNET'],
        benefit_of: 'Scale-out',
        account_no: 'SCALE',
        reference: `scale-out payment ${key}`,
        partner_txID: `${prefix}-${key}`,
        send: { symbol: 'ETH-TESTNET', amount: 1000 },
      })};\nreturn msg;`,
      { z: 'paytab', x: 300, y: 80 + 60 * i },
      ['withdraw'],
    ),
  ]);
  return [
    { id: 'paytab', type: 'tab', label: 'scale-out payment' },
    ...buttons,
    { id: 'withdraw', z: 'paytab', type: 'custody-withdraw', connection: FLOW_IDS.config, operation: 'create', company_id: demo.company_id, expiresAfter: '3600', amountFormat: 'baseUnits', x: 500, y: 80, wires: [['recordOut']] },
    functionNode('recordOut', 'output line', 'msg.payload = { node: "withdraw", button: msg.topic, outcome: msg.outcome, tx_id: msg.payload && msg.payload.tx_id, status: msg.payload && msg.payload.status };\nreturn msg;', { z: 'paytab', x: 700, y: 80 }, ['payfile']),
    catchNode('paycatch', { z: 'paytab', x: 120, y: 300 }, ['recordErr']),
    functionNode('recordErr', 'error line', 'const e = msg.error || {};\nmsg.payload = { node: "error", button: msg.topic, outcome: msg.outcome, code: e.code, message: e.message };\nreturn msg;', { z: 'paytab', x: 300, y: 300 }, ['payfile']),
    fileNode('payfile', 'payments.jsonl', { z: 'paytab', x: 900, y: 80 }),
  ];
}

/**
 * The whole payment flow: the scale-out config node (environment `custom`, base URL from
 * {@link BASE_URL_ENV}, the coordination properties `coordination`: bench/scale-out.ts
 * `coordinationSettings`) and {@link paymentNodes}.
 */
export function paymentFlows(sim: SimInfo, coordination: Record<string, unknown>, prefix: string, keys: string[]): object[] {
  return [
    { id: FLOW_IDS.config, type: 'custody-config', name: 'scale-out', environment: 'custom', baseUrl: '${' + BASE_URL_ENV + '}', signingMode: 'timestamp', timeout: 30, ...coordination },
    ...paymentNodes(sim, prefix, keys),
  ];
}

/** The lines of an instance's payments.jsonl so far (a line cut short by a kill is left out). */
export function paymentLines(instance: Instance): PaymentLine[] {
  return jsonLines<PaymentLine>(instance, 'payments.jsonl');
}

/**
 * Click the button of `key` on `instance` (`POST /inject/pay-<key>`).
 * @throws {Error} when Node-RED does not answer 200.
 */
export async function clickPay(instance: Instance, key: string): Promise<void> {
  const res = await fetch(`${instance.red.base}/inject/pay-${key}`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`click ${key} on ${instance.name}: ${res.status}`);
}
