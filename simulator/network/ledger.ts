/**
 * The fund ledger as the API serves it (spec section 2 "Ledger entry", section 4 "Funds,
 * deposits, ledger"; OpenAPI `/company/{company_id}/fund/{fund_id}/ledger`, TxHistoryItem).
 * Entries are written by the engine (engine.ts `appendLedger`).
 */
import type { Engine } from '../engine';
import { badRequest } from '../errors';
import { findAsset } from '../assets';
import type { LedgerEntry } from '../model';
import { getFund } from './funds';

export { ledgerDirection } from '../model';

/**
 * True when a ledger entry moved its wallet's balance: a deposit (status '') or an entry with
 * status `approved`. Entries `pending`, `rejected`, `expired`, `cancelled` (custody transactions
 * that have not settled or never will) and `chain_rejected` (a withdrawal refunded by the chain)
 * moved nothing; the fund ledger lists them, the wallet history leaves them out.
 */
export function ledgerMovedBalance(e: LedgerEntry): boolean {
  return e.type === 'deposit' || e.status === 'approved';
}

/**
 * GET /company/{company_id}/fund/{fund_id}/ledger -> `{Total, List}`, newest first (in the order
 * written: a custody transaction's debit entry sits where it was written pending, at creation).
 * Every entry, whatever its status (see {@link ledgerMovedBalance}).
 * Filters (all optional): `asset` (a known asset code), `wallet_id` (id or short code, must be in
 * the fund), `direction` `all` | `in` (deposit, transferIn, swapIn) | `out` (transferOut,
 * withdraw, swapOut), see {@link ledgerDirection}; paging `offset`, `limit`. `Total` counts the
 * filtered entries before paging.
 * @throws 404 unknown company/fund; 400 naming the field for an unknown asset, a bad direction,
 *   offset or limit, a wallet not in the fund, or a parameter given twice.
 */
export function fundLedger(eng: Engine, companyId: string, fundId: string, q: Record<string, unknown>): { Total: number; List: LedgerEntry[] } {
  getFund(eng, companyId, fundId);
  const str = (k: string): string | undefined => {
    const v = q[k];
    if (v !== undefined && typeof v !== 'string') throw badRequest(`${k}: must be given once, as plain text`);
    return v === '' ? undefined : v;
  };
  const direction = str('direction') ?? 'all';
  if (!['all', 'in', 'out'].includes(direction)) throw badRequest('direction: must be all, in or out');
  const asset = str('asset');
  if (asset !== undefined && !findAsset(asset)) throw badRequest(`asset: unknown asset ${asset}`);
  let walletId: string | undefined;
  const wq = str('wallet_id');
  if (wq) {
    const w = eng.findWallet(wq);
    if (!w || w.fund_id !== fundId) throw badRequest(`wallet_id: no wallet "${wq}" in fund ${fundId}`);
    walletId = w.wallet_id;
  }
  const int = (k: string, dflt: number): number => {
    const v = str(k);
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v)) throw badRequest(`${k}: must be a non-negative integer`);
    return Number(v);
  };
  const offset = int('offset', 0);
  const limit = int('limit', Number.MAX_SAFE_INTEGER);
  // The filtered entries come from the engine's index (positions, oldest first): the page is
  // read from the newest end without walking the ledger.
  const positions = eng.ledgerPositions(fundId, { walletId, asset, direction: direction as 'all' | 'in' | 'out' });
  const records = eng.state.ledger[fundId] ?? [];
  const total = positions.length;
  const List: LedgerEntry[] = [];
  for (let i = offset; i < total && i - offset < limit; i++) List.push(records[positions[total - 1 - i]].entry);
  return { Total: total, List };
}
