/**
 * The table of every v1 operation (spec section 4), by group and operation name, in a module of
 * its own so that lib/v1/request.ts can look operations up without an import cycle through
 * lib/v1/index.ts (which re-exports both).
 */
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
import type { OperationSpec } from '../spec';

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
