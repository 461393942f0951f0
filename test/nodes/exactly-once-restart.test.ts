/**
 * Exactly-once payments across a Node-RED crash and a redeploy (docs/nodes.md "Retries: the three
 * failure kinds", the submission journal), with real parts: a `node-red` process with the pack, the
 * simulator over real sockets (deduping transfers only, as the spec promises), and a loopback proxy
 * between them that can hold an answer after the simulator has committed the request.
 *
 * - A withdrawal is in flight, committed, its answer held, when Node-RED is killed (SIGKILL).
 *   After the restart the same button is refused (outcome unknown, nothing sent); `resolve` finds
 *   the withdrawal; the button then answers `existing` from the journal. One withdrawal.
 * - A transfer is in flight, committed, its answer held, when the flow is redeployed. After the
 *   redeploy the same button sends the same transfer again and the API answers `existing` with
 *   the first `tx_id`. One transfer.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Simulator } from '../../simulator';
import { CustodyClient } from '../../lib';
import { RedProcess, sleep } from '../helpers/red-process';
import { catchNode, fileNode, functionNode, jsonataPayloadNode } from '../helpers/flow-nodes';

const CFG = 'cfg00000000000e1';
const ADDRESS = 'tb1qexactlyoncerestart000000000000000000';

/** A loopback proxy that forwards to the simulator and, while `hold` matches, keeps the answer of a committed request back. */
class HoldingProxy {
  /** Requests forwarded, as `METHOD /path`. */
  readonly forwarded: string[] = [];
  /** Requests whose answer is held (forwarded and answered by the simulator, not passed on). */
  readonly held: string[] = [];
  /** Hold answers of POSTs whose path ends with this (none when undefined). */
  hold: string | undefined;
  url = '';
  readonly #server: http.Server;

  constructor(target: URL) {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const line = `${req.method} ${req.url!.split('?')[0]}`;
        this.forwarded.push(line);
        const holding = req.method === 'POST' && this.hold !== undefined && req.url!.split('?')[0].endsWith(this.hold);
        const out = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
          const body: Buffer[] = [];
          up.on('data', (c) => body.push(c));
          up.on('end', () => {
            if (holding) {
              this.held.push(line);
              return; // committed by the simulator; the client never hears of it
            }
            res.writeHead(up.statusCode!, up.headers);
            res.end(Buffer.concat(body));
          });
        });
        out.end(Buffer.concat(chunks));
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

