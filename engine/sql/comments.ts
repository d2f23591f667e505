/**
 * COMMENT ON TABLE / VIEW / COLUMN / SEQUENCE / INDEX ... IS 'text' | NULL (pg_dump writes them after the
 * objects), kept in the catalog with the object, and read back by obj_description and
 * col_description as PostgreSQL's.
 */

import { liveColumns, type Catalog, type TableDef } from './catalog.js';
import type { EvalContext } from './compiled-expr.js';
import { strict, type FunctionDef } from './functions/function-def.js';
import { findSequence, relationKind, relationNameOf } from './sequences.js';
import { syntaxError } from './sequence-options.js';
import type { Token } from './sql-rewrite.js';
import type { TxnView } from './store/sql-view.js';
import { sqlFail } from './sql-types.js';

export interface CommentStatement {
  type: 'comment_on';
  kind: 'table' | 'view' | 'column' | 'sequence' | 'index' | 'schema';
  /** The object's name as written (dotted, quoted parts kept quoted). */
  name: string;
  /** NULL or '' removes the comment. */
  comment: string | null;
}


/**
 * `COMMENT ON {TABLE | VIEW | COLUMN | SEQUENCE | INDEX | SCHEMA} name IS 'text' | NULL`, read from the
 * statement's tokens with its literals as written; undefined for another statement.
 * @throws SQL_ERROR 42601 syntax, 0A000 another kind of object
 */
export function parseCommentStatement(tokens: readonly Token[]): CommentStatement | undefined {
  if (tokens[0]?.word !== 'comment' || tokens[1]?.word !== 'on') return undefined;
  const kind = tokens[2]?.word;
  if (kind !== 'table' && kind !== 'view' && kind !== 'column' && kind !== 'sequence' && kind !== 'index' && kind !== 'schema') {
    return sqlFail('0A000', `unsupported: COMMENT ON ${(tokens[2]?.text ?? '').toUpperCase()} (tables, views, columns, sequences, indexes and schema public take comments)`);
  }
  let i = 3;
  const parts: string[] = [];
  for (;;) {
    const t = tokens[i];
    if (t === undefined || !(t.word !== undefined || (t.text.startsWith('"') && t.text.length >= 2))) return syntaxError(t);
    parts.push(t.word ?? t.text);
    i++;
    if (tokens[i]?.text !== '.') break;
    i++;
  }
  if (tokens[i]?.word !== 'is') return syntaxError(tokens[i]);
  const value = tokens[i + 1];
  let comment: string | null;
  if (value?.word === 'null') comment = null;
  else if (value !== undefined && value.text.startsWith("'") && value.text.endsWith("'") && value.text.length >= 2) comment = value.text.slice(1, -1).replace(/''/g, "'");
  else return syntaxError(value);
  if (i + 2 !== tokens.length) syntaxError(tokens[i + 2]);
  return { type: 'comment_on', kind, name: parts.join('.'), comment: comment === '' ? null : comment };
}

/** Sets or removes `text` on `holder` (a comment of '' or NULL removes it). */
function setComment(holder: { comment?: string }, text: string | null): void {
  if (text === null) delete holder.comment;
  else holder.comment = text;
}

/**
 * Applies COMMENT ON to the catalog (saved with its object).
 * @throws SQL_ERROR 42P01 no such relation, 42809 a relation of another kind, 42703 no such column, 42601 an unqualified column, 3F000 another schema
 */
