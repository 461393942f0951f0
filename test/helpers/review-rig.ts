/**
 * A `custody-review` set-up of real parts for the end-to-end review tests (docs/nodes.md
 * "custody-review"): the simulator (in this process, over real sockets) behind an
 * {@link ApprovalProxy} that records every approve (PUT) and reject (DELETE) call per instance
 * and may hold their answers; one or more real `node-red` processes with adminAuth (users alice
 * and bob with {@link OPERATOR} permissions, admin with `*`), each deployed with the flow core
 * client feed -> `custody-approver` (no rule, default decision hold) -> `custody-review`
 * (`approvers` quorum, its audit file at a known path in the instance's user directory), and a
 * Catch node (all nodes) -> `function` -> `file` node appending one JSON line per caught error;
 * optionally one real Redis (`coordination: 'redis'` on the config node).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ApprovalProxy, type ProxiedRequest } from './approval-proxy';
import type { Browser, Page } from 'playwright-core';
import { OPERATOR, adminCall, startAdminRed } from './admin-auth';
import { RedProcess, launchChromium, sleep } from './red-process';
import { RedisServer } from './redis-server';
import { startSimulated, stopSimulated, type SimulatedAccount } from './simulated';
import { control, demoTransfer } from './support';
import { createTransfer, getTransfer } from '../../lib';

/** The users of every instance: two operators who review, and an admin who deploys. */
export const RIG_USERS: Record<string, string[]> = { alice: OPERATOR, bob: OPERATOR, admin: ['*'] };

/** The core client whose actions are reviewed (the simulator's demo approver). */
export const RIG_CLIENT_ID = 'demo-approver';

/** The review node's id in every instance's flow. */
export const REVIEW_NODE = 'rv';

/** What {@link reviewFlows} deploys. */
export interface ReviewFlowOptions {
  /** The partner API's base URL the config node calls (the proxy's). */
  baseUrl: string;
  /** The simulator account whose keys the config node signs with. */
  account: { apiKey: string; privateKeyPem: string };
  /** Properties of the config node beside those (e.g. `name`, coordination). */
  config?: Record<string, unknown>;
  /** Properties of the review node (e.g. `approvers`, `escalateMargin`, `auditFile`). */
  review: Record<string, unknown>;
}

/**
 * The review flow of these tests (docs/nodes.md "custody-review"): a tab `tab` with a config
 * node `cfg` (environment `custom`, timestamp signing, 30 s timeout), the core client feed of
 * {@link RIG_CLIENT_ID} with details -> `custody-approver` `ap` (no rule, default decision hold,
 * its held output) -> `custody-review` {@link REVIEW_NODE}.
 */
