/**
 * Money safety below the nodes (issue 9; DESIGN.md "Money safety is a layer of its own"): the
 * submission journal, exactly-once sending of money-moving requests, and resolving a payment
 * whose outcome is unknown.
 */
export * from './kinds';
export * from './journal';
export * from './submit';
export * from './resolve';
