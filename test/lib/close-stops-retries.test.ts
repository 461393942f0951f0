/**
 * Closing a client stops its retries: a redeploy leaves no request of the old flow running
 * (lib/client/transport.ts, against a counting stand-in server).
 */
import '../helpers/isolated-dirs';
import '../helpers/red-catalogs';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { ApiError, CustodyClient } from '../../lib';
import { until } from '../helpers/support';
import { countingServer } from '../helpers/counting-server';

const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const apiKey = 'cmV2aWV3LWZpeGVzLWtleS1ub3QtcmVhbA==';

describe('close() stops in-flight retries', function () {
  this.timeout(30000);
  const server = countingServer();
  before(() => server.start());
  after(() => server.stop());

  it('a GET retrying against 503 is ended by close(): it rejects with ECLOSED and no attempt follows', async () => {
    server.seen.length = 0;
    server.status = 503;
    // Long waits between attempts: without close() it would try 6 times in ~3 s. (GET /exchanges:
    // the counting server answers GET /assets 200 whatever its status, for the asset check.)
    const client = new CustodyClient({ baseUrl: server.baseUrl, apiKey, privateKey: pem, attempts: 6, retryDelayMs: 400 });
    const pending = client.request('GET', '/exchanges', { idempotent: true });
    const outcome = pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    await until(() => (server.seen.length >= 1 ? true : undefined), 'the first attempt');
    await client.close();
    const atClose = server.seen.length;
    const err = (await outcome) as ApiError;
    assert.ok(err instanceof ApiError, `rejected with an ApiError, got ${String(err)}`);
    assert.equal(err.code, 'ECLOSED');
    assert.equal(err.statusCode, 0);
    assert.match(err.message, /^GET \/exchanges: no response the client was closed/);
    assert.ok(!err.message.includes(apiKey));
    // Longer than every wait the retries had left (at most 400+800+1600+3200+6400 ms is not needed:
    // the loop has ended, so none can come); a short pause shows none arrives late.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(server.seen.length, atClose, 'no attempt after close()');
    assert.ok(atClose < 6, 'close() ended the retries before they ran out');
    // Afterwards nothing is sent at all.
    await assert.rejects(client.request('GET', '/exchanges', { idempotent: true }), (e: ApiError) => e.code === 'ECLOSED');
    assert.equal(server.seen.length, atClose);
  });
});
