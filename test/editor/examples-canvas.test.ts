/**
 * The example flows as the Node-RED editor draws them, in headless Chromium at 1366x768 and at
 * 1600x1000 (Node-RED's default palette and sidebar widths): a
 * `node-red` process started with every example deployed (as `npm start` deploys them:
 * scripts/examples.js `mergeExamples`), each tab shown in turn and its nodes and groups read from
 * the SVG (test/helpers/editor-canvas.ts). On every tab:
 * - every node is reachable: its box and its button start at or right of and below the canvas
 *   origin (Node-RED cannot scroll left of or above it);
 * - no two nodes overlap (buttons included), no two groups overlap, and every node of a group lies
 *   inside the group's box;
 * - every tab is at most 1366 px wide;
 * - no comment is wider than the visible canvas;
 * - the README's claim (section "The examples"), at both window sizes: zoomed out to 50% (ctrl -
 *   five times) and scrolled to its top-left corner, every node and group of the tab is in view;
 *   the README names the visible canvas at 100% at both sizes;
 * - each step is a group with a label, and the comments' titles are short (their detail is in
 *   the comment's info, shown in the Info sidebar).
 * The counts per tab, and at each size whether the first step and the whole tab are in view at
 * 100%, are printed.
 *
 * EXAMPLES_DIR points the test at another examples folder (e.g. an older checkout's); with
 * EXAMPLES_SCREENSHOT_DIR set, a screenshot of each tab is written there.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers/red-process';
import { useRedProcess, withEditor } from '../helpers/editor-kit';
import { drawnTab, extentOf, firstStepFits, outsideWhenZoomedOut, tabFaults, type DrawnTab, type TabFaults } from '../helpers/editor-canvas';

const examplesDir = process.env.EXAMPLES_DIR || path.join(root, 'examples');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { mergeExamples } = require(path.join(root, 'scripts', 'examples.js'));

/** The window sizes the README's claim about the examples holds at (Node-RED's default palette and sidebar widths). */
const VIEWPORTS = [
  { width: 1366, height: 768 },
  { width: 1600, height: 1000 },
];

/** The zoom-out steps (ctrl -, 0.1 each) the README says show a whole tab: 5, to 50%. */
const ZOOM_OUT_STEPS = 5;

/** Comment titles longer than this are too long to read on the canvas; the detail belongs in the info. */
const TITLE_MAX = 45;

