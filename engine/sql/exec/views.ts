import { liveColumns, type Catalog, type TableDef, type ViewDef } from '../catalog.js';
import { refuseTypeName } from './type-ddl.js';
import { unsupported, type AstNode } from '../expression-eval.js';
import { relationExists, relationKind, relationNoun } from '../sequences.js';
import { typeDisplay } from '../sql-cast.js';
import type { TxnView } from '../store/sql-view.js';
import { sqlFail } from '../sql-types.js';
import type { Plan, PlanColumn } from './runtime.js';
import { columnName, columnQualifier, exprKey, tableName, type Scope } from './scope.js';
import { outputType, planQuery, type PlanEnv } from './select.js';
import { hasVolatile } from './quals.js';
import { limitedQuery, selectListCalls, shapeReason, updatableReason } from './view-writes.js';
import { COLLATE_MARKER } from '../sql-grammar-gaps.js';

/*
 * Views (CREATE VIEW): a query kept in the catalog and planned, wherever the view is read, as a
 * subquery in FROM under the view's name. PostgreSQL keeps a view's query as a parsed tree bound to
 * the columns it read; here it is the parser's AST with its select list's `*` written out when the
 * view is created, and the relations it reads directly are recorded by id (ViewDef.uses) while it
 * is planned. DROP TABLE / DROP VIEW / ALTER TABLE ... DROP COLUMN refuse to take what a view reads
 * (2BP01, PostgreSQL's messages) unless CASCADE, which drops the views too; ALTER COLUMN TYPE of a
 * column a view reads is refused (0A000); renaming a table, a view or one of their columns carries
 * the new name into the queries that read it, checked by planning each again.
 */

type Ast = AstNode & Record<string, any>;

/** The statement sql-rewrite.ts builds for CREATE [OR REPLACE] [TEMP] [RECURSIVE] VIEW. */
export interface CreateViewStatement {
  type: 'create_view';
  replace: boolean;
  temporary: boolean;
  recursive: boolean;
  db: string | null;
  name: string;
  columns: string[] | null;
  /** WITH [CASCADED | LOCAL] CHECK OPTION, or null. */
  checkOption: string | null;
  /** The query as written, and (set by the engine's parse) its AST. */
  definition: string;
  query: unknown;
  ast?: Ast;
}

/** ALTER VIEW [IF EXISTS] v RENAME TO w | RENAME [COLUMN] a TO b (sql-rewrite.ts). */
export interface AlterViewStatement {
  type: 'alter_view';
  ifExists: boolean;
  db: string | null;
  name: string;
  /** RENAME [COLUMN] a TO b: the column; absent for RENAME TO. */
  column?: string;
  to: string;
}

// ---- what a view's query reads, recorded while it is planned ---------------------------------

interface Reads {
  tables: Array<{ table: TableDef; columns: PlanColumn[]; ids: number[] }>;
  views: Set<number>;
  viewColumns: Array<{ view: number; columns: readonly PlanColumn[] }>;
}

/** Set while a view's query is planned at creation or checked after a rename: what it reads. */
let recording: Reads | undefined;
/** The views being expanded by the planning under way, innermost last (a view reading itself). */
const expanding: string[] = [];

/** Called by the planner for every table it reads in FROM, with the columns it offers. */
export function noteTableRead(table: TableDef, columns: PlanColumn[]): void {
  if (recording === undefined) return;
  recording.tables.push({ table, columns, ids: liveColumns(table).map((c) => c.id) });
}

/** Called by the planner with the columns a view read in FROM offers (its plan's, once built). */
export function noteViewRead(def: ViewDef, columns: readonly PlanColumn[]): void {
  recording?.viewColumns.push({ view: def.id, columns });
}

