/**
 * The shape of the code: the dependency rules of .dependency-cruiser.js (no import cycle, type
 * imports included; lib in one-way layers; nothing in lib or the simulator imports nodes/; the
 * simulator imports lib layers 0 to 3; lib imports no Node-RED) hold for lib, nodes and the
 * simulator, and lib's code names no Node-RED node type (the palette is the nodes' concern); no
 * source file of lib, nodes or the simulator is over 600 lines; the package's public entry points
 * (package.json "exports": the root for the API and the client, one entry per service) are what a
 * program may require, and nothing deeper, and the root loads no service. A started Node-RED with
 * the pack and an empty flow loads no module of a service (nor ioredis), seen through the
 * `require.cache` of the process (test/helpers/loaded-modules.ts); a deployed custody-approver
 * loads lib/approver.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { deployFlows, probedRed, stopAndReadModules, type ProbedRed } from '../helpers/loaded-modules';
import { sleep, watchDebug } from '../helpers/red-process';

const root = path.resolve(__dirname, '..', '..', '..');

/** A compiled module of a lib service: loaded only by what uses the service (nodes/shared/services.ts). */
const SERVICE_MODULE = /[\\/]dist[\\/]lib[\\/](approver|review|coordination|tracking|feeds|actions)[\\/]/;

/** A code module of the ioredis package (loaded only when a coordinator connects). */
const IOREDIS_MODULE = /[\\/]node_modules[\\/]ioredis[\\/].*\.js$/;

/** One violation in dependency-cruiser's JSON report. */
interface Violation {
  rule: { name: string; severity: string };
  from: string;
  to: string;
  cycle?: Array<{ name: string } | string>;
}

/** Run dependency-cruiser's command line with the project's rules and return its violations. */
function cruise(paths: string[]): Promise<Violation[]> {
  // The package is ES modules only and exports no subpath: its command line is run by its path.
  const cli = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, '--config', '.dependency-cruiser.js', '--output-type', 'json', ...paths], { cwd: root, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      // The command exits non-zero when there are violations; the JSON report is on stdout either way.
      try {
        resolve((JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations);
      } catch {
        reject(new Error(`dependency-cruiser gave no report: ${error?.message ?? ''}\n${stderr}`));
      }
    });
  });
}

/** A violation as one line: the rule, the import, and the cycle when there is one. */
function violationText(v: Violation): string {
  const cycle = v.cycle?.length ? ` (cycle: ${[v.from, ...v.cycle.map((c) => (typeof c === 'string' ? c : c.name))].join(' -> ')})` : '';
  return `${v.rule.name}: ${v.from} -> ${v.to}${cycle}`;
}

