/**
 * Where the review queue lives (docs/nodes.md "custody-review"): {@link FileReviewStore}, one JSON
 * file per node in the user directory (replaced atomically, lib/support/durable/atomic.ts), or
 * {@link RedisReviewStore}, shared by every instance on the connection's coordination Redis
 * (docs/scale-out.md): one vote per person by `HSETNX`, and the final decision, the escalation and
 * the expiry each claimed once with `SET NX` (as lib/approver/claims.ts claims a decision).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { writeAtomic } from '../support/durable/atomic';
import { KeyedLock } from '../support/keyed-lock';
import type { ReviewDecision, Vote } from './rules';

/** A review's state: `open` (taking votes), `calling` (its PUT or DELETE made, outcome being resolved), then `approved`, `rejected`, `expired` or `failed` (the call did not take effect). */
export type ReviewState = 'open' | 'calling' | 'approved' | 'rejected' | 'expired' | 'failed';

/** One review: an action held for people (spec section 2 "Action"), its rules' outcome and its votes. */
export interface Review {
  /** The action's id (spec section 2 "Action": `id`). */
  action_id: string;
  /** The core client whose action it is. */
  client_id: string;
  /** The action's type (ApproveTransfer, ...). */
  type?: string;
  /** The action's details (spec section 2), as read. */
  details: Record<string, unknown>;
  /** The amount moved (`details.netAmount`, else `amount`) in decimal units of the asset, e.g. `2` `BTC-TESTNET`, when known. */
  amount?: { asset: string; decimal: string };
  /** Why it was held (`msg.decision.reasons` of custody-approver). */
  reasons: string[];
  /** `details.initiatedBy`: who initiated the transaction. */
  initiatedBy?: string;
  /** `details.initiatorName`. */
  initiatorName?: string;
  /** The action's `expireTime` (epoch seconds; 0: none). */
  expireTime: number;
  /** Distinct approvers needed. */
  required: number;
  /** The votes so far, oldest first. */
  votes: Vote[];
  state: ReviewState;
  /** The final call, once claimed. */
  final?: { decision: ReviewDecision; instance: string; at: string; outcome?: string; why?: string; statusCode?: number };
  /** True once it went out escalated. */
  escalated?: boolean;
  /** When it was queued, epoch ms. */
  createdAt: number;
}

/** What a store does; every method may reject with what the file system or Redis throws. */
export interface ReviewStore {
  /** `file` or `redis`. */
  readonly kind: 'file' | 'redis';
  /** Every stored review (open and recently closed), oldest first. */
  load(): Promise<Review[]>;
  /** One review with its votes, or undefined. */
  get(actionId: string): Promise<Review | undefined>;
  /** Add `review` unless one with its action id exists. @returns the stored one. */
  add(review: Review): Promise<Review>;
  /** Record `vote` unless its reviewer already voted. @returns false when they had. */
  vote(actionId: string, vote: Vote): Promise<boolean>;
  /** Claim a one-time step (`final`, `escalated`) of a review: true for exactly one caller across instances. */
  claim(actionId: string, step: 'final' | 'escalated'): Promise<boolean>;
  /** Change a review's own fields (not its votes). */
  update(actionId: string, patch: Partial<Omit<Review, 'votes' | 'action_id'>>): Promise<void>;
  /** Forget a closed review. */
  remove(actionId: string): Promise<void>;
  /** Wait for the writes in progress (the Redis connection is the config node's: left open). */
  close(): Promise<void>;
}

/** The store file of node `nodeId` below `folder` (`<userDir>/custodyflow/review`). */
export function reviewStoreFile(folder: string, nodeId: string): string {
  return path.join(folder, `${nodeId.replace(/[^\w.-]/g, '_')}.json`);
}

/** The queue of one node in one JSON file, rewritten atomically at each change (one instance). */
export class FileReviewStore implements ReviewStore {
  readonly kind = 'file' as const;
  readonly #file: string;
  readonly #reviews = new Map<string, Review>();
  readonly #claims = new Set<string>();
  readonly #lock = new KeyedLock();

