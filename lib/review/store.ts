/**
 * Where the review queue lives (docs/nodes.md "custody-review"): {@link FileReviewStore}, one JSON
 * file per node in the user directory (replaced atomically, lib/support/durable/atomic.ts), or
 * {@link RedisReviewStore}, shared by every instance on the connection's coordination Redis
 * (docs/scale-out.md).
 *
 * A vote is taken atomically with the facts it rests on: in one step (the file's lock, or one Lua
 * script) the store checks that the review is still open (no final claim), that the person has not
 * voted, stores the vote, works out the verdict from the votes stored (any reject rejects, else
 * `required` distinct approvers approve) and, when the vote decides, claims the final call with a
 * snapshot of exactly those votes. A vote answered "stored" therefore always counts: no later vote
 * can be stored once the claim is taken, and the final call is decided on the snapshot.
 *
 * Every change is published once on the store's change stream ({@link ReviewStore.subscribe}):
 * in process for the file store, on the Redis channel `<prefix>review:<node id>:changes` for Redis,
 * with a counter (`<prefix>review:<node id>:version`) that a listener reads now and then to catch a
 * message lost while its subscriber was reconnecting.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { writeAtomic } from '../support/durable/atomic';
import { KeyedLock } from '../support/keyed-lock';
import { withScripts, type LuaScript } from '../coordination/lua';
import { ReviewError, verdict, type Vote } from './rules';
import { trimClosed } from './closed';
import type { FinalCall, Review, ReviewChange, ReviewClosing, VoteResult } from './review';

export type { ReviewState, FinalCall, Review, ReviewChange, VoteResult, ReviewClosing } from './review';

/** What a store does; every method may reject with what the file system or Redis throws. */
export interface ReviewStore {
  /** `file` or `redis`. */
  readonly kind: 'file' | 'redis';
  /** Every stored review (open and recently closed), oldest first. */
  load(): Promise<Review[]>;
  /** One review with its votes, or undefined. */
  get(actionId: string): Promise<Review | undefined>;
  /** Add `review` unless one with its action id exists. @returns the stored one, and whether it was added now. */
  add(review: Review): Promise<{ review: Review; added: boolean }>;
  /**
   * Store `vote` atomically with the check that the review is open and the person has not voted;
   * when it decides the review (see the module comment), claim the final call with the votes stored.
   * Publishes the change itself (`vote`, or `calling` for a deciding vote), in the same step.
   * @param required the review's distinct approvers needed; @param instance this instance's name (the claim's).
   */
  vote(actionId: string, vote: Vote, required: number, instance: string): Promise<VoteResult>;
  /** Close an open review without a call (`expired`, `decidedElsewhere`), unless its final call is claimed. @returns true when it was closed by this call. */
  finish(actionId: string, closing: ReviewClosing): Promise<boolean>;
  /** Claim the escalation of a review: true for exactly one caller across instances (it is then marked escalated). */
  claimEscalation(actionId: string): Promise<boolean>;
  /** Change a review's own fields (not its votes). */
  update(actionId: string, patch: Partial<Omit<Review, 'votes' | 'action_id'>>): Promise<void>;
  /** Forget a closed review. */
  remove(actionId: string): Promise<void>;
  /**
   * Write back reviews after Redis lost its data (each instance what it knows): each review added
   * unless there, each vote unless its person's is there, the final call or the closing unless one
   * is claimed. Never overwrites.
   */
  restore(reviews: Review[]): Promise<void>;
  /** Publish a change (once) to every listener of this queue, on every instance. */
  publish(change: ReviewChange): Promise<void>;
  /** Listen to the changes of this queue. @returns the function that stops listening. */
  subscribe(listener: (change: ReviewChange) => void): () => void;
  /** Whether a change was published that no listener of this store heard (its subscriber was reconnecting): then reload. */
  missedChanges(): Promise<boolean>;
  /** Register a write-back run when the shared store comes back without its data (Redis only). @returns the function that unregisters it. */
  onDataLoss?(handler: () => Promise<void>): () => void;
  /** Wait for the writes in progress (the Redis connection is the config node's: left open). */
  close(): Promise<void>;
}

/** The store file of node `nodeId` below `folder` (`<userDir>/custodyflow/review`). */
export function reviewStoreFile(folder: string, nodeId: string): string {
  return path.join(folder, `${nodeId.replace(/[^\w.-]/g, '_')}.json`);
}

