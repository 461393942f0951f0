/**
 * The fault runs that check that every payment is made exactly once under faults (docs/testing.md,
 * "Exactly-once payments"; the failure kinds: docs/nodes.md "Retries: the three failure kinds"),
 * shared by the fault test (exactly-once.test.ts) and the fault benchmark (bench/exactly-once.ts):
 * payments made through a {@link FaultProxy} in front of the simulator, then checked against what
 * the simulator holds.
 *
 * - {@link runLibTransfers}: transfers through lib (`createTransfer` with a journal), faults
 *   before and after commit; a share of them with `resolveUnknown: false`, whose outcome-unknown
 *   errors are sent again once the faults stop.
 * - {@link runNodePayments}: transfers or withdrawals through the `custody-transfer` /
 *   `custody-withdraw` node of a Node-RED runtime ({@link faultFlow}), driven by
 *   {@link NodeDriver}.
 * - {@link resolveUnknownWithdrawals}: the outcome-unknown withdrawals re-sent before a resolve
 *   (refused, nothing sent), resolved with the node's `resolve` operation (under GET faults, then
 *   with the faults off), and re-sent after it.
 * - {@link figuresOf}: what a run shows against the simulator's {@link Census} (duplicates, errors
 *   with and without the outcome-unknown mark, calls that had moved money, definite answers).
 *
 * No assertion here: the test asserts on the figures, the benchmark prints them.
 */
import type { DemoDataset } from '../../simulator';
import { CustodyClient, createTransfer, OUTCOME_UNKNOWN_CODE, ApiError, type SubmissionJournal, type TransferRequest } from '../../lib';
import { benchTransfer } from '../../bench/harness';
import { BEFORE_COMMIT, type FaultProxy, type FaultRule } from './fault-proxy';

/** What the simulator holds per `partner_txID`: the tx ids of its transfers and of its withdrawals. */
export interface Census {
  transfer: Map<string, string[]>;
  withdraw: Map<string, string[]>;
}

/** The kinds of payment the fault runs make. */
export type PaymentKind = keyof Census;

/**
 * The census of a simulator state (the in-process `Simulator.engine.state`, or the same shape
 * sent by a simulator child process): every transfer and withdrawal by `partner_txID`.
 * @param state the simulator state's `transfers` and `withdrawals` (records by tx id).
 * @param prefix only `partner_txID`s starting with it (default all).
 */
export function censusOf(state: { transfers: Record<string, { txID: string; partner_txID: string }>; withdrawals: Record<string, { txID: string; partner_txID: string }> }, prefix = ''): Census {
  const index = (records: Record<string, { txID: string; partner_txID: string }>) => {
    const out = new Map<string, string[]>();
    for (const r of Object.values(records)) {
      if (!r.partner_txID || !r.partner_txID.startsWith(prefix)) continue;
      const list = out.get(r.partner_txID) ?? [];
      list.push(r.txID);
      out.set(r.partner_txID, list);
    }
    return out;
  };
  return { transfer: index(state.transfers), withdraw: index(state.withdrawals) };
}

/** The simulator a run works against: its addresses, the account's credentials, the demo ids and a census. */
export interface SimulatorUnderTest {
  /** The simulator's own v1 base URL (the proxy's target). */
  baseUrl: string;
  /** Its control URL (`.../_simulator`). */
  controlUrl: string;
  apiKey: string;
  /** Treat as a secret: never logged. */
  privateKeyPem: string;
  demo: DemoDataset;
  /** What it holds now (transfers and withdrawals by `partner_txID`). */
  census(): Promise<Census>;
}

/**
 * The fault rates of the runs: about a third of the payment POSTs faulted, spread over every
 * kind (before commit: 503, dropped connection, the simulator's 500 and 503; after commit:
 * dropped connection, 502, answer held past the timeout); GETs at a lower rate.
 */
