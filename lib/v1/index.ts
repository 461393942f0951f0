/**
 * The v1 operations (spec section 4): each resource's declarations and typed functions, in its
 * own file. lib/api/operations.ts holds every operation by operationId.
 */
export * from './assets';
export * from './company';
export * from './trusted-party';
export * from './fund';
export * from './transfer';
export * from './core-client';
export * from './withdraw';
export * from './swap';
export * from './liquidity-hub';
export * from './sweep';
export * from './read';
export * from './request';
export * from './states';
