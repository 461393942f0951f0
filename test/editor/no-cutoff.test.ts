/**
 * The first hour in the editor at 1366x768 (a `node-red` process with the pack, headless Chromium;
 * docs/configuration.md "Look-ups", docs/nodes.md):
 * - a built-in simulator connection stored without its key settings (as the examples store it)
 *   opens with the v1 and v2 API key selects on the simulator's keys, and opening it and clicking
 *   Update leaves the flows undeployed-change free (Deploy stays grey);
 * - nothing is cut off: the Test connection result (the key fingerprint), the wallet look-up's
 *   entries (the id inserted is shown whole), the track dialog's selects and fields, and the
 *   `pre` and `code` of every node type's help in the Info sidebar;
 * - the transfer's "From wallet" look-up lists the wallets of the company chosen in the dialog
 *   only, and every wallet when no company is chosen.
 * With NO_CUTOFF_SCREENSHOT_DIR set, screenshots of the Test connection box, the open wallet
 * look-up and the track dialog are written there (docs/images/ keeps them).
 *
 * Run alone with `npx mocha --no-config --timeout 180000 dist/test/editor/no-cutoff.test.js`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { useRedProcess, withEditor, openConfigDialog, openNodeDialog, runConnectionTest } from '../helpers/editor-kit';

const TAB = 'e7d0000000000f61';
const CONFIG = 'e7d0000000000c61';
const TRANSFER = 'e7d000000000a061';
const TRACK = 'e7d000000000a062';
const VIEWPORT = { width: 1366, height: 768 };

/** The built-in simulator connection as the examples store it: no key, coordination or v2 settings. */
const FLOWS = [
  { id: TAB, type: 'tab', label: 'no cutoff' },
  { id: CONFIG, type: 'custody-config', name: '', environment: 'simulator', baseUrl: '', signingMode: 'timestamp', timeout: 30 },
  { id: TRANSFER, type: 'custody-transfer', z: TAB, connection: CONFIG, operation: 'create', company_id: 'demo-company', company_idType: 'str', wallet_id: '', wallet_idType: 'str', amountFormat: 'decimal', expiresAfter: '3600', x: 320, y: 80, wires: [[]] },
  { id: TRACK, type: 'custody-track', z: TAB, connection: CONFIG, kind: 'msg', company_id: '', client_id: '', client_idType: 'str', progress: false, firstDelay: '1', maxDelay: '30', margin: '60', x: 520, y: 80, wires: [[], []] },
];

/** Where the screenshots go, or undefined. */
const shots = process.env.NO_CUTOFF_SCREENSHOT_DIR;

async function screenshot(page: Page, name: string, clip?: { x: number; y: number; width: number; height: number }): Promise<void> {
  if (!shots) return;
  fs.mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, name), ...(clip ? { clip } : {}) });
}

/**
 * The text elements under `root` (a selector) whose text is cut off: wider than their box
 * (scrollWidth > clientWidth, for an element that clips; for an empty field, its placeholder), reaching out of the box `root` draws,
 * of the visible part of a clipping ancestor or of the window; for a select, an option whose text is wider than the
 * select's text area. Each named `<tag>.<class> "<text>": why`.
 */
