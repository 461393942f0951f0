/**
 * The v2 workspace calls: the expression builder (pure), lib against the real simulator over
 * sockets (x-token, policies and update requests, approvals by a human and by another API key,
 * portfolios, wallets and their address), the custody-policy and custody-portfolio nodes in the
 * real Node-RED runtime, and the example flow "Set up a workspace" run to its end.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { Simulator } from '../../simulator';
import {
  ApiError,
  ConfigError,
  ValidationError,
  WorkspaceClient,
  addPolicyMember,
  approveWorkspaceAction,
  buildPolicyBody,
  buildPolicyExpression,
  createPolicy,
  createPortfolio,
  createPortfolioWallet,
  getPortfolio,
  getPortfolioWallet,
  getWorkspaceAction,
  listPolicies,
  rejectWorkspaceAction,
  resolveV2BaseUrl,
  V2_BASE_URLS,
  WorkspacePolicy,
} from '../../lib';
import { control, controlCall, until } from '../helpers/support';
import { watchDebug } from '../helpers/red-process';
import { useRedProcess, withEditor } from '../helpers/editor-kit';
import { CountingServer } from '../helpers/counting-server';
import { CONFIG, Inbox, TAB, loadCollecting, sendAndWait } from '../helpers/node-flows';
import { redNodes, simulatorDataDir, useRedRuntime } from '../helpers/red-setup';
import { withExtraMember } from '../../lib/request/policy-body';

const root = path.resolve(__dirname, '..', '..', '..');

/** Expect `p` to reject with an ApiError of `status`; @returns it. */
async function apiError(p: Promise<unknown>, status: number): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${e}`);
    assert.equal(e.statusCode, status, e.message);
    return e;
  }
  assert.fail(`expected HTTP ${status}`);
}

/** Expect `fn` to throw (or reject with) a ValidationError naming `field`. */
async function inputError(fn: () => unknown, field: string): Promise<void> {
  try {
    await fn();
  } catch (e) {
    assert.ok(e instanceof ValidationError, `expected ValidationError, got ${e}`);
    assert.equal(e.field, field, e.message);
    assert.equal(e.code, 'EINPUT');
    return;
  }
  assert.fail(`expected a ValidationError naming ${field}`);
}

describe('v2 expression builder', () => {
  it('builds the expression of spec section 2 from a threshold and members', () => {
    assert.deepEqual(buildPolicyExpression(2, ['m.alice', { id: 'k.agent', kind: 'apiKey' }]), {
      type: 1,
      operation: 1,
      threshold: 2,
      rules: [
        { type: 2, operation: 3, threshold: 0, arguments: { id: 'm.alice' } },
        { type: 2, operation: 3, threshold: 0, arguments: { id: 'k.agent' } },
      ],
    });
  });

  it('builds the whole POST body with its defaults', () => {
    const body = buildPolicyBody({ name: ' Treasury ', threshold: 1, members: ['m.alice'], adminPolicyID: 'A1' });
    assert.deepEqual(body, {
      name: 'Treasury',
      expression: { type: 1, operation: 1, threshold: 1, rules: [{ type: 2, operation: 3, threshold: 0, arguments: { id: 'm.alice' } }] },
      expressionContentType: 'application/json',
      adminPolicyID: 'A1',
      policyType: 'transaction',
      adminLocked: false,
      allowDuplicates: false,
    });
  });

  it('refuses a threshold outside 1..members, no members, a member twice or a blank id, naming the field', async () => {
    await inputError(() => buildPolicyExpression(3, ['m.alice', 'm.bob']), 'threshold');
    await inputError(() => buildPolicyExpression(0, ['m.alice']), 'threshold');
    await inputError(() => buildPolicyExpression(1.5, ['m.alice', 'm.bob']), 'threshold');
    await inputError(() => buildPolicyExpression(1, []), 'members');
    await inputError(() => buildPolicyExpression(1, ['m.alice', 'm.alice']), 'members');
    await inputError(() => buildPolicyExpression(1, ['m.alice', ' ']), 'members[1]');
    await inputError(() => buildPolicyBody({ name: '', threshold: 1, members: ['m.alice'], adminPolicyID: 'A' }), 'name');
  });

  it('adds a member rule to a full policy body, and refuses a member already there', async () => {
    const policy: WorkspacePolicy = { policyID: 'P', systemType: 1, actionsGoverned: [], ...buildPolicyBody({ name: 'T', threshold: 1, members: ['m.alice'], adminPolicyID: 'A', adminLocked: true }) };
    const body = withExtraMember(policy, 'm.bob');
    assert.deepEqual(body.expression.rules.map((r) => r.arguments.id), ['m.alice', 'm.bob']);
    assert.equal(body.expression.threshold, 1);
    assert.equal(body.adminLocked, true);
    assert.equal(body.adminPolicyID, 'A');
    await inputError(() => withExtraMember(policy, 'm.alice'), 'memberID');
  });

  it('resolves the v2 base URL per environment; custom needs one; plain HTTP only to loopback', () => {
    assert.equal(resolveV2BaseUrl('production'), 'https://api.qredo.network/api/v2');
    assert.equal(resolveV2BaseUrl('sandbox'), 'https://sandbox-api.qredo.network/api/v2');
    assert.equal(resolveV2BaseUrl('custom', 'http://127.0.0.1:8780/api/v2/'), 'http://127.0.0.1:8780/api/v2');
    assert.throws(() => resolveV2BaseUrl('custom'), (e: Error) => e instanceof ConfigError && /^v2BaseUrl/.test(e.message));
    assert.throws(() => resolveV2BaseUrl('production', 'http://example.com/api/v2'), (e: Error) => e instanceof ConfigError && /^v2BaseUrl/.test(e.message));
    assert.throws(() => new WorkspaceClient({ baseUrl: 'https://h/api/v2', token: '' }), (e: Error) => e instanceof ConfigError && /^token/.test(e.message));
  });
});

describe('v2 workspace calls: lib against the simulator', function () {
  this.timeout(60000);
  let sim: Simulator;
  let dataDir: string;
  let partner: WorkspaceClient;
  let agent: WorkspaceClient;
  let unassociated: WorkspaceClient;

  const tokenOf = (id: string) => sim.v2.apiKeys.find((k) => k.id === id)!.token;
  const client = (token: string) => new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token, workspaceId: sim.v2.workspaceId, attempts: 1 });
  const members = async (policyID: string) => {
    const p = (await listPolicies(partner)).data.policies.find((x) => x.policyID === policyID)!;
    return p.expression.rules.map((r) => r.arguments.id);
  };

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-v2-'));
    sim = await Simulator.start({ dataDir });
    partner = client(sim.v2.token);
    agent = client(tokenOf('k.agent'));
    unassociated = client(tokenOf('k.unassociated'));
  });

  after(async () => {
    for (const c of [partner, agent, unassociated]) c?.close();
    await sim.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 401 with the section 7 body when x-token is missing or wrong, never echoing the token', async () => {
    const url = `${sim.v2.baseUrl}/workspaces/${sim.v2.workspaceId}/policies`;
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { code: 401, msg: 'Unauthorized', detail: { reason: 'empty token' } });
    const wrong = client('not-the-token-' + 'x'.repeat(20));
    const e = await apiError(listPolicies(wrong), 401);
    wrong.close();
    assert.equal(e.msg, 'Unauthorized');
    assert.equal(e.detail.reason, 'invalid token');
    assert.ok(!e.message.includes('not-the-token'));
    // The v1 signature headers are not a v2 credential.
    const v1Only = await fetch(url, { headers: { 'x-api-key': sim.account.apiKey } });
    assert.equal(v1Only.status, 401);
  });

  it('lists the provisioned admin policy', async () => {
    const { data } = await listPolicies(partner);
    const admins = data.policies.filter((p) => p.policyType === 'admin');
    assert.equal(admins.length, 1);
    assert.equal(admins[0].expressionContentType, 'application/json');
    assert.deepEqual(admins[0].expression.rules.map((r) => r.arguments.id), ['m.alice', 'k.partner', 'k.agent']);
  });

  it('creates a policy from a definition (admin policy looked up) and lists it with the built expression', async () => {
    const { data, statusCode } = await createPolicy(partner, { name: 'Two of two', threshold: 2, members: ['m.alice', 'm.bob'] });
    assert.equal(statusCode, 200);
    assert.match(data.policyID, /^[0-9A-Za-z]{27}$/);
    const listed = (await listPolicies(partner)).data.policies.find((p) => p.policyID === data.policyID)!;
    const admin = (await listPolicies(partner)).data.policies.find((p) => p.policyType === 'admin')!;
    assert.equal(listed.policyType, 'transaction');
    assert.equal(listed.adminPolicyID, admin.policyID);
    assert.deepEqual(listed.expression, buildPolicyExpression(2, ['m.alice', 'm.bob']));
  });

  it('creates a policy from a whole expression, and refuses one whose threshold exceeds its rules before sending', async () => {
    const expression = buildPolicyExpression(1, ['m.carol']);
    const { data } = await createPolicy(partner, { name: 'Given whole', expression });
    assert.deepEqual(await members(data.policyID), ['m.carol']);
    await inputError(() => createPolicy(partner, { name: 'Bad', expression: { ...expression, threshold: 2 } }), 'expression.threshold');
    await inputError(() => createPolicy(partner, { name: 'Bad', threshold: 3, members: ['m.alice', 'm.bob'] }), 'threshold');
  });

  it('refuses an API key member that is not associated with a signing agent or key pairs, on create and on update', async () => {
    const e = await apiError(createPolicy(partner, { name: 'With a bare key', threshold: 1, members: ['m.alice', 'k.unassociated'] }), 400);
    assert.match(e.detail.reason!, /^expression\.rules\[1\]\.arguments\.id: API key k\.unassociated is not associated with a signing agent or signing key pairs/);
    const { data } = await createPolicy(partner, { name: 'Later', threshold: 1, members: ['m.alice'] });
    await apiError(addPolicyMember(partner, { policyID: data.policyID, memberID: 'k.unassociated' }), 400);
    await apiError(createPolicy(partner, { name: 'Stranger', threshold: 1, members: ['m.nobody'] }), 400);
  });

  it('addMember makes an update request, applied only once another member API key approves it', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Agent approves', threshold: 1, members: ['m.alice', 'k.agent'] });
    const { data: req } = await addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.bob' });
    assert.equal(req.status, 'pending');
    assert.equal(req.policyID, p.policyID);
    assert.deepEqual(await members(p.policyID), ['m.alice', 'k.agent']);
    // The key that made the request cannot approve it; a key that is not a member cannot either.
    await apiError(approveWorkspaceAction(partner, { actionID: req.actionID }), 403);
    await apiError(approveWorkspaceAction(unassociated, { actionID: req.actionID }), 403);
    assert.equal((await getWorkspaceAction(partner, { actionID: req.actionID })).data.status, 'pending');
    const { data: approved } = await approveWorkspaceAction(agent, { actionID: req.actionID });
    assert.equal(approved.status, 'approved');
    assert.deepEqual(approved.approvers, ['k.agent']);
    assert.deepEqual(await members(p.policyID), ['m.alice', 'k.agent', 'm.bob']);
    await apiError(approveWorkspaceAction(agent, { actionID: req.actionID }), 409);
  });

  it('a human member approves through the control endpoint; with threshold 2 one approval is not enough', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Humans', threshold: 2, members: ['m.alice', 'm.bob'] });
    const { data: req } = await addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.carol' });
    const first = await control(sim, `/v2/actions/${req.actionID}/approve`, { user_id: 'alice' });
    assert.equal(first.status, 'pending');
    assert.equal(first.approvedCount, 1);
    assert.deepEqual(await members(p.policyID), ['m.alice', 'm.bob']);
    const notMember = await controlCall(sim, 'POST', `/v2/actions/${req.actionID}/approve`, { user_id: 'carol@custody.example' });
    assert.equal(notMember.status, 403);
    const second = await control(sim, `/v2/actions/${req.actionID}/approve`, { user_id: 'm.bob' });
    assert.equal(second.status, 'approved');
    assert.deepEqual(await members(p.policyID), ['m.alice', 'm.bob', 'm.carol']);
  });

  it('an admin-locked policy is changed by the admin policy members; a rejection leaves it unchanged', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Locked', threshold: 1, members: ['m.bob'], adminLocked: true });
    const { data: req } = await addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.carol' });
    const byBob = await controlCall(sim, 'POST', `/v2/actions/${req.actionID}/approve`, { user_id: 'bob' });
    assert.equal(byBob.status, 403, JSON.stringify(byBob.body));
    const { data: rejected } = await rejectWorkspaceAction(agent, { actionID: req.actionID });
    assert.equal(rejected.status, 'rejected');
    assert.deepEqual(await members(p.policyID), ['m.bob']);
    const { data: again } = await addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.carol' });
    assert.equal((await control(sim, `/v2/actions/${again.actionID}/approve`, { user_id: 'alice' })).status, 'approved');
    assert.deepEqual(await members(p.policyID), ['m.bob', 'm.carol']);
  });

  it('a policy with threshold 1 completes a transaction with one approval; threshold 2 needs two', async () => {
    const { data: one } = await createPolicy(partner, { name: 'One', threshold: 1, members: ['m.alice', 'm.bob'] });
    const { data: two } = await createPolicy(partner, { name: 'Two', threshold: 2, members: ['m.alice', 'm.bob'] });
    const { data: acc } = await createPortfolio(partner, { name: 'Tx' });
    const w1 = (await createPortfolioWallet(partner, { accountID: acc.accountID, name: 'w1', connectPlugin: 'defi', policyID: one.policyID })).data;
    const w2 = (await createPortfolioWallet(partner, { accountID: acc.accountID, name: 'w2', connectPlugin: 'defi', policyID: two.policyID })).data;
    const tx1 = await control(sim, `/v2/wallets/${w1.walletID}/transactions`, {});
    assert.equal(tx1.type, 'transaction');
    assert.equal((await control(sim, `/v2/actions/${tx1.actionID}/approve`, { user_id: 'alice' })).status, 'approved');
    const tx2 = await control(sim, `/v2/wallets/${w2.walletID}/transactions`, {});
    assert.equal((await control(sim, `/v2/actions/${tx2.actionID}/approve`, { user_id: 'alice' })).status, 'pending');
    assert.equal((await control(sim, `/v2/actions/${tx2.actionID}/approve`, { user_id: 'bob' })).status, 'approved');
  });

  it('creates portfolios (standard by default, or exchange) and refuses a bad type before sending', async () => {
    const { data } = await createPortfolio(partner, { name: 'Main' });
    assert.match(data.accountID, /^[0-9A-Za-z]{27}$/);
    assert.deepEqual((await getPortfolio(partner, { accountID: data.accountID })).data, { accountID: data.accountID, name: 'Main', type: 'standard', wallets: [] });
    const ex = (await createPortfolio(partner, { name: 'Venue', type: 'exchange' })).data;
    assert.equal((await getPortfolio(partner, { accountID: ex.accountID })).data.type, 'exchange');
    await inputError(() => createPortfolio(partner, { name: 'X', type: 'other' as 'standard' }), 'type');
    await apiError(getPortfolio(partner, { accountID: 'nope' }), 404);
  });

  it('a wallet waited for too briefly has an empty address, there when read after the key computation', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Wallets', threshold: 1, members: ['m.alice'] });
    const { data: acc } = await createPortfolio(partner, { name: 'W' });
    const { data: w } = await createPortfolioWallet(partner, { accountID: acc.accountID, name: 'quick', connectPlugin: 'wc', policyID: p.policyID, waitForAddress: 1 });
    assert.equal(w.address, '');
    assert.equal((await getPortfolioWallet(partner, { accountID: acc.accountID, walletID: String(w.walletID) })).data.address, '');
    await control(sim, '/clock/advance', { seconds: 5 });
    const later = (await getPortfolioWallet(partner, { accountID: acc.accountID, walletID: String(w.walletID) })).data;
    assert.match(later.address, /^0x[0-9a-f]{40}$/);
    assert.equal(later.connectPlugin, 'wc');
    assert.equal(later.policyID, p.policyID);
    await inputError(() => createPortfolioWallet(partner, { accountID: acc.accountID, name: 'x', connectPlugin: 'other' as 'defi', policyID: p.policyID }), 'connectPlugin');
    await inputError(() => createPortfolioWallet(partner, { accountID: acc.accountID, name: 'x', connectPlugin: 'defi', policyID: p.policyID, waitForAddress: 121 }), 'waitForAddress');
    const admin = (await listPolicies(partner)).data.policies.find((x) => x.policyType === 'admin')!;
    await apiError(createPortfolioWallet(partner, { accountID: acc.accountID, name: 'x', connectPlugin: 'defi', policyID: admin.policyID }), 400);
  });

  it('a wallet waited for long enough answers with its address', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Patient', threshold: 1, members: ['m.alice'] });
    const { data: acc } = await createPortfolio(partner, { name: 'P' });
    const { data: w } = await createPortfolioWallet(partner, { accountID: acc.accountID, name: 'patient', connectPlugin: 'defi', policyID: p.policyID, waitForAddress: 6 });
    assert.match(w.address, /^0x[0-9a-f]{40}$/);
    assert.equal((await getPortfolio(partner, { accountID: acc.accountID })).data.wallets[0].address, w.address);
  });

  it('create wallet waits past a client timeout shorter than waitForAddress: one wallet, with its address, no ETIMEDOUT', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Slow wallets', threshold: 1, members: ['m.alice'] });
    const { data: acc } = await createPortfolio(partner, { name: 'Slow' });
    // A 1 s connection timeout; the key computation takes about 4 to 5 s of the simulator's clock.
    const hurried = new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: sim.v2.token, workspaceId: sim.v2.workspaceId, timeoutMs: 1000, attempts: 1 });
    try {
      const { data: w } = await createPortfolioWallet(hurried, { accountID: acc.accountID, name: 'slow', connectPlugin: 'defi', policyID: p.policyID, waitForAddress: 10 });
      assert.match(w.address, /^0x[0-9a-f]{40}$/);
      const wallets = (await getPortfolio(partner, { accountID: acc.accountID })).data.wallets;
      assert.deepEqual(wallets.map((x) => x.walletID), [w.walletID]);
    } finally {
      hurried.close();
    }
  });

  it('two concurrent adds to one policy both end up in it once their update requests are approved in order', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Concurrent adds', threshold: 1, members: ['m.alice'] });
    const [first, second] = await Promise.all([
      addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.bob' }),
      addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.carol' }),
    ]);
    assert.equal(first.data.status, 'pending');
    assert.equal(second.data.status, 'pending');
    assert.deepEqual(await members(p.policyID), ['m.alice'], 'nothing applied before approval');
    assert.equal((await control(sim, `/v2/actions/${first.data.actionID}/approve`, { user_id: 'alice' })).status, 'approved');
    assert.equal((await control(sim, `/v2/actions/${second.data.actionID}/approve`, { user_id: 'alice' })).status, 'approved');
    assert.deepEqual(await members(p.policyID), ['m.alice', 'm.bob', 'm.carol']);
    // Once applied, a member is no longer carried: the next add starts from the policy as read.
    const third = await addPolicyMember(partner, { policyID: p.policyID, memberID: 'k.agent' });
    await control(sim, `/v2/actions/${third.data.actionID}/approve`, { user_id: 'bob' });
    assert.deepEqual(await members(p.policyID), ['m.alice', 'm.bob', 'm.carol', 'k.agent']);
    await inputError(() => addPolicyMember(partner, { policyID: p.policyID, memberID: 'm.bob' }), 'memberID');
  });

  it('keeps the workspace, its token and its policies across a restart', async () => {
    const { data } = await createPolicy(partner, { name: 'Durable', threshold: 1, members: ['m.alice'] });
    const before = sim.v2;
    await sim.stop();
    sim = await Simulator.start({ dataDir });
    assert.equal(sim.v2.workspaceId, before.workspaceId);
    assert.equal(sim.v2.token, before.token);
    assert.equal(fs.readFileSync(path.join(dataDir, 'v2-token.txt'), 'utf8').trim(), before.token);
    partner.close();
    partner = client(sim.v2.token);
    assert.deepEqual(await members(data.policyID), ['m.alice']);
  });
});

/** A started counting server at `/api/v2` that answers every request 200 `{"policies": []}` (Connection: close). */
async function countingServer(): Promise<CountingServer> {
  const server = new CountingServer({ path: '/api/v2', answer: () => ({ status: 200, body: '{"policies": []}', headers: { Connection: 'close' } }) });
  await server.start();
  return server;
}

/** Expect `p` to reject with a ConfigError (ECONFIG) whose message names `operation`. */
async function simulatorOnlyRefusal(p: Promise<unknown>, operation: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
    assert.equal(e.code, 'ECONFIG');
    assert.ok(e.message.includes(` ${operation} is simulator only`), e.message);
    return;
  }
  assert.fail(`expected ${operation} to be refused`);
}

describe('v2 simulator-only operations and per-request timeouts (lib)', () => {
  let server: CountingServer;
  before(async () => {
    server = await countingServer();
  });
  after(async () => {
    await server.stop();
  });

  it('refuses the operations made up for the simulator on a hosted v2 address, before sending', async () => {
    const hosted = new WorkspaceClient({ baseUrl: V2_BASE_URLS.production, token: 't', workspaceId: 'W', attempts: 1 });
    try {
      assert.equal(hosted.simulatorOperations, false);
      await simulatorOnlyRefusal(getWorkspaceAction(hosted, { actionID: 'A1' }), 'getAction');
      await simulatorOnlyRefusal(approveWorkspaceAction(hosted, { actionID: 'A1' }), 'approveAction');
      await simulatorOnlyRefusal(rejectWorkspaceAction(hosted, { actionID: 'A1' }), 'rejectAction');
      await simulatorOnlyRefusal(getPortfolio(hosted, { accountID: 'P1' }), 'get');
      await simulatorOnlyRefusal(getPortfolioWallet(hosted, { accountID: 'P1', walletID: 'X1' }), 'getWallet');
    } finally {
      hosted.close();
    }
  });

  it('sends them to a loopback address (a simulator) unless told not to; the refusal sends nothing', async () => {
    const refusing = new WorkspaceClient({ baseUrl: server.baseUrl, token: 't', workspaceId: 'W', attempts: 1, simulatorOperations: false });
    const loopback = new WorkspaceClient({ baseUrl: server.baseUrl, token: 't', workspaceId: 'W', attempts: 1 });
    try {
      const before = server.requests;
      await simulatorOnlyRefusal(approveWorkspaceAction(refusing, { actionID: 'A1' }), 'approveAction');
      await simulatorOnlyRefusal(getPortfolioWallet(refusing, { accountID: 'P1', walletID: 'X1' }), 'getWallet');
      assert.equal(server.requests, before);
      assert.equal(loopback.simulatorOperations, true);
      await getWorkspaceAction(loopback, { actionID: 'A1' });
      assert.equal(server.requests, before + 1);
    } finally {
      refusing.close();
      loopback.close();
    }
  });

  it('refuses a per-request timeout that is not a positive whole number of milliseconds, before sending', async () => {
    const c = new WorkspaceClient({ baseUrl: server.baseUrl, token: 't', workspaceId: 'W', attempts: 1 });
    try {
      const before = server.requests;
      await assert.rejects(c.request('GET', '/workspaces/W/policies', { timeoutMs: 0 }), (e: unknown) => e instanceof ConfigError && /^timeoutMs: /.test(e.message));
      await assert.rejects(c.request('GET', '/workspaces/W/policies', { timeoutMs: 1.5 }), ConfigError);
      assert.equal(server.requests, before);
      assert.equal((await c.request('GET', '/workspaces/W/policies', { timeoutMs: 5000 })).statusCode, 200);
      assert.equal(server.requests, before + 1);
    } finally {
      c.close();
    }
  });
});

// ------------------------------------------------------------------ nodes

const nodesDataDir = simulatorDataDir('cf-v2-nodes-');
const nodeModules = redNodes(['custody-config', 'custody-policy', 'custody-portfolio'], ['catch', 'inject', 'debug', 'change', 'comment']);

const AGENT = { ...CONFIG, id: 'agent', simulatorApiKey: 'k.agent' };

/** A flow: one v2 node `op` wired to helper `out`, and a Catch node wired to helper `caught`. */
function opFlow(type: string, props: Record<string, unknown>): object[] {
  return [
    TAB,
    { ...CONFIG, z: 'tab' },
    { ...AGENT, z: 'tab' },
    { id: 'op', z: 'tab', type, connection: 'cfg', x: 100, y: 100, wires: [['out']], ...props },
    { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, x: 100, y: 100, wires: [['caught']] },
    { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
  ];
}

const inbox: Inbox = new Map();

async function load(flow: object[], credentials: object = {}): Promise<void> {
  await loadCollecting(nodeModules, flow, credentials, inbox);
}

/** Send `payload` into `op`; resolve with the output msg, or reject with what the Catch node got. */
async function call(payload: unknown): Promise<any> {
  const { out, caught } = await sendAndWait(inbox, { payload });
  if (caught) throw Object.assign(new Error('caught: ' + caught.error?.message), { caught });
  return out;
}

async function callExpectingError(payload: unknown): Promise<any> {
  try {
    const m = await call(payload);
    assert.fail('expected an error, got ' + JSON.stringify(m.payload));
  } catch (e) {
    const caught = (e as { caught?: unknown }).caught;
    if (!caught) throw e;
    return caught;
  }
}

describe('v2 nodes in the Node-RED runtime', function () {
  this.timeout(60000);
  let sim: Simulator;
  let partner: WorkspaceClient;

  const simulator = useRedRuntime(nodesDataDir);
  before(() => {
    sim = simulator();
    partner = new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: sim.v2.token, workspaceId: sim.v2.workspaceId });
  });
  after(() => partner?.close());

  it('custody-policy creates a policy from its form, lists it, adds a member (pending, with a note), approved by k.agent', async () => {
    await load(
      opFlow('custody-policy', {
        operation: 'create',
        policyName: 'Form built',
        threshold: '2',
        members: [
          { kind: 'human', id: 'm.alice' },
          { kind: 'apiKey', id: 'k.agent' },
        ],
        adminPolicyID: '',
        adminLocked: false,
        allowDuplicates: false,
      }),
    );
    const created = await call({});
    assert.equal(created.statusCode, 200);
    const policyID = created.payload.policyID;
    const listed = (await listPolicies(partner)).data.policies.find((p) => p.policyID === policyID)!;
    assert.deepEqual(listed.expression, buildPolicyExpression(2, ['m.alice', 'k.agent']));
    assert.equal(listed.name, 'Form built');
    await helper.unload();

    await load(opFlow('custody-policy', { operation: 'list' }));
    const list = await call(undefined);
    assert.ok(list.payload.policies.some((p: { policyID: string }) => p.policyID === policyID));
    await helper.unload();

    await load(opFlow('custody-policy', { operation: 'addMember' }));
    const req = await call({ policyID, memberID: 'm.bob' });
    assert.equal(req.payload.status, 'pending');
    assert.match(req.note, /awaiting approval/);
    assert.equal(JSON.stringify(req).includes(sim.v2.token), false);
    await helper.unload();

    // threshold 2 of the policy itself (not admin locked): k.agent, then alice
    await load(opFlow('custody-policy', { operation: 'approveAction', connection: 'agent' }));
    const byAgent = await call({ actionID: req.payload.actionID });
    assert.equal(byAgent.payload.status, 'pending');
    assert.match(byAgent.note, /1 of 2 approvals/);
    await control(sim, `/v2/actions/${req.payload.actionID}/approve`, { user_id: 'alice' });
    const after = (await listPolicies(partner)).data.policies.find((p) => p.policyID === policyID)!;
    assert.deepEqual(after.expression.rules.map((r) => r.arguments.id), ['m.alice', 'k.agent', 'm.bob']);
  });

  it('custody-policy refuses a threshold above the number of members before sending, naming the field', async () => {
    await load(opFlow('custody-policy', { operation: 'create', policyName: 'Too many', threshold: '3', members: [{ kind: 'human', id: 'm.alice' }, { kind: 'human', id: 'm.bob' }] }));
    const err = await callExpectingError({});
    assert.equal(err.error.code, 'EINPUT');
    assert.match(err.error.message, /threshold: must be a whole number from 1 to the number of members \(2\)/);
  });

  it('custody-policy takes a whole expression from msg.payload; a bare API key member reaches the Catch node with 400', async () => {
    await load(opFlow('custody-policy', { operation: 'create', policyName: '', threshold: '', members: [] }));
    const ok = await call({ name: 'Whole', expression: buildPolicyExpression(1, ['m.carol']) });
    assert.match(ok.payload.policyID, /^[0-9A-Za-z]{27}$/);
    const err = await callExpectingError({ name: 'Bare key', expression: buildPolicyExpression(1, ['k.unassociated']) });
    assert.equal(err.statusCode, 400);
    assert.equal(err.error.cause.statusCode, 400);
    assert.match(err.error.message, /not associated with a signing agent or signing key pairs/);
  });

  it('custody-portfolio creates a portfolio and a wallet; a short wait says the address is pending; get wallet shows it later', async () => {
    const { data: p } = await createPolicy(partner, { name: 'Node wallets', threshold: 1, members: ['m.alice'] });
    await load(opFlow('custody-portfolio', { operation: 'create', portfolioName: 'From the node', portfolioType: 'exchange' }));
    const acc = await call({});
    const accountID = acc.payload.accountID;
    assert.equal((await getPortfolio(partner, { accountID })).data.type, 'exchange');
    await helper.unload();

    await load(opFlow('custody-portfolio', { operation: 'createWallet', walletName: 'quick', connectPlugin: 'defi', waitForAddress: '1' }));
    const w = await call({ accountID, policyID: p.policyID });
    assert.equal(w.payload.address, '');
    assert.match(w.note, /address not computed yet.*waitForAddress was 1 s/);
    await helper.unload();

    await control(sim, '/clock/advance', { seconds: 5 });
    await load(opFlow('custody-portfolio', { operation: 'getWallet' }));
    const read = await call({ accountID, walletID: w.payload.walletID });
    assert.match(read.payload.address, /^0x[0-9a-f]{40}$/);
    assert.equal(read.note, undefined);
  });

  it('refuses a real environment without workspace id or token with ECONFIG, before sending', async () => {
    const flow = opFlow('custody-policy', { operation: 'list' }).map((n: any) => (n.id === 'cfg' ? { ...n, environment: 'production', workspaceId: '' } : n));
    await load(flow, { cfg: { token: 'secret-token-value' } });
    const err = await callExpectingError({});
    assert.equal(err.error.code, 'ECONFIG');
    assert.match(err.error.message, /workspaceId: /);
    assert.ok(!JSON.stringify(err).includes('secret-token-value'));
    await helper.unload();
    const flow2 = opFlow('custody-policy', { operation: 'list' }).map((n: any) => (n.id === 'cfg' ? { ...n, environment: 'custom', baseUrl: 'http://127.0.0.1:1/api/v1/p', workspaceId: 'W' } : n));
    await load(flow2, {});
    const err2 = await callExpectingError({});
    assert.equal(err2.error.code, 'ECONFIG');
    assert.match(err2.error.message, /v2BaseUrl: /);
    await helper.unload();
    const flow3 = opFlow('custody-policy', { operation: 'list' }).map((n: any) => (n.id === 'cfg' ? { ...n, environment: 'sandbox', workspaceId: 'W' } : n));
    await load(flow3, {});
    const err3 = await callExpectingError({});
    assert.equal(err3.error.code, 'ECONFIG');
    assert.match(err3.error.message, /token: /);
  });

  it('refuses the simulator-only operations on a hosted environment with ECONFIG naming the operation, sending nothing', async () => {
    const server = await countingServer();
    try {
      // production, its v2 address pointed at a counting server: anything sent would be counted.
      const hosted = (props: Record<string, unknown>, type = 'custody-policy') =>
        opFlow(type, props).map((n: any) => (n.id === 'cfg' ? { ...n, environment: 'production', v2BaseUrl: server.baseUrl, workspaceId: 'W' } : n));
      const cases: Array<[string, string, Record<string, unknown>]> = [
        ['custody-policy', 'getAction', { actionID: 'A1' }],
        ['custody-policy', 'approveAction', { actionID: 'A1' }],
        ['custody-portfolio', 'get', { accountID: 'P1' }],
        ['custody-portfolio', 'getWallet', { accountID: 'P1', walletID: 'X1' }],
      ];
      for (const [type, operation, payload] of cases) {
        await load(hosted({ operation }, type), { cfg: { token: 'secret-token-value' } });
        const err = await callExpectingError(payload);
        assert.equal(err.error.code, 'ECONFIG', err.error.message);
        assert.ok(err.error.message.includes(` ${operation} is simulator only`), err.error.message);
        assert.ok(!JSON.stringify(err).includes('secret-token-value'));
        await helper.unload();
      }
      assert.equal(server.requests, 0);
      // The same connection does send an operation of the spec (the counter counts).
      await load(hosted({ operation: 'list' }), { cfg: { token: 'secret-token-value' } });
      assert.deepEqual((await call({})).payload, { policies: [] });
      assert.equal(server.requests, 1);
    } finally {
      await server.stop();
    }
  });

  it('the example flow "Set up a workspace" runs to its end as imported', async () => {
    const example = JSON.parse(fs.readFileSync(path.join(root, 'examples', '07 Set up a workspace.json'), 'utf8')) as any[];
    // Watch the final debug node and the Catch node through helper nodes wired beside them.
    const flow = example.map((n) => {
      // The list of policies at the end (the example's debug node picks the policy by flow.policyID).
      if (n.name === 'list policies') return { ...n, wires: [[...n.wires[0], 'watch']] };
      if (n.name === 'create policy Treasury (2 of 2)') return { ...n, wires: [[...n.wires[0], 'created']] };
      if (n.type === 'catch') return { ...n, wires: [[...n.wires[0], 'errors']] };
      if (n.name === 'create wallet (wait 6 s)') return { ...n, wires: [[...n.wires[0], 'wallet']] };
      return n;
    });
    const z = example.find((n) => n.type === 'tab').id;
    flow.push({ id: 'watch', z, type: 'helper', x: 10, y: 10 }, { id: 'errors', z, type: 'helper', x: 10, y: 10 }, { id: 'wallet', z, type: 'helper', x: 10, y: 10 }, { id: 'created', z, type: 'helper', x: 10, y: 10 });
    await load(flow);
    const inject = example.find((n) => n.type === 'inject');
    helper.getNode(inject.id).receive({});
    const watch = inbox.get('watch')!;
    const errors = inbox.get('errors')!;
    await until(() => (watch.length || errors.length ? true : undefined), 'the end of the example', 30000);
    assert.deepEqual(errors.map((m) => m.error?.message), []);
    const policyID = inbox.get('created')![0].payload.policyID;
    const policy = watch[0].payload.policies.find((p: any) => p.policyID === policyID);
    assert.ok(policy, `the created policy ${policyID} is listed`);
    assert.equal(policy.name, 'Treasury');
    assert.equal(policy.expression.threshold, 2);
    assert.deepEqual(policy.expression.rules.map((r: any) => r.arguments.id), ['m.alice', 'm.bob', 'm.carol']);
    assert.match(inbox.get('wallet')![0].payload.address, /^0x[0-9a-f]{40}$/);
  });
});

// ------------------------------------------------------------------ editor, end to end

describe('v2 policy editor in a real node-red: a policy built in the dialog, deployed and run', function () {
  this.timeout(120000);
  const red = useRedProcess({ prefix: 'cf-v2-editor-', flows: fs.readFileSync(path.join(root, 'examples', '07 Set up a workspace.json')) });

  it('adds an API key member and raises the threshold in the form; the deployed flow creates that policy and adds m.carol', async () => {
    const { base } = red();
    const { debug, ws } = await watchDebug(base);
    await withEditor(base, { width: 1400, height: 1000 }, { nodes: ['07a5c0de00000003'] }, async ({ page, errors }) => {
      await page.evaluate(() => (window as any).RED.editor.edit((window as any).RED.nodes.node('07a5c0de00000003')));
      await page.waitForSelector('#node-input-members-list');
      await page.waitForTimeout(500);
      // As a user does: "+ member", choose "API key", type the id; set the threshold; Done.
      await page.click('.node-input-members-container-row .red-ui-editableList-addButton');
      const row = page.locator('#node-input-members-list li').last();
      await row.locator('select.custody-member-kind').selectOption('apiKey');
      await row.locator('input.custody-member-id').fill('k.agent');
      // The threshold is a TypedInput (num): its visible text input.
      const threshold = page.locator('.custody-row[data-property="threshold"] input.red-ui-typedInput-input');
      await threshold.fill('3');
      await threshold.dispatchEvent('change');
      await page.click('#node-dialog-ok');
      await page.waitForTimeout(300);
      const saved = await page.evaluate(() => {
        const n = (window as any).RED.nodes.node('07a5c0de00000003');
        return { members: n.members, threshold: n.threshold, valid: n.valid };
      });
      assert.deepEqual(saved, {
        members: [
          { kind: 'human', id: 'm.alice' },
          { kind: 'human', id: 'm.bob' },
          { kind: 'apiKey', id: 'k.agent' },
        ],
        threshold: '3',
        valid: true,
      });
      await page.click('#red-ui-header-button-deploy');
      await page.waitForFunction(() => !(window as any).RED.nodes.dirty(), null, { timeout: 10000 });
      assert.deepEqual(errors, []);
    });
    assert.equal((await fetch(`${base}/inject/07a5c0de00000002`, { method: 'POST' })).status, 200);
    const end = await until(() => debug.find((d) => d.name === 'Treasury policy now (3 members)' || d.name === 'error'), 'the end of the example', 30000);
    ws.close();
    assert.equal(end.name, 'Treasury policy now (3 members)', end.msg);
    const shown = JSON.parse(end.msg!);
    const policy = shown.payload ?? shown;
    assert.equal(policy.expression.threshold, 3);
    assert.deepEqual(policy.expression.rules.map((r: any) => r.arguments.id), ['m.alice', 'm.bob', 'k.agent', 'm.carol']);
    assert.deepEqual(policy.expression.rules[2], { type: 2, operation: 3, threshold: 0, arguments: { id: 'k.agent' } });
  });
});
