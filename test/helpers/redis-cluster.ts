/**
 * A real Redis Cluster of three masters (Debian's `redis-server`, as test/helpers/redis-server.ts
 * starts it: loopback, no persistence) for the Cluster tests of the coordination: each node on a
 * free port with its cluster bus on another free port (`cluster-port`), its cluster config file in
 * one temporary folder; the nodes meet (`CLUSTER MEET`), the 16,384 hash slots are split in three
 * (`CLUSTER ADDSLOTSRANGE`), and `start()` returns once every node reports `cluster_state:ok`
 * and knows the three masters (with replicas: one per master, in sync). `stop()` stops each node by its pid and removes the folder.
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

/** Three (or `masters`) redis-server processes in cluster mode, one slot range each; optionally a replica of each. */
export class RedisCluster {
  /** The nodes: the masters first, in the order of their slot ranges (0 holds slots 0 to 5460), then their replicas in the same order. */
  readonly nodes: RedisServer[] = [];
  readonly #masters: number;
  readonly #replicas: number;
  /** The slot range `[from, to]` of each master. */
  readonly #ranges: Array<[number, number]> = [];
  /** The cluster bus port of each node. */
  readonly #buses: number[] = [];
  #dir = '';

  /**
   * @param masters how many masters share the slots (default 3, the fewest Redis recommends).
   * @param replicas replicas per master (0 or 1; default 0): with one, a master that dies is
   *   replaced by its replica (the cluster's own failover, after `cluster-node-timeout` 2 s).
   */
  constructor(masters = 3, replicas = 0) {
    this.#masters = masters;
    this.#replicas = replicas;
  }

