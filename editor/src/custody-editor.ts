/*
 * CustodyFlow: editor helpers shared by the custody nodes' edit dialogs, bundled into
 * resources/custody-editor.js at build (scripts/bundle-editor.ts). Loaded by each node's .html from
 * resources/@custodyflow/node-red-custody/custody-editor.js (defined once).
 *
 * The operation nodes' dialogs are generated at build (scripts/generate-editors.ts) from the
 * palette the runtime sends with (nodes/shared/palette.ts) and the one table of fields
 * (nodes/shared/editor-table.ts): each dialog passes its data to `CustodyEditor.define`, and
 * `CustodyEditor.prepare` makes the rows every operation node has work: the field TypedInputs
 * (with the look-up hook of custody-lookup.ts when it is loaded), the business key, and the rows
 * and tip of the selected operation.
 */
import type { DialogData, DialogField, DialogOperation } from './dialog-data';
import { templateProblem } from './partner-txid';
import { migrate, SCHEMA_VERSION_PROPERTY } from '../../nodes/shared/migrate';

/** A policy member as the node stores it. */
interface Member {
  kind: string;
  id: string;
}

/** A property definition of `defaults` whose validator this script gives. */
interface PropertyDef {
  value: string;
  validate: Validator;
}

declare global {
  interface Window {
    CustodyEditor?: typeof CustodyEditor;
  }
}

/** The dialog data of each operation node type, by type (see `define`). */
const nodes: Record<string, DialogData> = {};

/** The operation value that reads the operation from msg.operation per msg. */
const FROM_MSG = CUSTODY_SHARED.fromMsg;

/** A path id as the runtime accepts it (lib PATH_ID). */
const PATH_ID = new RegExp(CUSTODY_SHARED.pathId);

/** Text without control characters or surrounding spaces (a policy member id, lib MEMBER_ID). */
const MEMBER_ID = new RegExp(CUSTODY_SHARED.memberId);

/** What a path id may not be, as the dialog says it. */
const PATH_ID_RULE = 'no / ? # % \\, control characters or surrounding spaces, and not . or ..';

/** A field of a defined node type, by property. */
function fieldOf(type: string, property: string): DialogField | null {
  return (nodes[type] ? nodes[type].fields : []).find((f) => f.property === property) || null;
}

/** An operation of a defined node type, by name. */
function operationOf(type: string, name: unknown): DialogOperation | null {
  return (nodes[type] ? nodes[type].operations : []).find((o) => o.name === name) || null;
}

/** The value of a property while the dialog is open (its input), else the node's. */
function current(node: EditorNode, property: string): unknown {
  const input = $('#node-input-' + property);
  return input.length ? input.val() : node[property];
}

/**
 * The rows of the Node-RED `editableList` in `container` (a selector), each read by `read`, or
 * null when the list is not built (the dialog is closed). A row whose remove button was just
 * pressed fades out before it leaves the list: it is left out.
 */
function listRows<T>(container: string, read: (row: JQuery) => T): T[] | null {
  const list = $(container);
  let items: JQuery | null;
  try {
    items = list.length ? list.editableList('items') : null;
  } catch (e) {
    items = null; // the list is not built (dialog closed)
  }
  if (!items) return null;
  const out: T[] = [];
  items.each(function () {
    if (!$(this).parent().hasClass('red-ui-editableList-item-deleting')) out.push(read($(this)));
  });
  return out;
}

/** The members being edited (dialog open) or stored on the node. */
function currentMembers(node: EditorNode): Member[] {
  const rows = listRows('#node-input-members-list', (row) => ({ kind: String(row.find('.custody-member-kind').val()), id: String(row.find('.custody-member-id').val() || '').trim() }));
  return rows ?? (node.members as Member[] | undefined) ?? [];
}

/**
 * The policy form's rule (lib/request/policy-body.ts buildPolicyExpression), checked before deploy:
 * a threshold from 1 to the number of members, no member twice.
 */
