/**
 * The signed API under `/api/v1/p` (spec section 4). Every request is authenticated first
 * (auth.ts), then routed; unknown routes answer 404 (after authentication).
 */
import express, { type Router } from 'express';
import type { Engine } from './engine';
import type { Authenticator } from './auth';
import { ASSETS, FEE_TYPES, feeFor, findAsset, isSafeQuote } from './assets';
import { badRequest, notFound } from './errors';
import { originOf, route, type RouteHandler } from './http';
import * as net from './network';
import { mountReadOnlyRoutes } from './readonly';
import * as txs from './transactions';
import * as wd from './withdrawals';
import * as swaps from './swaps';
import * as xch from './exchanges';
import { validate } from './validation';

/** Path prefix of the v1 partner API (spec section 9). */
export const API_PREFIX = '/api/v1/p';

/** Plain success body (NOTES.md). */
const OK = { code: 200, msg: 'OK' };

/**
 * Build the router mounted at {@link API_PREFIX}.
 * @param tls whether the server speaks HTTPS (decides the scheme of signed URLs and feed URLs).
 */
export function apiRouter(eng: Engine, auth: Authenticator, tls: boolean): Router {
  const r = express.Router();
  const authenticate = (req: express.Request, raw: Buffer): void =>
    auth.check({ headers: req.headers, url: originOf(req, tls) + req.originalUrl, body: raw, method: req.method });
  const h = (fn: RouteHandler) => route(eng, fn, authenticate);
  const wsBase = (req: express.Request): string => `${tls ? 'wss' : 'ws'}://${req.headers.host ?? ''}${API_PREFIX}`;

  // Reference data and fees
  r.get('/assets', h(() => ({ assets: ASSETS.map((a) => ({ ...a })) })));
  r.post(
    '/fees',
    h(({ body }) => {
      const b = validate<{ type: string; asset: string; amount: number }>('fees', body);
      if (!FEE_TYPES.includes(b.type)) throw badRequest(`type: must be one of ${FEE_TYPES.join(', ')}`);
      if (!findAsset(b.asset)) throw badRequest(`asset: unknown asset ${b.asset}`);
      const q = feeFor(b.amount);
      if (!isSafeQuote(q)) throw badRequest('amount: too large');
      return q;
    }),
  );

  // Company
  r.post('/company', h(({ body }) => net.companyView(net.createCompany(eng, validate<net.CompanyInput>('companyCreate', body)))));
  r.get('/company/search', h(({ query }) => net.searchCompanies(eng, query.query)));
  r.get('/company/:company_id', h(({ params }) => net.companyView(net.getCompany(eng, params.company_id))));
  r.put('/company/:company_id', h(({ params, body }) => net.updateCompany(eng, params.company_id, validate<net.CompanyInput>('companyUpdate', body ?? {}))));
  r.get('/company/:company_id/holding', h(({ params }) => net.companyHoldings(eng, params.company_id)));

  // Trusted network
  r.post(
    '/company/:company_id/trustedparty',
    h(({ params, body }) => {
      net.addTrustedParty(eng, params.company_id, validate<{ address: string; type: string; name?: string }>('trustedParty', body));
      return OK;
    }),
  );
  r.get('/company/:company_id/trustedparty', h(({ params }) => net.listTrustedParties(eng, params.company_id)));
  r.delete(
    '/company/:company_id/trustedparty/:trustedparty_id',
    h(({ params }) => {
      net.removeTrustedParty(eng, params.company_id, params.trustedparty_id);
      return OK;
    }),
  );

  // Funds, wallets, deposits, ledger
  r.post(
    '/company/:company_id/fund',
    h(({ params, body }) => {
      const { wallets: _ids, ...res } = net.createFund(eng, params.company_id, validate<net.FundInput>('fund', body));
      return res;
    }),
  );
  r.get('/company/:company_id/fund/:fund_id', h(({ params }) => net.fundDetailView(eng, params.company_id, params.fund_id)));
  r.post(
    '/company/:company_id/fund/:fund_id/wallet',
    h(({ params, body }) => net.addWallets(eng, params.company_id, params.fund_id, validate<{ wallets: net.NewWalletInput[] }>('fundWallet', body).wallets)),
  );
  r.get('/company/:company_id/fund/:fund_id/deposit', h(({ params }) => net.fundDeposits(eng, params.company_id, params.fund_id)));
  r.get('/company/:company_id/fund/:fund_id/ledger', h(({ params, query }) => net.fundLedger(eng, params.company_id, params.fund_id, query)));
  r.get('/wallet/:wallet_id', h(({ params }) => net.walletView(eng, net.getWallet(eng, params.wallet_id))));

  // Transfers
  r.post('/company/:company_id/transfer', h(({ params, body }) => txs.createTransfer(eng, params.company_id, validate<txs.TransferInput>('transfer', body))));
  r.get('/company/:company_id/transfer/:tx_id', h(({ params }) => txs.getTransfer(eng, params.company_id, params.tx_id)));

  // Whitelist and withdrawals
  r.post(
    '/company/:company_id/fund/:fund_id/whitelist',
    h(({ params, body }) => {
      wd.addWhitelist(eng, params.company_id, params.fund_id, validate<wd.WhitelistInput>('whitelist', body));
      return undefined; // spec section 4: empty body, HTTP 200
    }),
  );
  r.get('/company/:company_id/fund/:fund_id/whitelist', h(({ params, query }) => wd.listWhitelist(eng, params.company_id, params.fund_id, query)));
  r.post('/company/:company_id/withdraw', h(({ params, body }) => wd.createWithdrawal(eng, params.company_id, validate<wd.WithdrawInput>('withdraw', body))));
  r.get('/company/:company_id/withdraw/:tx_id', h(({ params }) => wd.getWithdrawal(eng, params.company_id, params.tx_id)));

  // Atomic swaps and liquidity hub
  const httpBase = (req: express.Request): string => originOf(req, tls) + API_PREFIX;
  r.post('/company/:company_id/atomicswap/make', h(({ req, params, body }) => swaps.createSwap(eng, params.company_id, validate<swaps.SwapMakeInput>('swapMake', body), httpBase(req))));
  r.get('/company/:company_id/atomicswap/make/:tx_id', h(({ params }) => swaps.getSwap(eng, params.company_id, params.tx_id)));
  r.delete(
    '/company/:company_id/atomicswap/make/:tx_id',
    h(({ params }) => {
      swaps.cancelSwap(eng, params.company_id, params.tx_id);
      return OK;
    }),
  );
  // The take is written with and without a trailing tx_id (spec section 4); swap_id in the body rules.
  const take = h(({ params, body }) => swaps.takeSwap(eng, params.company_id, validate<swaps.SwapTakeInput>('swapTake', body)));
  r.post('/company/:company_id/atomicswap/take', take);
  r.post('/company/:company_id/atomicswap/take/:tx_id', take);
  r.get('/company/:company_id/atomicswap/take/:tx_id', h(({ params }) => swaps.getTake(eng, params.company_id, params.tx_id)));
  r.get('/company/:company_id/liquidityhub', h(({ params }) => swaps.hubItems(eng, params.company_id)));
  r.post(
    '/company/:company_id/liquidityhub',
    h(({ params, body }) => {
      swaps.addToHub(eng, params.company_id, validate<{ tx_id: string }>('hubAdd', body).tx_id);
      return undefined; // empty body, HTTP 200
    }),
  );
  r.get('/liquidityhub', h(() => swaps.hubItems(eng, null)));
  r.put(
    '/company/:company_id/action/:action_id',
    h(({ params }) => {
      swaps.companyDecide(eng, params.company_id, params.action_id, true);
      return OK;
    }),
  );
  r.delete(
    '/company/:company_id/action/:action_id',
    h(({ params }) => {
      swaps.companyDecide(eng, params.company_id, params.action_id, false);
      return OK;
    }),
  );

  // Exchanges, connected wallets, sweeps
  r.get('/exchanges', h(() => xch.listExchanges(eng)));
  r.get('/coreclient/:client_id/wallets', h(({ params }) => xch.connectedWallets(eng, params.client_id)));
  r.post('/coreclient/:client_id/sweep', h(({ params, body }) => xch.createSweep(eng, params.client_id, validate<xch.SweepInput>('sweep', body))));
  // Spec section 4: POST /coreclient/{client_id}/sweep/tx_id (literal; tx_id in the body); OpenAPI: GET .../sweep/{tx_id}.
  r.post(
    '/coreclient/:client_id/sweep/:tx_id',
    h(({ params, body }) => xch.getSweep(eng, params.client_id, params.tx_id === 'tx_id' ? validate<{ tx_id: string }>('sweepStatus', body).tx_id : params.tx_id)),
  );
  r.get('/coreclient/:client_id/sweep/:tx_id', h(({ params }) => xch.getSweep(eng, params.client_id, params.tx_id)));

  // Core clients and actions
  r.post('/coreclient', h(({ req, body }) => net.coreClientView(net.createCoreClient(eng, validate<{ name: string }>('coreClient', body).name), wsBase(req))));
  r.get(
    '/coreclient',
    h(({ req, query }) => {
      const clients = net.listCoreClients(eng, query.company_id).map((c) => net.coreClientView(c, wsBase(req)));
      return { count: clients.length, clients };
    }),
  );
  r.get('/coreclient/:client_id/actions', h(({ params }) => txs.listActions(eng, params.client_id)));
  r.get('/coreclient/:client_id/action/:action_id', h(({ params }) => txs.getAction(eng, params.client_id, params.action_id)));
  r.put(
    '/coreclient/:client_id/action/:action_id',
    h(({ params }) => {
      txs.coreClientDecide(eng, params.client_id, params.action_id, true);
      return OK;
    }),
  );
  r.delete(
    '/coreclient/:client_id/action/:action_id',
    h(({ params }) => {
      txs.coreClientDecide(eng, params.client_id, params.action_id, false);
      return OK;
    }),
  );

  mountReadOnlyRoutes(r, eng, h); // read-only subset and wallet history (readonly.ts)

  r.all(
    '*',
    h(({ req }) => {
      throw notFound(`path: no route ${req.method} ${API_PREFIX}${req.path} in the simulator`);
    }),
  );
  return r;
}
