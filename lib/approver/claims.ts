/**
 * Who decides an action, once: the approver's claim step (spec section 6: the core client feed
 * re-sends every pending action after a reconnect, and several instances may get the same one).
 *
 * {@link DecisionClaims} has two implementations: {@link LocalClaims} (one Node-RED instance:
 * the approver's own book of decided action ids is enough, so every claim succeeds at once) and
 * {@link RedisClaims} (several instances on one API key, through lib/coordination's
 * {@link Coordinator}: a claim with a lease in Redis, fenced; the others wait, and take over when
 * its holder died). The approver (approver.ts) calls the interface only.
 */
import { abortableSleep } from '../support/backoff';
import { CoordinationUnavailableError, type Claim, type Coordinator } from '../coordination/coordinator';

/** After a data loss of the coordination Redis, every decision reads its action first for this long (ms): it may have been decided before the loss. */
export const READ_AFTER_DATA_LOSS_MS = 10 * 60_000;

/** How long a claim waits before trying Redis again after it was unavailable (ms). */
export const UNAVAILABLE_RETRY_MS = 200;

/**
 * Longest wait on another instance's claim before asking Redis again (ms): the wake-up is a
 * pub/sub message, and one published while the subscriber connection was (re)connecting is lost;
 * without this bound, the action would wait for the rest of the holder's lease.
 */
export const HELD_RECHECK_MS = 1000;

/** What {@link DecisionClaims.acquire} found. */
export type Acquired =
  /** This approver decides it. `claim` is absent without coordination; `mustRead`: read the action before deciding (it may have been decided before: a takeover, or a recent data loss). */
  | { kind: 'claimed'; claim?: Claim; mustRead: boolean }
  /** Another instance (or this one before a restart) decided it: its record (JSON of a `DecidedRecord`, approver.ts). */
  | { kind: 'decided'; record: string }
  /** The action's `expireTime` passed while it waited; `contested`: it waited for another instance's claim (else for Redis). */
  | { kind: 'expired'; contested: boolean };

/** The answer of {@link DecisionClaims.stillHeld}: the claim is ours, lost (or Redis is away), or the action was decided elsewhere. */
export type ClaimCheck = 'held' | 'lost' | 'decided';

/** The claim step of the approver's pipeline (read, decide, claim, reserve, audit, call, resolve). */
export interface DecisionClaims {
  /** True when the claims are shared with other instances (Redis). */
  readonly shared: boolean;
  /** The name of this instance in shared records (`<hostname>/<pid>` by default). */
  readonly instance: string;
  /**
   * Claim the action `id` (`<mode>:<client_id>:<action_id>`).
   * @param claimId this decision's claim id: the same id again keeps (or re-takes) its own claim.
   * @param expireTime the action's `expireTime`, epoch seconds (0: none): a wait ends when it passes.
   * @param signal ends a wait (the approver is closing): rejects with Error('approver: closed').
   * @param onWait called with why the claim waits for Redis, and with '' once it goes on.
   */
  acquire(id: string, claimId: string, expireTime: number, signal: AbortSignal, onWait: (reason: string) => void): Promise<Acquired>;
  /** Right before the call: is the claim still ours? Never throws (Redis away: `lost`). */
  stillHeld(claim: Claim | undefined): Promise<ClaimCheck>;
  /** Record the action as decided (`record`: JSON), in the background until Redis takes it. */
  complete(claim: Claim | undefined, record: string): void;
  /** Give the claim up: the action will be decided again (a definite "not applied"). Never throws. */
  release(claim: Claim | undefined): Promise<void>;
  /** Write back decided records after a data loss of Redis: `[id, record]` pairs. */
  restore(items: Array<[string, string]>): Promise<void>;
  /** Run `handler` when Redis came back without its data. @returns the unregister function. */
  onDataLoss(handler: () => Promise<void>): () => void;
  /** How long a decided record is kept (ms): older decisions need no write-back. */
  readonly decidedTtlMs: number;
  /** A claim's lease, ms (0: claims without a lease, one instance): a call leaves within half of it after the claim was renewed, or not at all. */
  readonly leaseMs: number;
  /** A warning for the coordination log (no secret in it). */
  warn(text: string): void;
  /** Wait for the background writes (at most until `signal` aborts them). */
  close(): Promise<void>;
}

/** One instance: the approver's book says what was decided; every claim is granted at once. */
export class LocalClaims implements DecisionClaims {
  readonly shared = false;
  readonly instance = 'local';
  readonly decidedTtlMs = 0;
  readonly leaseMs = 0;
  async acquire(): Promise<Acquired> {
    return { kind: 'claimed', mustRead: false };
  }
  async stillHeld(): Promise<ClaimCheck> {
    return 'held';
  }
  complete(): void {}
  async release(): Promise<void> {}
  async restore(): Promise<void> {}
  onDataLoss(): () => void {
    return () => undefined;
  }
  warn(): void {}
  async close(): Promise<void> {}
}

