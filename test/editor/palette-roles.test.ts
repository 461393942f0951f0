/**
 * The palette as built (dist/nodes/<type>/<type>.html, the dialogs Node-RED serves): every flow
 * node type of the pack has a colour by its role (nodes/shared/palette-roles.ts) and an icon of its
 * own (no two node types share an icon file), each icon a file of icons/ drawn on the 40x60 view
 * box of the others; the palette tables of README.md and docs/nodes.md list every node type under
 * the role it has.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { NODE_ROLES, ROLE_COLOURS, ROLE_NAMES, type PaletteRole } from '../../nodes/shared/palette-roles';

const root = path.resolve(__dirname, '..', '..', '..');
const nodeTypes = Object.keys(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))['node-red'].nodes as Record<string, string>);

/** The literal `key: "value"` of a built dialog's registerType (the first one). */
function registered(type: string, key: 'icon' | 'color' | 'category'): string {
  const html = fs.readFileSync(path.join(root, 'dist', 'nodes', type, `${type}.html`), 'utf8');
  const m = new RegExp(`\\n\\s+${key}: "([^"]+)"`).exec(html.slice(html.indexOf('registerType(')));
  assert.ok(m, `${type}: no ${key} in its registerType`);
  return m[1];
}

/** The rows `| colour | role | nodes |` of the palette table under `heading` in `file`: node type -> role name. */
function paletteTable(file: string, heading: string): Map<string, string> {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const start = text.indexOf(heading);
  assert.ok(start >= 0, `${file} has no heading ${heading}`);
  const out = new Map<string, string>();
  for (const line of text.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length !== 5 || !cells[3].includes('`')) continue;
    for (const m of cells[3].matchAll(/`(custody-[a-z-]+)`/g)) out.set(m[1], cells[2]);
  }
  return out;
}

describe('palette: a colour by role and an icon of its own for every node', () => {
  const flowNodes = nodeTypes.filter((t) => registered(t, 'category') !== 'config');

  it('every flow node has a role, and its dialog registers the colour of that role', () => {
    assert.deepEqual([...flowNodes].sort(), Object.keys(NODE_ROLES).sort());
    for (const type of flowNodes) assert.equal(registered(type, 'color'), ROLE_COLOURS[NODE_ROLES[type]], type);
    assert.equal(new Set(Object.values(ROLE_COLOURS)).size, 3, 'three colours');
  });

  it('no two node types share an icon file; each is an SVG of icons/ on a 40x60 view box', () => {
    const byIcon = new Map<string, string[]>();
    for (const type of nodeTypes) {
      const icon = registered(type, 'icon');
      byIcon.set(icon, [...(byIcon.get(icon) ?? []), type]);
      const svg = fs.readFileSync(path.join(root, 'icons', icon), 'utf8');
      assert.match(svg, /^<svg [^>]*viewBox="0 0 40 60"/, `${icon}: a 40x60 view box`);
      assert.match(svg, /stroke="#fff"|fill="#fff"/, `${icon}: white line art`);
    }
    const shared = [...byIcon].filter(([, types]) => types.length > 1);
    assert.deepEqual(shared, [], `shared icons: ${JSON.stringify(shared)}`);
  });

  for (const [file, heading] of [['README.md', '## The palette'], ['docs/nodes.md', '## Palette colours']]) {
    it(`${file} lists every flow node under its role`, () => {
      const table = paletteTable(file, heading);
      const want = new Map(flowNodes.map((t) => [t, ROLE_NAMES[NODE_ROLES[t] as PaletteRole]]));
      assert.deepEqual(new Map([...table].sort()), new Map([...want].sort()));
    });
  }
});
