/**
 * The parts of the soak bench (bench/soak.ts, docs/performance.md "Soak bench"): a real `node-red`
 * child process (test/helpers/red-process.ts) started with `node --expose-gc` and a settings file
 * that adds one bench-only admin URL, {@link MEMORY_PATH}, answering `process.memoryUsage()` after
 * two forced garbage collections; the flow it runs ({@link soakFlows}); its samples
 * ({@link sample}); and the reviewer that rejects the held actions through the review admin API
 * (docs/nodes.md "custody-review", `GET /custody/reviews`, `POST /custody/reviews/{action_id}`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ApprovalRule } from '../lib/approver';
import type { DemoDataset } from '../simulator';
import { RedProcess, sleep, watchDebug } from '../test/helpers/red-process';
import { deployFull, waitForGreen, withEnv } from '../test/helpers/red-fleet';
import { catchNode, fileNode, functionNode } from '../test/helpers/flow-nodes';
import { readJsonLines } from './harness';

/** The bench-only admin URL of the soak settings file: GET answers `process.memoryUsage()` (bytes) after `global.gc()` twice. */
export const MEMORY_PATH = '/_soak/memory';

/** The bench-only admin URL that writes a heap snapshot (`v8.writeHeapSnapshot`) to the file named by `?file=` after `global.gc()` twice. */
export const HEAP_SNAPSHOT_PATH = '/_soak/heapsnapshot';

/** The ids of the soak flow's nodes. */
export const SOAK_IDS = { config: 'soakcfg', feed: 'soakfeed', approver: 'soakapprover', toTrack: 'soaktotrack', track: 'soaktrack', review: 'soakreview' } as const;

/** The file (in the user directory) the flow appends one JSON line to per track report, review outcome and caught error. */
export const EVENTS_FILE = 'soak-events.jsonl';

/**
 * Write the soak settings file into `dir`: scripts/node-red-settings.js (loopback, no login)
 * plus an `httpAdminMiddleware` answering GET {@link MEMORY_PATH} with `process.memoryUsage()`
 * after `global.gc()` twice (the process must run with `--expose-gc`; without it the answer is 500).
 * @returns the file's path.
 */
export function writeSoakSettings(dir: string): string {
  const base = path.resolve(__dirname, '..', '..', 'scripts', 'node-red-settings.js');
  const file = path.join(dir, 'soak-settings.js');
  fs.writeFileSync(
    file,
    `'use strict';
// The soak bench's settings (bench/soak-rig.ts): npm start's, plus one bench-only admin URL.
const base = require(${JSON.stringify(base)});
module.exports = {
  ...base,
  httpAdminMiddleware(req, res, next) {
    if (req.method !== 'GET' || (req.path !== ${JSON.stringify(MEMORY_PATH)} && req.path !== ${JSON.stringify(HEAP_SNAPSHOT_PATH)})) return next();
    if (typeof global.gc !== 'function') {
      res.status(500).json({ error: 'run node with --expose-gc' });
      return;
    }
    global.gc();
    global.gc();
    if (req.path === ${JSON.stringify(HEAP_SNAPSHOT_PATH)}) {
      res.json({ file: require('node:v8').writeHeapSnapshot(String(req.query.file)) });
      return;
    }
    res.json(process.memoryUsage());
  },
};
`,
  );
  return file;
}

/** What a phase's flow is set up with. */
export interface SoakFlowOptions {
  /** The config node's base URL (the decision counter's port in front of the simulator). */
  baseUrl: string;
  demo: DemoDataset;
  /** The approver's audit file (absolute). */
  auditFile: string;
  /** The review node's audit file (absolute). */
  reviewAuditFile: string;
  /** The approve rule's amount limit, decimal BTC-TESTNET (gross). */
  maxAmount: string;
  /** The approve rule's velocity limit, decimal BTC-TESTNET per window; absent: no velocity limit. */
  velocityAmount?: string;
  /** The velocity window, hours as number text (the rule's `velocityWindowHours`). */
  velocityWindowHours?: string;
  /** The track node's `keepReported` (hours as number text); omitted: the node's default. */
  keepReportedHours?: string;
}

/** The approve rule of the soak flow: BTC-TESTNET transfers up to `maxAmount`, under a velocity limit when one is given. */
export function soakRules(o: Pick<SoakFlowOptions, 'maxAmount' | 'velocityAmount' | 'velocityWindowHours'>): ApprovalRule[] {
  return [
    {
      name: o.velocityAmount ? `up to ${o.maxAmount} BTC-TESTNET, ${o.velocityAmount} per ${o.velocityWindowHours} h` : `up to ${o.maxAmount} BTC-TESTNET`,
      decision: 'approve',
      actionTypes: ['ApproveTransfer'],
      assets: ['BTC-TESTNET'],
      maxAmount: o.maxAmount,
      ...(o.velocityAmount ? { velocityAmount: o.velocityAmount, velocityWindowHours: o.velocityWindowHours } : {}),
    },
  ];
}