/** Every .ts file below `dir`. */
function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The text of every string and template literal of a source file (comments are not tokens of the tree). */
function literals(file: string): Array<{ text: string; line: number }> {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: Array<{ text: string; line: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      out.push({ text: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('architecture', function () {
  this.timeout(180_000);

  it('lib, nodes and the simulator keep the dependency rules of .dependency-cruiser.js', async () => {
    const violations = await cruise(['lib', 'nodes', 'simulator']);
    assert.equal(violations.length, 0, `${violations.length} violations of .dependency-cruiser.js:\n${violations.map(violationText).join('\n')}`);
  });

  it('lib names no Node-RED node type in its code (comments may)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
    const types = Object.keys(pkg['node-red'].nodes);
    assert.ok(types.length > 0);
    const nodeType = new RegExp(`(^|[^a-z0-9-])(${types.map((t) => t.replace(/-/g, '\\-')).join('|')})(?![a-z0-9-])`);
    const found = tsFiles(path.join(root, 'lib')).flatMap((file) =>
      literals(file)
        .filter((l) => nodeType.test(l.text))
        .map((l) => `${path.relative(root, file)}:${l.line}: ${JSON.stringify(l.text)}`),
    );
    assert.equal(found.length, 0, `${found.length} node-type literals in lib:\n${found.join('\n')}`);
  });

  it('no source file of lib, nodes or the simulator is over 600 lines', () => {
    const sources = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        return e.isDirectory() ? sources(p) : /\.(ts|js|html|eta)$/.test(e.name) ? [p] : [];
      });
    const long = ['lib', 'nodes', 'simulator']
      .flatMap((d) => sources(path.join(root, d)))
      .map((file) => ({ file: path.relative(root, file), lines: fs.readFileSync(file, 'utf8').split('\n').length }))
      .filter((f) => f.lines > 600);
    assert.deepEqual(long, []);
  });

  it('a program requires the library, each service and the simulator by the package name ("exports"), and nothing deeper; the root loads no service', () => {
    // An installed copy as npm links it: node_modules/@custodyflow/node-red-custody -> this checkout.
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    /** A name each entry exports (a class or a function), by its subpath in "exports". */
    const named: Record<string, string> = {
      '.': 'CustodyClient',
      './approver': 'Approver',
      './review': 'ReviewQueue',
      './tracking': 'Tracker',
      './feeds': 'CoreClientFeed',
      './coordination': 'Coordinator',
      './actions': 'readCallOutcome',
      './simulator': 'Simulator',
    };
    assert.deepEqual(Object.keys(pkg.exports).filter((k) => k !== './package.json').sort(), Object.keys(named).sort());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-exports-'));
    try {
      fs.mkdirSync(path.join(dir, 'node_modules', '@custodyflow'), { recursive: true });
      fs.symlinkSync(root, path.join(dir, 'node_modules', '@custodyflow', 'node-red-custody'), 'dir');
      const probe = `
        const lib = require('@custodyflow/node-red-custody');
        const services = Object.keys(require.cache).filter((m) => ${SERVICE_MODULE}.test(m));
        const named = ${JSON.stringify(named)};
        const entries = {};
        for (const [sub, name] of Object.entries(named)) entries[sub] = typeof require('@custodyflow/node-red-custody' + sub.slice(1))[name];
        let deep = 'required';
        try { require('@custodyflow/node-red-custody/dist/lib/request/prepare.js'); } catch (e) { deep = e.code; }
        console.log(JSON.stringify({ entries, services, rootApprover: typeof lib.Approver, internal: typeof lib.tooLongError, deep }));`;
      const out = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: dir, encoding: 'utf8' })) as Record<string, unknown>;
      assert.deepEqual(out, {
        entries: Object.fromEntries(Object.keys(named).map((k) => [k, 'function'])),
        services: [],
        rootApprover: 'undefined',
        internal: 'undefined',
        deep: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('an empty flow loads no service of lib', function () {
  this.timeout(120_000);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-loaded-'));
  const started: ProbedRed[] = [];
  after(async () => {
    for (const p of started) await p.red.stop();
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  /** Start a Node-RED with the pack and an empty flow, the module probe preloaded. */
  async function startEmpty(name: string): Promise<ProbedRed> {
    const probed = probedRed(path.join(outDir, `${name}.txt`), { prefix: 'cf-loaded-red-' });
    started.push(probed);
    await probed.red.start();
    return probed;
  }

  it('a Node-RED started with the pack and an empty flow loads lib/index.ts and no approver, review, coordination, tracking, feed or actions module, nor ioredis', async () => {
    const modules = await stopAndReadModules(await startEmpty('empty'));
    // The probe saw the pack registered: every node module, and lib's root.
    assert.ok(modules.some((m) => /[\\/]dist[\\/]nodes[\\/]custody-approver[\\/]custody-approver\.js$/.test(m)), 'the approver node module is in the list');
    assert.ok(modules.some((m) => /[\\/]dist[\\/]nodes[\\/]custody-review[\\/]custody-review\.js$/.test(m)), 'the review node module is in the list');
    assert.ok(modules.some((m) => /[\\/]dist[\\/]lib[\\/]index\.js$/.test(m)), 'lib/index.js is in the list');
    assert.deepEqual(modules.filter((m) => SERVICE_MODULE.test(m)), [], 'no service module is loaded');
    assert.deepEqual(modules.filter((m) => IOREDIS_MODULE.test(m)), [], 'ioredis is not loaded');
  });

  it('deploying a flow with a custody-approver loads lib/approver (and, with no coordination, not ioredis)', async () => {
    const probed = await startEmpty('approver');
    const status = new Map<string, { text?: string; fill?: string }>();
    const { ws } = await watchDebug(probed.red.base, status);
    try {
      await deployFlows(probed.red, [
        { id: 'tab', type: 'tab', label: 'loaded modules' },
        // A connection that is never called: the approver decides nothing until an action comes.
        { id: 'cfg', type: 'custody-config', name: 'unused', environment: 'custom', baseUrl: 'http://127.0.0.1:9', signingMode: 'timestamp' },
        { id: 'approver', z: 'tab', type: 'custody-approver', connection: 'cfg', clientId: 'client-1', rules: [], defaultDecision: 'hold', x: 300, y: 100, wires: [[], [], []] },
      ]);
      // The approver shows its counts once it has opened its audit file: it was constructed.
      const deadline = Date.now() + 30_000;
      while (!/held/.test(status.get('approver')?.text ?? '')) {
        if (Date.now() > deadline) throw new Error(`approver status: ${JSON.stringify(status.get('approver'))}\n${probed.red.log.slice(-2000)}`);
        await sleep(100);
      }
    } finally {
      ws.close();
    }
    const modules = await stopAndReadModules(probed);
    assert.ok(modules.some((m) => /[\\/]dist[\\/]lib[\\/]approver[\\/]index\.js$/.test(m)), 'lib/approver is loaded');
    assert.deepEqual(modules.filter((m) => /[\\/]dist[\\/]lib[\\/](review|tracking)[\\/]/.test(m)), [], 'no review or tracking module is loaded');
    assert.deepEqual(modules.filter((m) => IOREDIS_MODULE.test(m)), [], 'ioredis is not loaded');
  });
});
