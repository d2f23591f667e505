// The key values of an index's entries, for indexes on expressions (CREATE INDEX ... (lower(email)))
// as for indexes on columns. An index's key parts are its `columns`; an expression part has -1
// there and its expression (over the table's columns, stored unqualified) in `expressions`. The
// expressions are compiled once per index object and table shape (bindIndexKeys), by whoever is
// about to write index entries: TableWriter, and the DDL that builds or rewrites indexes.
import type { Catalog, IndexDef, TableDef } from '../catalog.js';
import { liveColumns } from '../catalog.js';
import { columnCollation } from '../collation.js';
import type { CompiledExpr } from '../compiled-expr.js';
import { compileExpression, type AstNode } from '../expression-eval.js';
import { outputText, type NonNullSqlValue, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { TableReader } from './access.js';
import { expressionSqlText } from './default-text.js';
import { restrictedEnv } from './expression-kinds.js';
import { columnName, type Scope } from './scope.js';
import { compilePredicate, functionName } from './select.js';

/** A table's columns as the scope of its CHECK, generation and index expressions. */
export function tableColumns(table: TableDef): Scope['columns'] {
  return liveColumns(table).map((c) => ({ name: c.name, type: c.type, qualifier: table.name, collation: columnCollation(c.collation) }));
}

/** The column names an expression's column references name, in the order they appear. */
export function columnRefs(node: unknown, out: string[] = []): string[] {
  if (node === null || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const n of node) columnRefs(n, out);
    return out;
  }
  const n = node as AstNode & Record<string, unknown>;
  if (n.type === 'column_ref') out.push(columnName(n));
  else for (const k of Object.keys(n)) if (k !== 'loc') columnRefs(n[k], out);
  return out;
}

/** The key values of an index's entry for a row (physical slots), by index object. */
const KEYS = new WeakMap<IndexDef, { shape: string; values: (physical: SqlValue[]) => SqlValue[] | undefined }>();

/** Whether an index needs compiling before its entries can be computed: expressions or a predicate. */
function compiled(ix: IndexDef): boolean {
  return ix.expressions !== undefined || ix.predicate !== undefined;
}

/** What the compiled expressions of a table's indexes depend on: its columns' slots, names and types. */
function shapeOf(table: TableDef): string {
  return table.columns.map((c) => `${c.dropped === true ? '-' : c.name}:${c.type}:${c.collation ?? ''}`).join('|');
}

/**
 * Compiles the expressions of `indexes` (default: the table's) over `table` as it now is, unless
 * done for this shape already. Needed before indexKeyValues meets an expression index.
 * @throws SQL_ERROR as compileExpression (an expression no longer valid over the columns)
 */
export function bindIndexKeys(table: TableDef, catalog: Catalog, indexes: readonly IndexDef[] = table.indexes): void {
  let shape: string | undefined;
  for (const ix of indexes) {
    if (!compiled(ix)) continue;
    shape ??= shapeOf(table);
    if (KEYS.get(ix)?.shape === shape) continue;
    const exprs = compileIndexExpressions(ix, table, catalog);
    if (ix.expressions !== undefined) ix.expressionTypes = exprs.map((e) => (e === undefined ? null : e.type));
    const predicate = ix.predicate === undefined ? undefined : compileIndexPredicate(ix, table, catalog);
    const reader = new TableReader(table);
    const parts = ix.columns.map((id, k) => {
      const e = exprs[k];
      if (e === undefined) return (physical: SqlValue[]) => physical[id]!;
      return (physical: SqlValue[]) => e.evaluate({ statementTime: 0n, row: reader.toLive(physical) });
    });
    const values = (physical: SqlValue[]): SqlValue[] => parts.map((p) => p(physical));
    KEYS.set(ix, {
      shape,
      values: predicate === undefined ? values : (physical) => (predicate.evaluate({ statementTime: 0n, row: reader.toLive(physical) }).value === true ? values(physical) : undefined),
    });
  }
}

