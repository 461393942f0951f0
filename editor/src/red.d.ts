/**
 * What the editor scripts use of the Node-RED editor (4.x), typed here: the maintained typings
 * (@types/node-red__editor-client) describe Node-RED 1.3, without the TypedInput `autoComplete`
 * option or the validators' message results.
 */

/** A TypedInput type: a built-in's name, or a type defined by the dialog. */
type TypedInputType =
  | string
  | {
      value: string;
      label?: string;
      icon?: string;
      hasValue?: boolean;
      validate?: (v: string) => boolean | string;
      /** Suggestions while typing (Node-RED 4.1 ui/common/autoComplete.js): `(value, done)`. */
      autoComplete?: (value: string, done: (options: Array<{ value: string; label: string | JQuery }>) => void) => void;
    };

interface TypedInputOptions {
  default?: string;
  typeField?: string | JQuery;
  types: TypedInputType[];
}

interface EditableListOptions<T> {
  addButton?: string | boolean;
  removable?: boolean;
  sortable?: boolean;
  height?: number;
  addItem?: (row: JQuery, index: number, item: T) => void;
}

interface JQuery {
  typedInput(options: TypedInputOptions): JQuery;
  typedInput(method: 'type' | 'value'): string;
  editableList<T>(options: EditableListOptions<T>): JQuery;
  editableList(method: 'items'): JQuery;
  editableList<T>(method: 'addItem', item: T): JQuery;
}

/**
 * A property validator of a node definition: `this` is the node; true, false or a message. The
 * pack's are built by `CustodyEditor.validator` (custody-editor.ts), of two parameters.
 */
type Validator = (this: EditorNode, v: unknown, opt?: object) => boolean | string;

/** A node as the editor holds it: its properties by name. */
type EditorNode = Record<string, unknown> & { name?: string };

declare const RED: {
  utils: { validatePropertyExpression(path: string): boolean | string };
  validators: { typedInput(typeProperty: string): Validator };
  /** The registered node definitions (ui/nodes.js): a type's `defaults` with their validators. */
  nodes: { getType(type: string): { defaults?: Record<string, { value?: unknown; validate?: Validator }> } | undefined };
  /** The sidebar (Node-RED 4 ui/sidebar.js): a tab of its own. */
  sidebar: {
    addTab(tab: { id: string; label: string; name: string; iconClass: string; content: JQuery; enableOnEdit?: boolean; onchange?: () => void }): void;
  };
  /** The editor's websocket (ui/comms.js): messages the runtime publishes on a topic. */
  comms: { subscribe(topic: string, handler: (topic: string, data: unknown) => void): void };
  /** The logged-in user (ui/user.js): whether they hold a permission (true without adminAuth). */
  user: { hasPermission(permission: string): boolean };
  /** The editor's notifications. */
  notify(text: string, type?: 'error' | 'warning' | 'success' | 'compact'): void;
};
