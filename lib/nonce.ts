/**
 * The `x-nonce` counter (spec section 5.2: "integer that increases with every request").
 *
 * One counter per API key per process, shared by every client built with that key, so two
 * config nodes with the same key never interleave nonces. Values are microseconds since the
 * Unix epoch, bumped by one when two requests fall in the same microsecond:
 * `nonce = max(last + 1, Date.now() * 1000)`. Because requests of a key in nonce mode are sent
 * one at a time (see {@link NonceLane}) and each takes far more than a microsecond, the counter
 * never runs ahead of the clock, so a restarted process starts above every nonce it used
 * before. (It relies on the wall clock not stepping back across a restart.) Values stay below
 * 2^53 until the year 2255.
 */
import { createHash } from 'node:crypto';

const lanes = new Map<string, NonceLane>();

/** Stable, non-reversible map key for an API key (the key itself is never kept as a map key). */
function keyId(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('base64url');
}

/**
 * A per-API-key lane: hands out increasing nonces and runs nonce-signed requests one at a
 * time, so the server sees them in nonce order even when many are issued concurrently (a
 * request with a lower nonce arriving after a higher one would be refused as non-increasing).
 */
export class NonceLane {
  private last = 0;
  private tail: Promise<unknown> = Promise.resolve();

  /** Next nonce as a decimal string; strictly greater than every nonce this lane gave before. */
  next(): string {
    const candidate = Date.now() * 1000;
    this.last = Math.max(this.last + 1, candidate);
    return String(this.last);
  }

  /**
   * Run `task(nonce)` after every earlier task of this lane has settled; the nonce is taken
   * when the task starts, so nonces reach the server in increasing order.
   * @returns the task's result; a rejected task does not block later ones.
   */
  run<T>(task: (nonce: string) => Promise<T>): Promise<T> {
    const result = this.tail.then(() => task(this.next()));
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** The process-wide lane of an API key (created on first use). */
export function nonceLane(apiKey: string): NonceLane {
  const id = keyId(apiKey);
  let lane = lanes.get(id);
  if (!lane) {
    lane = new NonceLane();
    lanes.set(id, lane);
  }
  return lane;
}