/** Plans `query` recording what it reads directly (a view it reads counts, not what that view reads). */
function planRecording(query: Ast, env: PlanEnv): { plan: Plan; uses: ViewDef['uses'] } {
  const saved = recording;
  const reads: Reads = { tables: [], views: new Set(), viewColumns: [] };
  recording = reads;
  let plan: Plan;
  try {
    plan = planQuery(structuredClone(query), env);
  } finally {
    recording = saved;
  }
  const byTable = new Map<number, Set<number>>();
  for (const r of reads.tables) {
    const used = byTable.get(r.table.id) ?? new Set<number>();
    byTable.set(r.table.id, used);
    r.columns.forEach((c, i) => {
      if (c.used === true) used.add(r.ids[i]!);
    });
  }
  const byView = new Map<number, Set<number>>();
  for (const r of reads.viewColumns) {
    const used = byView.get(r.view) ?? new Set<number>();
    byView.set(r.view, used);
    r.columns.filter((c) => c.hidden !== true).forEach((c, i) => {
      if (c.used === true) used.add(i);
    });
  }
  const sorted = (m: Map<number, Set<number>>): Array<[number, number[]]> => [...m].sort((a, b) => a[0] - b[0]).map(([id, used]) => [id, [...used].sort((a, b) => a - b)]);
  const tables = sorted(byTable).map(([table, columns]) => ({ table, columns }));
  const viewColumns = sorted(byView).map(([view, columns]) => ({ view, columns }));
  return { plan, uses: { tables, views: [...reads.views].sort((a, b) => a - b), viewColumns } };
}

/**
 * The plan of view `def` read in a query (a subquery in FROM, before its alias): its own scope,
 * no parameters, the statement's init plans.
 * @throws SQL_ERROR 42P17 a view whose query reads itself (CREATE OR REPLACE made it so)
 */
export function viewPlan(def: ViewDef, env: PlanEnv, withConditions?: Ast, lookup?: Scope): Plan {
  if (expanding.includes(def.name)) sqlFail('42P17', `infinite recursion detected in rules for relation "${def.name}"`);
  recording?.views.add(def.id);
  const saved = recording;
  recording = undefined;
  expanding.push(def.name);
  try {
    // With the reading query's conditions (viewWithConditions) the plan reads its parameters.
    const query = withConditions ?? structuredClone(def.query as Ast);
    // A parameterised plan (select.ts) reads its key values from `lookup`, an enclosing level of its own.
    const plan = planQuery(query, { catalog: env.catalog, params: withConditions === undefined ? [] : env.params, parent: lookup, ctes: new Map(), ...(env.initPlans === undefined ? {} : { initPlans: env.initPlans }) });
    const visible = plan.columns.filter((c) => !c.hidden);
    if (visible.length !== def.columns.length) sqlFail('XX000', `internal: view "${def.name}" has ${visible.length} columns instead of ${def.columns.length}`);
    return plan;
  } finally {
    expanding.pop();
    recording = saved;
  }
}

/**
 * The view's query with `conds` (conditions a query puts on the view, naming its columns as
 * `alias.col` or `col`) added to its WHERE (and the names of the view's columns they read), each column replaced by the view's expression for it,
 * as PostgreSQL pulls a simple subquery up into the query that reads it: the conditions then reach
 * the tables' indexes and the view's joins. Undefined when that would change the answer or is not
 * certain: a view with DISTINCT, GROUP BY, HAVING, a set operation, LIMIT / OFFSET, or an
 * aggregate, window or set-returning function in its select list; a condition with a subquery or
 * a column of another relation; a column whose expression is volatile.
 */
export function viewWithConditions(def: ViewDef, alias: string, conds: readonly Ast[]): TakenConditions | undefined {
  return queryWithConditions(def.query as Ast, def.columns.map((c) => c.name), alias, conds);
}

/**
 * The qualifier of the key columns a parameterised plan reads (select.ts): a name no query can
 * write (it holds a NUL), so no table or alias inside the query it is put into can take it.
 */
export const LOOKUP_QUALIFIER = '\0lookup';

