/**
 * Steps shared by the scale-out runs of three Node-RED instances deciding one core client's
 * actions (test/e2e/scale-out.test.ts, test/e2e/scale-out-failover.test.ts): transfers created in
 * batches while the instances decide, the wait until every action is decided, and the transfers'
 * statuses at the end.
 */
import { getTransfer, type CustodyClient } from '../../lib';
import type { SimInfo } from '../../bench/harness';
import { createPendingTransfers, FLOW_IDS, pendingCount, type DecisionCounter, type Instance } from '../../bench/scale-out';
import { sleep } from './red-process';

/**
 * Create `total` pending transfers (bench/scale-out.ts `createPendingTransfers`, 4 at a time) in
 * batches of `batch`, `pauseMs` between batches, partner_txIDs starting with `prefix`.
 * @returns the tx_ids.
 * @throws the first refusal.
 */
export async function createInBatches(client: CustodyClient, sim: SimInfo, total: number, batch: number, pauseMs: number, prefix: string): Promise<string[]> {
  const txIds: string[] = [];
  for (let b = 0; b < total / batch; b++) {
    txIds.push(...(await createPendingTransfers(client, sim.demo, batch, `${prefix}${b}-`, 4)));
    await sleep(pauseMs);
  }
  return txIds;
}

/**
 * Poll every 500 ms until `counter` has seen a decision call for `actions` actions and none of
 * the core client's actions is pending, or `deadlineMs` passed; every 10 s, say on stderr how far
 * it is (calls, actions, each instance's approver status).
 * @returns the actions pending at the end (0: all decided).
 */
export async function untilAllDecided(counter: DecisionCounter, client: CustodyClient, sim: SimInfo, instances: Instance[], actions: number, deadlineMs: number): Promise<number> {
  const started = Date.now();
  const deadline = started + deadlineMs;
  let shown = started;
  for (;;) {
    await sleep(500);
    if (counter.byAction().size >= actions) {
      const pending = await pendingCount(client, sim.demo.core_client_id);
      if (pending === 0) return 0;
    }
    if (Date.now() > deadline) return pendingCount(client, sim.demo.core_client_id);
    if (Date.now() - shown > 10000) {
      shown = Date.now();
      const approvers = instances.map((i) => `${i.name} ${JSON.stringify(i.status.get(FLOW_IDS.approver)?.text ?? '')}`).join(', ');
      console.error(`      ... ${((Date.now() - started) / 1000).toFixed(0)} s: ${counter.calls.length} calls on ${counter.byAction().size} actions; ${approvers}`);
    }
  }
}

/** How many of the transfers `txIds` are in each `txStatus` (read 20 at a time). */
export async function transferStatuses(client: CustodyClient, sim: SimInfo, txIds: string[]): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  for (let i = 0; i < txIds.length; i += 20) {
    const answers = await Promise.all(txIds.slice(i, i + 20).map((tx_id) => getTransfer(client, { company_id: sim.demo.company_id, tx_id })));
    for (const a of answers) {
      const s = String((a.data as { txStatus?: unknown }).txStatus);
      statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
  }
  return statuses;
}
