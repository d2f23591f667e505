import { liveColumns, type Catalog, type ViewDef } from '../catalog.js';
import type { AstNode } from '../expression-eval.js';
import { ALL_COLUMNS_MARKER, CONFLICT_CONSTRAINT_MARKER, USING_MARKER } from '../sql-rewrite.js';
import { sqlFail } from '../sql-types.js';
import { columnName, columnQualifier, tableName } from './scope.js';
import { callKind } from './expression-kinds.js';
import { functionName } from './select.js';

/*
 * Writes through views (PostgreSQL's automatically updatable views): an INSERT, UPDATE or DELETE
 * naming a simple view (one table or view in FROM, no DISTINCT, GROUP BY, HAVING, set operation,
 * WITH, LIMIT / OFFSET, aggregate, window or set-returning function in its select list) is
 * rewritten into the same statement on what the view reads: its columns that are columns of that
 * relation become those columns, the view's WHERE is added to an UPDATE's or DELETE's, and
 * RETURNING and every expression of the statement read the view's columns as the view computes
 * them. A view of a view is rewritten again, down to the table. Other views are 55000 with
 * PostgreSQL's DETAIL and HINT; a column computed by the view cannot be written (0A000).
 */

type Ast = AstNode & Record<string, any>;
type Verb = 'insert' | 'update' | 'delete';

/** How a simple view's rows are its relation's: the relation, the qualifier its query reads it by, the view's WHERE and columns. */
interface Simple {
  relation: { db: string | null; table: string; as: string | null };
  /** The qualifier the view's expressions use for the relation (its alias, else its name). */
  qualifier: string;
  where: Ast | null;
  /** Per view column: its expression (its names qualified), and the relation's column when it is one. */
  columns: Array<{ name: string; expr: Ast; base?: string }>;
}

const VERB_TEXT: Record<Verb, { cannot: string; enable: string; event: string }> = {
  insert: { cannot: 'insert into', enable: 'inserting into', event: 'INSERT' },
  update: { cannot: 'update', enable: 'updating', event: 'UPDATE' },
  delete: { cannot: 'delete from', enable: 'deleting from', event: 'DELETE' },
};


/**
 * Why query `q` is not a plain selection from its FROM clause, as PostgreSQL words it for a view
 * that is not automatically updatable (DISTINCT, GROUP BY, HAVING, a set operation, WITH when
 * `withCounts`, LIMIT / OFFSET, an aggregate, window or set-returning function in its select
 * list), in PostgreSQL's order; undefined when it is one. Such a query's rows are its FROM rows
 * that pass its WHERE, one for one, which is what writing through a view and taking a query's
 * conditions into a view (views.ts viewWithConditions) both need.
 */
/** Whether `q` has a LIMIT or an OFFSET (its own, or one the pre-pass carried, `_limit`). */
export function limitedQuery(q: Ast): boolean {
  const limited = (l: Ast | null | undefined): boolean => Array.isArray(l?.value) && (l.value as unknown[]).length > 0;
  return limited(q.limit as Ast) || limited(q._limit as Ast);
}

/** Whether the select list of `q` calls a function of this kind (outside its subqueries). */
export function selectListCalls(q: Ast, kind: ReturnType<typeof callKind>): boolean {
  return ((q.columns ?? []) as Ast[]).some((i) => contains(i.expr, (n) => callKind(n) === kind));
}

export function shapeReason(q: Ast, withCounts: boolean): string | undefined {
  const distinct = q.distinct as Ast | null | undefined;
  if (distinct !== null && distinct !== undefined && distinct.type !== null && distinct.type !== undefined) return 'Views containing DISTINCT are not automatically updatable.';
  const group = q.groupby as Ast | Ast[] | null | undefined;
  if (group !== null && group !== undefined && (Array.isArray(group) ? group.length > 0 : ((group.columns as Ast[] | null | undefined)?.length ?? 0) > 0)) return 'Views containing GROUP BY are not automatically updatable.';
  if (q.having !== null && q.having !== undefined) return 'Views containing HAVING are not automatically updatable.';
  if (q._next !== null && q._next !== undefined) return 'Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable.';
  if (withCounts && Array.isArray(q.with) && q.with.length > 0) return 'Views containing WITH are not automatically updatable.';
  if (limitedQuery(q)) return 'Views containing LIMIT or OFFSET are not automatically updatable.';
  if (selectListCalls(q, 'aggregate')) return 'Views that return aggregate functions are not automatically updatable.';
  if (selectListCalls(q, 'window')) return 'Views that return window functions are not automatically updatable.';
  if (selectListCalls(q, 'set-returning')) return 'Views that return set-returning functions are not automatically updatable.';
  return undefined;
}