describe('example flows on the canvas at 1366x768 and 1600x1000 (Chromium): reachable, not overlapping, grouped, whole at 50%', function () {
  this.timeout(180000);
  const flows: Array<{ id: string; type: string; z?: string; name?: string; info?: string }> = mergeExamples(examplesDir);
  const red = useRedProcess({ prefix: 'cf-examples-canvas-', flows: JSON.stringify(flows) });
  const tabs = flows.filter((n) => n.type === 'tab');
  const drawn: DrawnTab[] = [];
  const faults = new Map<string, TabFaults>();

  /** The visible canvas at each viewport the README's claim is checked at. */
  const views: Array<{ viewport: { width: number; height: number }; view: { w: number; h: number } }> = [];
  /** Per viewport (`WxH`), what lies outside the canvas zoomed out by {@link ZOOM_OUT_STEPS}, per tab label. */
  const zoomedOut = new Map<string, Array<{ tab: string; scale: number; outside: string[] }>>();

  before(async () => {
    for (const viewport of VIEWPORTS) {
      await withEditor(red().base, viewport, { nodes: tabs.map((t) => flows.find((n) => n.z === t.id)!.id) }, async ({ page, errors }) => {
        const first = drawn.length === 0;
        for (const tab of tabs) {
          const d = await drawnTab(page, tab.id);
          if (first) {
            drawn.push(d);
            faults.set(tab.id, tabFaults(d));
          } else {
            // The layout is the canvas's (zoom 1): the same at any window size; only the visible part differs.
            assert.deepEqual(d.nodes.map((n) => n.box), drawn.find((x) => x.id === d.id)!.nodes.map((n) => n.box), `${d.label}: drawn the same at ${viewport.width}x${viewport.height}`);
          }
          if (tab === tabs[0]) views.push({ viewport, view: d.view });
          const z = await outsideWhenZoomedOut(page, tab.id, ZOOM_OUT_STEPS);
          const key = `${viewport.width}x${viewport.height}`;
          zoomedOut.set(key, [...(zoomedOut.get(key) ?? []), { tab: d.label, ...z }]);
          const dir = process.env.EXAMPLES_SCREENSHOT_DIR;
          if (dir) {
            fs.mkdirSync(dir, { recursive: true });
            await page.screenshot({ path: path.join(dir, `${viewport.width}x${viewport.height}-${d.label.replace(/[^\w]+/g, '-')}.png`) });
          }
        }
        assert.deepEqual(errors, [], 'script errors in the editor');
      });
    }
    const rows = drawn.map((d) => {
      const f = faults.get(d.id)!;
      const e = extentOf(d);
      const fit = views.map((v) => `${v.viewport.width}x${v.viewport.height}: ${firstStepFits(d, v.view) ? 'first step in view' : 'FIRST STEP CUT'}${e.right <= v.view.w && e.bottom <= v.view.h ? ', whole tab in view' : ''}`).join('; ');
      return `${d.label.padEnd(48)} ${fit}  nodes ${String(d.nodes.length).padStart(3)}  groups ${String(d.groups.length).padStart(2)}  unreachable ${f.unreachable.length}  hidden buttons ${f.hiddenButtons.length}  overlapping nodes ${f.overlappingNodes.length}  overlapping groups ${f.overlappingGroups.length}  outside group ${f.outsideGroup.length}  wide comments ${f.wideComments.length}  extent ${Math.round(e.right)}x${Math.round(e.bottom)}`;
    });
    const sum = (k: keyof TabFaults) => [...faults.values()].reduce((s, f) => s + f[k].length, 0);
    console.log(`      visible canvas ${views.map((v) => `${v.view.w}x${v.view.h} at ${v.viewport.width}x${v.viewport.height}`).join(', ')}\n      ${rows.join('\n      ')}\n      total: unreachable ${sum('unreachable')}, hidden buttons ${sum('hiddenButtons')}, overlapping node pairs ${sum('overlappingNodes')}, overlapping group pairs ${sum('overlappingGroups')}, wide comments ${sum('wideComments')}`);
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

  it('every tab is at most 1366 px wide', () => {
    const wide = drawn.filter((d) => extentOf(d).right > 1366).map((d) => `${d.label}: ${Math.round(extentOf(d).right)} px`);
    assert.deepEqual(wide, []);
  });

  it(`the README's claim, at ${VIEWPORTS.map((v) => `${v.width}x${v.height}`).join(' and ')}: every tab starts at the canvas's top-left corner and, zoomed out to 50% (ctrl - ${ZOOM_OUT_STEPS} times), fits the canvas from there`, () => {
    assert.equal(zoomedOut.size, VIEWPORTS.length);
    for (const [viewport, list] of zoomedOut) {
      assert.equal(list.length, tabs.length, viewport);
      for (const z of list) {
        assert.ok(Math.abs(z.scale - 0.5) < 0.01, `${viewport} ${z.tab}: zoom ${z.scale}`);
        assert.deepEqual(z.outside, [], `${viewport} ${z.tab}: outside the canvas at 50%`);
      }
    }
    // At 100% most tabs are larger than the canvas: the README says so, and gives the visible sizes.
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const v of views) assert.ok(readme.includes(`${v.view.w}x${v.view.h} px`), `README names the visible canvas ${v.view.w}x${v.view.h} px at ${v.viewport.width}x${v.viewport.height}`);
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
