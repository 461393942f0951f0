/**
 * The signed v1 API under `/api/v1/p` (spec section 4). Every route comes from lib's registry
 * (route-table.ts): this module only supplies the handler of each operation, by registry key.
 * One authentication middleware (auth.ts, spec section 5) runs in front of every route; then
 * the due expiries, the registry validation of query and body, the handler. Unknown routes
 * answer 404, after authentication.
 */
import type { Engine } from './engine';
import type { Authenticator } from './auth';
import { ASSETS, feeFor, findAsset, isSafeQuote } from './assets';
import { badRequest } from './errors';
import { createRouter, guard, mountOperations, noRoute, originOf, rawBody, type OperationHandlers, type RouteContext, type RouteHandler, type SimRequest, type SimRouter } from './http';
import * as net from './network';
import * as ro from './readonly';
import * as txs from './transactions';
import * as wd from './withdrawals';
import * as swaps from './swaps';
import * as xch from './exchanges';
import { API_PREFIX } from './paths';
import type { FeeRequest } from '../lib/api/v1/assets';
import type { CompanyFields } from '../lib/api/v1/company';
import type { NewWallet, WhitelistEntry } from '../lib/api/v1/fund';
import type { SwapMakeRequest, SwapTakeRequest } from '../lib/api/v1/swap';
import type { SweepRequest } from '../lib/api/v1/sweep';
import type { TransferRequest } from '../lib/api/v1/transfer';
import type { WithdrawRequest } from '../lib/api/v1/withdraw';

/** Plain success body (NOTES.md). */
const OK = { code: 200, msg: 'OK' };

/** A handler that runs `act` (a change with nothing to answer) and answers the plain success body {@link OK}. */
function answeringOk(act: (ctx: RouteContext) => void): RouteHandler {
  return (ctx) => {
    act(ctx);
    return OK;
  };
}

/**
 * The handler of every v1 operation, by registry key (lib/registry.ts; route-table.ts for the
 * `EXTRA_ENTRIES`). Bodies and queries arrive validated against the entry's schemas.
 * @param tls whether the server speaks HTTPS (the scheme of the URLs in answers).
 */
