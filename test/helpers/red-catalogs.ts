/**
 * The pack's message catalogs in node-red-node-test-helper. The helper hands every node module
 * a `RED` whose `_` is `v => v` (the key itself); imported for its effect, this module makes
 * `helper.load` hand each node module of this pack the `RED._` the real runtime hands it:
 *
 * - its catalog, `locales/` beside the node's .js file, registered with @node-red/util's i18n
 *   under the namespace Node-RED's registry gives it: the node set's id `<package>/<set>`, the
 *   set being the node's entry in package.json `node-red.nodes` (@node-red/registry loader.js
 *   `loadNodeLocales`: `registerMessageCatalog(node.id, <dir>/locales, <basename>.json)`);
 * - a `_` that prefixes a key without `:` with that namespace (registry util.js `createNodeApi`).
 *
 * The catalogs are read from dist as built, never changed. Any other module (Node-RED's core
 * nodes, a test's probe node) is loaded as the helper loads it. test/nodes/i18n.test.ts checks this
 * namespace against a started Node-RED, where the real registry loads the pack.
 */
import path from 'node:path';
import helper from 'node-red-node-test-helper';
import type { NodeAPI } from 'node-red';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { i18n } = require('@node-red/util') as { i18n: I18n };

/** The part of @node-red/util's i18n used here. */
interface I18n {
  init(settings: { lang?: string }): void;
  registerMessageCatalog(namespace: string, dir: string, file: string): Promise<void>;
  _(key: string, params?: Record<string, unknown>): string;
}

/** The project root (the compiled tests run from dist/test). */
const root = path.resolve(__dirname, '..', '..', '..');
const pkg = require(path.join(root, 'package.json')) as { name: string; 'node-red': { nodes: Record<string, string> } };

/** Absolute path of each node set's .js file -> the set's name (its key in package.json `node-red.nodes`). */
const setByFile = new Map(Object.entries(pkg['node-red'].nodes).map(([name, file]) => [path.join(root, file), name]));

/**
 * The namespace Node-RED registers the catalog of the node set in `file` under: `<package>/<set>`.
 * @param file the absolute path of a node's .js file.
 * @returns the namespace, or undefined when `file` is not one of the pack's node sets.
 */
export function catalogNamespace(file: string): string | undefined {
  const set = setByFile.get(file);
  return set === undefined ? undefined : `${pkg.name}/${set}`;
}

/** Catalog registrations, by namespace (each registered once per process). */
const registered = new Map<string, Promise<void>>();

/**
 * Register the catalog of the node set in `file` as Node-RED's registry does, once.
 * @param file the absolute path of a node's .js file, one of the pack's node sets.
 * @returns the namespace.
 */
export async function registerCatalog(file: string): Promise<string> {
  const namespace = catalogNamespace(file);
  if (!namespace) throw new Error(`${file} is not a node set of ${pkg.name}`);
  // The runtime initialises i18n in RED.init, which the helper never calls (a second init is a no-op).
  i18n.init({ lang: 'en-US' });
  if (!registered.has(namespace)) {
    registered.set(namespace, i18n.registerMessageCatalog(namespace, path.join(path.dirname(file), 'locales'), path.basename(file).replace(/\.[^.]+$/, '.json')));
  }
  await registered.get(namespace);
  return namespace;
}

/**
 * A look-up in the catalog of `namespace`, as a node module's `RED._` does it.
 * @param namespace the node set's namespace, see {@link catalogNamespace}.
 * @param key a catalog key, e.g. `common.status.requesting`; a key with `:` names its namespace.
 * @param params the values of the text's `__name__` placeholders.
 */
export function translate(namespace: string, key: string, params?: Record<string, unknown>): string {
  return i18n._(key.includes(':') ? key : `${namespace}:${key}`, params);
}

type NodeModule = (RED: NodeAPI) => unknown;

/** `mod` itself, or for a node module of this pack, one calling it with its own `RED._`. */
async function withCatalog(mod: unknown): Promise<unknown> {
  if (typeof mod !== 'function') return mod;
  const file = Object.values(require.cache).find((m) => m?.exports === mod)?.filename;
  if (!file || !catalogNamespace(file)) return mod;
  const namespace = await registerCatalog(file);
  return (RED: NodeAPI) => (mod as NodeModule)(Object.assign(Object.create(RED), { _: (key: string, params?: Record<string, unknown>) => translate(namespace, key, params) }));
}

const load = helper.load.bind(helper);
/** helper.load with each of the pack's node modules given its catalog (see the module comment). */
(helper as { load: unknown }).load = async (testNode: unknown, testFlow: unknown, testCredentials?: unknown, cb?: unknown): Promise<unknown> => {
  const mods = await Promise.all((Array.isArray(testNode) ? testNode : [testNode]).map(withCatalog));
  return (load as (...args: unknown[]) => Promise<unknown>)(mods, testFlow, testCredentials, cb);
};
