/**
 * What the operation nodes' edit dialogs show, written once: per field (editor property) its
 * label, icon, placeholder, kind of value and TypedInput types ({@link FIELDS}), and per
 * operation node its palette label, icon, operations (with the palette operation each sends),
 * rows and notes ({@link OPERATION_NODES}). Pure data, no Node-RED import: the runtime
 * (nodes/shared/operation-node.ts) reads which property feeds which API field, and the build's
 * generator (scripts/generate-editors.ts) writes every dialog from it. The calls,
 * fields and required fields of each operation come from its operationId's declaration
 * (nodes/shared/palette.ts, lib/api/operations.ts), not from here.
 */
import type { TransactionKind } from '../../lib';
import type { OperationNodeType } from './palette';

/**
 * What the look-up hook of a field completes (editor/src/custody-lookup.ts
 * `CustodyLookup.autoComplete(kind, ...)`): the id of a company, fund, wallet, core client,
 * asset or exchange.
 */
export type LookupKind = 'company' | 'fund' | 'wallet' | 'coreClient' | 'asset' | 'exchange';

/**
 * The kind of value a field holds, which gives its TypedInput types ({@link FIELD_TYPES}):
 * `text` (ids and names), `enum` (one of {@link FieldPresentation.values}), `number`, `bool`,
 * `amount` (an amount in the unit of the node's `amountFormat`: base units, an integer, or a
 * decimal in whole units, given as text or a number), `json` (a request body: JSON, or a value
 * read per msg).
 */
export type FieldKind = 'text' | 'enum' | 'number' | 'bool' | 'amount' | 'json';

/**
 * The TypedInput types a field of each kind offers, the first being the default (a node saved
 * without `<property>Type`, before TypedInputs, is migrated to that type, which reads its text as
 * it was read then: nodes/shared/migrate.ts, {@link typedFieldDefaults}).
 */
export const FIELD_TYPES: Record<FieldKind, readonly string[]> = {
  text: ['str', 'msg', 'flow', 'global', 'env', 'jsonata'],
  enum: ['str', 'msg', 'flow', 'global', 'env', 'jsonata'],
  number: ['num', 'msg', 'flow', 'global', 'env', 'jsonata'],
  bool: ['bool', 'msg', 'flow', 'global', 'env', 'jsonata'],
  amount: ['str', 'num', 'msg', 'flow', 'global', 'env', 'jsonata'],
  json: ['msg', 'json', 'jsonata', 'flow', 'global', 'env'],
};

/** How one editor property is shown and read. */
export interface FieldPresentation {
  /**
   * The API field it fills (spec name), when not the property's own name (e.g. `type` for
   * `feeType`); a dotted path fills a field of a nested object (`send.symbol`), merged with the
   * rest of that object in `msg.payload` (`msg.payload.send.amount` stays when only the asset is set).
   */
  field?: string;
  /** The row's label. */
  label: string;
  /** Font Awesome 4 icon name without `fa-`, e.g. `building`. */
  icon: string;
  /** The value's kind (default `text`). */
  kind?: FieldKind;
  /** The placeholder; default `msg.payload.<field>` plus {@link FieldPresentation.hint}. */
  placeholder?: string;
  /** Added to the default placeholder in parentheses, e.g. `id or short code`. */
  hint?: string;
  /** The values of an `enum` field (an empty value reads `msg.payload.<field>`). */
  values?: readonly string[];
  /** The default value (default empty: read from `msg.payload.<field>`). */
  value?: string;
  /** True for a path id: the dialog checks a fixed value as the runtime does (no `/`, `?`, ...). */
  pathId?: boolean;
  /** The look-up the field's str type completes from (editor/src/custody-lookup.ts). */
  lookup?: LookupKind;
  /** Most characters a fixed value may have (the dialog refuses more). */
  maxLength?: number;
  /** Text after the input, e.g. `seconds`. */
  suffix?: string;
  /**
   * A row the shared editor script draws itself instead of a TypedInput: `members` (the policy
   * members list, an array of `{kind, id}`) or `policyType` (a fixed select, not stored).
   */
  custom?: 'members' | 'policyType';
  /**
   * False for a property the node's own code reads (v2 `threshold`, `portfolioName`, ...):
   * the runtime evaluates it but does not copy it into the request's `field`.
   */
  applied?: boolean;
}

