/**
 * The "Test this policy" section of the custody-approver dialog (docs/policies.md "In the dialog"):
 * the draft as it stands in the dialog (not deployed) is
 *
 * - simulated over the approver's recorded history of a period
 *   (`POST custody/approvers/{node id}/simulate`, lib's `SimulationResult`);
 * - tried on one action typed by hand (`POST custody/approvers/{node id}/try`, lib's `TryResult`);
 * - exported as a policy file `{rules, defaultDecision}` and imported from one, checked against the
 *   package's JSON Schema (`GET custody/approvers/policy-schema`, schemas/approval-policy.schema.json).
 *
 * All routes are the admin API of nodes/custody-approver/admin.ts (scope `custody.policy.read`;
 * 400 `{error, field}`, 404 not deployed, 503 starting). Texts come from the node's catalog
 * (`custody-approver.policy.*`). Defines window.CustodyApproverPolicy once.
 */
import { checkSchema, type JsonSchema } from './policy-schema-check';

/** The message catalog namespace of the custody-approver node set (Node-RED: `<module>/<set>`). */
const NAMESPACE = '@custodyflow/node-red-custody/custody-approver';

const editor = RED as unknown as { _: (key: string, substitutions?: Record<string, unknown>) => string };

/** A text of the node's catalog (`key` a literal `custody-approver.policy.<name>`, checked by test/nodes/i18n.test.ts). */
function t(key: string, substitutions?: Record<string, unknown>): string {
  return editor._(`${NAMESPACE}:${key}`, substitutions);
}

/** A policy file, and the draft the dialog holds: the node's `rules` and `defaultDecision` properties. */
export interface Policy {
  rules: unknown[];
  defaultDecision: string;
}

/** What the dialog gives the section (custody-approver.html's oneditprepare). */
export interface PolicySetup {
  /** The node being edited (its id names the deployed approver; its name the exported file). */
  node: { id: string; name?: string };
  /** The element the section is built in. */
  container: string;
  /** Every action type a rule can name. */
  actionTypes: string[];
  /** The draft as the dialog would save it (the dialog's own read of its rows). */
  draft: () => Policy;
  /** Replace the dialog's rules and no-match decision (not saved until Done). */
  replace: (policy: Policy) => void;
}

/** An admin API failure as the section shows it. */
interface Failure {
  status: number;
  error: string;
  field?: string;
}

const STYLE = `
.custody-policy { margin-top: 8px; border-top: 1px solid var(--red-ui-secondary-border-color, #ddd); padding-top: 6px; }
.custody-policy-toggle { cursor: pointer; font-weight: bold; user-select: none; }
.custody-policy-body { display: none; margin: 6px 0 0 4px; }
.custody-policy-open .custody-policy-body { display: block; }
.custody-policy-bar { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 6px 0; }
#custody-approver-policy .custody-policy-bar input[type="date"] { width: 150px; margin: 0; }
#custody-approver-policy .custody-policy-bar label { width: auto; margin: 0; }
.custody-policy-form { display: grid; grid-template-columns: 170px minmax(0, 1fr); gap: 4px 6px; align-items: center; }
#custody-approver-policy .custody-policy-form label { width: auto; margin: 0; }
#custody-approver-policy .custody-policy-form input, #custody-approver-policy .custody-policy-form select { width: 100%; margin: 0; box-sizing: border-box; }
#custody-approver-policy .custody-policy-form input[type="checkbox"] { width: auto; justify-self: start; }
.custody-policy-changes td:last-child { min-width: 110px; }
.custody-policy-message { margin: 4px 0; }
.custody-policy-message.custody-policy-error { color: var(--red-ui-text-color-error, #c00); }
.custody-policy-result { overflow-x: auto; }
.custody-policy-result table { width: 100%; border-collapse: collapse; margin: 4px 0 8px; font-size: 0.92em; }
.custody-policy-result th, .custody-policy-result td { text-align: left; padding: 2px 6px; border-bottom: 1px solid var(--red-ui-secondary-border-color, #eee); vertical-align: top; }
.custody-policy-result h5 { margin: 8px 0 2px; font-size: 0.95em; }
.custody-policy-result details summary { cursor: pointer; }
.custody-policy-result ul { margin: 2px 0 2px 16px; }
.custody-rule.custody-policy-refused { outline: 2px solid var(--red-ui-form-input-border-error-color, #d6615f); }
`;

