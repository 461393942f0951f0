/**
 * The `x-nonce` counter (spec section 5.2: "integer that increases with every request").
 *
 * One counter per API key per process, shared by every client built with that key, so two
 * config nodes with the same key never interleave nonces. Values are microseconds since the
 * Unix epoch, bumped by one when two requests fall in the same microsecond:
 * `nonce = max(last + 1, Date.now() * 1000)`. Nonces are taken when a request is made (see
 * {@link NonceLane}; its signature is made afterwards, off the main thread), so the counter runs
 * ahead of the clock by at most one microsecond per request of a burst made in the same
 * microsecond (200 requests made at once: 200 µs), and a restarted process starts above every nonce it used before. (It relies on the wall clock not stepping back across a restart.) Values stay below
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
 * What is serialised is only the exchange: {@link run} takes the nonce at once, in call order,
 * and starts signing at once (asynchronously: on the thread pool or a token, several signatures
 * at a time) while earlier requests are still on the wire; the signed request is sent once the
 * request before it has settled AND its own signature is ready. So nonce order = send order, and
 * signing (the costly part, RSA) overlaps the previous round trip instead of adding to it. The
 * next request is not sent before the
 * previous one's answer: the server checks a nonce after reading the whole request and HTTP/1.1
 * clients (Node's agent, axios) never pipeline, so two requests on the wire at once could be
 * checked in either order. A retried attempt calls {@link run} again: a new, greater
 * nonce, behind every request already signed. A request whose signing fails is not sent; the
 * ones after it wait for its turn all the same (its nonce is skipped: nonces only need to grow).
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
   * Take the next nonce and call `prepare(nonce)` now (it starts signing), then run
   * `send(prepared)` once every earlier request of this lane has settled and `prepare`'s
   * promise has resolved.
   * @returns `send`'s result; a rejected send does not block later ones.
   * @throws what `prepare` throws or rejects with (nothing is sent), after the earlier requests
   *   of the lane settled when it rejects; a synchronous throw rejects at once, nothing queued.
   */
  run<P, T>(prepare: (nonce: string) => P | Promise<P>, send: (prepared: P) => Promise<T>): Promise<T> {
    let prepared: Promise<P>;
    try {
      prepared = Promise.resolve(prepare(this.next()));
    } catch (err) {
      return Promise.reject(err);
    }
    // Handled here too: a signature refused while the lane is busy must not be an unhandled rejection.
    prepared.catch(noop);
    const result = this.tail.then(() => prepared).then(send);
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
