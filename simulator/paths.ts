/**
 * The simulator's path prefixes, in the bottom layer so that every router, the feeds and the
 * entry point take them from one place (none of them imports another router for a constant).
 * Source: spec section 9 (the version is part of the path).
 */

/** Path prefix of the v1 partner API (spec section 9: `/api/v1/p`); the websocket feeds live below it too. */
export const API_PREFIX = '/api/v1/p';

/** Path prefix of the v2 workspace calls (spec section 9: `/api/v2`). */
export const V2_PREFIX = '/api/v2';

/** Path prefix of the simulator-only control endpoints (control.ts); not part of the API. */
export const CONTROL_PREFIX = '/_simulator';

/** Path prefix of the v2 control endpoints (v2/routes.ts); not part of the API. */
export const V2_CONTROL_PREFIX = '/_simulator/v2';
