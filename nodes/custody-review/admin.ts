/**
 * The admin HTTP API of `custody-review` (docs/nodes.md "custody-review"), on Node-RED's
 * `RED.httpAdmin` behind `RED.auth.needsPermission` with the pack's own scopes: `GET
 * /custody/reviews` (`custody.review.read`) answers the reviews on the queue of every review node
 * (open, or `calling` while the final call runs), each with the facts a reviewer decides on, and the
 * 20 most recently decided;
 * `POST /custody/reviews/{action_id}` with `{"decision": "approve" | "reject", "reason": "..."}`
 * (`custody.review.write`; a logged-in user without it gets 403, no login 401) records the logged-in user's vote (`req.user.username`; "anonymous"
 * without adminAuth) and answers at once 200 with the review's new state (`open`, or `calling`:
 * this vote decided it and the final call runs in the background), 400 naming the field, 403
 * (the scope, or the initiator approving), 404 (unknown id), 409 (a second vote, being decided,
 * decided, decided elsewhere or expired), 503 (the shared store unavailable: nothing stored).
 * Every change of a queue is relayed over `RED.comms` on {@link REVIEWS_TOPIC}.
 */
import type { NodeAPI } from 'node-red';
import type { Request, Response } from 'express';
import type { RecentDecision, ReviewChange, ReviewQueue, ReviewView } from '../../lib/review';
import { reviewLib } from '../shared/services';

/** The admin path of the review list. */
export const REVIEWS_PATH = '/custody/reviews';

/** The scope that lets a user see the reviews. */
export const READ_SCOPE = 'custody.review.read';

/** The scope that lets a user vote. */
export const WRITE_SCOPE = 'custody.review.write';

/** The `RED.comms` topic on which each change of any review queue is relayed (`{changed: epoch ms, node, action_id, event, by}`). */
export const REVIEWS_TOPIC = 'custody/reviews';

/** The name a vote is recorded under when Node-RED has no adminAuth. */
export const ANONYMOUS = 'anonymous';

/** One deployed review node as the admin API sees it. */
export interface ReviewNodeEntry {
  id: string;
  name: string;
  /** Resolves to the queue once it is open (rejects when the node could not start). */
  queue: Promise<ReviewQueue>;
}

/** The review nodes deployed now, by node id (added by each node, removed at its close). */
export const reviewNodes = new Map<string, ReviewNodeEntry>();

/** How many recently decided reviews `GET /custody/reviews` lists. */
export const RECENT_LIMIT = 20;

/**
 * Relay a change of a queue to the editors of this runtime (the sidebar tab then reads `GET
 * /custody/reviews`): each change once, as the queue's change stream delivers it (with Redis: on
 * every instance, from the pub/sub channel).
 */
export function announce(RED: NodeAPI, change: ReviewChange): void {
  // Node-RED's runtime always has comms; a test runtime without an editor may not.
  (RED as unknown as { comms?: { publish(topic: string, data: unknown, retain: boolean): void } }).comms?.publish(REVIEWS_TOPIC, { changed: Date.now(), ...change }, false);
}

/** Whether the runtime's settings have adminAuth (users who log in). */
export function hasAdminAuth(RED: NodeAPI): boolean {
  return Boolean((RED.settings as unknown as { adminAuth?: unknown }).adminAuth);
}

/**
 * Whether `scope` (a token's scope: one permission or a list) grants `permission`, by the rule of
 * Node-RED's editor-api `auth/permissions.js` (`*`, the permission itself, or `write` / `*.write`
 * for any `<x>.write`). Node-RED's own `needsPermission` answers 401 when a logged-in user lacks a
 * permission; the review API answers 403 for a missing write scope, so it checks that one here.
 */
export function scopeGrants(scope: unknown, permission: string): boolean {
  if (Array.isArray(scope)) return scope.some((s) => scopeGrants(s, permission));
  if (scope === '*' || scope === permission) return true;
  if (scope === 'write' || scope === '*.write') return /^((.+)\.)?write$/.test(permission);
  if (scope === 'read' || scope === '*.read') return /^((.+)\.)?read$/.test(permission);
  return false;
}