function v1Handlers(eng: Engine, tls: boolean): OperationHandlers {
  const wsBase = (req: SimRequest): string => `${tls ? 'wss' : 'ws'}://${req.headers.host ?? ''}${API_PREFIX}`;
  const httpBase = (req: SimRequest): string => originOf(req, tls) + API_PREFIX;
  const take: OperationHandlers[string] = ({ params, body }) => swaps.takeSwap(eng, params.company_id, body as SwapTakeRequest);
  const sweepStatus: OperationHandlers[string] = ({ params }) => xch.getSweep(eng, params.client_id, params.tx_id);
  return {
    // Reference data and fees
    'custody-assets.assets': () => ({ assets: ASSETS.map((a) => ({ ...a })) }),
    'custody-assets.fee': ({ body }) => {
      const b = body as FeeRequest;
      if (!findAsset(b.asset)) throw badRequest(`asset: unknown asset ${b.asset}`);
      const q = feeFor(b.amount);
      if (!isSafeQuote(q)) throw badRequest('amount: too large');
      return q;
    },
    // Company
    'custody-company.create': ({ body }) => net.companyView(net.createCompany(eng, body as CompanyFields)),
    'custody-company.search': ({ query }) => net.searchCompanies(eng, query.query),
    'custody-company.get': ({ params }) => net.companyView(net.getCompany(eng, params.company_id)),
    'custody-company.update': ({ params, body }) => net.updateCompany(eng, params.company_id, body as CompanyFields),
    'custody-fund.holdings': ({ params }) => net.companyHoldings(eng, params.company_id),
    // Trusted network
    'custody-trusted-party.add': answeringOk(({ params, body }) => net.addTrustedParty(eng, params.company_id, body as { address: string; type: string; name?: string })),
    'custody-trusted-party.list': ({ params }) => net.listTrustedParties(eng, params.company_id),
    'custody-trusted-party.remove': answeringOk(({ params }) => net.removeTrustedParty(eng, params.company_id, params.trustedparty_id)),
    // Funds, wallets, deposits, ledger, whitelist
    'custody-fund.createFund': ({ params, body }) => {
      const { wallets: _ids, ...res } = net.createFund(eng, params.company_id, body as net.FundInput);
      return res;
    },
    'custody-fund.getFund': ({ params }) => net.fundDetailView(eng, params.company_id, params.fund_id),
    'custody-fund.addWallet': ({ params, body }) => net.addWallets(eng, params.company_id, params.fund_id, (body as { wallets: NewWallet[] }).wallets),
    'custody-fund.deposits': ({ params }) => net.fundDeposits(eng, params.company_id, params.fund_id),
    'custody-fund.ledger': ({ params, query }) => net.fundLedger(eng, params.company_id, params.fund_id, query),
    'custody-fund.getWallet': ({ params }) => net.walletView(eng, net.getWallet(eng, params.wallet_id)),
    'custody-fund.walletHistory': ({ params, query }) => ro.walletHistory(eng, params.wallet_id, query.since),
    'custody-fund.addWhitelist': ({ params, body }) => {
      wd.addWhitelist(eng, params.company_id, params.fund_id, body as WhitelistEntry);
      return undefined; // spec section 4: empty body, HTTP 200
    },
    'custody-fund.listWhitelist': ({ params, query }) => wd.listWhitelist(eng, params.company_id, params.fund_id, query),
    // Transfers and withdrawals
    'custody-transfer.create': ({ params, body }) => txs.createTransfer(eng, params.company_id, body as TransferRequest),
    'custody-transfer.get': ({ params }) => txs.getTransfer(eng, params.company_id, params.tx_id),
    'custody-withdraw.create': ({ params, body }) => wd.createWithdrawal(eng, params.company_id, body as WithdrawRequest),
    'custody-withdraw.get': ({ params }) => wd.getWithdrawal(eng, params.company_id, params.tx_id),
    // Atomic swaps and liquidity hub
    'custody-swap-make.make': ({ req, params, body }) => swaps.createSwap(eng, params.company_id, body as SwapMakeRequest, httpBase(req)),
    'custody-swap-make.get': ({ params }) => swaps.getSwap(eng, params.company_id, params.tx_id),
    'custody-swap-make.cancel': answeringOk(({ params }) => swaps.cancelSwap(eng, params.company_id, params.tx_id)),
    // The take is written with and without a trailing tx_id (spec section 4); swap_id in the body rules.
    'custody-swap-take.take': take,
    'custody-swap-take.takeWithTxId': take,
    'custody-swap-take.get': ({ params }) => swaps.getTake(eng, params.company_id, params.tx_id),
    'custody-liquidity-hub.list': ({ params }) => swaps.hubItems(eng, params.company_id),
    'custody-liquidity-hub.listAll': () => swaps.hubItems(eng, null),
    'custody-liquidity-hub.publish': ({ params, body }) => {
      swaps.addToHub(eng, params.company_id, (body as { tx_id: string }).tx_id);
      return undefined; // empty body, HTTP 200
    },
    'custody-liquidity-hub.approveTake': answeringOk(({ params }) => swaps.companyDecide(eng, params.company_id, params.action_id, true)),
    'custody-liquidity-hub.rejectTake': answeringOk(({ params }) => swaps.companyDecide(eng, params.company_id, params.action_id, false)),
    // Exchanges, connected wallets, sweeps
    'custody-sweep.exchanges': () => xch.listExchanges(eng),
    'custody-core-client.wallets': ({ params }) => xch.connectedWallets(eng, params.client_id),
    'custody-sweep.start': ({ params, body }) => xch.createSweep(eng, params.client_id, body as SweepRequest),
    // Spec section 4: POST /coreclient/{client_id}/sweep/tx_id (literal; tx_id in the body); OpenAPI: GET .../sweep/{tx_id}.
    'custody-sweep.status': ({ params, body }) => xch.getSweep(eng, params.client_id, (body as { tx_id: string }).tx_id),
    'custody-sweep.statusByTxId': sweepStatus,
    'custody-sweep.getStatus': sweepStatus,
    // Core clients and actions
    'custody-core-client.create': ({ req, body }) => net.coreClientView(net.createCoreClient(eng, (body as { name: string }).name), wsBase(req)),
    'custody-core-client.list': ({ req, query }) => {
      const clients = net.listCoreClients(eng, query.company_id).map((c) => net.coreClientView(c, wsBase(req)));
      return { count: clients.length, clients };
    },
    'custody-core-client.actions': ({ params }) => txs.listActions(eng, params.client_id),
    'custody-core-client.action': ({ params }) => txs.getAction(eng, params.client_id, params.action_id),
    'custody-action.approve': answeringOk(({ params }) => txs.coreClientDecide(eng, params.client_id, params.action_id, true)),
    'custody-action.reject': answeringOk(({ params }) => txs.coreClientDecide(eng, params.client_id, params.action_id, false)),
    // The read-only subset (readonly.ts)
    'custody-read.account': () => ro.accountView(eng),
    'custody-read.balance': () => ro.accountBalance(eng),
    'custody-read.funds': () => ro.accountFunds(eng),
    'custody-read.fund': ({ params }) => ro.accountFund(eng, params.fund_id),
    'custody-read.fundLedger': ({ params, query }) => ro.accountFundLedger(eng, params.fund_id, query),
    'custody-read.trustedParties': () => ro.accountTrustedParties(eng),
    'custody-read.walletHistory': ({ params, query }) => ro.walletHistory(eng, params.wallet_id, query.since),
  };
}

/**
 * Build the router mounted at {@link API_PREFIX}: the authentication middleware, every v1 route
 * of the registry with its handler, and the 404 of anything else.
 * @param tls whether the server speaks HTTPS (decides the scheme of signed URLs and feed URLs).
 * @throws {Error} when a registry route has no handler (see http.ts `mountOperations`).
 */
export function apiRouter(eng: Engine, auth: Authenticator, tls: boolean): SimRouter {
  const r = createRouter();
  r.use(guard(eng, 'v1', (req) => auth.check({ headers: req.headers, url: originOf(req, tls) + req.originalUrl, body: rawBody(req), method: req.method ?? '' })));
  mountOperations(r, eng, 'v1', v1Handlers(eng, tls), { before: () => txs.applyExpiry(eng) });
  r.use(noRoute(eng, API_PREFIX));
  return r;
}