/** Why view `def` takes no INSERT or UPDATE through it (PostgreSQL's words), or undefined. */
export function updatableReason(def: ViewDef): string | undefined {
  return notUpdatable(def, 'insert');
}

/** Why view `def` is not automatically updatable for `verb` (PostgreSQL's DETAIL), or undefined. */
function notUpdatable(def: ViewDef, verb: Verb): string | undefined {
  const q = def.query as Ast;
  const shape = shapeReason(q, true);
  if (shape !== undefined) return shape;
  const from = (q.from ?? []) as Ast[];
  if (from.length !== 1 || typeof from[0]!.table !== 'string' || from[0]!.join || (from[0]!.db && String(from[0]!.db).toLowerCase() !== 'public')) return 'Views that do not select from a single table or view are not automatically updatable.';
  if (verb !== 'delete' && !simpleOf(def).columns.some((c) => c.base !== undefined)) return 'Views that have no updatable columns are not automatically updatable.';
  return undefined;
}

function contains(node: unknown, test: (n: Ast) => boolean): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((x) => contains(x, test));
  const n = node as Ast;
  // A subquery's aggregates are its own.
  if (n.ast !== undefined || n.type === 'select') return false;
  if (test(n)) return true;
  return Object.values(n).some((v) => contains(v, test));
}

function simpleOf(def: ViewDef): Simple {
  const q = def.query as Ast;
  const from = (q.from as Ast[])[0]!;
  const table = tableName(from.table);
  const as = from.as ? tableName(from.as) : null;
  const qualifier = as ?? table;
  // Every unqualified name of the view's query (outside its subqueries) is its relation's column:
  // qualified, it stays so in a statement that reads other relations too (UPDATE ... FROM).
  const own = (node: Ast): Ast => mapRefs(node, (n) => (columnQualifier(n) === null && columnName(n) !== '*' ? { ...n, table: qualifier } : n), false);
  const columns = ((q.columns ?? []) as Ast[]).map((item, i) => {
    const expr = own(item.expr as Ast);
    const name = def.columns[i]!.name;
    const plain = expr.type === 'column_ref' && columnQualifier(expr) === qualifier && columnName(expr) !== '*';
    return plain ? { name, expr, base: columnName(expr) } : { name, expr };
  });
  return { relation: { db: null, table, as }, qualifier, where: q.where === null || q.where === undefined ? null : own(q.where as Ast), columns };
}

/**
 * The subquery of `DELETE FROM t USING items WHERE cond` without RETURNING, as the pre-pass writes
 * it (`WHERE EXISTS (SELECT 1 AS <USING_MARKER> FROM items WHERE cond)`), or undefined.
 */
export function usingSubquery(ast: Ast): Ast | undefined {
  const w = ast.where as Ast | null | undefined;
  if (w?.type !== 'function' || functionName(w) !== 'exists') return undefined;
  const sub = ((w.args as Ast | undefined)?.value as Ast[] | undefined)?.[0]?.ast as Ast | undefined;
  return (sub?.columns as Ast[] | undefined)?.[0]?.as === USING_MARKER ? sub : undefined;
}

/**
 * DELETE ... USING without RETURNING: a name of `cond` that both the target and a USING item have
 * is 42702, as PostgreSQL resolves `cond` over both at once (inside the pre-pass's subquery the
 * USING item's would be taken).
 */
export function checkUsingNames(ast: Ast, targetColumns: readonly string[], catalog: Catalog): void {
  const sub = usingSubquery(ast);
  if (sub === undefined) return;
  const others = columnsOf((sub.from ?? []) as Ast[], catalog);
  const own = new Set(targetColumns);
  mapRefs(sub.where as Ast, (n) => {
    const name = columnName(n);
    if (columnQualifier(n) === null && own.has(name) && others.has(name)) sqlFail('42702', `column reference "${name}" is ambiguous`);
    return n;
  }, false);
}

