/**
 * The endpoint matrix: every row of the table "Spec coverage: every endpoint of section 4" (docs/spec-coverage.md)
 * (spec section 4, 43 v1 and 5 v2 rows) made to succeed twice, with a fixture input per row:
 * (a) through lib (`callOperation` and `callWorkspaceOperation` of the row's operation, lib `OPERATIONS`)
 *     against a simulator started here, over real sockets, signed (v1) or with `x-token` (v2);
 * (b) through the row's node in the real Node-RED runtime (node-red-node-test-helper), against the
 *     config node's built-in simulator, the same fixture as `msg.payload`.
 * Each pass asserts a 2xx answer and the shape of the answer a flow relies on.
 *
 * The fixtures are keyed by "<node> <operation>"; a row without a fixture fails (a new row of the
 * table cannot be skipped silently), and so does a fixture without a row. A fixture builds what its
 * row needs first (a transfer before its read, an approved quote before a take, a wallet
 * connection before a sweep, a policy before a member is added, ...) through lib and the
 * simulator's control endpoints, on the simulator of the pass, using the demo dataset's fixed ids.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import { Simulator } from '../../simulator';
import { sharedSimulator, stopSharedSimulator } from '../../simulator/shared';
import { DEMO_IDS, DEMO_WHITELIST } from '../../simulator/demo';
import { swapQuoteRequest, transferRequest } from '../helpers/requests';
import { control, until } from '../helpers/support';
import { startHelperServer, stopHelperServer } from '../helpers/node-flows';
import { readSpecCoverageTable, type SpecCoverageRow } from '../helpers/readme-table';
import { isOperationNodeType, paletteSpecs } from '../../nodes/shared/palette';
import {
  CustodyClient,
  WorkspaceClient,
  callOperation,
  callWorkspaceOperation,
  OPERATIONS,
  findAdminPolicy,
  buildPolicyExpression,
  listPolicies,
  type OperationSpec,
  type WorkspacePolicy,
} from '../../lib';
import { withExtraMember } from '../../lib/request/policy-body';

/** One row of the spec coverage table. */
type Row = SpecCoverageRow;

/** The rows of docs/spec-coverage.md. */
const readTable = readSpecCoverageTable;

/** What a fixture works with: the simulator of the pass and lib clients to it (full v1 key, v2 token). */
interface Ctx {
  sim: Simulator;
  v1: CustodyClient;
  v2: WorkspaceClient;
  /** memo of set-up steps done once per simulator (e.g. the exchange wallet connection) */
  once: Map<string, Promise<unknown>>;
}

/** A row's fixture: the input that makes it succeed, and the shape of the answer a flow relies on. */
interface Fixture {
  input(ctx: Ctx): Promise<Record<string, unknown>>;
  /** assert on the answer body (`msg.payload`); `input` is what was sent */
  check(body: any, input: Record<string, unknown>, ctx: Ctx): void | Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);
let seq = 0;
/** A fresh id suffix, so that repeated runs never reuse a partner_txID. */
const unique = (p: string) => `${p}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${++seq}`;

// The demo dataset's fixed ids (the same on every simulator of a pass).
const { company_id: COMPANY, fund_id: FUND, core_client_id: APPROVER, taker_company_id: TAKER, taker_core_client_id: TAKER_APPROVER, exchange_client_id: EXCHANGE_CLIENT } = DEMO_IDS;
const [BTC] = DEMO_IDS.wallets;
const [TAKER_BTC, TAKER_ETH] = DEMO_IDS.taker_wallets;
const [EXCHANGE_BTC] = DEMO_IDS.exchange_wallets;
const WHITELISTED_BTC = DEMO_WHITELIST['BTC-TESTNET'];

/** Run `spec` through lib on the ctx's v1 client. @returns the answer body. */
async function v1(ctx: Ctx, spec: OperationSpec, input: Record<string, unknown>): Promise<any> {
  return (await callOperation<any>(ctx.v1, spec, input)).data;
}

