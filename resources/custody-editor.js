/*
 * CustodyFlow: editor helpers shared by the custody nodes' edit dialogs. Loaded by each node's
 * .html from resources/@custodyflow/node-red-custody/custody-editor.js (defined once).
 *
 * The rows and tips of an operation come from the runtime (GET custody/operations/<type>),
 * which builds them from the same operation declarations it sends requests with.
 */
(function () {
    "use strict";
    if (window.CustodyEditor) {
        return;
    }
    var described = {};

    function describe(type) {
        if (!described[type]) {
            described[type] = $.getJSON("custody/operations/" + encodeURIComponent(type));
            described[type].fail(function () {
                delete described[type]; // ask again next time
            });
        }
        return described[type];
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
         * The `direction` property of a ledger read: empty (msg.payload.direction, else the
         * service's default), `all`, `in` or `out` (spec section 4).
         */
        direction: function () {
            return {
                value: "",
                validate: function (v) { return !v || v === "all" || v === "in" || v === "out" || "Direction: expected all, in or out"; }
            };
        },

        /**
         * Register a custody operation node: what every one of them shares (category, colour,
         * `name`, `connection`, `operation`, one input and one output, its label, and the edit
         * dialog of {@link operationForm}), plus its own editor fields.
         * @param type the node type, e.g. "custody-transfer"
         * @param def {paletteLabel, icon, labels: {operation: label} (the first is the default),
         *   fields: {property: Node-RED default definition}, inputLabels?, notes?: {operation: tip html}}
         */
        operationNode: function (type, def) {
            var operations = Object.keys(def.labels);
            var defaults = {
                name: { value: "" },
                connection: { value: "", type: "custody-config", required: true },
                operation: {
                    value: operations[0],
                    validate: function (v) {
                        return operations.indexOf(v) !== -1 || ("Operation: expected " + operations.join(", "));
                    }
                }
            };
            Object.keys(def.fields).forEach(function (property) {
                defaults[property] = def.fields[property];
            });
            RED.nodes.registerType(type, {
                category: "custody",
                color: "#A3C9E8",
                defaults: defaults,
                inputs: 1,
                outputs: 1,
                icon: def.icon,
                paletteLabel: def.paletteLabel,
                inputLabels: def.inputLabels || "request fields in msg.payload",
                outputLabels: "response body in msg.payload",
                label: function () {
                    return this.name || (def.paletteLabel + ": " + (def.labels[this.operation] || this.operation));
                },
                labelStyle: function () {
                    return this.name ? "node_label_italic" : "";
                },
                oneditprepare: function () {
                    if (def.fields.partnerTxId) {
                        window.CustodyEditor.partnerTxIdInput();
                    }
                    window.CustodyEditor.operationForm(type, def.notes);
                }
            });
        },

        /**
         * In oneditprepare: when the operation changes, show the rows (`.custody-row[data-property]`)
         * that operation uses and write its call and fields into `#custody-operation-tip`.
         * @param type the node type, e.g. "custody-transfer"
         * @param notes optional extra tip text per operation, e.g. {create: "..."}
         */
        operationForm: function (type, notes) {
            var select = $("#node-input-operation");
            var tip = $("#custody-operation-tip");
            notes = notes || {};
            describe(type).then(
                function (operations) {
                    select.on("change", function () {
                        var op = operations[select.val()];
                        $(".custody-row").each(function () {
                            $(this).toggle(!!op && op.properties.indexOf($(this).attr("data-property")) !== -1);
                        });
                        tip.empty();
                        if (!op) {
                            return;
                        }
                        $("<div>").append($("<b>").text("Calls ")).append($("<code>").text(op.call)).appendTo(tip);
                        if (op.fields.length) {
                            codeList($("<div>").text("Reads from msg.payload: ").appendTo(tip), op.fields);
                            if (op.required.length) {
                                codeList($("<div>").text("Required: ").appendTo(tip), op.required);
                            }
                            $("<div>").text("A field set here wins; a field left empty is read from msg.payload.<field>.").appendTo(tip);
                        } else {
                            $("<div>").text("Reads nothing from msg.payload.").appendTo(tip);
                        }
                        if (notes[select.val()]) {
                            $("<div>").html(notes[select.val()]).appendTo(tip);
                        }
                    }).trigger("change");
                },
                function () {
                    $(".custody-row").show();
                    tip.text("The operations could not be read from the runtime; every field is shown.");
                }
            );
        }
    };
})();