/**
 * `q` (its select list without `*`, its visible columns named `names` in order) with `conds` on
 * those columns, written as `alias.col` or `col`, added to its WHERE: see viewWithConditions.
 * References qualified by LOOKUP_QUALIFIER stay as they are (key values of an enclosing level).
 */
export function queryWithConditions(q: Ast, names: readonly string[], alias: string, conds: readonly Ast[]): TakenConditions | undefined {
  const items = (q.columns ?? []) as Ast[];
  if (items.length !== names.length || new Set(names).size !== names.length) return undefined;
  const pushable = pushableColumns(q, names);
  if (pushable === undefined) return undefined;
  const byName = new Map(names.map((name, i) => [name, items[i]?.expr as Ast | undefined]));
  let safe = true;
  const read = new Set<string>();
  const subst = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map(subst);
    const n = node as Ast;
    if (n.ast !== undefined || n.type === 'select') {
      safe = false;
      return n;
    }
    if (n.type === 'column_ref') {
      const qual = columnQualifier(n);
      if (qual === LOOKUP_QUALIFIER) return n;
      const expr = byName.get(columnName(n));
      // An explicit COLLATE inside is implicit outside (PostgreSQL's subquery column): written
      // into the condition it would be explicit there, and could conflict with the condition's own.
      if (expr === undefined || (qual !== null && qual !== alias) || !pushable.has(columnName(n)) || hasVolatile(expr) || collated(expr)) {
        safe = false;
        return n;
      }
      read.add(columnName(n));
      return { ...structuredClone(expr), parentheses: true };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(n)) out[k] = subst(v);
    return out;
  };
  // Each condition on its own: those that cannot go in stay for the caller to test on the rows.
  const added: Ast[] = [];
  const rest: Ast[] = [];
  const taken = new Set<string>();
  for (const c of conds) {
    safe = true;
    read.clear();
    const s = subst(c) as Ast;
    if (!safe) {
      rest.push(c);
      continue;
    }
    added.push(s);
    for (const r of read) taken.add(r);
  }
  if (added.length === 0) return undefined;
  let where = (q.where as Ast | null | undefined) ?? null;
  for (const c of added) where = where === null ? { ...c, parentheses: true } : ({ type: 'binary_expr', operator: 'AND', left: { ...where, parentheses: true }, right: { ...c, parentheses: true } } as Ast);
  return { query: { ...q, where }, read: taken, rest };
}

/** A query with some conditions taken into its WHERE: the columns they read, and those left out (`rest`, in their order). */
export interface TakenConditions {
  query: Ast;
  read: ReadonlySet<string>;
  rest: Ast[];
}

/** Whether a condition reads a parameterised plan's keys (LOOKUP_QUALIFIER). */
export function readsKeys(c: unknown): boolean {
  return JSON.stringify(c).includes(JSON.stringify(LOOKUP_QUALIFIER));
}

/**
 * The columns of `q` (named `names`) a condition may be taken into its WHERE on: all of them for
 * a query whose rows are its FROM rows that pass its WHERE (shapeReason); for a grouped query, or
 * a DISTINCT one, only those that are grouping keys (all of a DISTINCT's), as PostgreSQL pushes a
 * qual on grouping columns down: rows of one group share the key, so filtering them first removes
 * whole groups. Undefined for the other shapes (a set operation, LIMIT / OFFSET, DISTINCT ON,
 * window or set-returning functions in the select list).
 */
