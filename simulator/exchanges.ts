/**
 * Exchanges, wallet connection requests and sweeps. Sources: spec sections 2 (Exchange, Sweep
 * transaction), 3 (wallet connection requests never expire), 4 ("Exchanges and sweeps", GET
 * /coreclient/{client_id}/wallets), 5.9 (an exchange has a whitelisted exchange core client), 6
 * (wallet connection requests on the core client feed); OpenAPI `/exchanges`,
 * `/coreclient/{client_id}/wallets`, `/coreclient/{client_id}/sweep[/{tx_id}]`, CoreClientWallet,
 * SweepInfo, ActionDetailApproveNewWalletConnect; simulator/README.md "Exchanges, wallet connections, sweeps".
 *
 * Semantics chosen by the simulator:
 * - Exchanges are simulator data (the demo creates two, each with its exchange core client).
 * - A wallet connection request (control endpoint `POST /_simulator/exchange/connect-request`) is
 *   an `ApproveNewWalletConnect` action for the exchange core client with `expireTime` 0 (it never
 *   expires), on its feed and in its GET actions. Only dedicated (type 1) or multi-counterparty
 *   (type 2) wallets can be connected; one open or approved connection per wallet and client.
 *   PUT approves (the wallet is connected, status `Active` in its `connected` list), DELETE rejects.
 * - GET /coreclient/{client_id}/wallets lists the wallets connected to or pending with that
 *   client: `{wallets:[{wallet_id, action_id, status, expires}]}` (status = the action's status,
 *   expires 0).
 * - A sweep moves `send.amount` (+ fees, 0.1 bps) between two wallets of the same asset, one of
 *   which is connected (approved) to that client, with no further approval: it settles at once,
 *   tx_status `approved_sweep`, one status record `{action_id, status:'approved', timestamp,
 *   entity: client_id}`, threshold_required 1, approver_count 1. Ledger entries `transferOut` /
 *   `transferIn` (OpenAPI has no sweep type) and wallets feed events with `sweep_tx: true`.
 *   `partner_txID` is optional; when given it is idempotent per core client (`existing`), unless
 *   `SimulatorOptions.dedupe` is `transfers` (then a repeat is a new sweep). Sweeps settle at
 *   once: their entries are written `approved`, never pending.
 */
import type { Engine } from './engine';
import type { Exchange, SweepRequest, SweepTransaction } from '../lib/api/v1/sweep';
import { badRequest, conflict, notFound } from './errors';
import { feeFor, isSafeQuote } from './assets';
import { newChainTxId, newId } from './ids';
import * as net from './network';
import { dedupes, futureExpires } from './custody';
import type { ActionRecord, ExchangeRecord, LedgerEntry, SweepRecord, WalletConnectionRecord } from './model';

/** GET /exchanges -> `{exchanges}`. */
export function listExchanges(eng: Engine): { exchanges: Exchange[] } {
  return {
    exchanges: Object.values(eng.state.exchanges).map((x) => ({ id: x.id, name: x.name, url: x.url, logourl: x.logourl, client: { fields: x.fields.map((f) => ({ ...f })) } })),
  };
}

/**
 * Create an exchange with its exchange core client (demo data).
 * @returns the exchange.
 */
export function createExchange(eng: Engine, x: Omit<ExchangeRecord, 'fields'> & { clientName: string }): ExchangeRecord {
  if (!eng.state.coreClients[x.client_id]) net.createCoreClient(eng, x.clientName, x.client_id);
  const rec: ExchangeRecord = {
    id: x.id,
    name: x.name,
    url: x.url,
    logourl: x.logourl,
    client_id: x.client_id,
    fields: [
      { id: 'customer_email', type: 'email', name: 'E-mail address of your account at the exchange' },
      { id: 'customer_id', type: 'text', name: 'Customer id at the exchange' },
    ],
  };
  eng.putExchange(rec);
  eng.changed();
  return rec;
}

/** A wallet's connection requests (any status), oldest first, through the engine's index (no scan of every connection). */
function connectionsOf(eng: Engine, walletId: string): WalletConnectionRecord[] {
  return eng
    .connectionIdsOfWallet(walletId)
    .map((id) => eng.state.connections[id])
    .filter((c) => c !== undefined && c.wallet_id === walletId);
}

/** The exchange whose core client this is. @throws 404 unknown client, or not an exchange core client. */
function exchangeOf(eng: Engine, clientId: string): ExchangeRecord {
  net.getCoreClient(eng, clientId);
  const x = eng.exchangeOfClient(clientId);
  if (!x) throw notFound(`client_id: ${clientId} is not the core client of an exchange`);
  return x;
}

/** Body of the control endpoint `POST /_simulator/exchange/connect-request`. */
export interface ConnectRequestInput {
  client_id: string;
  wallet_id: string;
  customer_email: string;
  customer_id: string;
}

