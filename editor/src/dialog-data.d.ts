/**
 * The dialog data of an operation node type: written by the build into its generated .html
 * (scripts/generate-editors.ts) and passed to `CustodyEditor.define` (custody-editor.ts).
 */

/** One field (editor property) of the dialog. */
export interface DialogField {
  property: string;
  /** The API field it fills. */
  field: string;
  label: string;
  icon: string;
  kind: string;
  /** `members` or `policyType` for a row drawn by the editor script, else empty. */
  custom: string;
  /** Its TypedInput types, the first the default. */
  types: readonly string[];
  placeholder: string;
  value: string;
  /** The values of an enum field. */
  values: readonly string[];
  pathId: boolean;
  /** The look-up its str type completes from, or empty. */
  lookup: string;
  maxLength: number;
  suffix: string;
}

/** One operation of the dialog: what it calls and reads, the rows it shows. */
export interface DialogOperation {
  name: string;
  label: string;
  /** Extra tip under its call (HTML), or empty. */
  note: string;
  call: string;
  fields: string[];
  required: string[];
  properties: string[];
}

/** Everything the dialog of one operation node type shows. */
export interface DialogData {
  type: string;
  paletteLabel: string;
  resolve: boolean;
  operations: DialogOperation[];
  fields: DialogField[];
}
