/**
 * Control endpoints under `/_simulator`: they stand in for the outside world (faucet, human
 * custodians on their signing app, invited users, the passing of time, network faults).
 * Unsigned JSON; loopback callers with a loopback `Host` only (else 403); a POST must be
 * `application/json` (else 415). Unknown control paths answer 404. This router serves the v1
 * rows; the `/_simulator/v2` rows are served by v2/routes.ts (mounted before this router), with
 * the same loopback and JSON rules.
 *
 * | Method | Path | Body | Answer |
 * |---|---|---|---|
 * | POST | /_simulator/faucet | `{wallet_id, amount}` (id or short code; base units > 0) | `{wallet_id, asset, amount, balance, chainTxID}` |
 * | POST | /_simulator/transfer/{tx_id}/approve | `{user_id}` (id, e-mail or username) | the Transaction object |
 * | POST | /_simulator/transfer/{tx_id}/reject | `{user_id}` | the Transaction object |
 * | POST | /_simulator/tx/{tx_id}/approve | `{user_id}`: a human custodian approves a transfer, withdrawal, swap quote or swap take | the transaction's GET view |
 * | POST | /_simulator/tx/{tx_id}/reject | `{user_id}` | the transaction's GET view |
 * | POST | /_simulator/withdraw/{tx_id}/chain-reject | | the chain rejects an approved withdrawal: the Transaction object (chain_rejected_withdrawal) |
 * | POST | /_simulator/exchange/connect-request | `{client_id, wallet_id, customer_email, customer_id}` | `{connection_id, action_id, client_id, wallet_id, status}` |
 * | POST | /_simulator/foreign/quote | `{send{symbol, amount}, receive{symbol, amount}, expires?}` | `{company_id, core_client_id, tx_id}`: a published quote of another API account |
 * | GET | /_simulator/events?after={seq} | | `{events:[{seq, event, message}]}`: the last 1000 `hub` and `walletTx` engine events after `seq` |
 * | POST | /_simulator/trustedparty/accept | `{company_id, address}` | the trusted party entry |
 * | POST | /_simulator/clock/advance | `{seconds}` (integer >= 0) | `{now, offset_seconds, expired}` |
 * | GET | /_simulator/clock | | `{now, offset_seconds}` |
 * | POST | /_simulator/feeds/drop | | `{dropped}`: every open socket of all three feeds (core client, liquidity hub, wallets) closed abruptly |
 * | POST | /_simulator/feeds/faults | `{replayOnConnect?, deliver?}` (booleans): `replayOnConnect` false: no pending actions on connect (core client feed, the only one that replays); `deliver` false: no new message on any of the three feeds | the faults now in force |
 * | POST | /_simulator/faults/http | `{method?, path, status, count}`: the next `count` v1 API requests whose path below `/api/v1/p` contains `path` answer `status`, before authentication (not feeds, v2 or control) | `{faults}` |
 * | POST | /_simulator/faults/clear | | `{faults: []}` |
 * | GET | /_simulator/demo | | the DemoDataset |
 * | GET | /_simulator/users | | `{users:[{id, email, firstName, lastName, username}]}` |
 * | GET | /_simulator/account | | `{public_key}` (never the API key or the private key: they are in the data folder's 0600 files) |
 * | POST | /_simulator/partners | `{public_key}` (PEM, SPKI or PKCS#1, RSA 2048 bits or more): register a partner public key, as a partner registers one with the service (partners.ts) | `{api_key, fingerprint, created}`: a new API key (`created: true`), or the one given before for a key registered already |
 * | GET | /_simulator/partners | | `{partners:[{fingerprint, public_key, registered}]}` (never the API keys) |
 * | GET | /_simulator/v2 | | `{workspaceID, humans, apiKeys}` (ids and associations, never tokens) |
 * | POST | /_simulator/v2/actions/{actionID}/approve | `{user_id}` (member id `m.alice`, user id, e-mail or username): a human member approves | the v2 action |
 * | POST | /_simulator/v2/actions/{actionID}/reject | `{user_id}` | the v2 action |
 * | POST | /_simulator/v2/wallets/{walletID}/transactions | `{}` | a v2 action of type `transaction` awaiting the wallet policy's approvals |
 */
import type { Engine } from './engine';
import { badRequest, notFound } from './errors';
import { controlGuard, createRouter, noRoute, protocolOf, route, type RouteHandler, type SimRouter } from './http';
import * as net from './network';
import * as txs from './transactions';
import { chainRejectWithdrawal } from './withdrawals';
import { createForeignQuote, type ForeignQuoteInput } from './swaps';
import { requestConnection, type ConnectRequestInput } from './exchanges';
import { API_PREFIX, CONTROL_PREFIX } from './paths';
import { validate } from './validation';
import { listPartnerKeys, registerPartnerKey } from './partners';
import type { HttpFault, HttpFaults } from './faults';