/**
 * An end user asks to connect a wallet to an exchange: an `ApproveNewWalletConnect` action for the
 * exchange core client that never expires (announced on its feed).
 * @returns `{connection_id, action_id, client_id, wallet_id, status}`.
 * @throws 404 unknown client (or not an exchange's) or wallet; 400 wallet not dedicated or
 *   multi-counterparty; 409 a pending or approved connection of that wallet to that client exists.
 */
export function requestConnection(eng: Engine, input: ConnectRequestInput): { connection_id: string; action_id: string; client_id: string; wallet_id: string; status: string } {
  exchangeOf(eng, input.client_id);
  const w = net.getWallet(eng, input.wallet_id, 'wallet_id');
  if (w.type !== 1 && w.type !== 2) throw badRequest(`wallet_id: wallet ${w.wallet_id} is type ${w.type}; only dedicated (1) or multi-counterparty (2) wallets can be connected to an exchange`);
  const open = connectionsOf(eng, w.wallet_id).find((c) => c.client_id === input.client_id && c.status !== 'rejected');
  if (open) throw conflict(`wallet_id: wallet ${w.wallet_id} already has a ${open.status} connection to ${input.client_id}`);
  const now = eng.now();
  const conn: WalletConnectionRecord = {
    id: newId(),
    client_id: input.client_id,
    wallet_id: w.wallet_id,
    clientData: { customer_email: input.customer_email, customer_id: input.customer_id },
    action_id: newId(),
    status: 'pending',
    created: now,
  };
  const action: ActionRecord = {
    id: conn.action_id,
    type: 'ApproveNewWalletConnect',
    status: 'pending',
    timestamp: now,
    expireTime: 0,
    txID: conn.id,
    custodianID: input.client_id,
    custodianType: 'core-client',
  };
  eng.putConnection(conn);
  eng.putAction(action);
  eng.changed();
  eng.emit('action', action);
  return { connection_id: conn.id, action_id: action.id, client_id: conn.client_id, wallet_id: conn.wallet_id, status: conn.status };
}

/** PUT / DELETE of an `ApproveNewWalletConnect` action (called by transactions.ts after the custodian check). */
export function decideConnection(eng: Engine, action: ActionRecord, approve: boolean): void {
  const conn = eng.state.connections[action.txID];
  if (!conn || conn.status !== 'pending') throw conflict(`action_id: wallet connection ${action.txID} is ${conn?.status ?? 'unknown'}`);
  eng.setActionStatus(action.id, approve ? 'approved' : 'rejected');
  conn.status = approve ? 'approved' : 'rejected';
  eng.changed();
}

/** `details` of an `ApproveNewWalletConnect` action: `{clientData, wallet}` (OpenAPI ActionDetailApproveNewWalletConnect). */
export function connectionDetails(eng: Engine, action: ActionRecord): Record<string, unknown> {
  const conn = eng.state.connections[action.txID];
  const w = conn ? eng.state.wallets[conn.wallet_id] : undefined;
  const typeCode = ['standard', 'dedicated', 'multi-counterparty'][w?.type ?? 0] ?? 'standard';
  return {
    clientData: { ...(conn?.clientData ?? { customer_email: '', customer_id: '' }) },
    wallet: { walletID: w?.wallet_id ?? '', name: w?.name ?? '', asset: w?.asset ?? '', type: w?.type ?? 0, typeCode },
  };
}

/** GET /coreclient/{client_id}/wallets -> `{wallets:[{wallet_id, action_id, status, expires}]}` (OpenAPI CoreClientWallet). @throws 404 */
export function connectedWallets(eng: Engine, clientId: string): { wallets: { wallet_id: string; action_id: string; status: string; expires: number }[] } {
  net.getCoreClient(eng, clientId);
  const wallets = eng
    .connectionIdsOfClient(clientId)
    .map((id) => eng.state.connections[id])
    .filter((c) => c !== undefined && c.client_id === clientId && c.status !== 'rejected')
    .sort((a, b) => a.created - b.created)
    .map((c) => ({ wallet_id: c.wallet_id, action_id: c.action_id, status: eng.state.actions[c.action_id]?.status ?? c.status, expires: 0 }));
  return { wallets };
}

/**
 * POST /coreclient/{client_id}/sweep: settles at once (no further approval).
 * `send.amount` omitted sweeps the whole available balance minus fees.
 * @returns `{tx_id, status: 'new' | 'existing'}`.
 * @throws 404 unknown client (or not an exchange's) or wallet; 400 neither wallet connected to the
 *   client, same wallet, asset mismatch, expires not in the future, insufficient balance.
 */
