/**
 * Every property validator of the pack is a Node-RED 4 validator, checked in a real editor (a
 * `node-red` process with the pack, headless Chromium): Node-RED 4's editor (`validateNodeProperty`
 * in @node-red/editor-client red.js) calls `validate.call(node, value, opt)` and takes a string it
 * returns as the reason the node is invalid only when the validator declares exactly two
 * parameters; one of any other length is a 2.x validator whose result is coerced to a boolean, so
 * its message would count as valid.
 *
 * For every node type the pack registers (package.json "node-red".nodes, as the page's registry
 * lists them) and every property of its `defaults` and `credentials` with a `validate`:
 * - the validator declares two parameters;
 * - it is called with bad values; it answers `true` or a message (never another value);
 * - each value it gives a message for, set on a node of that type imported into the workspace,
 *   makes Node-RED's own validation (`RED.editor.validateNode`) mark the node invalid with that
 *   message, and Deploy's confirmation lists the node among the invalid ones;
 * - in the node's edit dialog the message is written beside the field (in the field's row).
 *
 * Run alone with `npx mocha --no-config --timeout 600000 dist/test/editor/validators-nr4.test.js`.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { root } from '../helpers/red-process';
import { openNodeDialog, simulatorFlows, useRedProcess, withEditor } from '../helpers/editor-kit';

const TAB = 'a4d0000000000f01';
const CONFIG = 'a4d0000000000c01';

/** The node types of the pack, as package.json declares them to Node-RED. */
const TYPES: string[] = Object.keys(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))['node-red'].nodes);

/**
 * Values a user can type or a flows.json can hold that some validator of the pack refuses: empty,
 * negative, not a number, a JSON-ish text that is not JSON, a number, surrounding spaces, too long,
 * a path traversal, a slash.
 */
const BAD_VALUES: unknown[] = ['', '-5', '-100', '0', 'abc', '{asset: BTC}', 7, '  x  ', 'x'.repeat(400), '..', 'a/b', 'x y'];

/** The properties a node of a type needs to be valid before a bad value is set (none: its defaults). */
const BASE: Record<string, Record<string, unknown>> = {
  'custody-coreclient-feed': { clientId: 'demo-approver' },
};

/** One validator of the pack, as the page reads it. */
interface Census {
  type: string;
  group: 'defaults' | 'credentials';
  property: string;
  /** `validate.length`: the parameters it declares. */
  length: number;
}

/** One bad value of a validator, checked through Node-RED's own validation. */
interface Outcome {
  type: string;
  group: string;
  property: string;
  value: unknown;
  id: string;
  name: string;
  /** What the validator returned (called as Node-RED calls it). */
  result: unknown;
  /** `node.valid` after `RED.editor.validateNode`. */
  valid: boolean;
  /** `node.validationErrors` after it. */
  errors: unknown[];
  /** Whether the property is `required` (Node-RED then refuses "" before calling the validator). */
  required: boolean;
  /** Whether the type has an `operation` property (an operation node). */
  operationNode: boolean;
}

/** The validators of every pack node type (read from the definitions the page registered). */
function census(page: Page): Promise<{ registered: string[]; validators: Census[] }> {
  return page.evaluate((types) => {
    const RED = (window as any).RED;
    const module = RED.nodes.getType(types[0]).set.module;
    const registered = RED.nodes.registry.getNodeTypes().filter((t: string) => RED.nodes.getType(t)?.set?.module === module);
    const validators: Census[] = [];
    for (const type of registered) {
      const def = RED.nodes.getType(type);
      for (const group of ['defaults', 'credentials'] as const) {
        for (const property of Object.keys(def[group] || {})) {
          const validate = def[group][property].validate;
          if (validate !== undefined) validators.push({ type, group, property, length: typeof validate === 'function' ? validate.length : -1 });
        }
      }
    }
    return { registered, validators };
  }, TYPES);
}

/**
 * Import one node of each (validator, bad value) into the workspace: the type's defaults, the
 * connection, the {@link BASE} properties, `extra`, then the bad value; call the validator as Node-RED does,
 * then let Node-RED validate the node. The nodes stay in the workspace when `keep` (removed by
 * {@link removeNodes}), else each is removed once checked.
 */
