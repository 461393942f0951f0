/**
 * Message catalogs and help, the Node-RED way (docs/architecture.md "Generated and checked at
 * build", texts and help): every node type has `locales/en-US/<type>.json` (its catalog, with the
 * shared `common` texts merged in at build) and `locales/en-US/<type>.html` (its help) beside its
 * .js in dist. The texts of the custody-config dialog's scripts come from its catalog too
 * (`t("...")` and the node's `this._`).
 *
 * - statically: every `RED._` key in nodes/**\/*.ts (and every key the review sidebar tab,
 *   editor/src/custody-review.ts, reads with its `t`) is a literal that exists in the catalog it is
 *   read from, with exactly the placeholders its call passes; no catalog key is unused;
 * - in node-red-node-test-helper: the status and error texts the nodes set are the catalog's;
 * - in a started Node-RED (the pack installed in a user directory, loaded by the real registry):
 *   the catalog is registered under `<package>/<type>`, the status a node sets is its text, and
 *   the editor gets the catalogs (`/locales/<namespace>`, `/nodes/messages`) and the help (`/nodes`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import helper from 'node-red-node-test-helper';
import { catalogNamespace } from '../helpers/red-catalogs';
import { CONFIG, Inbox, TAB, loadCollecting, sendAndWait } from '../helpers/node-flows';
import { until } from '../helpers/support';
import { root, watchDebug } from '../helpers/red-process';
import { useRedProcess } from '../helpers/editor-kit';

helper.init(require.resolve('node-red'));

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const nodesSrc = path.join(root, 'nodes');
const nodesOut = path.join(root, 'dist', 'nodes');

/** Every node type with a catalog: all of package.json's. */
const TYPES = Object.keys(pkg['node-red'].nodes);

/**
 * The catalog keys the custody-config dialog reads (`t("key")` for `custody-config.key`,
 * `_("custody-config.key")`), and the prefixes of the keys it builds (`t("environments." + v)`):
 * in its .html and in the browser code of its Coordination section (editor/src/custody-coordination.ts,
 * which gets the dialog's `t`).
 */
