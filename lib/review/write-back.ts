/**
 * The reviews an instance knows from its own audit file (docs/audit.md, the `review` lines), for
 * the write-back after Redis lost its data (docs/scale-out.md "Redis down, Redis lost"): the
 * reviews it opened, the votes it took, its final calls and its closings.
 */
import fs from 'node:fs';
import type { Review } from './store';
import { isPlainObject as isObject } from '../support/objects';

/**
 * The reviews of node `node` as its audit file records them (docs/audit.md "review" lines): each
 * `opened` line's review, its `vote` lines, its `call` (state `calling` with the votes counted),
 * `result`, `expired`, `decidedElsewhere` and `escalated` lines. Reviews opened before the
 * `opened` line carried the review are left out (the store's copy stands for them).
 * @throws what reading the file throws (but not ENOENT: no file, no review).
 */
export async function reviewsFromAudit(file: string, node: string): Promise<Review[]> {
  let text = '';
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const reviews = new Map<string, Review>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    let l: Record<string, any>;
    try {
      l = JSON.parse(line);
    } catch {
      continue;
    }
    if (l.kind !== 'review' || l.node !== node || typeof l.action_id !== 'string') continue;
    if (l.event === 'opened' && isObject(l.review)) {
      reviews.set(l.action_id, { ...(l.review as unknown as Review), votes: [], state: 'open' });
      continue;
    }
    const r = reviews.get(l.action_id);
    if (!r) continue;
    const at = Date.parse(String(l.at)) || Date.now();
    if (l.event === 'vote' && !r.votes.some((v) => v.reviewer.toLowerCase() === String(l.reviewer).toLowerCase())) {
      r.votes.push({ reviewer: String(l.reviewer), decision: l.decision, ...(l.reason ? { reason: String(l.reason) } : {}), at: String(l.at), via: l.via });
    } else if (l.event === 'call') {
      r.state = 'calling';
      r.final = { decision: l.decision, instance: String(l.instance), at: String(l.at), votes: Array.isArray(l.votes) ? l.votes : r.votes.filter((v) => (l.reviewers ?? []).includes(v.reviewer)) };
    } else if (l.event === 'result' && r.final) {
      r.state = l.outcome === 'applied' ? (l.decision === 'approve' ? 'approved' : 'rejected') : 'failed';
      r.final = { ...r.final, outcome: l.outcome, why: l.why, ...(l.statusCode ? { statusCode: l.statusCode } : {}) };
      r.closedAt = at;
    } else if (l.event === 'expired') {
      r.state = 'expired';
      r.closedAt = at;
    } else if (l.event === 'decidedElsewhere') {
      r.state = 'decidedElsewhere';
      r.elsewhere = { status: String(l.status), why: `the action is ${l.status}, not by this review` };
      r.closedAt = at;
    } else if (l.event === 'escalated') {
      r.escalated = true;
    }
  }
  return Array.from(reviews.values());
}
