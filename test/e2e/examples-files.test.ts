/**
 * The example flow files (examples/*.json) read as files, and docs/examples.md against them:
 * - the money-moving nodes (transfer, withdraw, swap make, sweep) carry the payment in their
 *   typed fields (`sendAsset`, `sendAmount`, ...; docs/nodes.md), and no change or function node
 *   feeds one of them: no node of an example only builds a payment body;
 * - one automated approver per core client across all the examples (two approvers on one core
 *   client would each decide the same action: one approves, the other holds);
 * - no two debug nodes of the examples share a name (the debug sidebar shows the name);
 * - docs/examples.md has a section per example (`## NN <tab label>`), every name it writes in
 *   bold there (line breaks read as spaces) is a node or group of that example, and every button it tells to click
 *   (`click **...**`) is an inject node of that example.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers/red-process';
import { readExamples, type FlowNode } from '../helpers/example-flows';

const examples = readExamples();
const all = examples.flatMap((e) => e.nodes);

/** The nodes wired into `id` (any output). */
const feeding = (nodes: FlowNode[], id: string) => nodes.filter((n) => (n.wires ?? []).some((out) => out.includes(id)));

/** The money-moving operation of each node type, and the typed payment fields it must carry. */
const MONEY: Record<string, { operation: string; fields: string[] }> = {
  'custody-transfer': { operation: 'create', fields: ['sendAsset', 'sendAmount', 'reference', 'benefit_of', 'account_no'] },
  'custody-withdraw': { operation: 'create', fields: ['sendAsset', 'sendAmount', 'reference', 'benefit_of', 'account_no'] },
  'custody-swap-make': { operation: 'make', fields: ['sendAsset', 'sendAmount', 'receiveAsset', 'receiveAmount', 'reference'] },
  'custody-sweep': { operation: 'start', fields: ['sendAsset', 'sendAmount', 'reference'] },
};

describe('example flow files: payment fields, one approver per core client, names, docs/examples.md', () => {
  it('the money-moving nodes carry the payment in their typed fields, and no change or function node feeds them', () => {
    const moneyNodes = all.filter((n) => MONEY[n.type] && n.operation === MONEY[n.type].operation);
    assert.ok(moneyNodes.length >= 6, `${moneyNodes.length} money-moving nodes`);
    const missing: string[] = [];
    for (const n of moneyNodes) {
      for (const f of MONEY[n.type].fields) {
        if (typeof n[f] !== 'string' || n[f] === '' || typeof n[`${f}Type`] !== 'string') missing.push(`${n.type} ${n.id}: ${f}`);
      }
    }
    assert.deepEqual(missing, [], 'typed payment fields not set');
    const builders = moneyNodes.flatMap((n) => feeding(all, n.id).filter((f) => f.type === 'change' || f.type === 'function').map((f) => `${f.type} "${f.name}" -> ${n.type} ${n.id}`));
    assert.deepEqual(builders, [], 'change or function nodes building a payment body');
    // The swap take's reference is its typed field too.
    for (const take of all.filter((n) => n.type === 'custody-swap-take')) {
      assert.deepEqual(feeding(all, take.id).filter((f) => f.type === 'change' || f.type === 'function').map((f) => f.name), []);
      assert.ok(take.reference && take.referenceType, `swap take ${take.id}: reference`);
    }
  });

  it('one automated approver per core client across the examples', () => {
    const watched = new Map<string, string[]>();
    for (const { file, nodes } of examples) {
      for (const a of nodes.filter((n) => n.type === 'custody-approver')) {
        const clients = a.clientId ? [a.clientId] : feeding(nodes, a.id).filter((f) => f.type === 'custody-coreclient-feed').map((f) => f.clientId ?? '');
        assert.equal(clients.length, 1, `${file}: approver "${a.name}" gets the actions of one core client`);
        watched.set(clients[0], [...(watched.get(clients[0]) ?? []), `${file.slice(0, 2)} "${a.name}"`]);
      }
    }
    assert.deepEqual([...watched].filter(([, approvers]) => approvers.length > 1), [], 'core clients with more than one approver');
    assert.ok(watched.size >= 5, [...watched.keys()].join(', '));
  });

  it('no two debug nodes of the examples share a name', () => {
    const names = all.filter((n) => n.type === 'debug').map((n) => n.name ?? '');
    assert.deepEqual(names.filter((name, i) => names.indexOf(name) !== i), []);
  });

  it('docs/examples.md: every button it tells to click is an inject node of an example', () => {
    const doc = fs.readFileSync(path.join(root, 'docs', 'examples.md'), 'utf8');
    const injects = new Set(all.filter((n) => n.type === 'inject').map((n) => n.name ?? ''));
    const clicked = [...doc.matchAll(/[Cc]lick\s+(?:the button\s+)?\*\*([^*]+)\*\*/g)].map((m) => m[1].replace(/\s+/g, ' '));
    assert.deepEqual(clicked.filter((b) => !injects.has(b)), [], 'buttons named in docs/examples.md that no example has');
    assert.ok(clicked.length >= 12, `${clicked.length} buttons named`);
  });

  it('docs/examples.md: a section per example; the buttons it names, and every name in bold, are nodes of that example', () => {
    const doc = fs.readFileSync(path.join(root, 'docs', 'examples.md'), 'utf8');
    const sections = doc.split(/^## /m).slice(1);
    const byNumber = new Map(sections.map((s) => [s.slice(0, 2), s]));
    let buttons = 0;
    for (const { file, nodes } of examples) {
      const tab = nodes.find((n) => n.type === 'tab')!;
      const section = byNumber.get(file.slice(0, 2));
      assert.ok(section, `docs/examples.md: no section "## ${file.slice(0, 2)} ${tab.label}"`);
      assert.equal(section.split('\n')[0].trim(), `${file.slice(0, 2)} ${tab.label}`, `${file}: the section is named after the tab`);
      const names = new Set(nodes.filter((n) => n.z === tab.id).map((n) => n.name ?? ''));
      const injects = new Set(nodes.filter((n) => n.z === tab.id && n.type === 'inject').map((n) => n.name ?? ''));
      const bold = [...section.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1].replace(/\s+/g, ' '));
      assert.deepEqual(bold.filter((b) => !names.has(b)), [], `docs/examples.md, section ${file.slice(0, 2)}: bold names that are no node or group of the example`);
      const clicked = [...section.matchAll(/[Cc]lick\s+(?:the button\s+)?\*\*([^*]+)\*\*/g)].map((m) => m[1].replace(/\s+/g, ' '));
      assert.deepEqual(clicked.filter((b) => !injects.has(b)), [], `docs/examples.md, section ${file.slice(0, 2)}: buttons that are no inject of the example`);
      buttons += clicked.length;
      if (injects.size > 0) assert.ok(clicked.length > 0, `docs/examples.md, section ${file.slice(0, 2)}: names none of the example's buttons`);
    }
    assert.ok(buttons >= 12, `${buttons} buttons named`);
  });
});