function dialogKeys(): { keys: Set<string>; prefixes: string[] } {
  const html = [path.join(nodesSrc, 'custody-config', 'custody-config.html'), path.join(root, 'editor', 'src', 'custody-coordination.ts')].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  const keys = new Set<string>();
  for (const m of html.matchAll(/\bt\((["'])([\w.]+)\1(?!\s*\+)/g)) keys.add(`custody-config.${m[2]}`);
  for (const m of html.matchAll(/_\("(custody-config\.[\w.]+)"(?!\s*\+)/g)) keys.add(m[1]);
  const prefixes = [...html.matchAll(/\bt\((["'])([\w.]+\.)\1\s*\+/g)].map((m) => `custody-config.${m[2]}`);
  prefixes.push(...[...html.matchAll(/_\("(custody-config\.[\w.]+\.)"\s*\+/g)].map((m) => m[1]));
  return { keys, prefixes };
}

type Catalog = { [key: string]: string | Catalog };

/** A JSON file, parsed. */
const readJson = (file: string): Catalog => JSON.parse(fs.readFileSync(file, 'utf8'));

/** The catalog of `type` as built (its own texts plus `common`). */
const distCatalog = (type: string): Catalog => readJson(path.join(nodesOut, type, 'locales', 'en-US', `${type}.json`));

/** The shared texts' source. */
const commonSource = (): Catalog => readJson(path.join(nodesSrc, 'shared', 'locales', 'en-US', 'common.json'));

/** The node's own source catalog. */
const ownSource = (type: string): Catalog => readJson(path.join(nodesSrc, type, 'locales', 'en-US', `${type}.json`));

/** The dotted keys of a catalog's texts -> the texts. */
function leaves(catalog: Catalog, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(catalog)) {
    if (typeof v === 'string') out.set(prefix + k, v);
    else for (const [kk, vv] of leaves(v, `${prefix}${k}.`)) out.set(kk, vv);
  }
  return out;
}

/** The `__name__` placeholders of a catalog text. */
const placeholders = (text: string): string[] => [...text.matchAll(/__(\w+?)__/g)].map((m) => m[1]).sort();

/** A catalog text with its placeholders filled, as Node-RED's i18n does. */
const fill = (text: string, params: Record<string, string | number> = {}): string => text.replace(/__(\w+?)__/g, (_m, k: string) => String(params[k]));

/** The text of `key` in the built catalog of `type`. */
function text(type: string, key: string): string {
  const t = leaves(distCatalog(type)).get(key);
  assert.ok(t !== undefined, `${type}: no ${key}`);
  return t!;
}

/** The last status `node` set (the helper spies on Node.prototype.status, shared by all nodes). */
function lastStatus(node: any): Record<string, unknown> | undefined {
  const calls = node.status.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === node);
  return calls.length ? calls[calls.length - 1].args[0] : undefined;
}

/** The .ts files below `dir`. */
function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** One `RED._(...)` call of the sources. */
interface Lookup {
  /** file:line */
  where: string;
  /** The node folder, `shared` or a node type. */
  folder: string;
  /** The key, or undefined when the first argument is not a string literal. */
  key?: string;
  /** The property names of the params object literal (none: no params); undefined when not an object literal. */
  params?: string[];
}

/**
 * The editor scripts that read a node's catalog through a function of their own (which adds the
 * node set's namespace, as a node's `this._` does), by file: the node folder and the function's name.
 */
const EDITOR_LOOKUPS: Array<{ file: string; folder: string; fn: string }> = [
  { file: path.join(root, 'editor', 'src', 'custody-review.ts'), folder: 'custody-review', fn: 't' },
  { file: path.join(root, 'editor', 'src', 'approver-policy.ts'), folder: 'custody-approver', fn: 't' },
];

/** Every `RED._(...)` call in nodes/**\/*.ts, and every call of an {@link EDITOR_LOOKUPS} function, read with the TypeScript parser. */
function lookups(): Lookup[] {
  const out: Lookup[] = [];
  const files = [...tsFiles(nodesSrc).map((file) => ({ file, folder: path.relative(nodesSrc, file).split(path.sep)[0], fn: undefined as string | undefined })), ...EDITOR_LOOKUPS];
  for (const { file, folder, fn } of files) {
    const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const isLookup = (n: ts.CallExpression): boolean =>
      fn ? ts.isIdentifier(n.expression) && n.expression.text === fn : ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === '_' && n.expression.expression.getText(src) === 'RED';
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n) && isLookup(n)) {
        const [first, second] = n.arguments;
        const where = `${path.relative(root, file)}:${src.getLineAndCharacterOfPosition(n.getStart(src)).line + 1}`;
        const key = first && ts.isStringLiteralLike(first) ? first.text : undefined;
        let params: string[] | undefined = [];
        if (second) {
          params = ts.isObjectLiteralExpression(second)
            ? second.properties.map((p) => (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : '?'))
            : undefined;
        }
        out.push({ where, folder, key, params: params?.sort() });
      }
      ts.forEachChild(n, visit);
    };
    visit(src);
  }
  return out;
}

describe('message catalogs and help (locales/en-US)', function () {
  this.timeout(120000);

  describe('in dist, as built', () => {
    it('every node type has a catalog with its palette label, the common texts, and a non-empty help file; its .html has no help left', () => {
      assert.equal(TYPES.length, 23);
      const common = commonSource();
      for (const type of TYPES) {
        const dir = path.join(nodesOut, type, 'locales', 'en-US');
        const catalog = distCatalog(type);
        assert.deepEqual(Object.keys(catalog).sort(), ['common', type].sort(), `${type}: the top-level keys`);
        assert.deepEqual(catalog.common, common.common, `${type}: the common texts, merged from nodes/shared/locales`);
        assert.deepEqual(catalog[type], ownSource(type)[type], `${type}: its own texts`);
        assert.ok(typeof (catalog[type] as Catalog).paletteLabel === 'string' && (catalog[type] as Catalog).paletteLabel, `${type}: a palette label`);

        const help = fs.readFileSync(path.join(dir, `${type}.html`), 'utf8');
        const m = /^<script type="text\/html" data-help-name="([^"]+)">([\s\S]*)<\/script>\n$/.exec(help);
        assert.ok(m, `${type}: the help file is one help block`);
        assert.equal(m![1], type);
        assert.ok(m![2].replace(/<[^>]*>/g, '').trim().length > 200, `${type}: the help says something`);
        assert.doesNotMatch(help, /custody-help|\$\{/, `${type}: its help fragments are expanded`);

        const html = fs.readFileSync(path.join(nodesOut, type, `${type}.html`), 'utf8');
        assert.doesNotMatch(html, /data-help-name/, `${type}: the .html keeps the dialog and the registerType only`);
      }
    });

    it('the palette label of the catalog is the one the editor shows (the registerType names it, or reads it from the catalog)', () => {
      for (const type of TYPES) {
        const label = text(type, `${type}.paletteLabel`);
        const html = fs.readFileSync(path.join(nodesOut, type, `${type}.html`), 'utf8');
        const literal = /paletteLabel:\s*(["'])(.*?)\1/.exec(html);
        if (literal) assert.equal(literal[2], label, `${type}: paletteLabel`);
        else assert.ok(html.includes(`_("${type}.paletteLabel")`) || html.includes(`_('${type}.paletteLabel')`), `${type}: the registerType reads ${type}.paletteLabel`);
      }
    });
  });

  describe('the sources against the catalogs (static)', () => {
    const all = lookups();

    it('every RED._ key is a literal of the catalog it is read from, called with exactly the placeholders of its text', () => {
      assert.ok(all.length >= 50, `found ${all.length} look-ups`);
      const common = leaves(commonSource());
      for (const l of all) {
        assert.ok(l.key !== undefined, `${l.where}: the key is a string literal (so it can be checked)`);
        assert.ok(l.params !== undefined, `${l.where}: the params are an object literal`);
        const key = l.key!;
        assert.ok(!key.includes(':'), `${l.where}: ${key} names no other namespace`);
        let catalogs: string[];
        if (key.startsWith('common.')) {
          assert.ok(common.has(key), `${l.where}: ${key} is in nodes/shared/locales/en-US/common.json`);
          catalogs = l.folder === 'shared' ? TYPES : [l.folder];
        } else {
          assert.ok(l.folder !== 'shared', `${l.where}: shared code reads common.* keys only (it runs in every node's namespace)`);
          assert.ok(key.startsWith(`${l.folder}.`), `${l.where}: ${key} is in the ${l.folder} section`);
          catalogs = [l.folder];
        }
        for (const type of catalogs) {
          assert.ok(TYPES.includes(type), `${l.where}: ${type} has a catalog`);
          const t = leaves(distCatalog(type)).get(key);
          assert.ok(t !== undefined, `${l.where}: ${key} is in dist/nodes/${type}/locales/en-US/${type}.json`);
          assert.deepEqual(l.params, placeholders(t!), `${l.where}: ${key} is called with the placeholders of "${t}"`);
        }
      }
    });

    it('no catalog key is unused (the palette label is the editor\'s)', () => {
      const used = new Set(all.map((l) => `${l.folder === 'shared' ? 'shared' : l.folder}|${l.key}`));
      const usedAnywhere = new Set(all.map((l) => l.key));
      for (const key of leaves(commonSource()).keys()) assert.ok(usedAnywhere.has(key), `${key} (common.json) is used`);
      const dialog = dialogKeys();
      for (const type of TYPES) {
        for (const key of leaves(ownSource(type)).keys()) {
          if (key === `${type}.paletteLabel`) continue;
          const inDialog = type === 'custody-config' && (dialog.keys.has(key) || dialog.prefixes.some((p) => key.startsWith(p)));
          assert.ok(used.has(`${type}|${key}`) || inDialog, `${key} (${type}.json) is used in nodes/${type}`);
        }
      }
    });

    it('every key the custody-config dialog reads is in its catalog', () => {
      const own = leaves(ownSource('custody-config'));
      const dialog = dialogKeys();
      assert.ok(dialog.keys.size >= 30, `found ${dialog.keys.size} keys`);
      for (const key of dialog.keys) assert.ok(own.has(key), `${key} is in nodes/custody-config/locales/en-US/custody-config.json`);
      for (const prefix of dialog.prefixes) assert.ok([...own.keys()].some((k) => k.startsWith(prefix)), `texts under ${prefix}`);
    });
  });

  describe('in node-red-node-test-helper: the texts the nodes set are the catalog\'s', () => {
    const inbox: Inbox = new Map();
    let auditDir: string;
    before(() => {
      auditDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-i18n-audit-'));
    });
    afterEach(() => helper.unload());
    after(() => fs.rmSync(auditDir, { recursive: true, force: true }));

    it('the status of a node without a connection (the common texts, in the node\'s own namespace)', async () => {
      const nodes = [require('../../nodes/custody-request/custody-request'), require('../../nodes/custody-hub-feed/custody-hub-feed')];
      await loadCollecting(nodes, [TAB, { id: 'rq', z: 'tab', type: 'custody-request', wires: [[]], x: 100, y: 100 }, { id: 'hf', z: 'tab', type: 'custody-hub-feed', wires: [[]], x: 100, y: 100 }], {}, inbox);
      for (const [id, type] of [['rq', 'custody-request'], ['hf', 'custody-hub-feed']]) {
        const node = helper.getNode(id);
        const status = await until(() => lastStatus(node), `the status of ${id}`);
        assert.deepEqual(status, { fill: 'red', shape: 'ring', text: `connection: ${text(type, 'common.errors.noConnection')}` });
      }
    });

    it('the status of the approver (its own status texts, with placeholders)', async () => {
      const nodes = [require('../../nodes/custody-config/custody-config'), require('../../nodes/custody-approver/custody-approver')];
      const flow = [TAB, { ...CONFIG, z: 'tab' }, { id: 'ap', z: 'tab', type: 'custody-approver', connection: 'cfg', clientId: 'c1', rules: [], dryRun: true, auditFile: path.join(auditDir, 'a.jsonl'), wires: [[], [], []], x: 100, y: 100 }];
      await loadCollecting(nodes, flow, {}, inbox);
      const node = helper.getNode('ap');
      const status = await until(() => lastStatus(node), 'the approver status');
      assert.deepEqual(status, { fill: 'yellow', shape: 'dot', text: fill(text('custody-approver', 'custody-approver.status.dryRunCounts'), { approved: 0, rejected: 0, held: 0 }) });
    });

    it('an error the track node refuses input with (its own error texts; the field and EINPUT stay)', async () => {
      const nodes = [require('../../nodes/custody-config/custody-config'), require('../../nodes/custody-track/custody-track'), require('@node-red/nodes/core/common/25-catch.js')];
      const flow = [
        TAB,
        { ...CONFIG, z: 'tab' },
        { id: 'op', z: 'tab', type: 'custody-track', connection: 'cfg', kind: 'transfer', wires: [['out'], []], x: 100, y: 100 },
        { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
        { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
        { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
      ];
      await loadCollecting(nodes, flow, {}, inbox);
      const { caught } = await sendAndWait(inbox, { payload: { company_id: 'c1' } });
      assert.equal(caught.error.code, 'EINPUT');
      // Node-RED's Catch node puts the Error's name before its message.
      assert.equal(caught.error.message, `ValidationError: tx_id: ${text('custody-track', 'custody-track.errors.txIdRequired')}`);
    });
  });

  describe('in a started Node-RED', () => {
    const FLOW = [
      { id: 'tab', type: 'tab', label: 'i18n' },
      { id: 'rq', z: 'tab', type: 'custody-request', name: '', method: '', path: '', body: 'payload', x: 200, y: 100, wires: [[]] },
    ];
    const red = useRedProcess({ prefix: 'cf-i18n-', flows: JSON.stringify(FLOW) });

    it('registers each catalog under <package>/<type>: /locales/<namespace> and /nodes/messages serve it as built', async () => {
      const messages = await (await fetch(`${red().base}/nodes/messages?lng=en-US`, { headers: { accept: 'application/json' } })).json();
      for (const type of TYPES) {
        const namespace = `${pkg.name}/${type}`;
        assert.equal(catalogNamespace(path.join(nodesOut, type, `${type}.js`)), namespace, 'the namespace the helper tests use is the runtime\'s');
        const res = await fetch(`${red().base}/locales/${namespace}?lng=en-US`, { headers: { accept: 'application/json' } });
        assert.equal(res.status, 200, namespace);
        assert.deepEqual(await res.json(), distCatalog(type), `${namespace}: /locales`);
        assert.deepEqual(messages[namespace], distCatalog(type), `${namespace}: /nodes/messages`);
      }
    });

    it('the status a node sets is the text of its catalog', async () => {
      const status = new Map<string, { text?: string; fill?: string }>();
      const { ws } = await watchDebug(red().base, status);
      try {
        const s = await until(() => status.get('rq'), 'the status of the request node');
        assert.equal(s.text, `connection: ${text('custody-request', 'common.errors.noConnection')}`);
        assert.equal(s.fill, 'red');
      } finally {
        ws.close();
      }
    });

    it('the editor gets every node\'s help from locales/en-US/<type>.html', async () => {
      const res = await fetch(`${red().base}/nodes?lng=en-US`, { headers: { accept: 'text/html' } });
      assert.equal(res.status, 200);
      const html = await res.text();
      for (const type of TYPES) {
        const help = fs.readFileSync(path.join(nodesOut, type, 'locales', 'en-US', `${type}.html`), 'utf8');
        assert.ok(html.includes(help), `${type}: its help is served`);
        assert.equal(html.split(`data-help-name="${type}"`).length, 2, `${type}: one help block`);
      }
    });
  });
});
