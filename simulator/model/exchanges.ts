/**
 * Exchanges, wallet connection requests and sweeps (spec sections 2 "Exchange", "Sweep
 * transaction", 4 "Exchanges and sweeps"; OpenAPI `/exchanges`, SweepInfo). Amounts are base
 * units, times epoch seconds of the business clock.
 */
/** An exchange that end users connect wallets to (spec section 2 "Exchange"; GET /exchanges). */
export interface ExchangeRecord {
  id: string;
  name: string;
  url: string;
  logourl: string;
  /** the exchange core client: receives wallet connection requests and runs sweeps */
  client_id: string;
  /** metadata the end user supplies to connect */
  fields: { id: string; type: string; name: string }[];
}

/** An end user's request to connect a wallet to an exchange (an `ApproveNewWalletConnect` action). */
export interface WalletConnectionRecord {
  /** id of the request (the action's `txID`) */
  id: string;
  client_id: string;
  wallet_id: string;
  clientData: { customer_email: string; customer_id: string };
  action_id: string;
  /** pending until the exchange core client approves (connected, wallet Active) or rejects */
  status: 'pending' | 'approved' | 'rejected';
  /** epoch seconds */
  created: number;
}

/** A sweep run by an exchange core client (spec section 4 "Exchanges and sweeps"). */
export interface SweepRecord {
  tx_id: string;
  client_id: string;
  partner_txID: string;
  wallet_id: string;
  recipient_wallet_id: string;
  asset: string;
  /** base units received (send.amount) */
  net_amount: number;
  fees: number;
  /** gross base units debited = net_amount + fees */
  amount: number;
  reference: string;
  /** epoch seconds */
  expires: number;
  initiated_timestamp: number;
  /** epoch seconds of the settlement */
  settled: number;
  action_id: string;
  chain_tx_id: string;
  tx_status: string;
}

