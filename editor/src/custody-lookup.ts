/*
 * CustodyFlow: id suggestions for the custody nodes' edit dialogs, bundled into
 * resources/custody-lookup.js and served by Node-RED from the package's resources/ folder; load
 * it with
 *   <script type="text/javascript" src="resources/@custodyflow/node-red-custody/custody-lookup.js"></script>
 * (the custody-config dialog loads it too, so it is there once any custody node type is
 * installed). Defines window.CustodyLookup once.
 *
 * The suggestions come from GET <admin>/custodyflow/lookup/<kind> (nodes/custody-config/admin.ts):
 * the companies, funds, wallets, core clients, assets or exchanges of the DEPLOYED connection's
 * API account, as [{value, label}].
 *
 * Use on a TypedInput id field, as a custom type:
 *   $("#node-input-company_id").typedInput({
 *       types: [{
 *           value: "str", label: "string", icon: "red/images/typedInput/az.svg",
 *           autoComplete: CustodyLookup.autoComplete("company",
 *               function () { return $("#node-input-connection").val(); })
 *       }, "msg"]
 *   });
 *   // a wallet of the fund typed in the same dialog:
 *   CustodyLookup.autoComplete("wallet",
 *       function () { return $("#node-input-connection").val(); },
 *       function () { return { company_id: $("#node-input-company_id").typedInput("value"), fund_id: ... }; });
 */

/** One suggestion: `value` goes into the field when chosen, `label` is what the list shows. */
export interface LookupOption {
  value: string;
  label: string;
}

/** Why a look-up failed: the runtime's answer, or cause "http" when there was none. */
export interface LookupFailure {
  cause: string;
  message: string;
}

/** The context a look-up narrows by: company and fund ids. */
export type LookupContext = Record<string, unknown>;

/** A value, or a function that gives it. */
type Getter<T> = T | (() => T);

/** A suggestion as the TypedInput's menu takes it: `label` as text, or as an element (shown whole, wrapped). */
export interface MenuOption {
  value: string;
  label: string | JQuery;
}

/** The search function of a TypedInput type's `autoComplete`. */
export type AutoComplete = (value: string, done: (options: MenuOption[]) => void) => void;

export interface CustodyLookupApi {
  KINDS: string[];
  lookup(kind: string, connection: string, context: LookupContext | undefined, query: string): JQuery.Promise<LookupOption[]>;
  autoComplete(kind: string, getConnectionId: Getter<unknown>, getContext?: Getter<LookupContext | undefined>): AutoComplete;
}

declare global {
  interface Window {
    CustodyLookup?: CustodyLookupApi;
  }
}

/** The kinds of lookup (nodes/custody-config/lookup.ts LOOKUP_KINDS). */
const KINDS: readonly string[] = CUSTODY_SHARED.lookupKinds;
/** The context keys a lookup passes on (others are ignored). */
const CONTEXT_KEYS = ['company_id', 'fund_id'];

/** The value of `get`: called when a function, else taken as it is. */
function valueOf<T>(get: Getter<T>): T | undefined {
  try {
    return typeof get === 'function' ? (get as () => T)() : get;
  } catch (e) {
    return undefined;
  }
}

/**
 * The menu entry of an option: Node-RED's menu keeps an entry on one line and cuts what does not
 * fit its width (300 px), so the entry is an element that wraps: the label's words, then the
 * value inserted (the id, which the runtime's labels end with: `name · ... · id`) on a line of its
 * own in the code font, broken only when longer than the line.
 */
function menuOption(o: LookupOption): MenuOption {
  const wrap = { display: 'block', whiteSpace: 'normal', overflowWrap: 'anywhere' };
  const suffix = ' \u00b7 ' + o.value;
  const words = o.label.endsWith(suffix) ? o.label.slice(0, -suffix.length) : o.label === o.value ? '' : o.label;
  const entry = $('<span>', { class: 'custody-lookup-option' }).css(wrap);
  if (words) {
    entry.append($('<span>').css(wrap).text(words));
  }
  entry.append($('<code>', { class: 'custody-lookup-id' }).css({ ...wrap, fontFamily: 'var(--red-ui-monospace-font)', margin: 0 }).text(o.value));
  return { value: o.value, label: entry };
}

/**
 * Ask the runtime for the options of `kind`.
 * @param kind one of KINDS.
 * @param connection the id of a deployed custody-config node.
 * @param context {company_id, fund_id}: non-empty strings are passed on, the rest ignored.
 * @param query the text typed so far ("" for everything).
 * @returns a jQuery promise of [{value, label}]; it fails with {cause, message} (the runtime's
 *   answer, or cause "http" when there was none).
 */
function lookup(kind: string, connection: string, context: LookupContext | undefined, query: string): JQuery.Promise<LookupOption[]> {
  const data: Record<string, string> = { connection, query: query || '' };
  CONTEXT_KEYS.forEach((k) => {
    const v = context && context[k];
    if (typeof v === 'string' && v.trim() !== '') {
      data[k] = v.trim();
    }
  });
  const d = $.Deferred<LookupOption[], LookupFailure>();
  $.ajax({
    url: 'custodyflow/lookup/' + encodeURIComponent(kind),
    type: 'GET',
    data,
    dataType: 'json',
  })
    .done((list: unknown) => {
      d.resolve((Array.isArray(list) ? list : []).map((o: { value: unknown; label: unknown }) => ({ value: String(o.value), label: String(o.label) })));
    })
    .fail((xhr: JQuery.jqXHR) => {
      const r = (xhr.responseJSON || {}) as Partial<LookupFailure>;
      d.reject({ cause: r.cause || 'http', message: r.message || 'lookup failed: HTTP ' + xhr.status });
    });
  return d.promise();
}

/**
 * A search function for the `autoComplete` option of a Node-RED TypedInput type (Node-RED 4.1
 * ui/common/autoComplete.js): `function (value, done)`, with exactly two parameters so that
 * the widget passes `done` and waits for it. `done` gets an array of {value, label}: `value`
 * is put into the field when chosen, `label` is what the list shows: the runtime's label in an
 * element that wraps, the id on a line of its own, so both are shown whole.
 *
 * Without a connection it suggests nothing. When the lookup fails (connection not deployed,
 * an API error), the list shows one entry whose label says why and whose value is the text
 * already typed, so choosing it changes nothing.
 *
 * @param kind "company", "fund", "wallet", "coreClient", "asset" or "exchange".
 * @param getConnectionId a function returning the id of the custody-config node (or the id itself).
 * @param getContext optional: a function returning {company_id, fund_id} to narrow funds,
 *   wallets and core clients (only literal ids: leave out values read from msg).
 * @returns function (value, done).
 * @throws {Error} for an unknown kind (when called, not when searching).
 */
function autoComplete(kind: string, getConnectionId: Getter<unknown>, getContext?: Getter<LookupContext | undefined>): AutoComplete {
  if (KINDS.indexOf(kind) < 0) {
    throw new Error('CustodyLookup.autoComplete: kind must be one of ' + KINDS.join(', '));
  }
  return function (value, done) {
    const connection = valueOf(getConnectionId);
    if (typeof connection !== 'string' || connection === '' || connection === '_ADD_') {
      done([]);
      return;
    }
    lookup(kind, connection, valueOf(getContext) || {}, value).then((options) => done(options.map(menuOption)), (err: LookupFailure) => {
      done([{ value: String(value || ''), label: '\u26a0 ' + err.message }]);
    });
  };
}

if (!window.CustodyLookup) {
  window.CustodyLookup = {
    KINDS: KINDS.slice(),
    lookup,
    autoComplete,
  };
}
