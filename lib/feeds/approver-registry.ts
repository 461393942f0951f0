/**
 * The approvers of one connection and the core client feeds' routes to them: which approver
 * watches which core client (its own core client id, else the core client of a feed wired to
 * it). Several approvers on one core client decide each action more than once: each is told of
 * the others (docs/nodes.md "custody-approver": one approver per core client). Plain callbacks, no Node-RED (docs/architecture.md, "The
 * layers"); the config node `custody-config` is the glue.
 */
import type { FeedMembership } from './feed-pool';

/** An approver, as the {@link ApproverRegistry} knows it. */
export interface ApproverEntry {
  /** Its id (the node id), unique on the connection. */
  id: string;
  /** Its name ('' when none). */
  name: string;
  /** Its configured core client id; '' when it takes the core client of the msgs (then that of the feeds routed to it). */
  clientId: string;
  /**
   * Called when the core client it watches or the other approvers of it on this connection
   * change: `clientId` ('' while unknown) and the others (an empty list: none).
   */
  onOthers(clientId: string, others: Array<{ id: string; name: string }>): void;
}

/** The approvers of one connection and the routes of its core client feeds to them (see the file comment). */
export class ApproverRegistry {
  readonly #approvers = new Set<ApproverEntry>();
  /** The core client ids of the feeds routed to an id, by that id, each with its count of feeds. */
  readonly #routes = new Map<string, Map<string, number>>();
  /** What each approver was last told (`<clientId>|<other ids>`), so it is told only of changes. */
  readonly #told = new Map<ApproverEntry, string>();
  #closed = false;

  /** Register `approver` until `leave`; it and the others of its core client are told where that changed. */
  register(approver: ApproverEntry): FeedMembership {
    this.#approvers.add(approver);
    this.#tell();
    return {
      leave: async () => {
        if (!this.#approvers.delete(approver)) return;
        this.#told.delete(approver);
        this.#tell();
      },
    };
  }

  /** A feed of core client `clientId` sends to the ids `targets` (a feed node's wires) until `leave`. */
  route(clientId: string, targets: string[]): FeedMembership {
    for (const t of targets) {
      const m = this.#routes.get(t) ?? new Map<string, number>();
      m.set(clientId, (m.get(clientId) ?? 0) + 1);
      this.#routes.set(t, m);
    }
    this.#tell();
    return {
      leave: async () => {
        for (const t of targets) {
          const m = this.#routes.get(t);
          if (!m) continue;
          const n = (m.get(clientId) ?? 1) - 1;
          if (n > 0) m.set(clientId, n);
          else m.delete(clientId);
          if (m.size === 0) this.#routes.delete(t);
        }
        this.#tell();
      },
    };
  }

  /** Forget every approver and route; nobody is told anything after. */
  close(): void {
    this.#closed = true;
    this.#approvers.clear();
    this.#routes.clear();
    this.#told.clear();
  }

  /** The core clients `a` watches. */
  #clientsOf(a: ApproverEntry): string[] {
    return a.clientId ? [a.clientId] : [...(this.#routes.get(a.id)?.keys() ?? [])];
  }

  /** Tell each approver its core client and the other approvers of it, where that changed. */
  #tell(): void {
    if (this.#closed) return;
    const byClient = new Map<string, ApproverEntry[]>();
    for (const a of this.#approvers) for (const c of this.#clientsOf(a)) byClient.set(c, [...(byClient.get(c) ?? []), a]);
    for (const a of this.#approvers) {
      const clientId = this.#clientsOf(a)[0] ?? '';
      const others = this.#clientsOf(a)
        .flatMap((c) => byClient.get(c) ?? [])
        .filter((o, i, all) => o !== a && all.indexOf(o) === i);
      const text = `${clientId}|${others.map((o) => o.id).join(',')}`;
      if (this.#told.get(a) === text) continue;
      this.#told.set(a, text);
      a.onOthers(clientId, others.map((o) => ({ id: o.id, name: o.name })));
    }
  }
}
