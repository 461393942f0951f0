/**
 * The simulator's partner_txID index is per kind of transaction (transfer, withdrawal, swap make,
 * swap take), and older state files keyed per company only still load; proven over real sockets
 * (the real simulator, the signed CustodyClient of lib, real RSA keys).
 */
import '../helpers/isolated-dirs';
import '../helpers/red-catalogs';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator } from '../../simulator';
import { CustodyClient } from '../../lib';
import { controlCall } from '../helpers/support';
import { accountClient, signedCall } from '../helpers/simulated';
import { bodyOf, swapQuoteRequest, transferRequest, uniqueId, withdrawalRequest } from '../helpers/requests';

/** A signed call; an API error answer is returned, not thrown. */
const api = signedCall;

describe('simulator partner_txID idempotency is per kind of transaction', function () {
  this.timeout(60000);
  let dataDir: string;
  let sim: Simulator;
  let client: CustodyClient;
  let now: number;

  const fields = (partner_txID: string) => ({ expires: now + 3600, reference: 'idempotency per kind', partner_txID });
  const transfer = (partner_txID: string) => bodyOf(transferRequest(sim.demo, { ...fields(partner_txID), send: { symbol: 'BTC-TESTNET', amount: 1000 } }));
  const withdrawal = (partner_txID: string, address = sim.demo.whitelist['ETH-TESTNET']) =>
    bodyOf(withdrawalRequest(sim.demo, { ...fields(partner_txID), wallet_id: sim.demo.wallets['ETH-TESTNET'].wallet_id, address, benefit_of: 'Beneficiary', account_no: 'ACC-9', send: { symbol: 'ETH-TESTNET', amount: 1000 } }));
  const make = (partner_txID: string) => bodyOf(swapQuoteRequest(sim.demo, { ...fields(partner_txID), receive: { symbol: 'ETH-TESTNET', amount: 2000 }, add_to_liquidity_hub: false }));

  async function start(): Promise<void> {
    sim = await Simulator.start({ dataDir, port: 0 });
    client = accountClient(sim);
    now = (await controlCall(sim, 'GET', '/clock')).body.now;
  }
  async function stop(): Promise<void> {
    client?.close();
    await sim?.stop();
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-review-'));
    await start();
  });

  after(async () => {
    await stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a withdrawal or swap quote with the partner_txID of an earlier transfer is its own transaction', async () => {
    const c = sim.demo.company_id;
    const p1 = uniqueId('P1');
    const t = await api(client, 'POST', `/company/${c}/transfer`, transfer(p1));
    assert.equal(t.data.status, 'new', JSON.stringify(t.data));

    // not whitelisted: refused like any other withdrawal, not answered with the transfer
    const refused = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p1, 'tb1qnotwhitelisted0000000000000000000000000'));
    assert.equal(refused.status, 400, JSON.stringify(refused.data));
    assert.match(refused.data.detail.reason, /^address: /);

    const w = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p1));
    assert.equal(w.status, 200, JSON.stringify(w.data));
    assert.equal(w.data.status, 'new');
    assert.notEqual(w.data.tx_id, t.data.tx_id);
    assert.equal((await api(client, 'GET', `/company/${c}/withdraw/${w.data.tx_id}`)).status, 200);

    const m = await api(client, 'POST', `/company/${c}/atomicswap/make`, make(p1));
    assert.equal(m.data.status, 'new', JSON.stringify(m.data));
    assert.ok(![t.data.tx_id, w.data.tx_id].includes(m.data.tx_id));

    // each kind still answers its own repeat with its own transaction
    assert.deepEqual((await api(client, 'POST', `/company/${c}/transfer`, transfer(p1))).data, { tx_id: t.data.tx_id, status: 'existing' });
    assert.deepEqual((await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p1))).data, { tx_id: w.data.tx_id, status: 'existing' });
    const again = await api(client, 'POST', `/company/${c}/atomicswap/make`, make(p1));
    assert.equal(again.data.status, 'existing');
    assert.equal(again.data.tx_id, m.data.tx_id);
  });

  it('a state file with the old index (company and partner_txID only) still loads and keeps its idempotency', async () => {
    const c = sim.demo.company_id;
    const p2 = uniqueId('P2');
    const p3 = uniqueId('P3');
    const t = await api(client, 'POST', `/company/${c}/transfer`, transfer(p2));
    const w = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p3));
    assert.equal(t.data.status, 'new');
    assert.equal(w.data.status, 'new');
    await stop();

    // Rewrite the index as an older simulator wrote it: `company_id\npartner_txID`.
    const file = path.join(dataDir, 'state.json');
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    const old: Record<string, string> = {};
    for (const [key, txId] of Object.entries(state.partnerTxIndex as Record<string, string>)) {
      old[key.startsWith('coreclient:') ? key : key.split('\n').slice(1).join('\n')] = txId;
    }
    assert.equal(old[`${c}\n${p2}`], t.data.tx_id, 'the old form of the transfer key');
    state.partnerTxIndex = old;
    fs.writeFileSync(file, JSON.stringify(state));

    await start();
    assert.deepEqual((await api(client, 'POST', `/company/${c}/transfer`, transfer(p2))).data, { tx_id: t.data.tx_id, status: 'existing' });
    assert.deepEqual((await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p3))).data, { tx_id: w.data.tx_id, status: 'existing' });
    const other = await api(client, 'POST', `/company/${c}/withdraw`, withdrawal(p2));
    assert.equal(other.data.status, 'new');
    assert.notEqual(other.data.tx_id, t.data.tx_id);
  });
});
