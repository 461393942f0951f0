/**
 * The setup the tests of a started `node-red` share: the mocha hooks of a {@link RedProcess}, and
 * the Node-RED editor in headless Chromium (playwright-core), opened and waited for until the
 * node definitions and nodes a test needs are there. Mocha only: {@link useRedProcess}
 * registers hooks, so call it inside a `describe`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { RedProcess, launchChromium, openEditor, type RedProcessOptions } from './red-process';

/**
 * Register mocha hooks that start a {@link RedProcess} with `options` in `before` and stop it
 * (removing its user directory) in `after`. Hooks the suite registers after this call run
 * after these.
 * @returns a getter of the started process; it throws when called before the `before` hook ran.
 */
export function useRedProcess(options: RedProcessOptions): () => RedProcess {
  let red: RedProcess | undefined;
  before(async () => {
    red = new RedProcess(options);
    await red.start();
  });
  after(async () => {
    await red?.stop();
  });
  return () => {
    if (!red) throw new Error('node-red is not started (use it in a test or a later hook)');
    return red;
  };
}

/** What {@link withEditor} waits for in the page before it hands it over (all of it, 30 s at most). */
export interface EditorReady {
  /** Node types whose definitions are registered (`RED.nodes.getType`). */
  types?: string[];
  /** Ids of nodes the workspace holds (`RED.nodes.node`). */
  nodes?: string[];
  /** Names of globals the page's scripts set (e.g. `CustodyLookup`). */
  globals?: string[];
}

/** An editor page {@link withEditor} opened. */
export interface EditorPage {
  page: Page;
  /** The page's uncaught script errors (`pageerror`) so far. */
  errors: string[];
}

/**
 * Launch headless Chromium, open the Node-RED editor at `base`, wait for `ready` and half a
 * second more (the editor settles), and run `use` with the page; the browser is closed after,
 * whatever `use` did.
 * @param viewport the page size in CSS pixels.
 * @returns what `use` returns.
 * @throws what `use` throws, or playwright's timeout error when `ready` is not met within 30 s.
 */
export async function withEditor<T>(base: string, viewport: { width: number; height: number }, ready: EditorReady, use: (editor: EditorPage) => Promise<T>): Promise<T> {
  const browser = await launchChromium();
  try {
    const editor = await openEditor(browser, base, viewport);
    await editor.page.waitForFunction(
      (r: EditorReady) => {
        const w = window as any;
        return (r.types ?? []).every((type) => w.RED?.nodes?.getType?.(type)) && (r.nodes ?? []).every((id) => w.RED?.nodes?.node?.(id)) && (r.globals ?? []).every((name) => w[name]);
      },
      ready,
      { timeout: 30000 },
    );
    await editor.page.waitForTimeout(500);
    return await use(editor);
  } finally {
    await browser.close();
  }
}

/**
 * Open the custody-config dialog of node `id` in the editor `page` and wait until its form
 * ("Test connection") and each selector of `also` are visible, then `settleMs` more.
 */
export async function openConfigDialog(page: Page, id: string, also: string[] = [], settleMs = 400): Promise<void> {
  await page.evaluate((nodeId) => (window as any).RED.editor.editConfig('', 'custody-config', nodeId), id);
  for (const selector of ['#custody-config-test', ...also]) await page.waitForSelector(selector, { state: 'visible' });
  await page.waitForTimeout(settleMs);
}

/**
 * Click "Test connection" in the open custody-config dialog and wait (30 s at most) for its result.
 * @returns the result's state (`ok` or `failed`), cause and text.
 */
export async function runConnectionTest(page: Page): Promise<{ state: string; cause: string; text: string }> {
  await page.click('#custody-config-test');
  await page.waitForFunction(() => {
    const s = document.querySelector('#custody-config-test-result')?.getAttribute('data-state');
    return s === 'ok' || s === 'failed';
  }, undefined, { timeout: 30000 });
  return page.evaluate(() => {
    const r = document.querySelector('#custody-config-test-result') as HTMLElement;
    return { state: r.getAttribute('data-state') ?? '', cause: r.getAttribute('data-cause') ?? '', text: r.textContent ?? '' };
  });
}

/**
 * The flows.json an editor test starts from: a tab `tabId` labelled `label` and a custody-config
 * node `configId` named "simulator" on the built-in simulator (timestamp signing), then `nodes`.
 */
export function simulatorFlows(tabId: string, label: string, configId: string, nodes: object[] = []): object[] {
  return [
    { id: tabId, type: 'tab', label },
    { id: configId, type: 'custody-config', name: 'simulator', environment: 'simulator', signingMode: 'timestamp' },
    ...nodes,
  ];
}

