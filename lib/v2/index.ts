/**
 * The v2 workspace calls (spec section 2 "v2 resources", section 4 "v2 endpoints", section
 * 5.8): a client that sends the `x-token` header, policies (with the expression builder),
 * portfolios and wallets.
 */
export * from './client';
export * from './environments';
export * from './operation';
export * from './policy';
export * from './portfolio';