/** A new transfer from the demo BTC wallet to the counterparty's (pending its custodian's approval). */
function transferInput(ctx: Ctx): Record<string, unknown> {
  return transferRequest(ctx.sim.demo, { expires: now() + 3600, benefit_of: 'Matrix customer', account_no: 'ACC-MATRIX', reference: 'endpoint matrix', partner_txID: unique('mx-tr'), send: { symbol: 'BTC-TESTNET', amount: 1000 } });
}

/** The pending action of `clientId` of `type` whose details name `txId`. @throws when there is none. */
async function actionFor(ctx: Ctx, clientId: string, type: string, txId: string): Promise<string> {
  const { actions } = await v1(ctx, OPERATIONS.listActions.spec, { client_id: clientId });
  for (const a of (actions as Array<{ id: string; type: string }>).filter((x) => x.type === type)) {
    const action = await v1(ctx, OPERATIONS.getAction.spec, { client_id: clientId, action_id: a.id });
    if (action.details?.txID === txId) return a.id;
  }
  throw new Error(`no pending ${type} action of ${clientId} for ${txId}`);
}

/** A transfer and its pending ApproveTransfer action of the demo approver. */
async function pendingTransferAction(ctx: Ctx): Promise<{ tx_id: string; action_id: string }> {
  const tx = await v1(ctx, OPERATIONS.createTransfer.spec, transferInput(ctx));
  return { tx_id: tx.tx_id, action_id: await actionFor(ctx, APPROVER, 'ApproveTransfer', tx.tx_id) };
}

/** A swap quote input of the demo company: BTC for ETH. */
function makeInput(ctx: Ctx, addToHub: boolean): Record<string, unknown> {
  return swapQuoteRequest(ctx.sim.demo, {
    expires: now() + 3600,
    reference: 'endpoint matrix quote',
    partner_txID: unique('mx-mk'),
    send: { symbol: 'BTC-TESTNET', amount: 20000 },
    receive: { symbol: 'ETH-TESTNET', amount: 3000000 },
    add_to_liquidity_hub: addToHub,
  });
}

/** A quote made and approved by the demo approver (txStatus taker_pending); published when `addToHub`. */
async function approvedQuote(ctx: Ctx, addToHub: boolean): Promise<string> {
  const made = await v1(ctx, OPERATIONS.makeSwap.spec, makeInput(ctx, addToHub));
  const actionId = await actionFor(ctx, APPROVER, 'ApproveSwap', made.tx_id);
  await v1(ctx, OPERATIONS.approveAction.spec, { client_id: APPROVER, action_id: actionId });
  return made.tx_id;
}

/** A take input of the taker company for quote `swapId`. */
function takeInput(swapId: string): Record<string, unknown> {
  return { company_id: TAKER, swap_id: swapId, send_wallet_id: TAKER_ETH, receive_wallet_id: TAKER_BTC, reference: 'endpoint matrix take', partner_txID: unique('mx-tk') };
}

/** The demo exchange's dedicated BTC wallet connected to its exchange core client (requested, approved), once per simulator. */
function connectedExchangeWallet(ctx: Ctx): Promise<unknown> {
  let p = ctx.once.get('exchange');
  if (!p) {
    p = (async () => {
      const request = await control(ctx.sim, '/exchange/connect-request', { client_id: EXCHANGE_CLIENT, wallet_id: EXCHANGE_BTC, customer_email: 'matrix@exchange.example', customer_id: unique('cust') });
      await v1(ctx, OPERATIONS.approveAction.spec, { client_id: EXCHANGE_CLIENT, action_id: request.action_id });
    })();
    ctx.once.set('exchange', p);
  }
  return p;
}

/** A sweep input: from the connected exchange wallet to the demo BTC wallet. */
let sweepSeq = 0;
function sweepInput(): Record<string, unknown> {
  return { client_id: EXCHANGE_CLIENT, wallet_id: EXCHANGE_BTC, recipient_wallet_id: BTC, reference: 'endpoint matrix sweep', partner_txID: `matrix-sweep-${++sweepSeq}`, expires: now() + 3600, send: { symbol: 'BTC-TESTNET', amount: 2000 } };
}