/**
 * An index's expressions compiled over the table's columns (undefined for column parts), as an
 * index expression: PostgreSQL's restrictions of that place apply.
 * @throws SQL_ERROR as compileExpression
 */
function compileIndexExpressions(ix: IndexDef, table: TableDef, catalog: Catalog): (CompiledExpr | undefined)[] {
  const env = restrictedEnv('index expression', catalog, tableColumns(table));
  return ix.columns.map((_, k) => {
    const e = ix.expressions?.[k];
    return e === null || e === undefined ? undefined : compileExpression(e, env);
  });
}

/** indexKeyValues of `index` as bound now (a later bindIndexKeys over another shape does not change it). */
export function indexKeyFunction(index: IndexDef): (physical: SqlValue[]) => SqlValue[] | undefined {
  return compiled(index) ? boundKeys(index) : (physical) => index.columns.map((id) => physical[id]!);
}

/** The compiled key function of an index with expressions or a predicate. */
function boundKeys(index: IndexDef): (physical: SqlValue[]) => SqlValue[] | undefined {
  const bound = KEYS.get(index);
  if (bound === undefined) throw new Error(`index "${index.name}": its expressions were not compiled (bindIndexKeys)`);
  return bound.values;
}

/**
 * A partial index's predicate compiled over the table's columns, as an index predicate.
 * @throws SQL_ERROR as compilePredicate
 */
function compileIndexPredicate(ix: IndexDef, table: TableDef, catalog: Catalog): CompiledExpr {
  const env = restrictedEnv('index predicate', catalog, tableColumns(table));
  return compilePredicate(ix.predicate as AstNode, env, 'WHERE');
}

/** The key values of `index`'s entry for a row; undefined when a partial index holds no entry for it. */
export function indexKeyValues(index: IndexDef, physical: SqlValue[]): SqlValue[] | undefined {
  // Column indexes (the hot path) without a closure.
  return compiled(index) ? boundKeys(index)(physical) : index.columns.map((id) => physical[id]!);
}

/** The key parts' names as PostgreSQL's messages list them: a column's name, or an expression's text. */
function indexKeyNames(table: TableDef, index: IndexDef): string[] {
  return index.columns.map((id, k) => {
    const e = index.expressions?.[k];
    return e === null || e === undefined ? table.columns[id]!.name : expressionSqlText(e as AstNode);
  });
}

/** `(a, lower(b))=(1, x)`: a key and its values, as PostgreSQL's unique violations show them. */
export function indexKeyText(table: TableDef, index: IndexDef, values: readonly SqlValue[]): string {
  return `(${indexKeyNames(table, index).join(', ')})=(${values.map((v) => (v.value === null ? 'null' : outputText(v as NonNullSqlValue))).join(', ')})`;
}

/** The column names an index's expressions and predicate read (the columns it depends on besides its column parts). */
function expressionColumns(index: IndexDef): Set<string> {
  return new Set(columnRefs([index.expressions ?? [], index.predicate ?? null]));
}

/** Whether the index depends on column `id` (`name`): a column part, or read by an expression. */
export function indexUsesColumn(index: IndexDef, id: number, name: string): boolean {
  return index.columns.includes(id) || (compiled(index) && expressionColumns(index).has(name));
}

/** The conjuncts of an AND tree (a partial index's predicate, a query's conditions). */
function conjuncts(node: AstNode): AstNode[] {
  const n = node as AstNode & { operator?: unknown; left?: AstNode; right?: AstNode };
  if (n.type === 'binary_expr' && String(n.operator).toUpperCase() === 'AND') return [...conjuncts(n.left!), ...conjuncts(n.right!)];
  return [node];
}

// ---- The planner's view of expression key parts ------------------------------------------------
//
// The planner matches conditions to key parts by column id. An expression part has an id of its
// own, below -1 (-1 marks it in IndexDef.columns): expressionKeyId. Its type is the expression's
// (IndexDef.expressionTypes), its name its text.