function checkPolicy(node: EditorNode, threshold: unknown, members: Member[]): true | string {
  if (current(node, 'operation') !== 'create') {
    return true;
  }
  const ids = members.filter((m) => m && m.id).map((m) => m.id);
  const t = String(threshold === undefined || threshold === null ? '' : threshold).trim();
  if (ids.length === 0 && t === '') {
    return true; // both from msg.payload (or a whole expression)
  }
  if (ids.length === 0) {
    // members from msg.payload: the runtime checks the threshold against them
    return (/^\d+$/.test(t) && Number(t) >= 1) || 'Threshold: a whole number of approvals, 1 or more';
  }
  for (let i = 0; i < ids.length; i++) {
    if (!MEMBER_ID.test(ids[i])) {
      return 'Members: ' + JSON.stringify(ids[i]) + ' has surrounding spaces or control characters';
    }
    if (ids.indexOf(ids[i]) !== i) {
      return 'Members: ' + ids[i] + ' is listed twice';
    }
  }
  if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > ids.length) {
    return 'Threshold: a whole number from 1 to the number of members (' + ids.length + ')';
  }
  return true;
}

/**
 * The TypedInput types of a field: its str type completes from the look-up hook
 * (window.CustodyLookup.autoComplete, custody-lookup.ts) for ids of companies, funds, wallets,
 * core clients, assets and exchanges, or from the allowed values of an enum; its value stays
 * "str", so a stored node reads as before.
 */
function typesOf(field: DialogField, getConnectionId: () => unknown, getContext: () => Record<string, string>): TypedInputType[] {
  return field.types.map((t): TypedInputType => {
    if (t !== 'str') {
      return t;
    }
    const lookup = window.CustodyLookup;
    if (field.lookup && lookup && typeof lookup.autoComplete === 'function') {
      return { value: 'str', label: 'string', icon: 'red/images/typedInput/az.svg', autoComplete: lookup.autoComplete(field.lookup, getConnectionId, getContext) };
    }
    if (field.values.length) {
      return {
        value: 'str',
        label: 'string',
        icon: 'red/images/typedInput/az.svg',
        autoComplete(value, done) {
          done(field.values.filter((v) => v.indexOf(value || '') === 0).map((v) => ({ value: v, label: v })));
        },
      };
    }
    return 'str';
  });
}

/** The TypedInput types of the `partnerTxId` property (nodes/shared/business-key.ts). */
const PARTNER_TXID_TYPES = ['template', 'msg', 'jsonata', 'str'];

function codeList(parent: JQuery, names: string[]): void {
  names.forEach((name, i) => {
    if (i) {
      parent.append(', ');
    }
    parent.append($('<code>').text(name));
  });
}

/**
 * What a property check answers: `true` (valid) or the message, "<Label>: <what is expected>".
 * `opt` is what Node-RED passes (`{label}` when the property has one).
 */
type Check = (this: EditorNode, value: unknown, opt: { label?: string }) => true | string;

/**
 * A Node-RED 4 property validator of `check`: a function of two parameters `(value, opt)`, as the
 * editor (red.js `validateNodeProperty`) calls it with the node as `this`. Node-RED takes the
 * string a validator returns as the reason the node is invalid only from one that declares
 * exactly two parameters; one of another length is a 2.x validator whose result is coerced to a
 * boolean, a message then counting as valid. Every validator of the pack is built here, so none
 * can be written the 2.x way.
 * @returns the validator; `opt` is passed on as `{}` when Node-RED gives none.
 */
function validator(check: Check): Validator {
  return function (value: unknown, opt?: object): true | string {
    return check.call(this, value, (opt || {}) as { label?: string });
  };
}

/** A value as text: "" for undefined or null, else the string, trimmed. */
function textOf(v: unknown): string {
  return v === undefined || v === null ? '' : String(v).trim();
}

/**
 * In a dialog, write the message of each property whose validator refuses the value in its field
 * under that field (in its `.form-row`, element `.custody-field-problem`): Node-RED 4 marks the field
 * red and keeps the message in a tooltip of the (for a TypedInput, hidden) input. Checked when
 * the dialog opens and whenever a field changes.
 * @param prefix `node-input` (a flow node's dialog) or `node-config-input` (a config node's).
 */