/** Every editor property of the operation nodes, by property name. */
export const FIELDS: Record<string, FieldPresentation> = {
  company_id: { label: 'Company id', icon: 'building', pathId: true, lookup: 'company' },
  fund_id: { label: 'Fund id', icon: 'archive', pathId: true, lookup: 'fund' },
  wallet_id: { label: 'Wallet id', icon: 'credit-card', hint: 'id or short code', lookup: 'wallet' },
  counterparty_wallet_address: { label: 'To wallet', icon: 'sign-in', hint: 'id or short code', lookup: 'wallet' },
  send_wallet_id: { label: 'Send wallet', icon: 'sign-out', hint: 'id or short code', lookup: 'wallet' },
  receive_wallet_id: { label: 'Receive wallet', icon: 'sign-in', hint: 'id or short code', lookup: 'wallet' },
  recipient_wallet_id: { label: 'To wallet', icon: 'sign-in', hint: 'id or short code', lookup: 'wallet' },
  address: { label: 'To address', icon: 'sign-in', hint: 'whitelisted L1 address' },
  client_id: { label: 'Core client id', icon: 'shield', pathId: true, lookup: 'coreClient' },
  action_id: { label: 'Action id', icon: 'bell', pathId: true },
  tx_id: { label: 'Transaction id', icon: 'hashtag', pathId: true },
  swap_id: { label: 'Swap id', icon: 'exchange', hint: "the quote's tx_id" },
  trustedparty_id: { label: 'Party id', icon: 'user', pathId: true },
  query: { label: 'Query', icon: 'search', hint: '3 letters', maxLength: 3 },
  feeType: { field: 'type', label: 'Type', icon: 'exchange', kind: 'enum', values: ['transferOut', 'withdraw', 'swap'] },
  asset: { label: 'Asset', icon: 'bitcoin', placeholder: 'msg.payload.asset, e.g. BTC-TESTNET', lookup: 'asset' },
  amount: { label: 'Amount', icon: 'calculator', kind: 'amount', placeholder: 'msg.payload.amount' },
  direction: { label: 'Direction', icon: 'arrows-h', kind: 'enum', values: ['all', 'in', 'out'], placeholder: 'msg.payload.direction (else not sent)' },
  // The payment terms (spec section 4: POST transfer, withdraw, atomicswap make and take, sweep).
  sendAsset: { field: 'send.symbol', label: 'Asset', icon: 'bitcoin', placeholder: 'msg.payload.send.symbol, e.g. BTC-TESTNET', lookup: 'asset' },
  sendAmount: { field: 'send.amount', label: 'Amount', icon: 'calculator', kind: 'amount', placeholder: 'msg.payload.send.amount' },
  receiveAsset: { field: 'receive.symbol', label: 'Receive asset', icon: 'bitcoin', placeholder: 'msg.payload.receive.symbol, e.g. ETH-TESTNET', lookup: 'asset' },
  receiveAmount: { field: 'receive.amount', label: 'Receive amount', icon: 'calculator', kind: 'amount', placeholder: 'msg.payload.receive.amount' },
  reference: { label: 'Reference', icon: 'file-text-o', hint: 'your text, e.g. the invoice number' },
  benefit_of: { label: 'Benefit of', icon: 'user-o', hint: 'the beneficiary' },
  account_no: { label: 'Account no', icon: 'list-alt', hint: "the beneficiary's account" },
  // v2
  workspaceID: { label: 'Workspace', icon: 'briefcase', pathId: true, placeholder: "empty: the connection's workspace" },
  policyName: { field: 'name', label: 'Policy name', icon: 'tag' },
  policyType: { label: 'Type', icon: 'list', custom: 'policyType', applied: false },
  members: { label: 'Members (human members and API keys)', icon: 'users', custom: 'members', applied: false },
  threshold: { label: 'Threshold', icon: 'check-square-o', kind: 'number', placeholder: 'e.g. 2', suffix: 'approvals of the members below', applied: false },
  adminPolicyID: { label: 'Admin policy', icon: 'shield', placeholder: "empty: the workspace's admin policy" },
  adminLocked: { label: 'Admin locked', icon: 'lock', kind: 'bool', value: 'false', suffix: "changes need the admin policy's approval", applied: false },
  allowDuplicates: { label: 'Duplicates', icon: 'clone', kind: 'bool', value: 'false', suffix: 'allowDuplicates', applied: false },
  policyID: { label: 'Policy id', icon: 'shield', pathId: true },
  memberID: { label: 'New member', icon: 'user-plus', hint: 'human member id or API key id' },
  actionID: { label: 'Update request', icon: 'hashtag', pathId: true },
  portfolioName: { field: 'name', label: 'Portfolio name', icon: 'tag', applied: false },
  portfolioType: { field: 'type', label: 'Type', icon: 'list', kind: 'enum', values: ['standard', 'exchange'], value: 'standard', placeholder: 'msg.payload.type (default standard)' },
  accountID: { label: 'Portfolio id', icon: 'briefcase', pathId: true },
  walletName: { field: 'name', label: 'Wallet name', icon: 'tag', applied: false },
  connectPlugin: { label: 'Connect plugin', icon: 'plug', kind: 'enum', values: ['defi', 'wc'], value: 'defi' },
  waitForAddress: { label: 'Wait for address', icon: 'clock-o', kind: 'number', value: '6', placeholder: 'seconds', suffix: 'seconds', applied: false },
  walletID: { label: 'Wallet id', icon: 'hashtag', pathId: true },
};