/** A statement's target as the parser gives it: a DELETE's is the first FROM item. */
function targetRef(ast: Ast): Ast | undefined {
  return ast.type === 'delete' ? (ast.from as Ast[] | undefined)?.[0] : (ast.table as Ast[] | undefined)?.[0];
}

/** The view a statement writes (its target), if it is one. */
function targetView(ast: Ast, catalog: Catalog): ViewDef | undefined {
  const tref = targetRef(ast);
  if (tref === undefined || typeof tref.table !== 'string') return undefined;
  if (tref.db && String(tref.db).toLowerCase() !== 'public') return undefined;
  const name = tableName(tref.table);
  return catalog.table(name) === undefined ? catalog.view(name) : undefined;
}

/**
 * `ast` (an INSERT, UPDATE or DELETE) with every view it writes through replaced by what the view
 * reads, down to a table; the same object when it writes a table.
 * @throws SQL_ERROR 55000 a view that is not automatically updatable, 0A000 a column it computes,
 *   42703 a column it does not have
 */
export function writeThroughViews(ast: Ast, catalog: Catalog): Ast {
  let out = ast;
  // CASCADED CHECK OPTION on a view checks the conditions of every view under it too.
  let cascading = false;
  for (let depth = 0; ; depth++) {
    const def = targetView(out, catalog);
    if (def === undefined) return out;
    if (depth > 100) sqlFail('42P17', `infinite recursion detected in rules for relation "${def.name}"`);
    if (def.checkOption === 'cascaded') cascading = true;
    out = rewriteOne(out, def, catalog, cascading || def.checkOption !== undefined);
  }
}

/**
 * The checks of the views a write goes through (WITH CHECK OPTION), innermost first, each a
 * condition over the written table (qualified by the statement's name for it): dml.ts tests each
 * new row against them after writing it (44000 when one is not true).
 */
export interface ViewCheck {
  view: string;
  expr: Ast;
}

/** The view checks writeThroughViews attached to a statement. */
export function viewChecksOf(ast: Ast): readonly ViewCheck[] {
  return (ast[VIEW_CHECKS] as ViewCheck[] | undefined) ?? [];
}

const VIEW_CHECKS = '__tetra_view_checks__';

/** Whether view `def` takes INSERTs and whether it takes UPDATEs and DELETEs (information_schema.views). */
export function viewUpdatability(def: ViewDef, catalog: Catalog): { insertable: boolean; updatable: boolean } {
  const through = (verb: Verb): boolean => {
    let cur: ViewDef | undefined = def;
    for (let depth = 0; cur !== undefined && depth < 100; depth++) {
      if (notUpdatable(cur, verb) !== undefined) return false;
      const next = simpleOf(cur).relation.table;
      if (catalog.table(next) !== undefined) return true;
      cur = catalog.view(next);
    }
    return false;
  };
  return { insertable: through('insert'), updatable: through('update') && through('delete') };
}

function rewriteOne(ast: Ast, def: ViewDef, catalog: Catalog, checked: boolean): Ast {
  const verb = ast.type as Verb;
  const why = notUpdatable(def, verb);
  if (why !== undefined) {
    const t = VERB_TEXT[verb];
    sqlFail('55000', `cannot ${t.cannot} view "${def.name}"`, why, `To enable ${t.enable} the view, provide an INSTEAD OF ${t.event} trigger or an unconditional ON ${t.event} DO INSTEAD rule.`);
  }
  // INSERT takes no alias for its relation here (the pre-pass writes the table's name for it):
  // the view's expressions read the relation by its name.
  const view = verb === 'insert' ? byRelationName(simpleOf(def)) : simpleOf(def);
  // What the statement calls the view: its name, or the alias it gives it.
  const tref = targetRef(ast)!;
  const names = new Set([def.name, tref.as ? tableName(tref.as) : def.name]);
  const out = rewriteStatement(ast, def, view, names, catalog);
  if (verb === 'delete') return out;
  // The checks so far, over this view's columns, now over what it reads; this view's own first.
  const through = substitution(view.columns, names);
  const checks: ViewCheck[] = viewChecksOf(ast).map((c) => ({ view: c.view, expr: through(c.expr) }));
  if (checked && view.where !== null) checks.unshift({ view: def.name, expr: structuredClone(view.where) });
  if (checks.length > 0) out[VIEW_CHECKS] = checks;
  return out;
}

