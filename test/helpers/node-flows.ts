/**
 * Flows for node-red-node-test-helper: the tab and simulator config node the runtime tests
 * use, and loading a flow while collecting what its `helper` nodes receive.
 * Importing it gives the pack's node modules their message catalogs in the helper (./red-catalogs).
 */
import './isolated-dirs';
import './red-catalogs';
import helper from 'node-red-node-test-helper';
import type { DemoDataset } from '../../simulator';
import { until } from './support';

/** The one tab every test flow lives on (id `tab`). */
export const TAB = { id: 'tab', type: 'tab', label: 'test' };

/** A custody-config node (id `cfg`) for the embedded simulator, timestamp signing, 30 s timeout; add `z: 'tab'`. */
export const CONFIG = { id: 'cfg', type: 'custody-config', name: 'simulator', environment: 'simulator', signingMode: 'timestamp', timeout: 30 };

/**
 * One node `op` of `type` (with `props`) wired to helper `out`, and a Catch node wired to helper
 * `caught`, on {@link TAB} with {@link CONFIG} (`config` replaces its properties).
 */
export function operationFlow(type: string, props: Record<string, unknown>, config: Record<string, unknown> = {}): object[] {
  return [
    TAB,
    { ...CONFIG, z: 'tab', ...config },
    { id: 'op', z: 'tab', type, connection: 'cfg', wires: [['out']], x: 100, y: 100, ...props },
    { id: 'out', z: 'tab', type: 'helper', x: 100, y: 100 },
    { id: 'catch', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['caught']], x: 100, y: 100 },
    { id: 'caught', z: 'tab', type: 'helper', x: 100, y: 100 },
  ];
}

/** A TypedInput field's value and type, as {@link typedProps} takes it. */
export interface TypedValue {
  value: unknown;
  /** The TypedInput type: `str`, `num`, `msg`, `flow`, `global`, `env`, `jsonata`, `template`, ... */
  type: string;
}

/** A TypedInput field of type `str` holding `value`. */
export const str = (value: string): TypedValue => ({ value, type: 'str' });

/**
 * A node's stored properties from its TypedInput fields, as the editor saves them (docs/nodes.md
 * "Fields: TypedInputs, look-ups, the operation from the msg"): `<field>` holds the value and
 * `<field>Type` the type.
 */
export function typedProps(fields: Record<string, TypedValue>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).flatMap(([p, { value, type }]) => [[p, value], [`${p}Type`, type]]));
}

/**
 * The typed fields of a custody-transfer that sends BTC-TESTNET from the simulator's demo wallet
 * to the counterparty's (company, wallets, asset, beneficiary `Demo customer`, account `ACC-001`):
 * the amount and the reference are the caller's.
 * @param demo the simulator's demo dataset (`sim.demo`).
 */
export function demoTransferFields(demo: DemoDataset, sendAmount: TypedValue, reference: TypedValue): Record<string, unknown> {
  return typedProps({
    company_id: str(demo.company_id),
    wallet_id: str(demo.wallets['BTC-TESTNET'].wallet_id),
    counterparty_wallet_address: str(demo.counterparty.wallets['BTC-TESTNET'].wallet_id),
    sendAsset: str('BTC-TESTNET'),
    sendAmount,
    reference,
    benefit_of: str('Demo customer'),
    account_no: str('ACC-001'),
  });
}

/** Every msg each collected helper node received since its flow was loaded, by helper node id. */
export type Inbox = Map<string, any[]>;

/**
 * Load `flow` through node-red-node-test-helper and start collecting what helper nodes
 * receive: `inbox` is cleared, then gets one array per collected node.
 * @param nodeModules the node modules to register (each `require`d node file).
 * @param credentials credentials by node id (default none).
 * @param helperIds the nodes to collect (default: every node of type `helper` in `flow`).
 */
export async function loadCollecting(nodeModules: unknown[], flow: object[], credentials: object, inbox: Inbox, helperIds?: string[]): Promise<void> {
  await helper.load(nodeModules as any, flow, credentials);
  inbox.clear();
  const ids = helperIds ?? (flow as Array<{ id: string; type: string }>).filter((n) => n.type === 'helper').map((n) => n.id);
  for (const id of ids) {
    const received: any[] = [];
    inbox.set(id, received);
    helper.getNode(id).on('input', (msg: unknown) => received.push(msg));
  }
}

/**
 * Send `msg` into node `id` and wait until helper `out` or helper `caught` (wired from a Catch
 * node) receives a new msg.
 * @param what named in the timeout error (default `a msg from <id>`).
 * @returns `{ caught }` with the Catch node's msg if one arrived, else `{ out }` with the output msg.
 * @throws {Error} after 15 s without either.
 */
export async function sendAndWait(inbox: Inbox, msg: Record<string, unknown>, id = 'op', what = `a msg from ${id}`): Promise<{ out?: any; caught?: any }> {
  const out = inbox.get('out')!;
  const caught = inbox.get('caught')!;
  const [o, c] = [out.length, caught.length];
  helper.getNode(id).receive(msg);
  await until(() => (out.length > o || caught.length > c ? true : undefined), what);
  return caught.length > c ? { caught: caught[c] } : { out: out[o] };
}

/** Start node-red-node-test-helper's HTTP server (call in `before`, after `helper.init`). */
export function startHelperServer(): Promise<void> {
  return new Promise<void>((resolve) => helper.startServer(resolve));
}

/** Stop node-red-node-test-helper's HTTP server (call in `after`). */
export function stopHelperServer(): Promise<void> {
  return new Promise<void>((resolve) => helper.stopServer(resolve));
}

/**
 * The last status `node` set since its flow was loaded (node-red-node-test-helper spies on
 * Node.prototype.status, shared by all nodes), or undefined.
 */
export function lastStatusOf(node: any): { fill?: string; shape?: string; text?: string } | undefined {
  const calls = node.status.getCalls().filter((c: { thisValue: unknown }) => c.thisValue === node);
  return calls.length ? calls[calls.length - 1].args[0] : undefined;
}
