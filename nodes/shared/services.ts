/**
 * The lib services, each loaded on first use (docs/architecture.md, "The entries"). A node file
 * imports a service entry (`lib/approver`, `lib/review`, `lib/tracking`, `lib/feeds`,
 * `lib/coordination`) for its types only (`import type`); the code is required here, by the node
 * that needs it when it is constructed, or by the config node at a connection's first use of
 * coordination or of a feed. So loading the pack, or a flow without those nodes, loads none of the
 * services (the footprint group of docs/performance.md; test/lib/architecture.test.ts checks it
 * through `require.cache`). Node caches each module: only the first call of each loads anything.
 */
/* eslint-disable @typescript-eslint/no-require-imports */

/** lib/approver: the automated approver (custody-approver's constructor). */
export const approverLib = (): typeof import('../../lib/approver') => require('../../lib/approver') as typeof import('../../lib/approver');

/** lib/review: the review queue (custody-review's constructor and its admin routes' handlers). */
export const reviewLib = (): typeof import('../../lib/review') => require('../../lib/review') as typeof import('../../lib/review');

/** lib/tracking: the tracker and its store (custody-track's constructor). */
export const trackingLib = (): typeof import('../../lib/tracking') => require('../../lib/tracking') as typeof import('../../lib/tracking');

/** lib/feeds: the websocket feeds (a connection's first feed user; custody-coreclient-feed's constructor). */
export const feedsLib = (): typeof import('../../lib/feeds') => require('../../lib/feeds') as typeof import('../../lib/feeds');

/** lib/coordination: Redis coordination (a connection whose coordination is `redis`; the dialog's Redis test). */
export const coordinationLib = (): typeof import('../../lib/coordination') => require('../../lib/coordination') as typeof import('../../lib/coordination');
