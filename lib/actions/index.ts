/** lib/actions: approving or rejecting a core client action, its outcome and its resolution (spec section 4; docs/nodes.md). */
export * from './outcome';
export * from './resolve';