async function cutOff(page: Page, root: string): Promise<string[]> {
  return page.$$eval(root, (roots) => {
    const found: string[] = [];
    const name = (el: Element, text: string) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''} "${text.trim().slice(0, 60)}"`;
    const measure = document.createElement('span');
    measure.style.cssText = 'position:absolute;visibility:hidden;white-space:pre;left:-10000px;top:0';
    document.body.appendChild(measure);
    const visible = (el: Element) => (el as HTMLElement).offsetParent !== null || getComputedStyle(el).position === 'fixed';
    for (const r of roots) {
      const elements = [r, ...Array.from(r.querySelectorAll('*'))].filter(visible);
      for (const el of elements) {
        const html = el as HTMLElement;
        const style = getComputedStyle(el);
        if (el.tagName === 'SELECT') {
          const select = el as HTMLSelectElement;
          measure.style.font = style.font;
          // the text area: the box less its padding, borders and the arrow (about 20 px)
          const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
          for (const o of Array.from(select.options)) {
            measure.textContent = o.text;
            if (measure.getBoundingClientRect().width > room) found.push(`${name(el, o.text)}: option ${Math.round(measure.getBoundingClientRect().width)} px, the select shows ${Math.round(room)}`);
          }
          continue;
        }
        if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
          const input = el as HTMLInputElement;
          if (input.type !== 'hidden' && input.type !== 'checkbox' && input.value && input.scrollWidth > input.clientWidth + 1) found.push(`${name(el, input.value)}: text ${input.scrollWidth} px, the field shows ${input.clientWidth}`);
          if (!input.value && input.placeholder) {
            measure.style.font = style.font;
            measure.textContent = input.placeholder;
            const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            if (measure.getBoundingClientRect().width > room + 1) found.push(`${name(el, input.placeholder)}: placeholder ${Math.round(measure.getBoundingClientRect().width)} px, the field shows ${Math.round(room)}`);
          }
          continue;
        }
        const ownText = Array.from(el.childNodes).some((n) => n.nodeType === 3 && (n.textContent ?? '').trim() !== '');
        if (!ownText) continue;
        const text = el.textContent ?? '';
        if (style.overflowX !== 'visible' && html.scrollWidth > html.clientWidth + 1) found.push(`${name(el, text)}: text ${html.scrollWidth} px, its box ${html.clientWidth}`);
        const box = el.getBoundingClientRect();
        const frame = r.getBoundingClientRect();
        if (el !== r && (box.right > frame.right + 1 || box.left < frame.left - 1)) found.push(`${name(el, text)}: out of its box (${Math.round(box.left)}..${Math.round(box.right)} in ${Math.round(frame.left)}..${Math.round(frame.right)})`);
        if (box.right > window.innerWidth + 1 || box.left < -1) found.push(`${name(el, text)}: out of the window (${Math.round(box.left)}..${Math.round(box.right)} of ${window.innerWidth})`);
        for (let a = el.parentElement; a; a = a.parentElement) {
          const s = getComputedStyle(a);
          if (s.overflowX === 'visible') continue;
          const b = a.getBoundingClientRect();
          if (box.right > b.right + 1 || box.left < b.left - 1) {
            found.push(`${name(el, text)}: clipped by ${name(a, '')} (${Math.round(box.left)}..${Math.round(box.right)} in ${Math.round(b.left)}..${Math.round(b.right)})`);
            break;
          }
        }
      }
    }
    measure.remove();
    return found;
  });
}

/** The wallet look-up's answer (the ids) from the admin API, with `company_id` when given, for the text `query` (as the dialog asks). */
async function walletLookup(page: Page, company = '', query = ''): Promise<string[]> {
  return page.evaluate(
    ([connection, company_id, q]) =>
      new Promise<string[]>((resolve, reject) => {
        (window as any).CustodyLookup.lookup('wallet', connection, company_id ? { company_id } : {}, q).then(
          (list: Array<{ value: string }>) => resolve(list.map((o) => o.value)),
          (e: { message: string }) => reject(new Error(e.message)),
        );
      }),
    [CONFIG, company, query] as const,
  );
}

/** Type into the row `row`'s TypedInput and wait for the look-up's menu; @returns the entries' texts. */
async function openLookup(page: Page, row: string, typed: string): Promise<string[]> {
  const field = page.locator(`${row} input.red-ui-typedInput-input`);
  await field.click();
  await field.press('End');
  await field.pressSequentially(typed, { delay: 60 });
  let shown = false;
  for (let attempt = 0; attempt < 4 && !shown; attempt++) {
    if (attempt > 0) await field.press('End');
    shown = await page.waitForSelector('.red-ui-autoComplete-container a', { timeout: 5000 }).then(() => true, () => false);
  }
  assert.ok(shown, 'the look-up shows a menu');
  await page.waitForTimeout(300);
  return page.$$eval('.red-ui-autoComplete-container a', (as) => as.map((a) => (a.textContent ?? '').trim()));
}

describe('the editor at 1366x768: simulator key defaults, filtered look-ups, nothing cut off', function () {
  this.timeout(180000);
  const red = useRedProcess({ prefix: 'cf-no-cutoff-', flows: JSON.stringify(FLOWS) });

  it('opens a stored built-in simulator connection with its keys selected; Update on it changes nothing', async () => {
    await withEditor(red().base, VIEWPORT, { types: ['custody-config'], nodes: [CONFIG] }, async ({ page, errors }) => {
      await openConfigDialog(page, CONFIG, ['#node-config-input-simulatorV1Key']);
      const shown = await page.evaluate(() => {
        const text = (id: string) => {
          const s = document.getElementById(id) as HTMLSelectElement;
          return { value: s.value, text: s.selectedIndex >= 0 ? s.options[s.selectedIndex].text : '' };
        };
        return { v1: text('node-config-input-simulatorV1Key'), v2: text('node-config-input-simulatorApiKey') };
      });
      assert.deepEqual(shown, { v1: { value: 'full', text: "the account's full key" }, v2: { value: 'k.partner', text: "k.partner (the partner's key)" } });
      await page.click('#node-config-dialog-ok');
      await page.waitForSelector('#node-config-dialog-ok', { state: 'detached' });
      const after = await page.evaluate((id) => {
        const RED = (window as any).RED;
        const n = RED.nodes.node(id);
        const last = RED.history.peek();
        return { state: { dirty: RED.nodes.dirty(), changed: !!n.changed, deployDisabled: document.getElementById('red-ui-header-button-deploy')!.classList.contains('disabled') }, changes: Object.keys(last?.changes ?? {}).concat(Object.keys(last?.changes?.credentials ?? {}).map((k) => `credentials.${k}`)).join(', ') };
      }, CONFIG);
      assert.deepEqual(after.state, { dirty: false, changed: false, deployDisabled: true }, `the change recorded: ${after.changes}`);
      assert.deepEqual(errors, []);
    });
  });

  it('shows the Test connection result whole: the key fingerprint wraps in the box', async () => {
    await withEditor(red().base, VIEWPORT, { types: ['custody-config'], nodes: [CONFIG] }, async ({ page, errors }) => {
      await openConfigDialog(page, CONFIG);
      const result = await runConnectionTest(page);
      assert.equal(result.state, 'ok', result.text);
      assert.match(result.text, /[0-9a-f]{2}(:[0-9a-f]{2}){31}|[0-9a-f]{64}|SHA-256/i, 'the result names the key fingerprint');
      await page.waitForTimeout(300);
      const box = await page.locator('#custody-config-test-result').boundingBox();
      await screenshot(page, 'no-cutoff-test-connection.png', box ? { x: 0, y: Math.max(0, box.y - 260), width: VIEWPORT.width, height: Math.min(VIEWPORT.height - Math.max(0, box.y - 260), box.height + 300) } : undefined);
      assert.deepEqual(await cutOff(page, '#custody-config-test-result'), []);
      await page.click('#node-config-dialog-cancel');
      assert.deepEqual(errors, []);
    });
  });

  it('lists the chosen company\'s wallets in "From wallet", each id whole; every wallet with no company', async () => {
    await withEditor(red().base, VIEWPORT, { types: ['custody-transfer'], nodes: [TRANSFER], globals: ['CustodyLookup'] }, async ({ page, errors }) => {
      await openNodeDialog(page, TRANSFER, { selector: '.custody-row[data-property="wallet_id"] .red-ui-typedInput-container' });
      await page.waitForFunction(() => {
        const v = (window as any).$('#node-input-connection').val();
        return typeof v === 'string' && v !== '' && v !== '_ADD_';
      }, undefined, { timeout: 15000 });
      const all = await walletLookup(page);
      const ofCompany = await walletLookup(page, 'demo-company');
      assert.ok(ofCompany.length > 0 && ofCompany.length < all.length, `the company's wallets (${ofCompany.length}) are some of all (${all.length})`);
      // "From wallet", with Company id demo-company in the dialog: the company's wallets only.
      const asked: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('custodyflow/lookup/')) asked.push(r.url().replace(/^.*custodyflow\/lookup\//, ''));
      });
      const entries = await openLookup(page, '.custody-row[data-property="wallet_id"]', 'w');
      const expected = await walletLookup(page, 'demo-company', 'w');
      assert.equal(entries.length, expected.length, `look-ups asked: ${asked.join(' | ')}; entries: ${entries.join(' | ')}`);
      expected.forEach((v, i) => assert.ok(entries[i].endsWith(v), `entry ${i} "${entries[i]}" shows the id ${v} whole`));
      const others = all.filter((x) => !ofCompany.includes(x));
      assert.ok(others.length > 0, 'another company has wallets');
      for (const v of others) assert.ok(!entries.some((e) => e.endsWith(v)), `${v} (another company's) not offered`);
      await screenshot(page, 'no-cutoff-wallet-lookup.png');
      assert.deepEqual(await cutOff(page, '.red-ui-autoComplete-container'), []);
      await page.keyboard.press('Escape');
      // No company chosen: every wallet is offered.
      await page.evaluate(() => {
        const input = (window as any).$('#node-input-company_id');
        input.typedInput('value', '');
      });
      await page.locator('.custody-row[data-property="wallet_id"] input.red-ui-typedInput-input').fill('');
      const unfiltered = await openLookup(page, '.custody-row[data-property="wallet_id"]', 'w');
      assert.equal(unfiltered.length, (await walletLookup(page, '', 'w')).length, `entries: ${unfiltered.join(' | ')}`);
      assert.ok(unfiltered.length > entries.length, `every company's wallets: ${unfiltered.length}, the company's: ${entries.length}`);
      await page.keyboard.press('Escape');
      await page.click('#node-dialog-cancel');
      assert.deepEqual(errors, []);
    });
  });

  it('shows the track dialog whole: every Kind option, label and field fits', async () => {
    await withEditor(red().base, VIEWPORT, { types: ['custody-track'], nodes: [TRACK] }, async ({ page, errors }) => {
      await openNodeDialog(page, TRACK, { selector: '#node-input-kind' });
      await screenshot(page, 'no-cutoff-track-dialog.png');
      assert.deepEqual(await cutOff(page, '.red-ui-tray-body form'), []);
      await page.click('#node-dialog-cancel');
      assert.deepEqual(errors, []);
    });
  });

  it('shows the pre and code of every node type\'s help whole in the Info sidebar (wrapped or scrolled)', async () => {
    await withEditor(red().base, VIEWPORT, { types: ['custody-config', 'custody-transfer'] }, async ({ page, errors }) => {
      // Every node type of the pack registered (the editor loads them one module file after another).
      await page.waitForFunction(() => (window as any).RED.nodes.registry.getNodeTypes().filter((t: string) => t.startsWith('custody-')).length >= 23, undefined, { timeout: 30000 });
      const types: string[] = await page.evaluate(() => {
        const RED = (window as any).RED;
        return RED.nodes.registry.getNodeTypes().filter((t: string) => t.startsWith('custody-'));
      });
      assert.ok(types.length >= 23, `${types.length} node types`);
      const found: string[] = [];
      for (const type of types) {
        await page.evaluate((t) => (window as any).RED.sidebar.help.show(t), type);
        await page.waitForFunction(() => Array.from(document.querySelectorAll('.red-ui-help')).some((h) => (h.textContent ?? '').trim().length > 0));
        await page.waitForTimeout(150);
        const problems = await page.$$eval('.red-ui-help pre, .red-ui-help code', (els) => {
          const out: string[] = [];
          for (const el of els) {
            const h = el as HTMLElement;
            if (h.offsetParent === null) continue;
            const s = getComputedStyle(el);
            const scrolls = s.overflowX === 'auto' || s.overflowX === 'scroll';
            let clip: Element | null = el.parentElement;
            while (clip && getComputedStyle(clip).overflowX === 'visible') clip = clip.parentElement;
            const box = el.getBoundingClientRect();
            const room = clip ? clip.getBoundingClientRect() : { left: 0, right: window.innerWidth };
            if (!scrolls && (box.right > room.right + 1 || box.left < room.left - 1)) out.push(`${el.tagName.toLowerCase()} "${(el.textContent ?? '').slice(0, 50)}" ends at ${Math.round(box.right)}, shown to ${Math.round(room.right)}`);
          }
          return out;
        });
        found.push(...problems.map((p) => `${type}: ${p}`));
      }
      assert.deepEqual(found, []);
      assert.deepEqual(errors, []);
    });
  });
});
