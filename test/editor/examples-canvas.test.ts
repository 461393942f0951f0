/**
 * The example flows as the Node-RED editor draws them, in headless Chromium at 1366x768: a
 * `node-red` process started with every example deployed (as `npm start` deploys them:
 * scripts/examples.js `mergeExamples`), each tab shown in turn and its nodes and groups read from
 * the SVG (test/helpers/editor-canvas.ts). On every tab:
 * - every node is reachable: its box and its button start at or right of and below the canvas
 *   origin (Node-RED cannot scroll left of or above it);
 * - no two nodes overlap (buttons included), no two groups overlap, and every node of a group lies
 *   inside the group's box;
 * - every tab is at most 1366 px wide (a taller one scrolls down only);
 * - no comment is wider than the visible canvas;
 * - each step is a group with a label, and the comments' titles are short (their detail is in
 *   the comment's info, shown in the Info sidebar).
 * The counts per tab are printed.
 *
 * EXAMPLES_DIR points the test at another examples folder (e.g. an older checkout's); with
 * EXAMPLES_SCREENSHOT_DIR set, a screenshot of each tab is written there.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers/red-process';
import { useRedProcess, withEditor } from '../helpers/editor-kit';
import { drawnTab, extentOf, tabFaults, type DrawnTab, type TabFaults } from '../helpers/editor-canvas';

const examplesDir = process.env.EXAMPLES_DIR || path.join(root, 'examples');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { mergeExamples } = require(path.join(root, 'scripts', 'examples.js'));

/** Comment titles longer than this are too long to read on the canvas; the detail belongs in the info. */
const TITLE_MAX = 45;

describe('example flows on the canvas at 1366x768 (Chromium): reachable, not overlapping, grouped', function () {
  this.timeout(180000);
  const flows: Array<{ id: string; type: string; z?: string; name?: string; info?: string }> = mergeExamples(examplesDir);
  const red = useRedProcess({ prefix: 'cf-examples-canvas-', flows: JSON.stringify(flows) });
  const tabs = flows.filter((n) => n.type === 'tab');
  const drawn: DrawnTab[] = [];
  const faults = new Map<string, TabFaults>();

  before(async () => {
    await withEditor(red().base, { width: 1366, height: 768 }, { nodes: tabs.map((t) => flows.find((n) => n.z === t.id)!.id) }, async ({ page, errors }) => {
      for (const tab of tabs) {
        const d = await drawnTab(page, tab.id);
        drawn.push(d);
        faults.set(tab.id, tabFaults(d));
        const dir = process.env.EXAMPLES_SCREENSHOT_DIR;
        if (dir) {
          fs.mkdirSync(dir, { recursive: true });
          await page.screenshot({ path: path.join(dir, `${d.label.replace(/[^\w]+/g, '-')}.png`) });
        }
      }
      assert.deepEqual(errors, [], 'script errors in the editor');
    });
    const rows = drawn.map((d) => {
      const f = faults.get(d.id)!;
      const e = extentOf(d);
      return `${d.label.padEnd(48)} nodes ${String(d.nodes.length).padStart(3)}  groups ${String(d.groups.length).padStart(2)}  unreachable ${f.unreachable.length}  hidden buttons ${f.hiddenButtons.length}  overlapping nodes ${f.overlappingNodes.length}  overlapping groups ${f.overlappingGroups.length}  outside group ${f.outsideGroup.length}  wide comments ${f.wideComments.length}  extent ${Math.round(e.right)}x${Math.round(e.bottom)}`;
    });
    const sum = (k: keyof TabFaults) => [...faults.values()].reduce((s, f) => s + f[k].length, 0);
    console.log(`      visible canvas ${drawn[0]?.view.w}x${drawn[0]?.view.h}\n      ${rows.join('\n      ')}\n      total: unreachable ${sum('unreachable')}, hidden buttons ${sum('hiddenButtons')}, overlapping node pairs ${sum('overlappingNodes')}, overlapping group pairs ${sum('overlappingGroups')}, wide comments ${sum('wideComments')}`);
  });

  it('shows every example tab', () => {
    assert.equal(drawn.length, tabs.length);
    assert.ok(tabs.length >= 12, `${tabs.length} tabs`);
  });

  it('every node and every button is reachable: none starts left of or above the canvas origin', () => {
    const found = drawn.flatMap((d) => [...faults.get(d.id)!.unreachable, ...faults.get(d.id)!.hiddenButtons].map((f) => `${d.label}: ${f}`));
    assert.deepEqual(found, []);
  });

  it('no two nodes overlap, no two groups overlap, and the nodes of a group are inside it', () => {
    const found = drawn.flatMap((d) => {
      const f = faults.get(d.id)!;
      return [...f.overlappingNodes, ...f.overlappingGroups, ...f.outsideGroup].map((x) => `${d.label}: ${x}`);
    });
    assert.deepEqual(found, []);
  });

  it('every tab is at most 1366 px wide: a tab taller than the window scrolls down only', () => {
    const wide = drawn.filter((d) => extentOf(d).right > 1366).map((d) => `${d.label}: ${Math.round(extentOf(d).right)} px`);
    assert.deepEqual(wide, []);
  });

  it('no comment is wider than the visible canvas, and every comment title is short (the detail is in its info)', () => {
    const wide = drawn.flatMap((d) => faults.get(d.id)!.wideComments.map((x) => `${d.label}: ${x}`));
    assert.deepEqual(wide, []);
    const long = flows.filter((n) => n.type === 'comment' && (n.name ?? '').length > TITLE_MAX).map((n) => `${n.id}: "${n.name}"`);
    assert.deepEqual(long, [], `comment titles over ${TITLE_MAX} characters`);
  });

  it('every tab lays out its steps as labelled groups, each step with a comment whose info explains it', () => {
    for (const tab of tabs) {
      const onTab = flows.filter((n) => n.z === tab.id) as Array<{ id: string; type: string; name?: string; info?: string; g?: string; style?: { label?: boolean } }>;
      const groups = onTab.filter((n) => n.type === 'group');
      assert.ok(groups.length >= 1, `${tab.name ?? tab.id}: no group`);
      for (const g of groups) {
        assert.ok(g.name && g.style?.label === true, `${tab.id}: group ${g.id} has no shown label`);
        const comments = onTab.filter((n) => n.type === 'comment' && n.g === g.id);
        assert.ok(comments.some((c) => (c.info ?? '').trim().length > 0), `${tab.id}: group "${g.name}" has no comment with an info`);
      }
      const outside = onTab.filter((n) => !n.g && n.type !== 'group' && n.type !== 'comment');
      assert.deepEqual(outside.map((n) => `${n.type} ${n.name ?? n.id}`), [], `${tab.id}: nodes of no step (group)`);
    }
  });
});