/** How {@link openNodeDialog} waits for the dialog. */
export interface DialogReady {
  /** A selector that is visible once the dialog's form is built (default: its Done button, `#node-dialog-ok` or `#node-config-dialog-ok`). */
  selector?: string;
  /** The state `selector` must reach (default `visible`). */
  state?: 'visible' | 'attached';
  /** Further milliseconds to wait after that, for the dialog's own scripts to settle (default 400). */
  settleMs?: number;
}

/**
 * Open node `id`'s edit dialog in the editor `page` as a double click does: a config node's with
 * `RED.editor.editConfig`, any other node's with `RED.editor.edit` after showing its tab. Waits
 * for {@link DialogReady.selector} and then {@link DialogReady.settleMs}.
 * @throws playwright's timeout error when the selector does not reach its state.
 */
export async function openNodeDialog(page: Page, id: string, ready: DialogReady = {}): Promise<void> {
  await page.evaluate((nodeId) => {
    const RED = (window as any).RED;
    const node = RED.nodes.node(nodeId);
    if (node._def.category === 'config') {
      RED.editor.editConfig('', node.type, nodeId);
      return;
    }
    if (node.z) RED.workspaces.show(node.z);
    RED.editor.edit(node);
  }, id);
  await page.waitForSelector(ready.selector ?? '#node-dialog-ok, #node-config-dialog-ok', { state: ready.state ?? 'visible' });
  await page.waitForTimeout(ready.settleMs ?? 400);
}

/**
 * Add `node` to its tab `node.z` in the editor `page` as a drop from the palette does
 * (`RED.view.importNodes` with the type's defaults applied), and open its edit dialog. The caller
 * waits for what the dialog should show.
 * @param node the node as flows.json stores it (`id`, `type`, `z`, `x`, `y`, `wires`, its properties).
 */
export async function importAndEdit(page: Page, node: { id: string; type: string; z: string; [property: string]: unknown }): Promise<void> {
  await page.evaluate((n) => {
    const RED = (window as any).RED;
    RED.workspaces.show(n.z);
    RED.view.importNodes([n], { notify: false, applyNodeDefaults: true });
    RED.editor.edit(RED.nodes.node(n.id));
  }, node);
}

/**
 * Read the deployed flows of the `node-red` at `base` (`GET /flows`) until they hold node `id`.
 * @returns the node as deployed, or undefined when it was not there within `timeoutMs` (default 20 s).
 */
export async function deployedNode(base: string, id: string, timeoutMs = 20000): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const flows = (await (await fetch(`${base}/flows`, { headers: { accept: 'application/json' } })).json()) as Array<{ id: string }>;
    const found = flows.find((n) => n.id === id);
    if (found || Date.now() >= deadline) return found as Record<string, unknown> | undefined;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A custody-config node `id` named `name` as an editor test stores it: the built-in simulator,
 * timestamp signing, a 30 s timeout; `extra` replaces or adds properties (e.g. `environment`).
 */
export function configNode(id: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type: 'custody-config', name, environment: 'simulator', signingMode: 'timestamp', timeout: 30, ...extra };
}

/**
 * flows.json in the user directory `userDir` of a `node-red` (what a deploy stored): its text, to
 * search for what must not be there (a password, key material), and its nodes.
 * @throws when there is no flows.json or it is not JSON.
 */
export function storedFlows(userDir: string): { text: string; nodes: Array<Record<string, unknown>> } {
  const text = fs.readFileSync(path.join(userDir, 'flows.json'), 'utf8');
  return { text, nodes: JSON.parse(text) as Array<Record<string, unknown>> };
}

/**
 * Assert that the password credential `name` of node `id` of `type` is stored in the `node-red` at
 * `base` and never sent back to the editor: `GET /credentials/<type>/<id>` answers `has_<name>`
 * true and holds no `secret`.
 */
export async function assertCredentialKept(base: string, type: string, id: string, name: string, secret: string): Promise<void> {
  const creds = (await (await fetch(`${base}/credentials/${type}/${id}`, { headers: { accept: 'application/json' } })).json()) as Record<string, unknown>;
  assert.equal(creds[`has_${name}`], true, 'stored as a credential');
  assert.ok(!JSON.stringify(creds).includes(secret), 'never sent back to the editor');
}

/**
 * Type into the text fields of one row of an editable list in the open dialog, as a user does
 * (playwright `fill`), in the order given: field `f` is the element `<row> .<prefix><f>`.
 * @param row the row's selector, e.g. `#node-input-rule-container > li:nth-child(2) .custody-rule`.
 * @param prefix the fields' class prefix, e.g. `custody-rule-`.
 * @param values the text of each field, by field name.
 */
export async function fillRow(page: Page, row: string, prefix: string, values: Record<string, string>): Promise<void> {
  for (const [field, value] of Object.entries(values)) await page.fill(`${row} .${prefix}${field}`, value);
}