function pushableColumns(q: Ast, names: readonly string[]): ReadonlySet<string> | undefined {
  if (shapeReason(q, false) === undefined) return new Set(names);
  if ((q._next !== null && q._next !== undefined) || limitedQuery(q)) return undefined;
  if (selectListCalls(q, 'window') || selectListCalls(q, 'set-returning')) return undefined;
  const distinct = (q.distinct as Ast | null | undefined)?.type as string | null | undefined;
  if (distinct === 'DISTINCT ON') return undefined;
  const items = (q.columns ?? []) as Ast[];
  const group = (((q.groupby as Ast | null | undefined)?.columns ?? q.groupby ?? []) as Ast[]).map((g) => {
    // A position or an output name stands for that select item's expression.
    if (g.type === 'number') return items[Number(g.value) - 1]?.expr as Ast | undefined;
    if (g.type === 'column_ref' && columnQualifier(g) === null) {
      const k = items.findIndex((i) => typeof i.as === 'string' && i.as.toLowerCase() === columnName(g));
      if (k >= 0) return items[k]!.expr as Ast;
    }
    return g;
  });
  if (group.length === 0) return distinct === 'DISTINCT' && (q.having ?? null) === null && !selectListCalls(q, 'aggregate') ? new Set(names) : undefined;
  const same = (a: Ast, b: Ast): boolean => {
    if (a.type === 'column_ref' && b.type === 'column_ref') {
      const qa = columnQualifier(a);
      const qb = columnQualifier(b);
      return columnName(a) === columnName(b) && (qa === qb || qa === null || qb === null);
    }
    return exprKey(a) === exprKey(b);
  };
  return new Set(names.filter((_, i) => group.some((g) => g !== undefined && same(items[i]!.expr as Ast, g))));
}

/** Whether an expression holds a COLLATE clause (either form the parse leaves, see sql-grammar-gaps.ts). */
function collated(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(collated);
  const n = node as Ast;
  if (n.collate !== null && n.collate !== undefined) return true;
  if (n.type === 'function' && JSON.stringify(n.name ?? '').includes(COLLATE_MARKER)) return true;
  return Object.entries(n).some(([k, v]) => k !== 'loc' && collated(v));
}

/** The names its columns have when view `def` is read. */
export function viewColumnNames(def: ViewDef): string[] {
  return def.columns.map((c) => c.name);
}

// ---- CREATE VIEW --------------------------------------------------------------------------------

const EMPTY_LIMIT = { seperator: '', value: [] };

/**
 * The query with every `*` and `t.*` of its select list (each member's, in a set operation)
 * written out as the columns it stands for now, so the view keeps the columns it was created with.
 */
export function expandStars(query: Ast, env: PlanEnv): Ast {
  const out = structuredClone(query);
  for (let cur: Ast | undefined = out; cur !== undefined && cur !== null; cur = cur._next as Ast | undefined) {
    const items = cur.columns as Ast[] | undefined;
    if (!Array.isArray(items) || !items.some(isStar)) continue;
    const expanded: Ast[] = [];
    for (const item of items) {
      if (!isStar(item)) {
        expanded.push(item);
        continue;
      }
      const probe: Ast = { ...cur, with: out.with ?? null, columns: [item], where: null, groupby: null, having: null, orderby: null, limit: EMPTY_LIMIT, window: null, distinct: { type: null }, _next: undefined, set_op: undefined, _orderby: undefined, _limit: undefined };
      const plan = planQuery(probe, env);
      for (const c of plan.columns) {
        if (c.hidden === true) continue;
        expanded.push({ type: 'expr', expr: { type: 'column_ref', table: c.qualifier, column: { expr: { type: 'double_quote_string', value: c.name } } }, as: null });
      }
    }
    cur.columns = expanded;
  }
  return out;
}

function isStar(item: Ast): boolean {
  const e = item?.expr as Ast | undefined;
  return e?.type === 'column_ref' && columnName(e) === '*';
}

/** A view's columns from its plan: the names given (the first ones), else the query's. */
function viewColumns(plan: Plan, names: string[] | null): ViewDef['columns'] {
  const visible = plan.columns.filter((c) => !c.hidden);
  if (names !== null && names.length > visible.length) sqlFail('42601', 'CREATE VIEW specifies more column names than columns');
  const columns: ViewDef['columns'] = visible.map((c, i) => ({ name: names?.[i] ?? c.name, type: outputType(c.type) }));
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c.name)) sqlFail('42701', `column "${c.name}" specified more than once`);
    seen.add(c.name);
  }
  return columns;
}

