/**
 * The v2 workspace operations (spec section 2 "v2 resources", section 4 "v2 endpoints"):
 * policies, portfolios and their wallets. The client that sends them with the `x-token` header
 * (spec section 5.8) is lib/client/v2/client.ts.
 */
import type { OperationSpec } from '../spec';
import { policyOperations } from './policy';
import { portfolioOperations } from './portfolio';

/** Every v2 operation, by group and operation name. */
export const v2Operations = {
  policy: policyOperations,
  portfolio: portfolioOperations,
} satisfies Record<string, Record<string, OperationSpec>>;
