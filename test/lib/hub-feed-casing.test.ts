/**
 * The liquidity hub feed accepts `TxID`/`Status` (spec section 6) as well as `txID`/`status`
 * (the OpenAPI's spelling) and passes each message on as received, over the real signed
 * websocket of the simulator.
 */
import '../helpers/isolated-dirs';
import '../helpers/red-catalogs';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Simulator } from '../../simulator';
import { CustodyClient, type HubFeedMessage } from '../../lib';
import { HubFeed } from '../../lib/feeds';
import { until } from '../helpers/support';
import { simulatedSuite } from '../helpers/simulated';
import { CHECK_ENV } from '../../simulator/response-check';
import { violationReport } from '../helpers/response-check';

describe('the liquidity hub feed takes TxID and Status (spec section 6) as well as txID and status', function () {
  this.timeout(60000);
  let sim: Simulator;
  let client: CustodyClient;
  simulatedSuite('cf-review-hub-', {}, (s) => ({ sim, client } = s));

  it('emits both casings as received over the real signed websocket and drops a message with neither', async () => {
    const hub = new HubFeed(client, { minDelayMs: 50, maxDelayMs: 200 });
    const quotes: HubFeedMessage[] = [];
    const errors: Error[] = [];
    hub.on('quote', (m: HubFeedMessage) => quotes.push(m));
    hub.on('error', (e: Error) => errors.push(e));
    try {
      hub.start();
      await until(() => (hub.state === 'connected' ? true : undefined), 'hub feed connected');
      const notes = { txID: `swap-${process.pid}-a`, status: 'taker_pending' };
      const spec = { TxID: `swap-${process.pid}-b`, Status: 'taker_pending' };
      const neither = { tx_id: `swap-${process.pid}-c`, status: 'taker_pending' };
      const last = { txID: `swap-${process.pid}-d`, status: 'taker_pending' };
      // What the engine sends on the hub socket, verbatim (its own messages use txID/status).
      // `neither` breaks the hub feed schema on purpose: its violation goes to a file of this
      // test (the response check, test/helpers/response-check.ts), not to the run's.
      const runFile = process.env[CHECK_ENV];
      const ownFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cf-hub-casings-')), 'violations.jsonl');
      process.env[CHECK_ENV] = ownFile;
      try {
        for (const m of [notes, spec, neither, last]) sim.engine.emit('hub', m as any);
        await until(() => (quotes.length >= 3 ? true : undefined), 'three quotes');
      } finally {
        process.env[CHECK_ENV] = runFile;
      }
      assert.deepEqual(
        violationReport(ownFile).map((l) => l.split(':')[0]),
        ['feed hub'],
        'the message with neither id is the one violation',
      );
      assert.deepEqual(quotes, [notes, spec, last], 'as received, nothing renamed; the message with neither id dropped');
      assert.equal(errors.length, 1);
      assert.equal(errors[0].message, 'liquidity hub feed: a message without txID or TxID was ignored');
    } finally {
      await hub.stop();
    }
  });
});