function showProblems(node: EditorNode, prefix: 'node-input' | 'node-config-input'): void {
  const def = RED.nodes.getType(String(node.type));
  const defaults = (def && def.defaults) || {};
  const form = $('#' + prefix + '-' + Object.keys(defaults)[0]).closest('form');
  const refresh = (): void => {
    Object.keys(defaults).forEach((property) => {
      const rule = defaults[property];
      const input = $('#' + prefix + '-' + property);
      if (!rule || typeof rule.validate !== 'function' || !input.length) {
        return;
      }
      const row = input.closest('.form-row');
      let note = row.children('.custody-field-problem[data-property="' + property + '"]');
      let result: unknown;
      try {
        result = rule.validate.call(node, input.attr('type') === 'checkbox' ? input.prop('checked') : input.val(), {});
      } catch (e) {
        result = true; // Node-RED reports a throwing validator itself
      }
      if (typeof result !== 'string') {
        note.remove();
        return;
      }
      if (!note.length) {
        note = $('<div>', { class: 'custody-field-problem form-tips', 'data-property': property, style: 'margin-top: 4px; color: var(--red-ui-text-color-error, #d6615f);' }).appendTo(row);
      }
      note.text(result);
    });
  };
  (form.length ? form : $('#dialog-form, #node-config-dialog-edit-form')).on('change input keyup', 'input, select, textarea', () => setTimeout(refresh, 0));
  setTimeout(refresh, 0);
}