export const FAULT_RULES: FaultRule[] = [
  {
    method: 'POST',
    path: /\/(transfer|withdraw)$/,
    rates: { before503: 0.05, dropBefore: 0.05, dropAfter: 0.07, after502: 0.05, holdAfter: 0.05, sim500: 0.03, sim503: 0.03 },
  },
  { method: 'GET', path: /./, rates: { before503: 0.02, dropBefore: 0.02, dropAfter: 0.02, holdAfter: 0.02 } },
];

/** One answer of a call: definite (`new` or `existing`, with the tx_id), or an error. */
export type Answer =
  | { ok: true; outcome: 'new' | 'existing'; tx_id: string }
  | {
      ok: false;
      /** The error's code (`EOUTCOMEUNKNOWN`, `ECONFLICT`, an HTTP status, a socket code). */
      code: unknown;
      /** What the failure tells: `refused`, `notSent`, `outcomeUnknown` (lib `ApiError.failure`; the node's `msg.outcome`). */
      failure?: string;
      message: string;
    };

/** A call of a run: its key, its first answer (under faults) and, when that was an error, the answer of the same request sent again once the faults stopped. */
export interface CallRecord {
  kind: PaymentKind;
  partner_txID: string;
  first: Answer;
  /** The answer of the re-send after the faults stopped (lib transfers with `resolveUnknown: false`). */
  again?: Answer;
}

