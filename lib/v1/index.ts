/**
 * The v1 operations (spec section 4), grouped as the nodes use them: `group.operation`,
 * e.g. `v1Operations.transfer.create`. Each group also has typed functions in its own file.
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

export { v1Operations, type OperationGroup } from './operations';
