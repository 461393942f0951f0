/**
 * Velocity windows shared by several Node-RED instances through Redis, with a read whose cost
 * does not grow with the approvals in the window.
 *
 * Per window (approver scope, mode, asset), four keys in one hash tag, so the scripts touch one
 * slot (`<prefix>{velocity:<scope>:<mode>:<asset>}:...`):
 * - `:meta` (hash): `id`, a random id drawn when the window is created (a window that Redis lost
 *   and that was created again has another one); `v`, the version (increases by one with every
 *   change); `base`, the version from which on every change is in the log.
 * - `:set` (sorted set: member the action id, score the decision time, epoch ms) and `:amounts`
 *   (hash: action id -> base units, decimal text): the approvals counted.
 * - `:log` (sorted set, score the version): the changes, one per version: `<v>|a|<at>|<cutoff>|<amount>|<action>`
 *   (counted, after dropping the approvals before `cutoff`, epoch ms; empty: none dropped) and
 *   `<v>|r|<action>` (no longer counted). The latest {@link LOG_MAX} are kept.
 *
 * Each instance keeps a mirror of each window it read (a {@link VelocityLedger}) at the version
 * it last saw. A read (one Lua script, one round trip) returns the changes since that version,
 * which the mirror applies (O(log n) each); the whole window only when the mirror is too far
 * behind (the log was trimmed, or more changes than approvals), when it has none yet (a start),
 * or when the window's id changed (Redis lost its data: the mirror of the old window is written
 * back first, then dropped). A reserve is optimistic: a script adds the approval only if the
 * window is still at the version read, drops what is older than keepMs before it, and sets a TTL
 * (keepMs + 1 day) on every key. Amounts in base units (bigint), times in epoch ms.
 */
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { VelocityLedger, windowUsage, type VelocityEntry, type VelocityWindows, type WindowView } from './velocity';
import { withScripts, type LuaScript } from '../coordination/lua';

/**
 * What the windows need of the coordinator (lib/coordination/coordinator.ts `Coordinator`
 * provides it): the key prefix and a way to run commands that rejects with
 * `CoordinationUnavailableError` while Redis is away.
 */
export interface VelocityRedis {
  /** The full key of `parts` joined by `:` below the key prefix. */
  key(...parts: string[]): string;
  /** Run `fn` on the connection. @throws CoordinationUnavailableError (rejects) when Redis is unavailable. */
  run<T>(fn: (redis: Redis) => Promise<T>): Promise<T>;
}

/** Changes kept in a window's log: a mirror at most this far behind reads only the changes. */
const LOG_MAX = 10_000;
/** A restore that adds at most this many approvals logs each one; a larger one makes every mirror read the window whole. */
const RESTORE_LOGGED = 64;
/** Approvals per restore script call (each call holds Redis for its length). */
const RESTORE_BATCH = 2000;
/** Added to keepMs for every key's TTL, ms. */
const TTL_SLACK_MS = 24 * 3600_000;

// KEYS: meta, set, amounts, log. ARGV: mirror id, mirror version, most changes to send.
// Returns {id, v, 'd', change...} (the changes after the mirror's version) or {id, v, 'f', zset items, amounts} (whole).
const READ = `
local m = redis.call('HMGET', KEYS[1], 'id', 'v', 'base')
local id = m[1] or ''
local v = tonumber(m[2] or '0')
local base = tonumber(m[3] or '0')
local mv = tonumber(ARGV[2])
if id == ARGV[1] and mv >= base and mv <= v and v - mv <= tonumber(ARGV[3]) and v - mv <= redis.call('ZCARD', KEYS[2]) + 1 then
  local out = {id, tostring(v), 'd'}
  if mv == v then return out end
  local ops = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. ARGV[2], '+inf')
  if #ops == v - mv then
    for i = 1, #ops do out[#out + 1] = ops[i] end
    return out
  end
end
return {id, tostring(v), 'f', redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES'), redis.call('HGETALL', KEYS[3])}`;

// Shared by the writing scripts: create the window when absent, log a change, trim, TTL.
const COMMON = `
local function open(newId)
  local m = redis.call('HMGET', KEYS[1], 'id', 'v', 'base')
  if m[1] then return m[1], tonumber(m[2] or '0'), tonumber(m[3] or '0') end
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
  redis.call('HSET', KEYS[1], 'id', newId, 'v', 0, 'base', 0)
  return newId, 0, 0
end
local function close(v, base, ttl)
  if v - base > ${LOG_MAX} then
    base = v - ${LOG_MAX}
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', base)
  end
  redis.call('HSET', KEYS[1], 'v', v, 'base', base)
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
`;