/**
 * Claims shared through Redis (lib/coordination/coordinator.ts): a claim with a lease; an action
 * claimed by another instance waits until it is decided or its lease ends (then it is taken
 * over, reading the action first); while Redis is unavailable the action waits in hand, nothing
 * is called, until Redis is back or the action expired.
 */
export class RedisClaims implements DecisionClaims {
  readonly shared = true;
  readonly #coord: Coordinator;
  readonly #now: () => number;
  readonly #signal: AbortSignal;
  readonly #finishing = new Set<Promise<unknown>>();

  /**
   * @param coord the config node's coordinator.
   * @param now the clock, epoch ms.
   * @param signal aborted when the approver closes: background writes stop.
   */
  constructor(coord: Coordinator, now: () => number, signal: AbortSignal) {
    this.#coord = coord;
    this.#now = now;
    this.#signal = signal;
  }

  get instance(): string {
    return this.#coord.instance;
  }

  get decidedTtlMs(): number {
    return this.#coord.decidedTtlMs;
  }

  get leaseMs(): number {
    return this.#coord.leaseMs;
  }

  async acquire(id: string, claimId: string, expireTime: number, signal: AbortSignal, onWait: (reason: string) => void): Promise<Acquired> {
    const coord = this.#coord;
    let contested = false;
    let waiting = false;
    const wait = (reason: string) => {
      waiting = true;
      onWait(reason);
    };
    try {
      for (;;) {
        if (signal.aborted) throw new Error('approver: closed');
        if (expireTime > 0 && expireTime <= this.#now() / 1000) return { kind: 'expired', contested };
        let claimed;
        try {
          // Known away already (not only when a command fails): say so while the action waits.
          if (coord.state !== 'ready') wait(`coordination: Redis is ${coord.state}${coord.reason ? ` (${coord.reason})` : ''}`);
          await coord.whenReady(signal);
          if (signal.aborted) continue;
          claimed = await coord.claim(id, claimId);
        } catch (e) {
          if (!(e instanceof CoordinationUnavailableError)) throw e;
          wait(e.message);
          // A timer, not only the state: the connection may fail before its 'close' event is
          // handled, and a loop of promises alone would never let that event in.
          await abortableSleep(UNAVAILABLE_RETRY_MS, signal);
          await coord.whenReady(signal);
          continue;
        }
        if (claimed.kind === 'decided') return { kind: 'decided', record: claimed.record };
        if (claimed.kind === 'held') {
          contested = true;
          // Decided meanwhile: the message carries the record (no second claim to learn it).
          const record = await coord.waitForClaim(id, Math.min(HELD_RECHECK_MS, Math.max(50, claimed.pttl + 25)), signal);
          if (record) return { kind: 'decided', record };
          continue;
        }
        const mustRead = contested || !claimed.fresh || (coord.lostAt > 0 && this.#now() - coord.lostAt < READ_AFTER_DATA_LOSS_MS);
        return { kind: 'claimed', claim: claimed.claim, mustRead };
      }
    } finally {
      if (waiting) onWait('');
    }
  }

  async stillHeld(claim: Claim | undefined): Promise<ClaimCheck> {
    if (!claim) return 'held';
    try {
      return await this.#coord.renew(claim);
    } catch (e) {
      if (!(e instanceof CoordinationUnavailableError)) throw e;
      return 'lost';
    }
  }

  /**
   * Write "decided" for a claim: at once, or (Redis away) in the background until it is back.
   * Safe either way: until it is written the claim stands, and whoever takes it over after its
   * lease reads the action first.
   */
  complete(claim: Claim | undefined, record: string): void {
    if (!claim) return;
    const coord = this.#coord;
    const job = (async () => {
      for (;;) {
        try {
          await coord.complete(claim, record);
          return;
        } catch (e) {
          if (!(e instanceof CoordinationUnavailableError)) {
            // Not a lost connection (a script refused): the claim stands until its lease ends, and its next holder reads the action first.
            coord.warn(`the decided record of ${claim.id} could not be written (${(e as Error).message}): the claim ends with its lease`);
            return;
          }
          if (this.#signal.aborted) return;
          await abortableSleep(UNAVAILABLE_RETRY_MS, this.#signal);
          await coord.whenReady(this.#signal, false);
          if (this.#signal.aborted) return;
        }
      }
    })();
    this.#finishing.add(job);
    void job.finally(() => this.#finishing.delete(job));
  }

  async release(claim: Claim | undefined): Promise<void> {
    if (claim) await this.#coord.release(claim).catch(() => undefined);
  }

  restore(items: Array<[string, string]>): Promise<void> {
    return this.#coord.restoreDecided(items);
  }

  onDataLoss(handler: () => Promise<void>): () => void {
    return this.#coord.onDataLoss(handler);
  }

  warn(text: string): void {
    this.#coord.warn(text);
  }

  async close(): Promise<void> {
    await Promise.allSettled(Array.from(this.#finishing));
  }
}