export function createSweep(eng: Engine, clientId: string, input: SweepRequest): { tx_id: string; status: 'new' | 'existing' } {
  exchangeOf(eng, clientId);
  const existing = input.partner_txID && dedupes(eng, 'sweep') ? eng.sweepIdOfPartnerId(clientId, input.partner_txID) : undefined;
  if (existing) return { tx_id: existing, status: 'existing' };
  const from = net.getWallet(eng, input.wallet_id, 'wallet_id');
  const to = net.getWallet(eng, input.recipient_wallet_id, 'recipient_wallet_id');
  if (from.wallet_id === to.wallet_id) throw badRequest('recipient_wallet_id: must differ from wallet_id');
  const connected = (wid: string) => connectionsOf(eng, wid).some((c) => c.client_id === clientId && c.status === 'approved');
  if (!connected(from.wallet_id) && !connected(to.wallet_id)) throw badRequest(`wallet_id: neither wallet_id nor recipient_wallet_id is connected to core client ${clientId}`);
  if (to.asset !== from.asset) throw badRequest(`recipient_wallet_id: holds ${to.asset}, wallet_id holds ${from.asset}`);
  if (input.send.symbol !== from.asset) throw badRequest(`send.symbol: must be ${from.asset}, the asset of wallet_id`);
  const expires = futureExpires(eng, input.expires);
  const available = from.balance - from.held;
  let net_amount = input.send.amount;
  if (net_amount === undefined) {
    // the largest amount whose amount + fees fits the available balance
    net_amount = Math.max(0, available - feeFor(available).fees);
    while (net_amount > 0 && feeFor(net_amount).amountToSend > available) net_amount--;
    if (net_amount <= 0) throw badRequest(`send.amount: wallet ${from.wallet_id} has nothing to sweep`);
  }
  const q = feeFor(net_amount);
  if (!isSafeQuote(q)) throw badRequest('send.amount: too large');
  if (available < q.amountToSend) throw badRequest(`send.amount: insufficient balance: ${q.amountToSend} needed (amount ${q.netAmount} + fees ${q.fees}), ${available} available`);
  const now = eng.now();
  const sweep: SweepRecord = {
    tx_id: newId(),
    client_id: clientId,
    partner_txID: input.partner_txID ?? '',
    wallet_id: from.wallet_id,
    recipient_wallet_id: to.wallet_id,
    asset: from.asset,
    net_amount: q.netAmount,
    fees: q.fees,
    amount: q.amountToSend,
    reference: input.reference ?? '',
    expires,
    initiated_timestamp: now,
    settled: now,
    action_id: newId(),
    chain_tx_id: newChainTxId(),
    tx_status: 'approved_sweep',
  };
  eng.putSweep(sweep);
  const m = { tx_id: sweep.tx_id, chain_tx_id: sweep.chain_tx_id, status: sweep.tx_status, sweep_tx: true };
  net.moveBalance(eng, from, 'out', { ...m, amount: sweep.amount, fee: sweep.fees }, now);
  net.moveBalance(eng, to, 'in', { ...m, amount: sweep.net_amount, fee: 0 }, now);
  const fromCo = eng.state.companies[from.company_id];
  const toCo = eng.state.companies[to.company_id];
  const entry = (type: 'transferOut' | 'transferIn', fundID: string, amount: number, fees: number, cpId: string, cpName: string): LedgerEntry => ({
    TxID: sweep.tx_id,
    chainTxID: sweep.chain_tx_id,
    fundID,
    timestamp: now,
    expireTime: sweep.expires,
    status: 'approved',
    type,
    asset: sweep.asset,
    amount,
    fees,
    netAmount: sweep.net_amount,
    counterpartyID: cpId,
    counterpartyName: cpName,
    address: '',
    reference: sweep.reference,
    benefitOf: '',
    accountNo: '',
  });
  eng.appendLedger(from, entry('transferOut', from.fund_id, sweep.amount, sweep.fees, to.company_id, toCo?.name ?? ''));
  eng.appendLedger(to, entry('transferIn', to.fund_id, sweep.net_amount, 0, from.company_id, fromCo?.name ?? ''));
  return { tx_id: sweep.tx_id, status: 'new' };
}

/**
 * Sweep status: POST /coreclient/{client_id}/sweep/tx_id `{tx_id}` (spec, literal path) and
 * GET /coreclient/{client_id}/sweep/{tx_id} (OpenAPI).
 * @throws 404 unknown client or sweep not run by that client; 400 tx_id missing.
 */
export function getSweep(eng: Engine, clientId: string, txId: unknown): SweepTransaction {
  net.getCoreClient(eng, clientId);
  if (typeof txId !== 'string' || txId === '') throw badRequest('tx_id: is required');
  const s = eng.state.sweeps[txId];
  if (!s || s.client_id !== clientId) throw notFound(`tx_id: no sweep ${txId} of core client ${clientId}`);
  const x = eng.exchangeOfClient(clientId);
  return {
    approver_count: 1,
    expires: s.expires,
    initiated_timestamp: s.initiated_timestamp,
    reference: s.reference,
    status: [{ action_id: s.action_id, status: 'approved', timestamp: s.settled, entity: clientId }],
    status_details: {
      amount: s.amount,
      asset: s.asset,
      expires: s.expires,
      fees: s.fees,
      wallet_id: s.wallet_id,
      net_amount: s.net_amount,
      recipient_wallet_id: s.recipient_wallet_id,
      reference: s.reference,
      requested_by: x?.name ?? clientId,
    },
    threshold_required: 1,
    tx_id: s.tx_id,
    tx_status: s.tx_status,
  };
}