/**
 * CREATE [OR REPLACE] VIEW name [(columns)] AS query. OR REPLACE keeps the view's id (what reads
 * it stays valid) and, as PostgreSQL, only lets the new query add columns at the end.
 * WITH [CASCADED | LOCAL] CHECK OPTION needs a view rows can be written through.
 * @throws SQL_ERROR 42P07 a relation of that name, 42809 OR REPLACE of a relation that is not a
 *   view, 42P16 OR REPLACE dropping, renaming or retyping a column; the query's own errors;
 *   0A000 TEMP, RECURSIVE, CHECK OPTION on a view that is not automatically updatable
 */
export function createView(st: CreateViewStatement, catalog: Catalog, txn: TxnView): void {
  if (st.db !== null && st.db !== 'public') sqlFail('3F000', `schema "${st.db}" does not exist`);
  if (st.temporary) unsupported('temporary views (CREATE TEMP VIEW)');
  if (st.recursive) unsupported('CREATE RECURSIVE VIEW (a WITH RECURSIVE query in an ordinary view reads the same)');
  const existing = catalog.view(st.name);
  if (existing === undefined && relationExists(catalog, st.name)) {
    const kind = relationKind(catalog, st.name);
    if (st.replace && kind !== undefined) sqlFail('42809', `"${st.name}" is not a view`);
    sqlFail('42P07', `relation "${st.name}" already exists`);
  }
  if (existing !== undefined && !st.replace) sqlFail('42P07', `relation "${st.name}" already exists`);
  if (existing === undefined) refuseTypeName(catalog, st.name, true);
  const env: PlanEnv = { catalog, params: [], parent: undefined, ctes: new Map() };
  const query = expandStars(st.ast!, env);
  const { plan, uses } = planRecording(query, env);
  const columns = viewColumns(plan, st.columns);
  if (existing !== undefined) {
    if (columns.length < existing.columns.length) sqlFail('42P16', 'cannot drop columns from view');
    existing.columns.forEach((old, i) => {
      const now: ViewDef['columns'][number] = columns[i]!;
      if (now.name !== old.name) sqlFail('42P16', `cannot change name of view column "${old.name}" to "${now.name}"`, undefined, 'Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.');
      if (now.type !== old.type) sqlFail('42P16', `cannot change data type of view column "${old.name}" from ${typeText(old.type)} to ${typeText(now.type)}`);
      // The columns stay (PostgreSQL's attributes), with their comments.
      if (old.comment !== undefined) now.comment = old.comment;
    });
  }
  const def: ViewDef = { id: existing?.id ?? catalog.newId(), name: st.name, query, definition: st.definition, columns, uses, ...(existing?.comment === undefined ? {} : { comment: existing.comment }) };
  if (st.checkOption !== null) {
    // Only a view rows can be written through can check them (PostgreSQL's refusal and HINT).
    const why = updatableReason(def);
    if (why !== undefined) sqlFail('0A000', 'WITH CHECK OPTION is supported only on automatically updatable views', undefined, why);
    def.checkOption = st.checkOption === 'local' ? 'local' : 'cascaded';
  }
  catalog.saveView(txn, def);
}

function typeText(t: ViewDef['columns'][number]['type']): string {
  return typeDisplay(t) ?? t;
}

// ---- what depends on what -------------------------------------------------------------------------

/** A relation or column other objects may depend on. */
type Target = { kind: 'table'; table: TableDef; column?: number } | { kind: 'view'; view: ViewDef };

/** The views that read `target` directly, in creation order. */
function readersOf(catalog: Catalog, target: Target): ViewDef[] {
  const out: ViewDef[] = [];
  for (const v of [...catalog.views.values()].sort((a, b) => a.id - b.id)) {
    if (target.kind === 'view') {
      if (v.id !== target.view.id && v.uses.views.includes(target.view.id)) out.push(v);
      continue;
    }
    const t = v.uses.tables.find((u) => u.table === target.table.id);
    if (t !== undefined && (target.column === undefined || t.columns.includes(target.column))) out.push(v);
  }
  return out;
}