/** `count` calls of `one(i)` with `concurrency` in flight; `onAllStarted` runs once the last call has started. */
export async function pool(count: number, concurrency: number, one: (i: number) => Promise<void>, onAllStarted?: () => void): Promise<void> {
  let next = 0;
  async function worker(): Promise<void> {
    while (next < count) {
      const i = next++;
      if (next === count) onAllStarted?.();
      await one(i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (count === 0) onAllStarted?.();
}

/**
 * `count` calls of `call(i)`, `concurrency` in flight, with the proxy's faults on; the faults are
 * off again when this returns or throws, and, when `stopFaultsWhenAllStarted`, as soon as the last
 * call has started (the calls still in flight then meet no fault on their further requests).
 * @returns each call's record, in call order.
 * @throws the first failure of a call (rejects).
 */
async function callsUnderFaults(proxy: FaultProxy, count: number, concurrency: number, stopFaultsWhenAllStarted: boolean, call: (i: number) => Promise<CallRecord>): Promise<CallRecord[]> {
  const calls: CallRecord[] = new Array(count);
  proxy.faults = true;
  try {
    await pool(
      count,
      concurrency,
      async (i) => {
        calls[i] = await call(i);
      },
      stopFaultsWhenAllStarted ? () => (proxy.faults = false) : undefined,
    );
  } finally {
    proxy.faults = false;
  }
  return calls;
}

/** The {@link Answer} of a lib call that threw. */
function libError(e: unknown): Answer {
  if (e instanceof ApiError) return { ok: false, code: e.code, failure: e.failure, message: e.message };
  const err = e as { code?: unknown; message?: string };
  return { ok: false, code: err.code, failure: 'notSent', message: String(err.message ?? e) };
}

/** Options of {@link runLibTransfers}. */
export interface LibRunOptions {
  /** Transfers to make. */
  count: number;
  /** Calls in flight at once. */
  concurrency: number;
  /** The client's per-request timeout, ms (shorter than the proxy's hold). */
  timeoutMs: number;
  /** The submission journal (a file in a temporary folder). */
  journal: SubmissionJournal;
  /** Prefix of every `partner_txID` (unique per run). */
  prefix: string;
  /** Every n-th call (n >= 1) is made with `resolveUnknown: false`; 0: none. */
  optOutEvery: number;
  /** First wait before a transfer is re-sent after an unknown outcome, ms (lib `resendDelayMs`). */
  resendDelayMs: number;
}

/** A transfer of the demo BTC-TESTNET wallet to the counterparty's, 1 base unit, expiring in an hour. */
export function faultTransfer(demo: DemoDataset, partnerTxId: string): TransferRequest & { company_id: string } {
  return benchTransfer(demo, 1, { benefit_of: 'Fault run', account_no: 'FAULT', reference: `ref ${partnerTxId}`, partner_txID: partnerTxId });
}

/**
 * Transfers through lib with faults: the proxy faults every call until the last one has
 * started, then stops; calls re-sending after an unknown outcome then get their definite
 * answer. Calls made with `resolveUnknown: false` that ended in an error are sent again (same
 * request, same journal, re-sends on: a re-click) once every call has ended.
 * @returns one {@link CallRecord} per transfer, in call order.
 */
export async function runLibTransfers(sim: SimulatorUnderTest, proxy: FaultProxy, options: LibRunOptions): Promise<CallRecord[]> {
  const client = new CustodyClient({ baseUrl: proxy.baseUrl, apiKey: sim.apiKey, privateKey: sim.privateKeyPem, timeoutMs: options.timeoutMs });
  const requests = Array.from({ length: options.count }, (_, i) => faultTransfer(sim.demo, `${options.prefix}-${i}`));
  const optedOut = (i: number) => options.optOutEvery > 0 && i % options.optOutEvery === 0;
  const submit = async (i: number, resolveUnknown: boolean): Promise<Answer> => {
    try {
      const res = await createTransfer(client, requests[i], { journal: options.journal, resolveUnknown, resendDelayMs: options.resendDelayMs, maxResendDelayMs: options.resendDelayMs * 8 });
      return { ok: true, outcome: res.outcome, tx_id: res.data.tx_id };
    } catch (e) {
      return libError(e);
    }
  };
  try {
    const calls = await callsUnderFaults(proxy, options.count, options.concurrency, true, async (i) => ({ kind: 'transfer', partner_txID: requests[i].partner_txID, first: await submit(i, !optedOut(i)) }));
    // Faults over: a call that ended in an error is sent again, re-sends on (a re-click).
    await pool(options.count, options.concurrency, async (i) => {
      if (!calls[i].first.ok) calls[i].again = await submit(i, true);
    });
    return calls;
  } finally {
    await client.close();
  }
}

/** A Node-RED node as both node-red-node-test-helper and an embedded runtime give it. */
export interface NodeLike {
  receive(msg: object): void;
  on(event: 'input', listener: (msg: any) => void): unknown;
}

/** What a msg sent with {@link NodeDriver.send} led to: the node's output msg, or the Catch node's msg. */
export interface NodeReply {
  out?: any;
  caught?: any;
}

/**
 * Sends msgs into the nodes of a {@link faultFlow} and waits for each one's reply: its output at
 * the `out` node or its error at the `caught` node (wired from a Catch node), matched by a
 * `faultRunKey` property on the msg.
 */
export class NodeDriver {
  readonly #getNode: (id: string) => NodeLike;
  readonly #waiting = new Map<string, (reply: NodeReply) => void>();
  #seq = 0;

  /** @param getNode the runtime's node lookup (`helper.getNode`, `RED.nodes.getNode`); the flow must be loaded. */
  constructor(getNode: (id: string) => NodeLike) {
    this.#getNode = getNode;
    getNode('out').on('input', (msg) => this.#settle(msg, { out: msg }));
    getNode('caught').on('input', (msg) => this.#settle(msg, { caught: msg }));
  }

  #settle(msg: { faultRunKey?: string }, reply: NodeReply): void {
    const key = msg.faultRunKey ?? '';
    const resolve = this.#waiting.get(key);
    this.#waiting.delete(key);
    resolve?.(reply);
  }

  /**
   * Send `msg` into node `id`.
   * @returns its output msg or its Catch node msg, whichever comes.
   */
  send(id: string, msg: Record<string, unknown>): Promise<NodeReply> {
    const key = `fault-run-${++this.#seq}`;
    return new Promise((resolve) => {
      this.#waiting.set(key, resolve);
      this.#getNode(id).receive({ ...msg, faultRunKey: key });
    });
  }
}

/** The {@link Answer} a node's reply gives: `msg.outcome` and `msg.payload.tx_id`, or `msg.error` and `msg.outcome`. */
export function nodeAnswer(reply: NodeReply): Answer {
  if (reply.out) return { ok: true, outcome: reply.out.outcome, tx_id: reply.out.payload?.tx_id };
  const msg = reply.caught ?? {};
  return { ok: false, code: msg.error?.code, failure: msg.outcome, message: String(msg.error?.message ?? '') };
}

/**
 * The flow of the node runs: a config node pointing at `baseUrl` (a custom environment, timeout
 * `timeoutSeconds`), a `custody-transfer` node (`transfer`, operation create), a
 * `custody-withdraw` node (`withdraw`, create, "Expires after" one hour), a `custody-withdraw`
 * node with the `resolve` operation (`resolve`), all wired to `out`, and a Catch node wired to
 * `caught`. The config node's credentials are the caller's (id `cfg`).
 * @param sinkType the node type of `out` and `caught`: `helper` (node-red-node-test-helper) or `debug` (an embedded runtime).
 */
export function faultFlow(baseUrl: string, companyId: string, timeoutSeconds: number, sinkType: 'helper' | 'debug'): object[] {
  const sink = (id: string) => (sinkType === 'helper' ? { id, z: 'tab', type: 'helper', x: 100, y: 100 } : { id, z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'true', x: 300, y: 100, wires: [] });
  return [
    { id: 'tab', type: 'tab', label: 'fault run' },
    { id: 'cfg', type: 'custody-config', name: 'through the fault proxy', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: timeoutSeconds },
    { id: 'transfer', z: 'tab', type: 'custody-transfer', connection: 'cfg', operation: 'create', company_id: companyId, expiresAfter: '3600', x: 100, y: 100, wires: [['out']] },
    { id: 'withdraw', z: 'tab', type: 'custody-withdraw', connection: 'cfg', operation: 'create', company_id: companyId, expiresAfter: '3600', x: 100, y: 200, wires: [['out']] },
    { id: 'resolve', z: 'tab', type: 'custody-withdraw', connection: 'cfg', operation: 'resolve', company_id: companyId, x: 100, y: 300, wires: [['out']] },
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, x: 100, y: 400, wires: [['caught']] },
    sink('out'),
    sink('caught'),
  ];
}

/** The `msg.payload` of a transfer through the node (`expires` from the node's "Expires after"). */
export function nodeTransferPayload(demo: DemoDataset, partnerTxId: string): Record<string, unknown> {
  const { company_id: _company, expires: _expires, ...payload } = faultTransfer(demo, partnerTxId);
  return payload;
}

/**
 * The `msg.payload` of a withdrawal through the node: from the demo ETH-TESTNET wallet to its
 * whitelisted address, `expires` from the node's "Expires after". The reference and the amount
 * (1000 + `n` base units) differ per withdrawal, so a resolve finds exactly one.
 */
export function nodeWithdrawPayload(demo: DemoDataset, partnerTxId: string, n: number): Record<string, unknown> {
  return {
    wallet_id: demo.wallets['ETH-TESTNET'].wallet_id,
    address: demo.whitelist['ETH-TESTNET'],
    benefit_of: 'Fault run',
    account_no: 'FAULT',
    reference: `ref ${partnerTxId}`,
    partner_txID: partnerTxId,
    send: { symbol: 'ETH-TESTNET', amount: 1000 + n },
  };
}

/** Options of {@link runNodePayments}. */
export interface NodeRunOptions {
  kind: PaymentKind;
  count: number;
  concurrency: number;
  /** Prefix of every `partner_txID` (unique per run). */
  prefix: string;
  /**
   * True: the faults stop once the last msg has been sent in (transfers re-send until then);
   * false: they last until every msg has its reply (withdrawals are sent once).
   */
  stopFaultsWhenAllStarted: boolean;
}

/** A node run's calls and the msgs that made them (to send again). */
export interface NodeRun {
  calls: CallRecord[];
  /** The msg of each call (index as in `calls`). */
  msgs: Array<Record<string, unknown>>;
}

/**
 * Payments through the `transfer` or `withdraw` node of a {@link faultFlow} with faults on.
 * @returns each call's reply as an {@link Answer}, in msg order, with the msgs sent.
 */
export async function runNodePayments(sim: SimulatorUnderTest, proxy: FaultProxy, driver: NodeDriver, options: NodeRunOptions): Promise<NodeRun> {
  const msgs = Array.from({ length: options.count }, (_, i) => {
    const key = `${options.prefix}-${i}`;
    return { payload: options.kind === 'transfer' ? nodeTransferPayload(sim.demo, key) : nodeWithdrawPayload(sim.demo, key, i) };
  });
  const calls = await callsUnderFaults(proxy, options.count, options.concurrency, options.stopFaultsWhenAllStarted, async (i) => {
    const reply = await driver.send(options.kind, msgs[i]);
    return { kind: options.kind, partner_txID: (msgs[i].payload as { partner_txID: string }).partner_txID, first: nodeAnswer(reply) };
  });
  return { calls, msgs };
}

/** What one resolve answered: `msg.payload.result` (`found`, `notFound`, `ambiguous`) or `error`, with the tx_id when found. */
export interface ResolveAnswer {
  result: string;
  /** The transaction's id when found. */
  tx_id?: string;
  /** The error's message when the resolve failed. */
  error?: string;
}

/** What happened to one outcome-unknown withdrawal in {@link resolveUnknownWithdrawals}. */
export interface ResolvedWithdrawal {
  partner_txID: string;
  /** The re-send before any resolve (expected: refused, `EOUTCOMEUNKNOWN`). */
  before: Answer;
  /** Requests the proxy saw carrying this key during that re-send (expected 0). */
  sentBefore: number;
  /** The resolve made while the proxy faults GETs (found, not found, or failed: never wrong). */
  underFaults: ResolveAnswer;
  /** The resolve made with the faults off. */
  resolved: ResolveAnswer;
  /** The re-send after the resolves (found: `existing` with `tx_id` from the journal; not found before expires: still refused). */
  after: Answer;
  /** Requests the proxy saw carrying this key during that re-send (expected 0). */
  sentAfter: number;
}

/** The {@link ResolveAnswer} of a reply of the `resolve` node. */
function resolveAnswer(reply: NodeReply): ResolveAnswer {
  if (reply.out) return { result: String(reply.out.payload?.result), ...(reply.out.payload?.tx_id ? { tx_id: String(reply.out.payload.tx_id) } : {}) };
  return { result: 'error', error: String(reply.caught?.error?.message ?? '') };
}

/**
 * For every withdrawal of `run` whose reply was an outcome-unknown error: send its msg again
 * (refused while unresolved), resolve it with the `resolve` node once while the proxy faults
 * GETs (its {@link FaultRule}s for GET) and once with the faults off, then send its msg again
 * (answered from the journal when found). Counts the requests each re-send made.
 * @returns one {@link ResolvedWithdrawal} per outcome-unknown withdrawal.
 */
export async function resolveUnknownWithdrawals(proxy: FaultProxy, driver: NodeDriver, run: NodeRun, concurrency: number): Promise<ResolvedWithdrawal[]> {
  const unknown = run.calls.map((c, i) => ({ c, i })).filter(({ c }) => !c.first.ok && c.first.failure === 'outcomeUnknown');
  const out: ResolvedWithdrawal[] = new Array(unknown.length);
  // Re-sends are counted by the requests carrying their key: the resolves' GETs carry none.
  const sentFor = (key: string) => proxy.recordsOf(key).length;
  const resend = async (i: number, key: string) => {
    const seen = sentFor(key);
    const answer = nodeAnswer(await driver.send('withdraw', run.msgs[i]));
    return { answer, sent: sentFor(key) - seen };
  };
  const partial: Array<{ before: Answer; sentBefore: number; underFaults: ResolveAnswer }> = new Array(unknown.length);
  proxy.faults = true;
  try {
    await pool(unknown.length, concurrency, async (j) => {
      const { c, i } = unknown[j];
      const before = await resend(i, c.partner_txID);
      const underFaults = resolveAnswer(await driver.send('resolve', { payload: { partner_txID: c.partner_txID } }));
      partial[j] = { before: before.answer, sentBefore: before.sent, underFaults };
    });
  } finally {
    proxy.faults = false;
  }
  await pool(unknown.length, concurrency, async (j) => {
    const { c, i } = unknown[j];
    const resolved = resolveAnswer(await driver.send('resolve', { payload: { partner_txID: c.partner_txID } }));
    const after = await resend(i, c.partner_txID);
    out[j] = { partner_txID: c.partner_txID, ...partial[j], resolved, after: after.answer, sentAfter: after.sent };
  });
  return out;
}

/**
 * What a run shows against the simulator's census (the figures exactly-once is judged by:
 * duplicates, errors with and without the outcome-unknown mark, definite answers).
 */
export interface Figures {
  /** Calls made. */
  calls: number;
  /** Calls whose first answer was definite (`new` or `existing`). */
  definite: number;
  /** Calls whose first answer was an error marked outcome unknown (lib: `failure` `outcomeUnknown`; node: `msg.outcome`). */
  errorsMarked: number;
  /** Marked errors whose code is not `EOUTCOMEUNKNOWN` (expected 0). */
  markedWithoutCode: number;
  /** Calls whose first answer was an error without the mark. */
  errorsUnmarked: number;
  /** Errors without the mark whose payment exists in the simulator (expected 0: an unmarked error must mean nothing happened). */
  unmarkedThatMovedMoney: number;
  /** Calls whose payment was created by a request whose answer was lost (dropped, 502, held): money moved, the client was not told at once. */
  movedMoneyAnswerLost: number;
  /** Errors of calls whose payment exists in the simulator. */
  errorsThatMovedMoney: number;
  /** Keys with more than one transaction in the simulator (expected 0). */
  duplicates: number;
  /** Definite answers (first or again) whose tx_id is not the simulator's transaction for the key, or whose key has none (expected 0). */
  wrongTxId: number;
  /** Calls with a definite answer at the end (first, or the re-send after the faults stopped). */
  finalDefinite: number;
  /** Requests the proxy saw for these calls' keys. */
  requests: number;
}

/**
 * The {@link Figures} of `calls` against the simulator's `census` and the proxy's records.
 * @param calls the calls of one kind of payment.
 */
export function figuresOf(calls: CallRecord[], census: Census, proxy: FaultProxy): Figures {
  const f: Figures = { calls: calls.length, definite: 0, errorsMarked: 0, markedWithoutCode: 0, errorsUnmarked: 0, unmarkedThatMovedMoney: 0, movedMoneyAnswerLost: 0, errorsThatMovedMoney: 0, duplicates: 0, wrongTxId: 0, finalDefinite: 0, requests: 0 };
  const byKey = new Map<string, { created: boolean; lost: boolean; requests: number }>();
  for (const r of proxy.records) {
    if (!r.partner_txID) continue;
    const k = byKey.get(r.partner_txID) ?? { created: false, lost: false, requests: 0 };
    k.requests++;
    if (r.answerStatus === 'new' && r.fault !== 'none' && !BEFORE_COMMIT.has(r.fault)) k.lost = true;
    byKey.set(r.partner_txID, k);
  }
  for (const c of calls) {
    const txs = census[c.kind].get(c.partner_txID) ?? [];
    const exists = txs.length > 0;
    if (txs.length > 1) f.duplicates++;
    const seen = byKey.get(c.partner_txID);
    f.requests += seen?.requests ?? 0;
    if (exists && seen?.lost) f.movedMoneyAnswerLost++;
    const right = (a: Answer) => a.ok && txs.length === 1 && a.tx_id === txs[0];
    if (c.first.ok) {
      f.definite++;
      if (!right(c.first)) f.wrongTxId++;
    } else {
      if (exists) f.errorsThatMovedMoney++;
      if (c.first.failure === 'outcomeUnknown') {
        f.errorsMarked++;
        if (c.first.code !== OUTCOME_UNKNOWN_CODE) f.markedWithoutCode++;
      } else {
        f.errorsUnmarked++;
        if (exists) f.unmarkedThatMovedMoney++;
      }
    }
    if (c.again?.ok && !right(c.again)) f.wrongTxId++;
    if (c.first.ok || c.again?.ok) f.finalDefinite++;
  }
  return f;
}

/** Figures of the resolves of {@link resolveUnknownWithdrawals} against the census. */
export interface ResolveFigures {
  /** Outcome-unknown withdrawals resolved. */
  resolved: number;
  /** Outcome-unknown withdrawals that exist in the simulator. */
  existing: number;
  /** Resolves under GET faults that answered found, not found, or failed. */
  underFaults: { found: number; notFound: number; failed: number };
  /** Resolves with the faults off that answered found. */
  found: number;
  /** Resolves with the faults off that answered not found. */
  notFound: number;
  /** Resolves with the faults off that answered ambiguous, or failed. */
  other: number;
  /** Found with the simulator's tx_id, for each one that exists (expected = `existing`). */
  foundRight: number;
  /** Any resolve (under faults or not) that answered not found for one that exists, found for one that does not, or found with another tx_id (expected 0). */
  wrong: number;
  /** Re-sends before the resolve not refused with `EOUTCOMEUNKNOWN` (expected 0). */
  beforeNotRefused: number;
  /** Re-sends after a found resolve not answered `existing` with the found tx_id (expected 0). */
  afterFoundWrong: number;
  /** Re-sends after a not-found resolve (before expires) not refused with `EOUTCOMEUNKNOWN` (expected 0). */
  afterNotFoundNotRefused: number;
  /** Requests the re-sends sent, before and after the resolves (expected 0). */
  sent: number;
}

/** The {@link ResolveFigures} of `resolved` against the census. */
export function resolveFiguresOf(resolved: ResolvedWithdrawal[], census: Census): ResolveFigures {
  const f: ResolveFigures = { resolved: resolved.length, existing: 0, underFaults: { found: 0, notFound: 0, failed: 0 }, found: 0, notFound: 0, other: 0, foundRight: 0, wrong: 0, beforeNotRefused: 0, afterFoundWrong: 0, afterNotFoundNotRefused: 0, sent: 0 };
  const refused = (a: Answer) => !a.ok && a.code === OUTCOME_UNKNOWN_CODE && a.failure === 'outcomeUnknown';
  for (const r of resolved) {
    const txs = census.withdraw.get(r.partner_txID) ?? [];
    const exists = txs.length > 0;
    const wrong = (a: ResolveAnswer) => (a.result === 'found' && !(txs.length === 1 && a.tx_id === txs[0])) || (a.result === 'notFound' && exists);
    if (exists) f.existing++;
    f.sent += r.sentBefore + r.sentAfter;
    if (!refused(r.before)) f.beforeNotRefused++;
    if (r.underFaults.result === 'found') f.underFaults.found++;
    else if (r.underFaults.result === 'notFound') f.underFaults.notFound++;
    else f.underFaults.failed++;
    if (wrong(r.underFaults)) f.wrong++;
    if (wrong(r.resolved)) f.wrong++;
    if (r.resolved.result === 'found') {
      f.found++;
      if (txs.length === 1 && r.resolved.tx_id === txs[0]) f.foundRight++;
      if (!(r.after.ok && r.after.outcome === 'existing' && r.after.tx_id === r.resolved.tx_id)) f.afterFoundWrong++;
    } else if (r.resolved.result === 'notFound') {
      f.notFound++;
      if (!refused(r.after)) f.afterNotFoundNotRefused++;
    } else f.other++;
  }
  return f;
}