/** One operation a node offers. */
export interface NodeOperation {
  /** Its label in the node's name and the Operation select, e.g. `create`. */
  label: string;
  /** The palette operation it sends (nodes/shared/palette.ts), when not of the same name (policy `addMember` sends `update`). */
  spec?: string;
  /** Extra tip shown under the operation's call in the dialog (HTML). */
  note?: string;
  /** The rows it shows, when not those of its spec's fields (v2 operations built by the node's code). */
  properties?: readonly string[];
  /** The fields listed as read from msg.payload, when not those of its spec. */
  fields?: readonly string[];
  /** The required fields listed, when not those of its spec. */
  required?: readonly string[];
  /** True for an operation made up for the simulator (not in the spec): refused on a hosted environment. */
  simulatorOnly?: boolean;
}

/** The edit dialog and runtime shape of one operation node. */
export interface OperationNodeEditor {
  /** The palette label, also the start of the node's label (`transfer: create`). */
  paletteLabel: string;
  /** The icon file in the pack's icons/ folder. */
  icon: string;
  /** The input port's label (default `request fields in msg.payload`). */
  inputLabels?: string;
  /** The operations offered, in the Operation select's order; the first is the default. */
  operations: Record<string, NodeOperation>;
  /** The editor properties, in row order (keys of {@link FIELDS}). */
  fields: readonly string[];
  /** Per-node changes to a field's presentation (e.g. `wallet_id` is "From wallet" on a transfer). */
  overrides?: Record<string, Partial<FieldPresentation>>;
  /** For the money-moving nodes: the submission kind the `resolve` operation looks up. */
  resolve?: TransactionKind;
}

/** The `resolve` operation of the money-moving nodes (lib `resolveSubmission`). */
export const RESOLVE_OPERATION = 'resolve';

/** The Operation select's value that reads the operation from `msg.operation` per msg. */
export const OPERATION_FROM_MSG = 'msg.operation';

const RESOLVE: NodeOperation = { label: 'resolve' };
const FROM_WALLET = { label: 'From wallet', icon: 'sign-out' };