function describe(target: Target): string {
  if (target.kind === 'view') return `view ${target.view.name}`;
  if (target.column === undefined) return `table ${target.table.name}`;
  return `column ${target.table.columns.find((c) => c.id === target.column)!.name} of table ${target.table.name}`;
}

/**
 * Every view that reads one of `targets`, directly or through another view, each once, with
 * PostgreSQL's DETAIL line for it (`view v depends on table t`), depth first as PostgreSQL lists them.
 * Views in `going` (dropped by the same statement) are neither listed nor followed.
 */
export function dependentViews(catalog: Catalog, targets: Target[], going: ReadonlySet<number> = new Set()): Array<{ view: ViewDef; line: string }> {
  const out: Array<{ view: ViewDef; line: string }> = [];
  const seen = new Set<number>(going);
  const visit = (target: Target): void => {
    for (const v of readersOf(catalog, target)) {
      if (seen.has(v.id)) continue;
      seen.add(v.id);
      out.push({ view: v, line: `view ${v.name} depends on ${describe(target)}` });
      visit({ kind: 'view', view: v });
    }
  };
  for (const t of targets) visit(t);
  return out;
}

export const CASCADE_HINT = 'Use DROP ... CASCADE to drop the dependent objects too.';

/**
 * The views reading `targets` dropped (CASCADE), or 2BP01 naming them: `cannot drop <what>
 * because other objects depend on it` (`what` undefined: a statement dropping several objects,
 * PostgreSQL's `cannot drop desired object(s) ...`), PostgreSQL's DETAIL (`lines` first: other
 * dependents the caller found) and HINT.
 */
export function dropDependentViews(catalog: Catalog, txn: TxnView, what: string | undefined, targets: Target[], cascade: boolean, lines: string[] = [], going: ReadonlySet<number> = new Set()): void {
  const views = dependentViews(catalog, targets, going);
  if (!cascade && lines.length + views.length > 0) {
    const message = what === undefined ? 'cannot drop desired object(s) because other objects depend on them' : `cannot drop ${what} because other objects depend on it`;
    sqlFail('2BP01', message, [...lines, ...views.map((v) => v.line)].join('\n'), CASCADE_HINT);
  }
  for (const { view } of views) catalog.removeView(txn, view.name);
}

export function tableTarget(table: TableDef, column?: number): Target {
  return column === undefined ? { kind: 'table', table } : { kind: 'table', table, column };
}

/**
 * ALTER COLUMN TYPE of a column a view reads: 0A000 as PostgreSQL (`rule _RETURN on view v
 * depends on column "c"`).
 */
export function refuseRetypeUnderView(catalog: Catalog, table: TableDef, column: number): void {
  const reader = readersOf(catalog, { kind: 'table', table, column })[0];
  if (reader === undefined) return;
  const name = table.columns.find((c) => c.id === column)!.name;
  sqlFail('0A000', 'cannot alter type of a column used by a view or rule', `rule _RETURN on view ${reader.name} depends on column "${name}"`);
}

// ---- DROP VIEW, ALTER VIEW --------------------------------------------------------------------------

/** `DROP TABLE / VIEW a, b CASCADE`: node-sql-parser reads the last word as the last name's alias. */
export function dropBehaviour(names: Ast[]): { names: Ast[]; cascade: boolean } {
  const last = names[names.length - 1];
  const word = typeof last?.as === 'string' ? last.as.toUpperCase() : '';
  if (word !== 'CASCADE' && word !== 'RESTRICT') return { names, cascade: false };
  return { names: [...names.slice(0, -1), { ...last!, as: null } as Ast], cascade: word === 'CASCADE' };
}

