/**
 * A real Redis Cluster of three masters (Debian's `redis-server`, as test/helpers/redis-server.ts
 * starts it: loopback, no persistence) for the Cluster tests of the coordination: each node on a
 * free port with its cluster bus on another free port (`cluster-port`), its cluster config file in
 * one temporary folder; the nodes meet (`CLUSTER MEET`), the 16,384 hash slots are split in three
 * (`CLUSTER ADDSLOTSRANGE`), and `start()` returns once every node reports `cluster_state:ok`
 * and knows the three masters. `stop()` stops each node by its pid and removes the folder.
 * Redis Cluster specification: https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { RedisServer } from './redis-server';
import { freePort, sleep } from './red-process';

/** The number of hash slots of a Redis Cluster. */
const SLOTS = 16384;

/** Three (or `masters`) redis-server processes in cluster mode, one slot range each. */
export class RedisCluster {
  /** The nodes, in the order of their slot ranges (0 holds slots 0 to about 5460). */
  readonly nodes: RedisServer[] = [];
  readonly #masters: number;
  /** The slot range `[from, to]` of each node. */
  readonly #ranges: Array<[number, number]> = [];
  /** The cluster bus port of each node. */
  readonly #buses: number[] = [];
  #dir = '';

  /** @param masters how many masters share the slots (default 3, the fewest Redis recommends). */
  constructor(masters = 3) {
    this.#masters = masters;
  }

  /** Every node as `{host, port}` (the seed nodes a cluster client starts from). */
  get seeds(): Array<{ host: string; port: number }> {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  /**
   * Start the nodes, join them and assign the slots; resolves when the cluster is up on every node.
   * @throws {Error} when redis-server cannot be started, or the cluster is not `ok` within 20 s
   *   (the nodes started are stopped and the folder removed first).
   */
  async start(): Promise<void> {
    try {
      await this.#start();
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  async #start(): Promise<void> {
    this.nodes.length = this.#ranges.length = this.#buses.length = 0;
    this.#dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redis-cluster-'));
    for (let i = 0; i < this.#masters; i++) {
      const node = new RedisServer();
      node.port = await freePort();
      this.nodes.push(node);
      let bus = await freePort();
      while (bus === node.port || this.#buses.includes(bus) || this.nodes.some((n) => n.port === bus)) bus = await freePort();
      this.#buses.push(bus);
      await node.start(['--cluster-enabled', 'yes', '--cluster-config-file', path.join(this.#dir, `nodes-${node.port}.conf`), '--cluster-port', String(bus), '--cluster-node-timeout', '2000', '--dir', this.#dir]);
    }
    await this.#each(async (r, i) => {
      const from = Math.floor((SLOTS * i) / this.#masters);
      const to = Math.floor((SLOTS * (i + 1)) / this.#masters) - 1;
      this.#ranges[i] = [from, to];
      await r.call('CLUSTER', 'ADDSLOTSRANGE', String(from), String(to));
    });
    await this.#each(async (r, i) => {
      if (i > 0) await r.call('CLUSTER', 'MEET', '127.0.0.1', String(this.nodes[0].port), String(this.#buses[0]));
    });
    const deadline = Date.now() + 20000;
    for (;;) {
      const infos = await this.#each(async (r) => String(await r.call('CLUSTER', 'INFO')));
      const ok = infos.every((t) => /cluster_state:ok/.test(t) && new RegExp(`cluster_known_nodes:${this.#masters}\\b`).test(t) && /cluster_slots_ok:16384\b/.test(t));
      if (ok) {
        const views = await this.#each(async (r) => ((await r.call('CLUSTER', 'SLOTS')) as unknown[]).length);
        if (views.every((n) => n === this.#masters)) return;
      }
      if (Date.now() > deadline) throw new Error(`the Redis Cluster did not come up:\n${infos.join('\n---\n')}`);
      await sleep(100);
    }
  }

  /** Run `fn` with a plain connection to each node (closed after), in node order; @returns its results. */
  async #each<T>(fn: (r: Redis, i: number) => Promise<T>): Promise<T[]> {
    const out: T[] = [];
    for (const [i, node] of this.nodes.entries()) {
      const r = new Redis({ host: '127.0.0.1', port: node.port, lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await r.connect();
        out.push(await fn(r, i));
      } finally {
        r.disconnect();
      }
    }
    return out;
  }

  /** The node that serves `slot` (0 to 16,383), by the slot ranges assigned at start. */
  nodeOf(slot: number): RedisServer {
    return this.nodes[this.#ranges.findIndex(([from, to]) => slot >= from && slot <= to)];
  }

  /** Stop every node (by its pid) and remove the cluster config files. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
    if (this.#dir) fs.rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = '';
  }
}
