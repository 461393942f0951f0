/**
 * The template engine of the build: Eta, with the pack's templates under nodes/ (the views
 * root, so a template names another from there: `/shared/help/errors.eta`). Every dialog
 * (nodes/<type>/<type>.html, nodes/shared/templates/operation-dialog.eta) and help page
 * (nodes/<type>/locales/<lang>/<type>.html) is an Eta template.
 *
 * - `<%= value %>` writes text, HTML-escaped (`&`, `<`, `>`, `"`; the dialogs' attributes are
 *   double-quoted, so `'` is written as it is); `<%~ html %>` writes HTML as it is.
 * - A written value that is `undefined` or `null` fails the build, naming the template and line;
 *   a help fragment says which values it needs first (`needs('payment')`), so one given no value
 *   for them fails too.
 * - The helpers every template has:
 *   - `help(name, values)`: the help fragment nodes/shared/help/<name>.eta with those values; a
 *     fragment that wraps the node's own text gets it as `body`, captured:
 *     `help('payload-fields', { body: capture(() => { %>...<% }) })`;
 *   - `row(kind, options)`: the dialog row(s) nodes/shared/templates/rows/<kind>.eta draws,
 *     from `it.row` (see each row template for its options).
 *   - `escape(text)`: text as HTML, for a value a partial writes as HTML (a row's label);
 *   - `lit(value)`: a JavaScript literal (JSON, with `</` broken so it cannot end a script block);
 *   - `needs(...keys)`: fails the build when a key has no value (a help fragment's first line);
 *   - `colour(type)`: the palette colour of a flow node type, by its role
 *     (nodes/shared/palette-roles.ts); a type without a role fails the build;
 *   - `schemaVersion(type)`: the latest version of a node type's stored properties
 *     (nodes/shared/migrate.ts), the `schemaVersion` default of its dialog (0: none stored);
 *   - `submissionKind(name)`: lib's SUBMISSION_KINDS entry of a money-moving kind (its owner path
 *     id and paying wallet field); an unknown kind fails the build.
 * - A tag alone on its line stands at column 0 and ends with `-%>` (which drops the newline
 *   after it): the line and its newline are the tag's output, as a written line would be.
 */
import * as path from 'node:path';
import { Eta } from 'eta';
import { SUBMISSION_KINDS } from '../lib/api/kinds';
import { paletteColour } from '../nodes/shared/palette-roles';
import { latestVersion } from '../nodes/shared/migrate';
import { typedFieldDefaults } from '../nodes/shared/editor-table';

/** The latest version of a node type's stored properties (nodes/shared/migrate.ts). */
export function schemaVersionOf(type: string): number {
  return latestVersion(type, typedFieldDefaults());
}

/** The repository root (this file runs from dist/scripts/). */
export const ROOT = path.resolve(__dirname, '..', '..');

/** Where the templates are: the views root of {@link templates}. */
export const VIEWS = path.join(ROOT, 'nodes');

/** HTML-escape text for a double-quoted attribute or an element body. */
function escapeHtml(value: unknown): string {
  if (value === undefined || value === null) throw new Error(`a written value is ${value}`);
  return String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}


/** The money-moving kind of lib, by name; throws for an unknown one. */
function submissionKind(name: string) {
  const kind = (SUBMISSION_KINDS as Record<string, (typeof SUBMISSION_KINDS)[keyof typeof SUBMISSION_KINDS]>)[name];
  if (!kind) throw new Error(`unknown submission kind ${name}`);
  return kind;
}

/** The Eta instance of the build (one, so partials compile once). */
export const templates = new Eta({
  views: VIEWS,
  autoEscape: true,
  escapeFunction: escapeHtml,
  autoTrim: false,
  debug: true,
  cache: true,
  functionHeader: [
    "const help = (name, values) => include('/shared/help/' + name + '.eta', values);",
    "const row = (kind, options) => include('/shared/templates/rows/' + kind + '.eta', { row: options });",
    'const submissionKind = it.submissionKind;',
    'const colour = it.paletteColour;',
    'const schemaVersion = it.schemaVersionOf;',
    'const escape = this.config.escapeFunction;',
    "const lit = (value) => JSON.stringify(value).replace(/<\\//g, '<\\\\/');",
    "const needs = (...keys) => { for (const k of keys) if (it[k] === undefined || it[k] === null) throw new Error('no value for ' + k); };",
  ].join('\n'),
});

/**
 * Render a template of nodes/.
 * @param file the template's path (absolute, under nodes/).
 * @param data its `it`.
 * @returns the text.
 * @throws {Error} naming the file for a template error or a missing value.
 */
export function renderFile(file: string, data: object = {}): string {
  const name = `/${path.relative(VIEWS, file).split(path.sep).join('/')}`;
  try {
    return templates.render(name, { ...data, submissionKind, paletteColour, schemaVersionOf });
  } catch (err) {
    throw new Error(`${path.relative(ROOT, file)}: ${(err as Error).message}`);
  }
}