  /** Every node as `{host, port}` (the seed nodes a cluster client starts from). */
  get seeds(): Array<{ host: string; port: number }> {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  /**
   * Start the nodes, join them, assign the slots (and make the replicas); resolves when the
   * cluster is up on every node (and every replica is in sync with its master).
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

  /** Start one more node in cluster mode (its bus on another free port) and meet it with the first. */
  async #node(): Promise<void> {
    const node = new RedisServer();
    node.port = await freePort();
    let bus = await freePort();
    while (bus === node.port || this.#buses.includes(bus) || this.nodes.some((n) => n.port === bus)) bus = await freePort();
    this.nodes.push(node);
    this.#buses.push(bus);
    await node.start(['--cluster-enabled', 'yes', '--cluster-config-file', path.join(this.#dir, `nodes-${node.port}.conf`), '--cluster-port', String(bus), '--cluster-node-timeout', '2000', '--dir', this.#dir]);
    if (this.nodes.length > 1) await this.#on(node, (r) => r.call('CLUSTER', 'MEET', '127.0.0.1', String(this.nodes[0].port), String(this.#buses[0])));
  }

  async #start(): Promise<void> {
    this.nodes.length = this.#ranges.length = this.#buses.length = 0;
    this.#dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-redis-cluster-'));
    for (let i = 0; i < this.#masters; i++) {
      await this.#node();
      const from = Math.floor((SLOTS * i) / this.#masters);
      const to = Math.floor((SLOTS * (i + 1)) / this.#masters) - 1;
      this.#ranges[i] = [from, to];
      await this.#on(this.nodes[i], (r) => r.call('CLUSTER', 'ADDSLOTSRANGE', String(from), String(to)));
    }
    const masterIds = await Promise.all(this.nodes.map((n) => this.#on(n, async (r) => String(await r.call('CLUSTER', 'MYID')))));
    for (let i = 0; i < this.#masters * this.#replicas; i++) await this.#node();
    const total = this.nodes.length;
    const deadline = Date.now() + 20000;
    let replicated = false;
    for (;;) {
      const infos = await Promise.all(this.nodes.map((n) => this.#on(n, async (r) => String(await r.call('CLUSTER', 'INFO')))));
      const known = infos.every((t) => new RegExp(`cluster_known_nodes:${total}\\b`).test(t));
      if (known && !replicated) {
        // A replica is made once it knows its master.
        for (let i = this.#masters; i < total; i++) await this.#on(this.nodes[i], (r) => r.call('CLUSTER', 'REPLICATE', masterIds[(i - this.#masters) % this.#masters]));
        replicated = true;
      }
      if (replicated && infos.every((t) => /cluster_state:ok/.test(t) && /cluster_slots_ok:16384\b/.test(t))) {
        const views = await Promise.all(this.nodes.map((n) => this.#on(n, async (r) => ((await r.call('CLUSTER', 'SLOTS')) as unknown[][]).filter((e) => e.length === 3 + this.#replicas).length)));
        const synced = await Promise.all(this.nodes.slice(this.#masters).map((n) => this.#on(n, async (r) => /master_link_status:up/.test(await r.info('replication')))));
        if (views.every((n) => n === this.#masters) && synced.every(Boolean)) return;
      }
      if (Date.now() > deadline) throw new Error(`the Redis Cluster did not come up:\n${infos.join('\n---\n')}`);
      await sleep(100);
    }
  }

  /** Run `fn` with a plain connection to `node` (closed after). @returns its result. */
  async #on<T>(node: RedisServer, fn: (r: Redis) => Promise<T>): Promise<T> {
    const r = new Redis({ host: '127.0.0.1', port: node.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined); // a node that is down: connect() rejects with it
    try {
      await r.connect();
      return await fn(r);
    } finally {
      r.disconnect();
    }
  }

  /**
   * The node that serves `slot` (0 to 16,383) now, as a live node's `CLUSTER SLOTS` says (after a
   * failover: the promoted replica).
   * @throws {Error} when no node answers.
   */
  async ownerOf(slot: number): Promise<RedisServer> {
    for (const node of this.nodes.filter((n) => n.pid !== undefined)) {
      try {
        const ranges = await this.#on(node, async (r) => (await r.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, ...unknown[]]]>);
        const port = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
        const owner = this.nodes.find((n) => n.port === port);
        if (owner) return owner;
      } catch {
        // that node does not answer: ask the next
      }
    }
    throw new Error(`no live node says which node serves slot ${slot}`);
  }

  /** The replica of `master` (with one replica per master). @throws {Error} when it has none. */
  replicaOf(master: RedisServer): RedisServer {
    const i = this.nodes.indexOf(master);
    const replica = i >= 0 && i < this.#masters ? this.nodes[this.#masters + i] : undefined;
    if (!replica) throw new Error(`no replica of the node on port ${master.port}`);
    return replica;
  }

  /**
   * Run `fn` with a read-only connection to `node` (a replica answers reads of its own data:
   * `READONLY`); closed after. @returns its result.
   */
  read<T>(node: RedisServer, fn: (r: Redis) => Promise<T>): Promise<T> {
    return this.#on(node, async (r) => {
      await r.call('READONLY');
      return fn(r);
    });
  }

  /**
   * Cut `master`'s replica off, so that the writes from now on reach the master only (what
   * asynchronous replication loses when the master dies then): the replica is stopped (SIGSTOP)
   * and the master drops its link (`CLIENT KILL TYPE replica`).
   * @returns the function that lets the replica run again (SIGCONT); it reconnects, or, with the
   *   master dead, is promoted by the cluster without those writes.
   */
  async cutReplica(master: RedisServer): Promise<() => void> {
    const replica = this.replicaOf(master);
    process.kill(replica.pid!, 'SIGSTOP');
    await this.#on(master, (r) => r.call('CLIENT', 'KILL', 'TYPE', 'replica'));
    return () => process.kill(replica.pid!, 'SIGCONT');
  }

  /** Stop every node (by its pid) and remove the cluster config files. */
  async stop(): Promise<void> {
    for (const n of this.nodes) if (n.pid !== undefined) process.kill(n.pid, 'SIGCONT'); // a replica left cut off
    await Promise.all(this.nodes.map((n) => n.stop()));
    if (this.#dir) fs.rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = '';
  }
}