/** The admin API answer as a {@link Failure}. */
function failureOf(xhr: JQuery.jqXHR): Failure {
  const body = (xhr.responseJSON ?? {}) as { error?: unknown; field?: unknown };
  const error = typeof body.error === 'string' ? body.error : xhr.responseText || xhr.statusText || String(xhr.status);
  return { status: xhr.status, error, ...(typeof body.field === 'string' ? { field: body.field } : {}) };
}

/** POST `body` to the admin path `url` (relative to the editor, Node-RED's ajax setup adds the login). */
function post<T>(url: string, body: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    $.ajax({ url, method: 'POST', contentType: 'application/json', dataType: 'json', data: JSON.stringify(body) }).then(
      (r: T) => resolve(r),
      (xhr: JQuery.jqXHR) => reject(failureOf(xhr)),
    );
  });
}

/** The schema of a policy file, read once per editor page. */
let schema: Promise<JsonSchema> | undefined;
function policySchema(): Promise<JsonSchema> {
  if (!schema) {
    schema = new Promise((resolve, reject) => {
      $.ajax({ url: 'custody/approvers/policy-schema', dataType: 'json' }).then(
        (s: JsonSchema) => resolve(s),
        (xhr: JQuery.jqXHR) => {
          schema = undefined;
          reject(failureOf(xhr));
        },
      );
    });
  }
  return schema;
}