/** The statement on what view `def` (`view`, as simpleOf gives it; `names`, what the statement calls it) reads. */
function rewriteStatement(ast: Ast, def: ViewDef, view: Simple, names: ReadonlySet<string>, catalog: Catalog): Ast {
  const verb = ast.type as Verb;
  const column = (name: string): Simple['columns'][number] => view.columns.find((c) => c.name === name) ?? sqlFail('42703', `column "${name}" of relation "${def.name}" does not exist`);
  const writable = (name: string, what: 'insert into' | 'update'): string => {
    const c = column(name);
    if (c.base === undefined) sqlFail('0A000', `cannot ${what} column "${name}" of view "${def.name}"`, 'View columns that are not columns of their base relation are not updatable.');
    return c.base;
  };
  if (verb === 'insert') {
    const subst = substitution(view.columns, names);
    const given = ((Array.isArray(ast.columns) ? ast.columns : []) as unknown[]).map((c) => (typeof c === 'string' ? c.toLowerCase() : columnName({ type: 'column_ref', column: { expr: c } } as unknown as Ast)));
    const positional = given.length === 0 || given.every((n) => n === ALL_COLUMNS_MARKER);
    let columns: unknown = ast.columns;
    if (!positional) columns = given.map((n) => ({ type: 'double_quote_string', value: writable(n, 'insert into') }));
    else {
      // Without a column list: the view's columns in order, as many as the rows give.
      const values = ast.values as Ast | undefined;
      // A query's width is its select list's, unless `*` is in it (then every view column).
      const items = values?.type === 'select' ? ((values.columns ?? []) as Ast[]) : undefined;
      const starred = items !== undefined && items.some((i) => (i.expr as Ast | undefined)?.type === 'column_ref' && columnName(i.expr as Ast) === '*');
      const width =
        given.length > 0 ? given.length : values?.type === 'values' ? (((values.values as Ast[])[0]?.value as Ast[] | undefined)?.length ?? 0) : items !== undefined && !starred ? items.length : view.columns.length;
      if (width > view.columns.length) sqlFail('42601', 'INSERT has more expressions than target columns');
      if (values !== undefined && values !== null) columns = view.columns.slice(0, width).map((c) => ({ type: 'double_quote_string', value: writable(c.name, 'insert into') }));
    }
    const out: Ast = { ...ast, table: [{ db: null, table: view.relation.table, as: null }], columns };
    if (ast.conflict) out.conflict = conflictThrough(def.name, ast.conflict as Ast, view.columns, subst, writable);
    if (ast.returning) out.returning = returningThrough(ast.returning as Ast, view, subst, names, []);
    return out;
  }
  const from = (ast.from ?? []) as Ast[];
  // The statement's other relations: UPDATE's FROM, DELETE's USING (after the pre-pass's marker).
  const otherItems = verb === 'update' ? from : from.length > 1 && from[1]!.table === USING_MARKER ? from.slice(2) : [];
  const subst = substitution(view.columns, names, columnsOf(otherItems, catalog));
  const target = { db: null, table: view.relation.table, as: view.relation.as };
  const viewWhere = view.where === null ? null : structuredClone(view.where);
  if (verb === 'update') {
    const set = ((ast.set ?? []) as Ast[]).map((s) => ({ ...s, column: { expr: { type: 'double_quote_string', value: writable(columnName(s), 'update') } }, table: null, value: subst(s.value as Ast) }));
    const out: Ast = { ...ast, table: [target], set, where: andAll(ast.where ? subst(ast.where as Ast) : null, viewWhere) };
    if (ast.returning) out.returning = returningThrough(ast.returning as Ast, view, subst, names, from);
    return out;
  }
  const rest = from.slice(1);
  const table = ast.table as Ast[] | null | undefined;
  const targets = { table: Array.isArray(table) && table.length > 0 ? [{ ...table[0]!, ...target }] : table, from: [{ ...from[0]!, ...target }, ...rest] };
  const sub = usingSubquery(ast);
  if (sub !== undefined) {
    // DELETE ... USING without RETURNING: the view's names in the subquery's condition, resolved
    // beside the USING items' as at the statement's own level.
    const inner = substitution(view.columns, names, columnsOf((sub.from ?? []) as Ast[], catalog));
    const exists = structuredClone(ast.where as Ast);
    const innerSub = usingSubquery({ type: 'delete', where: exists } as Ast)!;
    if (innerSub.where) innerSub.where = inner(innerSub.where as Ast);
    return { ...ast, ...targets, where: andAll(exists, viewWhere) };
  }
  const out: Ast = { ...ast, ...targets, where: andAll(ast.where ? subst(ast.where as Ast) : null, viewWhere) };
  if (ast.returning) out.returning = returningThrough(ast.returning as Ast, view, subst, names, rest.filter((r) => r.table !== USING_MARKER));
  return out;
}