/** The planner's id of key part `k` (an expression) of `index`. */
function expressionKeyId(index: IndexDef, k: number): number {
  return -2 - (index.id * 64 + k);
}

function expressionPart(table: TableDef, id: number): { index: IndexDef; k: number } | undefined {
  const n = -2 - id;
  const ixId = Math.floor(n / 64);
  const index = table.indexes.find((i) => i.id === ixId);
  return index === undefined ? undefined : { index, k: n % 64 };
}

/** The key parts of `index` as the planner names them: column ids, or expressionKeyId. */
export function plannerKeyColumns(index: IndexDef): number[] {
  return index.columns.map((id, k) => (id >= 0 ? id : expressionKeyId(index, k)));
}

/** A key part's type: a column's, or an expression's. */
export function keyColumnType(table: TableDef, id: number): SqlTypeName {
  if (id >= 0) return table.columns[id]!.type;
  const part = expressionPart(table, id);
  const type = part?.index.expressionTypes?.[part.k];
  if (type === undefined || type === null) throw new Error(`no key part ${id} in table "${table.name}"`);
  return type;
}

/** A key part's name for EXPLAIN: a column's, or an expression's text. */
export function keyColumnName(table: TableDef, id: number): string {
  if (id >= 0) return table.columns[id]!.name;
  const part = expressionPart(table, id)!;
  return expressionSqlText(part.index.expressions![part.k] as AstNode);
}

/**
 * An expression's form for matching a condition's operand against an index expression: column
 * references by the column's name (`nameOf`; undefined when one is not of the table), calls by
 * their lower-case name, without positions and parentheses. Undefined when it reads another table.
 */
export function canonicalExpression(node: AstNode, nameOf: (ref: AstNode) => string | undefined): string | undefined {
  let foreign = false;
  const walk = (n: unknown): unknown => {
    if (n === null || typeof n !== 'object') return n;
    if (Array.isArray(n)) return n.map(walk);
    const o = n as Record<string, unknown>;
    if (o.type === 'column_ref') {
      const name = nameOf(o as AstNode);
      if (name === undefined) foreign = true;
      return { column: name };
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort()) {
      if (k === 'loc' || k === 'parentheses' || (k === 'collate' && o[k] === null)) continue;
      out[k] = walk(o[k]);
    }
    if (o.type === 'function') out.name = functionName(o as AstNode);
    return out;
  };
  const text = JSON.stringify(walk(node));
  return foreign ? undefined : text;
}

/**
 * The partial indexes among `indexes` that `conditions` imply: each conjunct of the index's
 * predicate is one of the conditions' conjuncts, written alike (canonicalExpression, the
 * conditions' column references named by `nameOf`). PostgreSQL's predicate proofs go further
 * (`a > 10` implies `a > 5`); these cover the usual `WHERE deleted_at IS NULL`.
 */
export function impliedPartialIndexes(indexes: readonly IndexDef[], conditions: readonly AstNode[], nameOf: (ref: AstNode) => string | undefined): Set<IndexDef> {
  const out = new Set<IndexDef>();
  if (!indexes.some((i) => i.predicate !== undefined)) return out;
  const have = new Set(conditions.flatMap((c) => conjuncts(c)).map((c) => canonicalExpression(c, nameOf)));
  for (const ix of indexes) {
    if (ix.predicate !== undefined && conjuncts(ix.predicate).every((c) => have.has(canonicalExpression(c, (ref) => columnName(ref))))) out.add(ix);
  }
  return out;
}

/** The canonical forms of a table's index expressions, with their planner ids. */
export function indexExpressionForms(table: TableDef): Map<string, number> {
  const out = new Map<string, number>();
  for (const ix of table.indexes) {
    if (ix.expressions === undefined || ix.expressionTypes === undefined) continue;
    ix.expressions.forEach((e, k) => {
      if (e === null) return;
      const form = canonicalExpression(e, (ref) => columnName(ref));
      if (form !== undefined && !out.has(form)) out.set(form, expressionKeyId(ix, k));
    });
  }
  return out;
}