  private constructor(file: string) {
    this.#file = file;
  }

  /** Open (creating its folder) the file `file`. @throws when it exists and is not a queue file. */
  static async open(file: string): Promise<FileReviewStore> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const store = new FileReviewStore(file);
    let text = '';
    try {
      text = await fs.promises.readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (text) {
      const data = JSON.parse(text) as { reviews: Review[]; claims: string[] };
      for (const r of data.reviews) store.#reviews.set(r.action_id, r);
      for (const c of data.claims ?? []) store.#claims.add(c);
    }
    return store;
  }

  async load(): Promise<Review[]> {
    return Array.from(this.#reviews.values(), (r) => structuredClone(r)).sort((a, b) => a.createdAt - b.createdAt);
  }

  async get(actionId: string): Promise<Review | undefined> {
    const r = this.#reviews.get(actionId);
    return r && structuredClone(r);
  }

  async add(review: Review): Promise<Review> {
    return this.#change(async () => {
      const had = this.#reviews.get(review.action_id);
      if (had) return structuredClone(had);
      this.#reviews.set(review.action_id, structuredClone(review));
      await this.#save();
      return structuredClone(review);
    });
  }

  async vote(actionId: string, vote: Vote): Promise<boolean> {
    return this.#change(async () => {
      const r = this.#reviews.get(actionId);
      if (!r || r.votes.some((v) => v.reviewer.toLowerCase() === vote.reviewer.toLowerCase())) return false;
      r.votes.push(vote);
      await this.#save();
      return true;
    });
  }

  async claim(actionId: string, step: 'final' | 'escalated'): Promise<boolean> {
    return this.#change(async () => {
      const key = `${step}:${actionId}`;
      if (this.#claims.has(key)) return false;
      this.#claims.add(key);
      await this.#save();
      return true;
    });
  }

  async update(actionId: string, patch: Partial<Omit<Review, 'votes' | 'action_id'>>): Promise<void> {
    await this.#change(async () => {
      const r = this.#reviews.get(actionId);
      if (!r) return;
      Object.assign(r, patch);
      await this.#save();
    });
  }

  async remove(actionId: string): Promise<void> {
    await this.#change(async () => {
      this.#reviews.delete(actionId);
      for (const step of ['final', 'escalated']) this.#claims.delete(`${step}:${actionId}`);
      await this.#save();
    });
  }

  async close(): Promise<void> {
    await this.#change(async () => undefined);
  }

  async #change<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.#lock.acquire('file');
    try {
      return await fn();
    } finally {
      release();
    }
  }

  #save(): Promise<void> {
    return writeAtomic(this.#file, JSON.stringify({ reviews: Array.from(this.#reviews.values()), claims: Array.from(this.#claims) }));
  }
}

/** The part of lib/coordination's `Coordinator` a {@link RedisReviewStore} uses. */
export interface ReviewCoordination {
  /** The full key of `parts` below the coordination's prefix. */
  key(...parts: string[]): string;
  /** Run a command on the connection (rejects with `ECOORDINATION` while Redis is away). */
  run<T>(fn: (redis: Redis) => Promise<T>): Promise<T>;
  /** This instance's name (`<hostname>/<pid>` by default). */
  readonly instance: string;
}

/** How long a closed review's keys stay in Redis (ms): one day. */
export const CLOSED_REVIEW_KEEP_MS = 24 * 3600_000;

/**
 * The queue of one node in Redis: hash `<prefix>review:<node id>` (field action id, value the
 * review as added, without its votes), hash `<prefix>review:<node id>:votes:<action id>` (field the
 * reviewer in lower case, value the vote), hash `<prefix>review:<node id>:fields:<action id>` (the
 * fields changed since: state, final, escalated; one hash field each) and `SET NX` keys
 * `<prefix>review:<node id>:<step>:<action id>`.
 */
export class RedisReviewStore implements ReviewStore {
  readonly kind = 'redis' as const;
  readonly #c: ReviewCoordination;
  readonly #nodeId: string;
  readonly #hash: string;