/**
 * DROP VIEW [IF EXISTS] a, b [CASCADE | RESTRICT].
 * @throws SQL_ERROR 42P01 no such view (without IF EXISTS), 42809 a relation that is not a view,
 *   2BP01 a view other views read (without CASCADE)
 */
export function dropViews(ast: Ast, catalog: Catalog, txn: TxnView): void {
  const { names, cascade } = dropBehaviour((ast.name ?? []) as Ast[]);
  const ifExists = String(ast.prefix ?? '').toUpperCase().includes('IF EXISTS');
  const views: ViewDef[] = [];
  for (const n of names) {
    if (n.db && String(n.db).toLowerCase() !== 'public') {
      if (ifExists) continue;
      sqlFail('3F000', `schema "${String(n.db).toLowerCase()}" does not exist`);
    }
    const name = tableName(n.table);
    const def = catalog.view(name);
    if (def === undefined) {
      const kind = relationKind(catalog, name);
      if (kind !== undefined) sqlFail('42809', `"${name}" is not a view`, undefined, `Use DROP ${kind.toUpperCase()} to remove ${relationNoun(kind)}.`);
      if (ifExists) continue;
      sqlFail('42P01', `view "${name}" does not exist`);
    }
    if (!views.includes(def)) views.push(def);
  }
  const going = new Set(views.map((v) => v.id));
  dropDependentViews(catalog, txn, views.length === 1 ? `view ${views[0]!.name}` : undefined, views.map((view): Target => ({ kind: 'view', view })), cascade, [], going);
  for (const v of views) catalog.removeView(txn, v.name);
}

/**
 * ALTER VIEW v RENAME TO w, ALTER VIEW v RENAME [COLUMN] a TO b (and ALTER TABLE v RENAME ...,
 * which PostgreSQL also takes for a view): the new name carried into the views that read it.
 * @throws SQL_ERROR 42P01 no such view, 42809 a relation that is not a view, 42P07 / 42701 the new name taken
 */
export function alterView(st: AlterViewStatement, catalog: Catalog, txn: TxnView): void {
  if (st.db !== null && st.db !== 'public') {
    if (st.ifExists) return;
    sqlFail('3F000', `schema "${st.db}" does not exist`);
  }
  const def = catalog.view(st.name);
  if (def === undefined) {
    if (st.ifExists) return;
    if (relationKind(catalog, st.name) !== undefined) sqlFail('42809', `"${st.name}" is not a view`);
    sqlFail('42P01', `relation "${st.name}" does not exist`);
  }
  renameInView(def, st.column, st.to, catalog, txn);
}

/** Renames view `def` (column undefined) or one of its columns, carried into its readers. */
export function renameInView(def: ViewDef, column: string | undefined, to: string, catalog: Catalog, txn: TxnView): void {
  if (column === undefined) {
    if (relationExists(catalog, to)) sqlFail('42P07', `relation "${to}" already exists`);
    refuseTypeName(catalog, to, false);
    const from = def.name;
    const readers = readersOf(catalog, { kind: 'view', view: def });
    catalog.removeView(txn, from);
    def.name = to;
    catalog.saveView(txn, def);
    carryRename(catalog, txn, readers, { relation: from, to });
    return;
  }
  const col = def.columns.find((c) => c.name === column) ?? sqlFail('42703', `column "${column}" does not exist`);
  if (def.columns.some((c) => c.name === to)) sqlFail('42701', `column "${to}" of relation "${def.name}" already exists`);
  col.name = to;
  catalog.saveView(txn, def);
  carryRename(catalog, txn, readersOf(catalog, { kind: 'view', view: def }), { relation: def.name, column, to });
}

// ---- renames carried into views -------------------------------------------------------------------

/** A rename: relation `relation` renamed to `to`, or (with `column`) its column `column` to `to`. */
interface Rename {
  relation: string;
  column?: string;
  to: string;
}

