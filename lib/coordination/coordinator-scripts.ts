/**
 * The Lua scripts of the coordinator (coordinator.ts): claims with a lease, fenced by an
 * increasing number; renew; "decided" records published to the waiters; release; the epoch that
 * tells a data loss (docs/scale-out.md "What is shared", "Redis down, Redis lost"). Every key a
 * script touches is passed in KEYS, so in a Cluster (the prefix a hash tag) each runs on one shard.
 */
// ARGV[4]: in Cluster mode, the run_id of the master this coordinator checked ('' elsewhere): on
// another server (the cluster promoted a replica, which may lack the last writes) nothing is claimed.
import type { LuaScript } from './lua';

const CLAIM = `
if ARGV[4] ~= '' and string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') ~= ARGV[4] then return {'moved', '', 0} end
local d = redis.call('GET', KEYS[2])
if d then return {'decided', d, 0} end
local c = redis.call('GET', KEYS[1])
if c then
  local h = cjson.decode(c)
  if h.claimId == ARGV[2] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return {'claimed', c, 0}
  end
  return {'held', c, redis.call('PTTL', KEYS[1])}
end
local fence = redis.call('INCR', KEYS[3])
local v = cjson.encode({fence = fence, instance = ARGV[1], claimId = ARGV[2]})
redis.call('SET', KEYS[1], v, 'PX', ARGV[3])
return {'claimed', v, 1}`;

// Keep (or re-establish, after a data loss) a claim by its claim id; -1 when another holds it, -2 when decided.
const RENEW = `
if redis.call('EXISTS', KEYS[2]) == 1 then return -2 end
local c = redis.call('GET', KEYS[1])
if not c then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
if cjson.decode(c).claimId ~= ARGV[1] then return -1 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// Write "decided" (the first record stays), drop our claim, tell the waiters (the message: the
// decided key, a line break, the record that stays: a waiter needs no claim to learn it). 1: written, 0: was decided already.
const COMPLETE = `
local set = redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3], 'NX')
local c = redis.call('GET', KEYS[1])
if c and cjson.decode(c).claimId == ARGV[1] then redis.call('DEL', KEYS[1]) end
local record = ARGV[2]
if not set then record = redis.call('GET', KEYS[2]) or '' end
redis.call('PUBLISH', ARGV[4], ARGV[5] .. '\\n' .. record)
if set then return 1 end
return 0`;

const RELEASE = `
local c = redis.call('GET', KEYS[1])
if c and cjson.decode(c).claimId == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0`;

// ARGV[2]: the epoch this instance knew, when the server changed under it: renewed (once: another
// instance may have renewed it already) so that every instance takes the failover as a data loss.
const EPOCH = `
local e = redis.call('GET', KEYS[1])
if e and (ARGV[2] == '' or e ~= ARGV[2]) then return {e, 0} end
redis.call('SET', KEYS[1], ARGV[1])
return {ARGV[1], 1}`;

/** The scripts as ioredis custom commands (run by EVALSHA, loaded on first use). */
export interface Scripts {
  cfClaim(claim: string, decided: string, fence: string, instance: string, claimId: string, leaseMs: number, runId: string): Promise<[string, string, number]>;
  cfRenew(claim: string, decided: string, claimId: string, value: string, leaseMs: number): Promise<number>;
  cfComplete(claim: string, decided: string, claimId: string, record: string, ttlMs: number, channel: string, message: string): Promise<number>;
  cfRelease(claim: string, claimId: string, channel: string, message: string): Promise<number>;
  cfEpoch(key: string, fresh: string, renew: string): Promise<[string, number]>;
}

/** The scripts and their key counts (lua.ts). */
export const SCRIPTS: Record<keyof Scripts, LuaScript> = {
  cfClaim: { lua: CLAIM, keys: 3 },
  cfRenew: { lua: RENEW, keys: 2 },
  cfComplete: { lua: COMPLETE, keys: 2 },
  cfRelease: { lua: RELEASE, keys: 1 },
  cfEpoch: { lua: EPOCH, keys: 1 },
};
