/**
 * The simulator's modules import only downward: entry -> routers (HTTP and websocket glue) ->
 * shared HTTP glue -> domain (one module per resource) -> state -> base. A module may import its
 * own layer (except the routers, which stand side by side and never import one another) and any
 * layer below; never a layer above. Below the HTTP glue nothing imports router (or express), ws or node:http.
 * The imports are read from the TypeScript sources, so a new module must be placed in a layer here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

/** Source folder of the simulator (the tests run from dist/test). */
const SIM = path.resolve(__dirname, '..', '..', '..', 'simulator');

/** The layers, bottom first. `peers`: whether modules of the layer may import one another. */
const LAYERS: ReadonlyArray<{ name: string; peers: boolean; files: readonly string[] }> = [
  { name: 'base', peers: true, files: ['words.ts', 'ids.ts', 'errors.ts', 'assets.ts', 'paths.ts', 'route-table.ts'] },
  {
    name: 'state',
    peers: true,
    files: [
      'model/index.ts',
      'model/state.ts',
      'model/network.ts',
      'model/custody.ts',
      'model/ledger.ts',
      'model/exchanges.ts',
      'model/v2.ts',
      'journal.ts',
      'upgrade.ts',
      'store.ts',
      'expiry-heap.ts',
      'indexes.ts',
      'engine.ts',
      'v2/state.ts',
    ],
  },
  {
    name: 'domain',
    peers: true,
    files: [
      'network.ts',
      'network/users.ts',
      'network/companies.ts',
      'network/trusted-parties.ts',
      'network/core-clients.ts',
      'network/custody-groups.ts',
      'network/wallets.ts',
      'network/funds.ts',
      'network/deposits.ts',
      'network/ledger.ts',
      'custody.ts',
      'transactions.ts',
      'withdrawals.ts',
      'swaps.ts',
      'exchanges.ts',
      'readonly.ts',
      'demo.ts',
      'auth.ts',
      'partners.ts',
      'v2/workspace.ts',
    ],
  },
  { name: 'http glue', peers: true, files: ['http.ts', 'validation.ts', 'response-check.ts', 'faults.ts'] },
  { name: 'routers', peers: false, files: ['routes.ts', 'control.ts', 'feeds.ts', 'v2/routes.ts'] },
  { name: 'entry', peers: true, files: ['index.ts', 'shared.ts', 'cli.ts'] },
];

/** Packages of the HTTP and websocket glue, refused below the `http glue` layer. */
const GLUE_PACKAGES = ['router', 'express', 'ws', 'node:http', 'node:https', 'http', 'https'];

/** Every .ts file below the simulator folder, relative, with `/`. */
function sources(dir = SIM): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    if (d.isDirectory()) return sources(full);
    return d.name.endsWith('.ts') ? [path.relative(SIM, full).split(path.sep).join('/')] : [];
  });
}

/** The module specifiers a source imports or re-exports (static `import`/`export ... from`, `import()` and `require()`). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(SIM, file), 'utf8');
  const found = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms),
    ...text.matchAll(/^\s*import\s+'([^']+)'/gm),
    ...text.matchAll(/\b(?:require|import)\(\s*'([^']+)'\s*\)/g),
  ];
  return found.map((m) => m[1]);
}

/** The layer index of a simulator source, or -1. */
function layerOf(file: string): number {
  return LAYERS.findIndex((l) => l.files.includes(file));
}

/**
 * What is wrong with the imports `specs` of the simulator source `file`: an upward import, an
 * import between two routers, a glue package below the glue, an import of nodes/ or test/, or of
 * a module in no layer. Empty when all is well.
 */
function layeringProblems(file: string, specs: readonly string[]): string[] {
  const problems: string[] = [];
  const from = layerOf(file);
  const glue = LAYERS.findIndex((l) => l.name === 'http glue');
  for (const spec of specs) {
    if (!spec.startsWith('.')) {
      if (from < glue && GLUE_PACKAGES.includes(spec)) problems.push(`${file} (${LAYERS[from].name}) imports ${spec}`);
      continue;
    }
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    if (/^\.\.\/(nodes|test)\//.test(target)) {
      problems.push(`${file} imports ${target}`);
      continue;
    }
    if (target.startsWith('../')) continue; // lib
    const toFile = layerOf(`${target}.ts`) >= 0 ? `${target}.ts` : `${target}/index.ts`;
    const to = layerOf(toFile);
    if (to < 0) problems.push(`${file} imports ${spec}, which is in no layer`);
    else if (to > from) problems.push(`${file} (${LAYERS[from].name}) imports ${toFile} (${LAYERS[to].name}): upward`);
    else if (to === from && !LAYERS[from].peers && toFile !== file) problems.push(`${file} imports ${toFile}: both are ${LAYERS[from].name}`);
  }
  return problems;
}

describe('simulator layering: modules import only downward', () => {
  it('places every simulator source in exactly one layer', () => {
    const all = sources();
    const placed = LAYERS.flatMap((l) => l.files);
    assert.deepEqual(all.filter((f) => layerOf(f) < 0), [], 'sources in no layer (add them to LAYERS)');
    assert.deepEqual(placed.filter((f) => !all.includes(f)), [], 'LAYERS names files that do not exist');
    assert.equal(new Set(placed).size, placed.length, 'a file is in two layers');
  });

  it('finds no upward import, no import between routers, no glue package below the glue, no import of nodes/', () => {
    assert.deepEqual(
      sources().flatMap((f) => layeringProblems(f, importsOf(f))),
      [],
    );
  });

  it('the check catches each kind of problem', () => {
    assert.match(layeringProblems('network.ts', ['./routes']).join(), /network\.ts \(domain\) imports routes\.ts \(routers\): upward/);
    assert.match(layeringProblems('control.ts', ['./routes']).join(), /control\.ts imports routes\.ts: both are routers/);
    assert.match(layeringProblems('readonly.ts', ['express']).join(), /readonly\.ts \(domain\) imports express/);
    assert.match(layeringProblems('network.ts', ['router']).join(), /network\.ts \(domain\) imports router/);
    assert.match(layeringProblems('v2/state.ts', ['../v2/routes']).join(), /upward/);
    assert.match(layeringProblems('engine.ts', ['../nodes/shared/x']).join(), /imports \.\.\/nodes\/shared\/x/);
    assert.deepEqual(layeringProblems('routes.ts', ['./http', './network', './paths', '../lib/registry', 'router']), []);
  });
});