/** After table `table` was renamed from `from` (catalog saved): the views that read it follow. */
export function renameTableInViews(catalog: Catalog, txn: TxnView, table: TableDef, from: string): void {
  carryRename(catalog, txn, readersOf(catalog, { kind: 'table', table }), { relation: from, to: table.name });
}

/** After column `column` of `table` was renamed to `to` (catalog saved): the views that read it follow. */
export function renameColumnInViews(catalog: Catalog, txn: TxnView, table: TableDef, columnId: number, from: string): void {
  const to = table.columns.find((c) => c.id === columnId)!.name;
  carryRename(catalog, txn, readersOf(catalog, { kind: 'table', table, column: columnId }), { relation: table.name, column: from, to });
}

/**
 * Writes the rename into each reader's query, then plans it again: it must read the same
 * relations and columns (by id) and give the same column types. PostgreSQL's views follow every
 * rename (its stored query refers to what it reads by number); a query where the name cannot be
 * placed with certainty (an alias that hides the renamed relation's name, an unqualified name
 * another relation of the query also has) is refused rather than left reading something else.
 * @throws SQL_ERROR 0A000 naming the view
 */
function carryRename(catalog: Catalog, txn: TxnView, readers: ViewDef[], rename: Rename): void {
  for (const v of readers) {
    const query = renameInQuery(v.query as Ast, rename);
    const env: PlanEnv = { catalog, params: [], parent: undefined, ctes: new Map() };
    let same = false;
    try {
      const { plan, uses } = planRecording(query, env);
      const types = plan.columns.filter((c) => !c.hidden).map((c) => outputType(c.type));
      // (A view made before its view columns were recorded has none to compare.)
      const was = v.uses.viewColumns === undefined ? { ...uses, viewColumns: undefined } : uses;
      same = JSON.stringify(was) === JSON.stringify(v.uses) && types.length === v.columns.length && types.every((t, i) => t === v.columns[i]!.type);
    } catch {
      same = false;
    }
    const what = rename.column === undefined ? `relation "${rename.relation}"` : `column "${rename.column}" of relation "${rename.relation}"`;
    if (!same) sqlFail('0A000', `unsupported: renaming ${what}: view "${v.name}" reads it, and its query could not be rewritten to the new name with certainty`, undefined, 'Drop the view, rename, and create the view again.');
    v.query = query;
    catalog.saveView(txn, v);
  }
}

/**
 * `query` with the rename written in: a relation's name in FROM and as a qualifier; a column's
 * name where it is qualified by the relation (its name or an alias FROM gives it) or unqualified.
 */
function renameInQuery(query: Ast, rename: Rename): Ast {
  // The names a FROM item of the renamed relation is known by in the query.
  const qualifiers = new Set<string>([rename.relation]);
  walk(query, (n) => {
    if (typeof n.table === 'string' && n.type === undefined && tableName(n.table) === rename.relation && (n.db === null || n.db === undefined || String(n.db).toLowerCase() === 'public')) {
      if (n.as !== null && n.as !== undefined && n.as !== '') qualifiers.add(tableName(n.as));
    }
  });
  const out = structuredClone(query);
  walk(out, (n) => {
    if (rename.column === undefined) {
      // A FROM item: { db, table, as } (no type).
      if (n.type === undefined && typeof n.table === 'string' && tableName(n.table) === rename.relation && (n.db === null || n.db === undefined || String(n.db).toLowerCase() === 'public')) n.table = rename.to;
      if (n.type === 'column_ref' && columnQualifier(n) === rename.relation) n.table = rename.to;
      return;
    }
    if (n.type !== 'column_ref' || columnName(n) !== rename.column) return;
    const q = columnQualifier(n);
    if (q === null || qualifiers.has(q)) n.column = { expr: { type: 'double_quote_string', value: rename.to } };
  });
  return out;
}

function walk(node: unknown, visit: (n: Ast) => void): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) walk(x, visit);
    return;
  }
  visit(node as Ast);
  for (const v of Object.values(node as Record<string, unknown>)) walk(v, visit);
}
