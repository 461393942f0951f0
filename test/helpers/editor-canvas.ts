/**
 * The layout of a flow tab as the Node-RED editor draws it, read from the page: the boxes of the
 * nodes (`rect.red-ui-flow-node` of each `g.red-ui-flow-node-group`), of their buttons (inject,
 * debug) and of the groups (`rect.red-ui-flow-group-body`), in canvas coordinates (the SVG's,
 * at the default zoom 1 the editor opens with), and what is wrong with it: nodes left of or above
 * the canvas origin (Node-RED cannot scroll there), overlapping nodes, overlapping groups,
 * comments wider than the visible canvas.
 */
import type { Page } from 'playwright-core';

/** A box in canvas coordinates (pixels; x right, y down from the canvas origin). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A node as drawn: its box, and its button's box when it has one. */
export interface DrawnNode {
  id: string;
  type: string;
  /** The node's label as drawn (the name, or the type's label). */
  label: string;
  /** The id of the group the node is in (`g`), if any. */
  g?: string;
  box: Box;
  button?: Box;
}

/** A group as drawn. */
export interface DrawnGroup {
  id: string;
  name: string;
  /** The id of the group it is in, if nested. */
  g?: string;
  box: Box;
}

/** What the editor drew on one tab. */
export interface DrawnTab {
  id: string;
  label: string;
  nodes: DrawnNode[];
  groups: DrawnGroup[];
  /** The visible part of the canvas (`#red-ui-workspace-chart`), in pixels. */
  view: { w: number; h: number };
}

/**
 * Show the tab `tabId` in the editor open in `page` and read what it draws.
 * @returns the drawn nodes and groups of that tab (nodes of other tabs are not drawn).
 * @throws playwright's timeout error when the tab's nodes are not drawn within 10 s.
 */
export async function drawnTab(page: Page, tabId: string): Promise<DrawnTab> {
  await page.evaluate((id) => (window as any).RED.workspaces.show(id), tabId);
  await page.waitForFunction(
    (id) => {
      const RED = (window as any).RED;
      let missing = 0;
      RED.nodes.eachNode((n: any) => {
        if (n.z === id && !document.getElementById(n.id)) missing++;
      });
      return RED.workspaces.active() === id && missing === 0;
    },
    tabId,
    { timeout: 10000 },
  );
  await page.waitForTimeout(200);
  return page.evaluate((id) => {
    const RED = (window as any).RED;
    /** The box of an SVG element in the coordinates of its SVG (the canvas, at zoom 1). */
    const boxOf = (el: SVGGraphicsElement): { x: number; y: number; w: number; h: number } => {
      const b = el.getBBox();
      const m = el.getCTM()!;
      return { x: m.e + b.x * m.a, y: m.f + b.y * m.d, w: b.width * m.a, h: b.height * m.d };
    };
    const nodes: any[] = [];
    RED.nodes.eachNode((n: any) => {
      if (n.z !== id) return;
      const el = document.getElementById(n.id)!;
      const rect = el.querySelector('rect.red-ui-flow-node') as SVGGraphicsElement;
      const button = el.querySelector('.red-ui-flow-node-button-background') as SVGGraphicsElement | null;
      const label = RED.utils.getNodeLabel(n, n.type);
      nodes.push({ id: n.id, type: n.type, label, g: n.g, box: boxOf(rect), ...(button ? { button: boxOf(button) } : {}) });
    });
    const groups: any[] = [];
    RED.nodes.eachGroup((g: any) => {
      if (g.z !== id) return;
      const el = document.getElementById(g.id);
      const body = (el?.querySelector('rect.red-ui-flow-group-body') ?? null) as SVGGraphicsElement | null;
      groups.push({ id: g.id, name: g.name ?? '', g: g.g, box: body ? boxOf(body) : { x: g.x, y: g.y, w: g.w, h: g.h } });
    });
    const chart = document.getElementById('red-ui-workspace-chart')!;
    return { id, label: RED.nodes.workspace(id).label, nodes, groups, view: { w: chart.clientWidth, h: chart.clientHeight } };
  }, tabId);
}

/** Whether two boxes share some area (touching edges do not count). */
export function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** What is wrong with a drawn tab; every list empty for a tab that looks right. */
export interface TabFaults {
  /** Nodes whose box starts left of or above the canvas origin (`x - w/2 < 0` or `y - h/2 < 0`). */
  unreachable: string[];
  /** Buttons (inject, debug) that start left of or above the canvas origin: partly hidden. */
  hiddenButtons: string[];
  /** Pairs of nodes whose boxes (their buttons included) overlap. */
  overlappingNodes: string[];
  /** Pairs of groups that overlap, neither inside the other. */
  overlappingGroups: string[];
  /** Nodes of a group that stick out of its box. */
  outsideGroup: string[];
  /** Comments wider than the visible canvas. */
  wideComments: string[];
}

/** The union of a node's box and its button's. */
function fullBox(n: DrawnNode): Box {
  if (!n.button) return n.box;
  const x = Math.min(n.box.x, n.button.x);
  const y = Math.min(n.box.y, n.button.y);
  return { x, y, w: Math.max(n.box.x + n.box.w, n.button.x + n.button.w) - x, h: Math.max(n.box.y + n.box.h, n.button.y + n.button.h) - y };
}

/** Whether `inner` lies within `outer`. */
function inside(inner: Box, outer: Box): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h;
}

/**
 * The faults of a drawn tab (see {@link TabFaults}); each named `"<label>" (<type> <id>)`.
 * Groups nested in one another do not count as overlapping.
 */