function importBad(page: Page, validators: Census[], values: unknown[] = BAD_VALUES, keep = true, extra: Record<string, unknown> = {}): Promise<Outcome[]> {
  const start = imported;
  imported += validators.length * values.length;
  return page.evaluate(
    ({ validators, values, base, tab, config, start, keep, extra }) => {
      const RED = (window as any).RED;
      const out: Outcome[] = [];
      let n = start;
      for (const v of validators) {
        for (const value of values) {
          const def = RED.nodes.getType(v.type);
          const id = 'a4d1' + (n++).toString(16).padStart(12, '0');
          const name = `bad ${v.type}.${v.property} #${n}`;
          const isConfig = def.category === 'config';
          const props: Record<string, unknown> = { id, type: v.type, name, ...(base[v.type] || {}), ...extra };
          if (!isConfig) Object.assign(props, { z: tab, x: 200 + (n % 8) * 120, y: 60 + Math.floor(n / 8) * 40, wires: [] });
          if ('connection' in (def.defaults || {})) props.connection = config;
          if (v.group === 'defaults') props[v.property] = value;
          else props.credentials = { [v.property]: value };
          RED.view.importNodes([props], { notify: false, applyNodeDefaults: true });
          const node = RED.nodes.node(id);
          const current = v.group === 'defaults' ? node[v.property] : value;
          const result = def[v.group][v.property].validate.call(node, current, {});
          if (v.group === 'credentials') node._def = { ...node._def, _creds: { [v.property]: value } };
          RED.editor.validateNode(node);
          out.push({ type: v.type, group: v.group, property: v.property, value, id, name, result, valid: node.valid, errors: node.validationErrors || [], required: def[v.group][v.property].required === true, operationNode: 'operation' in (def.defaults || {}) });
          if (!keep) RED.nodes.remove(id);
        }
      }
      return out;
    },
    { validators, values, base: BASE, tab: TAB, config: CONFIG, start, keep, extra },
  );
}

/** How many nodes {@link importBad} imported so far (their ids and names stay unique). */
let imported = 0;

/** The validator an outcome checked. */
function asCensus(o: Outcome): Census {
  return { type: o.type, group: o.group as Census['group'], property: o.property, length: 2 };
}

/** Remove nodes `ids` from the workspace. */
async function removeNodes(page: Page, ids: string[]): Promise<void> {
  await page.evaluate((list) => {
    const RED = (window as any).RED;
    for (const id of list) if (RED.nodes.node(id)) RED.nodes.remove(id);
    RED.view.redraw(true);
  }, ids);
}

/**
 * Click Deploy and read the invalid nodes its confirmation lists (Node-RED's "improperly
 * configured" list: at most 5 names, "[tab] label (type)"), then cancel.
 */
async function deployWarning(page: Page): Promise<string[]> {
  await page.click('#red-ui-header-button-deploy');
  await page.waitForSelector('.red-ui-deploy-dialog-confirm-list', { state: 'visible', timeout: 15000 });
  const listed = await page.$$eval('.red-ui-deploy-dialog-confirm-list li', (els) => els.map((e) => e.textContent ?? ''));
  await page.click('.red-ui-notification button:has-text("Cancel")');
  await page.waitForSelector('.red-ui-deploy-dialog-confirm-list', { state: 'detached', timeout: 15000 });
  return listed;
}

/** Close the open dialog without saving. */
async function cancelDialog(page: Page): Promise<void> {
  await page.click('#node-dialog-cancel, #node-config-dialog-cancel');
  await page.waitForSelector('#node-dialog-ok, #node-config-dialog-ok', { state: 'detached' });
}