/** What the control endpoints drive of the websocket feeds (feeds.ts `FeedHub`), without importing that router. */
export interface FeedControls {
  /** Close every open feed socket abruptly. @returns how many were dropped. */
  drop(): number;
  /** The feed faults in force (see feeds.ts `FeedHub.faults`). */
  faults: { replayOnConnect: boolean; deliver: boolean };
}

/** Build the router mounted at {@link CONTROL_PREFIX}. */
export function controlRouter(eng: Engine, feeds: FeedControls, faults: HttpFaults): SimRouter {
  const r = createRouter();
  const h = (fn: RouteHandler) =>
    route(eng, fn, {
      before: (req) => {
        controlGuard(req);
        txs.applyExpiry(eng);
      },
    });

  r.post(
    '/faucet',
    h(({ body }) => {
      const b = validate<{ wallet_id: string; amount: number }>('faucet', body);
      return net.faucetDeposit(eng, b.wallet_id, b.amount);
    }),
  );
  r.post('/transfer/:tx_id/approve', h(({ params, body }) => txs.userDecide(eng, params.tx_id, validate<{ user_id: string }>('userDecision', body).user_id, true)));
  r.post('/transfer/:tx_id/reject', h(({ params, body }) => txs.userDecide(eng, params.tx_id, validate<{ user_id: string }>('userDecision', body).user_id, false)));
  r.post('/tx/:tx_id/approve', h(({ params, body }) => txs.userDecide(eng, params.tx_id, validate<{ user_id: string }>('userDecision', body).user_id, true, 'transaction')));
  r.post('/tx/:tx_id/reject', h(({ params, body }) => txs.userDecide(eng, params.tx_id, validate<{ user_id: string }>('userDecision', body).user_id, false, 'transaction')));
  r.post('/withdraw/:tx_id/chain-reject', h(({ params }) => chainRejectWithdrawal(eng, params.tx_id)));
  r.post('/exchange/connect-request', h(({ body }) => requestConnection(eng, validate<ConnectRequestInput>('connectRequest', body))));
  r.post(
    '/foreign/quote',
    h(({ req, body }) => createForeignQuote(eng, validate<ForeignQuoteInput>('foreignQuote', body), `${protocolOf(req)}://${req.headers.host ?? ''}${API_PREFIX}`)),
  );
  r.get(
    '/events',
    h(({ query }) => {
      const after = query.after === undefined ? 0 : Number(query.after);
      if (!Number.isSafeInteger(after) || after < 0) throw badRequest('after: must be a non-negative integer');
      return { events: eng.recentEvents(after) };
    }),
  );
  r.post(
    '/trustedparty/accept',
    h(({ body }) => {
      const b = validate<{ company_id: string; address: string }>('accept', body);
      return net.acceptInvitation(eng, b.company_id, b.address);
    }),
  );
  r.post(
    '/clock/advance',
    h(({ body }) => {
      const { seconds } = validate<{ seconds: number }>('clock', body);
      eng.state.clockOffsetSeconds += seconds;
      eng.changed();
      const expired = txs.applyExpiry(eng);
      return { now: eng.now(), offset_seconds: eng.state.clockOffsetSeconds, expired };
    }),
  );
  r.get('/clock', h(() => ({ now: eng.now(), offset_seconds: eng.state.clockOffsetSeconds })));
  r.post('/feeds/drop', h(() => ({ dropped: feeds.drop() })));
  r.post('/faults/http', h(({ body }) => ({ faults: faults.add(validate<HttpFault>('httpFault', body)) })));
  r.post(
    '/faults/clear',
    h(() => {
      faults.clear();
      return { faults: [] };
    }),
  );
  r.post(
    '/feeds/faults',
    h(({ body }) => {
      const b = validate<{ replayOnConnect?: boolean; deliver?: boolean }>('feedFaults', body);
      if (b.replayOnConnect !== undefined) feeds.faults.replayOnConnect = b.replayOnConnect;
      if (b.deliver !== undefined) feeds.faults.deliver = b.deliver;
      return { ...feeds.faults };
    }),
  );
  r.get(
    '/demo',
    h(() => {
      if (!eng.state.demo) throw notFound('demo: no demo dataset');
      return eng.state.demo;
    }),
  );
  r.get('/users', h(() => ({ users: Object.values(eng.state.users) })));
  // The API key and private key are never served: they are in the data folder's 0600 files.
  r.get('/account', h(() => ({ public_key: eng.state.publicKeyPem })));
  r.post(
    '/partners',
    h(({ body }) => registerPartnerKey(eng, validate<{ public_key: string }>('partnerKey', body).public_key)),
  );
  r.get('/partners', h(() => ({ partners: listPartnerKeys(eng) })));
  r.use(noRoute(eng, CONTROL_PREFIX, 'no control endpoint', controlGuard));
  return r;
}
