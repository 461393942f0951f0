/**
 * The flow library's scorecard (node-red-dev validate, src/libs/checknodes.js) can read every
 * node type of the pack: it parses the `<script type="text/javascript">` blocks of each node's
 * .html with acorn and needs `RED.nodes.registerType("<type>", {...})` with a string literal type,
 * an object literal (no spread) whose `defaults` is an object literal with identifier keys, and
 * literal `category`, `color`, `icon`, `inputs` and `outputs`. Its rules are repeated here (the
 * tool itself fetches the online catalogue), over the built dist/nodes/<type>/<type>.html.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';

const root = path.resolve(__dirname, '..', '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };

/** The registerType calls of an .html as the scorecard sees them: type -> literal properties, and what it would refuse. */
function definitions(file: string): { defs: Record<string, Record<string, unknown>>; errors: string[] } {
  const html = fs.readFileSync(file, 'utf8');
  const re = /<script.+?type=['"]text\/javascript['"].*?>([\S\s]*?)<\/script>/gi;
  const defs: Record<string, Record<string, unknown>> = {};
  const errors: string[] = [];
  for (let m = re.exec(html); m; m = re.exec(html)) {
    walk.simple(acorn.parse(m[1], { ecmaVersion: 'latest' }), {
      CallExpression(node: any) {
        if (node.callee.property?.name !== 'registerType') return;
        const [type, def] = node.arguments;
        if (type.type !== 'Literal') return void errors.push('non-literal type');
        if (def.type !== 'ObjectExpression') return void errors.push(`${type.value}: non-objectexpression`);
        const out: Record<string, unknown> = {};
        for (const p of def.properties) {
          if (p.type !== 'Property' || !p.key?.name) {
            errors.push(`${type.value}: ${p.type} in the definition`);
            continue;
          }
          if (['category', 'color', 'icon', 'inputs', 'outputs'].includes(p.key.name)) {
            if (p.value.type === 'Literal') out[p.key.name] = p.value.value;
            else errors.push(`${type.value}: ${p.key.name}-not-inline`);
          }
          if (p.key.name === 'defaults') {
            if (p.value.type !== 'ObjectExpression') errors.push(`${type.value}: defaults-not-inline`);
            else out.defaults = p.value.properties.map((d: any) => d.key?.name ?? errors.push(`${type.value}: a default without an identifier key`));
          }
        }
        defs[type.value] = out;
      },
    });
  }
  return { defs, errors };
}

describe('the flow library scorecard parses every node type (inline registerType)', () => {
  for (const [type, js] of Object.entries(pkg['node-red'].nodes)) {
    it(type, () => {
      const { defs, errors } = definitions(path.join(root, js.replace(/\.js$/, '.html')));
      assert.deepEqual(errors, []);
      assert.ok(defs[type], `${type} is registered inline`);
      for (const k of ['category', 'icon', 'inputs', 'outputs'].filter(() => type !== 'custody-config')) assert.notEqual(defs[type][k], undefined, `${type}: literal ${k}`);
      assert.ok(Array.isArray(defs[type].defaults), `${type}: defaults written out`);
    });
  }
});
