/*
 * CustodyFlow: id suggestions for the custody nodes' edit dialogs (issue 10). Plain browser
 * script, served by Node-RED from the package's resources/ folder; load it with
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
(function () {
    "use strict";
    if (window.CustodyLookup) {
        return;
    }

    /** The kinds of lookup (nodes/custody-config/lookup.ts LOOKUP_KINDS). */
    var KINDS = ["company", "fund", "wallet", "coreClient", "asset", "exchange"];
    /** The context keys a lookup passes on (others are ignored). */
    var CONTEXT_KEYS = ["company_id", "fund_id"];

    /** The value of `get`: called when a function, else taken as it is. */
    function valueOf(get) {
        try {
            return typeof get === "function" ? get() : get;
        } catch (e) {
            return undefined;
        }
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
    function lookup(kind, connection, context, query) {
        var data = { connection: connection, query: query || "" };
        CONTEXT_KEYS.forEach(function (k) {
            var v = context && context[k];
            if (typeof v === "string" && v.trim() !== "") {
                data[k] = v.trim();
            }
        });
        var d = $.Deferred();
        $.ajax({
            url: "custodyflow/lookup/" + encodeURIComponent(kind),
            type: "GET",
            data: data,
            dataType: "json"
        }).done(function (list) {
            d.resolve((Array.isArray(list) ? list : []).map(function (o) {
                return { value: String(o.value), label: String(o.label) };
            }));
        }).fail(function (xhr) {
            var r = xhr.responseJSON || {};
            d.reject({ cause: r.cause || "http", message: r.message || ("lookup failed: HTTP " + xhr.status) });
        });
        return d.promise();
    }

    /**
     * A search function for the `autoComplete` option of a Node-RED TypedInput type (Node-RED 4.1
     * ui/common/autoComplete.js): `function (value, done)`, with exactly two parameters so that
     * the widget passes `done` and waits for it. `done` gets an array of {value, label}: `value`
     * is put into the field when chosen, `label` (a string, shown as text) is what the list shows.
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
    function autoComplete(kind, getConnectionId, getContext) {
        if (KINDS.indexOf(kind) < 0) {
            throw new Error("CustodyLookup.autoComplete: kind must be one of " + KINDS.join(", "));
        }
        return function (value, done) {
            var connection = valueOf(getConnectionId);
            if (typeof connection !== "string" || connection === "" || connection === "_ADD_") {
                done([]);
                return;
            }
            lookup(kind, connection, valueOf(getContext) || {}, value).then(done, function (err) {
                done([{ value: String(value || ""), label: "\u26a0 " + err.message }]);
            });
        };
    }

    window.CustodyLookup = {
        KINDS: KINDS.slice(),
        lookup: lookup,
        autoComplete: autoComplete
    };
})();
