/**
 * The shape of the code: the dependency rules of .dependency-cruiser.js (no import cycle, type
 * imports included; lib in one-way layers; nothing in lib or the simulator imports nodes/; the
 * simulator imports lib layers 0 to 3; lib imports no Node-RED) hold for lib, nodes and the
 * simulator, and lib's code names no Node-RED node type (the palette is the nodes' concern); no
 * source file of lib, nodes or the simulator is over 600 lines; the package's public entry points
 * (package.json "exports") are what a program may require, and nothing deeper.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '..', '..', '..');

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

  it('a program requires the library and the simulator by the package name, and nothing deeper', () => {
    // An installed copy as npm links it: node_modules/@custodyflow/node-red-custody -> this checkout.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-exports-'));
    try {
      fs.mkdirSync(path.join(dir, 'node_modules', '@custodyflow'), { recursive: true });
      fs.symlinkSync(root, path.join(dir, 'node_modules', '@custodyflow', 'node-red-custody'), 'dir');
      const probe = `
        const lib = require('@custodyflow/node-red-custody');
        const sim = require('@custodyflow/node-red-custody/simulator');
        let deep = 'required';
        try { require('@custodyflow/node-red-custody/dist/lib/request/prepare.js'); } catch (e) { deep = e.code; }
        console.log(JSON.stringify({ client: typeof lib.CustodyClient, approver: typeof lib.Approver, simulator: typeof sim.Simulator, internal: typeof lib.tooLongError, deep }));`;
      const out = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: dir, encoding: 'utf8' })) as Record<string, string>;
      assert.deepEqual(out, { client: 'function', approver: 'function', simulator: 'function', internal: 'undefined', deep: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
