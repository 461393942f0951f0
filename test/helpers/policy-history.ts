/**
 * A history made by a live custody-approver for the policy tests (docs/policies.md): transfers
 * created through the simulator's API, each a pending action the deployed feed hands to the
 * approver, and the approver's decision lines read back from its audit file.
 */
import fs from 'node:fs';
import { createTransfer } from '../../lib';
import { sleep } from './red-process';
import { demoTransfer } from './support';
import type { SimulatedAccount } from './simulated';

/** The `decision` lines of the audit file `file` (parsed), in order; none while it does not exist. */
export function decisionLines(file: string): any[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => l.kind === 'decision');
}

/**
 * Create `count` BTC-TESTNET transfers (base units `amountOf(i)`, reference `${label} ${i}`), then
 * wait (at most 2 minutes) until the approver writing `auditFile` has decided them all.
 * @param log what to show when it has not (the Node-RED log's tail).
 * @throws {Error} naming how many were decided when the wait runs out.
 */
export async function decidedTransfers(s: Pick<SimulatedAccount, 'client' | 'sim'>, auditFile: string, count: number, amountOf: (i: number) => number, label: string, log: () => string): Promise<void> {
  for (let i = 0; i < count; i++) {
    await createTransfer(s.client, demoTransfer(s.sim, { send: { symbol: 'BTC-TESTNET', amount: amountOf(i) }, reference: `${label} ${i}` }));
  }
  const deadline = Date.now() + 120000;
  while (decisionLines(auditFile).length < count) {
    if (Date.now() > deadline) throw new Error(`the approver decided ${decisionLines(auditFile).length} of ${count}\n${log().slice(-3000)}`);
    await sleep(100);
  }
}
