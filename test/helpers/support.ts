/** Helpers shared by the tests. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Simulator } from '../../simulator';
import { ApiError, createTransfer, getAction, listActions, type CustodyClient, type TransferRequest } from '../../lib';
import { transferRequest } from './requests';

/**
 * Poll `check` every 10 ms until it returns a value other than undefined.
 * @returns that value.
 * @throws {Error} naming `what` after `timeoutMs` (default 15000).
 */
export async function until<T>(check: () => T | undefined, what: string, timeoutMs = 15000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Call a simulator control endpoint (loopback, unsigned JSON).
 * @returns the HTTP status and the parsed body.
 */
export async function controlCall(sim: Simulator, method: string, pathName: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(sim.controlUrl + pathName, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

/** POST a control endpoint and assert it succeeded. @returns the parsed body. */
export async function control(sim: Simulator, pathName: string, body: unknown = {}): Promise<any> {
  const res = await controlCall(sim, 'POST', pathName, body);
  assert.ok(res.status >= 200 && res.status < 300, `control ${pathName}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * A valid transfer request from the simulator's demo BTC-TESTNET wallet to the counterparty's,
 * with a fresh `partner_txID`; `overrides` replace any field ({@link transferRequest}).
 */
export function demoTransfer(sim: Simulator, overrides: Partial<TransferRequest> = {}): TransferRequest & { company_id: string } {
  return transferRequest(sim.demo, overrides);
}

/**
 * Register mocha hooks (`beforeEach`, `afterEach`) that give every test of the current suite a
 * fresh empty directory under the OS temp directory, named with `prefix` (e.g. `cf-sent-ids-`),
 * removed with its content after the test.
 * @returns a function answering the running test's directory (absolute path).
 */
export function tempDirPerTest(prefix: string): () => string {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

/**
 * Register mocha hooks (`before`, `after`) that give the current suite one fresh empty directory
 * under the OS temp directory, named with `prefix` (e.g. `cf-coord-audit-`), removed with its
 * content after its last test.
 * @returns a function answering the directory (absolute path; empty before the `before` hook ran).
 */
export function tempDirPerSuite(prefix: string): () => string {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/**
 * Set `vars` in this process's environment (undefined: remove the variable).
 * @returns what was there before, to hand back to {@link setEnv} to restore it.
 */
export function setEnv(vars: Record<string, string | undefined>): Record<string, string | undefined> {
  const previous = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return previous;
}

/**
 * Register mocha hooks on the current suite: `before` sets `vars` ({@link setEnv}; e.g. where a
 * config node of environment "simulator" starts the shared simulator, `CUSTODYFLOW_SIMULATOR_DATA`),
 * `after` puts back what was there. Register it before the hooks that need the variables.
 */
export function useEnv(vars: Record<string, string | undefined>): void {
  let previous: Record<string, string | undefined> = {};
  before(() => {
    previous = setEnv(vars);
  });
  after(() => {
    setEnv(previous);
  });
}

/** Assert that `p` fails with the section 7 401 `errPartnerAuth` whose `detail.reason` is `reason` (e.g. `signature`). */
export async function assertAuthRefused(p: Promise<unknown>, reason: string, what: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApiError, `${what}: ${String(err)}`);
    assert.equal(err.statusCode, 401, `${what}: ${err.message}`);
    assert.equal(err.msg, 'errPartnerAuth', what);
    assert.equal(err.detail.reason, reason, what);
    return true;
  });
}

/**
 * The first line of a PEM block with the given label (RFC 7468), e.g. `pemHeader('PUBLIC KEY')`
 * matches `-----BEGIN PUBLIC KEY-----` at the start of the text. Built from the label so that no
 * key block's opening line sits in the repository's source.
 */
export function pemHeader(label: string): RegExp {
  return new RegExp(`^-{5}BEGIN ${label}-{5}\\n`);
}

/** Something a test opened and closes when done (a client, a coordinator, a proxy wrapped as `{ close }`). */
export interface Closable {
  close(): Promise<void> | void;
}

/**
 * Register a mocha `afterEach` on the current suite that closes, in reverse order, everything the
 * test pushed onto the returned list, and empties it.
 * @returns the list: push each thing a test opens.
 */
export function closedAfterEach(): Closable[] {
  const open: Closable[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });
  return open;
}

/**
 * Create `n` transfers of `amount` base units from the simulator's demo BTC-TESTNET wallet
 * ({@link demoTransfer}), each of which waits for the decision of core client `clientId`, and read
 * their pending actions with details, as the core client feed sends them (`client_id` and
 * `action_id` added).
 * @returns the actions, in the order the simulator lists them.
 * @throws AssertionError when a transfer has no pending action of `clientId`.
 */
export async function pendingTransferActions(client: CustodyClient, sim: Simulator, n: number, amount = 1000, clientId = 'demo-approver'): Promise<any[]> {
  const txIds = new Set<string>();
  for (let i = 0; i < n; i++) txIds.add((await createTransfer(client, demoTransfer(sim, { send: { symbol: 'BTC-TESTNET', amount } }))).data.tx_id);
  const found: any[] = [];
  for (const a of (await listActions(client, { client_id: clientId })).data.actions) {
    const full = (await getAction(client, { client_id: clientId, action_id: a.id })).data;
    if (txIds.has(String(full.details?.txID))) found.push({ ...full, client_id: clientId, action_id: full.id });
  }
  assert.equal(found.length, n, 'every transfer has its pending action');
  return found;
}