/**
 * The soak flow: custody-config (custom URL, timestamp signing; credentials deployed with it) →
 * core client feed (the demo approver core client, details on) → custody-approver
 * ({@link soakRules}, no match: hold). Approved → a change node copying `payload.details.txID`
 * to `payload.tx_id` → custody-track (kind transfer, the demo company). Held → custody-review
 * (one approver, no escalation). Every track report (output 1), review outcome (outputs 1-3) and
 * caught error is appended as one JSON line to {@link EVENTS_FILE} in the working directory.
 */
export function soakFlows(o: SoakFlowOptions): object[] {
  const z = 'soaktab';
  const at = (x: number, y: number) => ({ z, x, y });
  const ids = SOAK_IDS;
  return [
    { id: z, type: 'tab', label: 'soak' },
    { id: ids.config, type: 'custody-config', name: 'soak', environment: 'custom', baseUrl: o.baseUrl, signingMode: 'timestamp', timeout: 30 },
    { id: ids.feed, ...at(120, 80), type: 'custody-coreclient-feed', connection: ids.config, clientId: o.demo.core_client_id, details: true, wires: [[ids.approver]] },
    {
      id: ids.approver,
      ...at(320, 80),
      type: 'custody-approver',
      connection: ids.config,
      clientId: o.demo.core_client_id,
      rules: soakRules(o),
      defaultDecision: 'hold',
      dryRun: false,
      auditFile: o.auditFile,
      wires: [[ids.toTrack], [], [ids.review]],
    },
    { id: ids.toTrack, ...at(520, 40), type: 'change', name: 'tx_id', rules: [{ t: 'set', p: 'payload.tx_id', pt: 'msg', to: 'payload.details.txID', tot: 'msg' }], wires: [[ids.track]] },
    {
      id: ids.track,
      ...at(720, 40),
      type: 'custody-track',
      connection: ids.config,
      kind: 'transfer',
      company_id: o.demo.company_id,
      progress: false,
      ...(o.keepReportedHours !== undefined ? { keepReported: o.keepReportedHours } : {}),
      wires: [['soaktrackline'], []],
    },
    functionNode('soaktrackline', 'track line', 'const t = msg.track || {};\nmsg.payload = JSON.stringify({ k: "track", tx_id: t.tx_id, state: t.state, final: t.final, timedOut: t.timedOut });\nreturn msg;', at(920, 40), ['soakfile']),
    { id: ids.review, ...at(520, 120), type: 'custody-review', connection: ids.config, clientId: o.demo.core_client_id, approvers: '1', escalateMargin: '0', auditFile: o.reviewAuditFile, wires: [['soakreviewline'], ['soakreviewline'], ['soakreviewline']] },
    functionNode('soakreviewline', 'review line', 'const r = msg.review || {};\nmsg.payload = JSON.stringify({ k: "review", action_id: r.action_id, state: r.state });\nreturn msg;', at(720, 120), ['soakfile']),
    catchNode('soakcatch', at(120, 200), ['soakerrorline']),
    functionNode(
      'soakerrorline',
      'error line',
      'const e = msg.error || {};\nmsg.payload = JSON.stringify({ k: "error", source: e.source && e.source.type, code: e.code, message: e.message, action_id: msg.decision ? msg.decision.action_id : undefined });\nreturn msg;',
      at(320, 200),
      ['soakfile'],
    ),
    fileNode('soakfile', EVENTS_FILE, at(1120, 80)),
  ];
}

/** One line of {@link EVENTS_FILE}. */
export type SoakEvent =
  | { k: 'track'; tx_id: string; state: string; final: boolean; timedOut: boolean }
  | { k: 'review'; action_id: string; state: string }
  | { k: 'error'; source?: string; code?: string; message?: string; action_id?: string };

/** The lines of {@link EVENTS_FILE} in `userDir` so far (a line being written is left out). */
export function readEvents(userDir: string): SoakEvent[] {
  return readJsonLines<SoakEvent>(path.join(userDir, EVENTS_FILE));
}

/**
 * Start Node-RED as a child process (`node --expose-gc red.js -u <userDir> -s <settings>`, the
 * pack linked into a fresh user directory, its working directory), deploy `flows` with the
 * config node's `credentials`, and wait until the feed node shows a green dot.
 * @param dir where the settings file is written.
 * @throws {Error} when it does not start or the feed does not connect within 60 s (Node-RED stopped).
 */