// ARGV: expected id, expected version, new id (if absent), cutoff, ttl, then (at, action, amount)
// triples: all counted, one version each (the first change logs the cutoff).
// Returns {1, id, v} (counted: the window is now at v) or {0}.
const COMMIT = `${COMMON}
local m = redis.call('HMGET', KEYS[1], 'id', 'v')
if (m[1] or '') ~= ARGV[1] or tonumber(m[2] or '0') ~= tonumber(ARGV[2]) then return {0} end
local id, v, base = open(ARGV[3])
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4])
for i = 1, #old, 1000 do redis.call('HDEL', KEYS[3], unpack(old, i, math.min(i + 999, #old))) end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4]) end
for i = 6, #ARGV, 3 do
  redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2])
  v = v + 1
  local cutoff = ''
  if i == 6 then cutoff = ARGV[4] end
  redis.call('ZADD', KEYS[4], v, v .. '|a|' .. ARGV[i] .. '|' .. cutoff .. '|' .. ARGV[i + 2] .. '|' .. ARGV[i + 1])
end
close(v, base, ARGV[5])
return {1, id, tostring(v)}`;

// ARGV: action, ttl, at ('' any; else only the approval of that time, epoch ms: another decision's
// reservation of the same action stays). Returns {1, id, v} (removed: the window is now at v) or {0}.
const RELEASE = `${COMMON}
if not redis.call('HGET', KEYS[1], 'id') then return {0} end
if ARGV[3] ~= '' and tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '-1') ~= tonumber(ARGV[3]) then return {0} end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return {0} end
redis.call('HDEL', KEYS[3], ARGV[1])
local id, v, base = open('')
v = v + 1
redis.call('ZADD', KEYS[4], v, v .. '|r|' .. ARGV[1])
close(v, base, ARGV[2])
return {1, id, tostring(v)}`;

// ARGV: new id (if absent), ttl, then (at, action, amount) triples; an action present stays.
// Returns {id, v before, v after, logged (1) or not (0)}; with no triple, only the id ('' when absent).
const RESTORE = `${COMMON}
if #ARGV < 3 then return {redis.call('HGET', KEYS[1], 'id') or '', '0', '0', 0} end
local id, v, base = open(ARGV[1])
local v0 = v
local added = {}
for i = 3, #ARGV, 3 do
  if redis.call('ZADD', KEYS[2], 'NX', ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2])
    added[#added + 1] = i
  end
end
local logged = 1
if #added > ${RESTORE_LOGGED} then
  v = v + 1
  base = v
  redis.call('DEL', KEYS[4])
  logged = 0
else
  for _, i in ipairs(added) do
    v = v + 1
    redis.call('ZADD', KEYS[4], v, v .. '|a|' .. ARGV[i] .. '||' .. ARGV[i + 2] .. '|' .. ARGV[i + 1])
  end
end
close(v, base, ARGV[2])
return {id, tostring(v0), tostring(v), logged}`;

/** The scripts as ioredis custom commands (EVALSHA, loaded on first use). */
interface Scripts {
  cfVwRead(meta: string, set: string, amounts: string, log: string, id: string, version: number, maxOps: number): Promise<[string, string, 'd' | 'f', ...unknown[]]>;
  cfVwCommit(meta: string, set: string, amounts: string, log: string, id: string, version: number, newId: string, cutoff: number, ttlMs: number, ...triples: Array<string | number>): Promise<[number, string?, string?]>;
  cfVwRelease(meta: string, set: string, amounts: string, log: string, action: string, ttlMs: number, at: number | ''): Promise<[number, string?, string?]>;
  cfVwRestore(meta: string, set: string, amounts: string, log: string, newId: string, ttlMs: number, ...triples: Array<string | number>): Promise<[string, string, string, number]>;
}

const SCRIPTS: Record<keyof Scripts, LuaScript> = { cfVwRead: { lua: READ, keys: 4 }, cfVwCommit: { lua: COMMIT, keys: 4 }, cfVwRelease: { lua: RELEASE, keys: 4 }, cfVwRestore: { lua: RESTORE, keys: 4 } };

/** `redis` with the scripts defined (once per connection, lua.ts). */
function scripts(redis: Redis): Redis & Scripts {
  return withScripts<Scripts, Redis>(redis, SCRIPTS);
}

/** This instance's copy of one window: its id and version when last seen, and its approvals then. */
interface Mirror {
  id: string;
  v: number;
  ledger: VelocityLedger;
}

