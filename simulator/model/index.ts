/**
 * The simulator's data model, one file per concern: the state document (state.ts), the network's
 * records (network.ts), the custody transactions and actions (custody.ts), the ledger
 * (ledger.ts), exchanges and sweeps (exchanges.ts), the v2 workspace (v2.ts). Types and pure
 * helpers only: nothing here reads or writes a file or an index.
 */
export * from './custody';
export * from './exchanges';
export * from './ledger';
export * from './network';
export * from './state';
export * from './v2';