/** The flow: buttons for a withdrawal, a transfer and a resolve, every outcome appended to `outFile`. */
function flowsFor(baseUrl: string, sim: Simulator, outFile: string, credentials?: object): object[] {
  const demo = sim.demo;
  const record = (id: string, label: string) =>
    functionNode(
      id,
      `record ${label}`,
      `msg.payload = { node: ${JSON.stringify(label)}, outcome: msg.outcome, payload: msg.payload, error: msg.error ? { code: msg.error.code, message: msg.error.message } : undefined };\nreturn msg;`,
      { z: 'tab', x: 600, y: 100 },
      ['file'],
    );
  return [
    { id: 'tab', type: 'tab', label: 'exactly once' },
    { id: CFG, type: 'custody-config', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: 30, ...(credentials ? { credentials } : {}) },
    { id: 'pay', z: 'tab', type: 'inject', name: 'withdraw INV-1', props: [{ p: 'payload' }], payload: JSON.stringify({ invoice: 'INV-1' }), payloadType: 'json', x: 100, y: 100, wires: [['shapeWd']] },
    jsonataPayloadNode('shapeWd', `{"wallet_id": "${demo.wallets['BTC-TESTNET'].wallet_id}", "address": "${ADDRESS}", "benefit_of": "b", "account_no": "a", "reference": "restart withdraw " & payload.invoice, "partner_txID": "wd-" & payload.invoice, "send": {"symbol": "BTC-TESTNET", "amount": 10000}}`, { z: 'tab', x: 250, y: 100 }, ['wd']),
    { id: 'wd', z: 'tab', type: 'custody-withdraw', connection: CFG, operation: 'create', company_id: demo.company_id, expiresAfter: '3600', amountFormat: 'baseUnits', x: 400, y: 100, wires: [['recWd']] },
    record('recWd', 'withdraw'),
    { id: 'resolveBtn', z: 'tab', type: 'inject', name: 'resolve INV-1', props: [{ p: 'payload' }], payload: JSON.stringify({ partner_txID: 'wd-INV-1' }), payloadType: 'json', x: 100, y: 200, wires: [['resolve']] },
    { id: 'resolve', z: 'tab', type: 'custody-withdraw', connection: CFG, operation: 'resolve', company_id: demo.company_id, x: 400, y: 200, wires: [['recResolve']] },
    record('recResolve', 'resolve'),
    { id: 'send', z: 'tab', type: 'inject', name: 'transfer INV-2', props: [{ p: 'payload' }], payload: JSON.stringify({ invoice: 'INV-2' }), payloadType: 'json', x: 100, y: 300, wires: [['shapeTx']] },
    jsonataPayloadNode(
      'shapeTx',
      `{"wallet_id": "${demo.wallets['BTC-TESTNET'].wallet_id}", "counterparty_wallet_address": "${demo.counterparty.wallets['BTC-TESTNET'].wallet_id}", "benefit_of": "b", "account_no": "a", "reference": "restart transfer " & payload.invoice, "partner_txID": "tx-" & payload.invoice, "send": {"symbol": "BTC-TESTNET", "amount": 10000}}`,
      { z: 'tab', x: 250, y: 300 },
      ['tx'],
    ),
    { id: 'tx', z: 'tab', type: 'custody-transfer', connection: CFG, operation: 'create', company_id: demo.company_id, expiresAfter: '3600', amountFormat: 'baseUnits', x: 400, y: 300, wires: [['recTx']] },
    record('recTx', 'transfer'),
    catchNode('catch', { z: 'tab', x: 100, y: 400 }, ['recErr']),
    record('recErr', 'error'),
    fileNode('file', outFile, { z: 'tab', x: 800, y: 100 }),
  ];
}