/** Column name -> the qualifiers of the FROM items (tables and views) that have a column of that name. */
export function columnsOf(items: Ast[], catalog: Catalog): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const item of items) {
    if (typeof item.table !== 'string') continue;
    const name = tableName(item.table);
    const qualifier = item.as ? tableName(item.as) : name;
    const table = catalog.table(name);
    const names = table !== undefined ? liveColumns(table).map((c) => c.name) : (catalog.view(name)?.columns.map((c) => c.name) ?? []);
    for (const n of names) out.set(n, [...(out.get(n) ?? []), qualifier]);
  }
  return out;
}

/** `view` with its expressions and WHERE reading the relation by its name (an INSERT's target has no alias). */
function byRelationName(view: Simple): Simple {
  const to = (e: Ast): Ast => mapRefs(e, (n) => (columnQualifier(n) === view.qualifier ? { ...n, table: view.relation.table } : n));
  return { ...view, qualifier: view.relation.table, where: view.where === null ? null : to(view.where), columns: view.columns.map((c) => ({ ...c, expr: to(c.expr) })) };
}

/**
 * Replaces references to the view's columns (unqualified, or qualified by the view's name or the
 * statement's alias for it) with the view's expressions for them. Inside a subquery only the
 * qualified ones: an unqualified name there may be the subquery's own column.
 */
function substitution(columns: ReadonlyArray<{ name: string; expr: Ast }>, names: ReadonlySet<string>, others: ReadonlyMap<string, string[]> = new Map()): (node: Ast) => Ast {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const walk = (node: unknown, top: boolean): unknown => {
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((x) => walk(x, top));
    const n = node as Ast;
    if (n.type === 'column_ref') {
      const name = columnName(n);
      if (name === '*') return n;
      const q = columnQualifier(n);
      const c = byName.get(name);
      if (q === null && top) {
        // Resolved as PostgreSQL resolves it against the view and the statement's other
        // relations (UPDATE ... FROM, DELETE ... USING), before the view is replaced by its table.
        const elsewhere = others.get(name) ?? [];
        if (c !== undefined && elsewhere.length > 0) sqlFail('42702', `column reference "${name}" is ambiguous`);
        if (c !== undefined) return structuredClone(c.expr);
        if (elsewhere.length === 1) return { ...n, table: elsewhere[0] };
        if (elsewhere.length === 0) sqlFail('42703', `column "${name}" does not exist`);
        return n;
      }
      if (q !== null && names.has(q)) {
        if (c === undefined) sqlFail('42703', `column ${q}.${name} does not exist`);
        return structuredClone(c.expr);
      }
      return n;
    }
    const inner = top && n.ast === undefined && n.type !== 'select';
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(n)) out[k] = walk(v, inner);
    return out;
  };
  return (node) => walk(node, true) as Ast;
}

/**
 * `node` with each column reference replaced by `f`'s answer for it (a copy; `node` is not
 * changed); inside subqueries too unless `intoSubqueries` is false.
 */