/** Every operation node, by node type. */
export const OPERATION_NODES: Record<OperationNodeType, OperationNodeEditor> = {
  'custody-assets': {
    paletteLabel: 'assets',
    icon: 'custody-assets.svg',
    operations: { assets: { label: 'list assets' }, fee: { label: 'fee quote' } },
    fields: ['feeType', 'asset', 'amount'],
  },
  'custody-company': {
    paletteLabel: 'company',
    icon: 'custody-company.svg',
    operations: { create: { label: 'create' }, get: { label: 'get' }, update: { label: 'update' }, search: { label: 'search' } },
    fields: ['company_id', 'query'],
  },
  'custody-trusted-party': {
    paletteLabel: 'trusted party',
    icon: 'custody-trusted-party.svg',
    operations: { add: { label: 'add' }, list: { label: 'list' }, remove: { label: 'remove' } },
    fields: ['company_id', 'trustedparty_id'],
  },
  'custody-fund': {
    paletteLabel: 'fund',
    icon: 'custody-fund.svg',
    operations: {
      createFund: { label: 'create fund' },
      addWallet: { label: 'add wallet' },
      getFund: { label: 'get fund' },
      getWallet: { label: 'get wallet' },
      walletHistory: { label: 'wallet history' },
      deposits: { label: 'deposits' },
      ledger: { label: 'ledger' },
      holdings: { label: 'holdings' },
      addWhitelist: { label: 'add whitelist' },
      listWhitelist: { label: 'list whitelist' },
    },
    fields: ['company_id', 'fund_id', 'wallet_id', 'direction'],
  },
  'custody-transfer': {
    paletteLabel: 'transfer',
    icon: 'custody-transfer.svg',
    resolve: 'transfer',
    operations: {
      create: {
        label: 'create',
        note: '<b>partner_txID</b> is required: the business key of the transfer (the field above, else <code>msg.payload.partner_txID</code>). The same key is the same transfer: a repeat answers <code>existing</code>, so it is never paid twice. Build it from your invoice or order number, never from the msg id.',
      },
      get: { label: 'get' },
      resolve: RESOLVE,
    },
    fields: ['company_id', 'wallet_id', 'counterparty_wallet_address', 'sendAsset', 'sendAmount', 'reference', 'benefit_of', 'account_no', 'tx_id'],
    overrides: { wallet_id: FROM_WALLET },
  },
  'custody-core-client': {
    paletteLabel: 'core client',
    icon: 'custody-core-client.svg',
    operations: { create: { label: 'create' }, list: { label: 'list' }, actions: { label: 'pending actions' }, action: { label: 'get action' }, wallets: { label: 'wallets' } },
    fields: ['company_id', 'client_id', 'action_id'],
    overrides: { company_id: { pathId: false } },
  },
  'custody-action': {
    paletteLabel: 'action',
    icon: 'custody-approve.svg',
    inputLabels: 'client_id, action_id in msg.payload',
    operations: {
      approve: { label: 'approve', note: 'Wired after a core client feed node, leave both ids empty.' },
      reject: { label: 'reject', note: 'Wired after a core client feed node, leave both ids empty.' },
    },
    fields: ['client_id', 'action_id'],
  },
  'custody-withdraw': {
    paletteLabel: 'withdraw',
    icon: 'custody-withdraw.svg',
    resolve: 'withdrawal',
    operations: {
      create: {
        label: 'create',
        note: '<b>partner_txID</b> is required: the business key of the withdrawal (the field above, else <code>msg.payload.partner_txID</code>); build it from your order number, never from the msg id. A withdrawal is sent once, never retried by the node: after a timeout, look for it (ledger, wallet history) before sending it again. <b>address</b> must be whitelisted on the fund first.',
      },
      get: { label: 'get' },
      resolve: RESOLVE,
    },
    fields: ['company_id', 'wallet_id', 'address', 'sendAsset', 'sendAmount', 'reference', 'benefit_of', 'account_no', 'tx_id'],
    overrides: { wallet_id: { label: 'From wallet' } },
  },
  'custody-swap-make': {
    paletteLabel: 'swap make',
    icon: 'custody-swap-make.svg',
    resolve: 'swapMake',
    operations: {
      make: {
        label: 'make',
        note: '<b>partner_txID</b> is required: the business key of the quote (the field above, else <code>msg.payload.partner_txID</code>); build it from your order number, never from the msg id. A quote is sent once, never retried by the node: after a timeout, look for it (liquidity hub list, ledger) before making it again.',
      },
      get: { label: 'get' },
      cancel: { label: 'cancel' },
      resolve: RESOLVE,
    },
    fields: ['company_id', 'send_wallet_id', 'receive_wallet_id', 'sendAsset', 'sendAmount', 'receiveAsset', 'receiveAmount', 'reference', 'tx_id'],
    overrides: { sendAsset: { label: 'Send asset' }, sendAmount: { label: 'Send amount' } },
  },
  'custody-swap-take': {
    paletteLabel: 'swap take',
    icon: 'custody-swap-take.svg',
    resolve: 'swapTake',
    operations: {
      take: {
        label: 'take',
        note: '<b>partner_txID</b> is required: the business key of the take (the field above, else <code>msg.payload.partner_txID</code>). Derive it from the quote you take, e.g. template <code>take-{{payload.swap_id}}</code>: one take per quote. A take is sent once, never retried by the node: after a timeout, look for it before taking again.',
      },
      get: { label: 'get' },
      resolve: RESOLVE,
    },
    fields: ['company_id', 'swap_id', 'send_wallet_id', 'receive_wallet_id', 'reference', 'tx_id'],
  },
  'custody-liquidity-hub': {
    paletteLabel: 'liquidity hub',
    icon: 'custody-liquidity-hub.svg',
    operations: { publish: { label: 'publish' }, list: { label: 'list' }, approveTake: { label: 'approve take' } },
    fields: ['company_id', 'tx_id', 'action_id'],
    overrides: { tx_id: { label: 'Quote tx id' } },
  },
  'custody-sweep': {
    paletteLabel: 'sweep',
    icon: 'custody-sweep.svg',
    resolve: 'sweep',
    operations: {
      exchanges: { label: 'exchanges' },
      start: {
        label: 'start',
        note: '<b>partner_txID</b> (optional, from the OpenAPI Sweep body): the business key of the sweep (the field above, else <code>msg.payload.partner_txID</code>); build it from your order number, never from the msg id. A sweep is never retried automatically.',
      },
      status: { label: 'status', note: "The spec's form: POST to the literal path <code>.../sweep/tx_id</code> with <code>{tx_id}</code> in the body." },
      resolve: RESOLVE,
    },
    fields: ['client_id', 'wallet_id', 'recipient_wallet_id', 'sendAsset', 'sendAmount', 'reference', 'tx_id'],
    overrides: { wallet_id: { label: 'From wallet' }, tx_id: { pathId: false } },
  },
  'custody-read': {
    paletteLabel: 'read',
    icon: 'custody-read.svg',
    operations: {
      account: { label: 'account' },
      balance: { label: 'balance' },
      funds: { label: 'funds' },
      fund: { label: 'fund' },
      fundLedger: { label: 'fund ledger' },
      trustedParties: { label: 'trusted parties' },
      walletHistory: { label: 'wallet history' },
    },
    fields: ['fund_id', 'wallet_id', 'direction'],
  },
  'custody-policy': {
    paletteLabel: 'policy',
    icon: 'custody-policy.svg',
    operations: {
      list: { label: 'list', properties: ['workspaceID'] },
      create: {
        label: 'create',
        properties: ['workspaceID', 'policyName', 'policyType', 'threshold', 'members', 'adminPolicyID', 'adminLocked', 'allowDuplicates'],
        fields: ['workspaceID', 'name', 'threshold', 'members', 'adminPolicyID', 'adminLocked', 'allowDuplicates', 'expression (instead of threshold and members)'],
        required: ['name', 'threshold and members (or expression)'],
        note: 'The expression is built from <b>Threshold</b> and <b>Members</b> (spec section 2: top level type 1, operation 1; one member rule type 2, operation 3, threshold 0, <code>arguments.id</code> per member). Leave both empty to give <code>msg.payload.expression</code> whole. An empty <b>Admin policy</b> uses the workspace\'s admin policy.',
      },
      addMember: {
        label: 'add member',
        spec: 'update',
        properties: ['workspaceID', 'policyID', 'memberID'],
        fields: ['workspaceID', 'policyID', 'memberID'],
        required: ['policyID', 'memberID'],
        note: 'Sends the full policy body with one more member rule (PUT). The policy changes only once the update request is approved: the answer is <code>{actionID, status: "pending"}</code>.',
      },
      getAction: {
        label: 'get update request (simulator only)',
        properties: ['actionID'],
        simulatorOnly: true,
        note: 'Simulator only: not in the spec; refused (ECONFIG) on a sandbox, play or production connection.',
      },
      approveAction: {
        label: 'approve update request (simulator only)',
        properties: ['actionID'],
        simulatorOnly: true,
        note: "Simulator only: not in the spec (the service takes approvals signed in its signing app); refused (ECONFIG) on a sandbox, play or production connection. Approves as the connection's API key, which must be a member of the policy that decides and must not have made the request.",
      },
    },
    fields: ['workspaceID', 'policyName', 'policyType', 'threshold', 'members', 'adminPolicyID', 'adminLocked', 'allowDuplicates', 'policyID', 'memberID', 'actionID'],
  },
  'custody-portfolio': {
    paletteLabel: 'portfolio',
    icon: 'custody-portfolio.svg',
    operations: {
      create: { label: 'create', properties: ['workspaceID', 'portfolioName', 'portfolioType'] },
      createWallet: {
        label: 'create wallet',
        properties: ['workspaceID', 'accountID', 'walletName', 'connectPlugin', 'policyID', 'waitForAddress'],
        note: 'The address comes from a key computation of about 4 to 5 seconds. With <b>Wait for address</b> shorter than that the answer\'s <code>address</code> is empty and <code>msg.note</code> says so: read the wallet later with <b>get wallet</b>. Keep the wait below the connection\'s timeout.',
      },
      get: { label: 'get (simulator only)', properties: ['workspaceID', 'accountID'], simulatorOnly: true },
      getWallet: { label: 'get wallet (simulator only)', properties: ['workspaceID', 'accountID', 'walletID'], simulatorOnly: true },
    },
    fields: ['workspaceID', 'portfolioName', 'portfolioType', 'accountID', 'walletName', 'connectPlugin', 'policyID', 'waitForAddress', 'walletID'],
    overrides: { policyID: { hint: 'a transaction policy' } },
  },
};