export async function startSoakRed(dir: string, flows: object[], credentials: { apiKey: string; privateKey: string }): Promise<RedProcess> {
  const settingsFile = writeSoakSettings(dir);
  const red = new RedProcess({ prefix: 'cf-soak-red-', settingsFile, nodeArgs: ['--expose-gc'], cwdInUserDir: true });
  try {
    const inUserDir = (name: string) => path.join(red.userDir, 'custodyflow', name);
    // Every durable file inside the user directory, whatever this process's environment says.
    const dirs = { CUSTODYFLOW_JOURNAL_DIR: inUserDir('journal'), CUSTODYFLOW_FEED_DIR: inUserDir('feed'), CUSTODYFLOW_TRACK_DIR: inUserDir('track'), CUSTODYFLOW_REVIEW_DIR: inUserDir('review') };
    await withEnv(dirs, () => red.start());
    const instance = { name: 'soak', red, status: new Map<string, { text?: string; fill?: string; shape?: string }>() };
    const { ws } = await watchDebug(red.base, instance.status);
    try {
      await deployFull(instance, flows, SOAK_IDS.config, credentials);
      await waitForGreen([instance], SOAK_IDS.feed);
    } finally {
      ws.close(); // the editor's socket is not part of what is measured
    }
  } catch (e) {
    await red.stop();
    throw e;
  }
  return red;
}

/** One sample of the Node-RED process. */
export interface Sample {
  label: string;
  /** transfers created when it was taken */
  actions: number;
  /** `heapUsed` after two forced GCs, bytes */
  heap: number;
  /** `rss`, bytes */
  rss: number;
  /** open file descriptors (/proc/<pid>/fd) */
  fds: number;
  /** ms since the phase started */
  at: number;
}

/**
 * Sample `red`: GET {@link MEMORY_PATH} (two forced GCs, then `process.memoryUsage()`) and the
 * entries of /proc/<pid>/fd, read from this process.
 * @throws {Error} when the URL does not answer 200.
 */
export async function sample(red: RedProcess, label: string, actions: number, t0: number): Promise<Sample> {
  const res = await fetch(red.base + MEMORY_PATH);
  if (!res.ok) throw new Error(`GET ${MEMORY_PATH}: ${res.status} ${await res.text()}`);
  const m = (await res.json()) as { heapUsed: number; rss: number };
  const fds = fs.readdirSync(`/proc/${red.child!.pid}/fd`).length;
  return { label, actions, heap: m.heapUsed, rss: m.rss, fds, at: Date.now() - t0 };
}

/**
 * Write a heap snapshot of `red`'s Node-RED to `file` (after two forced GCs): for a diff of what
 * grew between two samples (Chrome DevTools' Memory panel reads the files).
 * @throws {Error} when the answer is not 200.
 */
export async function heapSnapshot(red: RedProcess, file: string): Promise<void> {
  const res = await fetch(`${red.base}${HEAP_SNAPSHOT_PATH}?file=${encodeURIComponent(file)}`);
  if (!res.ok) throw new Error(`GET ${HEAP_SNAPSHOT_PATH}: ${res.status} ${await res.text()}`);
}

/**
 * Reject every open review of `red` through the admin API (no adminAuth: votes are recorded as
 * `anonymous`), once a second, until `stop()`: held actions do not pile up in the queue.
 * @returns `stop` (resolves once the loop ended) and the counts of votes answered 200 and otherwise.
 */
export function rejectReviews(red: RedProcess): { stop: () => Promise<void>; voted: () => number; refused: () => string[] } {
  let running = true;
  let voted = 0;
  const refused: string[] = [];
  const tried = new Set<string>();
  const loop = (async () => {
    while (running) {
      try {
        const res = await fetch(`${red.base}/custody/reviews`, { headers: { accept: 'application/json' } });
        const body = (await res.json()) as { reviews?: Array<{ action_id: string; state: string }> };
        for (const r of body.reviews ?? []) {
          if (r.state !== 'open' || tried.has(r.action_id)) continue;
          tried.add(r.action_id);
          const vote = await fetch(`${red.base}/custody/reviews/${encodeURIComponent(r.action_id)}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ decision: 'reject', reason: 'soak bench: held over the limit' }),
          });
          if (vote.ok) voted++;
          else refused.push(`${r.action_id}: ${vote.status} ${(await vote.text()).slice(0, 120)}`);
        }
      } catch (e) {
        refused.push(`GET /custody/reviews: ${String(e)}`);
      }
      await sleep(1000);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
    voted: () => voted,
    refused: () => refused,
  };
}
