/**
 * The `x-nonce` counter (spec section 5.2: "integer that increases with every request").
 *
 * One counter per API key per process, shared by every client built with that key, so two
 * config nodes with the same key never interleave nonces. Values are microseconds since the
 * Unix epoch, bumped by one when two requests fall in the same microsecond:
 * `nonce = max(last + 1, Date.now() * 1000)`. Nonces are taken when a request is signed (see
 * {@link NonceLane}), and an RSA signature takes hundreds of microseconds, so the counter runs
 * ahead of the clock by at most a few microseconds (a burst of requests signed back to back),
 * and a restarted process starts above every nonce it used before. (It relies on the wall clock not stepping back across a restart.) Values stay below
 * 2^53 until the year 2255.
 */
import { createHash } from 'node:crypto';

const lanes = new Map<string, NonceLane>();

/** Stable, non-reversible map key for an API key (the key itself is never kept as a map key). */
function keyId(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('base64url');
}

/**
 * A per-API-key lane: hands out increasing nonces and sends nonce-signed requests in nonce
 * order, one on the wire at a time, so the server sees them in nonce order even when many are
 * issued concurrently (spec section 5.2; simulator/auth.ts refuses a nonce not greater than the
 * key's high-water mark with 401 reason `nonce`).
 *
 * What is serialised is only the exchange: {@link run} takes the nonce and signs at once, in
 * call order, while earlier requests are still on the wire; the signed request then waits for
 * the one before it to settle and is sent at once. So signing (the costly part, RSA) overlaps
 * the previous round trip instead of adding to it. The next request is not sent before the
 * previous one's answer: the server checks a nonce after reading the whole request and HTTP/1.1
 * clients (Node's agent, axios) never pipeline, so two requests on the wire at once could be
 * checked in either order. A retried attempt calls {@link run} again: a new, greater
 * nonce, behind every request already signed.
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
   * Take the next nonce and call `prepare(nonce)` now (synchronously: sign here), then run
   * `send(prepared)` once every earlier request of this lane has settled.
   * @returns `send`'s result; a rejected send does not block later ones.
   * @throws what `prepare` throws (rejects; nothing is queued).
   */
  run<P, T>(prepare: (nonce: string) => P, send: (prepared: P) => Promise<T>): Promise<T> {
    let prepared: P;
    try {
      prepared = prepare(this.next());
    } catch (err) {
      return Promise.reject(err);
    }
    const result = this.tail.then(() => send(prepared));
    this.tail = result.then(noop, noop);
    return result;
  }
}

/** Does nothing (the lane's tail ignores results and errors). */
function noop(): void {}

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