/** The `(id, version)` of a {@link WindowView.version} (`<id>:<v>`). */
function parseVersion(version: string): [string, number] {
  const i = version.lastIndexOf(':');
  return [version.slice(0, i), Number(version.slice(i + 1))];
}

/**
 * {@link VelocityWindows} shared by every instance on one Redis (see the module comment): the
 * limits hold across the instances together, and a read costs the same with 10 or 100,000
 * approvals in the window (once this instance has read the window whole: at its first read, and
 * after a data loss).
 */
export class RedisVelocityWindows implements VelocityWindows {
  readonly #coord: VelocityRedis;
  readonly #scope: string;
  readonly #mode: string;
  readonly #keepMs: number;
  readonly #mirrors = new Map<string, Mirror>();
  /** Reads that took the whole window (a first read, a mirror too far behind, a recreated window). */
  readsWhole = 0;
  /** Reads that took only the changes since the mirror's version. */
  readsIncremental = 0;

  /**
   * @param coord the coordinator (lib/coordination/coordinator.ts) of the connection.
   * @param scope the approver (its node id: the same flow on every instance).
   * @param mode `live` or `dryRun`: separate windows.
   * @param keepMs the longest velocity window of the rules, ms: a reserve drops the approvals
   *   older than that before the new one's time; every key lives keepMs + 1 day after its last write.
   */
  constructor(coord: VelocityRedis, scope: string, mode: string, keepMs: number) {
    this.#coord = coord;
    this.#scope = scope;
    this.#mode = mode;
    this.#keepMs = keepMs;
  }