/** May the request's user vote? True without adminAuth (no user), else when its token's scope grants {@link WRITE_SCOPE}. */
function mayVote(req: Request): boolean {
  const r = req as Request & { user?: unknown; authInfo?: { scope?: unknown } };
  if (!r.user) return true;
  return scopeGrants(r.authInfo?.scope ?? (r.user as { permissions?: unknown }).permissions, WRITE_SCOPE);
}

function userOf(req: Request): string {
  const user = (req as Request & { user?: { username?: string } }).user;
  return typeof user?.username === 'string' && user.username ? user.username : ANONYMOUS;
}

/** Answer `e`: a lib ReviewError by its status, a coordination failure 503, anything else 500 (loads lib/review: a handler's first error). */
function sendError(res: Response, e: unknown): void {
  if (e instanceof reviewLib().ReviewError) {
    res.status(e.status).json({ error: e.message, ...(e.field ? { field: e.field } : {}) });
    return;
  }
  if ((e as { code?: unknown })?.code === 'ECOORDINATION') {
    res.status(503).json({ error: (e as Error).message });
    return;
  }
  res.status(500).json({ error: e instanceof Error ? e.message : String(e) });
}

/** The reviews on the queue of every deployed review node, and the {@link RECENT_LIMIT} most recently decided, each with its node's id and name. */
async function allReviews(): Promise<{ reviews: Array<ReviewView & { node: string; nodeName: string }>; recent: Array<RecentDecision & { node: string; nodeName: string }> }> {
  const reviews: Array<ReviewView & { node: string; nodeName: string }> = [];
  const recent: Array<RecentDecision & { node: string; nodeName: string }> = [];
  for (const entry of reviewNodes.values()) {
    const queue = await entry.queue.catch(() => undefined);
    if (!queue) continue;
    const { open, recent: decided } = await queue.overview(RECENT_LIMIT);
    for (const r of open) reviews.push({ ...r, node: entry.id, nodeName: entry.name });
    for (const r of decided) recent.push({ ...r, node: entry.id, nodeName: entry.name });
  }
  recent.sort((a, b) => b.at.localeCompare(a.at));
  return { reviews, recent: recent.slice(0, RECENT_LIMIT) };
}

/** Register the routes (once per Node-RED process: from the node module's register function). */
export function registerReviewRoutes(RED: NodeAPI): void {
  RED.httpAdmin.get(REVIEWS_PATH, RED.auth.needsPermission(READ_SCOPE), (req: Request, res: Response) => {
    allReviews().then(
      ({ reviews, recent }) => res.json({ user: userOf(req), adminAuth: hasAdminAuth(RED), reviews, recent }),
      (e) => sendError(res, e),
    );
  });

  // Node-RED checks the login and the read scope (401 without); the write scope is checked here (403 without).
  RED.httpAdmin.post(`${REVIEWS_PATH}/:action_id`, RED.auth.needsPermission(READ_SCOPE), (req: Request, res: Response) => {
    const { ReviewError } = reviewLib();
    if (!mayVote(req)) {
      sendError(res, new ReviewError(403, `voting needs the scope ${WRITE_SCOPE}`));
      return;
    }
    const body = req.body as unknown;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      sendError(res, new ReviewError(400, 'expected a JSON object {"decision": "approve" | "reject", "reason": "..."}', 'body'));
      return;
    }
    const { decision, reason, via } = body as Record<string, unknown>;
    const actionId = String(req.params.action_id);
    (async () => {
      for (const entry of reviewNodes.values()) {
        const queue = await entry.queue.catch(() => undefined);
        if (!queue) continue;
        const found = await queue.get(actionId).catch(() => undefined);
        if (!found) continue;
        const review = await queue.vote(actionId, { decision, reason, reviewer: userOf(req) }, via === 'editor' ? 'editor' : 'api');
        return { ...review, node: entry.id, nodeName: entry.name };
      }
      throw new ReviewError(404, `no review of action ${JSON.stringify(actionId).slice(0, 60)}`, 'action_id');
    })().then(
      (review) => res.json(review),
      (e) => sendError(res, e),
    );
  });
}