/** A v2 transaction policy with m.alice (threshold 1). @returns the policy as listed. */
async function newPolicy(ctx: Ctx): Promise<WorkspacePolicy> {
  const adminPolicyID = (await findAdminPolicy(ctx.v2)).policyID;
  const body = { name: unique('Matrix policy'), expression: buildPolicyExpression(1, ['m.alice']), expressionContentType: 'application/json', adminPolicyID, policyType: 'transaction', adminLocked: false, allowDuplicates: false };
  const { policyID } = (await callWorkspaceOperation<{ policyID: string }>(ctx.v2, OPERATIONS.createPolicy.spec, body)).data;
  const policy = (await listPolicies(ctx.v2)).data.policies.find((p) => p.policyID === policyID);
  assert.ok(policy, `policy ${policyID} listed after create`);
  return policy;
}

const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0;

/** The fixtures, by "<node> <operation>" of the spec coverage table. */
const FIXTURES: Record<string, Fixture> = {
  // ---- assets
  'custody-assets assets': {
    input: async () => ({}),
    check: (b) => assert.ok(b.assets.some((a: { code: string }) => a.code === 'BTC-TESTNET')),
  },
  'custody-assets fee': {
    input: async () => ({ type: 'transferOut', asset: 'BTC-TESTNET', amount: 100000 }),
    check: (b) => {
      assert.ok(Number.isInteger(b.fees) && Number.isInteger(b.netAmount));
      assert.equal(b.amountToSend, b.netAmount + b.fees);
    },
  },
  // ---- company
  'custody-company create': {
    input: async () => ({ name: unique('Matrix Ltd'), city: 'London', country: 'GB', domain: 'matrix.example', ref: 'mx' }),
    check: (b) => assert.ok(nonEmpty(b.company_id)),
  },
  'custody-company get': {
    input: async () => ({ company_id: COMPANY }),
    check: (b) => assert.deepEqual([b.company_id, b.name], [COMPANY, 'Demo Treasury Ltd']),
  },
  'custody-company update': {
    input: async (ctx) => ({ company_id: (await v1(ctx, OPERATIONS.createCompany.spec, { name: unique('Before') })).company_id, name: 'Matrix Renamed Ltd' }),
    check: async (b, input, ctx) => {
      assert.equal(b.company_id, input.company_id);
      assert.equal((await v1(ctx, OPERATIONS.getCompany.spec, { company_id: input.company_id })).name, 'Matrix Renamed Ltd');
    },
  },
  'custody-company search': {
    input: async () => ({ query: 'Dem' }),
    check: (b) => assert.ok(b.total_count >= 1 && b.matches.some((m: { company_id: string }) => m.company_id === COMPANY)),
  },
  // ---- trusted parties
  'custody-trusted-party add': {
    input: async (ctx) => ({ company_id: COMPANY, address: (await v1(ctx, OPERATIONS.createCoreClient.spec, { name: unique('mx-party') })).id, type: 'core-client', name: 'matrix party' }),
    check: async (_b, input, ctx) => {
      const { list } = await v1(ctx, OPERATIONS.listTrustedParties.spec, { company_id: COMPANY });
      assert.ok(list.some((p: { address: string }) => p.address === input.address), 'listed after add');
    },
  },
  'custody-trusted-party list': {
    input: async () => ({ company_id: COMPANY }),
    check: (b) => assert.ok(b.total_count === b.list.length && b.list.some((p: { address: string }) => p.address === APPROVER)),
  },
  'custody-trusted-party remove': {
    input: async (ctx) => {
      const address = (await v1(ctx, OPERATIONS.createCoreClient.spec, { name: unique('mx-gone') })).id;
      await v1(ctx, OPERATIONS.addTrustedParty.spec, { company_id: COMPANY, address, type: 'core-client', name: 'to remove' });
      const { list } = await v1(ctx, OPERATIONS.listTrustedParties.spec, { company_id: COMPANY });
      return { company_id: COMPANY, trustedparty_id: list.find((p: { address: string }) => p.address === address).trusted_entity_id };
    },
    check: async (_b, input, ctx) => {
      const { list } = await v1(ctx, OPERATIONS.listTrustedParties.spec, { company_id: COMPANY });
      assert.ok(!list.some((p: { trusted_entity_id: string }) => p.trusted_entity_id === input.trustedparty_id), 'gone after remove');
    },
  },
  // ---- fund
  'custody-fund deposits': {
    input: async () => ({ company_id: COMPANY, fund_id: FUND }),
    check: (b) => assert.ok(b.list.length > 0 && b.total_count === b.list.length),
  },
  'custody-fund ledger': {
    input: async () => ({ company_id: COMPANY, fund_id: FUND, direction: 'in' }),
    check: (b) => assert.ok(b.List.length > 0 && b.List.every((e: { type: string }) => e.type !== 'transferOut')),
  },
  'custody-fund addWhitelist': {
    input: async () => ({ company_id: COMPANY, fund_id: FUND, name: 'matrix cold', asset: 'BTC-TESTNET', address: `tb1qmatrix${Date.now().toString(36)}${++seq}` }),
    check: async (_b, input, ctx) => {
      const listed = await v1(ctx, OPERATIONS.listWhitelist.spec, { company_id: COMPANY, fund_id: FUND });
      assert.ok(JSON.stringify(listed).includes(String(input.address)), 'whitelisted address listed');
    },
  },
  'custody-fund getFund': {
    input: async () => ({ company_id: COMPANY, fund_id: FUND }),
    check: (b) => assert.ok(b.fund_id === FUND && b.wallets.some((w: { wallet_id: string }) => w.wallet_id === BTC)),
  },
  'custody-fund getWallet': {
    input: async () => ({ wallet_id: BTC }),
    check: (b) => assert.ok(b.wallet_id === BTC && b.asset === 'BTC-TESTNET' && Number.isInteger(b.balance) && nonEmpty(b.address)),
  },
  'custody-fund walletHistory': {
    input: async () => ({ wallet_id: BTC }),
    check: (b) => assert.ok(b.history.length > 0 && b.history.every((h: { wallet_id: string; amount: number }) => h.wallet_id === BTC && Number.isInteger(h.amount))),
  },
  'custody-fund holdings': {
    input: async () => ({ company_id: COMPANY }),
    check: (b) => assert.ok(b.holdings.some((h: { code: string }) => h.code === 'BTC-TESTNET')),
  },
  // ---- transfer
  'custody-transfer create': {
    input: async (ctx) => transferInput(ctx),
    check: (b) => assert.ok(nonEmpty(b.tx_id) && b.status === 'new'),
  },
  'custody-transfer get': {
    input: async (ctx) => ({ company_id: COMPANY, tx_id: (await v1(ctx, OPERATIONS.createTransfer.spec, transferInput(ctx))).tx_id }),
    check: (b, input) => assert.ok(b.txID === input.tx_id && nonEmpty(b.txStatus)),
  },
  // ---- withdraw
  'custody-withdraw create': {
    input: async () => ({ company_id: COMPANY, wallet_id: BTC, address: WHITELISTED_BTC, expires: now() + 3600, benefit_of: 'Matrix customer', account_no: 'ACC-MATRIX', reference: 'endpoint matrix withdraw', partner_txID: unique('mx-wd'), send: { symbol: 'BTC-TESTNET', amount: 10000 } }),
    check: (b) => assert.ok(nonEmpty(b.tx_id) && b.status === 'new'),
  },
  'custody-withdraw get': {
    input: async (ctx) => {
      const w = await v1(ctx, OPERATIONS.createWithdrawal.spec, await FIXTURES['custody-withdraw create'].input(ctx));
      return { company_id: COMPANY, tx_id: w.tx_id };
    },
    check: (b) => assert.ok(nonEmpty(b.txStatus) && b.statusDetails.amount - b.statusDetails.fees === 10000),
  },
  // ---- swaps and the liquidity hub
  'custody-swap-make make': {
    input: async (ctx) => makeInput(ctx, false),
    check: (b) => assert.ok(nonEmpty(b.tx_id) && b.status === 'new'),
  },
  'custody-swap-make get': {
    input: async (ctx) => ({ company_id: COMPANY, tx_id: (await v1(ctx, OPERATIONS.makeSwap.spec, makeInput(ctx, false))).tx_id }),
    check: (b, input) => assert.ok(b.txID === input.tx_id && nonEmpty(b.txStatus) && b.statusDetails.netAmount === 20000),
  },
  'custody-swap-take take': {
    input: async (ctx) => takeInput(await approvedQuote(ctx, true)),
    check: (b) => assert.ok(nonEmpty(b.tx_id) && nonEmpty(b.action_id)),
  },
  'custody-liquidity-hub publish': {
    input: async (ctx) => ({ company_id: COMPANY, tx_id: await approvedQuote(ctx, false) }),
    check: async (_b, input, ctx) => {
      const { items } = await v1(ctx, OPERATIONS.listLiquidityHub.spec, { company_id: TAKER });
      assert.ok(items.some((i: { tx_id: string }) => i.tx_id === input.tx_id), 'listed after publish');
    },
  },
  'custody-liquidity-hub list': {
    input: async (ctx) => {
      await approvedQuote(ctx, true);
      return { company_id: TAKER };
    },
    check: (b) => assert.ok(b.items.length > 0 && b.items.every((i: { tx_id: string }) => nonEmpty(i.tx_id))),
  },
  'custody-liquidity-hub approveTake': {
    input: async (ctx) => ({ company_id: TAKER, action_id: (await v1(ctx, OPERATIONS.takeSwap.spec, takeInput(await approvedQuote(ctx, true)))).action_id }),
    check: (b) => assert.deepEqual(b, { code: 200, msg: 'OK' }),
  },
  // ---- core clients and their actions
  'custody-core-client create': {
    input: async () => ({ name: unique('mx-core') }),
    check: (b, input) => assert.ok(nonEmpty(b.id) && b.name === input.name),
  },
  'custody-core-client list': {
    input: async () => ({ company_id: COMPANY }),
    check: (b) => assert.ok(b.count === b.clients.length && b.clients.some((c: { id: string }) => c.id === APPROVER)),
  },
  'custody-core-client actions': {
    input: async (ctx) => {
      await pendingTransferAction(ctx);
      return { client_id: APPROVER };
    },
    check: (b) => assert.ok(b.actions.length > 0 && b.actions.every((a: { id: string; type: string }) => nonEmpty(a.id) && nonEmpty(a.type))),
  },
  'custody-core-client action': {
    input: async (ctx) => ({ client_id: APPROVER, action_id: (await pendingTransferAction(ctx)).action_id }),
    check: (b, input) => assert.ok(b.id === input.action_id && b.type === 'ApproveTransfer' && nonEmpty(b.details?.txID)),
  },
  'custody-action approve': {
    input: async (ctx) => ({ client_id: APPROVER, action_id: (await pendingTransferAction(ctx)).action_id }),
    check: (b, input) => assert.deepEqual(b, b.action_id === undefined ? { code: 200, msg: 'OK' } : { code: 200, msg: 'OK', action_id: input.action_id, client_id: input.client_id }),
  },
  'custody-action reject': {
    input: async (ctx) => ({ client_id: APPROVER, action_id: (await pendingTransferAction(ctx)).action_id }),
    check: (b, input) => assert.deepEqual(b, b.action_id === undefined ? { code: 200, msg: 'OK' } : { code: 200, msg: 'OK', action_id: input.action_id, client_id: input.client_id }),
  },
  'custody-core-client wallets': {
    input: async (ctx) => {
      await connectedExchangeWallet(ctx);
      return { client_id: EXCHANGE_CLIENT };
    },
    check: (b) => assert.ok(b.wallets.some((w: { wallet_id: string; status: string }) => w.wallet_id === EXCHANGE_BTC && w.status === 'approved')),
  },
  // ---- sweeps
  'custody-sweep exchanges': {
    input: async () => ({}),
    check: (b) => assert.ok(b.exchanges.length >= 2),
  },
  'custody-sweep start': {
    input: async (ctx) => {
      await connectedExchangeWallet(ctx);
      return sweepInput();
    },
    check: (b) => assert.ok(nonEmpty(b.tx_id)),
  },
  'custody-sweep status': {
    input: async (ctx) => {
      await connectedExchangeWallet(ctx);
      return { client_id: EXCHANGE_CLIENT, tx_id: (await v1(ctx, OPERATIONS.startSweep.spec, sweepInput())).tx_id };
    },
    check: (b) => assert.equal(b.status_details.net_amount, 2000),
  },
  // ---- the read-only subset (with the full key)
  'custody-read account': {
    input: async () => ({}),
    check: (b) => assert.ok(nonEmpty(b.account_id) && b.companies.some((c: { company_id: string }) => c.company_id === COMPANY)),
  },
  'custody-read balance': {
    input: async () => ({}),
    check: (b) => assert.ok(b.balances.some((x: { asset: string; balance: number }) => x.asset === 'BTC-TESTNET' && Number.isInteger(x.balance) && x.balance > 0)),
  },
  'custody-read funds': {
    input: async () => ({}),
    check: (b) => assert.ok(b.total_count === b.list.length && b.list.some((f: { fund_id: string }) => f.fund_id === FUND)),
  },
  'custody-read fund': {
    input: async () => ({ fund_id: FUND }),
    check: (b) => assert.ok(b.fund_id === FUND && b.wallets.some((w: { wallet_id: string }) => w.wallet_id === BTC)),
  },
  'custody-read fundLedger': {
    input: async () => ({ fund_id: FUND, direction: 'in' }),
    check: (b) => assert.ok(b.List.length > 0 && b.List.every((e: { type: string }) => e.type !== 'transferOut')),
  },
  'custody-read trustedParties': {
    input: async () => ({}),
    check: (b) => assert.ok(b.total_count === b.list.length && b.list.some((p: { address: string }) => p.address === APPROVER)),
  },
  'custody-read walletHistory': {
    input: async () => ({ wallet_id: BTC }),
    check: (b) => assert.ok(b.history.length > 0 && b.history.every((h: { wallet_id: string; amount: number }) => h.wallet_id === BTC && Number.isInteger(h.amount))),
  },
  // ---- v2: policies and portfolios
  'custody-policy list': {
    input: async () => ({}),
    check: (b) => assert.ok(b.policies.some((p: { policyType: string }) => p.policyType === 'admin')),
  },
  'custody-policy create': {
    input: async (ctx) => ({
      name: unique('Matrix policy'),
      expression: buildPolicyExpression(1, ['m.alice']),
      expressionContentType: 'application/json',
      adminPolicyID: (await findAdminPolicy(ctx.v2)).policyID,
      policyType: 'transaction',
      adminLocked: false,
      allowDuplicates: false,
    }),
    check: (b) => assert.ok(nonEmpty(b.policyID)),
  },
  'custody-policy addMember': {
    // The lib pass PUTs the whole body (policyID and the body with the new member rule); the node
    // reads the policy and builds that body itself from policyID and memberID.
    input: async (ctx) => {
      const policy = await newPolicy(ctx);
      return { policyID: policy.policyID, memberID: 'm.bob', ...withExtraMember(policy, 'm.bob') };
    },
    check: (b, input) => assert.ok(nonEmpty(b.actionID) && b.policyID === input.policyID && b.status === 'pending'),
  },
  'custody-portfolio create': {
    input: async () => ({ name: unique('Matrix portfolio'), type: 'standard' }),
    check: (b) => assert.ok(nonEmpty(b.accountID)),
  },
  'custody-portfolio createWallet': {
    input: async (ctx) => {
      const policy = await newPolicy(ctx);
      const account = (await callWorkspaceOperation<{ accountID: string }>(ctx.v2, OPERATIONS.createPortfolio.spec, { name: unique('Matrix wallets') })).data;
      return { accountID: account.accountID, name: 'matrix wallet', connectPlugin: 'defi', policyID: policy.policyID, waitForAddress: 0 };
    },
    check: (b) => assert.ok(nonEmpty(b.walletID) && typeof b.address === 'string'),
  },
};

