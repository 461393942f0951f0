/**
 * The lean transport (lib/client/transport.ts; docs/performance.md, the transport group): many
 * requests at once without a MaxListenersExceededWarning, close() aborting every request in flight,
 * nonce mode with hundreds of concurrent requests never refused and nonces on the wire in
 * increasing order (retries included), and proxies used exactly when the environment names one.
 * Real simulator and real loopback servers over real sockets, the simulator's own RSA key.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, CustodyClient, createTransfer, listAssets } from '../../lib';
import { proxyFromEnv } from '../../lib/client/transport';
import { until, demoTransfer } from '../helpers/support';
import { accountClient, startSimulated, stopSimulated, type SimulatedAccount } from '../helpers/simulated';

/** Collects the process warnings emitted while it is on. */
function warningsSeen(): { list: Error[]; stop: () => Promise<Error[]> } {
  const list: Error[] = [];
  const on = (w: Error) => list.push(w);
  process.on('warning', on);
  return {
    list,
    // Warnings are emitted on the next tick: let them land first.
    stop: async () => {
      await new Promise((r) => setImmediate(r));
      process.off('warning', on);
      return list;
    },
  };
}

/** A loopback server; `handle` answers (or holds) each request. */
async function loopbackServer(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ server: http.Server; url: string; close: () => Promise<void> }> {
  const server = http.createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('lean transport', function () {
  this.timeout(120000);
  let s: SimulatedAccount;

  before(async () => {
    s = await startSimulated('cf-transport-', { persist: false });
  });

  after(async () => {
    await stopSimulated(s);
  });

  it('answers 250 signed requests made at once with no MaxListenersExceededWarning', async () => {
    const client = accountClient(s.sim);
    const warnings = warningsSeen();
    try {
      const answers = await Promise.all(Array.from({ length: 250 }, (_, i) => (i % 2 ? listAssets(client) : client.request('GET', '/assets', { idempotent: true }))));
      assert.equal(answers.length, 250);
      assert.ok(answers.every((a) => a.statusCode === 200));
    } finally {
      await client.close();
    }
    const seen = await warnings.stop();
    assert.deepEqual(seen.map((w) => `${w.name}: ${w.message}`), []);
  });

  it('close(graceMs) lets a request on the wire finish with its answer, refuses new ones at once, and cuts the rest after the grace', async () => {
    const held: http.ServerResponse[] = [];
    let received = 0;
    const server = await loopbackServer((req, res) => {
      received++;
      if (req.url?.includes('/slow')) setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":200,"msg":"OK"}'), 300);
      else held.push(res);
    });
    const client = new CustodyClient({ baseUrl: `${server.url}/api/v1/p`, apiKey: 'k', unsigned: true, attempts: 1 });
    try {
      const slow = client.request('PUT', '/coreclient/c/action/slow');
      const stuck = client.request('PUT', '/coreclient/c/action/stuck').then(() => assert.fail('answered'), (e: unknown) => e);
      await until(() => received === 2 || undefined, 'both requests on the wire');
      const closing = client.close(1500);
      // New requests are refused at once, unsent.
      await assert.rejects(client.request('GET', '/assets'), (e: unknown) => e instanceof ApiError && e.code === 'ECLOSED' && e.failure === 'notSent');
      // The slow call finishes within the grace: its answer counts (a redeploy does not cut it in half).
      assert.equal((await slow).statusCode, 200);
      // The stuck one is cut when the grace ends: its outcome is unknown.
      const e = await stuck;
      assert.ok(e instanceof ApiError && e.code === 'ECLOSED' && e.failure === 'outcomeUnknown', String(e));
      await closing;
      assert.equal(received, 2);
    } finally {
      await server.close();
    }
  });

  it('close() aborts 220 requests in flight: each rejects ECLOSED with an unknown outcome, no warning, nothing left on the wire', async () => {
    const held = new Set<http.ServerResponse>();
    let received = 0;
    let ended = 0;
    const server = await loopbackServer((req, res) => {
      received++;
      held.add(res);
      req.socket.once('close', () => ended++);
    });
    const client = new CustodyClient({ baseUrl: `${server.url}/api/v1/p`, apiKey: 'k', unsigned: true, attempts: 3 });
    const warnings = warningsSeen();
    try {
      const calls = Array.from({ length: 220 }, (_, i) =>
        client.request('GET', `/company/c${i}`, { idempotent: i % 2 === 0 }).then(
          () => assert.fail('answered'),
          (e: unknown) => e,
        ),
      );
      await until(() => received === 220 || undefined, 'all 220 requests on the wire', 30000);
      await client.close();
      const errors = await Promise.all(calls);
      for (const e of errors) {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.code, 'ECLOSED');
        assert.equal(e.failure, 'outcomeUnknown');
      }
      // Every connection was closed by the client; no retry was sent after close().
      await until(() => ended === 220 || undefined, 'all 220 connections closed', 30000);
      assert.equal(received, 220);
      // A request made after close() is refused without being sent.
      await assert.rejects(client.request('GET', '/assets'), (e: unknown) => e instanceof ApiError && e.code === 'ECLOSED' && e.failure === 'notSent');
      assert.equal(received, 220);
    } finally {
      await server.close();
    }
    const seen = await warnings.stop();
    assert.deepEqual(seen.map((w) => `${w.name}: ${w.message}`), []);
  });

  it('sends 200 concurrent nonce-mode requests (transfers and reads) that the simulator all accepts, raising the nonce mark of the key', async () => {
    const client = accountClient(s.sim, { signingMode: 'nonce' });
    const apiKey = s.sim.account.apiKey;
    const before = BigInt(s.sim.engine.state.nonceMarks[apiKey] ?? '0');
    const warnings = warningsSeen();
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) =>
          i % 4 === 0
            ? listAssets(client)
            : createTransfer(client, demoTransfer(s.sim, { reference: `nonce ${i}`, partner_txID: `nonce-200-${process.pid}-${i}` })),
        ),
      );
      const refused = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      assert.deepEqual(refused, []);
      // Each createTransfer checks the asset codes once (cached), so at least 200 nonces were used.
      const after = BigInt(s.sim.engine.state.nonceMarks[apiKey]);
      assert.ok(after > before);
    } finally {
      await client.close();
    }
    assert.deepEqual((await warnings.stop()).map((w) => w.message), []);
  });

  it('nonce mode: two clients of one key (two config nodes) send 150 requests each at once, none refused', async () => {
    const a = accountClient(s.sim, { signingMode: 'nonce' });
    const b = accountClient(s.sim, { signingMode: 'nonce' });
    try {
      const results = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).request('GET', '/assets', { idempotent: true })));
      assert.deepEqual(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), []);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('nonce mode: nonces reach the server in increasing order, and a retried request is signed again with a new nonce', async () => {
    const seen: string[] = [];
    let answered = 0;
    const server = await loopbackServer((req, res) => {
      seen.push(String(req.headers['x-nonce']));
      // The first 30 requests fail with 503 (retried: idempotent), the rest answer 200.
      req.resume();
      req.on('end', () => {
        const fail = answered++ < 30;
        res.writeHead(fail ? 503 : 200, { 'content-type': 'application/json' });
        res.end(fail ? '{"code":503,"msg":"Service Unavailable","detail":{}}' : '{}');
      });
    });
    // Any RSA key will do: this server does not verify signatures; it records the nonces.
    const client = new CustodyClient({ baseUrl: `${server.url}/api/v1/p`, apiKey: `order-test-${process.pid}`, privateKey: s.sim.account.privateKeyPem, signingMode: 'nonce', attempts: 3, retryDelayMs: 1 });
    try {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => client.request('POST', `/company/c${i}/x`, { body: { i }, idempotent: true })));
      assert.equal(answers.length, 100);
      assert.equal(seen.length, 130);
      const nonces = seen.map((n) => BigInt(n));
      for (let i = 1; i < nonces.length; i++) assert.ok(nonces[i] > nonces[i - 1], `nonce ${i} (${nonces[i]}) not above ${nonces[i - 1]}`);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('goes through the proxy named by HTTP_PROXY (NO_PROXY honoured) when the client is created with it set, and never otherwise', async () => {
    let proxied = 0;
    // A forwarding HTTP proxy: absolute-URI requests in, the same request (Host kept) out.
    const proxy = await loopbackServer((req, res) => {
      proxied++;
      const target = new URL(req.url!);
      const out = http.request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(out);
    });
    const names = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY'];
    const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
    try {
      for (const n of names) delete process.env[n];
      assert.equal(proxyFromEnv(), false);
      const direct = accountClient(s.sim);
      await listAssets(direct);
      assert.equal(proxied, 0);

      process.env.HTTP_PROXY = proxy.url;
      assert.equal(proxyFromEnv(), undefined);
      // Set after a client was created without one: not seen by that client (decided once, documented).
      await listAssets(direct);
      await direct.close();
      assert.equal(proxied, 0);
      const viaProxy = accountClient(s.sim);
      // Signed for the simulator's URL; the simulator verifies what the proxy forwards.
      const answer = await createTransfer(viaProxy, demoTransfer(s.sim, { reference: 'via proxy' }));
      assert.equal(answer.data.status, 'new');
      const through = proxied;
      assert.ok(through >= 1);
      await listAssets(viaProxy);
      assert.equal(proxied, through + 1);
      // NO_PROXY is honoured per request (axios's own rules) by a client made with a proxy.
      process.env.NO_PROXY = '127.0.0.1';
      await listAssets(viaProxy);
      assert.equal(proxied, through + 1);
      await viaProxy.close();
    } finally {
      for (const n of names) {
        if (saved[n] === undefined) delete process.env[n];
        else process.env[n] = saved[n];
      }
      await proxy.close();
    }
  });
});
