/**
 * Constants of lib and nodes/ the editor scripts check with, written into each bundle at build
 * (scripts/bundle-editor.ts, esbuild `define`) from the modules that own them, so the dialogs
 * refuse what the runtime refuses.
 */
declare const CUSTODY_SHARED: {
  /** The source of a path id as the runtime accepts it (lib PATH_ID). */
  pathId: string;
  /** The source of a policy member id (lib/request/policy-body.ts MEMBER_ID). */
  memberId: string;
  /** The Operation value that reads the operation from msg.operation (editor table OPERATION_FROM_MSG). */
  fromMsg: string;
  /** The kinds of look-up (nodes/custody-config/lookup.ts LOOKUP_KINDS). */
  lookupKinds: string[];
  /** The TypedInput types of a core client id setting (nodes/shared/typed-field.ts SETTING_TYPES). */
  settingTypes: string[];
  /** The operation nodes' TypedInput properties and first types, for the migrations (nodes/shared/editor-table.ts typedFieldDefaults). */
  typedFields: Record<string, Record<string, string>>;
};
