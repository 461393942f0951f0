/**
 * A broken connection says so (docs/nodes.md "Status", docs/configuration.md "When the
 * connection fails"), in the real Node-RED runtime (node-red-node-test-helper) against real
 * simulators over real sockets, with RSA keys made here:
 *
 * - a config node on a custom URL whose server refuses the API key (401 errPartnerAuth, spec
 *   section 7): the feed node and the approver of that core client show the cause; over 100 and
 *   more retries (the retry delay shortened with `CUSTODYFLOW_FEED_RETRY_MS`, the 30 s of a real
 *   outage) the log carries one line for the cause, from the feed node, none from the config
 *   node; the server going away (ECONNREFUSED) adds exactly one line; the right server coming
 *   back adds exactly one "recovered" line and turns both statuses green;
 * - a self-signed certificate: the status says "TLS: ...";
 * - no API key: the feed's status says why, and a retry of the same failure logs nothing more;
 * - two approvers of one core client on one connection: each warns at deploy, naming the other,
 *   and shows it in its status.
 *
 * The switch between servers is a TCP proxy (test/helpers/switch-proxy.ts): the config node
 * keeps one URL, as a user's does while their server fails and heals.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { Simulator } from '../../simulator';
import { startSimulatorWithKeys } from '../helpers/simulated';
import { until } from '../helpers/support';
import { lastStatusOf } from '../helpers/node-flows';
import { redNodes, rsaKeyPair, useHelperServer } from '../helpers/red-setup';
import { SwitchProxy } from '../helpers/switch-proxy';

const nodeModules = redNodes(['custody-config', 'custody-coreclient-feed', 'custody-approver'], []);

/** A log line of the runtime as the helper's spy saw it. */
interface LogLine {
  level: number;
  id?: string;
  type?: string;
  msg: unknown;
}

/** Node-RED's log levels (@node-red/util log.js). */
const LEVELS = { ERROR: 20, WARN: 30, INFO: 40 } as const;

/** Every log line of the runtime since the flow was loaded. */
function logLines(): LogLine[] {
  const spy = (helper as unknown as { log(): { args: LogLine[][] } }).log();
  return spy.args.map((a) => a[0]).filter((l) => l && typeof l === 'object');
}

/** The log lines of node `id` whose text matches `pattern`. */
function linesOf(id: string, pattern: RegExp): LogLine[] {
  return logLines().filter((l) => l.id === id && pattern.test(String(l.msg)));
}

/** Wait until node `id`'s last status is `expected` (fill, shape, text). */
async function statusIs(id: string, expected: { fill: string; shape: string; text: string | RegExp }): Promise<void> {
  await until(() => {
    const s = lastStatusOf(helper.getNode(id));
    if (!s || s.fill !== expected.fill || s.shape !== expected.shape) return undefined;
    return (typeof expected.text === 'string' ? s.text === expected.text : expected.text.test(String(s.text))) ? true : undefined;
  }, `the status of ${id}: ${expected.fill} ${expected.shape} ${expected.text} (last: ${JSON.stringify(lastStatusOf(helper.getNode(id)))})`);
}