/** `yyyy-mm-dd` of a local date. */
function isoDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** `yyyy-mm-ddThh:mm` of a local time (a datetime-local input's value). */
function isoMinute(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${isoDay(d)}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Show `text` in the message line `el` (an error in red, or clear it with ''). */
function say(el: JQuery, text: string, error = false): void {
  el.text(text).toggleClass('custody-policy-error', error).toggle(text !== '');
}

/** The text of a failed call: not deployed (404), not permitted (401/403), or the answer's error. */
function failureText(f: Failure): string {
  if (f.status === 404) return t('custody-approver.policy.notDeployed', { error: f.error });
  if (f.status === 401 || f.status === 403) return t('custody-approver.policy.notPermitted');
  if (f.status === 400 && f.field) return t('custody-approver.policy.refused', { field: f.field, error: f.error });
  return f.error;
}

/** Mark the rule row a refused field `rules[N].x` names (row N+1), with the message as its tooltip. */
function markRefused(f: Failure): void {
  $('#node-input-rule-container .custody-policy-refused').removeClass('custody-policy-refused');
  const m = f.field ? /^rules\[(\d+)\](?:\.(\w+))?/.exec(f.field) : null;
  if (!m) return;
  const row = $(`#node-input-rule-container > li:nth-child(${Number(m[1]) + 1}) .custody-rule`);
  row.addClass('custody-policy-refused').attr('title', f.error);
  if (m[2]) row.find(`.custody-rule-${m[2]}`).addClass('input-error').attr('title', f.error);
}

/** An amount of an {@link ApprovedSum}-like `{count, decimal, baseUnits}`: whole units when known. */
function sumText(s: { count: number; decimal: string | null; baseUnits: string }): string {
  return t('custody-approver.policy.sum', { count: s.count, amount: s.decimal ?? `${s.baseUnits} base units` });
}

/** A table of `rows` under `head`. */
function table(head: string[], rows: Array<Array<string | JQuery>>, cls: string): JQuery {
  const el = $('<table>', { class: cls });
  const tr = $('<tr>').appendTo($('<thead>').appendTo(el));
  for (const h of head) $('<th>').text(h).appendTo(tr);
  const body = $('<tbody>').appendTo(el);
  for (const r of rows) {
    const row = $('<tr>').appendTo(body);
    for (const c of r) $('<td>').append(typeof c === 'string' ? document.createTextNode(c) : c).appendTo(row);
  }
  return el;
}

/** The reasons of a decision, expandable. */
function reasonsOf(reasons: string[], summary: string): JQuery {
  const d = $('<details>').append($('<summary>').text(summary));
  const ul = $('<ul>').appendTo(d);
  for (const r of reasons) $('<li>').text(r).appendTo(ul);
  return d;
}

type Rule = { index: number; name: string } | null;
interface Velocity {
  used: string;
  limit: string | null;
  count: number;
  countLimit: number | null;
  window: number;
}
interface Decided {
  decision: string;
  rule: Rule;
  reasons: string[];
  velocity?: Velocity | null;
}
interface Simulation {
  from: number;
  to: number;
  actions: number;
  replayed: number;
  counts: Record<string, number>;
  assets: Record<string, { approvedThen: { count: number; decimal: string | null; baseUnits: string }; approvedDraft: { count: number; decimal: string | null; baseUnits: string }; approvedByPeople: { count: number; decimal: string | null; baseUnits: string } }>;
  changes: Array<{ action_id: string; type: string; asset: string | null; amount: string | null; amountDecimal: string | null; destination: string | null; decidedAt: string; then: Decided; draft: Decided; person?: { decision: string; reviewers: string[] } }>;
  changesLeftOff: number;
  decidedByPeople: number;
  notReplayable: { count: number; why: Record<string, number> };
}

/** The rule that decided, as a text. */
function ruleText(r: Rule): string {
  return r ? t('custody-approver.policy.rule', { n: r.index + 1, name: r.name }) : t('custody-approver.policy.noRule');
}

/** The velocity a decision read, as a text ('' when none). */
function velocityText(v: Velocity | null | undefined): string {
  if (!v) return '';
  return t('custody-approver.policy.velocity', { used: v.used, limit: v.limit ?? '-', count: v.count, countLimit: v.countLimit ?? '-', hours: v.window / 3600 });
}

/** Draw a simulation's answer in `out`. */
function showSimulation(out: JQuery, r: Simulation): void {
  out.empty();
  $('<div>', { class: 'custody-policy-summary' }).text(t('custody-approver.policy.simSummary', { actions: r.actions, replayed: r.replayed, changed: r.changes.length + r.changesLeftOff })).appendTo(out);
  $('<h5>').text(t('custody-approver.policy.countsHead')).appendTo(out);
  out.append(table([t('custody-approver.policy.colChange'), t('custody-approver.policy.colCount')], Object.keys(r.counts).map((k) => [k, String(r.counts[k])]), 'custody-policy-counts'));
  $('<h5>').text(t('custody-approver.policy.assetsHead')).appendTo(out);
  out.append(
    table(
      [t('custody-approver.policy.colAsset'), t('custody-approver.policy.colThen'), t('custody-approver.policy.colDraft'), t('custody-approver.policy.colPeople')],
      Object.keys(r.assets).map((a) => [a, sumText(r.assets[a].approvedThen), sumText(r.assets[a].approvedDraft), sumText(r.assets[a].approvedByPeople)]),
      'custody-policy-assets',
    ),
  );
  $('<h5>').text(t('custody-approver.policy.changesHead')).appendTo(out);
  if (r.changes.length === 0) $('<div>', { class: 'custody-policy-nochange' }).text(t('custody-approver.policy.noChange')).appendTo(out);
  else {
    const rows = r.changes.map((c) => {
      const id = $('<span>', { title: c.action_id }).text(c.action_id.slice(0, 8));
      const decision = $('<span>', { class: 'custody-policy-change', title: c.draft.reasons.join('\n') }).text(`${c.then.decision} → ${c.draft.decision}`);
      if (c.person) decision.append(document.createTextNode(' ' + t('custody-approver.policy.person', { decision: c.person.decision })));
      return [id, c.type, c.asset ?? '', c.amountDecimal ?? c.amount ?? '', decision, reasonsOf(c.draft.reasons, ruleText(c.draft.rule))];
    });
    out.append(
      table(
        [t('custody-approver.policy.colAction'), t('custody-approver.policy.colType'), t('custody-approver.policy.colAsset'), t('custody-approver.policy.colAmount'), t('custody-approver.policy.colThenDraft'), t('custody-approver.policy.colReasons')],
        rows,
        'custody-policy-changes',
      ),
    );
  }
  if (r.changesLeftOff > 0) $('<div>').text(t('custody-approver.policy.leftOff', { n: r.changesLeftOff })).appendTo(out);
  $('<div>', { class: 'custody-policy-people' }).text(t('custody-approver.policy.people', { n: r.decidedByPeople })).appendTo(out);
  const why = Object.keys(r.notReplayable.why).map((k) => `${k}: ${r.notReplayable.why[k]}`);
  $('<div>', { class: 'custody-policy-notreplayable' }).text(t('custody-approver.policy.notReplayable', { n: r.notReplayable.count }) + (why.length ? ` (${why.join('; ')})` : '')).appendTo(out);
}

/** Draw a trial's answer in `out`. */
function showTrial(out: JQuery, r: Decided): void {
  out.empty();
  $('<div>', { class: 'custody-policy-decision' }).text(t('custody-approver.policy.tryDecision', { decision: r.decision, rule: ruleText(r.rule) })).appendTo(out);
  const v = velocityText(r.velocity);
  if (v) $('<div>', { class: 'custody-policy-velocity' }).text(v).appendTo(out);
  const ul = $('<ul>', { class: 'custody-policy-reasons' }).appendTo(out);
  for (const reason of r.reasons) $('<li>').text(reason).appendTo(ul);
}

/** The file name of an exported policy: `<node name or id>.policy.json`, safe characters only. */
function exportName(node: { id: string; name?: string }, typedName: string): string {
  const base = (typedName.trim() || node.id).replace(/[^\w.\- ]+/g, '_').trim() || node.id;
  return `${base}.policy.json`;
}

/** A labelled field of the Try form. */
function field(form: JQuery, label: string, input: JQuery): JQuery {
  $('<label>').text(label).appendTo(form);
  return input.appendTo(form);
}

/** The action types the draft's rules name (all of `all` when none names one). */
function typesOf(draft: Policy, all: string[]): string[] {
  const named = new Set<string>();
  for (const r of draft.rules) for (const ty of ((r as { actionTypes?: unknown }).actionTypes as string[] | undefined) ?? []) named.add(ty);
  return named.size ? all.filter((a) => named.has(a)) : all.slice();
}

/** Build the section in `s.container`: the Simulate bar, the Try form, export and import. */
function setup(s: PolicySetup): void {
  if (!document.getElementById('custody-policy-style')) $('<style id="custody-policy-style"></style>').text(STYLE).appendTo('head');
  const root = $(s.container).empty().addClass('custody-policy');
  const toggle = $('<div>', { class: 'custody-policy-toggle' }).appendTo(root);
  toggle.append($('<i>', { class: 'fa fa-caret-right' })).append(document.createTextNode(' ' + t('custody-approver.policy.title')));
  const body = $('<div>', { class: 'custody-policy-body' }).appendTo(root);
  $('<div>', { class: 'custody-policy-intro' }).text(t('custody-approver.policy.intro')).appendTo(body);

  // Simulate over a period.
  const now = new Date();
  const bar = $('<div>', { class: 'custody-policy-bar' }).appendTo(body);
  $('<label>', { for: 'custody-policy-from' }).text(t('custody-approver.policy.from')).appendTo(bar);
  const from = $('<input>', { type: 'date', id: 'custody-policy-from' }).val(isoDay(new Date(now.getTime() - 30 * 86_400_000))).appendTo(bar);
  $('<label>', { for: 'custody-policy-to' }).text(t('custody-approver.policy.to')).appendTo(bar);
  const to = $('<input>', { type: 'date', id: 'custody-policy-to' }).val(isoDay(now)).appendTo(bar);
  const simulate = $('<button>', { type: 'button', id: 'custody-policy-simulate', class: 'red-ui-button' }).text(t('custody-approver.policy.simulate')).appendTo(bar);
  const simMessage = $('<div>', { class: 'custody-policy-message', id: 'custody-policy-sim-message' }).hide().appendTo(body);
  const simOut = $('<div>', { class: 'custody-policy-result', id: 'custody-policy-sim-result' }).appendTo(body);
  simulate.on('click', (e) => {
    e.preventDefault();
    const fromMs = new Date(`${String(from.val())}T00:00:00`).getTime();
    const toMs = new Date(`${String(to.val())}T23:59:59.999`).getTime();
    simOut.empty();
    say(simMessage, t('custody-approver.policy.running'));
    simulate.prop('disabled', true);
    post<Simulation>(`custody/approvers/${encodeURIComponent(s.node.id)}/simulate`, { ...s.draft(), from: Number.isFinite(fromMs) ? fromMs : String(from.val()), to: Number.isFinite(toMs) ? toMs : String(to.val()) })
      .then(
        (r) => {
          say(simMessage, '');
          markRefused({ status: 200, error: '' });
          showSimulation(simOut, r);
        },
        (f: Failure) => {
          say(simMessage, failureText(f), true);
          markRefused(f);
        },
      )
      .then(() => simulate.prop('disabled', false));
  });

  // Try an action.
  $('<h5>').text(t('custody-approver.policy.tryHead')).appendTo(body);
  const form = $('<div>', { class: 'custody-policy-form', id: 'custody-policy-try-form' }).appendTo(body);
  const type = field(form, t('custody-approver.policy.type'), $('<select>', { id: 'custody-policy-try-type' }));
  const refreshTypes = () => {
    const chosen = String(type.val() ?? '');
    type.empty();
    for (const ty of typesOf(s.draft(), s.actionTypes)) $('<option>', { value: ty }).text(ty).appendTo(type);
    if (chosen && type.find(`option[value="${chosen}"]`).length) type.val(chosen);
  };
  type.on('focus mousedown', refreshTypes);
  const asset = field(form, t('custody-approver.policy.asset'), $('<input>', { type: 'text', id: 'custody-policy-try-asset', placeholder: 'BTC-TESTNET' }));
  const amount = field(form, t('custody-approver.policy.amount'), $('<input>', { type: 'text', id: 'custody-policy-try-amount', placeholder: '0.001' }));
  const destination = field(form, t('custody-approver.policy.destination'), $('<input>', { type: 'text', id: 'custody-policy-try-destination' }));
  const whitelisted = field(form, t('custody-approver.policy.whitelisted'), $('<input>', { type: 'checkbox', id: 'custody-policy-try-whitelisted' }));
  const source = field(form, t('custody-approver.policy.source'), $('<input>', { type: 'text', id: 'custody-policy-try-source' }));
  const reference = field(form, t('custody-approver.policy.reference'), $('<input>', { type: 'text', id: 'custody-policy-try-reference' }));
  const at = field(form, t('custody-approver.policy.time'), $('<input>', { type: 'datetime-local', id: 'custody-policy-try-time' }).val(isoMinute(now)));
  const tryBar = $('<div>', { class: 'custody-policy-bar' }).appendTo(body);
  const tryButton = $('<button>', { type: 'button', id: 'custody-policy-try', class: 'red-ui-button' }).text(t('custody-approver.policy.try')).appendTo(tryBar);
  const tryMessage = $('<div>', { class: 'custody-policy-message', id: 'custody-policy-try-message' }).hide().appendTo(body);
  const tryOut = $('<div>', { class: 'custody-policy-result', id: 'custody-policy-try-result' }).appendTo(body);
  tryButton.on('click', (e) => {
    e.preventDefault();
    const text = (el: JQuery) => String(el.val() ?? '').trim();
    const action: Record<string, unknown> = { type: text(type) };
    if (text(asset)) action.asset = text(asset);
    if (text(amount)) action.amountDecimal = text(amount);
    if (text(destination)) action.destination = text(destination);
    if (text(source)) action.source = text(source);
    if (text(reference)) action.reference = String(reference.val());
    if (whitelisted.prop('checked')) action.whitelisted = true;
    const when = text(at) ? new Date(text(at)).getTime() : NaN;
    if (Number.isFinite(when)) action.at = when;
    tryOut.empty();
    say(tryMessage, t('custody-approver.policy.running'));
    post<Decided>(`custody/approvers/${encodeURIComponent(s.node.id)}/try`, { ...s.draft(), action }).then(
      (r) => {
        say(tryMessage, '');
        showTrial(tryOut, r);
      },
      (f: Failure) => {
        say(tryMessage, failureText(f), true);
        markRefused(f);
      },
    );
  });

  // Export and import the policy file.
  $('<h5>').text(t('custody-approver.policy.fileHead')).appendTo(body);
  const fileBar = $('<div>', { class: 'custody-policy-bar' }).appendTo(body);
  const exportButton = $('<button>', { type: 'button', id: 'custody-policy-export', class: 'red-ui-button' }).text(t('custody-approver.policy.export')).appendTo(fileBar);
  const importButton = $('<button>', { type: 'button', id: 'custody-policy-import', class: 'red-ui-button' }).text(t('custody-approver.policy.import')).appendTo(fileBar);
  const file = $('<input>', { type: 'file', id: 'custody-policy-import-file', accept: '.json,application/json' }).hide().appendTo(fileBar);
  const fileMessage = $('<div>', { class: 'custody-policy-message', id: 'custody-policy-file-message' }).hide().appendTo(body);
  exportButton.on('click', (e) => {
    e.preventDefault();
    const blob = new Blob([JSON.stringify(s.draft(), null, 2) + '\n'], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = exportName(s.node, String($('#node-input-name').val() ?? ''));
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
  importButton.on('click', (e) => {
    e.preventDefault();
    file.trigger('click');
  });
  file.on('change', () => {
    const f = (file[0] as HTMLInputElement).files?.[0];
    (file[0] as HTMLInputElement).value = '';
    if (!f) return;
    const reader = new FileReader();
    reader.onload = () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(reader.result));
      } catch (err) {
        say(fileMessage, t('custody-approver.policy.notJson', { file: f.name, error: (err as Error).message }), true);
        return;
      }
      policySchema().then(
        (sch) => {
          const problems = checkSchema(sch, parsed);
          if (problems.length) {
            say(fileMessage, t('custody-approver.policy.badFile', { file: f.name, problems: problems.slice(0, 3).join('; ') }), true);
            return;
          }
          const p = parsed as { rules: unknown[]; defaultDecision?: string };
          s.replace({ rules: p.rules, defaultDecision: p.defaultDecision ?? 'hold' });
          say(fileMessage, t('custody-approver.policy.imported', { file: f.name, n: p.rules.length }));
        },
        (fail: Failure) => say(fileMessage, failureText(fail), true),
      );
    };
    reader.readAsText(f);
  });

  toggle.on('click', () => {
    const open = !root.hasClass('custody-policy-open');
    root.toggleClass('custody-policy-open', open);
    toggle.find('i').attr('class', open ? 'fa fa-caret-down' : 'fa fa-caret-right');
    if (open) refreshTypes();
  });
}

/** What window.CustodyApproverPolicy holds. */
export interface CustodyApproverPolicyApi {
  setup: typeof setup;
}

declare global {
  interface Window {
    CustodyApproverPolicy?: CustodyApproverPolicyApi;
  }
}

if (!window.CustodyApproverPolicy) window.CustodyApproverPolicy = { setup };