/** How long a closed review's keys stay in Redis (ms): one day. */
export const CLOSED_REVIEW_KEEP_MS = 24 * 3600_000;

/** The queue of one node in one JSON file, rewritten atomically at each change (one instance). */
export class FileReviewStore implements ReviewStore {
  readonly kind = 'file' as const;
  readonly #file: string;
  readonly #reviews = new Map<string, Review>();
  readonly #claims = new Set<string>();
  readonly #lock = new KeyedLock();
  readonly #listeners = new Set<(change: ReviewChange) => void>();
  readonly #nodeId: string;

  private constructor(file: string, nodeId: string) {
    this.#file = file;
    this.#nodeId = nodeId;
  }

  /**
   * Open (creating its folder) the file `file`.
   * @param nodeId the review node's id, named in the changes published (default: the file's name without `.json`).
   * @throws when it exists and is not a queue file.
   */
  static async open(file: string, nodeId = path.basename(file, '.json')): Promise<FileReviewStore> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const store = new FileReviewStore(file, nodeId);
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
      trimClosed(store.#reviews);
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

  async add(review: Review): Promise<{ review: Review; added: boolean }> {
    return this.#change(async () => {
      const had = this.#reviews.get(review.action_id);
      if (had) return { review: structuredClone(had), added: false };
      this.#reviews.set(review.action_id, structuredClone(review));
      await this.#save();
      return { review: structuredClone(review), added: true };
    });
  }

  async vote(actionId: string, vote: Vote, required: number, instance: string): Promise<VoteResult> {
    return this.#change(async () => {
      const r = this.#reviews.get(actionId);
      if (!r) return { kind: 'missing' };
      if (this.#claims.has(`final:${actionId}`) || r.state !== 'open') return { kind: 'closed' };
      if (r.votes.some((v) => v.reviewer.toLowerCase() === vote.reviewer.toLowerCase())) return { kind: 'voted' };
      r.votes.push(vote);
      const decision = verdict(r.votes, required);
      let claimed: FinalCall | undefined;
      if (decision) {
        claimed = { decision, instance, at: vote.at, votes: structuredClone(r.votes) };
        this.#claims.add(`final:${actionId}`);
        r.state = 'calling';
        r.final = claimed;
      }
      await this.#save();
      void this.publish({ node: this.#nodeId, action_id: actionId, event: claimed ? 'calling' : 'vote', by: vote.reviewer });
      return { kind: 'stored', ...(claimed ? { claimed: structuredClone(claimed) } : {}) };
    });
  }

  async finish(actionId: string, closing: ReviewClosing): Promise<boolean> {
    return this.#change(async () => {
      const r = this.#reviews.get(actionId);
      if (!r || this.#claims.has(`final:${actionId}`) || r.state !== 'open') return false;
      this.#claims.add(`final:${actionId}`);
      Object.assign(r, closing);
      await this.#save();
      return true;
    });
  }

  async claimEscalation(actionId: string): Promise<boolean> {
    return this.#change(async () => {
      const r = this.#reviews.get(actionId);
      const key = `escalated:${actionId}`;
      if (!r || this.#claims.has(key)) return false;
      this.#claims.add(key);
      r.escalated = true;
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

  async restore(): Promise<void> {
    // The file is this instance's own and loses nothing: nothing to write back.
  }

  async publish(change: ReviewChange): Promise<void> {
    for (const fn of Array.from(this.#listeners)) fn(change);
  }

  subscribe(listener: (change: ReviewChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async missedChanges(): Promise<boolean> {
    return false; // changes are published in process: none is missed
  }

  async close(): Promise<void> {
    this.#listeners.clear();
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
    trimClosed(this.#reviews);
    return writeAtomic(this.#file, JSON.stringify({ reviews: Array.from(this.#reviews.values()), claims: Array.from(this.#claims) }));
  }
}

/** The part of lib/coordination's `Coordinator` a {@link RedisReviewStore} uses. */
export interface ReviewCoordination {
  /** The full key of `parts` below the coordination's prefix. */
  key(...parts: string[]): string;
  /** Run a command on the connection (rejects with `ECOORDINATION` while Redis is away). */
  run<T>(fn: (redis: Redis) => Promise<T>): Promise<T>;
  /** Listen to the channel `<prefix><name>`. @returns the function that stops listening. */
  subscribe(name: string, listener: (message: string) => void): () => void;
  /** `ready`, `recovering` (Redis came back without its data: write-backs running), `connecting`, `down`, `closed`. */
  readonly state: string;
  /** Register a write-back run when Redis comes back without its data. @returns the function that unregisters it. */
  onDataLoss(handler: () => Promise<void>): () => void;
  /** This instance's name (`<hostname>/<pid>` by default). */
  readonly instance: string;
}

// Store a vote unless the review is claimed for its final call (or closed) or the person voted;
// then the verdict from the votes stored: any reject rejects, `required` distinct approvers (the
// votes hash is keyed by the lower-cased name: one field a person) approve. A deciding vote claims
// the final call with the votes it rests on, in the same step.
// KEYS: the reviews hash, the votes hash, the fields hash, the final claim, the version counter.
// ARGV: action id, reviewer (lower case), vote JSON, required, the claim's `"instance":..,"at":..`
// members, keep ms, channel, change message of a vote, change message of a deciding vote.
const VOTE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {'missing', ''} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'closed', ''} end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return {'voted', ''} end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local votes = redis.call('HVALS', KEYS[2])
local reject = false
local approvers = 0
for _, t in ipairs(votes) do
  local d = cjson.decode(t).decision
  if d == 'reject' then reject = true elseif d == 'approve' then approvers = approvers + 1 end
end
local decision = ''
if reject then decision = 'reject' elseif approvers >= tonumber(ARGV[4]) then decision = 'approve' end
local final = ''
local message = ARGV[8]
if decision ~= '' then
  final = '{"decision":"' .. decision .. '",' .. ARGV[5] .. ',"votes":[' .. table.concat(votes, ',') .. ']}'
  redis.call('SET', KEYS[4], final, 'PX', ARGV[6])
  redis.call('HSET', KEYS[3], 'state', '"calling"', 'final', final)
  message = ARGV[9]
end
local version = redis.call('INCR', KEYS[5])
redis.call('PUBLISH', ARGV[7], version .. '\\n' .. message)
return {'stored', final}`;

// Close an open review without a call unless its final call is claimed (expired, decided elsewhere).
// KEYS: the reviews hash, the fields hash, the final claim. ARGV: action id, the claim's value, keep ms, then field/value pairs.
const FINISH = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3], 'NX') == false then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
return 1`;

// Write back a review's final call or closing after a data loss, unless one is claimed.
// KEYS: the fields hash, the final claim. ARGV: the claim's value, keep ms, then field/value pairs.
const RESTORE_FINAL = `
if redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') == false then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1`;

// Publish a change with the counter it raised. KEYS: the version counter. ARGV: channel, change JSON.
const PUBLISH = `
local version = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], version .. '\\n' .. ARGV[2])
return version`;

/** The review store's scripts, by ioredis command name (lib/coordination/lua.ts). */
const REVIEW_SCRIPTS: Record<keyof ReviewScripts, LuaScript> = {
  cfReviewPublish: { lua: PUBLISH, keys: 1 },
  cfReviewVote: { lua: VOTE, keys: 5 },
  cfReviewFinish: { lua: FINISH, keys: 3 },
  cfReviewRestoreFinal: { lua: RESTORE_FINAL, keys: 2 },
};

/** The scripts as commands on the connection. */
interface ReviewScripts {
  cfReviewPublish(...args: Array<string | number>): Promise<number>;
  cfReviewVote(...args: Array<string | number>): Promise<[string, string]>;
  cfReviewFinish(...args: Array<string | number>): Promise<number>;
  cfReviewRestoreFinal(...args: Array<string | number>): Promise<number>;
}

/**
 * The queue of one node in Redis: hash `<prefix>review:<node id>` (field action id, value the
 * review as added, without its votes), hash `<prefix>review:<node id>:votes:<action id>` (field the
 * reviewer in lower case, value the vote), hash `<prefix>review:<node id>:fields:<action id>` (the
 * fields changed since: state, final, escalated, closedAt, elsewhere; one hash field each, a JSON
 * value), the claims `<prefix>review:<node id>:final:<action id>` (the final call with its votes, or
 * the closing) and `<prefix>review:<node id>:escalated:<action id>`, the counter
 * `<prefix>review:<node id>:version` and the channel `<prefix>review:<node id>:changes`.
 */
export class RedisReviewStore implements ReviewStore {
  readonly kind = 'redis' as const;
  readonly #c: ReviewCoordination;
  readonly #nodeId: string;
  readonly #hash: string;
  readonly #channelName: string;

  /** @param coordination the connection's coordinator; @param nodeId the review node's id (the same on every instance running the flow). */
  constructor(coordination: ReviewCoordination, nodeId: string) {
    this.#c = coordination;
    this.#nodeId = nodeId;
    this.#hash = coordination.key('review', nodeId);
    this.#channelName = `review:${nodeId}:changes`;
  }

  #key(part: string, actionId: string): string {
    return this.#c.key('review', this.#nodeId, part, actionId);
  }

  get #versionKey(): string {
    return this.#c.key('review', this.#nodeId, 'version');
  }

  /** Run a command that changes the queue: only while the coordination is ready (not while a data loss is being written back). */
  async #write<T>(fn: (redis: Redis & ReviewScripts) => Promise<T>): Promise<T> {
    if (this.#c.state === 'recovering') throw new ReviewError(503, 'coordination: Redis came back without its data; the reviews are being written back (for one claim lease), vote again in a moment');
    return this.#c.run((r) => fn(withScripts<ReviewScripts, Redis>(r, REVIEW_SCRIPTS)));
  }

  async load(): Promise<Review[]> {
    const [version, all] = await this.#c.run((r) => Promise.all([r.get(this.#versionKey), r.hgetall(this.#hash)]));
    this.#seen = Number(version) || 0;
    const reviews: Review[] = [];
    for (const text of Object.values(all)) {
      try {
        reviews.push(JSON.parse(text) as Review);
      } catch {
        // not a review: left alone
      }
    }
    if (reviews.length === 0) return [];
    const answers = await this.#c.run(async (r) => {
      const p = r.pipeline();
      for (const rv of reviews) p.hgetall(this.#key('votes', rv.action_id)).hgetall(this.#key('fields', rv.action_id));
      return (await p.exec()) ?? [];
    });
    const failed = answers.find(([err]) => err);
    if (failed) throw failed[0];
    return reviews.map((rv, i) => withPatch(rv, answers[2 * i][1] as Record<string, string>, answers[2 * i + 1][1] as Record<string, string>)).sort((a, b) => a.createdAt - b.createdAt);
  }

  async get(actionId: string): Promise<Review | undefined> {
    const [text, votes, patch] = await this.#c.run((r) => Promise.all([r.hget(this.#hash, actionId), r.hgetall(this.#key('votes', actionId)), r.hgetall(this.#key('fields', actionId))]));
    if (!text) return undefined;
    return withPatch(JSON.parse(text) as Review, votes, patch);
  }

  async add(review: Review): Promise<{ review: Review; added: boolean }> {
    const { votes: _votes, ...rest } = review;
    const added = await this.#write((r) => r.hsetnx(this.#hash, review.action_id, JSON.stringify(rest)));
    return { review: (await this.get(review.action_id)) ?? review, added: added === 1 };
  }

  async vote(actionId: string, vote: Vote, required: number, instance: string): Promise<VoteResult> {
    const claim = JSON.stringify({ instance, at: vote.at }).slice(1, -1);
    const message = (event: ReviewChange['event']) => JSON.stringify({ node: this.#nodeId, action_id: actionId, event, by: vote.reviewer } satisfies ReviewChange);
    const [kind, final] = await this.#write((r) =>
      r.cfReviewVote(this.#hash, this.#key('votes', actionId), this.#key('fields', actionId), this.#key('final', actionId), this.#versionKey, actionId, vote.reviewer.toLowerCase(), JSON.stringify(vote), required, claim, CLOSED_REVIEW_KEEP_MS, this.#c.key(this.#channelName), message('vote'), message('calling')),
    );
    if (kind !== 'stored') return { kind: kind as 'voted' | 'closed' | 'missing' };
    if (!final) return { kind: 'stored' };
    const claimed = JSON.parse(final) as FinalCall;
    claimed.votes = sortVotes(claimed.votes);
    return { kind: 'stored', claimed };
  }

  async finish(actionId: string, closing: ReviewClosing): Promise<boolean> {
    const fields = Object.entries(closing).flatMap(([k, v]) => [k, JSON.stringify(v)]);
    const n = await this.#write((r) => r.cfReviewFinish(this.#hash, this.#key('fields', actionId), this.#key('final', actionId), actionId, JSON.stringify(closing), CLOSED_REVIEW_KEEP_MS, ...fields));
    return n === 1;
  }

  async claimEscalation(actionId: string): Promise<boolean> {
    const ok = await this.#write((r) => r.set(this.#key('escalated', actionId), this.#c.instance, 'PX', CLOSED_REVIEW_KEEP_MS, 'NX'));
    if (ok !== 'OK') return false;
    await this.update(actionId, { escalated: true });
    return true;
  }

  async update(actionId: string, patch: Partial<Omit<Review, 'votes' | 'action_id'>>): Promise<void> {
    // One hash field per changed field: instances changing different fields (the escalation, the final call) never overwrite each other.
    const fields = Object.entries(patch).flatMap(([k, v]) => [k, JSON.stringify(v)]);
    if (fields.length) await this.#c.run((r) => r.hset(this.#key('fields', actionId), ...fields));
  }

  async remove(actionId: string): Promise<void> {
    await this.#c.run((r) => r.multi().hdel(this.#hash, actionId).pexpire(this.#key('votes', actionId), CLOSED_REVIEW_KEEP_MS).pexpire(this.#key('fields', actionId), CLOSED_REVIEW_KEEP_MS).exec());
  }

  async restore(reviews: Review[]): Promise<void> {
    for (const review of reviews) {
      const { votes, final, state, closedAt, elsewhere, escalated, ...rest } = review;
      await this.#c.run(async (r) => {
        const p = r.pipeline();
        p.hsetnx(this.#hash, review.action_id, JSON.stringify({ ...rest, votes: [], state: 'open' }));
        for (const v of votes) p.hsetnx(this.#key('votes', review.action_id), v.reviewer.toLowerCase(), JSON.stringify(v));
        if (escalated) p.set(this.#key('escalated', review.action_id), this.#c.instance, 'PX', CLOSED_REVIEW_KEEP_MS, 'NX').hset(this.#key('fields', review.action_id), 'escalated', 'true');
        const results = (await p.exec()) ?? [];
        const failed = results.find(([err]) => err);
        if (failed) throw failed[0];
        if (state === 'open') return;
        const fields: Array<[string, unknown]> = [['state', state], ['final', final], ['closedAt', closedAt], ['elsewhere', elsewhere]];
        const args = fields.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [k, JSON.stringify(v)]);
        await withScripts<ReviewScripts, Redis>(r, REVIEW_SCRIPTS).cfReviewRestoreFinal(this.#key('fields', review.action_id), this.#key('final', review.action_id), JSON.stringify(final ?? { state }), CLOSED_REVIEW_KEEP_MS, ...args);
      });
    }
    await this.publish({ node: this.#nodeId, action_id: '', event: 'restored' });
  }

  async publish(change: ReviewChange): Promise<void> {
    await this.#c.run((r) => withScripts<ReviewScripts, Redis>(r, REVIEW_SCRIPTS).cfReviewPublish(this.#versionKey, this.#c.key(this.#channelName), JSON.stringify(change)));
  }

  subscribe(listener: (change: ReviewChange) => void): () => void {
    return this.#c.subscribe(this.#channelName, (message) => {
      const nl = message.indexOf('\n');
      let change: ReviewChange;
      try {
        change = JSON.parse(message.slice(nl + 1)) as ReviewChange;
      } catch {
        return; // not a change of this queue
      }
      this.#seen = Math.max(this.#seen, Number(message.slice(0, nl)) || 0);
      listener(change);
    });
  }

  /** The highest change counter seen in a message or at the last {@link load}. */
  #seen = 0;

  async missedChanges(): Promise<boolean> {
    const version = Number(await this.#c.run((r) => r.get(this.#versionKey))) || 0;
    return version !== this.#seen;
  }

  onDataLoss(handler: () => Promise<void>): () => void {
    return this.#c.onDataLoss(handler);
  }

  async close(): Promise<void> {
    // the connection is the config node's; the listeners are removed by whoever subscribed
  }
}

/** A review as added, with its votes and its changed fields (each a JSON value) over it. */
function withPatch(review: Review, votes: Record<string, string>, patch: Record<string, string>): Review {
  for (const [k, v] of Object.entries(patch)) (review as unknown as Record<string, unknown>)[k] = JSON.parse(v);
  review.votes = sortVotes(Object.values(votes).map((t) => JSON.parse(t) as Vote));
  if (review.final) review.final.votes = sortVotes(review.final.votes ?? []);
  return review;
}

function sortVotes(votes: Vote[]): Vote[] {
  return [...votes].sort((a, b) => a.at.localeCompare(b.at));
}
