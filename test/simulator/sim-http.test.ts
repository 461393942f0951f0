/**
 * The simulator's HTTP layer on `router` and node:http (simulator/http.ts) answers as it did on
 * express 5: the 1 MB body limit (413 with its section 7 body, declared or chunked), compressed
 * bodies, query values as text, paths with or without a trailing `/` and in any case, HEAD with
 * headers only, OPTIONS and unknown paths 404 with the section 7 body, JSON headers without
 * `X-Powered-By` or `ETag`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { loadPrivateKey, sign } from '../../lib/client/signing';
import type { Simulator } from '../../simulator';
import { simulatedSuite } from '../helpers/simulated';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One raw request: `chunks` are written one by one (chunked), else `body` at once. */
function request(port: number, method: string, p: string, headers: Record<string, string | number> = {}, body?: Buffer | string, chunks?: Buffer[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    if (chunks) {
      void (async () => {
        for (const c of chunks) await new Promise((r) => req.write(c, r));
        req.end();
      })();
    } else req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const TOO_LARGE = { code: 413, msg: 'Payload Too Large', detail: { reason: 'body: larger than 1 MB' } };

describe('simulator HTTP layer (router on node:http)', function () {
  this.timeout(60000);
  let sim: Simulator;
  let port: number;
  simulatedSuite('cf-sim-http-', { persist: false }, (s) => {
    sim = s.sim;
    port = sim.port;
  });

  it('answers JSON with its length, without X-Powered-By or ETag', async () => {
    const a = await request(port, 'GET', '/_simulator/clock');
    assert.equal(a.status, 200);
    assert.equal(a.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(Number(a.headers['content-length']), Buffer.byteLength(a.text));
    assert.equal(a.headers['x-powered-by'], undefined);
    assert.equal(a.headers.etag, undefined);
    assert.deepEqual(Object.keys(JSON.parse(a.text)), ['now', 'offset_seconds']);
  });

  it('matches a path with or without a trailing slash and in any case; HEAD answers the headers of GET', async () => {
    const get = await request(port, 'GET', '/_simulator/clock');
    for (const p of ['/_simulator/clock/', '/_SIMULATOR/Clock']) assert.equal((await request(port, 'GET', p)).status, 200, p);
    const head = await request(port, 'HEAD', '/_simulator/clock');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    assert.equal(head.headers['content-type'], 'application/json; charset=utf-8');
  });

  it('answers OPTIONS and unknown paths 404 with the section 7 body', async () => {
    assert.deepEqual(JSON.parse((await request(port, 'OPTIONS', '/_simulator/clock')).text), { code: 404, msg: 'Not Found', detail: { reason: 'path: no control endpoint OPTIONS /_simulator/clock' } });
    const unknown = await request(port, 'GET', '/nothing/here?q=1');
    assert.equal(unknown.status, 404);
    assert.deepEqual(JSON.parse(unknown.text), { code: 404, msg: 'Not Found', detail: { reason: 'path: no route GET /nothing/here' } });
    const head = await request(port, 'HEAD', '/nothing');
    assert.equal(head.status, 404);
    assert.equal(head.text, '');
    const v2 = await request(port, 'GET', '/api/v2/nothing?a=1', { 'x-token': sim.v2.token });
    assert.deepEqual(JSON.parse(v2.text), { code: 404, msg: 'Not Found', detail: { reason: 'path: no route GET /api/v2/nothing in the simulator' } });
    // A bad `%` escape in a path id is refused before any handler.
    const bad = await request(port, 'GET', '/api/v2/workspaces/%E0%A4%A/policies', { 'x-token': sim.v2.token });
    assert.deepEqual(JSON.parse(bad.text), { code: 400, msg: 'Bad Request', detail: { reason: 'body: could not be read' } });
  });

  it('reads query values as text: a repeated key is refused as a number, `+` and escapes decode', async () => {
    const bad = { code: 400, msg: 'Bad Request', detail: { reason: 'after: must be a non-negative integer' } };
    for (const q of ['after=abc', 'after=1&after=2', 'after=%zz']) assert.deepEqual(JSON.parse((await request(port, 'GET', `/_simulator/events?${q}`)).text), bad, q);
    const all = JSON.parse((await request(port, 'GET', '/_simulator/events')).text).events;
    assert.ok(all.length >= 2);
    assert.deepEqual(JSON.parse((await request(port, 'GET', '/_simulator/events?after=+1')).text).events, all.slice(1), '`+1` is ` 1`, a number');
    assert.deepEqual(JSON.parse((await request(port, 'GET', '/_simulator/events?after=%31#frag')).text).events, all.slice(1));
  });

  it('refuses a body over 1 MB with 413, declared or chunked, on any path; takes exactly 1 MB', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    const declared = await request(port, 'POST', '/_simulator/clock/advance', { ...JSON_TYPE, 'content-length': big.length }, big);
    assert.equal(declared.status, 413);
    assert.deepEqual(JSON.parse(declared.text), TOO_LARGE);
    const chunked = await request(port, 'POST', '/api/v1/p/fees', JSON_TYPE, undefined, [big.subarray(0, 500000), big.subarray(500000)]);
    assert.equal(chunked.status, 413);
    assert.deepEqual(JSON.parse(chunked.text), TOO_LARGE);
    assert.deepEqual(JSON.parse((await request(port, 'POST', '/nothing', { 'content-length': big.length }, big)).text), TOO_LARGE);
    const inflated = await request(port, 'POST', '/_simulator/clock/advance', { ...JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync(big));
    assert.deepEqual(JSON.parse(inflated.text), TOO_LARGE, 'the limit counts the decompressed bytes');
    const exact = Buffer.alloc(1024 * 1024, 0x20);
    const ok = await request(port, 'POST', '/api/v1/p/fees', { ...JSON_TYPE, 'content-length': exact.length }, exact);
    assert.equal(ok.status, 401, 'read, then refused by the authentication');
  });

  it('decompresses gzip, deflate and br bodies; refuses another content encoding and a bad gzip', async () => {
    const body = JSON.stringify({ seconds: 0 });
    for (const [enc, data] of [['gzip', zlib.gzipSync(body)], ['deflate', zlib.deflateSync(body)], ['br', zlib.brotliCompressSync(body)], ['IDENTITY', Buffer.from(body)]] as const) {
      const a = await request(port, 'POST', '/_simulator/clock/advance', { ...JSON_TYPE, 'content-encoding': enc }, data);
      assert.equal(a.status, 200, enc);
    }
    const unknown = await request(port, 'POST', '/_simulator/clock/advance', { ...JSON_TYPE, 'content-encoding': 'foo' }, body);
    assert.equal(unknown.status, 415);
    assert.deepEqual(JSON.parse(unknown.text), { code: 415, msg: 'Bad Request', detail: { reason: 'body: could not be read' } });
    const broken = await request(port, 'POST', '/_simulator/clock/advance', { ...JSON_TYPE, 'content-encoding': 'gzip' }, 'not gzip');
    assert.deepEqual(JSON.parse(broken.text), { code: 400, msg: 'Bad Request', detail: { reason: 'body: could not be read' } });
  });

  it('answers an injected fault before authentication', async () => {
    await request(port, 'POST', '/_simulator/faults/http', JSON_TYPE, JSON.stringify({ path: '/assets', status: 503, count: 1 }));
    const faulted = await request(port, 'GET', '/api/v1/p/assets?x=1');
    assert.equal(faulted.status, 503);
    assert.deepEqual(JSON.parse(faulted.text), { code: 503, msg: 'Service Unavailable', detail: { reason: 'injected fault' } });
    assert.equal((await request(port, 'GET', '/api/v1/p/assets')).status, 401, 'the fault was used up');
  });

  it('answers an operation without a body (whitelist add) 200 with Content-Length 0', async () => {
    const p = `/api/v1/p/company/${sim.demo.company_id}/fund/${sim.demo.fund_id}/whitelist`;
    const text = JSON.stringify({ name: 'http layer', asset: 'BTC-TESTNET', address: 'tb1qhttplayer0000000000000000000000000000' });
    const ts = String(Math.floor(Date.now() / 1000));
    const headers = { ...JSON_TYPE, 'x-api-key': sim.account.apiKey, 'x-timestamp': ts, 'x-sign': sign(loadPrivateKey(sim.account.privateKeyPem), { prefix: ts, url: `http://127.0.0.1:${port}${p}`, body: text }) };
    const a = await request(port, 'POST', p, headers, text);
    assert.equal(a.status, 200);
    assert.equal(a.text, '');
    assert.equal(a.headers['content-length'], '0');
    assert.equal(a.headers['content-type'], 'application/json; charset=utf-8');
  });
});