  /** @param coordination the connection's coordinator; @param nodeId the review node's id (the same on every instance running the flow). */
  constructor(coordination: ReviewCoordination, nodeId: string) {
    this.#c = coordination;
    this.#nodeId = nodeId;
    this.#hash = coordination.key('review', nodeId);
  }

  #votesKey(actionId: string): string {
    return this.#c.key('review', this.#nodeId, 'votes', actionId);
  }

  #patchKey(actionId: string): string {
    return this.#c.key('review', this.#nodeId, 'fields', actionId);
  }

  async load(): Promise<Review[]> {
    const all = await this.#c.run((r) => r.hgetall(this.#hash));
    const reviews: Review[] = [];
    for (const text of Object.values(all)) {
      try {
        reviews.push(JSON.parse(text) as Review);
      } catch {
        // not a review: left alone
      }
    }
    const [votes, patches] = await this.#c.run((r) =>
      Promise.all([Promise.all(reviews.map((rv) => r.hgetall(this.#votesKey(rv.action_id)))), Promise.all(reviews.map((rv) => r.hgetall(this.#patchKey(rv.action_id))))]),
    );
    return reviews.map((rv, i) => withPatch(rv, votes[i], patches[i])).sort((a, b) => a.createdAt - b.createdAt);
  }

  async get(actionId: string): Promise<Review | undefined> {
    const [text, votes, patch] = await this.#c.run((r) => Promise.all([r.hget(this.#hash, actionId), r.hgetall(this.#votesKey(actionId)), r.hgetall(this.#patchKey(actionId))]));
    if (!text) return undefined;
    return withPatch(JSON.parse(text) as Review, votes, patch);
  }

  async add(review: Review): Promise<Review> {
    const { votes: _votes, ...rest } = review;
    await this.#c.run((r) => r.hsetnx(this.#hash, review.action_id, JSON.stringify(rest)));
    return (await this.get(review.action_id)) ?? review;
  }

  async vote(actionId: string, vote: Vote): Promise<boolean> {
    const added = await this.#c.run((r) => r.hsetnx(this.#votesKey(actionId), vote.reviewer.toLowerCase(), JSON.stringify(vote)));
    return added === 1;
  }

  async claim(actionId: string, step: 'final' | 'escalated'): Promise<boolean> {
    const ok = await this.#c.run((r) => r.set(this.#c.key('review', this.#nodeId, step, actionId), this.#c.instance, 'PX', CLOSED_REVIEW_KEEP_MS, 'NX'));
    return ok === 'OK';
  }

  async update(actionId: string, patch: Partial<Omit<Review, 'votes' | 'action_id'>>): Promise<void> {
    // One hash field per changed field: instances changing different fields (the escalation, the final call) never overwrite each other.
    const fields = Object.entries(patch).flatMap(([k, v]) => [k, JSON.stringify(v)]);
    if (fields.length) await this.#c.run((r) => r.hset(this.#patchKey(actionId), ...fields));
  }

  async remove(actionId: string): Promise<void> {
    await this.#c.run((r) => r.multi().hdel(this.#hash, actionId).pexpire(this.#votesKey(actionId), CLOSED_REVIEW_KEEP_MS).pexpire(this.#patchKey(actionId), CLOSED_REVIEW_KEEP_MS).exec());
  }

  async close(): Promise<void> {
    // the connection is the config node's
  }
}

/** A review as added, with its votes and its changed fields (each a JSON value) over it. */
function withPatch(review: Review, votes: Record<string, string>, patch: Record<string, string>): Review {
  for (const [k, v] of Object.entries(patch)) (review as unknown as Record<string, unknown>)[k] = JSON.parse(v);
  review.votes = sortVotes(votes);
  return review;
}

function sortVotes(hash: Record<string, string>): Vote[] {
  return Object.values(hash)
    .map((t) => JSON.parse(t) as Vote)
    .sort((a, b) => a.at.localeCompare(b.at));
}