describe('every validator of the pack is a Node-RED 4 validator', function () {
  this.timeout(600000);
  const red = useRedProcess({ prefix: 'cf-validators-nr4-', flows: JSON.stringify(simulatorFlows(TAB, 'validators', CONFIG)) });

  it('two parameters; a message for a bad value makes the node invalid, listed by Deploy, written beside the field', async () => {
    await withEditor(red().base, { width: 1600, height: 1000 }, { types: TYPES, nodes: [CONFIG] }, async ({ page, errors }) => {
      const { registered, validators } = await census(page);
      assert.deepEqual([...registered].sort(), [...TYPES].sort(), 'the page registers every node type of package.json');
      const oneParameter = validators.filter((v) => v.length !== 2);
      console.log(`      ${validators.length} validators, ${oneParameter.length} of one parameter (or any other length than 2)`);
      assert.ok(validators.length > 100, `the census found the validators: ${validators.length}`);
      assert.deepEqual(oneParameter.map((v) => `${v.type}.${v.property} (${v.length})`), [], 'every validator declares (value, opt)');

      // Each node type with only its defaults (and BASE) is valid: a bad value alone makes it invalid.
      const baseline = await page.evaluate(
        ({ types, base, tab, config }) => {
          const RED = (window as any).RED;
          return types.map((type: string, i: number) => {
            const def = RED.nodes.getType(type);
            const id = 'a4d2' + i.toString(16).padStart(12, '0');
            const props: Record<string, unknown> = { id, type, ...(base[type] || {}) };
            if (def.category !== 'config') Object.assign(props, { z: tab, x: 100, y: 40 + 40 * i, wires: [] });
            if ('connection' in (def.defaults || {})) props.connection = config;
            RED.view.importNodes([props], { notify: false, applyNodeDefaults: true });
            const node = RED.nodes.node(id);
            RED.editor.validateNode(node);
            const out = { type, id, valid: node.valid, errors: node.validationErrors };
            RED.nodes.remove(id);
            return out;
          });
        },
        { types: TYPES, base: BASE, tab: TAB, config: CONFIG },
      );
      const connection = await page.evaluate((id) => {
        const n = (window as any).RED.nodes.node(id);
        (window as any).RED.editor.validateNode(n);
        return { valid: n.valid, errors: n.validationErrors };
      }, CONFIG);
      assert.deepEqual(connection, { valid: true, errors: [] }, 'the connection the nodes use is valid');
      assert.deepEqual(baseline.filter((b) => !b.valid), [], 'every node type is valid with its defaults');

      const outcomes = await importBad(page, validators, BAD_VALUES, false);
      const show = (o: Outcome) => `${o.type}.${o.property} = ${JSON.stringify(o.value)}`;
      const notTrueOrText = outcomes.filter((o) => o.result !== true && typeof o.result !== 'string');
      assert.deepEqual(notTrueOrText.map((o) => `${show(o)} -> ${JSON.stringify(o.result)}`), [], 'a validator answers true or a message');
      const messages = outcomes.filter((o) => typeof o.result === 'string');
      console.log(`      ${outcomes.length} bad values tried, ${messages.length} refused with a message, by ${new Set(messages.map((o) => o.type + '.' + o.property)).size} validators`);
      assert.ok(messages.length > validators.length, 'most validators refuse some bad value');
      // Node-RED's own rule decides: the message makes the node invalid, and is its reason (for
      // an empty value of a `required` property Node-RED's own check refuses it first, by name).
      const missed = messages.filter((o) => o.valid !== false || !(o.errors.includes(o.result) || (o.value === '' && o.required && o.errors.includes(o.property))));
      assert.deepEqual(missed.map((o) => `${show(o)}: "${o.result}" -> valid ${o.valid}, errors ${JSON.stringify(o.errors)}`), [], 'every message makes the node invalid');

      // Deploy lists the node: one bad value per validator, five nodes a time (Node-RED lists five).
      const firstOf = new Map<string, Outcome>();
      for (const o of messages) if (!firstOf.has(o.type + '.' + o.property)) firstOf.set(o.type + '.' + o.property, o);
      const picked = [...firstOf.values()];
      for (let i = 0; i < picked.length; i += 5) {
        const batch = picked.slice(i, i + 5);
        const keep: Outcome[] = [];
        for (const o of batch) keep.push(...(await importBad(page, [asCensus(o)], [o.value])));
        const listed = await deployWarning(page);
        for (const k of keep) {
          assert.ok(
            listed.some((t) => t.includes(k.name + ' (' + k.type + ')')),
            `Deploy lists ${show(k)} ("${k.result}"): ${JSON.stringify(listed)}`,
          );
        }
        await removeNodes(page, keep.map((k) => k.id));
      }

      // The dialog writes the message beside the field: per node type, a node with one bad value
      // (the first refused) per field of the dialog; a row shown holds the message text.
      const unseen: string[] = [];
      const skipped: Record<string, number> = {};
      let seen = 0;
      for (const o of picked) {
        // An operation node reading its operation from msg.operation shows every field row.
        const [node] = await importBad(page, [asCensus(o)], [o.value], true, o.property !== 'operation' && o.operationNode ? { operation: 'msg.operation' } : {});
        await openNodeDialog(page, node.id, { settleMs: 600 });
        const beside = await page.evaluate(
          ({ type, property, id }) => {
            const $ = (window as any).$;
            const RED = (window as any).RED;
            const input = $('#node-input-' + property + ', #node-config-input-' + property);
            if (!input.length) return { state: 'no field' };
            const row = input.closest('.form-row');
            if (!row.is(':visible')) return { state: 'row hidden' };
            // What the field holds (a select offers no option for the bad value; a number becomes text).
            const held = RED.nodes.getType(type).defaults[property].validate.call(RED.nodes.node(id), input.val(), {});
            if (typeof held !== 'string') return { state: 'field holds a valid value' };
            const texts = row.find('*:visible').toArray().map((e: HTMLElement) => e.textContent || '');
            return { state: texts.some((t: string) => t.includes(held)) ? 'shown' : 'not shown', held };
          },
          { type: o.type, property: o.property, id: node.id },
        );
        await cancelDialog(page);
        await removeNodes(page, [node.id]);
        if (beside.state === 'shown') seen++;
        else if (beside.state === 'not shown') unseen.push(`${show(o)}: "${beside.held}"`);
        else skipped[beside.state] = (skipped[beside.state] ?? 0) + 1;
      }
      console.log(`      ${seen} messages shown beside their field in the dialog; not applicable: ${JSON.stringify(skipped)}`);
      assert.deepEqual(unseen, [], 'the dialog writes the message in the field row');
      assert.deepEqual(errors, [], 'no script error in the page');
    });
  });

  it('every node of the shipped examples is valid (no validator refuses what the examples hold)', async () => {
    const dir = path.join(root, 'examples');
    const flows = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => ({ file: f, flow: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }));
    assert.ok(flows.length > 0, 'the examples are there');
    await withEditor(red().base, { width: 1600, height: 1000 }, { types: TYPES, nodes: [CONFIG] }, async ({ page, errors }) => {
      const invalid = await page.evaluate(
        ({ flows, types }) => {
          const RED = (window as any).RED;
          const out: string[] = [];
          const checked: Record<string, number> = {};
          for (const { file, flow } of flows) {
            const imported = RED.nodes.import(flow, { generateIds: true });
            const nodes = Array.isArray(imported) ? imported[0] : imported.nodes;
            for (const n of nodes) {
              if (!types.includes(n.type)) continue;
              RED.editor.validateNode(n);
              checked[n.type] = (checked[n.type] ?? 0) + 1;
              if (!n.valid) out.push(`${file}: ${n.type} ${n.name || n.id}: ${JSON.stringify(n.validationErrors)}`);
            }
          }
          return { out, checked };
        },
        { flows, types: TYPES },
      );
      const total = Object.values(invalid.checked).reduce((a, b) => a + b, 0);
      console.log(`      ${total} nodes of ${Object.keys(invalid.checked).length} pack types checked in ${flows.length} examples`);
      assert.ok(invalid.checked['custody-config'] > 0 && Object.keys(invalid.checked).length > 10, JSON.stringify(invalid.checked));
      assert.deepEqual(invalid.out, [], 'the examples hold no value a validator refuses');
      assert.deepEqual(errors, [], 'no script error in the page');
    });
  });
});
