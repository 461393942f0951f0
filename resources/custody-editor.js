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