  /** The four keys of `asset`'s window. */
  #keys(asset: string): [string, string, string, string] {
    const base = this.#coord.key(`{velocity:${this.#scope}:${this.#mode}:${asset}}`);
    return [`${base}:meta`, `${base}:set`, `${base}:amounts`, `${base}:log`];
  }

  get #ttl(): number {
    return this.#keepMs + TTL_SLACK_MS;
  }

  /**
   * Bring this instance's mirror of `asset` up to Redis's version (the changes since the last
   * read, or the whole window when needed) and return a view of it.
   * The view counts on the mirror: should a later read move the mirror on before its `usage` is
   * called, it counts the newer approvals, and a reserve with it fails (the version moved on).
   * @throws {CoordinationUnavailableError} (rejects).
   */
  async read(asset: string, now: number): Promise<WindowView> {
    for (;;) {
      const sent = this.#mirrors.get(asset);
      // No mirror: an id no window has, so the whole window comes.
      const [id, vText, kind, ...rest] = await this.#coord.run((r) => scripts(r).cfVwRead(...this.#keys(asset), sent ? sent.id : '-', sent ? sent.v : 0, LOG_MAX));
      const v = Number(vText);
      const m = this.#mirrors.get(asset);
      if (kind === 'f') {
        this.readsWhole++;
        if (m && m.id !== id && m.id !== '' && m.ledger.size(asset) > 0) {
          // The window was lost and created again (or is gone): write back what this instance knew, then read it whole.
          await this.restore(asset, m.ledger.entriesOf(asset).filter((e) => e.at >= now - this.#keepMs));
          this.#mirrors.delete(asset);
          continue;
        }
        if (!m || m.id !== id || m.v < v) this.#mirrors.set(asset, this.#whole(asset, id, v, rest[0] as string[], rest[1] as string[]));
      } else {
        if (!m || m !== sent || m.id !== id) continue; // replaced while this read was out: read again
        this.readsIncremental++;
        for (const op of rest as string[]) this.#apply(asset, m, op);
      }
      const mirror = this.#mirrors.get(asset)!;
      return { asset, version: `${mirror.id}:${mirror.v}`, usage: (windowMs, at) => windowUsage(mirror.ledger, asset, windowMs, at), entry: (action) => mirror.ledger.entry(action) };
    }
  }

  /** A mirror of the whole window: ZRANGE ... WITHSCORES items and HGETALL amounts. */
  #whole(asset: string, id: string, v: number, items: string[], amounts: string[]): Mirror {
    const amountOf = new Map<string, string>();
    for (let i = 0; i + 1 < amounts.length; i += 2) amountOf.set(amounts[i], amounts[i + 1]);
    const entries: VelocityEntry[] = [];
    for (let i = 0; i + 1 < items.length; i += 2) entries.push({ action: items[i], at: Number(items[i + 1]), amount: BigInt(amountOf.get(items[i]) ?? '0') });
    const ledger = new VelocityLedger();
    ledger.reset(asset, entries);
    return { id, v, ledger };
  }

  /** Apply one logged change to `m` (skipped when the mirror has it already). */
  #apply(asset: string, m: Mirror, op: string): void {
    const bar = op.indexOf('|');
    const v = Number(op.slice(0, bar));
    if (v <= m.v) return;
    if (op[bar + 1] === 'r') {
      m.ledger.remove(op.slice(bar + 3));
    } else {
      // v|a|at|cutoff|amount|action (the action last: it may hold a bar)
      const parts = op.slice(bar + 3).split('|');
      const [at, cutoff, amount] = parts;
      const action = parts.slice(3).join('|');
      if (cutoff !== '') m.ledger.pruneAsset(asset, Number(cutoff));
      m.ledger.add(asset, BigInt(amount), Number(at), action);
    }
    m.v = v;
  }

  /**
   * Count `entries` (one, or a batch: all or none) if the window is still at `view.version`
   * (atomically, one Lua call), dropping the approvals before the oldest entry's time - keepMs.
   * @returns false when another decision changed the window since the read: read again.
   * @throws {CoordinationUnavailableError} (rejects): the entries may or may not be counted (a
   *   lost answer); a release or the next read tells.
   */
  async reserve(view: WindowView, entries: VelocityEntry | readonly VelocityEntry[]): Promise<boolean> {
    const list = Array.isArray(entries) ? (entries as readonly VelocityEntry[]) : [entries as VelocityEntry];
    if (list.length === 0) return true;
    const [id, v] = parseVersion(view.version);
    const cutoff = Math.min(...list.map((e) => e.at)) - this.#keepMs;
    const triples: Array<string | number> = [];
    for (const e of list) triples.push(e.at, e.action, e.amount.toString());
    const out = await this.#coord.run((r) => scripts(r).cfVwCommit(...this.#keys(view.asset), id, v, crypto.randomBytes(9).toString('base64url'), cutoff, this.#ttl, ...triples));
    if (out[0] !== 1) return false;
    const m = this.#mirrors.get(view.asset);
    if (m && m.id === id && m.v === v) {
      m.id = out[1]!;
      // The versions the script gave, in order: v + 1 ... v + n (the first carries the cutoff).
      list.forEach((e, i) => this.#apply(view.asset, m, `${v + i + 1}|a|${e.at}|${i === 0 ? cutoff : ''}|${e.amount}|${e.action}`));
    }
    return true;
  }

  /**
   * Stop counting `action` in `asset`'s window; with `at`, only its approval of that time (epoch
   * ms): another decision's reservation of the same action stays. @throws {CoordinationUnavailableError} (rejects).
   */
  async release(asset: string, action: string, at?: number): Promise<void> {
    const out = await this.#coord.run((r) => scripts(r).cfVwRelease(...this.#keys(asset), action, this.#ttl, at ?? ''));
    const m = this.#mirrors.get(asset);
    if (out[0] === 1 && m && m.id === out[1] && m.v === Number(out[2]) - 1) this.#apply(asset, m, `${out[2]}|r|${action}`);
  }

  /**
   * Count each of `entries` whose action is not counted yet (in batches of 2,000, each atomic).
   * A mirror of an older window of `asset` (from before a data loss) is dropped: after a data
   * loss, pass {@link entries} (what this instance knows) among `entries`.
   * @throws {CoordinationUnavailableError} (rejects).
   */
  async restore(asset: string, entries: VelocityEntry[]): Promise<void> {
    // At least one call, to learn the window's id even with nothing to write.
    for (let i = 0; i === 0 || i < entries.length; i += RESTORE_BATCH) {
      const args: Array<string | number> = [];
      for (const e of entries.slice(i, i + RESTORE_BATCH)) args.push(e.at, e.action, e.amount.toString());
      const [id] = await this.#coord.run((r) => scripts(r).cfVwRestore(...this.#keys(asset), crypto.randomBytes(9).toString('base64url'), this.#ttl, ...args));
      const m = this.#mirrors.get(asset);
      // A mirror of an older window (before a data loss) goes; one of this window catches up at its next read.
      if (m && m.id !== id) this.#mirrors.delete(asset);
    }
  }

  /** Every approval of the windows this instance mirrors, at or after `now - keepMs`. */
  async entries(now: number): Promise<Array<VelocityEntry & { asset: string }>> {
    const out: Array<VelocityEntry & { asset: string }> = [];
    for (const [asset, m] of this.#mirrors) for (const e of m.ledger.entriesOf(asset)) if (e.at >= now - this.#keepMs) out.push({ asset, ...e });
    return out;
  }
}
