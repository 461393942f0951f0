/**
 * The v1 operations (spec section 4), grouped as the nodes use them: `group.operation`,
 * e.g. `v1Operations.transfer.create`. Each group also has typed functions in its own file.
 */
import type { OperationSpec } from '../operation';
import { assetOperations } from './assets';
import { companyOperations } from './company';
import { trustedPartyOperations } from './trusted-party';
import { fundOperations } from './fund';
import { transferOperations } from './transfer';
import { coreClientOperations, actionOperations } from './core-client';
import { withdrawOperations } from './withdraw';
import { swapMakeOperations, swapTakeOperations } from './swap';
import { liquidityHubOperations } from './liquidity-hub';
import { sweepOperations } from './sweep';
import { readOperations } from './read';

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

/** Every v1 operation of this version of the pack, by group and operation name. */
export const v1Operations = {
  assets: assetOperations,
  company: companyOperations,
  trustedParty: trustedPartyOperations,
  fund: fundOperations,
  transfer: transferOperations,
  coreClient: coreClientOperations,
  action: actionOperations,
  withdraw: withdrawOperations,
  swapMake: swapMakeOperations,
  swapTake: swapTakeOperations,
  liquidityHub: liquidityHubOperations,
  sweep: sweepOperations,
  read: readOperations,
} satisfies Record<string, Record<string, OperationSpec>>;

/** A group name of {@link v1Operations}. */
export type OperationGroup = keyof typeof v1Operations;
