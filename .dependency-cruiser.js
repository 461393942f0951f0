/**
 * The dependency rules of lib, nodes and the simulator (dependency-cruiser; checked by
 * test/lib/architecture.test.ts in `npm test`, or by hand:
 * `npx depcruise --config .dependency-cruiser.js lib nodes simulator`). The layers are drawn in
 * docs/architecture.md.
 *
 * lib is in one-way layers; each imports only the layers below it:
 *   0 lib/support   durable files, keyed locks, expiring id sets (nothing of the API)
 *   0 lib/audit     the hash-chained audit log (docs/audit.md), used by the approver and the review;
 *                   it imports lib/support only
 *   1 lib/api       the API's vocabulary: operation declarations, schemas, limits, kinds, states
 *   2 lib/request   preparing a request: validation, path ids, response checks
 *   3 lib/client    the executor: signing, transport, clients, calls, submission, asset list
 *   4 services      lib/actions (approving or rejecting an action), lib/approver, lib/coordination,
 *                   lib/feeds, lib/tracking, lib/review
 * lib/index.ts (the public API: layers 0 to 3) imports no service, and nothing in lib imports it;
 * each service has its entry, lib/<service>/index.ts. The simulator may import layers 0 to 3.
 * nodes/ imports lib through those entries only, a service's entry for its types only (the code is
 * required on first use by nodes/shared/services.ts); nothing imports nodes/. lib knows no
 * Node-RED. Type imports count (tsPreCompilationDeps).
 */
/** The services (layer 4): each has one entry, `lib/<service>/index.ts` (package.json "exports" `./<service>`). */
const SERVICES = '(actions|approver|coordination|feeds|tracking|review)';
const LAYERS = ['(support|audit)', 'api', 'request', 'client', SERVICES];

/**
 * A forbidden import (an error): no module whose path matches `from` imports one whose path
 * matches `to` (each a regular expression, or a list of them: any matches).
 */
const forbidImports = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } });

/** A rule per layer: nothing above it (and not lib/index.ts). */
const layerRules = LAYERS.map((layer, i) =>
  forbidImports(`lib-layer-${i}-imports-only-below`, `lib layer ${i} (lib/${layer}/) imports only the layers below it, never lib/index.ts`, `^lib/${layer}/`, [
    ...LAYERS.slice(i + 1).map((above) => `^lib/${above}/`),
    '^lib/index\\.ts$',
  ]),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycle, type imports included: every module can be read with what it imports alone',
      severity: 'error',
      from: { path: '^(lib|nodes|simulator)/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'audit-imports-only-support',
      comment: 'lib/audit is infrastructure beside lib/support: it imports lib/support only',
      severity: 'error',
      from: { path: '^lib/audit/' },
      to: { path: '^lib/', pathNot: ['^lib/(support|audit)/'] },
    },
    {
      name: 'lib-files-in-layers',
      comment: 'every lib module is in a layer folder, but lib/index.ts',
      severity: 'error',
      from: { path: '^lib/', pathNot: ['^lib/(support|audit|api|request|client|actions|approver|coordination|feeds|tracking|review)/', '^lib/index\\.ts$'] },
      to: {},
    },
    forbidImports('review-not-through-approver', 'the review queue and the approver share lib/actions and lib/audit, not each other', '^lib/review/', '^lib/approver/'),
    forbidImports('lib-index-loads-no-service', 'the package root (lib/index.ts) is the API and the client: a program or a node that needs a service loads its entry', '^lib/index\\.ts$', `^lib/${SERVICES}/`),
    forbidImports('nothing-imports-nodes', 'lib and the simulator never import nodes/ (the Node-RED nodes are the top)', '^(lib|simulator)/', '^nodes/'),
    forbidImports('simulator-imports-lib-layers-0-3', 'the simulator imports lib/support, lib/api, lib/request and lib/client only', '^simulator/', ['^lib/(actions|approver|coordination|feeds|tracking|review)/', '^lib/index\\.ts$']),
    {
      name: 'nodes-import-lib-entries-only',
      comment: 'nodes/ imports lib only through its public entries: lib/index.ts (the API and the client) and one index.ts per service',
      severity: 'error',
      from: { path: '^nodes/' },
      to: { path: '^lib/', pathNot: [`^lib/index\\.ts$`, `^lib/${SERVICES}/index\\.ts$`] },
    },
    {
      name: 'nodes-load-services-lazily',
      comment: 'a node file imports a service entry for its types only; the code is required by nodes/shared/services.ts when a node needs it, so an empty flow loads no service',
      severity: 'error',
      from: { path: '^nodes/', pathNot: '^nodes/shared/services\\.ts$' },
      to: { path: `^lib/${SERVICES}/`, dependencyTypesNot: ['type-only', 'type-import'] },
    },
    forbidImports('lib-knows-no-node-red', 'lib is a library of the Custody Partner API: no Node-RED module', '^lib/', '(^|/)node_modules/(@types/)?(node-red|@node-red|node-red-[^/]+)/'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