/** The lib declaration a row's node operation sends (v2 `addMember` sends the policy `update`). */
function libSpec(row: Row): { v2: boolean; spec: OperationSpec } {
  const v2 = row.simulator.includes('/api/v2/');
  const group = isOperationNodeType(row.node) ? paletteSpecs(row.node) : undefined;
  assert.ok(group, `${row.node}: no lib operation group ${row.node}`);
  const spec = group[row.operation] ?? Object.values(group).find((s) => `${s.method} ${s.path}` === row.call);
  assert.ok(spec, `${row.node} ${row.operation}: no lib operation`);
  assert.equal(`${spec.method} ${spec.path}`, row.call, `${row.node} ${row.operation}: the lib operation's call`);
  return { v2, spec };
}

const key = (row: Row) => `${row.node} ${row.operation}`;

/** The fixture of a row. @throws naming the row when it has none. */
function fixtureOf(row: Row): Fixture {
  const f = FIXTURES[key(row)];
  assert.ok(f, `no fixture for the docs/spec-coverage.md row "${row.spec}" (${key(row)}): add one to FIXTURES in test/simulator/endpoint-matrix.test.ts`);
  return f;
}

/** Short JSON for messages. */
const brief = (v: unknown) => JSON.stringify(v)?.slice(0, 1200);