export function tabFaults(tab: DrawnTab): TabFaults {
  const name = (n: DrawnNode) => `"${n.label}" (${n.type} ${n.id})`;
  const faults: TabFaults = { unreachable: [], hiddenButtons: [], overlappingNodes: [], overlappingGroups: [], outsideGroup: [], wideComments: [] };
  for (const n of tab.nodes) {
    if (n.box.x < 0 || n.box.y < 0) faults.unreachable.push(name(n));
    if (n.button && (n.button.x < 0 || n.button.y < 0)) faults.hiddenButtons.push(name(n));
    if (n.type === 'comment' && n.box.w > tab.view.w) faults.wideComments.push(`${name(n)}: ${Math.round(n.box.w)} px wide, the canvas shows ${tab.view.w}`);
    const group = tab.groups.find((g) => g.id === n.g);
    if (group && !inside(fullBox(n), group.box)) faults.outsideGroup.push(`${name(n)} outside group "${group.name}"`);
  }
  tab.nodes.forEach((a, i) => {
    for (const b of tab.nodes.slice(i + 1)) if (overlaps(fullBox(a), fullBox(b))) faults.overlappingNodes.push(`${name(a)} and ${name(b)}`);
  });
  tab.groups.forEach((a, i) => {
    for (const b of tab.groups.slice(i + 1)) {
      if (overlaps(a.box, b.box) && !inside(a.box, b.box) && !inside(b.box, a.box)) faults.overlappingGroups.push(`"${a.name}" and "${b.name}"`);
    }
  });
  return faults;
}

/** The right and bottom edges of everything drawn on a tab (nodes with their buttons, groups): the canvas size the tab needs. */
export function extentOf(tab: DrawnTab): { right: number; bottom: number } {
  const boxes = [...tab.nodes.map(fullBox), ...tab.groups.map((g) => g.box)];
  return { right: Math.max(0, ...boxes.map((b) => b.x + b.w)), bottom: Math.max(0, ...boxes.map((b) => b.y + b.h)) };
}

/**
 * The step a tab opens on: its group nearest the canvas origin (the smallest distance of its
 * top-left corner from 0,0), with the nodes outside any group that lie above it (the tab's title
 * comment); undefined for a tab without groups.
 */
export function firstStep(tab: DrawnTab): Box | undefined {
  const top = tab.groups.filter((g) => !g.g).sort((a, b) => Math.hypot(a.box.x, a.box.y) - Math.hypot(b.box.x, b.box.y))[0];
  if (!top) return undefined;
  const above = tab.nodes.filter((n) => !n.g && n.box.y + n.box.h <= top.box.y).map(fullBox);
  const boxes = [top.box, ...above];
  const x = Math.min(...boxes.map((b) => b.x));
  const y = Math.min(...boxes.map((b) => b.y));
  return { x, y, w: Math.max(...boxes.map((b) => b.x + b.w)) - x, h: Math.max(...boxes.map((b) => b.y + b.h)) - y };
}

/** Whether the step a tab opens on ({@link firstStep}) lies wholly in a visible canvas of `view` scrolled to its origin. */
export function firstStepFits(tab: DrawnTab, view: { w: number; h: number }): boolean {
  const s = firstStep(tab);
  return !!s && s.x + s.w <= view.w && s.y + s.h <= view.h;
}

/**
 * Show the tab `tabId`, zoom out `steps` times as ctrl - does (Node-RED's `core:zoom-out`, 0.1
 * each), scroll the canvas to its top-left corner and read what lies outside the visible canvas;
 * the zoom is reset to 100% after.
 * @returns the zoom reached and the nodes and groups (each `"<label>" (<type> <id>)`) not wholly in view.
 */
export async function outsideWhenZoomedOut(page: Page, tabId: string, steps: number): Promise<{ scale: number; outside: string[] }> {
  await page.evaluate((id) => (window as any).RED.workspaces.show(id), tabId);
  await page.waitForFunction((id) => (window as any).RED.workspaces.active() === id, tabId);
  for (let i = 0; i < steps; i++) await page.evaluate(() => (window as any).RED.actions.invoke('core:zoom-out'));
  await page.evaluate(() => {
    const chart = document.getElementById('red-ui-workspace-chart')!;
    chart.scrollLeft = 0;
    chart.scrollTop = 0;
  });
  await page.waitForTimeout(300);
  const result = await page.evaluate((id) => {
    const RED = (window as any).RED;
    const chart = document.getElementById('red-ui-workspace-chart')!;
    const c = chart.getBoundingClientRect();
    const view = { left: c.left, top: c.top, right: c.left + chart.clientWidth, bottom: c.top + chart.clientHeight };
    const outside: string[] = [];
    const check = (el: Element | null, name: string) => {
      if (!el) return;
      const b = el.getBoundingClientRect();
      if (b.left < view.left - 1 || b.top < view.top - 1 || b.right > view.right + 1 || b.bottom > view.bottom + 1) outside.push(`${name}: ${Math.round(b.right - view.left)}x${Math.round(b.bottom - view.top)} of ${Math.round(view.right - view.left)}x${Math.round(view.bottom - view.top)}`);
    };
    RED.nodes.eachNode((n: any) => {
      if (n.z === id) check(document.getElementById(n.id), `"${RED.utils.getNodeLabel(n, n.type)}" (${n.type} ${n.id})`);
    });
    RED.nodes.eachGroup((g: any) => {
      if (g.z === id) check(document.getElementById(g.id), `group "${g.name ?? ''}" (${g.id})`);
    });
    return { scale: RED.view.scale(), outside };
  }, tabId);
  await page.evaluate(() => (window as any).RED.actions.invoke('core:zoom-reset'));
  await page.waitForTimeout(100);
  return result;
}
