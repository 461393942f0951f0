/**
 * The simulator's response check (simulator/response-check.ts) records a violation, and the
 * root hook (test/helpers/response-check.ts) reports it: under a test-only response schema that the
 * simulator's answer does not meet, the answer is appended to the check file, and the report
 * names the operation, the status and the violation. A conforming answer, or the check turned
 * off, records nothing. The run's own file is left alone (the variable points at this test's
 * file meanwhile), so this test does not fail the run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustodyClient } from '../../lib';
import { apiOperation } from '../../lib/api/operations';
import { Simulator } from '../../simulator';
import { CHECK_ENV, responseViolations } from '../../simulator/response-check';
import { assertNoViolations, violationReport } from '../helpers/response-check';
import type { JsonSchema } from '../../lib/api/spec';

describe('simulator response check (CUSTODYFLOW_SIM_CHECK_RESPONSES)', function () {
  this.timeout(30000);
  const entry = apiOperation('listAssets');
  const spec = entry.spec as { responses?: Record<number, JsonSchema> };
  const saved = { env: process.env[CHECK_ENV], responses: spec.responses };
  let dir: string;
  let file: string;
  let sim: Simulator;
  let client: CustodyClient;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-response-check-test-'));
    file = path.join(dir, 'violations.jsonl');
    sim = await Simulator.start({ dataDir: path.join(dir, 'sim'), port: 0, persist: false });
    client = new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, attempts: 1 });
    process.env[CHECK_ENV] = file;
  });

  afterEach(() => {
    if (saved.responses === undefined) delete spec.responses;
    else spec.responses = saved.responses;
  });

  after(async () => {
    if (saved.env === undefined) delete process.env[CHECK_ENV];
    else process.env[CHECK_ENV] = saved.env;
    await client?.close();
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('records an answer that violates its schema, and the report names it', async () => {
    // Test-only schema: `assets` declared a string; the simulator answers an array.
    spec.responses = { 200: { type: 'object', required: ['assets'], properties: { assets: { type: 'string' } } } };
    const res = await client.request('GET', '/assets');
    assert.equal(res.statusCode, 200);
    const report = violationReport(file);
    assert.equal(report.length, 1, report.join('\n'));
    assert.match(report[0], /^v1 GET \/assets \(listAssets\) 200 \/api\/v1\/p\/assets: GET \/assets: 200 body \/assets must be string, got \[/);
    assert.throws(() => assertNoViolations(file), /the simulator answered or sent 1 message\(s\) that violate their schema[\s\S]*listAssets/);
    const line = JSON.parse(fs.readFileSync(file, 'utf8').trim());
    assert.deepEqual(line.body.assets.length > 0, true, 'the line carries the body as sent');
  });

  it('checks a refused authentication as an answer of the operation named', async () => {
    fs.rmSync(file, { force: true });
    spec.responses = { 401: { type: 'string' } };
    const res = await fetch(`${sim.baseUrl}/assets`);
    assert.equal(res.status, 401);
    assert.deepEqual(
      violationReport(file).map((l) => l.replace(/, got .*$/, '')),
      ['v1 GET /assets (listAssets) 401 /api/v1/p/assets: GET /assets: 401 body / must be string'],
    );
    fs.rmSync(file, { force: true });
  });

  it('records nothing for a conforming answer, nor when the check is off', async () => {
    fs.rmSync(file, { force: true });
    spec.responses = { 200: { type: 'object', required: ['assets'], properties: { assets: { type: 'array' } } } };
    await client.request('GET', '/assets');
    assert.deepEqual(violationReport(file), []);
    spec.responses = { 200: { type: 'string' } };
    delete process.env[CHECK_ENV];
    try {
      await client.request('GET', '/assets');
    } finally {
      process.env[CHECK_ENV] = file;
    }
    assert.deepEqual(violationReport(file), []);
    assertNoViolations(file);
  });

  it('checks an error answer against the schema of its status, and a status the entry does not declare is a violation', () => {
    assert.deepEqual(responseViolations(entry, 401, { code: 401, msg: 'errPartnerAuth', detail: { reason: 'signature' } }), []);
    spec.responses = { 401: { type: 'object', required: ['code', 'msg', 'detail'] } };
    assert.deepEqual(responseViolations(entry, 401, { code: 401, msg: 'x' }), ['GET /assets: 401 body /detail is required']);
    assert.deepEqual(responseViolations(entry, 418, {}), ['GET /assets: status 418 is not declared (declared: 401)']);
  });
});