/** Run a row's check, naming the row and showing the answer when it fails. */
async function checked(row: Row, f: Fixture, body: unknown, input: Record<string, unknown>, ctx: Ctx): Promise<void> {
  try {
    await f.check(body, input, ctx);
  } catch (e) {
    throw new Error(`${key(row)}: the answer's shape: ${(e as Error).message}; answer ${brief(body)}`);
  }
}

const rows = readTable();

/** The node modules of the table, the config node and a Catch node. */
const NODE_TYPES = [...new Set(rows.map((r) => r.node))];

describe('endpoint matrix: every row of spec section 4, through lib and through its node', function () {
  this.timeout(60000);

  it('the spec coverage table has 48 rows, each with a fixture, and every fixture has a row', () => {
    assert.equal(rows.length, 48, 'rows in the spec coverage table');
    const missing = rows.filter((r) => !FIXTURES[key(r)]).map(key);
    assert.deepEqual(missing, [], 'spec coverage rows without a fixture');
    const stale = Object.keys(FIXTURES).filter((k) => !rows.some((r) => key(r) === k));
    assert.deepEqual(stale, [], 'fixtures without a spec coverage row');
  });

  describe('(a) lib against a simulator over real sockets', () => {
    let dataDir: string;
    let ctx: Ctx;

    before(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-matrix-lib-'));
      const sim = await Simulator.start({ dataDir, port: 0, persist: false });
      ctx = {
        sim,
        v1: new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, attempts: 1 }),
        v2: new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: sim.v2.token, workspaceId: sim.v2.workspaceId, attempts: 1 }),
        once: new Map(),
      };
    });

    after(async () => {
      await ctx?.v1.close();
      ctx?.v2.close();
      await ctx?.sim.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    for (const row of rows) {
      it(`${key(row)}: ${row.call}`, async () => {
        const f = fixtureOf(row);
        const { v2, spec } = libSpec(row);
        const input = await f.input(ctx);
        const res = v2 ? await callWorkspaceOperation<unknown>(ctx.v2, spec, input) : await callOperation<unknown>(ctx.v1, spec, input);
        assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${key(row)}: HTTP ${res.statusCode}`);
        await checked(row, f, res.data, input, ctx);
      });
    }
  });

  describe('(b) the node in the Node-RED runtime against the built-in simulator', () => {
    let dataDir: string;
    let ctx: Ctx;
    const nodeModules = [
      require('../../nodes/custody-config/custody-config'),
      ...NODE_TYPES.map((t) => require(`../../nodes/${t}/${t}`)),
      require('@node-red/nodes/core/common/25-catch.js'),
    ];
    const out: any[] = [];
    const caught: any[] = [];
    /** the data folder variable before this pass set it (restored after) */
    let previousDataEnv: string | undefined;

    before(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-matrix-nodes-'));
      previousDataEnv = process.env.CUSTODYFLOW_SIMULATOR_DATA;
      process.env.CUSTODYFLOW_SIMULATOR_DATA = dataDir;
      helper.init(require.resolve('node-red'));
      const sim = await sharedSimulator(dataDir);
      ctx = {
        sim,
        v1: new CustodyClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, privateKey: sim.account.privateKeyPem, attempts: 1 }),
        v2: new WorkspaceClient({ baseUrl: sim.v2.baseUrl, token: sim.v2.token, workspaceId: sim.v2.workspaceId, attempts: 1 }),
        once: new Map(),
      };
      await startHelperServer();
    });

    afterEach(async () => {
      await helper.unload();
    });

    after(async () => {
      await ctx?.v1.close();
      ctx?.v2.close();
      await stopHelperServer();
      await stopSharedSimulator();
      if (previousDataEnv === undefined) delete process.env.CUSTODYFLOW_SIMULATOR_DATA;
      else process.env.CUSTODYFLOW_SIMULATOR_DATA = previousDataEnv;
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    /** One node `op` (only its operation set: every field from msg.payload) wired to helper `out`; a Catch node to helper `caught`. */
    async function load(row: Row): Promise<void> {
      await helper.load(nodeModules, [
        { id: 'tab', type: 'tab', label: 'matrix' },
        { id: 'cfg', z: 'tab', type: 'custody-config', name: 'simulator', environment: 'simulator', signingMode: 'timestamp', timeout: 30 },
        { id: 'op', z: 'tab', type: row.node, connection: 'cfg', operation: row.operation, x: 100, y: 100, wires: [['out']] },
        { id: 'out', z: 'tab', type: 'helper', x: 300, y: 100 },
        { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, x: 100, y: 200, wires: [['caught']] },
        { id: 'caught', z: 'tab', type: 'helper', x: 300, y: 200 },
      ]);
      out.length = 0;
      caught.length = 0;
      helper.getNode('out').on('input', (msg: unknown) => out.push(msg));
      helper.getNode('caught').on('input', (msg: unknown) => caught.push(msg));
    }

    for (const row of rows) {
      it(`${key(row)}: ${row.call}`, async () => {
        const f = fixtureOf(row);
        await load(row);
        const input = await f.input(ctx);
        helper.getNode('op').receive({ payload: structuredClone(input) });
        await until(() => (out.length || caught.length ? true : undefined), `a msg from ${key(row)}`);
        if (caught.length) {
          const c = caught[0];
          assert.fail(`${key(row)}: reached the Catch node: ${c.statusCode ?? ''} ${c.error?.message}`);
        }
        const msg = out[0];
        assert.ok(msg.statusCode >= 200 && msg.statusCode < 300, `${key(row)}: msg.statusCode ${msg.statusCode}`);
        await checked(row, f, msg.payload, input, ctx);
      });
    }
  });
});
