/**
 * The one way the pack runs Lua on Redis (docs/scale-out.md "What is shared"): every script is
 * declared once, beside the code that uses it, as a {@link LuaScript}, and called by name as an
 * ioredis custom command (`defineCommand`: EVALSHA, the script's text sent only when the server
 * does not know it yet, as after a restart). Every key a script touches is passed in KEYS, so in
 * a Cluster (the key prefix a hash tag, redis-connection.ts `clusterKeyPrefix`) each runs on one shard.
 */

/** A Lua script and how many of its arguments are keys. */
export interface LuaScript {
  lua: string;
  keys: number;
}

/** A connection that takes custom commands: an ioredis `Redis`, `Cluster` or pipeline's owner. */
interface Definable {
  defineCommand(name: string, definition: { lua: string; numberOfKeys: number }): void;
}

/** The command names already defined on each connection. */
const defined = new WeakMap<object, Set<string>>();

/**
 * `redis` with `scripts` callable by name (each defined once per connection).
 * @param scripts by command name (a prefix of the service's own, e.g. `cfTrack...`, keeps them apart).
 * @returns the same connection, typed with the commands `T`.
 */
export function withScripts<T, R extends Definable = Definable>(redis: R, scripts: Record<string, LuaScript>): R & T {
  let names = defined.get(redis);
  if (!names) defined.set(redis, (names = new Set()));
  for (const [name, s] of Object.entries(scripts)) {
    if (names.has(name)) continue;
    redis.defineCommand(name, { lua: s.lua, numberOfKeys: s.keys });
    names.add(name);
  }
  return redis as R & T;
}