const CustodyEditor = {
  listRows,

  /**
   * In oneditprepare, first: bring the dialog of a node stored in an earlier shape to its type's
   * latest shape, with the runtime's own migrations (nodes/shared/migrate.ts `migrate`; the
   * operation nodes' TypedInput table comes from the build, CUSTODY_SHARED.typedFields). Each
   * changed property is written into its `#<prefix>-<property>` input (a hidden one is added for
   * `schemaVersion`), not onto the node: Done then records the migration as the node's edit
   * (undone as one), and the next deploy stores the new version. Opening a node saved before
   * TypedInputs thus shows the types its text was read as. A node at the latest version (or a
   * later one) is left as it is. The canvas keeps the stored shape until then; the runtime
   * migrates at construction either way.
   * @param prefix the inputs' id prefix (default `node-input`).
   */
  migrate(node: EditorNode, prefix?: string): void {
    const type = String(node.type);
    const defaults = (RED.nodes.getType(type) || {}).defaults || {};
    const stored: Record<string, unknown> = {};
    Object.keys(defaults).forEach((name) => {
      stored[name] = node[name];
    });
    const m = migrate(type, stored, CUSTODY_SHARED.typedFields);
    if (m.stored === stored) {
      return;
    }
    const id = (name: string) => (prefix || 'node-input') + '-' + name;
    Object.keys(m.stored).forEach((name) => {
      const value = m.stored[name];
      if (value === stored[name] || !Object.prototype.hasOwnProperty.call(defaults, name)) {
        return;
      }
      let input = $('#' + id(name));
      if (!input.length && name === SCHEMA_VERSION_PROPERTY) {
        input = $('<input type="hidden">').attr('id', id(name)).appendTo($('#dialog-form, #node-config-dialog-edit-form').first());
      }
      if (input.attr('type') === 'checkbox') {
        input.prop('checked', !!value);
      } else if (value !== undefined && value !== null && typeof value !== 'object') {
        input.val(String(value));
      }
    });
  },

  /**
   * In oneditprepare: a setting the stored node lacks (the examples store only some; older nodes
   * predate later settings) means its default, as the runtime reads it. Node-RED shows a missing
   * value as an empty field (an empty select) and counts the field's value as a change at Update:
   * show the default and hold it on the node. Likewise a password credential the runtime has never
   * stored answers no `has_<name>` flag, which Node-RED reads as a change of the empty field: it is
   * marked as not stored. Opening the dialog and clicking Update then changes nothing.
   * @param prefix the inputs' id prefix: `node-input` or `node-config-input`.
   */
  fillStoredDefaults(node: EditorNode, prefix: string): void {
    const def = (node as unknown as { _def: { defaults: Record<string, { value?: unknown }>; credentials?: Record<string, { type?: string }> } })._def;
    for (const [name, d] of Object.entries(def.defaults)) {
      // A node saved without a version is version 0, not the latest: CustodyEditor.migrate sets it.
      if (node[name] !== undefined || d.value === undefined || name === SCHEMA_VERSION_PROPERTY) continue;
      node[name] = JSON.parse(JSON.stringify(d.value));
      const input = $('#' + prefix + '-' + name);
      if (input.attr('type') === 'checkbox') input.prop('checked', !!node[name]);
      else input.val(node[name] as string);
    }
    const creds = (node as unknown as { credentials?: Record<string, unknown> }).credentials;
    if (!creds) return;
    for (const [name, d] of Object.entries(def.credentials ?? {})) {
      if (d.type === 'password' && creds['has_' + name] === undefined && creds[name] === undefined) creds['has_' + name] = false;
    }
  },
  validator,
  showProblems,

  /**
   * A validator of one of `values`: `<label>: expected a, b or c`.
   * @param emptyOk true when an empty value (undefined, null, "") is valid (a node saved before the property).
   */
  oneOf(label: string, values: string[], emptyOk: boolean): Validator {
    return validator((v) => ((emptyOk && (v === undefined || v === null || v === '')) || values.indexOf(v as string) !== -1 || label + ': expected one of ' + values.join(', ')));
  },

  /**
   * A validator of a number of seconds, at least `min`: `<label>: seconds, at least <min>`.
   * @param emptyOk true when an empty value is valid (the runtime's default then applies).
   */
  seconds(label: string, min: number, emptyOk: boolean): Validator {
    return validator((v) => {
      const s = textOf(v);
      if (s === '') {
        return emptyOk || label + ': seconds, at least ' + min;
      }
      return (isFinite(Number(s)) && Number(s) >= min) || label + ': seconds, at least ' + min;
    });
  },

  /**
   * A validator of a number of hours above `min`: `<label>: hours, above <min>`.
   * @param emptyOk true when an empty value is valid (the runtime's default then applies).
   */
  hours(label: string, min: number, emptyOk: boolean): Validator {
    return validator((v) => {
      const s = textOf(v);
      if (s === '') return emptyOk || label + ': hours, above ' + min;
      return (isFinite(Number(s)) && Number(s) > min) || label + ': hours, above ' + min;
    });
  },

  /** A validator of a whole number from `min` to `max`: `<label>: a whole number from <min> to <max>`. */
  wholeNumber(label: string, min: number, max: number): Validator {
    return validator((v) => {
      const s = textOf(v);
      return (/^\d+$/.test(s) && Number(s) >= min && Number(s) <= max) || label + ': a whole number from ' + min + ' to ' + max;
    });
  },

  /** Number the rows of the `editableList` in `container` 1, 2, ... in their order, in each row's element of class `indexClass`. */
  numberRows(container: string, indexClass: string): void {
    $(container)
      .editableList('items')
      .each(function (i) {
        $(this).find('.' + indexClass).text(String(i + 1));
      });
  },

  /**
   * A `validate` function for a path id property: empty (read from msg.payload) or an id
   * the runtime accepts (lib PATH_ID): no "/", "?", "#", "%", "\\", control characters or
   * surrounding spaces, not "." or "..".
   */
  pathId(label: string): Validator {
    return validator((v) => !v || PATH_ID.test(String(v)) || label + ': ' + PATH_ID_RULE);
  },

  /**
   * The `amountFormat` property: amounts in base units (default) or decimal strings.
   */
  amountFormat(): PropertyDef {
    return { value: 'baseUnits', validate: validator((v) => !v || v === 'baseUnits' || v === 'decimal' || 'Amounts: expected baseUnits or decimal') };
  },

  /**
   * The `expiresAfter` property: seconds from now that fill `expires` when msg.payload has
   * none (default 3600); empty: `expires` is required in msg.payload.
   */
  expiresAfter(): PropertyDef {
    return {
      value: '3600',
      validate: validator((v) => {
        const s = textOf(v);
        return s === '' || (/^\d+$/.test(s) && Number(s) > 0) || 'Expires after: a whole number of seconds, 1 or more, or empty';
      }),
    };
  },

  /**
   * The `partnerTxId` property of a money-moving operation: how each msg's partner_txID is
   * built (a TypedInput; its type is `partnerTxIdType`). Empty (the default): the node reads
   * msg.payload.partner_txID. A template is checked here as the runtime checks it at deploy;
   * msg and jsonata values with RED.validators.typedInput.
   */
  partnerTxId(): PropertyDef {
    const typed = RED.validators.typedInput('partnerTxIdType');
    return {
      value: '',
      validate: validator(function (v, opt) {
        if (v === undefined || v === null || String(v).trim() === '') {
          return true;
        }
        const type = String($('#node-input-partnerTxIdType').val() || this.partnerTxIdType || 'template');
        if (type === 'template') {
          const problem = templateProblem(String(v));
          return !problem || 'partner_txID: template: ' + problem;
        }
        if (PARTNER_TXID_TYPES.indexOf(type) === -1) {
          return 'partner_txID: expected one of ' + PARTNER_TXID_TYPES.join(', ') + ', got ' + type;
        }
        const valid = typed.call(this, v, opt);
        return valid === true || 'partner_txID: ' + (typeof valid === 'string' ? valid : 'invalid ' + type);
      }),
    };
  },

  /** The `partnerTxIdType` property: the TypedInput type of `partnerTxId` (default template). */
  partnerTxIdType(): PropertyDef {
    return {
      value: 'template',
      validate: validator((v) => !v || PARTNER_TXID_TYPES.indexOf(v as string) !== -1 || 'partner_txID type: expected one of ' + PARTNER_TXID_TYPES.join(', ')),
    };
  },

  /**
   * In oneditprepare: make `#node-input-partnerTxId` a TypedInput (template, msg, jsonata,
   * str; the type in `#node-input-partnerTxIdType`) and put the business key tip under it.
   */
  partnerTxIdInput(): void {
    const input = $('#node-input-partnerTxId');
    if (!input.length) {
      return;
    }
    input.typedInput({
      default: 'template',
      typeField: '#node-input-partnerTxIdType',
      types: [
        {
          value: 'template',
          label: 'template',
          hasValue: true,
          validate(v) {
            const problem = v ? templateProblem(String(v)) : '';
            return !problem || problem;
          },
        },
        'msg',
        'jsonata',
        'str',
      ],
    });
    const tip = $('<div>', { class: 'form-tips custody-partner-txid-tip', style: 'margin-top: 6px;' });
    tip
      .append('The business key of this payment: the same key is the same payment (a repeat answers ')
      .append($('<code>').text('existing'))
      .append(' and pays nothing). Build it from your invoice or order number, e.g. template ')
      .append($('<code>').text('inv-{{payload.invoice}}'))
      .append('; never from the msg id or the time. Empty: ')
      .append($('<code>').text('msg.payload.partner_txID'))
      .append('. A fixed string makes every msg the same payment.');
    input.closest('.form-row').append(tip);
  },

  /**
   * Record the dialog data of a generated operation node (scripts/generate-editors.ts):
   * `{type, paletteLabel, resolve, operations: [{name, label, note, call, fields, required,
   * properties}], fields: [{property, field, label, kind, custom, types, placeholder, value,
   * values, pathId, lookup, maxLength}]}`.
   */
  define(type: string, data: DialogData): void {
    nodes[type] = data;
  },

  /** The `validate` of an operation node's `operation`: one of its operations, or from msg.operation. */
  operationValidator(type: string): Validator {
    return validator((v) => {
      const names = (nodes[type] ? nodes[type].operations : []).map((o) => o.name);
      return v === FROM_MSG || names.indexOf(v as string) !== -1 || 'Operation: expected ' + names.concat([FROM_MSG]).join(', ');
    });
  },

  /**
   * The `validate` of a field property: empty is fine (read from msg.payload); a fixed value
   * (type str, num, bool, or a node saved without a type) is checked as the runtime checks
   * it (a path id, one of an enum's values, a number, a length); other types with
   * RED.validators.typedInput (a msg property, JSONata that parses, ...). The threshold of
   * the policy form also checks its members.
   */
  fieldValidator(type: string, property: string): Validator {
    const typed = RED.validators.typedInput(property + 'Type');
    return validator(function (v, opt) {
      const f = fieldOf(type, property);
      if (!f) {
        return true;
      }
      const t = String(current(this, property + 'Type') || f.types[0]);
      const s = String(v === undefined || v === null ? '' : v).trim();
      if (f.types.indexOf(t) === -1) {
        return f.label + ': type ' + t + ' is not one of ' + f.types.join(', ');
      }
      if (property === 'threshold' && (t === 'num' || t === 'str') && fieldOf(type, 'members')) {
        return checkPolicy(this, s, currentMembers(this));
      }
      if (s === '' || t === 'bool') {
        return true;
      }
      if (f.kind === 'amount' && (t === 'str' || t === 'num')) {
        // As the runtime reads it: the unit is the node's Amounts option.
        const decimal = current(this, 'amountFormat') === 'decimal';
        if (decimal) {
          return /^(\d+(\.\d+)?|\.\d+)$/.test(s) || f.label + ': a decimal number of whole units such as 0.015';
        }
        return /^\d+$/.test(s) || f.label + ': a whole number of base units such as 1500000 (for 0.015 set Amounts to decimal)';
      }
      if (t === 'str') {
        if (f.pathId && !PATH_ID.test(s)) {
          return f.label + ': ' + PATH_ID_RULE;
        }
        if (f.values.length && f.values.indexOf(s) === -1) {
          return f.label + ': expected ' + f.values.join(', ') + ', or empty';
        }
        if (f.maxLength && s.length > f.maxLength) {
          return f.label + ': at most ' + f.maxLength + ' characters';
        }
        return true;
      }
      if (t === 'num') {
        if (property === 'waitForAddress') {
          return (/^\d+$/.test(s) && Number(s) <= 120) || 'Wait for address: whole seconds from 0 to 120, or empty';
        }
        return isFinite(Number(s)) || f.label + ': a number';
      }
      const valid = typed.call(this, v, opt);
      return valid === true || f.label + ': ' + (typeof valid === 'string' ? valid : 'invalid ' + t);
    });
  },

  /**
   * The `validate` of a core client id setting (custody-coreclient-feed and custody-approver
   * `clientId`, custody-track `client_id`; its type in `<property>Type`, one of
   * CUSTODY_SHARED.settingTypes: str, env, global, flow; no type: str). A fixed value is a path
   * id as the runtime takes it; an env, global or flow name must not be empty.
   * @param required true when an empty value is refused (the feed), else it reads the msg.
   */
  clientIdValidator(property: string, label: string, required: boolean): Validator {
    return validator(function (v) {
      const t = String(current(this, property + 'Type') || 'str');
      const s = String(v === undefined || v === null ? '' : v).trim();
      if (CUSTODY_SHARED.settingTypes.indexOf(t) === -1) {
        return label + ': type ' + t + ' is not one of ' + CUSTODY_SHARED.settingTypes.join(', ');
      }
      if (s === '') {
        return !required || label + ': required';
      }
      return t !== 'str' || PATH_ID.test(s) || label + ': ' + PATH_ID_RULE;
    });
  },

  /**
   * In oneditprepare of a dialog with a core client id setting: make `#node-input-<property>` a
   * TypedInput of CUSTODY_SHARED.settingTypes, its type in `#node-input-<property>Type` (a node
   * saved without one reads as str), the str type completing from the core clients of the
   * dialog's connection (custody-lookup.ts).
   */
  clientIdInput(node: EditorNode, property: string): void {
    CustodyEditor.migrate(node);
    const typeField = $('#node-input-' + property + 'Type');
    if (!typeField.val()) {
      typeField.val('str');
    }
    const lookup = window.CustodyLookup;
    const getConnectionId = (): unknown => {
      const c = $('#node-input-connection').val();
      return c && c !== '_ADD_' ? c : node.connection;
    };
    const types = CUSTODY_SHARED.settingTypes.map((t): TypedInputType => {
      if (t === 'str' && lookup && typeof lookup.autoComplete === 'function') {
        return { value: 'str', label: 'string', icon: 'red/images/typedInput/az.svg', autoComplete: lookup.autoComplete('coreClient', getConnectionId) };
      }
      return t;
    });
    $('#node-input-' + property).typedInput({ default: 'str', typeField, types });
  },

  /** An operation node's label: its name, else "<palette label>: <operation>". */
  label(node: EditorNode, type: string): string {
    const data = nodes[type] || { paletteLabel: type };
    const op = operationOf(type, node.operation);
    return node.name || data.paletteLabel + ': ' + (op ? op.label : node.operation === FROM_MSG ? 'msg.operation' : node.operation);
  },

  /**
   * In oneditprepare of a generated operation node: migrate its stored properties
   * ({@link CustodyEditor.migrate}), make each field a TypedInput (its type in
   * `#node-input-<property>Type`, else the field's first type, str for ids), the policy
   * members list, the business key TypedInput; then, when
   * the operation changes, show the rows it uses and write its call and fields into
   * `#custody-operation-tip`.
   */
  prepare(node: EditorNode, type: string): void {
    CustodyEditor.migrate(node);
    const data = nodes[type];
    const select = $('#node-input-operation');
    const tip = $('#custody-operation-tip');
    function getConnectionId(): unknown {
      const c = $('#node-input-connection').val();
      return c && c !== '_ADD_' ? c : node.connection;
    }
    // The ids chosen in the dialog that narrow a look-up (company, then fund: custody-lookup.ts):
    // the literal (str) values of the TypedInput fields. A field without a TypedInput (a select
    // such as Amounts) is skipped: asking it for one throws, which lost the whole context.
    function getContext(): Record<string, string> {
      const out: Record<string, string> = {};
      data.fields.forEach((f) => {
        const input = $('#node-input-' + f.property);
        if (f.custom || !input.length || input.data('noderedTypedInput') === undefined) {
          return;
        }
        if ((input.typedInput('type') || 'str') === 'str' && input.typedInput('value')) {
          out[f.field] = input.typedInput('value');
        }
      });
      return out;
    }
    data.fields.forEach((f) => {
      if (f.custom === 'members') {
        const list = $('#node-input-members-list')
          .css('min-height', '120px')
          .editableList<Partial<Member>>({
            addButton: 'member',
            removable: true,
            sortable: true,
            height: 160,
            addItem(row, _index, item) {
              row.css({ display: 'flex', gap: '6px', alignItems: 'center' });
              const kind = $('<select>', { class: 'custody-member-kind', style: 'width: 150px;' })
                .append($('<option>', { value: 'human' }).text('human member'))
                .append($('<option>', { value: 'apiKey' }).text('API key'))
                .val(item.kind === 'apiKey' ? 'apiKey' : 'human')
                .appendTo(row);
              $('<input>', { type: 'text', class: 'custody-member-id', placeholder: 'member id, e.g. m.alice or k.agent', style: 'flex: 1;' })
                .val(item.id || '')
                .appendTo(row);
              kind
                .on('change', () => {
                  row.find('.custody-member-id').attr('placeholder', kind.val() === 'apiKey' ? 'API key id, e.g. k.agent' : 'human member id, e.g. m.alice');
                })
                .trigger('change');
            },
          });
        ((node.members as Member[] | undefined) || []).forEach((m) => {
          list.editableList('addItem', m);
        });
        return;
      }
      if (f.custom) {
        return;
      }
      const input = $('#node-input-' + f.property);
      const typeField = $('#node-input-' + f.property + 'Type');
      if (!typeField.val()) {
        typeField.val(f.types[0]);
      }
      input.typedInput({ default: f.types[0], typeField, types: typesOf(f, getConnectionId, getContext) });
    });
    if ($('#node-input-partnerTxId').length) {
      CustodyEditor.partnerTxIdInput();
    }
    select
      .on('change', () => {
        const name = select.val();
        const op = operationOf(type, name);
        const rows: Record<string, boolean> = {};
        if (name === FROM_MSG) {
          data.operations.forEach((o) => {
            o.properties.forEach((p) => {
              rows[p] = true;
            });
          });
        } else if (op) {
          op.properties.forEach((p) => {
            rows[p] = true;
          });
        }
        $('.custody-row').each(function () {
          $(this).toggle(!!rows[String($(this).attr('data-property'))]);
        });
        tip.empty();
        if (name === FROM_MSG) {
          codeList(
            $('<div>').text('Reads the operation from msg.operation, one of: ').appendTo(tip),
            data.operations.map((o) => o.name),
          );
          $('<div>')
            .text('Every field of those operations is shown; each is read only by the operations that use it. Another value is refused (EINPUT, naming operation) before anything is sent.')
            .appendTo(tip);
          return;
        }
        if (!op) {
          return;
        }
        $('<div>').append($('<b>').text('Calls ')).append($('<code>').text(op.call)).appendTo(tip);
        if (op.fields.length) {
          codeList($('<div>').text('Reads from msg.payload: ').appendTo(tip), op.fields);
          if (op.required.length) {
            codeList($('<div>').text('Required: ').appendTo(tip), op.required);
          }
          $('<div>')
            .text('A field set here wins (a fixed value, or a msg, flow, global, env or JSONata value read per msg); a field left empty is read from msg.payload.<field>.')
            .appendTo(tip);
        } else {
          $('<div>').text('Reads nothing from msg.payload.').appendTo(tip);
        }
        if (op.note) {
          $('<div>').html(op.note).appendTo(tip);
        }
      })
      .trigger('change');
    showProblems(node, 'node-input');
  },

  /** In oneditsave of a generated operation node: store the policy members list. */
  save(node: EditorNode, type: string): void {
    if (fieldOf(type, 'members')) {
      node.members = currentMembers(node).filter((m) => m.id !== '');
    }
  },
};

if (!window.CustodyEditor) {
  window.CustodyEditor = CustodyEditor;
}
