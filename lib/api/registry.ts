/**
 * The operation registry: every endpoint of spec section 4 and every v2 call, once, with the
 * node and operation name that send it. Each entry's {@link OperationSpec} (method, path, path
 * ids, request and response schemas, amount and asset fields, submission kind, source) is the
 * one declaration that lib's calls, the nodes' runtime and edit dialogs, and the simulator's
 * routes are made from.
 */
import { v1Operations } from './v1/operations';
import { policyOperations } from './v2/policy';
import { portfolioOperations } from './v2/portfolio';
import type { OperationSpec } from './spec';

/**
 * How a failed call may be retried (the pack's rule, lib/client/transport.ts; spec section 3: a repeated
 * `partner_txID` answers `existing`, which makes a repeated payment safe):
 * - `read`: a call that a repeat cannot change beyond its first effect: every GET, the fee quote
 *   (POST /fees), the sweep status (POST .../sweep/tx_id), a company update (PUT, the same body
 *   sets the same fields); retried freely;
 * - `deduped`: a money-moving POST keyed by `partner_txID` (the API answers `existing` for a
 *   repeated transfer, spec section 3) and journaled by lib/client/submission; retried with the same body;
 * - `sendOnce`: a call with an effect and no key; never retried after it may have been sent.
 */
export type RetryClass = 'read' | 'deduped' | 'sendOnce';

/** The API version of an operation: v1 under `base_url`, v2 under `base_url_v2` (spec section 9). */
export type ApiVersion = 'v1' | 'v2';

/** One registry entry: an operation and the node that sends it. */
export interface RegistryEntry {
  /** The node type that sends it, e.g. `custody-transfer`. */
  node: string;
  /** The operation name within the node (the node's `operation` property), e.g. `create`. */
  operation: string;
  /** v1 (signed, spec section 5) or v2 (`x-token`, spec section 5.8). */
  version: ApiVersion;
  /** The declaration: method, path template, schemas. */
  spec: OperationSpec;
  /** Retry class, derived from the declaration (see {@link retryClass}). */
  retry: RetryClass;
}

/** The operation groups of each operation node, by node type. */
export const NODE_OPERATIONS = {
  'custody-assets': { version: 'v1', operations: v1Operations.assets },
  'custody-company': { version: 'v1', operations: v1Operations.company },
  'custody-trusted-party': { version: 'v1', operations: v1Operations.trustedParty },
  'custody-fund': { version: 'v1', operations: v1Operations.fund },
  'custody-transfer': { version: 'v1', operations: v1Operations.transfer },
  'custody-core-client': { version: 'v1', operations: v1Operations.coreClient },
  'custody-action': { version: 'v1', operations: v1Operations.action },
  'custody-withdraw': { version: 'v1', operations: v1Operations.withdraw },
  'custody-swap-make': { version: 'v1', operations: v1Operations.swapMake },
  'custody-swap-take': { version: 'v1', operations: v1Operations.swapTake },
  'custody-liquidity-hub': { version: 'v1', operations: v1Operations.liquidityHub },
  'custody-sweep': { version: 'v1', operations: v1Operations.sweep },
  'custody-read': { version: 'v1', operations: v1Operations.read },
  'custody-policy': { version: 'v2', operations: policyOperations },
  'custody-portfolio': { version: 'v2', operations: portfolioOperations },
} as const satisfies Record<string, { version: ApiVersion; operations: Record<string, OperationSpec> }>;

/** A node type of {@link NODE_OPERATIONS}. */
export type OperationNodeType = keyof typeof NODE_OPERATIONS;

/**
 * The retry class of a declaration: `deduped` when it has a submission kind (lib/client/submission),
 * `read` when it is idempotent, else `sendOnce`.
 */
export function retryClass(spec: OperationSpec): RetryClass {
  if (spec.submission) return 'deduped';
  return spec.idempotent ? 'read' : 'sendOnce';
}

/** Every entry, in node then declaration order. Built once. */
export const REGISTRY: readonly RegistryEntry[] = Object.entries(NODE_OPERATIONS).flatMap(([node, group]) =>
  Object.entries(group.operations as Record<string, OperationSpec>).map(([operation, spec]) => ({ node, operation, version: group.version, spec, retry: retryClass(spec) })),
);

/**
 * The entry of a node's operation.
 * @throws {Error} when the node has no such operation (a programming error, not user input).
 */
export function registryEntry(node: string, operation: string): RegistryEntry {
  const e = REGISTRY.find((x) => x.node === node && x.operation === operation);
  if (!e) throw new Error(`registry: no operation ${node}.${operation}`);
  return e;
}

/**
 * The entries of one API version whose method and path template match: path templates compare
 * with their `{ids}` as wildcards, so `/company/c1/transfer` finds `POST /company/{company_id}/transfer`.
 * Several entries may share one route (e.g. `custody-read` re-declares reads of other nodes).
 */
export function entriesForRoute(version: ApiVersion, method: string, path: string): RegistryEntry[] {
  return REGISTRY.filter((e) => e.version === version && e.spec.method === method && routePattern(e.spec.path).test(path));
}

const patterns = new Map<string, RegExp>();

/** A regular expression matching a concrete path of a template (`{id}` = one segment). */
export function routePattern(template: string): RegExp {
  let re = patterns.get(template);
  if (!re) {
    re = new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}|\{\w+\}/g, '[^/]+') + '/?$');
    patterns.set(template, re);
  }
  return re;
}