describe('exactly-once payments across a Node-RED crash and a redeploy', function () {
  this.timeout(180000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-once-sim-'));
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-once-out-'));
  const outFile = path.join(outDir, 'out.jsonl');
  const red = new RedProcess({ prefix: 'cf-once-red-' });
  let sim: Simulator;
  let proxy: HoldingProxy;
  let client: CustodyClient;
  let flows: object[];

  before(async () => {
    sim = await Simulator.start({ dataDir, port: 0, dedupe: 'transfers' });
    client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem });
    await client.request('POST', `/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/whitelist`, { body: { name: 'restart test', asset: 'BTC-TESTNET', address: ADDRESS } });
    proxy = new HoldingProxy(new URL(sim.baseUrl));
    await proxy.start();
    await red.start();
    flows = flowsFor(`${proxy.url}/api/v1/p`, sim, outFile);
    await deploy(flowsFor(`${proxy.url}/api/v1/p`, sim, outFile, { apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem }));
  });
  after(async () => {
    await red.stop();
    await proxy?.stop();
    await client?.close();
    await sim?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  async function deploy(f: object[]): Promise<void> {
    const res = await fetch(`${red.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' }, body: JSON.stringify(f) });
    assert.ok(res.status === 200 || res.status === 204, `deploy: ${res.status} ${await res.text()}`);
    await sleep(300);
  }
  const outputs = (): any[] => (fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
  async function click(id: string): Promise<void> {
    assert.equal((await fetch(`${red.base}/inject/${id}`, { method: 'POST' })).status, 200);
  }
  async function waitFor<T>(what: string, check: () => T | undefined): Promise<T> {
    const deadline = Date.now() + 30000;
    for (;;) {
      const v = check();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; outputs ${JSON.stringify(outputs())}; proxy ${proxy.forwarded.join(', ')}\n${red.log.slice(-2000)}`);
      await sleep(100);
    }
  }
  /** The next output after `from` of node `label`. */
  const next = (label: string, from: number) => waitFor(`an output of ${label}`, () => outputs().slice(from).find((o) => o.node === label || (o.node === 'error' && label !== 'resolve')));
  /** Ledger entries of the demo BTC wallet whose reference is `reference` (pending ones included). */
  async function ledgerEntries(reference: string): Promise<any[]> {
    const res = await client.request<{ List: any[] }>('GET', `/funds/${sim.demo.fund_id}/ledger`, { query: { wallet_id: sim.demo.wallets['BTC-TESTNET'].wallet_id, direction: 'out' } });
    return res.data.List.filter((e) => e.reference === reference);
  }
  const posts = (suffix: string) => proxy.forwarded.filter((l) => l.startsWith('POST') && l.endsWith(suffix)).length;

  it('a withdrawal whose answer was lost to a crash is not sent again: refused until resolved, then answered from the journal', async () => {
    proxy.hold = '/withdraw';
    await click('pay');
    await waitFor('the withdrawal committed, its answer held', () => proxy.held.length === 1);
    red.child!.kill('SIGKILL');
    await new Promise((r) => red.child!.once('exit', r));
    proxy.hold = undefined;
    await red.start();
    await sleep(500);

    let from = outputs().length;
    await click('pay');
    const refused = await next('withdraw', from);
    assert.equal(refused.node, 'error', JSON.stringify(refused));
    assert.equal(refused.error.code, 'EOUTCOMEUNKNOWN');
    assert.equal(refused.outcome, 'outcomeUnknown');
    assert.match(refused.error.message, /outcome unknown: withdrawal partner_txID "wd-INV-1" of company demo-company/);
    assert.equal(posts('/withdraw'), 1, 'nothing sent again');

    from = outputs().length;
    await click('resolveBtn');
    const resolved = await next('resolve', from);
    assert.equal(resolved.payload.result, 'found', JSON.stringify(resolved));
    const [made] = await ledgerEntries('restart withdraw INV-1');
    assert.equal(resolved.payload.tx_id, made.TxID);

    from = outputs().length;
    await click('pay');
    const existing = await next('withdraw', from);
    assert.deepEqual([existing.node, existing.outcome, existing.payload.tx_id, existing.payload.status], ['withdraw', 'existing', made.TxID, 'existing']);
    assert.equal(posts('/withdraw'), 1, 'answered from the journal');
    assert.equal((await ledgerEntries('restart withdraw INV-1')).length, 1, 'one withdrawal');
  });

  it('a transfer whose answer was lost to a redeploy is sent again after it, and the API answers existing', async () => {
    proxy.hold = '/transfer';
    let from = outputs().length;
    await click('send');
    await waitFor('the transfer committed, its answer held', () => proxy.held.length === 2);
    // The same flows again: every node restarts; the request in flight is abandoned (its error goes
    // to the Catch node of a flow that is stopping, so it may or may not be recorded).
    await deploy(flows);
    proxy.hold = undefined;
    assert.equal(outputs().slice(from).filter((o) => o.node === 'transfer').length, 0, 'no answer came');

    from = outputs().length;
    await click('send');
    const again = await next('transfer', from);
    const [made] = await ledgerEntries('restart transfer INV-2');
    assert.deepEqual([again.node, again.outcome, again.payload.status, again.payload.tx_id], ['transfer', 'existing', 'existing', made.TxID]);
    assert.equal(posts('/transfer'), 2, 'the held request and one re-send');
    assert.equal((await ledgerEntries('restart transfer INV-2')).length, 1, 'one transfer');
  });
});