export function applyComment(st: CommentStatement, catalog: Catalog, view: TxnView): void {
  if (st.kind === 'schema') {
    // Schema public's comment is not kept (there is nothing to read it back with).
    const name = st.name.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name !== 'public') sqlFail('3F000', `schema "${name}" does not exist`);
    return;
  }
  if (st.kind === 'column') {
    const dot = st.name.lastIndexOf('.');
    if (dot < 0) sqlFail('42601', 'column name must be qualified');
    const tableText = st.name.slice(0, dot);
    const columnText = st.name.slice(dot + 1).replace(/^"(.*)"$/, '$1').toLowerCase();
    const viewDef = catalog.view(relationNameOf(tableText));
    if (viewDef !== undefined) {
      const col = viewDef.columns.find((c) => c.name === columnText) ?? sqlFail('42703', `column "${columnText}" of relation "${viewDef.name}" does not exist`);
      setComment(col, st.comment);
      catalog.saveView(view, viewDef);
      return;
    }
    const table = tableOf(catalog, tableText);
    const col = liveColumns(table).find((c) => c.name === columnText) ?? sqlFail('42703', `column "${columnText}" of relation "${table.name}" does not exist`);
    setComment(col, st.comment);
    catalog.save(view, table);
    return;
  }
  const name = relationNameOf(st.name);
  const kind = relationKind(catalog, name);
  if (kind === undefined) sqlFail('42P01', `relation "${name}" does not exist`);
  if (kind !== st.kind) sqlFail('42809', `"${name}" is not ${st.kind === 'index' ? 'an index' : `a ${st.kind}`}`);
  if (kind === 'table') {
    const table = catalog.table(name)!;
    setComment(table, st.comment);
    catalog.save(view, table);
  } else if (kind === 'view') {
    const def = catalog.view(name)!;
    setComment(def, st.comment);
    catalog.saveView(view, def);
  } else if (kind === 'index') {
    const { table, index } = catalog.findIndex(name)!;
    setComment(index, st.comment);
    catalog.save(view, table);
  } else {
    const found = findSequence(catalog, name)!;
    if (found.standalone !== undefined) {
      const seq = { ...found.standalone };
      setComment(seq, st.comment);
      catalog.saveSequence(view, seq);
    } else {
      // A serial or identity column's sequence: kept in its column's definition.
      const { table, col } = found.column!;
      col.sequence = { ...found.def, name: found.name };
      setComment(col.sequence, st.comment);
      catalog.save(view, table);
    }
  }
}

function tableOf(catalog: Catalog, text: string): TableDef {
  const name = relationNameOf(text);
  const table = catalog.table(name);
  if (table !== undefined) return table;
  if (relationKind(catalog, name) !== undefined) sqlFail('42809', `"${name}" is not a table`);
  return sqlFail('42P01', `relation "${name}" does not exist`);
}

function catalogOf(ctx: EvalContext): Catalog {
  const catalog = (ctx.exec as { catalog?: Catalog } | undefined)?.catalog;
  return catalog ?? sqlFail('XX000', 'internal: a catalog function evaluated outside a statement');
}

/** The comment of the relation `text` names (42P01 when none: regclass's own check). */
function relationComment(text: string, ctx: EvalContext): string | null {
  const catalog = catalogOf(ctx);
  const name = relationNameOf(text);
  const table = catalog.table(name);
  if (table !== undefined) return table.comment ?? null;
  const viewDef = catalog.view(name);
  if (viewDef !== undefined) return viewDef.comment ?? null;
  const index = catalog.findIndex(name);
  if (index !== undefined) return index.index.comment ?? null;
  const seq = findSequence(catalog, name);
  if (seq !== undefined) return seq.standalone?.comment ?? seq.def.comment ?? null;
  return sqlFail('42P01', `relation "${text}" does not exist`);
}

/** obj_description(regclass [, 'pg_class']): a relation's comment, or NULL. */
const objDescription: FunctionDef = strict(
  { args: ['text'], returns: 'text', impl: (a, ctx) => ({ type: 'text', value: relationComment(a[0]!.value as string, ctx) }) },
  {
    args: ['text', 'text'],
    returns: 'text',
    impl: (a, ctx) => {
      const comment = relationComment(a[0]!.value as string, ctx);
      return { type: 'text', value: a[1]!.value === 'pg_class' ? comment : null };
    },
  },
);

/** col_description(regclass, attnum): a column's comment, or NULL (attnum counts dropped columns, as PostgreSQL's). */
const colDescription: FunctionDef = strict({
  args: ['text', 'int4'],
  returns: 'text',
  impl: (a, ctx) => {
    const text = a[0]!.value as string;
    const catalog = catalogOf(ctx);
    const name = relationNameOf(text);
    if (relationKind(catalog, name) === undefined) sqlFail('42P01', `relation "${text}" does not exist`);
    const attnum = a[1]!.value as number;
    const viewDef = catalog.view(name);
    if (viewDef !== undefined) return { type: 'text', value: viewDef.columns[attnum - 1]?.comment ?? null };
    const col = catalog.table(name)?.columns.find((c) => c.id === attnum - 1 && c.dropped !== true);
    return { type: 'text', value: col?.comment ?? null };
  },
});

export const COMMENT_FUNCTIONS: Record<string, FunctionDef> = { obj_description: objDescription, col_description: colDescription };