/**
 * A field's presentation on one node: {@link FIELDS} with the node's overrides.
 * @throws {Error} for a property missing from {@link FIELDS} (a programming error).
 */
export function fieldOf(node: OperationNodeType, property: string): FieldPresentation & { field: string; kind: FieldKind } {
  const base = FIELDS[property];
  if (!base) throw new Error(`editor-table: no field ${property}`);
  const merged = { ...base, ...(OPERATION_NODES[node].overrides?.[property] ?? {}) };
  return { ...merged, field: merged.field ?? property, kind: merged.kind ?? 'text' };
}

/**
 * The TypedInput properties of every operation node, each with its first type (the type a value
 * saved without `<property>Type` was read as, {@link FIELD_TYPES}): the table the migrations of
 * nodes/shared/migrate.ts take (`TypedFieldTable`); the editor gets a copy in its bundle
 * (scripts/bundle-editor.ts). Custom rows (the policy members and type) are not TypedInputs.
 */
export function typedFieldDefaults(): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const type of Object.keys(OPERATION_NODES) as OperationNodeType[]) {
    const fields: Record<string, string> = {};
    for (const property of OPERATION_NODES[type].fields) {
      const f = fieldOf(type, property);
      if (!f.custom) fields[property] = FIELD_TYPES[f.kind][0];
    }
    out[type] = fields;
  }
  return out;
}