export function reviewFlows(options: ReviewFlowOptions): object[] {
  const { baseUrl, account } = options;
  return [
    { id: 'tab', type: 'tab', label: 'review' },
    { id: 'cfg', type: 'custody-config', name: 'sim', environment: 'custom', baseUrl, signingMode: 'timestamp', timeout: 30, ...options.config, credentials: { apiKey: account.apiKey, privateKey: account.privateKeyPem } },
    { id: 'feed', z: 'tab', type: 'custody-coreclient-feed', connection: 'cfg', clientId: RIG_CLIENT_ID, details: true, x: 120, y: 100, wires: [['ap']] },
    { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', defaultDecision: 'hold', dryRun: false, rules: [], x: 320, y: 100, wires: [[], [], [REVIEW_NODE]] },
    { id: REVIEW_NODE, z: 'tab', type: 'custody-review', connection: 'cfg', ...options.review, x: 520, y: 100, wires: [[], [], []] },
  ];
}

/**
 * Open the editor at `base` in `page` and show its "Custody review" sidebar tab: wait (60 s at
 * most) for the custody-review type and the tab, then show the tab until it is visible (the
 * editor may still be building its sidebar) and `ready` (a selector, when given) is in the page.
 */
export async function showReviewTab(page: Page, base: string, ready?: string): Promise<void> {
  await page.goto(base + '/');
  await page.waitForFunction(() => (window as any).RED?.nodes?.getType?.('custody-review') && document.querySelector('.custody-review-tab'), undefined, { timeout: 60000 });
  await page.waitForFunction(
    (selector) => {
      const tab = document.querySelector('.custody-review-tab') as HTMLElement | null;
      if (tab && tab.offsetParent !== null && (!selector || document.querySelector(selector))) return true;
      (window as any).RED.sidebar.show('custody-review');
      return false;
    },
    ready,
    { timeout: 60000, polling: 250 },
  );
}

/** Options of {@link ReviewRig.start}. */
export interface ReviewRigOptions {
  /** Temporary-directory prefix, e.g. `cf-trust-file-`. */
  prefix: string;
  /** The instance names, e.g. `['a']` or `['a', 'b']`. */
  instances: string[];
  /** Distinct approvers needed (the review node's `approvers`). */
  quorum: number;
  /** With a real Redis: every instance coordinates through it (`coordination: 'redis'`). */
  redis?: boolean;
  /** The config node's claim lease, seconds (default 60): a Redis that lost its data is trusted again after one lease. */
  leaseSeconds?: number;
  /** How long the proxy holds a decision call's answer, ms (default 0). */
  holdMs?: number | ((call: ProxiedRequest) => number);
  /** The users of every instance, their permissions by name (default {@link RIG_USERS}; `admin` deploys). */
  users?: Record<string, string[]>;
  /** BTC-TESTNET put into the demo wallet at the start, whole BTC (default 50). */
  faucetBtc?: number;
  /** Further properties of the review node (e.g. `name`, `escalateMargin`: default '0'). */
  review?: Record<string, unknown>;
  /**
   * The review node keeps its audit where it does when none is named (`<userDir>/custodyflow-audit/<node id>.jsonl`,
   * docs/audit.md) instead of `<userDir>/review-audit.jsonl`.
   */
  defaultAuditFile?: boolean;
}

/** The answer of one vote, as the client saw it. */
export interface VoteAnswer {
  user: string;
  decision: 'approve' | 'reject';
  instance: number;
  status: number;
  body: any;
  /** performance.now() when sent and when the answer's body was read, ms. */
  sentAt: number;
  answeredAt: number;
}

/** One running instance. */
export interface RigInstance {
  name: string;
  red: RedProcess;
  tokens: Record<string, string>;
  /** The review node's audit file (absolute). */
  auditFile: string;
  /** The file the Catch node's errors are appended to, one JSON line each. */
  caughtFile: string;
}

/** The set-up. `await ReviewRig.start(options)` in `before`, `await rig.stop()` in `after`. */
export class ReviewRig {
  s!: SimulatedAccount;
  proxy!: ApprovalProxy;
  redis: RedisServer | undefined;
  readonly instances: RigInstance[] = [];
  readonly #settingsDir: string;
  readonly #baseUrls: string[] = [];

  private constructor(readonly options: ReviewRigOptions) {
    this.#settingsDir = fs.mkdtempSync(path.join(os.tmpdir(), `${options.prefix}settings-`));
  }

  /**
   * Start the simulator (its demo BTC-TESTNET wallet funded, 50 BTC unless told), Redis when asked, the
   * proxy, and each instance with its flow deployed.
   * @throws an assertion error when a login or a deploy fails.
   */
  static async start(options: ReviewRigOptions): Promise<ReviewRig> {
    const rig = new ReviewRig(options);
    try {
      rig.s = await startSimulated(`${options.prefix}sim-`);
      await control(rig.s.sim, '/faucet', { wallet_id: rig.s.sim.demo.wallets['BTC-TESTNET'].wallet_id, amount: (options.faucetBtc ?? 50) * 100_000_000 });
      if (options.redis) {
        rig.redis = new RedisServer();
        await rig.redis.start();
      }
      rig.proxy = new ApprovalProxy({ target: rig.s.sim.baseUrl, holdMs: options.holdMs ?? 0 });
      for (const name of options.instances) {
        rig.#baseUrls.push(await rig.proxy.listen(name));
        const { red, tokens } = await startAdminRed(`${options.prefix}${name}-`, rig.#settingsDir, options.users ?? RIG_USERS);
        const auditFile = options.defaultAuditFile ? path.join(red.userDir, 'custodyflow-audit', `${REVIEW_NODE}.jsonl`) : path.join(red.userDir, 'review-audit.jsonl');
        rig.instances.push({ name, red, tokens, auditFile, caughtFile: path.join(red.userDir, 'caught.jsonl') });
      }
      for (let i = 0; i < rig.instances.length; i++) await rig.deploy(i, options.quorum);
    } catch (e) {
      await rig.stop();
      throw e;
    }
    return rig;
  }

  /** The flow of instance `i` with review quorum `quorum`. */
  flows(i: number, quorum: number): object[] {
    const inst = this.instances[i];
    const coordination = this.redis ? { coordination: 'redis', redisUrl: `${this.redis.url}/0`, redisKeyPrefix: `${this.options.prefix}`, claimLeaseSeconds: this.options.leaseSeconds ?? 60 } : {};
    return [
      ...reviewFlows({ baseUrl: this.#baseUrls[i], account: this.s.sim.account, config: coordination, review: { approvers: String(quorum), escalateMargin: '0', ...(this.options.defaultAuditFile ? {} : { auditFile: inst.auditFile }), ...this.options.review } }),
      { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, x: 120, y: 200, wires: [['caughtLine']] },
      {
        id: 'caughtLine',
        z: 'tab',
        type: 'function',
        func: 'msg.payload = JSON.stringify({ source: msg.error && msg.error.source, message: msg.error && msg.error.message });\nreturn msg;',
        outputs: 1,
        x: 320,
        y: 200,
        wires: [['caughtFile']],
      },
      { id: 'caughtFile', z: 'tab', type: 'file', filename: inst.caughtFile, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'none', x: 520, y: 200, wires: [] },
    ];
  }

  /** Deploy instance `i`'s flow (full deploy) with review quorum `quorum`. */
  async deploy(i: number, quorum: number): Promise<void> {
    const inst = this.instances[i];
    const res = await adminCall(inst.red.base, inst.tokens.admin, 'POST', '/flows', this.flows(i, quorum));
    const text = await res.text();
    assert.ok(res.status === 200 || res.status === 204, `deploy ${inst.name}: ${res.status} ${text}`);
  }

  /** Stop everything started (parts never started are skipped) and remove the settings folder. */
  async stop(): Promise<void> {
    for (const inst of this.instances) await inst.red.stop();
    await this.proxy?.stop();
    await this.redis?.stop();
    if (this.s) await stopSimulated(this.s);
    fs.rmSync(this.#settingsDir, { recursive: true, force: true });
  }

  /** `GET /custody/reviews` on instance `i` as alice: the status and the parsed body. */
  async reviewsAnswer(i = 0): Promise<{ status: number; body: any }> {
    const inst = this.instances[i];
    const res = await adminCall(inst.red.base, inst.tokens.alice, 'GET', '/custody/reviews');
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* left as text */
    }
    return { status: res.status, body };
  }

  /** The body of `GET /custody/reviews` on instance `i`. @throws when it does not answer 200. */
  async reviews(i = 0): Promise<{ reviews: any[]; recent: any[] }> {
    const { status, body } = await this.reviewsAnswer(i);
    assert.equal(status, 200, `GET /custody/reviews on ${this.instances[i].name}: ${status} ${JSON.stringify(body)}`);
    return body;
  }

  /**
   * `POST /custody/reviews/{action_id}` on instance `i` as `user`.
   * @returns the answer with its status, parsed body and client-side times.
   */
  async vote(i: number, user: string, actionId: string, decision: 'approve' | 'reject', reason?: string): Promise<VoteAnswer> {
    const inst = this.instances[i];
    const sentAt = performance.now();
    const res = await adminCall(inst.red.base, inst.tokens[user], 'POST', `/custody/reviews/${encodeURIComponent(actionId)}`, { decision, ...(reason ? { reason } : {}) });
    const text = await res.text();
    const answeredAt = performance.now();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* left as text */
    }
    return { user, decision, instance: i, status: res.status, body, sentAt, answeredAt };
  }

  /**
   * Create `n` transfers of 0.0001 BTC-TESTNET (each makes one pending action of
   * {@link RIG_CLIENT_ID}) and wait until instance `i` lists a review of each.
   * @returns per transfer its tx_id and action id, in creation order.
   * @throws after `timeoutMs` (default 60 s) naming how many were listed, with the instances' log tails.
   */
  async heldTransfers(n: number, i = 0, timeoutMs = 60000): Promise<Array<{ tx_id: string; action_id: string }>> {
    const txIds: string[] = [];
    for (let k = 0; k < n; k++) txIds.push((await createTransfer(this.s.client, demoTransfer(this.s.sim, { send: { symbol: 'BTC-TESTNET', amount: 10_000 } }))).data.tx_id);
    const byTx = new Map<string, string>();
    const deadline = Date.now() + timeoutMs;
    while (byTx.size < n) {
      const { status, body } = await this.reviewsAnswer(i);
      if (status === 200) for (const r of body.reviews as any[]) if (txIds.includes(r.details?.txID)) byTx.set(r.details.txID, r.action_id);
      if (byTx.size >= n) break;
      if (Date.now() > deadline) assert.fail(`${byTx.size} of ${n} transfers listed for review on ${this.instances[i].name} after ${timeoutMs} ms\n${this.logTails()}`);
      await sleep(200);
    }
    return txIds.map((tx_id) => ({ tx_id, action_id: byTx.get(tx_id)! }));
  }

  /** The transfer's status (`txStatus`) once it is `want`, or its last status after `timeoutMs`. */
  async transferStatus(tx_id: string, want: string, timeoutMs = 30000): Promise<string> {
    let last = '';
    for (const deadline = Date.now() + timeoutMs; ; ) {
      last = String(((await getTransfer(this.s.client, { company_id: this.s.sim.demo.company_id, tx_id })).data as any).txStatus);
      if (last === want || Date.now() > deadline) return last;
      await sleep(100);
    }
  }

  /** The audit lines of the review node on instance `i` (every line, the segment opening included), or [] when no file yet. */
  auditLines(i = 0): any[] {
    return jsonLines(this.instances[i].auditFile);
  }

  /** The Catch node's errors on instance `i` ({source, message} each), or [] when none. */
  caught(i = 0): Array<{ source?: { id?: string; type?: string }; message?: string }> {
    return jsonLines(this.instances[i].caughtFile);
  }

  /** The last 1500 characters of each instance's log, for failure messages. */
  logTails(): string {
    return this.instances.map((x) => `--- ${x.name}\n${x.red.log.slice(-1500)}`).join('\n');
  }
}

/** What {@link useReviewEditor} hands a suite, set once its `before` hook ran. */
export interface ReviewEditorSuite {
  /** The rig of one instance, `red`. */
  rig: ReviewRig;
  /** Headless Chromium, for editor pages ({@link showReviewTab}). */
  browser: Browser;
}

/**
 * Register mocha hooks of a suite that drives the "Custody review" tab in the editor: `before`
 * starts a {@link ReviewRig} of one instance named `red` with `options`, then headless Chromium;
 * `after` closes the browser and stops the rig.
 * @returns the suite's rig and browser (set once `before` ran).
 */
export function useReviewEditor(options: Omit<ReviewRigOptions, 'instances'>): ReviewEditorSuite {
  const suite = {} as ReviewEditorSuite;
  before(async () => {
    suite.rig = await ReviewRig.start({ ...options, instances: ['red'] });
    suite.browser = await launchChromium();
  });
  after(async () => {
    await suite.browser?.close();
    await suite.rig?.stop();
  });
  return suite;
}

/** The JSON lines of `file`, parsed, or [] when there is no file yet. */
function jsonLines(file: string): any[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** A vote as an audit `call` line lists it: `{reviewer, decision}` (a bare reviewer name gets the decision of its `vote` line). */
export function countedVotes(call: any, voteLines: any[]): Array<{ reviewer: string; decision: string }> {
  const list: unknown[] = Array.isArray(call?.votes) ? call.votes : [];
  return list.map((v) => {
    if (typeof v === 'string') return { reviewer: v, decision: String(voteLines.find((l) => l.reviewer === v)?.decision ?? '?') };
    const o = v as { reviewer?: unknown; decision?: unknown };
    return { reviewer: String(o.reviewer), decision: String(o.decision) };
  });
}

/** One held action voted on by two people at nearly the same time. */
export interface VotePair {
  action_id: string;
  tx_id: string;
  /** ms between the first and the second vote being sent. */
  gap: number;
  /** The answers, in the order sent. */
  answers: VoteAnswer[];
}

/**
 * Judge the pairs once every final call is over: for each action, exactly one decision call at the
 * API (proxy), exactly one audit `call` line over every instance's audit file, listing the votes it
 * counted; the call's method is the verdict of that list (any reject: DELETE, else PUT) and the
 * method the API got; every vote answered 200 is in the list and every vote not in it was answered
 * 409; each counted vote has its `vote` audit line; a 200 answer's state is `open` or `calling`.
 * @returns one line per contradiction found (empty: none).
 */
export function judgeVotePairs(rig: ReviewRig, pairs: VotePair[]): string[] {
  const problems: string[] = [];
  const calls = rig.proxy.callsPerAction();
  const lines = rig.instances.flatMap((_, i) => rig.auditLines(i));
  for (const p of pairs) {
    const id = p.action_id;
    const tag = `${id} (gap ${p.gap} ms, ${p.answers.map((a) => `${a.user} ${a.decision} -> ${a.status}${a.body?.state ? ' ' + a.body.state : ''}${a.body?.error ? ' "' + a.body.error + '"' : ''}`).join(', ')})`;
    const made = calls.get(id) ?? [];
    if (made.length !== 1) problems.push(`${tag}: ${made.length} decision calls at the API (${made.map((c) => `${c.method} via ${c.instance}`).join(', ')}), expected exactly 1`);
    const callLines = lines.filter((l) => l.action_id === id && l.event === 'call');
    if (callLines.length !== 1) {
      problems.push(`${tag}: ${callLines.length} audit 'call' lines, expected exactly 1`);
      continue;
    }
    const call = callLines[0];
    if (!Array.isArray(call.votes)) {
      problems.push(`${tag}: the audit 'call' line has no votes list (its fields: ${Object.keys(call).join(', ')})`);
      continue;
    }
    const voteLines = lines.filter((l) => l.action_id === id && l.event === 'vote');
    const counted = countedVotes(call, voteLines);
    const verdictMethod = counted.some((v) => v.decision === 'reject') ? 'DELETE' : 'PUT';
    if (call.method !== verdictMethod) problems.push(`${tag}: the call line's method ${call.method} is not the verdict of its votes ${JSON.stringify(counted)} (${verdictMethod})`);
    if (made.length === 1 && made[0].method !== verdictMethod) problems.push(`${tag}: the API got ${made[0].method}, the votes counted ${JSON.stringify(counted)} say ${verdictMethod}`);
    for (const a of p.answers) {
      const isCounted = counted.some((v) => v.reviewer === a.user);
      if (a.status === 200 && !isCounted) problems.push(`${tag}: ${a.user}'s ${a.decision} was answered 200 but the final call did not count it (counted ${JSON.stringify(counted)})`);
      if (!isCounted && a.status !== 409) problems.push(`${tag}: ${a.user}'s ${a.decision} was not counted and answered ${a.status}, expected 409`);
      if (isCounted && a.status !== 200) problems.push(`${tag}: ${a.user}'s ${a.decision} was counted by the final call but answered ${a.status}`);
      if (a.status === 200 && !['open', 'calling'].includes(a.body?.state)) problems.push(`${tag}: ${a.user}'s 200 answer has state ${JSON.stringify(a.body?.state)}, expected open or calling (answered at once)`);
      const told = a.status === 200 && a.body?.state === 'calling' ? a.body.final : undefined;
      if (told) {
        const toldVotes = (Array.isArray(told.votes) ? told.votes : []).map((v: any) => (typeof v === 'string' ? v : v.reviewer)).sort();
        if (told.decision !== call.decision || JSON.stringify(toldVotes) !== JSON.stringify(counted.map((v) => v.reviewer).sort())) problems.push(`${tag}: ${a.user} was told the final call is ${JSON.stringify(told)}, the call made was ${call.decision} counting ${JSON.stringify(counted)}`);
      }
      if (isCounted && !voteLines.some((l) => l.reviewer === a.user && l.decision === a.decision)) problems.push(`${tag}: ${a.user}'s counted vote has no 'vote' audit line`);
    }
    for (const v of counted) if (!p.answers.some((a) => a.user === v.reviewer && a.decision === v.decision)) problems.push(`${tag}: the call counted a vote nobody cast: ${JSON.stringify(v)}`);
  }
  return problems;
}

/**
 * Send each pair's two votes `gap` ms apart (the first voter alternating, the gap varying 0-40 ms),
 * pair after pair without waiting for the final calls: alice approves on instance `aliceOn`, bob
 * rejects (with a reason) on instance `bobOn`.
 */
export async function votePairs(rig: ReviewRig, held: Array<{ tx_id: string; action_id: string }>, aliceOn: number, bobOn: number): Promise<VotePair[]> {
  const pairs: VotePair[] = [];
  for (let k = 0; k < held.length; k++) {
    const gap = (k * 13) % 41;
    const alice = () => rig.vote(aliceOn, 'alice', held[k].action_id, 'approve');
    const bob = () => rig.vote(bobOn, 'bob', held[k].action_id, 'reject', 'the beneficiary is not on our list');
    const [first, second] = k % 2 === 0 ? [alice, bob] : [bob, alice];
    const one = first();
    if (gap > 0) await sleep(gap);
    const two = second();
    pairs.push({ ...held[k], gap, answers: await Promise.all([one, two]) });
  }
  return pairs;
}

/**
 * Wait until each action has had a decision call and no instance lists it any more, then 3 s more
 * (a late second call would come within that).
 * @throws after `timeoutMs` naming the actions still open or never called.
 */
export async function untilPairsDecided(rig: ReviewRig, ids: string[], timeoutMs = 60000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const calls = rig.proxy.callsPerAction();
    const uncalled = ids.filter((id) => !calls.get(id)?.some((c) => c.delivered));
    const listed = new Set<string>();
    for (let i = 0; i < rig.instances.length; i++) {
      const { status, body } = await rig.reviewsAnswer(i);
      if (status === 200) for (const r of body.reviews as any[]) listed.add(r.action_id);
    }
    const open = ids.filter((id) => listed.has(id));
    if (!uncalled.length && !open.length) break;
    if (Date.now() > deadline) assert.fail(`after ${timeoutMs} ms: ${uncalled.length} actions never called (${uncalled.slice(0, 5).join(', ')}), ${open.length} still listed (${open.slice(0, 5).join(', ')})\n${rig.logTails()}`);
    await sleep(250);
  }
  await sleep(3000);
}
