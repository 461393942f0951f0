/**
 * Bringing a state document written by an older simulator up to date when the store loads it
 * (simulator/README.md "Data folder"). The
 * version stays 1.
 */
import type { CustodyKind, CustodyTxRecord, SimState } from './model';
import { readDataFolder, type DataFolderRead } from './journal';

/** Kinds of custody transaction as older simulators spelt them -> lib's name (model/custody.ts `CustodyKind`). */
const OLD_KINDS: Readonly<Record<string, CustodyKind>> = { swap: 'swapMake', take: 'swapTake' };

/** A partner_txID index key of today: `kind\n...` per kind of call, or a sweep's `coreclient:...`. */
const CURRENT_KEY = /^(?:transfer|withdrawal|swapMake|swapTake)\n|^coreclient:/;

/** A key in the older per-kind spelling (`swap\n...`, `take\n...`). */
const OLD_KIND_KEY = /^(swap|take)\n/;

/**
 * Bring a version 1 state document written by an older simulator up to date, before the journal
 * lines after its snapshot are replayed:
 * - collections added since (withdrawals, swaps, swap takes, whitelists, exchanges, connections,
 *   sweeps) default to empty;
 * - the partner_txID index, once keyed `company_id\npartner_txID` for every kind at once, is
 *   re-keyed per kind of call (model/state.ts `partnerKey`) from the transaction each entry
 *   names; sweeps' `coreclient:` keys stay as they are;
 * - the kinds spelt `swap` and `take` become `swapMake` and `swapTake` ({@link upgradeKinds}).
 * The ledger needs nothing: older files have no pending entries (a transaction then pending gets
 * its entry when it settles, as before; custody.ts `ledgerFor`), and the engine rebuilds its
 * indexes from the ledger on every start (indexes.ts).
 */
export function upgradeState(s: SimState): SimState {
  s.withdrawals ??= {};
  s.swaps ??= {};
  s.swapTakes ??= {};
  s.whitelists ??= {};
  s.exchanges ??= {};
  s.connections ??= {};
  s.sweeps ??= {};
  s.partnerTxIndex ??= {};
  upgradeKinds(s);
  // One pass over the keys decides: a file written since the re-keying is left as it is (a start
  // with 100,000 transactions would otherwise spend most of a second re-keying).
  let legacy = false;
  for (const k in s.partnerTxIndex) {
    if (!CURRENT_KEY.test(k)) {
      legacy = true;
      break;
    }
  }
  if (!legacy) return s;
  const index: Record<string, string> = {};
  for (const [key, txId] of Object.entries(s.partnerTxIndex)) {
    const tx: CustodyTxRecord | undefined = s.transfers?.[txId] ?? s.withdrawals[txId] ?? s.swaps[txId] ?? s.swapTakes[txId];
    index[tx?.partner_txID ? `${tx.kind ?? 'transfer'}\n${tx.company_id}\n${tx.partner_txID}` : key] = txId;
  }
  s.partnerTxIndex = index;
  return s;
}

/**
 * Rename the kinds spelt `swap` and `take` by older simulators to lib's `swapMake` and
 * `swapTake`: in the `kind` of swap quotes and takes, and in the keys of the partner_txID index.
 * Run on the snapshot ({@link upgradeState}) and again after the journal's replay, whose lines
 * an older simulator may have written. Walks the quotes and takes; the index is copied only
 * when a key needs renaming.
 */
export function upgradeKinds(s: SimState): void {
  for (const coll of [s.swaps, s.swapTakes] as Record<string, CustodyTxRecord>[]) {
    for (const tx of Object.values(coll ?? {})) {
      const renamed = tx.kind === undefined ? undefined : OLD_KINDS[tx.kind];
      if (renamed) tx.kind = renamed;
    }
  }
  const keys = Object.keys(s.partnerTxIndex ?? {});
  if (!keys.some((k) => OLD_KIND_KEY.test(k))) return;
  const index: Record<string, string> = {};
  for (const k of keys) index[k.replace(OLD_KIND_KEY, (_m, old: string) => `${OLD_KINDS[old]}\n`)] = s.partnerTxIndex[k];
  s.partnerTxIndex = index;
}

/**
 * Read a data folder (journal.ts `readDataFolder`: the snapshot, then the journal's lines after
 * it) and bring what it holds up to date: {@link upgradeState} on the snapshot, before the
 * replay; {@link upgradeKinds} again after it when lines were replayed.
 */
export async function readUpgraded(dataDir: string): Promise<DataFolderRead> {
  const r = await readDataFolder(dataDir, (s) => void upgradeState(s as unknown as SimState));
  if (r.state && r.replayed > 0) upgradeKinds(r.state as unknown as SimState);
  return r;
}
