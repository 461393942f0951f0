/**
 * The signed v1 API under `/api/v1/p` (spec section 4). Every route comes from lib's operations
 * (route-table.ts): this module only supplies the handler of each operation, by operationId.
 * One authentication middleware (auth.ts, spec section 5) runs in front of every route; then
 * the due expiries, the validation of query and body against the operation, the handler. Unknown routes
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

/** The plain success body (lib/api/wire.ts `okBodySchema`; OpenAPI OkResponse; spec section 4, trusted party add). */
const OK = { code: 200, msg: 'OK' };

/** A handler that runs `act` (a change with nothing to answer) and answers the plain success body {@link OK}. */
function answeringOk(act: (ctx: RouteContext) => void): RouteHandler {
  return (ctx) => {
    act(ctx);
    return OK;
  };
}

/**
 * The handler of every v1 operation, by operationId (lib/api/operations.ts; route-table.ts for
 * the `EXTRA_OPERATIONS`). Bodies and queries arrive validated against the operation's schemas.
 * @param tls whether the server speaks HTTPS (the scheme of the URLs in answers).
 */
function v1Handlers(eng: Engine, tls: boolean): OperationHandlers<'v1'> {
  const wsBase = (req: SimRequest): string => `${tls ? 'wss' : 'ws'}://${req.headers.host ?? ''}${API_PREFIX}`;
  const httpBase = (req: SimRequest): string => originOf(req, tls) + API_PREFIX;
  const take: RouteHandler = ({ params, body }) => swaps.takeSwap(eng, params.company_id, body as SwapTakeRequest);
  const sweepStatus: RouteHandler = ({ params }) => xch.getSweep(eng, params.client_id, params.tx_id);
  return {
    // Common: assets and fees
    listAssets: () => ({ assets: ASSETS.map((a) => ({ ...a })) }),
    quoteFee: ({ body }) => {
      const b = body as FeeRequest;
      if (!findAsset(b.asset)) throw badRequest(`asset: unknown asset ${b.asset}`);
      const q = feeFor(b.amount);
      if (!isSafeQuote(q)) throw badRequest('amount: too large');
      return q;
    },
    // Company
    createCompany: ({ body }) => net.companyView(net.createCompany(eng, body as CompanyFields)),
    searchCompanies: ({ query }) => net.searchCompanies(eng, query.query),
    getCompany: ({ params }) => net.companyView(net.getCompany(eng, params.company_id)),
    updateCompany: ({ params, body }) => net.updateCompany(eng, params.company_id, body as CompanyFields),
    // Trusted network
    addTrustedParty: answeringOk(({ params, body }) => net.addTrustedParty(eng, params.company_id, body as { address: string; type: string; name?: string })),
    listTrustedParties: ({ params }) => net.listTrustedParties(eng, params.company_id),
    removeTrustedParty: answeringOk(({ params }) => net.removeTrustedParty(eng, params.company_id, params.trustedparty_id)),
    // Holdings
    getHoldings: ({ params }) => net.companyHoldings(eng, params.company_id),
    // Funds, deposits, ledger, whitelist
    createFund: ({ params, body }) => {
      const { wallets: _ids, ...res } = net.createFund(eng, params.company_id, body as net.FundInput);
      return res;
    },
    getFund: ({ params }) => net.fundDetailView(eng, params.company_id, params.fund_id),
    addWallet: ({ params, body }) => net.addWallets(eng, params.company_id, params.fund_id, (body as { wallets: NewWallet[] }).wallets),
    getDeposits: ({ params }) => net.fundDeposits(eng, params.company_id, params.fund_id),
    getLedger: ({ params, query }) => net.fundLedger(eng, params.company_id, params.fund_id, query),
    addWhitelist: ({ params, body }) => {
      wd.addWhitelist(eng, params.company_id, params.fund_id, body as WhitelistEntry);
      return undefined; // spec section 4: empty body, HTTP 200
    },
    listWhitelist: ({ params, query }) => wd.listWhitelist(eng, params.company_id, params.fund_id, query),
    // Wallets and exchanges
    getWallet: ({ params }) => net.walletView(eng, net.getWallet(eng, params.wallet_id)),
    getWalletHistory: ({ params, query }) => ro.walletHistory(eng, params.wallet_id, query.since),
    listExchanges: () => xch.listExchanges(eng),
    // Transfers and withdrawals
    createTransfer: ({ params, body }) => txs.createTransfer(eng, params.company_id, body as TransferRequest),
    getTransfer: ({ params }) => txs.getTransfer(eng, params.company_id, params.tx_id),
    createWithdrawal: ({ params, body }) => wd.createWithdrawal(eng, params.company_id, body as WithdrawRequest),
    getWithdrawal: ({ params }) => wd.getWithdrawal(eng, params.company_id, params.tx_id),
    // Atomic swaps
    makeSwap: ({ req, params, body }) => swaps.createSwap(eng, params.company_id, body as SwapMakeRequest, httpBase(req)),
    getSwapMake: ({ params }) => swaps.getSwap(eng, params.company_id, params.tx_id),
    cancelSwap: answeringOk(({ params }) => swaps.cancelSwap(eng, params.company_id, params.tx_id)),
    // The take is written with and without a trailing tx_id (spec section 4); swap_id in the body rules.
    takeSwap: take,
    takeSwapWithTxId: take,
    getSwapTake: ({ params }) => swaps.getTake(eng, params.company_id, params.tx_id),
    // Liquidity hub
    listLiquidityHub: ({ params }) => swaps.hubItems(eng, params.company_id),
    listAllLiquidityHub: () => swaps.hubItems(eng, null),
    publishQuote: ({ params, body }) => {
      swaps.addToHub(eng, params.company_id, (body as { tx_id: string }).tx_id);
      return undefined; // empty body, HTTP 200
    },
    approveSwapTake: answeringOk(({ params }) => swaps.companyDecide(eng, params.company_id, params.action_id, true)),
    rejectSwapTake: answeringOk(({ params }) => swaps.companyDecide(eng, params.company_id, params.action_id, false)),
    // Sweeps
    startSweep: ({ params, body }) => xch.createSweep(eng, params.client_id, body as SweepRequest),
    // Spec section 4: POST /coreclient/{client_id}/sweep/tx_id (literal; tx_id in the body); OpenAPI: GET .../sweep/{tx_id}.
    getSweepStatus: ({ params, body }) => xch.getSweep(eng, params.client_id, (body as { tx_id: string }).tx_id),
    getSweepStatusByTxId: sweepStatus,
    getSweep: sweepStatus,
    // Core clients, their actions and connected wallets
    createCoreClient: ({ req, body }) => net.coreClientView(net.createCoreClient(eng, (body as { name: string }).name), wsBase(req)),
    listCoreClients: ({ req, query }) => {
      const clients = net.listCoreClients(eng, query.company_id).map((c) => net.coreClientView(c, wsBase(req)));
      return { count: clients.length, clients };
    },
    listActions: ({ params }) => txs.listActions(eng, params.client_id),
    getAction: ({ params }) => txs.getAction(eng, params.client_id, params.action_id),
    approveAction: answeringOk(({ params }) => txs.coreClientDecide(eng, params.client_id, params.action_id, true)),
    rejectAction: answeringOk(({ params }) => txs.coreClientDecide(eng, params.client_id, params.action_id, false)),
    listCoreClientWallets: ({ params }) => xch.connectedWallets(eng, params.client_id),
    // The read-only subset (readonly.ts)
    readAccount: () => ro.accountView(eng),
    readBalance: () => ro.accountBalance(eng),
    readFunds: () => ro.accountFunds(eng),
    readFund: ({ params }) => ro.accountFund(eng, params.fund_id),
    readFundLedger: ({ params, query }) => ro.accountFundLedger(eng, params.fund_id, query),
    readTrustedParties: () => ro.accountTrustedParties(eng),
    readWalletHistory: ({ params, query }) => ro.walletHistory(eng, params.wallet_id, query.since),
  } satisfies OperationHandlers<'v1'>;
}

/**
 * Build the router mounted at {@link API_PREFIX}: the authentication middleware, every v1 route
 * with the handler of its operation, and the 404 of anything else.
 * @param tls whether the server speaks HTTPS (decides the scheme of signed URLs and feed URLs).
 * @throws {Error} when a route has no handler (see http.ts `mountOperations`; the type check finds it first).
 */
export function apiRouter(eng: Engine, auth: Authenticator, tls: boolean): SimRouter {
  const r = createRouter();
  r.use(guard(eng, 'v1', (req) => auth.check({ headers: req.headers, url: originOf(req, tls) + req.originalUrl, body: rawBody(req), method: req.method ?? '' })));
  mountOperations(r, eng, 'v1', v1Handlers(eng, tls), { before: () => txs.applyExpiry(eng) });
  r.use(noRoute(eng, API_PREFIX));
  return r;
}
