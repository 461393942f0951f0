/*
 * CustodyFlow: editor helpers shared by the custody nodes' edit dialogs. Loaded by each node's
 * .html from resources/@custodyflow/node-red-custody/custody-editor.js (defined once).
 *
 * The operation nodes' dialogs are generated at build (scripts/generate-editors.js) from the
 * registry the runtime sends with (lib/registry.ts) and the one table of fields
 * (nodes/shared/editor-table.ts): each dialog passes its data to `CustodyEditor.define`, and
 * `CustodyEditor.prepare` makes the rows every operation node has work: the field TypedInputs
 * (with the look-up hook of resources/custody-lookup.js when it is loaded), the business key,
 * and the rows and tip of the selected operation.
 */
(function () {
    "use strict";
    if (window.CustodyEditor) {
        return;
    }
    /** The dialog data of each operation node type, by type (see `define`). */
    var nodes = {};

    /** The operation value that reads the operation from msg.operation per msg. */
    var FROM_MSG = "msg.operation";

    /** A path id as the runtime accepts it (lib/operation.ts PATH_ID, copied because validators run in the browser). */
    var PATH_ID = /^(?!\.{1,2}$)[^\s/?#%\\\x00-\x1f\x7f](?:[^/?#%\\\x00-\x1f\x7f]*[^\s/?#%\\\x00-\x1f\x7f])?$/;

    /** Text without control characters or surrounding spaces (a policy member id). */
    var MEMBER_ID = /^[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?$/;

    /** A field of a defined node type, by property. */
    function fieldOf(type, property) {
        var found = null;
        (nodes[type] ? nodes[type].fields : []).forEach(function (f) {
            if (f.property === property) { found = f; }
        });
        return found;
    }

    /** An operation of a defined node type, by name. */
    function operationOf(type, name) {
        var found = null;
        (nodes[type] ? nodes[type].operations : []).forEach(function (o) {
            if (o.name === name) { found = o; }
        });
        return found;
    }

    /** The value of a property while the dialog is open (its input), else the node's. */
    function current(node, property) {
        var input = $("#node-input-" + property);
        return input.length ? input.val() : node[property];
    }

    /** The members being edited (dialog open) or stored on the node. */
    function currentMembers(node) {
        var list = $("#node-input-members-list");
        var items;
        try {
            items = list.length ? list.editableList("items") : null;
        } catch (e) {
            items = null; // the list is not built (dialog closed)
        }
        if (!items) { return node.members || []; }
        var out = [];
        items.each(function () {
            out.push({ kind: $(this).find(".custody-member-kind").val(), id: String($(this).find(".custody-member-id").val() || "").trim() });
        });
        return out;
    }

    /**
     * The policy form's rule (lib/v2/policy.ts buildPolicyExpression), checked before deploy:
     * a threshold from 1 to the number of members, no member twice.
     */
    function checkPolicy(node, threshold, members) {
        if (current(node, "operation") !== "create") { return true; }
        var ids = members.filter(function (m) { return m && m.id; }).map(function (m) { return m.id; });
        var t = String(threshold === undefined || threshold === null ? "" : threshold).trim();
        if (ids.length === 0 && t === "") { return true; } // both from msg.payload (or a whole expression)
        if (ids.length === 0) {
            // members from msg.payload: the runtime checks the threshold against them
            return (/^\d+$/.test(t) && Number(t) >= 1) || "Threshold: a whole number of approvals, 1 or more";
        }
        for (var i = 0; i < ids.length; i++) {
            if (!MEMBER_ID.test(ids[i])) { return "Members: " + JSON.stringify(ids[i]) + " has surrounding spaces or control characters"; }
            if (ids.indexOf(ids[i]) !== i) { return "Members: " + ids[i] + " is listed twice"; }
        }
        if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > ids.length) {
            return "Threshold: a whole number from 1 to the number of members (" + ids.length + ")";
        }
        return true;
    }

    /**
     * The TypedInput types of a field: its str type completes from the look-up hook
     * (window.CustodyLookup.autoComplete, resources/custody-lookup.js) for ids of companies,
     * funds, wallets, core clients, assets and exchanges, or from the allowed values of an enum;
     * its value stays "str", so a stored node reads as before.
     */
    function typesOf(field, getConnectionId, getContext) {
        return field.types.map(function (t) {
            if (t !== "str") { return t; }
            var lookup = window.CustodyLookup;
            if (field.lookup && lookup && typeof lookup.autoComplete === "function") {
                return { value: "str", label: "string", icon: "red/images/typedInput/az.svg", autoComplete: lookup.autoComplete(field.lookup, getConnectionId, getContext) };
            }
            if (field.values.length) {
                return {
                    value: "str",
                    label: "string",
                    icon: "red/images/typedInput/az.svg",
                    autoComplete: function (value, done) {
                        done(field.values.filter(function (v) { return v.indexOf(value || "") === 0; }).map(function (v) { return { value: v, label: v }; }));
                    }
                };
            }
            return "str";
        });
    }

    /** The TypedInput types of the `partnerTxId` property (nodes/shared/business-key.ts). */
    var PARTNER_TXID_TYPES = ["template", "msg", "jsonata", "str"];

    /**
     * What is wrong with a `template` value of `partnerTxId`, or "" when nothing is: the rules of
     * nodes/shared/business-key.ts `parsePartnerTxIdTemplate`, copied because validators run in
     * the browser. Each `{{path}}` must close, hold a msg property path, and at least one must
     * be there (fixed text is every msg the same payment: the str type).
     */
    function templateProblem(template) {
        var i = 0;
        var placeholders = 0;
        while (i < template.length) {
            if (template.substr(i, 2) === "{{") {
                var end = template.indexOf("}}", i + 2);
                if (end < 0) {
                    return "\"{{\" at position " + i + " has no closing \"}}\"";
                }
                var inner = template.slice(i + 2, end);
                if (/[{}]/.test(inner)) {
                    return "\"{{\" at position " + i + " has no closing \"}}\" before the next brace";
                }
                var path = inner.trim();
                if (!path) {
                    return "empty placeholder at position " + i + ": write the msg property, e.g. {{payload.invoice}}";
                }
                var valid = RED.utils.validatePropertyExpression(path.indexOf("msg.") === 0 ? path.slice(4) : path);
                if (valid !== true) {
                    return "{{" + path + "}} is not a msg property";
                }
                placeholders++;
                i = end + 2;
            } else if (template.substr(i, 2) === "}}") {
                return "\"}}\" at position " + i + " has no opening \"{{\"";
            } else if (template[i] === "{" || template[i] === "}") {
                return "single \"" + template[i] + "\" at position " + i + ": a placeholder is written {{path}}";
            } else {
                i++;
            }
        }
        return placeholders ? "" : "no {{placeholder}}: fixed text makes every msg the same payment (choose the str type if that is really meant)";
    }

    function codeList(parent, names) {
        names.forEach(function (name, i) {
            if (i) {
                parent.append(", ");
            }
            parent.append($("<code>").text(name));
        });
    }

    window.CustodyEditor = {
        /**
         * A `validate` function for a path id property: empty (read from msg.payload) or an id
         * the runtime accepts (lib/operation.ts PATH_ID, copied because validators run in the
         * browser): no "/", "?", "#", "%", "\\", control characters or surrounding spaces, not
         * "." or "..".
         */
        pathId: function (label) {
            var id = /^(?!\.{1,2}$)[^\s/?#%\\\x00-\x1f\x7f](?:[^/?#%\\\x00-\x1f\x7f]*[^\s/?#%\\\x00-\x1f\x7f])?$/;
            return function (v) {
                return !v || id.test(v) || (label + ": no / ? # % \\, control characters or surrounding spaces, and not . or ..");
            };
        },

        /**
         * The `amountFormat` property: amounts in base units (default) or decimal strings.
         */
        amountFormat: function () {
            return {
                value: "baseUnits",
                validate: function (v) { return !v || v === "baseUnits" || v === "decimal" || "Amounts: expected baseUnits or decimal"; }
            };
        },

        /**
         * The `expiresAfter` property: seconds from now that fill `expires` when msg.payload has
         * none (default 3600); empty: `expires` is required in msg.payload.
         */
        expiresAfter: function () {
            return {
                value: "3600",
                validate: function (v) {
                    var s = String(v === undefined || v === null ? "" : v).trim();
                    return s === "" || (/^\d+$/.test(s) && Number(s) > 0) || "Expires after: a whole number of seconds, or empty";
                }
            };
        },

        /**
         * The `partnerTxId` property of a money-moving operation: how each msg's partner_txID is
         * built (a TypedInput; its type is `partnerTxIdType`). Empty (the default): the node reads
         * msg.payload.partner_txID. A template is checked here as the runtime checks it at deploy;
         * msg and jsonata values with RED.validators.typedInput.
         */
        partnerTxId: function () {
            var typed = RED.validators.typedInput("partnerTxIdType");
            return {
                value: "",
                validate: function (v, opt) {
                    if (v === undefined || v === null || String(v).trim() === "") {
                        return true;
                    }
                    var type = $("#node-input-partnerTxIdType").val() || this.partnerTxIdType || "template";
                    if (type === "template") {
                        var problem = templateProblem(String(v));
                        return !problem || "partner_txID: template: " + problem;
                    }
                    if (PARTNER_TXID_TYPES.indexOf(type) === -1) {
                        return "partner_txID: expected one of " + PARTNER_TXID_TYPES.join(", ") + ", got " + type;
                    }
                    var valid = typed.call(this, v, opt || {});
                    return valid === true || ("partner_txID: " + (typeof valid === "string" ? valid : "invalid " + type));
                }
            };
        },

        /** The `partnerTxIdType` property: the TypedInput type of `partnerTxId` (default template). */
        partnerTxIdType: function () {
            return {
                value: "template",
                validate: function (v) {
                    return !v || PARTNER_TXID_TYPES.indexOf(v) !== -1 || ("partner_txID type: expected one of " + PARTNER_TXID_TYPES.join(", "));
                }
            };
        },

        /**
         * In oneditprepare: make `#node-input-partnerTxId` a TypedInput (template, msg, jsonata,
         * str; the type in `#node-input-partnerTxIdType`) and put the business key tip under it.
         */
        partnerTxIdInput: function () {
            var input = $("#node-input-partnerTxId");
            if (!input.length) {
                return;
            }
            input.typedInput({
                default: "template",
                typeField: "#node-input-partnerTxIdType",
                types: [
                    {
                        value: "template",
                        label: "template",
                        hasValue: true,
                        validate: function (v) {
                            var problem = v ? templateProblem(String(v)) : "";
                            return !problem || problem;
                        }
                    },
                    "msg",
                    "jsonata",
                    "str"
                ]
            });
            var tip = $("<div>", { "class": "form-tips custody-partner-txid-tip", style: "margin-top: 6px;" });
            tip.append("The business key of this payment: the same key is the same payment (a repeat answers ")
                .append($("<code>").text("existing"))
                .append(" and pays nothing). Build it from your invoice or order number, e.g. template ")
                .append($("<code>").text("inv-{{payload.invoice}}"))
                .append("; never from the msg id or the time. Empty: ")
                .append($("<code>").text("msg.payload.partner_txID"))
                .append(". A fixed string makes every msg the same payment.");
            input.closest(".form-row").append(tip);
        },

        /**
         * Record the dialog data of a generated operation node (scripts/generate-editors.js):
         * `{type, paletteLabel, resolve, operations: [{name, label, note, call, fields, required,
         * properties}], fields: [{property, field, label, kind, custom, types, placeholder, value,
         * values, pathId, lookup, maxLength}]}`.
         */
        define: function (type, data) {
            nodes[type] = data;
        },

        /** The `validate` of an operation node's `operation`: one of its operations, or from msg.operation. */
        operationValidator: function (type) {
            return function (v) {
                var names = (nodes[type] ? nodes[type].operations : []).map(function (o) { return o.name; });
                return v === FROM_MSG || names.indexOf(v) !== -1 || ("Operation: expected " + names.concat([FROM_MSG]).join(", "));
            };
        },

        /**
         * The `validate` of a field property: empty is fine (read from msg.payload); a fixed value
         * (type str, num, bool, or a node saved without a type) is checked as the runtime checks
         * it (a path id, one of an enum's values, a number, a length); other types with
         * RED.validators.typedInput (a msg property, JSONata that parses, ...). The threshold of
         * the policy form also checks its members.
         */
        fieldValidator: function (type, property) {
            var typed = RED.validators.typedInput(property + "Type");
            return function (v, opt) {
                var f = fieldOf(type, property);
                if (!f) { return true; }
                var t = current(this, property + "Type") || f.types[0];
                var s = String(v === undefined || v === null ? "" : v).trim();
                if (f.types.indexOf(t) === -1) {
                    return f.label + ": type " + t + " is not one of " + f.types.join(", ");
                }
                if (property === "threshold" && (t === "num" || t === "str") && fieldOf(type, "members")) {
                    return checkPolicy(this, s, currentMembers(this));
                }
                if (s === "" || t === "bool") { return true; }
                if (t === "str") {
                    if (f.pathId && !PATH_ID.test(s)) { return f.label + ": no / ? # % \\, control characters or surrounding spaces, and not . or .."; }
                    if (f.values.length && f.values.indexOf(s) === -1) { return f.label + ": expected " + f.values.join(", ") + ", or empty"; }
                    if (f.maxLength && s.length > f.maxLength) { return f.label + ": at most " + f.maxLength + " characters"; }
                    return true;
                }
                if (t === "num") {
                    if (property === "waitForAddress") { return (/^\d+$/.test(s) && Number(s) <= 120) || "Wait for address: whole seconds from 0 to 120, or empty"; }
                    return isFinite(Number(s)) || (f.label + ": a number");
                }
                var valid = typed.call(this, v, opt || {});
                return valid === true || (f.label + ": " + (typeof valid === "string" ? valid : "invalid " + t));
            };
        },

        /** An operation node's label: its name, else "<palette label>: <operation>". */
        label: function (node, type) {
            var data = nodes[type] || { paletteLabel: type };
            var op = operationOf(type, node.operation);
            return node.name || (data.paletteLabel + ": " + (op ? op.label : node.operation === FROM_MSG ? "msg.operation" : node.operation));
        },

        /**
         * In oneditprepare of a generated operation node: make each field a TypedInput (its type
         * in `#node-input-<property>Type`; a node saved without one starts as the field's first
         * type, str for ids), the policy members list, the business key TypedInput; then, when
         * the operation changes, show the rows it uses and write its call and fields into
         * `#custody-operation-tip`.
         */
        prepare: function (node, type) {
            var data = nodes[type];
            var select = $("#node-input-operation");
            var tip = $("#custody-operation-tip");
            function getConnectionId() {
                var c = $("#node-input-connection").val();
                return c && c !== "_ADD_" ? c : node.connection;
            }
            function getContext() {
                var out = {};
                data.fields.forEach(function (f) {
                    var input = $("#node-input-" + f.property);
                    if (f.custom || !input.length) { return; }
                    if ((input.typedInput("type") || "str") === "str" && input.typedInput("value")) {
                        out[f.field] = input.typedInput("value");
                    }
                });
                return out;
            }
            data.fields.forEach(function (f) {
                if (f.custom === "members") {
                    var list = $("#node-input-members-list").css("min-height", "120px").editableList({
                        addButton: "member",
                        removable: true,
                        sortable: true,
                        height: 160,
                        addItem: function (row, index, item) {
                            row.css({ display: "flex", gap: "6px", alignItems: "center" });
                            var kind = $("<select>", { class: "custody-member-kind", style: "width: 150px;" })
                                .append($("<option>", { value: "human" }).text("human member"))
                                .append($("<option>", { value: "apiKey" }).text("API key"))
                                .val(item.kind === "apiKey" ? "apiKey" : "human")
                                .appendTo(row);
                            $("<input>", { type: "text", class: "custody-member-id", placeholder: "member id, e.g. m.alice or k.agent", style: "flex: 1;" })
                                .val(item.id || "")
                                .appendTo(row);
                            kind.on("change", function () {
                                row.find(".custody-member-id").attr("placeholder", kind.val() === "apiKey" ? "API key id, e.g. k.agent" : "human member id, e.g. m.alice");
                            }).trigger("change");
                        }
                    });
                    (node.members || []).forEach(function (m) { list.editableList("addItem", m); });
                    return;
                }
                if (f.custom) { return; }
                var input = $("#node-input-" + f.property);
                var typeField = $("#node-input-" + f.property + "Type");
                if (!typeField.val()) {
                    typeField.val(f.types[0]); // saved before TypedInputs: the text is a fixed value
                }
                input.typedInput({ default: f.types[0], typeField: typeField, types: typesOf(f, getConnectionId, getContext) });
            });
            if ($("#node-input-partnerTxId").length) {
                window.CustodyEditor.partnerTxIdInput();
            }
            select.on("change", function () {
                var name = select.val();
                var op = operationOf(type, name);
                var rows = {};
                if (name === FROM_MSG) {
                    data.operations.forEach(function (o) { o.properties.forEach(function (p) { rows[p] = true; }); });
                } else if (op) {
                    op.properties.forEach(function (p) { rows[p] = true; });
                }
                $(".custody-row").each(function () {
                    $(this).toggle(!!rows[$(this).attr("data-property")]);
                });
                tip.empty();
                if (name === FROM_MSG) {
                    codeList($("<div>").text("Reads the operation from msg.operation, one of: ").appendTo(tip), data.operations.map(function (o) { return o.name; }));
                    $("<div>").text("Every field of those operations is shown; each is read only by the operations that use it. Another value is refused (EINPUT, naming operation) before anything is sent.").appendTo(tip);
                    return;
                }
                if (!op) {
                    return;
                }
                $("<div>").append($("<b>").text("Calls ")).append($("<code>").text(op.call)).appendTo(tip);
                if (op.fields.length) {
                    codeList($("<div>").text("Reads from msg.payload: ").appendTo(tip), op.fields);
                    if (op.required.length) {
                        codeList($("<div>").text("Required: ").appendTo(tip), op.required);
                    }
                    $("<div>").text("A field set here wins (a fixed value, or a msg, flow, global, env or JSONata value read per msg); a field left empty is read from msg.payload.<field>.").appendTo(tip);
                } else {
                    $("<div>").text("Reads nothing from msg.payload.").appendTo(tip);
                }
                if (op.note) {
                    $("<div>").html(op.note).appendTo(tip);
                }
            }).trigger("change");
        },

        /** In oneditsave of a generated operation node: store the policy members list. */
        save: function (node, type) {
            if (fieldOf(type, "members")) {
                node.members = currentMembers(node).filter(function (m) { return m.id !== ""; });
            }
        }
    };
})();