function mapRefs(node: Ast, f: (n: Ast) => Ast, intoSubqueries = true): Ast {
  const walk = (x: unknown): unknown => {
    if (x === null || typeof x !== 'object') return x;
    if (Array.isArray(x)) return x.map(walk);
    const n = x as Ast;
    if (n.type === 'column_ref') return f(n);
    if (!intoSubqueries && (n.ast !== undefined || n.type === 'select')) return n;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(n)) out[k] = walk(v);
    return out;
  };
  return walk(node) as Ast;
}

function andAll(a: Ast | null, b: Ast | null): Ast | null {
  if (a === null) return b;
  if (b === null) return a;
  return { type: 'binary_expr', operator: 'AND', left: { ...a, parentheses: true }, right: { ...b, parentheses: true } } as Ast;
}

/** RETURNING over the view: its columns as the view computes them; `*` and `v.*` are the view's columns (with an UPDATE's or DELETE's other FROM items after them). */
function returningThrough(returning: Ast, view: Simple, subst: (n: Ast) => Ast, names: ReadonlySet<string>, others: Ast[]): Ast {
  const items: Ast[] = [];
  const self = [...names][0]!;
  const viewColumns = (): Ast[] => view.columns.map((c) => ({ type: 'expr', expr: subst({ type: 'column_ref', table: self, column: { expr: { type: 'double_quote_string', value: c.name } } } as Ast), as: c.name }) as Ast);
  for (const item of (returning.columns ?? []) as Ast[]) {
    const e = item.expr as Ast | undefined;
    if (e?.type === 'column_ref' && columnName(e) === '*') {
      const q = columnQualifier(e);
      if (q === null) {
        items.push(...viewColumns());
        for (const o of others) items.push({ type: 'expr', expr: { type: 'column_ref', table: tableName(o.as ?? o.table), column: '*' }, as: null } as Ast);
        continue;
      }
      if (names.has(q)) {
        items.push(...viewColumns());
        continue;
      }
    }
    // A bare column keeps its name as the result's column name, as it would read from the view.
    const named = e?.type === 'column_ref' && (item.as === null || item.as === undefined) && view.columns.some((c) => c.name === columnName(e)) ? columnName(e) : item.as;
    items.push({ ...item, expr: subst(e as Ast), as: named ?? null });
  }
  return { ...returning, columns: items };
}

/** ON CONFLICT over the view: target columns and SET columns as the relation's, EXCLUDED's columns too. */
function conflictThrough(viewName: string, conflict: Ast, exprs: Array<{ name: string; expr: Ast }>, subst: (n: Ast) => Ast, writable: (name: string, what: 'insert into' | 'update') => string): Ast {
  const out = structuredClone(conflict);
  const target = out.target as Ast | null;
  if (target?.expr !== undefined && Array.isArray(target.expr)) {
    target.expr = (target.expr as Ast[]).map((c) => {
      if (c.type !== 'column_ref') return c;
      const name = columnName(c);
      // ON CONFLICT ON CONSTRAINT: PostgreSQL looks for the constraint on the view, which has none.
      if (name.startsWith(CONFLICT_CONSTRAINT_MARKER)) sqlFail('42704', `constraint "${name.slice(CONFLICT_CONSTRAINT_MARKER.length)}" for table "${viewName}" does not exist`);
      return { ...c, column: { expr: { type: 'double_quote_string', value: writable(name, 'insert into') } } };
    });
  }
  // EXCLUDED.col: the proposed row's value of the view's column.
  const excluded = substitution(
    exprs.map((c) => ({ name: c.name, expr: mapRefs(c.expr, (n) => ({ ...n, table: 'excluded' })) })),
    new Set(['excluded']),
  );
  const both = (n: Ast): Ast => subst(excluded(n));
  const action = out.action as Ast | undefined;
  const update = action?.expr as Ast | undefined;
  if (update?.type === 'update') {
    update.set = ((update.set ?? []) as Ast[]).map((s) => ({ ...s, table: null, column: { expr: { type: 'double_quote_string', value: writable(columnName(s), 'update') } }, value: both(s.value as Ast) }));
    if (update.where) update.where = both(update.where as Ast);
  }
  return out;
}