describe('a broken connection says so: feed health in the status, once per cause in the log', function () {
  this.timeout(120000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-feed-health-'));
  const previousRetry = process.env.CUSTODYFLOW_FEED_RETRY_MS;
  /** The key pair registered with `good` (the config node's), and another for `other`. */
  const pair = rsaKeyPair();
  const otherPair = rsaKeyPair();
  let good: Simulator;
  let other: Simulator;
  let tlsSim: Simulator;
  const proxy = new SwitchProxy();

  before(async () => {
    // A real outage retries every 30 s at most: here every few milliseconds, so that a test sees
    // more retries than 10 minutes of an outage would make.
    process.env.CUSTODYFLOW_FEED_RETRY_MS = '5';
    good = await startSimulatorWithKeys(path.join(tmp, 'good'), pair);
    other = await startSimulatorWithKeys(path.join(tmp, 'other'), otherPair);
    const certFile = path.join(tmp, 'cert.pem');
    const keyFile = path.join(tmp, 'cert-key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
    tlsSim = await startSimulatorWithKeys(path.join(tmp, 'tls'), pair, { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') });
  });
  useHelperServer();
  after(async () => {
    await proxy.shutdown();
    await Promise.all([good?.stop(), other?.stop(), tlsSim?.stop()]);
    fs.rmSync(tmp, { recursive: true, force: true });
    if (previousRetry === undefined) delete process.env.CUSTODYFLOW_FEED_RETRY_MS;
    else process.env.CUSTODYFLOW_FEED_RETRY_MS = previousRetry;
  });

  /** A flow: config `cfg` (custom URL `baseUrl`), a feed node `feed` of core client `clientId` wired to approver `ap` (dry run). */
  function feedFlow(baseUrl: string, clientId: string): object[] {
    return [
      { id: 'tab', type: 'tab', label: 'health' },
      { id: 'cfg', z: 'tab', type: 'custody-config', name: 'custom', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: 5 },
      { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', name: 'the feed', connection: 'cfg', clientId, details: false, wires: [['ap']], x: 100, y: 100 },
      { id: 'ap', z: 'tab', type: 'custody-approver', name: 'the approver', connection: 'cfg', clientId, rules: [], dryRun: true, auditFile: path.join(tmp, `ap-${Date.now()}.jsonl`), wires: [[], [], []], x: 300, y: 100 },
    ];
  }

  it('a refused API key (401 errPartnerAuth): the cause in both statuses, one log line over 100+ retries; unreachable: one more; recovered: one more', async () => {
    // The other server does not know the API key of `good`: it answers 401 errPartnerAuth.
    await proxy.forwardTo(other.port);
    const clientId = good.demo.core_client_id;
    await helper.load(nodeModules as any, feedFlow(`http://127.0.0.1:${proxy.port}/api/v1/p`, clientId), { cfg: { apiKey: good.account.apiKey, privateKey: pair.privateKey } });

    await statusIs('feed', { fill: 'red', shape: 'ring', text: 'auth failed (401 errPartnerAuth)' });
    await statusIs('ap', { fill: 'red', shape: 'ring', text: 'feed: auth failed (401 errPartnerAuth)' });
    const first = proxy.accepted;
    await until(() => (proxy.accepted - first >= 100 ? true : undefined), '100 more attempts of the feed', 60000);
    assert.deepEqual(
      linesOf('feed', /./).map((l) => [l.level, String(l.msg)]),
      [[LEVELS.ERROR, 'feed connection failing: auth failed (401 errPartnerAuth) (feed handshake refused: HTTP 401 errPartnerAuth (api key)); retrying, logged again only when the cause changes']],
      'one line for the cause, from the feed node, over 100 and more retries',
    );
    assert.deepEqual(linesOf('cfg', /./), [], 'nothing from the config node: a line must lead to a node that uses the feed');
    assert.deepEqual(linesOf('ap', /feed|401/), [], 'the approver shows the feed in its status; the feed node logs it');
    await statusIs('feed', { fill: 'red', shape: 'ring', text: 'auth failed (401 errPartnerAuth)' });

    // The cause changes: the server goes away.
    await proxy.close();
    await statusIs('feed', { fill: 'red', shape: 'ring', text: 'unreachable (ECONNREFUSED)' });
    await statusIs('ap', { fill: 'red', shape: 'ring', text: 'feed: unreachable (ECONNREFUSED)' });
    // Many more attempts meet the closed port meanwhile (a few milliseconds apart).
    await new Promise((r) => setTimeout(r, 1000));
    // One line for the new cause, whichever socket error came first (a port closing may reset a connection being made).
    assert.equal(linesOf('feed', /failing: unreachable \(ECONN(REFUSED|RESET)\)/).length, 1, 'one line for the new cause');
    assert.equal(linesOf('feed', /failing/).length, 2, `and no other: ${JSON.stringify(linesOf('feed', /failing/).map((l) => l.msg))}`);

    // The server that knows the key answers again: the feed connects.
    await proxy.forwardTo(good.port);
    await statusIs('feed', { fill: 'green', shape: 'dot', text: 'connected' });
    await statusIs('ap', { fill: 'yellow', shape: 'dot', text: /^dry run · approved 0/ });
    assert.deepEqual(linesOf('feed', /recovered/).map((l) => String(l.msg)), ['feed connection recovered'], 'one "recovered" line');
    assert.equal(linesOf('feed', /failing/).length, 2, 'no failure line after the recovery');
    assert.deepEqual(linesOf('cfg', /./), [], 'still nothing from the config node');
  });

  it('a self-signed certificate: the status says TLS and the certificate error', async () => {
    await helper.load(nodeModules as any, feedFlow(`https://127.0.0.1:${tlsSim.port}/api/v1/p`, tlsSim.demo.core_client_id), { cfg: { apiKey: tlsSim.account.apiKey, privateKey: pair.privateKey } });
    await statusIs('feed', { fill: 'red', shape: 'ring', text: /^TLS: [A-Z_]+$/ });
    await statusIs('ap', { fill: 'red', shape: 'ring', text: /^feed: TLS: [A-Z_]+$/ });
    assert.equal(linesOf('feed', /failing: TLS: /).length, 1);
  });

  it('no API key: the status says the connection is not usable and why; the retries of the same failure log nothing more', async () => {
    await helper.load(nodeModules as any, feedFlow(`http://127.0.0.1:${good.port}/api/v1/p`, good.demo.core_client_id), { cfg: { privateKey: pair.privateKey } });
    await statusIs('feed', { fill: 'red', shape: 'ring', text: /^not usable: apiKey: / });
    await statusIs('ap', { fill: 'red', shape: 'ring', text: /^feed: not usable: apiKey: / });
    const shown = lastStatusOf(helper.getNode('feed'));
    // The client is built again every 5 ms here (every 30 s in a real deployment).
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(lastStatusOf(helper.getNode('feed')), shown, 'the status stays');
    assert.equal(linesOf('feed', /failing: not usable: apiKey/).length, 1, 'one line for the cause');
    assert.deepEqual(linesOf('cfg', /./), [], 'none from the config node');
  });

  it('approvers of one core client on one connection (their own core client id, or a feed node wired to them): each warns at deploy naming the others, and its status says so', async () => {
    const clientId = good.demo.core_client_id;
    const approver = (id: string, name: string, client = clientId) => ({ id, z: 'tab', type: 'custody-approver', name, connection: 'cfg', clientId: client, rules: [], dryRun: true, auditFile: path.join(tmp, `${id}-${Date.now()}.jsonl`), wires: [[], [], []], x: 300, y: 100 });
    const flow = [
      { id: 'tab', type: 'tab', label: 'approvers' },
      { id: 'cfg', z: 'tab', type: 'custody-config', name: 'custom', environment: 'custom', baseUrl: `http://127.0.0.1:${good.port}/api/v1/p`, signingMode: 'timestamp', timeout: 5 },
      approver('ap1', 'first approver'),
      approver('ap2', 'second approver'),
      // Another core client's approver: not concerned.
      approver('ap3', 'third approver', 'another-core-client'),
      // No core client id of its own: that of the feed node wired to it (as in the examples).
      { id: 'fd', z: 'tab', type: 'custody-coreclient-feed', name: 'feed', connection: 'cfg', clientId, details: false, wires: [['ap4']], x: 100, y: 100 },
      approver('ap4', 'fourth approver', ''),
    ];
    await helper.load(nodeModules as any, flow, { cfg: { apiKey: good.account.apiKey, privateKey: pair.privateKey } });
    for (const id of ['ap1', 'ap2', 'ap4']) await statusIs(id, { fill: 'yellow', shape: 'dot', text: `another approver watches ${clientId}` });
    await statusIs('ap3', { fill: 'yellow', shape: 'dot', text: /^dry run · approved 0/ });
    /** The approvers node `id` was warned about, in its warnings' words. */
    const warnedOf = (id: string): string[] => {
      const lines = linesOf(id, /another approver/);
      assert.ok(lines.every((l) => l.level === LEVELS.WARN), 'warnings');
      for (const l of lines) assert.match(String(l.msg), new RegExp(`^core client ${clientId} has another approver on this connection: .*\\. Each pending action is decided by each of them; keep one approver per core client$`));
      return lines.flatMap((l) => [...String(l.msg).matchAll(/"([^"]+)" \((ap\d)\)/g)].map((m) => `${m[1]} (${m[2]})`)).sort();
    };
    assert.deepEqual(warnedOf('ap1'), ['fourth approver (ap4)', 'second approver (ap2)']);
    assert.deepEqual(warnedOf('ap2'), ['first approver (ap1)', 'fourth approver (ap4)']);
    assert.deepEqual(warnedOf('ap4'), ['first approver (ap1)', 'second approver (ap2)']);
    assert.deepEqual(warnedOf('ap3'), []);

    // The second approver and the feed node removed (a "modified nodes" deploy): the first is alone again,
    // with no feed of its core client left: its counts, not a feed state.
    await helper.setFlows(flow.filter((n) => !['ap2', 'fd', 'ap4'].includes((n as { id: string }).id)), 'nodes', { cfg: { apiKey: good.account.apiKey, privateKey: pair.privateKey } });
    await statusIs('ap1', { fill: 'yellow', shape: 'dot', text: /^dry run · approved 0/ });
    await new Promise((r) => setTimeout(r, 300));
    assert.match(String(lastStatusOf(helper.getNode('ap1'))?.text), /^dry run · approved 0/, 'the removed feed stopping leaves no "feed: ..." status behind');
  });
});
