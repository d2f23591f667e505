import { canonicalExpression, impliedPartialIndexes, indexExpressionForms, keyColumnName, keyColumnType, plannerKeyColumns } from './index-keys.js';
import { isAggregateName, resolveAggregate } from '../aggregates.js';
import type { Catalog, IndexDef, TableDef } from '../catalog.js';
import { liveColumns } from '../catalog.js';
import type { CompiledExpr, EvalContext } from '../compiled-expr.js';
import { arrayQuantifier, compileExpression, compileIsolated, unsupported, type AstNode, type CompileEnv } from '../expression-eval.js';
import { checkKeyCollation, collationChecked, columnCollation, isCollatable, mergeCollations, type Collation } from '../collation.js';
import { parseSql } from '../select-expressions.js';
import { DISTINCT_PREFIX, FILTER_MARKER, NO_ARGUMENT, REWRITE_FUNCTIONS, SET_ALL_MARKER, WINDOW_CALL_PREFIX, WINDOW_SPEC_MARKER } from '../sql-rewrite.js';
import { JSON_AGG_ORDERED, JSONB_AGG_ORDERED, LIMIT_MARKER, NATURAL_MARKER, OFFSET_MARKER, ORDINALITY_MARKER, QUERY_MARKER } from '../sql-grammar-gaps.js';
import { castValue, typeDisplay } from '../sql-cast.js';
import { compareValues, resolveComparison } from '../operators.js';
import { commonType, coerce } from '../type-resolution.js';
import { isWindowOnlyName, resolveWindowFunction } from '../window-functions.js';
import { isTetraError } from '../../errors.js';
import { elementTypeOf, isArrayType, isEnumType, NO_FUNCTION_HINT, sqlFail, toJsonb, type JsonValue, type NonNullSqlValue, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { sqlToJson } from '../functions/json-functions.js';
import { boundable, manyValued, TableScanPlan, type AccessPath } from './access.js';
import type { BareCompare, BareCond, BareOrder } from './bare-filter.js';
import { LookupJoinPlan, ParameterisedJoinPlan, type LookupSpec } from './lookup-join.js';
import { LateralJoinPlan } from './lateral-join.js';
import { isSetFunction, ProjectSetPlan, setFunction, type ListedSetFunction, type SetFunction } from './set-returning.js';
import { arrayOf } from '../arrays.js';
import { AggregatePlan, type AggregateCall } from './aggregate-plan.js';
import { aggregatePlan } from './scan-aggregate.js';
import { AliasPlan, DistinctPlan, FilterPlan, JoinPlan, LimitPlan, MaterializePlan, ProjectPlan, SetOpPlan, SortPlan, TrimPlan, ValuesPlan, type JoinKind, type SortKey } from './ops.js';
import { memoisedRows, type InitPlans } from './init-plans.js';
import { PAUSE, runSync, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';
import { columnName, columnQualifier, exprKey, readCollation, sameSlot, Scope, slotExpr, tableName } from './scope.js';
import { informationSchemaPlan, pgCatalogPlan, sequenceRelationPlan } from './information-schema.js';
import { findSequence } from '../sequences.js';
import { expandStars, LOOKUP_QUALIFIER, noteTableRead, noteViewRead, queryWithConditions, readsKeys, viewColumnNames, viewPlan, viewWithConditions } from './views.js';
import { compileQuals, hasVolatile, movesToWhere, noteCorrelatedSubquery, orderQuals, qualList } from './quals.js';
import { FUNCTION_TABLE } from '../functions/function-table.js';
import { figureColumnName, type StarName } from './column-names.js';
import { WindowPlan, type WindowCall } from './window-plan.js';
import { namedWindows, planFrame, windowOf } from './window-spec.js';

/** What planning a query needs: the catalog, parameter types, enclosing scope, visible CTEs. */
export interface PlanEnv {
  catalog: Catalog;
  params: readonly SqlValue[];
  parent: Scope | undefined;
  ctes: Map<string, Plan>;
  /**
   * Where the statement's uncorrelated subqueries go, to be run before its rows (see
   * InitPlans); absent when the plan never runs (a probe) or nothing materialises them.
   */
  initPlans?: InitPlans;
}

type Ast = AstNode & Record<string, any>;

/** The context name of aggregate arguments (an aggregate there is nested). */
const AGGREGATE_ARGUMENTS = 'aggregate function calls';

/**
 * The compile environment of expressions over `scope`: columns, subqueries, and `extra` first.
 * Subqueries are planned under `subScope`, or, when absent, under a view of `scope` for
 * `context` (the enclosing row is the FROM row, and an aggregate of this level is refused there).
 */
export function exprEnv(env: PlanEnv, scope: Scope, extra?: (node: Ast, cenv: CompileEnv) => CompiledExpr | undefined, context = 'WHERE', subScope?: Scope): CompileEnv {
  let under = subScope;
  const parentScope = (): Scope => (under ??= scope.withView({ context }));
  const cenv: CompileEnv = {
    params: env.params,
    paramSlots: true,
    types: (name) => env.catalog.types.get(name),
    resolve: (node, self) => {
      const n = node as Ast;
      if (extra !== undefined) {
        const r = extra(n, self);
        if (r !== undefined) return r;
      }
      if (context === AGGREGATE_ARGUMENTS && (n.type === 'window_func' || n.over)) sqlFail('42803', 'aggregate function calls cannot contain window function calls');
      switch (n.type) {
        case 'column_ref': {
          const name = columnName(n);
          if (n[WHOLE_ROW] === true) {
            const row = wholeRowJson(n, scope);
            if (row !== undefined) return row;
          }
          if (name === '*') {
            const q = columnQualifier(n);
            return unsupported(q === null ? '* in an expression' : `${q}.* as a value (a whole row is read only by count(${q}.*))`);
          }
          if (name === ROW_MARKER && tryResolve(scope, n) === undefined) {
            // count(t.*) of an enclosing query's t: that level's FROM items carry no marker (rowCounts).
            const q = columnQualifier(n);
            let known = false;
            for (let sc: Scope | undefined = scope; sc !== undefined && !known; sc = sc.parent) known = sc.columns.some((c) => c.qualifier === q);
            if (!known) sqlFail('42P01', `missing FROM-clause entry for table "${q}"`);
            unsupported(`count(${q}.*) of an enclosing query's table`);
          }
          const star = STAR_COLUMNS.get(n);
          const index = star === undefined ? -1 : scope.columns.indexOf(star);
          if (index >= 0) return slotExpr({ depth: 0, index, column: star!, scope });
          return slotExpr(scope.resolve(columnQualifier(n), name));
        }
        case 'aggr_func':
          if (n.over) return unsupported('window function here');
          return outerAggregate(n, scope, env) ?? sqlFail('42803', `aggregate functions are not allowed in ${context}`);
        case 'window_func':
          return sqlFail('42P20', `window functions are not allowed in ${context}`);
        case 'function': {
          const fname = functionName(n);
          // Where no projection runs them (see planSelectBlock), as PostgreSQL's parser says.
          if (isSetFunction(fname) && !n.over) {
            const hint = 'You might be able to move the set-returning function into a LATERAL FROM item.';
            if (context === AGGREGATE_ARGUMENTS) sqlFail('0A000', 'aggregate function calls cannot contain set-returning function calls', undefined, hint);
            if (context === 'functions in FROM') sqlFail('0A000', 'set-returning functions must appear at top level of FROM');
            sqlFail('0A000', `set-returning functions are not allowed in ${context}`);
          }
          if (fname === 'exists') return existsExpr(firstSubquery(n), env, parentScope(), false);
          // json_agg / jsonb_agg with ORDER BY, as sql-grammar-gaps.ts wrote it: the array as a JSON array.
          if (fname === JSON_AGG_ORDERED || fname === JSONB_AGG_ORDERED) {
            const array = compileExpression((n.args.value as Ast[])[0]!, self);
            return {
              type: 'jsonb',
              evaluate: (ctx) => {
                const v = array.evaluate(ctx).value as SqlValue[] | null;
                return { type: 'jsonb', value: v === null ? null : { json: v.map((e) => (e.value === null ? null : (e.value as { json: JsonValue }).json)) } };
              },
            };
          }
          // row_to_json(record): the whole row's JSON object is its value (a column is no record: 42883).
          if (fname === 'row_to_json' && (n.args?.value as Ast[] | undefined)?.length === 1) {
            const arg = compileExpression((n.args.value as Ast[])[0]!, self);
            if ((n.args.value as Ast[])[0]![WHOLE_ROW] === true && arg.type === 'jsonb') return arg;
            sqlFail('42883', `function row_to_json(${typeDisplay(arg.type) ?? arg.type}) does not exist`, undefined, NO_FUNCTION_HINT);
          }
          if (fname === 'array' && (n.args?.value?.[0] as Ast | undefined)?.ast !== undefined) return arraySubquery(n, env, parentScope());
          if (fname === REWRITE_FUNCTIONS.distinct || fname === REWRITE_FUNCTIONS.notDistinct) {
            const [a, b] = (n.args?.value ?? []) as Ast[];
            return distinctFrom(compileExpression(a!, self), compileExpression(b!, self), fname === REWRITE_FUNCTIONS.notDistinct);
          }
          if (fname === REWRITE_FUNCTIONS.betweenSymmetric || fname === REWRITE_FUNCTIONS.notBetweenSymmetric) {
            const [a, lo, hi] = (n.args?.value ?? []) as Ast[];
            const lower = { type: 'function', name: { name: [{ type: 'default', value: 'least' }] }, args: { type: 'expr_list', value: [lo, hi] } };
            const upper = { type: 'function', name: { name: [{ type: 'default', value: 'greatest' }] }, args: { type: 'expr_list', value: [lo, hi] } };
            const between = { type: 'binary_expr', operator: fname === REWRITE_FUNCTIONS.betweenSymmetric ? 'BETWEEN' : 'NOT BETWEEN', left: a, right: { type: 'expr_list', value: [lower, upper] } };
            return compileExpression(between as Ast, self);
          }
          if (isAggregateName(fname) && !n.over) return outerAggregate(n, scope, env) ?? sqlFail('42803', `aggregate functions are not allowed in ${context}`);
          return undefined;
        }
        case 'unary_expr':
          if (String(n.operator).toUpperCase() === 'NOT EXISTS') return existsExpr(n.expr as Ast, env, parentScope(), true);
          return undefined;
        case 'binary_expr': {
          const op = String(n.operator).toUpperCase();
          if ((op === 'IN' || op === 'NOT IN') && isSubqueryList(n.right)) {
            return inSubqueryExpr(n.left as Ast, (n.right as Ast).value[0] as Ast, op === 'NOT IN', env, parentScope(), self);
          }
          if (op === 'IS' || op === 'IS NOT') {
            const r = n.right as Ast;
            if (r.type === 'column_ref' && columnQualifier(r) === null && columnName(r) === 'unknown') {
              const l = compileExpression(n.left as Ast, self);
              if (l.type !== 'boolean' && l.type !== 'unknown') sqlFail('42804', `argument of IS UNKNOWN must be type boolean, not type ${l.type}`);
              const not = op === 'IS NOT';
              return { type: 'boolean', evaluate: (ctx) => ({ type: 'boolean', value: (l.evaluate(ctx).value === null) !== not }) };
            }
            if (r.type === 'default' && /^DISTINCT FROM /i.test(String(r.value))) {
              // node-sql-parser keeps the right operand as text: parse it as an expression.
              const other = parseExpressionText(String(r.value).replace(/^DISTINCT FROM /i, ''));
              return distinctFrom(compileExpression(n.left as Ast, self), compileExpression(other, self), op === 'IS NOT');
            }
          }
          const q = n.right as Ast;
          if (q?.type === 'function' && ['any', 'some', 'all'].includes(functionName(q)) && (q.args?.value?.[0] as Ast | undefined)?.ast !== undefined && op in QUANTIFIABLE) {
            return quantified(n.left as Ast, op, functionName(q) === 'all', q.args.value[0] as Ast, env, parentScope(), self);
          }
          return undefined;
        }
        default:
          if (n.ast !== undefined && n.type === undefined) return scalarSubquery(n, env, parentScope());
          return undefined;
      }
    },
  };
  return cenv;
}

/**
 * An aggregate call that belongs to an enclosing level: PostgreSQL gives an aggregate the level
 * of the innermost column its arguments (and FILTER, and ORDER BY inside the call) read, so
 * `(SELECT max(g.v))` in a query over g aggregates g's rows. Undefined when it belongs to `scope`'s
 * own level (it reads none of the enclosing columns, or reads this level's).
 * @throws SQL_ERROR 42803 when the enclosing level does not allow aggregates where the subquery is
 */
function outerAggregate(n: Ast, scope: Scope, env: PlanEnv): CompiledExpr | undefined {
  const level = aggregateLevel(n, scope, env);
  if (level === 0) return undefined;
  let host: Scope = scope;
  for (let i = 0; i < level; i++) host = host.parent!;
  const view = host.view;
  if (view?.aggregate === undefined) {
    const context = view?.context ?? 'this context';
    return sqlFail('42803', context === AGGREGATE_ARGUMENTS ? 'aggregate function calls cannot be nested' : `aggregate functions are not allowed in ${context}`);
  }
  const { slot, type } = view.aggregate(n);
  return { type, evaluate: (ctx) => ctx.outer![ctx.outer!.length - level]![slot]! };
}

/** How many levels out an aggregate call belongs (see outerAggregate): 0 for `scope`'s own. */
function aggregateLevel(n: Ast, scope: Scope, env: PlanEnv): number {
  const { args, orderby, filter } = callArgs(n);
  const filterNode = filter ?? ((n.filter as Ast | null | undefined)?.where as Ast | undefined);
  const parts = [args, orderby?.map((o) => o.expr), filterNode];
  const refs: Ast[] = [];
  columnRefs(parts, refs, true);
  let level = Infinity;
  for (const r of refs) {
    if (columnName(r) === '*') continue;
    const slot = tryResolve(scope, r);
    if (slot !== undefined) level = Math.min(level, slot.depth);
  }
  if (level === 0) return 0;
  // A subquery inside the arguments counts with the columns it reads outside itself, as
  // PostgreSQL's check_agg_arguments does (`max((SELECT g.v))` reads g): planning it under a
  // probe of this level tells how far out they are (its own FROM columns do not count).
  const subs: Ast[] = [];
  subqueriesIn(parts, subs);
  if (subs.length > 0) {
    const probe = scope.probe();
    for (const sub of subs) planQuery(sub.ast as Ast, { ...env, parent: probe, initPlans: undefined });
    level = Math.min(level, probe.reach!.levels);
  }
  return level === Infinity ? 0 : level;
}

/** The subqueries in a node, outermost ones only. */
function subqueriesIn(node: unknown, out: Ast[]): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) subqueriesIn(n, out);
    return;
  }
  const n = node as Ast;
  if (n.ast !== undefined) {
    out.push(n);
    return;
  }
  for (const k of Object.keys(n)) if (k !== 'loc') subqueriesIn(n[k], out);
}

export function functionName(n: Ast): string {
  const parts = (n.name?.name ?? []) as { value: unknown }[];
  const name = String(parts[parts.length - 1]?.value ?? '').toLowerCase();
  return name.startsWith(DISTINCT_PREFIX) ? name.slice(DISTINCT_PREFIX.length) : name;
}

/** The call was written agg(DISTINCT ...) (see sql-rewrite.ts). */
function distinctCall(n: Ast): boolean {
  const parts = (n.name?.name ?? []) as { value: unknown }[];
  return String(parts[parts.length - 1]?.value ?? '').toLowerCase().startsWith(DISTINCT_PREFIX);
}

function firstSubquery(n: Ast): Ast {
  const a = n.args?.value?.[0] as Ast | undefined;
  if (a === undefined || a.ast === undefined) return unsupported('EXISTS without a subquery');
  return a;
}

export function isSubqueryList(r: unknown): boolean {
  const l = r as Ast | undefined;
  return l?.type === 'expr_list' && Array.isArray(l.value) && l.value.length === 1 && (l.value[0] as Ast).ast !== undefined;
}

/**
 * Plans a subquery as a nested level of `scope`, its use reading at most `limit` of its rows. One
 * that reads nothing of any enclosing level is registered as an init plan of the statement.
 * @throws SQL_ERROR 42P19 when it reads the working table of a WITH RECURSIVE being defined
 */
function subPlan(sub: Ast, env: PlanEnv, scope: Scope, limit: number): { plan: Plan; level: { correlated: boolean } } {
  const before = scope.innerRefs;
  let ctes = env.ctes;
  // PostgreSQL refuses a recursive reference inside a subquery of an expression: its rows would
  // change from one iteration to the next (and an uncorrelated one would be computed once).
  if ([...ctes.values()].some((c) => c instanceof WorkingTable)) {
    ctes = new Map([...ctes].map(([name, c]) => [name, c instanceof WorkingTable ? new SublinkRecursion(name, c.columns) : c]));
  }
  const plan = planQuery(sub.ast as Ast, { ...env, ctes, parent: scope });
  const correlated = scope.innerRefs !== before;
  if (!correlated) env.initPlans?.register(sub, env.ctes, plan, limit);
  else noteCorrelatedSubquery();
  return { plan, level: { correlated } };
}

/**
 * Rows of a subquery for the current row. An uncorrelated one was materialised before the
 * statement's rows (InitPlans); it is run here, synchronously, only when it is correlated (once
 * per enclosing row) or when the statement has no init plans (a path that compiles expressions
 * outside a statement's plan), and then cached.
 * @throws what the subquery raises (also one materialised earlier, when this is its first use)
 */
function subRows(plan: Plan, correlated: boolean, x: Exec, row: Row | undefined, limit: number): Row[] {
  if (!correlated) {
    const cached = memoisedRows(x, plan);
    if (cached !== undefined) return cached;
  }
  x.outer.push(row ?? []);
  const out: Row[] = [];
  try {
    for (const r of runSync(plan, x)) {
      out.push(r);
      if (out.length >= limit) break;
    }
  } finally {
    x.outer.pop();
  }
  if (!correlated) x.memo.set(plan, out);
  return out;
}

/**
 * ARRAY(SELECT ...): the subquery's one column as an array, in its rows' order (an empty array
 * over no rows).
 * @throws SQL_ERROR 42601 more than one column, 0A000 a column of arrays (multidimensional)
 */
function arraySubquery(n: Ast, env: PlanEnv, scope: Scope): CompiledExpr {
  const { plan, level } = subPlan(firstSubquery(n), env, scope, Infinity);
  if (plan.columns.filter((c) => !c.hidden).length !== 1) sqlFail('42601', 'subquery must return only one column');
  const element = outputType(plan.columns[0]!.type);
  const type = arrayOf(element === 'unknown' ? 'text' : element);
  return {
    type,
    evaluate: (ctx) => ({ type, value: subRows(plan, level.correlated, ctx.exec as Exec, ctx.row, Infinity).map((r) => r[0]!) }) as SqlValue,
  };
}

function scalarSubquery(n: Ast, env: PlanEnv, scope: Scope): CompiledExpr {
  const { plan, level } = subPlan(n, env, scope, 2);
  if (plan.columns.filter((c) => !c.hidden).length !== 1) sqlFail('42601', 'subquery must return only one column');
  const type = outputType(plan.columns[0]!.type);
  return {
    type,
    // The subquery's value has its column's collation, implicit (PostgreSQL's SubLink).
    collation: readCollation(plan.columns[0]!.collation),
    evaluate: (ctx) => {
      const rows = subRows(plan, level.correlated, ctx.exec as Exec, ctx.row, 2);
      if (rows.length > 1) sqlFail('21000', 'more than one row returned by a subquery used as an expression');
      const v = rows[0]?.[0];
      if (v === undefined) return { type, value: null } as SqlValue;
      return v.type === type ? v : castValue(v, { type });
    },
  };
}

/**
 * A subquery as one row of values, for `SET (a, b) = (SELECT ...)`: NULLs when it yields no row.
 * @throws SQL_ERROR 21000 when it yields more than one
 */
export function rowSubquery(n: Ast, env: PlanEnv, scope: Scope): { types: SqlTypeName[]; evaluate: (ctx: EvalContext) => SqlValue[] } {
  const { plan, level } = subPlan(n, env, scope, 2);
  const visible = plan.columns.flatMap((c, i) => (c.hidden ? [] : [i]));
  const types = visible.map((i) => outputType(plan.columns[i]!.type));
  return {
    types,
    evaluate: (ctx) => {
      const rows = subRows(plan, level.correlated, ctx.exec as Exec, ctx.row, 2);
      if (rows.length > 1) sqlFail('21000', 'more than one row returned by a subquery used as an expression');
      return visible.map((i, k) => {
        const v = rows[0]?.[i];
        const type = types[k]!;
        if (v === undefined) return { type, value: null } as SqlValue;
        return v.type === type ? v : castValue(v, { type });
      });
    },
  };
}

function existsExpr(sub: Ast, env: PlanEnv, scope: Scope, negate: boolean): CompiledExpr {
  const { plan, level } = subPlan(sub, env, scope, 1);
  return {
    type: 'boolean',
    evaluate: (ctx) => {
      const found = subRows(plan, level.correlated, ctx.exec as Exec, ctx.row, 1).length > 0;
      return { type: 'boolean', value: negate ? !found : found };
    },
  };
}

function inSubqueryExpr(leftNode: Ast, sub: Ast, negate: boolean, env: PlanEnv, scope: Scope, cenv: CompileEnv): CompiledExpr {
  const left = compileExpression(leftNode, cenv);
  const { plan, level } = subPlan(sub, env, scope, Infinity);
  if (plan.columns.filter((c) => !c.hidden).length !== 1) sqlFail('42601', 'subquery has too many columns');
  const type = resolveComparison('=', left.type, outputType(plan.columns[0]!.type));
  return {
    type: 'boolean',
    evaluate: (ctx) => {
      const l = castValue(left.evaluate(ctx), { type });
      const rows = subRows(plan, level.correlated, ctx.exec as Exec, ctx.row, Infinity);
      if (rows.length === 0) return { type: 'boolean', value: negate };
      if (l.value === null) return { type: 'boolean', value: null };
      let sawNull = false;
      for (const r of rows) {
        const v = castValue(r[0]!, { type });
        if (v.value === null) sawNull = true;
        else if (compareValues(l as NonNullSqlValue, v as NonNullSqlValue) === 0) return { type: 'boolean', value: !negate };
      }
      return { type: 'boolean', value: sawNull ? null : negate };
    },
  };
}

const QUANTIFIABLE: Record<string, true> = { '=': true, '<>': true, '!=': true, '<': true, '<=': true, '>': true, '>=': true };

/** Parses the text of one expression (the parser hands some operands over as raw text). */
function parseExpressionText(text: string): Ast {
  const ast = parseSql(`SELECT ${text}`) as Ast | Ast[];
  const stmt = (Array.isArray(ast) ? ast[0] : ast) as Ast;
  const col = (stmt.columns as Ast[])[0]!;
  return (col.expr ?? col) as Ast;
}

/** a IS [NOT] DISTINCT FROM b: equality where NULL equals NULL, never NULL itself. */
function distinctFrom(a: CompiledExpr, b: CompiledExpr, not: boolean): CompiledExpr {
  const t = resolveComparison('IS DISTINCT FROM', a.type, b.type);
  return {
    type: 'boolean',
    evaluate: (ctx) => {
      const x = castValue(a.evaluate(ctx), { type: t });
      const y = castValue(b.evaluate(ctx), { type: t });
      let distinct: boolean;
      if (x.value === null || y.value === null) distinct = (x.value === null) !== (y.value === null);
      else distinct = compareValues(x as NonNullSqlValue, y as NonNullSqlValue) !== 0;
      return { type: 'boolean', value: not ? !distinct : distinct };
    },
  };
}

/** x op ANY|ALL (subquery), with SQL's NULL rules. */
function quantified(leftNode: Ast, op: string, all: boolean, sub: Ast, env: PlanEnv, scope: Scope, cenv: CompileEnv): CompiledExpr {
  const left = compileExpression(leftNode, cenv);
  const { plan, level } = subPlan(sub, env, scope, Infinity);
  if (plan.columns.filter((c) => !c.hidden).length !== 1) sqlFail('42601', 'subquery has too many columns');
  const type = resolveComparison(op, left.type, outputType(plan.columns[0]!.type));
  const test = (c: number): boolean => (op === '=' ? c === 0 : op === '<>' || op === '!=' ? c !== 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0);
  return {
    type: 'boolean',
    evaluate: (ctx) => {
      const l = castValue(left.evaluate(ctx), { type });
      const rows = subRows(plan, level.correlated, ctx.exec as Exec, ctx.row, Infinity);
      let sawNull = false;
      for (const r of rows) {
        const v = castValue(r[0]!, { type });
        if (l.value === null || v.value === null) {
          sawNull = true;
          continue;
        }
        const ok = test(compareValues(l as NonNullSqlValue, v as NonNullSqlValue));
        if (all && !ok) return { type: 'boolean', value: false };
        if (!all && ok) return { type: 'boolean', value: true };
      }
      return { type: 'boolean', value: sawNull ? null : all };
    },
  };
}

/**
 * A condition evaluated as an expression (an aggregate's FILTER, an index predicate): a boolean
 * expression; an untyped literal counts as boolean ('t'). WHERE, ON and HAVING are qual lists
 * (quals.ts compileQuals).
 * @throws SQL_ERROR 42804 for any other type
 */
export function compilePredicate(node: AstNode, cenv: CompileEnv, context: string): CompiledExpr {
  const e = compileExpression(node, cenv);
  if (e.type === 'boolean') return e;
  if (e.type === 'unknown') return coerce(e, 'boolean');
  return sqlFail('42804', `argument of ${context} must be type boolean, not type ${typeDisplay(e.type) ?? e.type}`);
}

/** Columns of unknown type (untyped literals) come out as text, as PostgreSQL resolves them. */
export function outputType(t: SqlTypeName): SqlTypeName {
  return t === 'unknown' ? 'text' : t;
}

// ---- queries -------------------------------------------------------------------------------

/**
 * A parenthesised query followed by ORDER BY / LIMIT / OFFSET (the parser keeps those apart, as
 * _orderby and _limit) as one query: they apply to the query in the parentheses, which must not
 * have its own (PostgreSQL's insertSelectOptions). The pre-pass's stand-in for a parenthesised
 * query the parser cannot read (QUERY_MARKER) is replaced by that query. A set operation's own
 * trailing clauses stay where planQuery reads them.
 * @throws SQL_ERROR 42601 "multiple ORDER BY clauses not allowed" (or LIMIT, OFFSET)
 */
function withTrailingClauses(ast: Ast): Ast {
  if (ast._next) return ast;
  const inner = markedQuery(ast);
  const trailing = (ast._orderby ?? []) as Ast[];
  const outer = limitParts(ast._limit);
  if (inner === undefined && trailing.length === 0 && outer.limit === undefined && outer.offset === undefined) return ast;
  if (inner === undefined) {
    const merged = mergeClauses({ orderby: trailing, ...outer }, { orderby: (ast.orderby ?? []) as Ast[], ...limitParts(ast.limit) });
    return { ...ast, orderby: merged.orderby, limit: merged.limit, _orderby: null, _limit: null };
  }
  // The stand-in's own clauses (none from the pre-pass) come before the trailing ones.
  const clauses = mergeClauses({ orderby: trailing, ...outer }, { orderby: (ast.orderby ?? []) as Ast[], ...limitParts(ast.limit) });
  const query = withTrailingClauses(inner);
  if (!query._next) {
    const merged = mergeClauses({ orderby: clauses.orderby ?? [], ...limitParts(clauses.limit) }, { orderby: (query.orderby ?? []) as Ast[], ...limitParts(query.limit) });
    return { ...query, orderby: merged.orderby, limit: merged.limit };
  }
  // A set operation: its clauses are its _orderby/_limit, or those of an unparenthesised last member.
  let last = query;
  while (last._next) last = last._next as Ast;
  const onRoot = ((query._orderby ?? []) as Ast[]).length > 0 || hasLimit(query._limit);
  const onLast = !onRoot && last.parentheses_symbol !== true;
  const own = onRoot ? { orderby: query._orderby, limit: query._limit } : onLast ? { orderby: last.orderby, limit: last.limit } : { orderby: null, limit: null };
  const merged = mergeClauses({ orderby: clauses.orderby ?? [], ...limitParts(clauses.limit) }, { orderby: (own.orderby ?? []) as Ast[], ...limitParts(own.limit) });
  const base = onLast ? mapLast(query, (m) => ({ ...m, orderby: null, limit: null })) : query;
  return { ...base, _orderby: merged.orderby, _limit: merged.limit };
}

/** One query's ORDER BY, LIMIT and OFFSET from the clauses after its parentheses and those inside. */
function mergeClauses(after: { orderby: Ast[]; limit?: Ast; offset?: Ast }, own: { orderby: Ast[]; limit?: Ast; offset?: Ast }): { orderby: Ast[] | null; limit: Ast } {
  if (after.orderby.length > 0 && own.orderby.length > 0) sqlFail('42601', 'multiple ORDER BY clauses not allowed');
  if (after.offset !== undefined && own.offset !== undefined) sqlFail('42601', 'multiple OFFSET clauses not allowed');
  if (after.limit !== undefined && own.limit !== undefined) sqlFail('42601', 'multiple LIMIT clauses not allowed');
  const orderby = after.orderby.length > 0 ? after.orderby : own.orderby;
  return { orderby: orderby.length > 0 ? orderby : null, limit: limitNode(after.limit ?? own.limit, after.offset ?? own.offset) };
}

function mapLast(ast: Ast, f: (member: Ast) => Ast): Ast {
  return ast._next ? { ...ast, _next: mapLast(ast._next as Ast, f) } : f(ast);
}

function hasLimit(l: unknown): boolean {
  const parts = limitParts(l as Ast | undefined);
  return parts.limit !== undefined || parts.offset !== undefined;
}

/** The query a `SELECT <QUERY_MARKER> FROM (<query>) AS <QUERY_MARKER>` of the pre-pass stands for. */
function markedQuery(ast: Ast): Ast | undefined {
  const from = ast.from as Ast[] | null;
  const columns = ast.columns as Ast[];
  if (from?.length !== 1 || from[0]!.as !== QUERY_MARKER || from[0]!.expr?.ast === undefined) return undefined;
  const column = (columns.length === 1 ? (columns[0]!.expr ?? columns[0]!) : undefined) as Ast | undefined;
  if (column?.type !== 'column_ref' || columnName(column) !== QUERY_MARKER) return undefined;
  return from[0]!.expr.ast as Ast;
}

/** A LIMIT node's count and offset expressions (the pre-pass's OFFSET carrier taken apart). */
function limitParts(l: Ast | null | undefined): { limit?: Ast; offset?: Ast } {
  const values = (Array.isArray(l?.value) ? l.value : []) as Ast[];
  if (values.length === 0) return {};
  const carried = values.length === 1 ? offsetCarrier(values[0]!) : undefined;
  if (carried !== undefined) return { ...(carried.limit.type === 'null' ? {} : { limit: carried.limit }), offset: carried.offset };
  const sep = String(l?.seperator ?? '').toLowerCase();
  if (values.length === 2 && sep !== ',') return { limit: values[0]!, offset: values[1]! };
  if (values.length === 1 && sep === 'offset') return { offset: values[0]! };
  if (values.length === 1) return { limit: values[0]! };
  return unsupported('LIMIT offset, count (use LIMIT count OFFSET offset)');
}

/** The LIMIT node of a count and an offset (through the OFFSET carrier when there is an offset). */
function limitNode(limit: Ast | undefined, offset: Ast | undefined): Ast {
  if (offset === undefined) return { seperator: '', value: limit === undefined ? [] : [limit] } as unknown as Ast;
  const carrier = { type: 'select', columns: [{ expr: limit ?? { type: 'null', value: null }, as: LIMIT_MARKER }, { expr: offset, as: OFFSET_MARKER }] };
  return { seperator: '', value: [carrier] } as unknown as Ast;
}

/** Plans a SELECT (with WITH, set operations, ORDER BY, LIMIT). */
export function planQuery(query: Ast, env: PlanEnv): Plan {
  // A nested query's expressions are not operands of the expression it is planned in.
  return compileIsolated(() => planQueryBlock(query, env));
}

function planQueryBlock(query: Ast, env: PlanEnv): Plan {
  if (query.type !== 'select') return unsupported(`${String(query.type)} as a query`);
  const ast = withTrailingClauses(query);
  let e = env;
  if (Array.isArray(ast.with) && ast.with.length > 0) e = planWith(ast.with as Ast[], env);
  // A chain of set operations: a UNION b INTERSECT c ..., ORDER BY / LIMIT on the last member
  // apply to the whole result.
  const members: Ast[] = [];
  const ops: string[] = [];
  for (let cur: Ast | undefined = ast; cur !== undefined && cur !== null; cur = cur._next as Ast | undefined) {
    // INTERSECT ALL / EXCEPT ALL arrive as the plain operator with a marker first column in
    // the right-hand member (see sql-rewrite.ts).
    const first = (cur.columns as Ast[] | undefined)?.[0];
    if (members.length > 0 && first?.as === SET_ALL_MARKER) {
      ops[ops.length - 1] = `${ops[ops.length - 1]!} all`;
      cur = { ...cur, columns: (cur.columns as Ast[]).slice(1) };
    }
    members.push(cur);
    if (cur._next) ops.push(String(cur.set_op ?? 'union').toLowerCase());
  }
  if (members.length === 1) return planSelect(ast, e, true);
  const last = members[members.length - 1]!;
  // A parenthesised member keeps its own ORDER BY / LIMIT; the trailing ones of the whole come
  // as _orderby/_limit, or (without parentheses) on the last member.
  // A member the pre-pass wrapped (a parenthesised set operation) is the query it stands for.
  const plans = members.map((m) => (markedQuery(m) !== undefined ? planQuery({ ...m, _next: undefined, set_op: undefined }, e) : planSelect(m, e, m.parentheses_symbol === true, true)));
  const tail: Ast =
    (Array.isArray(ast._orderby) && ast._orderby.length > 0) || (Array.isArray(ast._limit?.value) && ast._limit.value.length > 0)
      ? ({ type: 'select', orderby: ast._orderby ?? null, limit: ast._limit ?? null } as Ast)
      : last.parentheses_symbol === true
        ? ({ type: 'select', orderby: null, limit: null } as Ast)
        : last;
  // INTERSECT binds tighter than UNION and EXCEPT.
  let items: Plan[] = [plans[0]!];
  const itemOps: string[] = [];
  for (let i = 0; i < ops.length; i++) {
    if (ops[i]!.startsWith('intersect')) items[items.length - 1] = setOp(items[items.length - 1]!, plans[i + 1]!, ops[i]!);
    else {
      items.push(plans[i + 1]!);
      itemOps.push(ops[i]!);
    }
  }
  let plan = items[0]!;
  for (let i = 0; i < itemOps.length; i++) plan = setOp(plan, items[i + 1]!, itemOps[i]!);
  // ORDER BY over the set operation's output columns (names or positions).
  const scope = new Scope(plan.columns, env.parent);
  return finishQuery(plan, tail, e, scope, plan.columns.length, (node) => {
    const n = node as Ast;
    let idx = -1;
    if (n.type === 'number') idx = positional(plan.columns, n.value);
    else if (n.type === 'column_ref' && columnQualifier(n) === null) idx = plan.columns.findIndex((c) => c.name === columnName(n));
    if (idx < 0) return sqlFail('0A000', 'unsupported: ORDER BY on a set operation must name an output column or position');
    // The set operation's column is read as a column: a conflict of its members' collations is
    // indeterminate here, and sorting by it fails (42P22).
    checkKeyCollation(readCollation(plan.columns[idx]!.collation));
    return idx;
  });
}

function positional(columns: PlanColumn[], value: unknown): number {
  const i = Number(value);
  if (!Number.isInteger(i) || i < 1 || i > columns.filter((c) => !c.hidden).length) sqlFail('42P10', `ORDER BY position ${String(value)} is not in select list`);
  return i - 1;
}

function setOp(left: Plan, right: Plan, op: string): Plan {
  const lc = left.columns.filter((c) => !c.hidden);
  const rc = right.columns.filter((c) => !c.hidden);
  const name = op.split(' ')[0]!.toUpperCase();
  if (lc.length !== rc.length) sqlFail('42601', `each ${name} query must have the same number of columns`);
  const types = lc.map((c, i) => outputType(commonType([c.type, rc[i]!.type], name)));
  // PostgreSQL's select_common_collation over the members' columns: two explicit collations are
  // 42P21, and so is a conflict of implicit ones except under UNION ALL.
  const collations = lc.map((c, i) => {
    const merged = mergeCollations([
      { type: types[i]!, collation: c.collation },
      { type: types[i]!, collation: rc[i]!.collation },
    ]);
    if (op !== 'union all') checkKeyCollation(merged);
    return merged;
  });
  const cast = (p: Plan, cols: PlanColumn[]): Plan =>
    cols.every((c, i) => c.type === types[i]) ? p : new ProjectPlan(p, cols.map((c, i) => coerceSlot(i, c.type, types[i]!)), cols.map((c, i) => ({ ...c, type: types[i]! })));
  const columns = lc.map((c, i) => ({ name: c.name, type: types[i]!, qualifier: null, collation: collations[i] }));
  const base = op.split(' ')[0] as 'union' | 'intersect' | 'except';
  return new SetOpPlan(cast(left, lc), cast(right, rc), base, op.includes('all'), columns);
}

function coerceSlot(i: number, from: SqlTypeName, to: SqlTypeName): CompiledExpr {
  const e: CompiledExpr = { type: from, evaluate: (ctx) => ctx.row![i]! };
  if (from === to) return e;
  // An untyped literal of a set operation's member is converted as its row passes
  // (`SELECT 'a' UNION SELECT 2`: 22P02, as in PostgreSQL).
  return { type: to, evaluate: (ctx) => castValue(e.evaluate(ctx), { type: to }) };
}

/** WITH [RECURSIVE]: each CTE is planned once and materialised on first use. */
function planWith(withs: Ast[], env: PlanEnv): PlanEnv {
  const ctes = new Map(env.ctes);
  const e: PlanEnv = { ...env, ctes };
  const seen = new Set<string>();
  for (const w of withs) {
    const name = tableName((w.name as Ast).value ?? w.name);
    if (seen.has(name)) sqlFail('42712', `WITH query name "${name}" specified more than once`);
    seen.add(name);
    const names = Array.isArray(w.columns) ? (w.columns as Ast[]).map((c) => columnName(c)) : undefined;
    const stmt = (w.stmt as Ast).ast ?? w.stmt;
    const selfRef = w.recursive === true && JSON.stringify(stmt).includes(`"table":"${name}"`);
    const plan = selfRef ? planRecursive(name, names, stmt as Ast, e) : new MaterializePlan(planQuery(stmt as Ast, e));
    ctes.set(name, renamed(plan, name, names));
  }
  return e;
}

function renamed(plan: Plan, qualifier: string, names: string[] | undefined): Plan {
  const visible = plan.columns.filter((c) => !c.hidden);
  if (names !== undefined && names.length > visible.length) sqlFail('42P10', `table "${qualifier}" has ${visible.length} columns available but ${names.length} columns specified`);
  const columns = visible.map((c, i) => ({ name: names?.[i] ?? c.name, type: outputType(c.type), qualifier, collation: c.collation }));
  return new AliasPlan(plan, columns, qualifier);
}

/** Iterations of WITH RECURSIVE before the query is refused (a runaway recursion). */
export const RECURSION_LIMIT = 100_000;

/** WITH RECURSIVE name AS (base UNION [ALL] recursive): iterate until the working table is empty. */
function planRecursive(name: string, names: string[] | undefined, stmt: Ast, env: PlanEnv): Plan {
  const next = stmt._next as Ast | undefined;
  if (next === undefined || next === null) return new MaterializePlan(planQuery(stmt, env));
  const op = String(stmt.set_op ?? '').toLowerCase();
  if (op !== 'union' && op !== 'union all') sqlFail('42P19', 'recursive query must be of the form non-recursive-term UNION [ALL] recursive-term');
  const base = planSelect({ ...stmt, _next: undefined, set_op: undefined }, env, false);
  const working: WorkingTable = new WorkingTable(base.columns.filter((c) => !c.hidden).map((c, i) => ({ name: names?.[i] ?? c.name, type: outputType(c.type), qualifier: name, collation: c.collation })));
  const ctes = new Map(env.ctes);
  ctes.set(name, working);
  const recursive = planSelect(next, { ...env, ctes }, false);
  return new MaterializePlan(new RecursivePlan(base, recursive, working, op === 'union all'));
}

class WorkingTable implements Plan {
  constructor(readonly columns: PlanColumn[]) {}
  *rows(x: Exec): Generator<Step> {
    yield* (x.memo.get(this) as Row[] | undefined) ?? [];
  }
  explain(): ExplainNode {
    return { node: 'WorkTable Scan' };
  }
}

/**
 * The working table of a WITH RECURSIVE as a subquery of an expression in its recursive term sees
 * it: a name that PostgreSQL refuses to read there (see subPlan). It is never run.
 */
class SublinkRecursion implements Plan {
  constructor(
    readonly name: string,
    readonly columns: PlanColumn[],
  ) {}
  /** @throws SQL_ERROR 42P19 */
  refuse(): never {
    return sqlFail('42P19', `recursive reference to query "${this.name}" must not appear within a subquery`);
  }
  rows(): Generator<Step> {
    return this.refuse();
  }
  explain(): ExplainNode {
    return this.refuse();
  }
}

class RecursivePlan implements Plan {
  constructor(
    readonly base: Plan,
    readonly recursive: Plan,
    readonly working: WorkingTable,
    readonly all: boolean,
  ) {}

  get columns(): PlanColumn[] {
    return this.working.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const seen = this.all ? undefined : new Set<string>();
    const types = this.working.columns.map((c) => c.type);
    const fresh = (rows: Row[]): Row[] => {
      const out: Row[] = [];
      for (const r0 of rows) {
        const r = r0.map((v, i) => (v.type === types[i] ? v : castValue(v, { type: types[i]! })));
        if (seen !== undefined) {
          const k = JSON.stringify(r.map((v) => String(v.value)));
          if (seen.has(k)) continue;
          seen.add(k);
        }
        out.push(r);
      }
      return out;
    };
    let batch: Row[] = [];
    for (const r of this.base.rows(x)) {
      if (r === PAUSE) yield r;
      else batch.push(r);
    }
    batch = fresh(batch);
    let iterations = 0;
    while (batch.length > 0) {
      yield* batch;
      if (++iterations > RECURSION_LIMIT) sqlFail('54001', `WITH RECURSIVE ran more than ${RECURSION_LIMIT} iterations; add a stopping condition`);
      x.memo.set(this.working, batch);
      const produced: Row[] = [];
      for (const r of this.recursive.rows(x)) {
        if (r === PAUSE) {
          yield r;
          continue;
        }
        produced.push(r.slice(0, types.length));
      }
      batch = fresh(produced);
    }
  }

  explain(): ExplainNode {
    return { node: 'Recursive Union', children: [this.base.explain(), this.recursive.explain()] };
  }
}

// ---- one SELECT ----------------------------------------------------------------------------

interface SelectItem {
  node: Ast;
  name: string;
}

/** Column references made by `*` that name their column only through this map (see expandColumns). */
const STAR_COLUMNS = new WeakMap<Ast, PlanColumn>();

function expandColumns(ast: Ast, scope: Scope, env: PlanEnv): SelectItem[] {
  const items: SelectItem[] = [];
  for (const col of ast.columns as Ast[]) {
    const node = (col.type === 'expr' || col.expr !== undefined ? col.expr : col) as Ast;
    if (node.type === 'column_ref' && columnName(node) === '*') {
      const q = columnQualifier(node);
      // `t.*` is all of t's columns, also those a USING join merged (hidden from a bare `*`);
      // the other hidden columns (sort keys, aggregates) have no qualifier.
      const cols = scope.columns.filter((c) => (q === null ? !c.hidden : c.qualifier === q && c.name !== ROW_MARKER));
      if (q !== null && cols.length === 0) sqlFail('42P01', `missing FROM-clause entry for table "${q}"`);
      if (q === null && scope.columns.length === 0) sqlFail('42601', 'SELECT * with no tables specified is not valid');
      for (const c of cols) {
        const ref: Ast = { type: 'column_ref', table: c.qualifier, column: { expr: { type: 'double_quote_string', value: c.name } } };
        // A name the reference cannot reach (the merged column of a USING join followed by a
        // join with a column of that name, where a bare `id` is ambiguous) is read by its slot.
        if (tryResolve(scope, ref)?.column !== c) STAR_COLUMNS.set(ref, c);
        items.push({ node: ref, name: c.name });
      }
      continue;
    }
    items.push({ node, name: typeof col.as === 'string' ? col.as : figureColumnName(node, starNamer(env, scope)) });
  }
  return items;
}

/**
 * Names a subquery's `*` first column from its plan (see StarName), planned under a probe of the
 * level it is written in so that planning it counts no correlation there.
 */
export function starNamer(env: PlanEnv, scope: Scope): StarName {
  return (query) => planQuery(query as Ast, { ...env, parent: scope.probe(), initPlans: undefined }).columns.find((c) => !c.hidden)?.name;
}

/**
 * Columns read outside aggregates that depend functionally on the GROUP BY: those of a table
 * whose whole primary key is grouped (PostgreSQL accepts `SELECT id, a FROM t GROUP BY id` when
 * id is t's primary key). Grouping by them too leaves the groups as they are and makes their
 * values available after aggregation.
 */
function dependentColumns(groupNodes: Ast[], scope: Scope, nodes: unknown[]): Ast[] {
  const grouped = new Set<PlanColumn>();
  for (const g of groupNodes) {
    if (g.type !== 'column_ref') continue;
    const slot = tryResolve(scope, g);
    if (slot !== undefined && slot.depth === 0) grouped.add(slot.column);
  }
  const scans = new Set<object>();
  for (const c of grouped) {
    const scan = c.origin?.scan;
    if (scan === undefined || scans.has(scan)) continue;
    const key = scope.columns.filter((k) => k.origin?.scan === scan && k.origin.primaryKey);
    if (key.length > 0 && key.every((k) => grouped.has(k))) scans.add(scan);
  }
  if (scans.size === 0) return [];
  const out: Ast[] = [];
  // Subqueries are walked too (their references to this level must be grouped as well), with
  // their aggregates: a name there that is really the subquery's own column only adds a
  // dependent column to the grouping, which leaves the groups as they are.
  const walk = (node: unknown, inSubquery = false): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) walk(n, inSubquery);
      return;
    }
    const n = node as Ast;
    if (n.ast !== undefined) {
      walk(n.ast, true);
      return;
    }
    if (!inSubquery && (n.type === 'aggr_func' || (n.type === 'function' && isAggregateName(functionName(n)))) && !n.over) return;
    if (n.type === 'column_ref') {
      const slot = tryResolve(scope, n);
      if (slot !== undefined && slot.depth === 0 && !grouped.has(slot.column) && slot.column.origin !== undefined && scans.has(slot.column.origin.scan)) {
        grouped.add(slot.column);
        out.push(n);
      }
      return;
    }
    for (const k of Object.keys(n)) if (k !== 'loc') walk(n[k], inSubquery);
  };
  walk(nodes);
  return out;
}

function tryResolve(scope: Scope, n: Ast): ReturnType<Scope['resolve']> | undefined {
  if (columnName(n) === '*') return undefined;
  try {
    return scope.resolve(columnQualifier(n), columnName(n));
  } catch {
    return undefined;
  }
}

/** Collects aggregate calls (not inside subqueries or window calls). */
function collectAggregates(node: unknown, out: Ast[]): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) collectAggregates(n, out);
    return;
  }
  const n = node as Ast;
  if (n.ast !== undefined) return;
  // A frame's offsets may not hold aggregates (planFrame's compile says so, as PostgreSQL).
  if (n.type === 'function' && functionName(n) === WINDOW_SPEC_MARKER) return;
  if ((n.type === 'aggr_func' || (n.type === 'function' && isAggregateName(functionName(n)))) && !n.over) {
    out.push(n);
    return;
  }
  if (n.type === 'window_func' || ((n.type === 'aggr_func' || n.type === 'function') && n.over)) {
    collectAggregates(n.args, out);
    collectAggregates(n.over, out);
    return;
  }
  for (const k of Object.keys(n)) if (k !== 'loc') collectAggregates(n[k], out);
}

function collectWindows(node: unknown, out: Ast[]): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) collectWindows(n, out);
    return;
  }
  const n = node as Ast;
  if (n.ast !== undefined) return;
  if (n.type === 'window_func' || ((n.type === 'aggr_func' || n.type === 'function') && n.over)) {
    out.push(n);
    return;
  }
  for (const k of Object.keys(n)) if (k !== 'loc') collectWindows(n[k], out);
}

/** The aggregate a WINDOW_CALL_PREFIX call stands for (see sql-rewrite.ts), as written (DISTINCT prefix kept). */
function windowCallName(n: Ast): string | undefined {
  const first = n.type === 'function' ? ((n.args?.value as Ast[] | undefined)?.[0]) : undefined;
  if (first?.type !== 'column_ref') return undefined;
  const name = columnName(first);
  return name.startsWith(WINDOW_CALL_PREFIX) ? name.slice(WINDOW_CALL_PREFIX.length) : undefined;
}

/** Arguments of an aggregate / window call node: [exprs], star, distinct, and its FILTER condition. */
export function callArgs(n: Ast): { args: Ast[]; star: boolean; distinct: boolean; orderby?: Ast[]; filter?: Ast } {
  if (n.type === 'aggr_func' || n.type === 'window_func') {
    const a = n.args as Ast | null | undefined;
    if (a === null || a === undefined) return { args: [], star: false, distinct: false };
    const expr = a.expr as Ast | undefined;
    const star = expr?.type === 'star';
    const args: Ast[] = star || expr === undefined ? [] : expr.type === 'expr_list' ? (expr.value as Ast[]) : [expr];
    const sep = (a.separator as Ast | null | undefined)?.delimiter as Ast | undefined;
    if (sep !== undefined) args.push(sep);
    if (Array.isArray(a.value)) args.push(...(a.value as Ast[]));
    return { args, star, distinct: a.distinct === 'DISTINCT', ...(Array.isArray(a.orderby) && a.orderby.length > 0 ? { orderby: a.orderby as Ast[] } : {}) };
  }
  let list = (n.args?.value ?? []) as Ast[];
  if (list.length === 1 && list[0]!.type === 'column_ref' && columnName(list[0]!).startsWith(NO_ARGUMENT)) list = [];
  const windowCall = windowCallName(n);
  let filter: Ast | undefined;
  if (windowCall !== undefined) {
    list = list.slice(1);
    const at = list.findIndex((a) => a.type === 'column_ref' && columnName(a) === FILTER_MARKER);
    if (at >= 0) {
      filter = list[at + 1];
      list = list.slice(0, at);
    }
  }
  // Only a bare `*`: `t.*` is a whole-row value (see rowCounts), never all rows.
  const star = list.length === 1 && (list[0]!.type === 'star' || (list[0]!.type === 'column_ref' && columnName(list[0]!) === '*' && columnQualifier(list[0]!) === null));
  const distinct = distinctCall(n) || windowCall?.startsWith(DISTINCT_PREFIX) === true || String(n.args?.distinct ?? '').toUpperCase() === 'DISTINCT';
  return { args: star ? [] : list, star, distinct, ...(filter !== undefined ? { filter } : {}) };
}

function callName(n: Ast): string {
  const windowCall = windowCallName(n);
  if (windowCall !== undefined) return windowCall.startsWith(DISTINCT_PREFIX) ? windowCall.slice(DISTINCT_PREFIX.length) : windowCall;
  const first = (n.args?.value as Ast[] | undefined)?.[0];
  if (first?.type === 'column_ref' && columnName(first).startsWith(NO_ARGUMENT)) return columnName(first).slice(NO_ARGUMENT.length);
  return n.type === 'function' ? functionName(n) : String(n.name).toLowerCase();
}

/**
 * Plans one SELECT block. With `withOrder`, its own ORDER BY / LIMIT apply (false for the
 * members of a set operation, whose trailing ORDER BY belongs to the whole).
 */
/**
 * `keepUnknown`: a member of a set operation, whose untyped literals (`'2'`, NULL) keep their
 * unknown type for the set operation to resolve against the other member (`SELECT 1 UNION
 * SELECT '2'` is integer in PostgreSQL); elsewhere they become text here.
 */
export function planSelect(ast: Ast, env: PlanEnv, withOrder: boolean, keepUnknown = false): Plan {
  // An aggregate of this level found inside a subquery (`SELECT (SELECT max(g.v)) FROM g`) is
  // only seen while that subquery is planned, after this level's aggregates were laid out:
  // planning starts again with it (once per such aggregate).
  const outer: OuterAggregates = { nodes: [] };
  for (;;) {
    try {
      return planSelectBlock(ast, env, withOrder, keepUnknown, outer);
    } catch (err) {
      if (!(err instanceof OuterAggregateFound) || err.level !== outer) throw err;
      if (outer.nodes.includes(err.node)) throw new Error('an aggregate of an enclosing level was found twice');
      outer.nodes.push(err.node);
    }
  }
}

/** The aggregates of one SELECT block found in its subqueries (see planSelect). */
interface OuterAggregates {
  nodes: Ast[];
}

/** Raised while planning a subquery: its level must plan again with this aggregate. */
class OuterAggregateFound extends Error {
  constructor(
    readonly level: OuterAggregates,
    readonly node: Ast,
  ) {
    super('an aggregate of an enclosing query level');
  }
}

function planSelectBlock(written: Ast, env: PlanEnv, withOrder: boolean, keepUnknown: boolean, outer: OuterAggregates): Plan {
  if (written.into?.position) unsupported('SELECT INTO');
  const rowItems = new Set<string>();
  const ast = { ...written, ...(rowCounts({ columns: written.columns, having: written.having, orderby: written.orderby, window: written.window }, rowItems) as Ast) } as Ast;
  const where = ast.where as Ast | null;
  // With a GROUP BY, PostgreSQL's planner moves the HAVING quals without aggregates, subqueries
  // or volatile functions to WHERE (they are functions of the grouped columns, so rows failing
  // them make no group): they then filter rows before grouping, with WHERE's own.
  const havingQuals = qualList(ast.having as Ast | null, 'HAVING');
  const moved = new Set((ast.groupby?.columns ?? ast.groupby ?? []).length > 0 ? havingQuals.filter(movesToWhere) : []);
  const source = planFrom(ast.from as Ast[] | null, where, env, withOrder ? orderHintOf(ast) : undefined, rowItems, [...moved]);
  let plan = source.plan;
  const scope = source.scope;
  const items = expandColumns(ast, scope, env);
  const orderby = (withOrder ? (ast.orderby as Ast[] | null) : null) ?? [];
  const distinctOn = ast.distinct?.type === 'DISTINCT ON' ? ((ast.distinct.columns as Ast[]).map((c) => (c.expr ?? c) as Ast)) : [];
  const distinct = ast.distinct?.type === 'DISTINCT';

  // Aggregation.
  const groupNodes = ((ast.groupby?.columns ?? ast.groupby ?? []) as Ast[]).map((g) => {
    if (g.type === 'number') return items[positional(items.map((i) => ({ name: i.name, type: 'text', qualifier: null })), g.value)]!.node;
    if (g.type === 'column_ref' && columnQualifier(g) === null) {
      const name = columnName(g);
      if (!scope.columns.some((c) => c.name === name)) {
        const alias = items.find((i) => i.name === name);
        if (alias !== undefined) return alias.node;
      }
    }
    return g;
  });
  groupNodes.push(...dependentColumns(groupNodes, scope, [...items.map((i) => i.node), ast.having, ...orderby.map((o) => o.expr)]));
  let aggNodes: Ast[] = [];
  collectAggregates(items.map((i) => i.node), aggNodes);
  collectAggregates(ast.having, aggNodes);
  collectAggregates(orderby.map((o) => o.expr), aggNodes);
  // A WINDOW definition's PARTITION BY and ORDER BY are this level's expressions (used or not);
  // its frame offsets (in the marker call) may hold none.
  for (const w of (ast.window?.expr ?? []) as Ast[]) {
    const spec = (w.as_window_specification?.window_specification ?? {}) as Ast;
    const order = ((spec.orderby ?? []) as Ast[]).filter((o) => !(o.expr?.type === 'function' && functionName(o.expr as Ast) === WINDOW_SPEC_MARKER));
    collectAggregates([spec.partitionby, order.map((o) => o.expr)], aggNodes);
  }
  // Those reading only enclosing levels' columns are aggregates of those levels; those this level
  // owns but written in its subqueries come from earlier attempts.
  aggNodes = [...aggNodes.filter((a) => aggregateLevel(a, scope, env) === 0), ...outer.nodes];
  let resolveExtra: ((node: Ast, cenv: CompileEnv) => CompiledExpr | undefined) | undefined;
  // How the subqueries of the select list, HAVING, ORDER BY and windows see this level: its FROM
  // row as it is, and an aggregate of it makes the query grouped (planned again).
  let postView = scope.withView({
    context: 'SELECT',
    aggregate: (node) => {
      throw new OuterAggregateFound(outer, node as Ast);
    },
  });
  // HAVING alone makes a query grouped, as in PostgreSQL: one group, even over no rows (the
  // pre-pass writes GROUP BY () as HAVING TRUE).
  if (groupNodes.length > 0 || aggNodes.length > 0 || ast.having) {
    const inputEnv = exprEnv(env, scope, undefined, 'GROUP BY');
    const groupExprs = groupNodes.map((g) => compileExpression(g, inputEnv));
    for (const g of groupExprs) checkKeyCollation(g.collation, 'string hashing');
    const groupKeys = groupNodes.map((g) => exprKey(g, scope));
    /** Each aggregate's result collation: its arguments' (not its ORDER BY's or FILTER's), as PostgreSQL's. */
    const aggCollations: (Collation | undefined)[] = [];
    const aggKeys: string[] = [];
    const calls: AggregateCall[] = [];
    const argEnv = exprEnv(env, scope, undefined, AGGREGATE_ARGUMENTS);
    for (const a of aggNodes) {
      const key = exprKey(a, scope);
      if (aggKeys.includes(key)) continue;
      aggKeys.push(key);
      const { args, star, distinct: d, orderby: inner } = callArgs(a);
      const compiled = args.map((x) => compileExpression(x, argEnv));
      const def = resolveAggregate(callName(a), compiled.map((c) => c.type), { distinct: d, star });
      const filterNode = (a.filter as Ast | null | undefined)?.where as Ast | undefined;
      const filter = filterNode === undefined ? undefined : compilePredicate(filterNode, exprEnv(env, scope, undefined, 'FILTER'), 'FILTER');
      const order = inner === undefined ? undefined : { exprs: inner.map((o) => compileExpression(o.expr as Ast, argEnv)), keys: inner.map((o) => sortDirection(o)) };
      calls.push({ def, args: compiled, filter, ...(order !== undefined ? { order } : {}) });
      aggCollations.push(isCollatable(def.resultType) ? mergeCollations(compiled) : undefined);
    }
    const aggColumns: PlanColumn[] = [
      ...groupExprs.map((g, i) => ({ name: `group${i}`, type: g.type, qualifier: null, hidden: true })),
      ...calls.map((c, i) => ({ name: `agg${i}`, type: c.def.resultType, qualifier: null, hidden: true })),
    ];
    plan = aggregatePlan(new AggregatePlan(plan, groupExprs, calls, aggColumns, groupNodes.length > 0 ? `Group Key: ${groupNodes.length} expression(s)` : ''), plan, groupExprs, calls);
    const g = groupExprs.length;
    resolveExtra = (node) => {
      if (node.type === 'number' || node.type === 'single_quote_string' || node.type === 'var') return undefined;
      const key = exprKey(node, scope);
      const gi = groupKeys.indexOf(key);
      if (gi >= 0) {
        const type = groupExprs[gi]!.type;
        return { type, collation: groupExprs[gi]!.collation, evaluate: (ctx) => ctx.row![gi]! };
      }
      const ai = aggKeys.indexOf(key);
      if (ai >= 0 && !node.over) {
        const type = calls[ai]!.def.resultType;
        return { type, collation: aggCollations[ai], evaluate: (ctx) => ctx.row![g + ai]! };
      }
      if (node.type === 'column_ref') {
        const slot = scope.resolve(columnQualifier(node), columnName(node));
        if (slot.depth === 0) sqlFail('42803', `column "${slot.column.qualifier ? `${slot.column.qualifier}.` : ''}${slot.column.name}" must appear in the GROUP BY clause or be used in an aggregate function`);
        return slotExpr(slot);
      }
      return undefined;
    };
    // After aggregation the row is the group keys and the aggregates: a subquery reads a grouped
    // column from its key's slot (only a plain grouped column: PostgreSQL matches a GROUP BY
    // expression as a whole only at its own level) and an aggregate of this level from its slot.
    const groupSlots = new Map<number, number>();
    groupNodes.forEach((node, j) => {
      const s = node.type === 'column_ref' ? tryResolve(scope, node) : undefined;
      const same = s === undefined ? 0 : sameSlot(scope, s.index, s.column);
      if (s !== undefined && s.depth === 0 && !groupSlots.has(same)) groupSlots.set(same, j);
    });
    postView = scope.withView({
      context: 'SELECT',
      slot: (index, column) =>
        groupSlots.get(sameSlot(scope, index, column)) ?? sqlFail('42803', `subquery uses ungrouped column "${column.qualifier ? `${column.qualifier}.` : ''}${column.name}" from outer query`),
      aggregate: (node) => {
        const ai = aggKeys.indexOf(exprKey(node, scope));
        if (ai < 0) throw new OuterAggregateFound(outer, node as Ast);
        return { slot: g + ai, type: calls[ai]!.def.resultType };
      },
    });
    if (ast.having) {
      const havingEnv = exprEnv(env, scope, resolveExtra, 'HAVING', postView);
      // Every qual is compiled here, where PostgreSQL's parser checks it (a moved one only for
      // its errors, 42803 for an ungrouped column included).
      const having = compileQuals(havingQuals, havingEnv, 'HAVING', moved);
      if (havingQuals.length > moved.size) plan = new FilterPlan(plan, having, 'HAVING');
    }
  }

  // Window functions, computed over the (grouped) rows and appended to them.
  const winNodes: Ast[] = [];
  collectWindows(items.map((i) => i.node), winNodes);
  collectWindows(orderby.map((o) => o.expr), winNodes);
  // Every WINDOW definition is checked, also one no call uses, as PostgreSQL's
  // transformWindowDefinitions does (an unknown column, base window or frame error).
  const named = namedWindows(ast);
  if (winNodes.length > 0 || named.size > 0) {
    const baseEnv = exprEnv(env, scope, resolveExtra, 'window definitions', postView);
    // Frame offsets are constants of the query: no columns, aggregates or window functions.
    const offsetEnv = (construct: string): CompileEnv =>
      exprEnv(env, scope, (node) => {
        if (node.type === 'column_ref') sqlFail('42P10', `argument of ${construct} must not contain variables`);
        if (node.type === 'window_func' || node.over) sqlFail('42P20', 'window functions are not allowed in window definitions');
        return undefined;
      }, `window ${construct}`);
    const planWindow = (win: ReturnType<typeof windowOf>) => {
      const partition = win.partition.map((p) => compileExpression(p, baseEnv));
      const order = win.order.map((o) => compileExpression(o.expr as Ast, baseEnv));
      for (const k of [...partition, ...order]) checkKeyCollation(k.collation);
      const orderKeys = win.order.map((o) => sortDirection(o));
      const frame = win.frame === undefined ? undefined : planFrame(win.frame, order.map((o, i) => ({ type: o.type, ...orderKeys[i]! })), (node, construct) => compileExpression(node, offsetEnv(construct)));
      return { partition, order, orderKeys, frame };
    };
    for (const win of named.values()) planWindow(win);
    const winKeys: string[] = [];
    const calls: WindowCall[] = [];
    const winCollations: (Collation | undefined)[] = [];
    for (const w of winNodes) {
      const key = exprKey(w, scope);
      if (winKeys.includes(key)) continue;
      winKeys.push(key);
      const win = windowOf(w.over as Ast, named);
      const { args, star, distinct: d, orderby: inner, filter: filterNode } = callArgs(w);
      if (inner !== undefined) sqlFail('0A000', 'aggregate ORDER BY is not implemented for window functions');
      const name = callName(w);
      if (!isWindowOnlyName(name) && !isAggregateName(name) && FUNCTION_TABLE.has(name)) sqlFail('42809', `OVER specified, but ${name} is not a window function nor an aggregate function`);
      if (filterNode !== undefined && isWindowOnlyName(name)) sqlFail('0A000', 'FILTER is not implemented for non-aggregate window functions');
      const compiledArgs = args.map((x) => compileExpression(x, baseEnv));
      const filter = filterNode === undefined ? undefined : compilePredicate(filterNode, exprEnv(env, scope, resolveExtra, 'FILTER', postView), 'FILTER');
      const { partition, order, orderKeys, frame } = planWindow(win);
      const def = resolveWindowFunction({ name, argTypes: compiledArgs.map((c) => c.type), distinct: d, star, hasOrderBy: order.length > 0 });
      calls.push({ def, args: compiledArgs, partition, order, orderKeys, ...(filter !== undefined ? { filter } : {}), ...(frame !== undefined ? { frame } : {}) });
      winCollations.push(isCollatable(def.resultType) ? mergeCollations(compiledArgs) : undefined);
    }
    if (calls.length > 0) {
      const offset = plan.columns.length;
      plan = new WindowPlan(plan, calls, [...plan.columns, ...calls.map((c, i) => ({ name: `win${i}`, type: c.def.resultType, qualifier: null, hidden: true }))]);
      const prev = resolveExtra;
      resolveExtra = (node, cenv) => {
        if (node.over || node.type === 'window_func') {
          const wi = winKeys.indexOf(exprKey(node, scope));
          if (wi >= 0) {
            const type = calls[wi]!.def.resultType;
            return { type, collation: winCollations[wi], evaluate: (ctx) => ctx.row![offset + wi]! };
          }
        }
        return prev?.(node, cenv);
      };
    }
  }

  // Projection, with hidden sort keys for ORDER BY expressions outside the select list. A
  // set-returning function there is run by the projection (ProjectSetPlan), its value read per step.
  const listed: ListedSetFunction[] = [];
  for (const item of items) refuseConditionalSets(item.node, undefined);
  const beforeSets = resolveExtra;
  let inSetArguments = false;
  const outEnv = exprEnv(
    env,
    scope,
    (node, cenv) => {
      if (node.type === 'function' && !node.over && isSetFunction(functionName(node))) {
        if (inSetArguments) sqlFail('0A000', 'set-returning functions must appear at top level of FROM', undefined, 'You might be able to move the set-returning function into a LATERAL FROM item.');
        inSetArguments = true;
        let resolved: ReturnType<typeof setFunction>;
        try {
          resolved = setFunction(functionName(node), ((node.args?.value ?? []) as Ast[]).map((a) => compileExpression(a, cenv)));
        } finally {
          inSetArguments = false;
        }
        if (resolved.fn.columns.length !== 1) unsupported(`${functionName(node)}() in a select list (it returns records); call it in FROM`);
        const f: ListedSetFunction = { fn: resolved.fn, args: resolved.args, current: { type: 'unknown', value: null } };
        listed.push(f);
        return { type: resolved.fn.columns[0]!.type, evaluate: () => f.current };
      }
      return beforeSets?.(node, cenv);
    },
    'SELECT',
    postView,
  );
  const exprs = items.map((i) => compileExpression(i.node, outEnv));
  const columns: PlanColumn[] = items.map((item, i) => ({ name: item.name, type: keepUnknown ? exprs[i]!.type : outputType(exprs[i]!.type), qualifier: null, collation: exprs[i]!.collation }));
  const finalExprs = keepUnknown ? exprs : exprs.map((e) => (e.type === 'unknown' ? coerce(e, 'text') : e));
  const visible = columns.length;
  const extraExprs: CompiledExpr[] = [];
  const extraCols: PlanColumn[] = [];
  const extraKeys: string[] = [];
  const hiddenSlot = (node: Ast): number => {
    const key = exprKey(node, scope);
    const existing = items.findIndex((it) => exprKey(it.node, scope) === key);
    if (existing >= 0) return existing;
    const extra = extraKeys.indexOf(key);
    if (extra >= 0) return visible + extra;
    if (distinct) sqlFail('42P10', 'for SELECT DISTINCT, ORDER BY expressions must appear in select list');
    extraExprs.push(compileExpression(node, outEnv));
    extraKeys.push(key);
    extraCols.push({ name: `sort${extraCols.length}`, type: extraExprs[extraExprs.length - 1]!.type, qualifier: null, hidden: true, collation: extraExprs[extraExprs.length - 1]!.collation });
    return visible + extraExprs.length - 1;
  };
  // ORDER BY / DISTINCT ON items: a position, an output column name (PostgreSQL's SQL92 rule:
  // output names win over input columns, and two different outputs of the name are ambiguous),
  // else an expression over the input.
  const targetSlot = (n: Ast, clause: string): number => {
    if (n.type === 'number') return positional(columns, n.value);
    if (n.type === 'column_ref' && columnQualifier(n) === null) {
      const name = columnName(n);
      const matches = columns.flatMap((c, i) => (c.name === name ? [i] : []));
      if (matches.length > 0) {
        const first = exprKey(items[matches[0]!]!.node, scope);
        if (matches.some((i) => exprKey(items[i]!.node, scope) !== first)) sqlFail('42702', `${clause} "${name}" is ambiguous`);
        return matches[0]!;
      }
    }
    return hiddenSlot(n);
  };
  const orderSlots = orderby.map((o) => targetSlot(o.expr as Ast, 'ORDER BY'));
  const distinctSlots = distinctOn.map((n) => targetSlot(n, 'DISTINCT ON'));
  // Sort and DISTINCT keys need a collation: a conflict of implicit ones is 42P21 (PostgreSQL's parser).
  const slotCollation = (slot: number): Collation | undefined => (slot < visible ? exprs[slot]! : extraExprs[slot - visible]!).collation;
  for (const slot of [...orderSlots, ...distinctSlots]) checkKeyCollation(slotCollation(slot));
  if (distinct) for (let i = 0; i < visible; i++) checkKeyCollation(slotCollation(i), 'string hashing');
  if (distinctSlots.length > 0 && orderSlots.length > 0) {
    // PostgreSQL's transformDistinctOnClause: the leading ORDER BY items must be the DISTINCT ON
    // expressions (in any order); an ORDER BY item outside them may only follow all of them.
    let skipped = false;
    const covered = new Set<number>();
    for (const slot of orderSlots) {
      if (!distinctSlots.includes(slot)) skipped = true;
      else if (skipped) sqlFail('42P10', 'SELECT DISTINCT ON expressions must match initial ORDER BY expressions');
      else covered.add(slot);
    }
    if (skipped && distinctSlots.some((slot) => !covered.has(slot))) sqlFail('42P10', 'SELECT DISTINCT ON expressions must match initial ORDER BY expressions');
  }
  plan = listed.length > 0 ? new ProjectSetPlan(plan, listed, [...finalExprs, ...extraExprs], [...columns, ...extraCols]) : new ProjectPlan(plan, [...finalExprs, ...extraExprs], [...columns, ...extraCols]);
  if (distinct) plan = new DistinctPlan(plan, columns.map((_, i) => i));
  const keys: SortKey[] = orderby.map((o, i) => ({ index: orderSlots[i]!, ...sortDirection(o) }));
  if (distinctOn.length > 0) {
    const sortKeys = keys.length > 0 ? keys : distinctSlots.map((index) => ({ index, desc: false, nullsFirst: false }));
    plan = new SortPlan(plan, sortKeys, undefined, 'DISTINCT ON');
    plan = new DistinctPlan(plan, distinctSlots);
    return finishLimit(new TrimPlan(plan, columns), ast, env);
  }
  // The table is read in ORDER BY order: no sort, and LIMIT stops the read early.
  const sortKeys = source.ordered === true && !distinct ? [] : keys;
  return finishQuery(plan, withOrder ? ast : { ...ast, orderby: null, limit: null }, env, scope, visible, undefined, sortKeys, columns);
}

/**
 * A set-returning call inside CASE or COALESCE of a select list, which PostgreSQL refuses (a
 * branch not taken would still make rows), with its message and HINT.
 * @throws SQL_ERROR 0A000
 */
function refuseConditionalSets(node: unknown, inside: string | undefined): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) refuseConditionalSets(n, inside);
    return;
  }
  const n = node as Ast;
  if (n.ast !== undefined) return;
  if (n.type === 'function' && !n.over && inside !== undefined && isSetFunction(functionName(n))) {
    sqlFail('0A000', `set-returning functions are not allowed in ${inside}`, undefined, 'You might be able to move the set-returning function into a LATERAL FROM item.');
  }
  const here = n.type === 'case' ? 'CASE' : n.type === 'function' && functionName(n) === 'coalesce' ? 'COALESCE' : inside;
  for (const [k, v] of Object.entries(n)) if (k !== 'loc') refuseConditionalSets(v, here);
}

/**
 * The ORDER BY a lone table's index could serve: plain columns (not output aliases of other
 * expressions), one direction, default NULL placement, no grouping, windows or DISTINCT.
 */
function orderHintOf(ast: Ast): OrderHint | undefined {
  const orderby = (ast.orderby ?? []) as Ast[];
  const from = (ast.from ?? []) as Ast[];
  if (orderby.length === 0 || from.length !== 1 || from[0]!.table === undefined || from[0]!.expr !== undefined) return undefined;
  if ((ast.groupby?.columns ?? ast.groupby ?? []).length > 0 || ast.having || ast.distinct?.type) return undefined;
  const text = JSON.stringify(ast.columns);
  if (/"aggr_func"|"window_func"|"over":\{/.test(text) || /"name":\[\{"type":"default","value":"(count|sum|avg|min|max|string_agg|array_agg|bool_and|bool_or|every)"/i.test(text)) return undefined;
  const outputs = new Map<string, Ast>();
  for (const c of ast.columns as Ast[]) if (typeof c.as === 'string') outputs.set(c.as, (c.expr ?? c) as Ast);
  const names: string[] = [];
  let desc: boolean | undefined;
  for (const o of orderby) {
    const e = o.expr as Ast;
    if (e.type !== 'column_ref' || columnName(e) === '*') return undefined;
    const d = sortDirection(o);
    if (d.nullsFirst !== d.desc) return undefined;
    if (desc !== undefined && desc !== d.desc) return undefined;
    desc = d.desc;
    const name = columnName(e);
    const aliased = columnQualifier(e) === null ? outputs.get(name) : undefined;
    if (aliased !== undefined && !(aliased.type === 'column_ref' && columnName(aliased) === name)) return undefined;
    names.push(name);
  }
  return { names, desc: desc === true };
}

function sortDirection(o: Ast): { desc: boolean; nullsFirst: boolean } {
  const desc = String(o.type ?? 'ASC').toUpperCase() === 'DESC';
  const nulls = String(o.nulls ?? '').toUpperCase();
  return { desc, nullsFirst: nulls === '' ? desc : nulls.includes('FIRST') };
}

/** ORDER BY + LIMIT/OFFSET + dropping hidden columns. */
function finishQuery(
  plan: Plan,
  ast: Ast,
  env: PlanEnv,
  scope: Scope,
  visible: number,
  slotOf?: (node: AstNode) => number,
  keys?: SortKey[],
  columns?: PlanColumn[],
): Plan {
  const orderby = (ast.orderby ?? []) as Ast[];
  const sortKeys = keys ?? orderby.map((o) => ({ index: slotOf!(o.expr as Ast), ...sortDirection(o) }));
  const { count, offset } = limitOf(ast, env, scope);
  if (sortKeys.length > 0) {
    const needed = count === undefined ? undefined : (x: Exec): number | undefined => {
      const c = count(x);
      return c === undefined ? undefined : c + offset(x);
    };
    plan = new SortPlan(plan, sortKeys, needed, `Sort Key: ${sortKeys.length} key(s)`);
  }
  if (count !== undefined || limitPresent(ast)) plan = new LimitPlan(plan, count ?? (() => undefined), offset);
  const cols = columns ?? plan.columns.slice(0, visible);
  return cols.length === plan.columns.length ? plan : new TrimPlan(plan, cols);
}

function finishLimit(plan: Plan, ast: Ast, env: PlanEnv): Plan {
  const { count, offset } = limitOf(ast, env, new Scope([], env.parent));
  if (count !== undefined || limitPresent(ast)) return new LimitPlan(plan, count ?? (() => undefined), offset);
  return plan;
}

function limitPresent(ast: Ast): boolean {
  const l = ast.limit as Ast | null | undefined;
  return Array.isArray(l?.value) && l.value.length > 0;
}

/** LIMIT and OFFSET as functions of the execution (they may be parameters). */
function limitOf(ast: Ast, env: PlanEnv, scope: Scope): { count: ((x: Exec) => number | undefined) | undefined; offset: (x: Exec) => number } {
  const l = ast.limit as Ast | null | undefined;
  const values = (Array.isArray(l?.value) ? l.value : []) as Ast[];
  if (values.length === 0) return { count: undefined, offset: () => 0 };
  const asNumber = (node: Ast, what: string): ((x: Exec) => number | undefined) => {
    if (node.type === 'origin' && String(node.value).toUpperCase() === 'ALL') return () => undefined;
    // LIMIT (SELECT ...): a scalar subquery (also what the pre-pass makes of LIMIT <expression>).
    const expr = node.type === 'select' ? ({ ast: node } as unknown as Ast) : node;
    let e: CompiledExpr;
    try {
      // Evaluated once, before any row: it sees an enclosing query's columns, not its own.
      e = compileExpression(expr, exprEnv(env, new Scope([], env.parent), undefined, 'LIMIT'));
    } catch (err) {
      // A name only the query's own columns resolve (in a subquery there too) is PostgreSQL's 42P10.
      const state = isTetraError(err, 'SQL_ERROR') ? err.details?.sqlstate : undefined;
      if (state !== '42703' && state !== '42P01') throw err;
      try {
        compileExpression(expr, exprEnv(env, scope, undefined, 'LIMIT'));
      } catch {
        throw err;
      }
      return sqlFail('42P10', `argument of ${what} must not contain variables`);
    }
    if (e.type !== 'unknown' && !['int2', 'int4', 'int8', 'numeric', 'float8'].includes(e.type)) sqlFail('42804', `argument of ${what} must be type bigint, not type ${typeDisplay(e.type) ?? e.type}`);
    return (x) => {
      const v = castValue(e.evaluate(x.ctx()), { type: 'int8' });
      if (v.value === null) return undefined;
      const n = Number(v.value);
      // 2201W invalid row count in limit clause, 2201X in result offset clause.
      if (n < 0) sqlFail(what === 'OFFSET' ? '2201X' : '2201W', `${what} must not be negative`);
      return n;
    };
  };
  const sep = String(l?.seperator ?? '').toLowerCase();
  const carried = values.length === 1 ? offsetCarrier(values[0]!) : undefined;
  if (carried !== undefined) {
    // LIMIT (SELECT <limit> AS <marker>, <offset> AS <marker>): an OFFSET expression (sql-grammar-gaps.ts).
    const count = asNumber(carried.limit, 'LIMIT');
    const off = asNumber(carried.offset, 'OFFSET');
    return { count, offset: (x) => off(x) ?? 0 };
  }
  if (values.length === 2) {
    // LIMIT a OFFSET b, or the MySQL form LIMIT b, a (not PostgreSQL).
    if (sep === ',') unsupported('LIMIT offset, count (use LIMIT count OFFSET offset)');
    const off = asNumber(values[1]!, 'OFFSET');
    return { count: asNumber(values[0]!, 'LIMIT'), offset: (x) => off(x) ?? 0 };
  }
  if (sep === 'offset') {
    const off = asNumber(values[0]!, 'OFFSET');
    return { count: undefined, offset: (x) => off(x) ?? 0 };
  }
  return { count: asNumber(values[0]!, 'LIMIT'), offset: () => 0 };
}

/** The LIMIT and OFFSET expressions of the subquery the pre-pass makes of an OFFSET expression. */
function offsetCarrier(node: Ast): { limit: Ast; offset: Ast } | undefined {
  const cols = node.type === 'select' ? (node.columns as Ast[]) : undefined;
  if (cols?.length !== 2 || cols[0]!.as !== LIMIT_MARKER || cols[1]!.as !== OFFSET_MARKER) return undefined;
  return { limit: cols[0]!.expr as Ast, offset: cols[1]!.expr as Ast };
}

// ---- FROM ----------------------------------------------------------------------------------

/** One FROM item before joining. */
interface FromItem {
  /** Builds the item's plan with the conditions pushed down to it (and the ORDER BY it may serve). */
  build(conds: Ast[], hint?: OrderHint): Plan;
  columns: PlanColumn[];
  join: JoinKind;
  on: Ast | null;
  alias: string;
  using?: string[];
  /**
   * A LATERAL item (a subquery marked LATERAL, or a function whose arguments read the items
   * before it): its plan under the left side's columns (`left`, the joined row's layout), with the
   * conditions pushed down to it, run once per left row (LateralJoinPlan). `left` is the level of
   * the left side's columns (in the joined row's layout). `build` is not used.
   */
  lateral?: (left: Scope, conds: Ast[]) => Plan;
  /** A LATERAL item's references: the aliases of the items before it that it reads. */
  reads?: string[];
  /**
   * A view or subquery in FROM that can take equalities on its columns into its own query: its
   * plan with `conds` and `column = key` for each key, the keys read from an enclosing level of
   * their own (LOOKUP_QUALIFIER), and the tables whose access path reads a key; undefined when
   * its shape does not allow it or no table reads a key by index (see parameterised).
   */
  parameterised?: (keys: LookupKey[], conds: Ast[]) => { plan: Plan; keyed: TableDef[] } | undefined;
}

/** A key of a parameterised plan: the FROM item's column it equals, and the type compared. */
interface LookupKey {
  column: string;
  type: SqlTypeName;
  collation: Collation | undefined;
}

/**
 * While a parameterised plan is made: its key columns, the bound expressions columnConds made of
 * them, and the tables whose access path took one as an equality on a key column (tableAccess).
 */
let keyWatch: { columns: ReadonlySet<PlanColumn>; exprs: WeakSet<CompiledExpr>; keyed: TableDef[] } | undefined;

/**
 * `make(lookup)` under a level of its own holding `keys` (named k0, k1, ... under
 * LOOKUP_QUALIFIER), above `outer`; with the tables it reads a key of by index, or undefined
 * when none does (a plan that would scan for every left row).
 */
function parameterised(keys: LookupKey[], outer: Scope | undefined, make: (lookup: Scope) => Plan): { plan: Plan; keyed: TableDef[] } | undefined {
  const columns = keys.map((k, n): PlanColumn => ({ name: `k${n}`, type: k.type, qualifier: LOOKUP_QUALIFIER, ...(k.collation === undefined ? {} : { collation: k.collation }) }));
  const saved = keyWatch;
  const watch = { columns: new Set(columns), exprs: new WeakSet<CompiledExpr>(), keyed: [] as TableDef[] };
  keyWatch = watch;
  try {
    const plan = make(new Scope(columns, outer));
    return watch.keyed.length === 0 ? undefined : { plan, keyed: watch.keyed };
  } catch (err) {
    // A plan the keys cannot be put into (a key's type or collation the view's column does not
    // take as the join did) leaves the join to hash the view's rows, which answers as written.
    if (isTetraError(err) && err.code === 'SQL_ERROR') return undefined;
    throw err;
  } finally {
    keyWatch = saved;
  }
}

/** `alias.column = <LOOKUP_QUALIFIER>.k<n>` for each key: the conditions of a parameterised plan. */
function lookupConditions(keys: LookupKey[], alias: string): Ast[] {
  const ref = (table: string, column: string): Ast => ({ type: 'column_ref', table, column: { expr: { type: 'double_quote_string', value: column } } }) as Ast;
  return keys.map((k, n) => ({ type: 'binary_expr', operator: '=', left: ref(alias, k.column), right: ref(LOOKUP_QUALIFIER, `k${n}`) }) as Ast);
}

function andAll(nodes: Ast[]): Ast | null {
  if (nodes.length === 0) return null;
  return nodes.reduce((a, b) => ({ type: 'binary_expr', operator: 'AND', left: a, right: b }) as Ast);
}

/**
 * Column refs in a node outside subqueries; false when it contains a subquery (with
 * `passSubqueries`, subqueries are passed over and the walk goes on).
 */
function columnRefs(node: unknown, out: Ast[], passSubqueries = false): boolean {
  if (node === null || typeof node !== 'object') return true;
  if (Array.isArray(node)) return node.every((n) => columnRefs(n, out, passSubqueries));
  const n = node as Ast;
  if (n.ast !== undefined) return passSubqueries;
  if (n.type === 'column_ref') {
    out.push(n);
    return true;
  }
  for (const k of Object.keys(n)) if (k !== 'loc' && !columnRefs(n[k], out, passSubqueries)) return false;
  return true;
}

/** Which FROM items (by index) a condition reads; undefined when that cannot be told (subqueries, unknown names). */
function itemsOf(node: Ast, items: FromItem[]): Set<number> | undefined {
  const refs: Ast[] = [];
  if (!columnRefs(node, refs)) return undefined;
  const used = new Set<number>();
  for (const r of refs) {
    const q = columnQualifier(r);
    const name = columnName(r);
    const hits = items.flatMap((it, i) => (it.columns.some((c) => c.name === name && (q === null || c.qualifier === q)) ? [i] : []));
    if (hits.length === 1) used.add(hits[0]!);
    else if (hits.length > 1) return undefined;
    // No hit: an outer reference (or an error raised later): no item.
  }
  return used;
}

/** The FROM clause with WHERE: join tree, pushed-down conditions, residual filter. */
/**
 * The hidden column of a FROM item that `count(t.*)` counts (see rowCounts): TRUE in each of its
 * rows, NULL where an outer join extends the other side with nulls.
 */
const ROW_MARKER = '__tetra_row__';

/**
 * `count(t.*)` (not DISTINCT, outside subqueries) as `count(t.<ROW_MARKER>)`: PostgreSQL counts
 * the rows where t's whole row is not NULL, which a row of t always is (all its columns NULL
 * too) and the row an outer join makes up for t is not. The qualifiers go to `items`, whose FROM
 * items then carry the marker column. Unchanged nodes stay the same objects.
 */
function rowCounts(node: unknown, items: Set<string>): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) {
    const mapped = node.map((n) => rowCounts(n, items));
    return mapped.some((m, k) => m !== node[k]) ? mapped : node;
  }
  const n = node as Ast;
  if (n.ast !== undefined) return node;
  const arg = n.args?.expr as Ast | undefined;
  const rowOf = (ref: Ast | undefined): boolean => ref?.type === 'column_ref' && columnName(ref) === '*' && columnQualifier(ref) !== null;
  // row_to_json(t), to_jsonb(t.*), json_agg(t), ...: the argument may be a whole row (wholeRowJson),
  // which reads its item's row marker (NULL for the row an outer join makes up).
  const first = (n.args?.value as Ast[] | undefined)?.[0];
  if (n.type === 'function' && ROW_JSON_FUNCTIONS.has(functionName(n)) && first?.type === 'column_ref' && (rowOf(first) || columnQualifier(first) === null)) {
    items.add(rowOf(first) ? columnQualifier(first)! : columnName(first));
    return { ...n, args: { ...n.args, value: [{ ...first, [WHOLE_ROW]: true }, ...(n.args.value as Ast[]).slice(1)] } };
  }
  const marker = (ref: Ast): Ast => {
    items.add(columnQualifier(ref)!);
    return { type: 'column_ref', table: ref.table, column: { expr: { type: 'double_quote_string', value: ROW_MARKER } } };
  };
  if (n.type === 'aggr_func' && String(n.name).toLowerCase() === 'count' && n.args?.distinct !== 'DISTINCT' && rowOf(arg)) {
    return { ...n, args: { ...n.args, expr: marker(arg!) } };
  }
  // `count(t.*) FILTER (WHERE ...) OVER (...)` arrives as ntile(<count marker>, t.*, <filter>) (sql-rewrite.ts).
  const values = n.args?.value as Ast[] | undefined;
  if (windowCallName(n) === 'count' && rowOf(values?.[1])) {
    return { ...n, args: { ...n.args, value: [values![0]!, marker(values![1]!), ...values!.slice(2)] } };
  }
  let copy: Ast | undefined;
  for (const k of Object.keys(n)) {
    if (k === 'loc') continue;
    const v = rowCounts(n[k], items);
    if (v !== n[k]) (copy ??= { ...n })[k] = v;
  }
  return copy ?? node;
}

/** The functions whose argument may be a whole row, made into a JSON object of its columns. */
const ROW_JSON_FUNCTIONS = new Set(['row_to_json', 'to_json', 'to_jsonb', 'json_agg', 'jsonb_agg']);
/** Set by rowCounts on such an argument: a name that is no column but a FROM item is its whole row. */
const WHOLE_ROW = '__tetra_whole_row__';

/**
 * A whole-row reference (`t` or `t.*`) as the JSON object of the row's columns, by name (in jsonb's
 * key order; json is jsonb here): what PostgreSQL's row_to_json / to_jsonb / json_agg make of
 * the composite. NULL for the row an outer join makes up for t (its row marker is NULL).
 * Undefined when `t` names a column (a column wins over an item of that name, as in PostgreSQL).
 * @throws SQL_ERROR 42703 / 42P01 when it is neither
 */
function wholeRowJson(n: Ast, scope: Scope): CompiledExpr | undefined {
  const star = columnName(n) === '*';
  const alias = star ? columnQualifier(n)! : columnName(n);
  if (!star && columnQualifier(n) === null && tryResolve(scope, n) !== undefined) return undefined;
  const slots = scope.columns.flatMap((c, k) => (c.qualifier === alias && c.hidden !== true && c.name !== ROW_MARKER ? [k] : []));
  if (slots.length === 0) return star ? sqlFail('42P01', `missing FROM-clause entry for table "${alias}"`) : sqlFail('42703', `column "${alias}" does not exist`);
  for (const k of slots) scope.columns[k]!.used = true;
  const marker = scope.columns.findIndex((c) => c.qualifier === alias && c.name === ROW_MARKER);
  const names = slots.map((k) => scope.columns[k]!.name);
  return {
    type: 'jsonb',
    evaluate(ctx) {
      const row = ctx.row!;
      if (marker >= 0 && row[marker]!.value === null) return { type: 'jsonb', value: null };
      const object: Record<string, JsonValue> = {};
      slots.forEach((k, i) => (object[names[i]!] = sqlToJson(row[k]!)));
      return { type: 'jsonb', value: { json: toJsonb(object) } };
    },
  };
}

/** A FROM item with the ROW_MARKER column last, when `count(alias.*)` reads it. */
function withRowMarker(item: FromItem, rowItems: ReadonlySet<string> | undefined): FromItem {
  if (rowItems?.has(item.alias) !== true) return item;
  const marker: PlanColumn = { name: ROW_MARKER, type: 'boolean', qualifier: item.alias, hidden: true };
  const present: SqlValue = { type: 'boolean', value: true };
  const marked = (plan: Plan): Plan => {
    const passthrough = plan.columns.map((c, k): CompiledExpr => ({ type: c.type, evaluate: (ctx) => ctx.row![k]! }));
    return new ProjectPlan(plan, [...passthrough, { type: 'boolean', evaluate: () => present }], [...plan.columns, marker]);
  };
  const lateral = item.lateral;
  return {
    ...item,
    columns: [...item.columns, marker],
    build: (conds, hint) => marked(item.build(conds, hint)),
    ...(lateral === undefined ? {} : { lateral: (left: Scope, conds: Ast[]) => marked(lateral(left, conds)) }),
    // A parameterised plan would lack the marker: the marked item is joined by hash.
    parameterised: undefined,
  };
}

/**
 * FROM and WHERE. `moved` are quals of a HAVING that PostgreSQL's planner moves to WHERE (see
 * planSelectBlock), after WHERE's own.
 */
export function planFrom(from: Ast[] | null, where: Ast | null, env: PlanEnv, hint?: OrderHint, rowItems?: ReadonlySet<string>, moved: readonly Ast[] = []): { plan: Plan; scope: Scope; ordered?: boolean } {
  const pending = [...qualList(where, 'WHERE'), ...moved];
  if (from === null || from.length === 0) {
    const scope = new Scope([], env.parent);
    let plan: Plan = new ValuesPlan([], [[]]);
    if (pending.length > 0) plan = new FilterPlan(plan, compileQuals(pending, exprEnv(env, scope), 'WHERE'), 'WHERE');
    return { plan, scope };
  }
  const natural = new Set<number>();
  const cleaned = from.map((f, i) => {
    // NATURAL [kind] JOIN arrives as [kind] JOIN ... USING (<marker>) (sql-grammar-gaps.ts).
    const using = f.using as Ast[] | undefined;
    if (using?.length === 1 && (using[0]!.value ?? using[0]) === NATURAL_MARKER) {
      natural.add(i);
      return { ...f, using: undefined } as Ast;
    }
    // node-sql-parser reads `t CROSS JOIN u` (t without alias) as t aliased CROSS, then a JOIN
    // without ON: that is the cross join. ("CROSS" as a real alias needs quotes, and its JOIN an ON.)
    const next = from[i + 1];
    if (typeof f.as === 'string' && f.as.toUpperCase() === 'CROSS' && next?.join === 'INNER JOIN' && (next.on ?? null) === null && next.using === undefined) {
      return { ...f, as: null } as Ast;
    }
    return f;
  });
  const items: FromItem[] = [];
  for (const [i, f] of cleaned.entries()) items.push(withRowMarker(fromItem(f, i, env, rowItems, items), rowItems));
  const nullable = new Set<number>();
  items.forEach((it, i) => {
    if (it.join === 'left') nullable.add(i);
    if (it.join === 'right' || it.join === 'full') {
      for (let j = 0; j < i; j++) nullable.add(j);
      if (it.join === 'full') nullable.add(i);
    }
  });
  const pushed: Ast[][] = items.map(() => []);
  const rest: Ast[] = [];
  for (const c of pending) {
    const used = itemsOf(c, items);
    if (used !== undefined && used.size === 0 && !hasVolatile(c)) {
      // A pseudoconstant (no column of this query, no volatile function), which PostgreSQL tests
      // once before reading anything (a gating Result): every item's scan tests it first (it
      // costs nothing), and WHERE again after the joins (a nullable item's test alone would
      // only empty that side).
      for (const p of pushed) p.push(c);
      rest.push(c);
      continue;
    }
    if (used !== undefined && used.size === 1) {
      const i = [...used][0]!;
      if (!nullable.has(i)) {
        pushed[i]!.push(c);
        continue;
      }
    }
    rest.push(c);
  }
  // ON conditions that read only the joined item filter it before the join.
  const onRest: Ast[][] = items.map(() => []);
  // JOIN binds tighter than the comma: an ON condition sees only the items of its own
  // comma-separated group.
  const groupStart: number[] = [];
  cleaned.forEach((f, i) => groupStart.push(i === 0 || !f.join ? i : groupStart[i - 1]!));
  items.forEach((it, i) => {
    for (const c of qualList(it.on, 'JOIN/ON')) {
      const used = itemsOf(c, items);
      if (used !== undefined) {
        for (const u of used) {
          if (u < groupStart[i]! || u > i) sqlFail('42P01', `invalid reference to FROM-clause entry for table "${items[u]!.alias}"`);
        }
      }
      if (i > 0 && used !== undefined && used.size === 1 && used.has(i) && (it.join === 'inner' || it.join === 'left' || it.join === 'cross')) pushed[i]!.push(c);
      else onRest[i]!.push(c);
    }
  });
  let plan = items[0]!.build(pushed[0]!, items.length === 1 ? hint : undefined);
  const ordered = items.length === 1 && plan instanceof TableScanPlan && plan.path.ordered === true;
  let columns = plan.columns;
  /** Takes out of `rest` the WHERE conditions that become evaluable once item `i` joins (inner joins only). */
  const joinable = (i: number): Ast[] => {
    const now: Ast[] = [];
    for (let k = rest.length - 1; k >= 0; k--) {
      const used = itemsOf(rest[k]!, items);
      if (used !== undefined && used.has(i) && [...used].every((u) => u <= i) && ![...used].some((u) => nullable.has(u))) {
        now.push(rest[k]!);
        rest.splice(k, 1);
      }
    }
    return now.reverse();
  };
  for (let i = 1; i < items.length; i++) {
    const it = items[i]!;
    if (it.lateral !== undefined) {
      if (it.join === 'right' || it.join === 'full') sqlFail('42P10', `invalid reference to FROM-clause entry for table "${it.reads?.[0] ?? it.alias}"`, 'The combining JOIN type must be INNER or LEFT for a LATERAL reference.');
      if (natural.has(i) || (it.using !== undefined && it.using.length > 0)) unsupported('USING or NATURAL joins of a LATERAL item');
      const right = it.lateral(new Scope(columns, env.parent), pushed[i]!);
      const conds = it.join === 'left' ? onRest[i]! : [...onRest[i]!, ...joinable(i)];
      const joinedCols = [...columns, ...right.columns];
      const residual = conds.length === 0 ? undefined : compileQuals(conds, exprEnv(env, new Scope(joinedCols, env.parent), undefined, 'JOIN conditions'), 'JOIN/ON');
      plan = new LateralJoinPlan(plan, right, it.join === 'left' ? 'left' : 'inner', residual, it.alias);
      columns = joinedCols;
      continue;
    }
    const right = it.build(pushed[i]!);
    let kind = it.join;
    let conds = onRest[i]!;
    if (natural.has(i)) {
      // The common names in the left input's order, as PostgreSQL lists them.
      const names = [...new Set(columns.filter((l) => !l.hidden && right.columns.some((c) => !c.hidden && c.name === l.name)).map((l) => l.name))];
      it.using = names;
      if (names.length === 0 && kind === 'inner') kind = 'cross';
    }
    // USING / NATURAL pairs: the slots of each name's one visible column on either side. On the
    // left that is the merged column of an earlier USING join (its sources are hidden), which a
    // column reference could not name unambiguously, so the pairs are compiled from slots.
    const usingPairs = (it.using ?? []).map((name): [number, number] => [usingColumn(columns, name, 'left'), usingColumn(right.columns, name, 'right')]);
    if (kind === 'inner' || kind === 'cross') {
      // WHERE conditions that become evaluable once this item joins are join conditions.
      conds = [...conds, ...joinable(i)];
      if (conds.length > 0) kind = 'inner';
    }
    const joinedCols = [...columns, ...right.columns];
    const joinScope = new Scope(joinedCols, env.parent);
    const leftScope = new Scope(columns, env.parent);
    const rightScope = new Scope(right.columns, env.parent);
    const leftKeys: CompiledExpr[] = [];
    const rightKeys: CompiledExpr[] = [];
    /** Per equi-pair: the inner table's column id when the right side is a plain column. */
    const rightColumns: (number | undefined)[] = [];
    const residual: Ast[] = [];
    const usingResidual: CompiledExpr[] = [];
    /** Equi-pairs whose right side is a column of the item: the keys a parameterised plan could take. */
    const paramKeys: (LookupKey & { left: CompiledExpr })[] = [];
    for (const [li, ri] of usingPairs) {
      const lc = columns[li]!;
      const rc = right.columns[ri]!;
      lc.used = true;
      rc.used = true;
      const t = resolveComparison('=', lc.type, rc.type);
      const compared = isCollatable(t) ? mergeCollations([lc, rc].map((c) => ({ type: t, collation: readCollation(c.collation) }))) : undefined;
      const l = collatedKey(castTo({ type: lc.type, evaluate: (ctx) => ctx.row![li]! }, t), compared);
      const r = collatedKey(castTo({ type: rc.type, evaluate: (ctx) => ctx.row![ri]! }, t), compared);
      if (t === 'jsonb') {
        // Not hashable: compared on the joined row, where the right side starts after the left.
        const at = columns.length + ri;
        const rj = castTo({ type: rc.type, evaluate: (ctx) => ctx.row![at]! }, t);
        usingResidual.push(equalsExpr(l, rj));
        continue;
      }
      leftKeys.push(l);
      rightKeys.push(r);
      rightColumns.push(right instanceof TableScanPlan && boundable(rc.type, t) && boundable(t, rc.type) ? liveColumns(right.reader.table)[ri]!.id : undefined);
    }
    for (const c of conds) {
      const pair = equiPair(c, items, i);
      if (pair !== undefined) {
        const l = compileExpression(pair[0], exprEnv(env, leftScope, undefined, 'JOIN conditions'));
        const r = compileExpression(pair[1], exprEnv(env, rightScope, undefined, 'JOIN conditions'));
        const t = resolveComparison('=', l.type, r.type);
        if (t !== 'jsonb') {
          const compared = isCollatable(t) ? mergeCollations([l, r]) : undefined;
          leftKeys.push(collatedKey(castTo(l, t), compared));
          rightKeys.push(collatedKey(castTo(r, t), compared));
          if (it.parameterised !== undefined && pair[1].type === 'column_ref') {
            const slot = rightScope.resolve(columnQualifier(pair[1]), columnName(pair[1]));
            if (slot.depth === 0 && slot.column.hidden !== true) paramKeys.push({ column: slot.column.name, type: t, collation: compared, left: leftKeys[leftKeys.length - 1]! });
          }
          let col: number | undefined;
          if (right instanceof TableScanPlan && pair[1].type === 'column_ref') {
            const slot = rightScope.resolve(columnQualifier(pair[1]), columnName(pair[1]));
            const def = liveColumns(right.reader.table)[slot.index]!;
            if (slot.depth === 0 && boundable(def.type, t) && boundable(t, def.type)) col = def.id;
          }
          rightColumns.push(col);
          continue;
        }
      }
      residual.push(c);
    }
    const onExpr = residual.length === 0 ? undefined : compileQuals(residual, exprEnv(env, joinScope, undefined, 'JOIN conditions'), 'JOIN/ON');
    const residualExpr = [...usingResidual, ...(onExpr === undefined ? [] : [onExpr])].reduce<CompiledExpr | undefined>((a, b) => (a === undefined ? b : andExpr(a, b)), undefined);
    const joinKindNow: JoinKind = kind === 'right' ? 'right' : kind === 'cross' && conds.length === 0 ? 'cross' : kind;
    const hash = new JoinPlan(plan, right, joinKindNow, leftKeys, rightKeys, residualExpr, it.alias);
    const lookup = (joinKindNow === 'inner' || joinKindNow === 'left') && right instanceof TableScanPlan ? lookupSpec(right, leftKeys, rightKeys, rightColumns) : undefined;
    // A view or subquery that can read the keys by index: parameterised, once per left row while the left side is small.
    const param =
      lookup === undefined && paramKeys.length > 0 && usingPairs.length === 0 && (joinKindNow === 'inner' || joinKindNow === 'left')
        ? it.parameterised!(paramKeys.map(({ column, type, collation }) => ({ column, type, collation })), pushed[i]!)
        : undefined;
    if (param !== undefined) {
      // Every join condition is tested on the joined row (the keys' equalities again among them).
      const tested = compileQuals(conds, exprEnv(env, joinScope, undefined, 'JOIN conditions'), 'JOIN/ON');
      const keys = paramKeys.map((k) => k.left);
      const keyRow = (l: Row, ctx: EvalContext): Row | undefined => {
        ctx.row = l;
        const values: Row = [];
        for (const k of keys) {
          const v = k.evaluate(ctx);
          if (v.value === null) return undefined;
          values.push(v);
        }
        return values;
      };
      plan = new ParameterisedJoinPlan(plan, hash, new LateralJoinPlan(plan, param.plan, joinKindNow === 'left' ? 'left' : 'inner', tested, it.alias, keyRow), param.keyed, it.alias);
    } else plan = lookup === undefined ? hash : new LookupJoinPlan(plan, hash, lookup, joinKindNow, residualExpr, it.alias);
    columns = joinedCols;
    if (it.using !== undefined && it.using.length > 0) {
      // USING / NATURAL: one merged column per name first (the left one, the right one for a
      // RIGHT join, coalesced for FULL), then both sides with those columns hidden from `*`.
      const leftCount = joinedCols.length - right.columns.length;
      const merged: CompiledExpr[] = [];
      const mergedCols: PlanColumn[] = [];
      for (const [k, name] of it.using.entries()) {
        const li = usingPairs[k]![0];
        const ri = leftCount + usingPairs[k]![1];
        const type = resolveComparison('=', joinedCols[li]!.type, joinedCols[ri]!.type);
        const l = castTo({ type: joinedCols[li]!.type, evaluate: (ctx) => ctx.row![li]! }, type);
        const r = castTo({ type: joinedCols[ri]!.type, evaluate: (ctx) => ctx.row![ri]! }, type);
        merged.push(
          joinKindNow === 'right'
            ? r
            : joinKindNow === 'full'
              ? { type, evaluate: (ctx) => { const v = l.evaluate(ctx); return v.value === null ? r.evaluate(ctx) : v; } }
              : l,
        );
        const source = joinKindNow === 'full' ? undefined : joinedCols[joinKindNow === 'right' ? ri : li]!;
        // The merged column is the source's; a FULL join's COALESCE takes both sides'.
        const collation = source !== undefined ? source.collation : mergeCollations([joinedCols[li]!, joinedCols[ri]!].map((c) => ({ type, collation: readCollation(c.collation) })));
        mergedCols.push({ name, type, qualifier: null, collation, ...(source?.type === type ? { sameAs: source } : {}) });
      }
      const rest = joinedCols.map((c, k): PlanColumn => {
        if (!(it.using!.includes(c.name) && (k < leftCount ? !c.hidden : true))) return c;
        // Hidden from `*`; the same object stays reachable by qualifier (l.k) through `used`.
        c.hidden = true;
        return c;
      });
      const passthrough = joinedCols.map((c, k): CompiledExpr => ({ type: c.type, evaluate: (ctx) => ctx.row![k]! }));
      columns = [...mergedCols, ...rest];
      plan = new ProjectPlan(plan, [...merged, ...passthrough], columns);
    }
  }
  const scope = new Scope(columns, env.parent);
  if (rest.length > 0) {
    // Over a lone table's scan (conditions with subqueries stay here), the fused aggregate may
    // test these on bare values too, after the scan's own.
    const bareConds = plan instanceof TableScanPlan ? lazyBareConditions(rest, scope, env) : undefined;
    plan = new FilterPlan(plan, compileQuals(rest, exprEnv(env, scope), 'WHERE'), 'WHERE', bareConds);
  }
  return { plan, scope, ordered };
}

/**
 * A join key whose text is compared under a conflict of collations (columns of two different
 * ones): PostgreSQL's join fails when it hashes or compares the keys (42P22; "string hashing" as
 * its hash join words it, which is what tetradb's equi-joins are), here at the first key that is
 * not NULL.
 */
function collatedKey(e: CompiledExpr, compared: Collation | undefined): CompiledExpr {
  return collationChecked(e, compared, 'string hashing');
}

/**
 * The slot of the one visible column `name` of a USING join's input.
 * @throws SQL_ERROR 42703 when there is none, 42702 when there are several
 */
function usingColumn(columns: PlanColumn[], name: string, side: 'left' | 'right'): number {
  const slots = columns.flatMap((c, k) => (!c.hidden && c.name === name ? [k] : []));
  if (slots.length === 0) sqlFail('42703', `column "${name}" specified in USING clause does not exist in ${side} table`);
  if (slots.length > 1) sqlFail('42702', `common column name "${name}" appears more than once in ${side} table`);
  return slots[0]!;
}

/** `a = b` of two values of one type: NULL when either is. */
function equalsExpr(a: CompiledExpr, b: CompiledExpr): CompiledExpr {
  return {
    type: 'boolean',
    evaluate: (ctx) => {
      const x = a.evaluate(ctx);
      const y = b.evaluate(ctx);
      if (x.value === null || y.value === null) return { type: 'boolean', value: null };
      return { type: 'boolean', value: compareValues(x as NonNullSqlValue, y as NonNullSqlValue) === 0 };
    },
  };
}

/** `a AND b` of two predicates, with SQL's three-valued logic. */
function andExpr(a: CompiledExpr, b: CompiledExpr): CompiledExpr {
  return {
    type: 'boolean',
    evaluate: (ctx) => {
      const x = a.evaluate(ctx).value;
      if (x === false) return { type: 'boolean', value: false };
      const y = b.evaluate(ctx).value;
      return { type: 'boolean', value: y === false ? false : x === null || y === null ? null : true };
    },
  };
}

/** A key of the inner table covered by the join's equi-pairs: the primary key, or an index prefix. */
function lookupSpec(right: TableScanPlan, leftKeys: CompiledExpr[], rightKeys: CompiledExpr[], rightColumns: (number | undefined)[]): LookupSpec | undefined {
  const table = right.reader.table;
  const prefixOf = (keyColumns: number[]): number[] => {
    const picks: number[] = [];
    for (const col of keyColumns) {
      const p = rightColumns.indexOf(col);
      if (p < 0) break;
      picks.push(p);
    }
    return picks;
  };
  let best: { index: LookupSpec['index']; picks: number[]; keyColumns: number[] } | undefined;
  if (table.primaryKey.length > 0) {
    const picks = prefixOf(table.primaryKey);
    if (picks.length > 0) best = { index: undefined, picks, keyColumns: table.primaryKey };
  }
  for (const ix of table.indexes) {
    if (best !== undefined && best.index === undefined && best.picks.length === table.primaryKey.length) break;
    if (ix.expressions !== undefined || ix.predicate !== undefined) continue;
    const picks = prefixOf(ix.columns);
    if (picks.length > (best?.picks.length ?? 0)) best = { index: ix, picks, keyColumns: ix.columns };
  }
  if (best === undefined) return undefined;
  return {
    reader: right.reader,
    index: best.index,
    keys: best.picks.map((p) => leftKeys[p]!),
    keyTypes: best.picks.map((_, k) => table.columns[best.keyColumns[k]!]!.type),
    fullKey: best.index === undefined && best.picks.length === table.primaryKey.length,
    filter: right.filterExpr,
    leftKeys,
    rightKeys,
  };
}

function castTo(e: CompiledExpr, t: SqlTypeName): CompiledExpr {
  return e.type === t ? e : { type: t, evaluate: (ctx) => castValue(e.evaluate(ctx), { type: t }) };
}

/** `a = b` where one side reads only items before `i` and the other only item `i`. */
function equiPair(c: Ast, items: FromItem[], i: number): [Ast, Ast] | undefined {
  if (c.type !== 'binary_expr' || c.operator !== '=') return undefined;
  const l = itemsOf(c.left as Ast, items);
  const r = itemsOf(c.right as Ast, items);
  if (l === undefined || r === undefined || l.size === 0 || r.size === 0) return undefined;
  const before = (s: Set<number>): boolean => [...s].every((u) => u < i);
  const only = (s: Set<number>): boolean => s.size === 1 && s.has(i);
  if (before(l) && only(r)) return [c.left as Ast, c.right as Ast];
  if (before(r) && only(l)) return [c.right as Ast, c.left as Ast];
  return undefined;
}

function joinKind(j: unknown): JoinKind {
  const s = String(j ?? '').toUpperCase();
  if (s === '') return 'inner';
  if (s.startsWith('LEFT')) return 'left';
  if (s.startsWith('RIGHT')) return 'right';
  if (s.startsWith('FULL')) return 'full';
  if (s.startsWith('CROSS')) return 'cross';
  if (s === 'JOIN' || s.startsWith('INNER')) return 'inner';
  return unsupported(`join type ${s}`);
}

function fromItem(f: Ast, i: number, env: PlanEnv, rowItems: ReadonlySet<string> | undefined, before: readonly FromItem[]): FromItem {
  const join = i === 0 ? 'inner' : f.join ? joinKind(f.join) : 'cross';
  const on = (f.on as Ast | null | undefined) ?? null;
  const using = Array.isArray(f.using) ? (f.using as unknown[]).map((u) => (typeof u === 'string' ? u.toLowerCase() : (u as Ast).type === 'column_ref' ? columnName(u as Ast) : String((u as Ast).value).toLowerCase())) : undefined;
  if ((f.expr as Ast | undefined)?.type === 'tables') return joinItem(f, join, on, using, env, rowItems);
  if (f.type === 'function' || (f.expr as Ast | undefined)?.type === 'function' || (f.table === undefined && f.expr === undefined)) {
    return setReturningItem(f, join, on, using, env, before);
  }
  if (f.expr !== undefined && (f.expr as Ast).ast !== undefined) {
    // A derived table: FROM [LATERAL] (SELECT ...) alias [(column names)].
    if (!f.as) sqlFail('42601', 'subquery in FROM must have an alias');
    const { alias, names } = aliasWithColumns(f.as, '');
    const query = (f.expr as Ast).ast as Ast;
    const make = (parent: Scope | undefined, planEnv: PlanEnv = env): Plan => renamed(planQuery(query, { ...planEnv, parent }), alias, names);
    if (String(f.prefix ?? '').toUpperCase() === 'LATERAL' && before.length > 0) {
      const { result, reads } = leftReads(before, env, (parent, probeEnv) => make(parent, probeEnv));
      if (reads.length > 0) {
        return lateralItem(result.columns, join, on, alias, using, reads, (left, conds) => {
          const plan = make(left);
          return filteredUnder(plan, conds, env, left);
        });
      }
    }
    let plan: Plan;
    try {
      plan = make(env.parent);
    } catch (err) {
      refuseLateralReference(err, before);
      throw err;
    }
    // Conditions on it, and a join's key values, go into its query where its shape allows (its
    // select list's `*` written out first), as PostgreSQL pulls a simple subquery up.
    const visible = plan.columns.map((c) => c.name);
    let expanded: Ast | undefined;
    const withConds = (conds: Ast[], parent: Scope | undefined): Plan | undefined => {
      expanded ??= ((query.columns ?? []) as Ast[]).some((item) => (item.expr as Ast | undefined)?.type === 'column_ref' && columnName(item.expr as Ast) === '*') ? expandStars(query, env) : query;
      const merged = queryWithConditions(expanded, visible, alias, conds);
      // A key left out would be tested above the plan, where no key is: no parameterised plan then.
      if (merged === undefined || merged.rest.some(readsKeys)) return undefined;
      const made = renamed(planQuery(merged.query, { ...env, parent }), alias, names);
      return filteredUnder(made, merged.rest, env, parent);
    };
    return {
      columns: plan.columns,
      join,
      on,
      alias,
      using,
      build: (conds) => (conds.length === 0 ? plan : (withConds(conds, env.parent) ?? filtered(plan, conds, env))),
      // Without its shape allowing it, the plan made reads no key, and parameterised says so.
      parameterised: (keys, conds) => parameterised(keys, env.parent, (lookup) => withConds([...conds, ...lookupConditions(keys, alias)], lookup) ?? plan),
    };
  }
  if (f.expr?.type === 'values') {
    if (!f.as) sqlFail('42601', 'VALUES in FROM must have an alias');
    const { alias, names } = aliasWithColumns(f.as, '');
    const plan = valuesPlan(f.expr as Ast, env, alias, names);
    return { columns: plan.columns, join, on, alias, using, build: (conds) => filtered(plan, conds, env) };
  }
  const name = tableName(f.table);
  const alias = f.as ? tableName(f.as) : name;
  const schema = f.db ? String(f.db).toLowerCase() : null;
  if (schema === 'information_schema') {
    const plan = renamed(informationSchemaPlan(name, env.catalog), alias, undefined);
    return { columns: plan.columns, join, on, alias, using, build: (conds) => filtered(plan, conds, env) };
  }
  // pg_catalog's relations, searched first as PostgreSQL's search_path does.
  const system = schema === null || schema === 'pg_catalog' ? pgCatalogPlan(name, env.catalog) : undefined;
  if (system !== undefined) {
    const plan = renamed(system, alias, undefined);
    return { columns: plan.columns, join, on, alias, using, build: (conds) => filtered(plan, conds, env) };
  }
  if (schema !== null && schema !== 'public') sqlFail('3F000', `schema "${schema}" does not exist`);
  const cte = schema === null ? env.ctes.get(name) : undefined;
  if (cte instanceof SublinkRecursion) cte.refuse();
  if (cte !== undefined) {
    const plan = renamed(cte, alias, undefined);
    return { columns: plan.columns, join, on, alias, using, build: (conds) => filtered(plan, conds, env) };
  }
  if (env.catalog.table(name) === undefined) {
    // A view reads as its query, under its name (or the alias) with its columns' names.
    const viewDef = env.catalog.view(name);
    if (viewDef !== undefined) {
      const plan = renamed(viewPlan(viewDef, env), alias, viewColumnNames(viewDef));
      // Conditions on the view alone go into its query where that keeps the answer (so they reach
      // its tables' indexes), else filter its rows.
      const build = (conds: Ast[]): Plan => {
        const merged = conds.length === 0 ? undefined : viewWithConditions(viewDef, alias, conds);
        if (merged === undefined) {
          const built = filtered(plan, conds, env);
          noteViewRead(viewDef, built.columns);
          return built;
        }
        // Inside a parameterised plan the conditions may read its keys (a view of a view): the
        // view's query then sees the level they are on.
        const built = renamed(viewPlan(viewDef, env, merged.query, conds.some(readsKeys) ? env.parent : undefined), alias, viewColumnNames(viewDef));
        // The columns the conditions read count as read (for what the view reads, views.ts).
        for (const c of built.columns) if (merged.read.has(c.name)) c.used = true;
        noteViewRead(viewDef, built.columns);
        return filteredUnder(built, merged.rest, env, env.parent);
      };
      const parameterisedView = (keys: LookupKey[], conds: Ast[]): ReturnType<NonNullable<FromItem['parameterised']>> => {
        const merged = viewWithConditions(viewDef, alias, [...conds, ...lookupConditions(keys, alias)]);
        if (merged === undefined || merged.rest.some(readsKeys)) return undefined;
        const made = parameterised(keys, undefined, (lookup) => filteredUnder(renamed(viewPlan(viewDef, env, merged.query, lookup), alias, viewColumnNames(viewDef)), merged.rest, env, lookup));
        if (made === undefined) return undefined;
        for (const c of made.plan.columns) if (merged.read.has(c.name)) c.used = true;
        noteViewRead(viewDef, made.plan.columns);
        return made;
      };
      return { columns: plan.columns, join, on, alias, using, build, parameterised: parameterisedView };
    }
    // A sequence reads as a one-row relation (last_value, log_cnt, is_called).
    const seq = findSequence(env.catalog, name);
    if (seq !== undefined) {
      const plan = sequenceRelationPlan(seq, alias);
      return { columns: plan.columns, join, on, alias, using, build: (conds) => filtered(plan, conds, env) };
    }
  }
  const table = env.catalog.mustTable(name);
  const columns = liveColumns(table).map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) }));
  return { columns, join, on, alias, using, build: (conds, hint) => tableAccess(table, alias, conds, env, hint) };
}

/** The label of a parenthesised join without an alias (EXPLAIN, error messages). */
const UNNAMED_JOIN = 'unnamed_join';

/**
 * A parenthesised join, `(a JOIN b USING (id))`, as one FROM item: its own join tree, planned as
 * a FROM clause of its own, joined as a whole to the items around it. Without an alias its
 * tables stay visible by their names (`a.x`, the USING columns unqualified), as in PostgreSQL;
 * an alias hides them: the join's columns are then `j.col` (those `*` lists, renamed by
 * `AS j (c1, ...)`), and a name both sides have is ambiguous.
 * @throws SQL_ERROR 42601 for parentheses around a lone table, which PostgreSQL's grammar refuses
 */
function joinItem(f: Ast, join: JoinKind, on: Ast | null, using: string[] | undefined, env: PlanEnv, rowItems: ReadonlySet<string> | undefined): FromItem {
  const members = (f.expr as Ast).expr as Ast[];
  if (members.length === 1 && (members[0]!.expr as Ast | undefined)?.type !== 'tables') sqlFail('42601', 'syntax error at or near ")"');
  if (f.as === null || f.as === undefined || f.as === '') {
    // Planned once for its columns; each build plans it again with the conditions pushed down to
    // it as its WHERE, so they reach its tables (and their keys) as they would unparenthesised.
    const { plan } = planFrom(members, null, env, undefined, rowItems);
    return { columns: plan.columns, join, on, alias: UNNAMED_JOIN, using, build: (conds) => (conds.length === 0 ? plan : planFrom(members, andAll(conds), env, undefined, rowItems).plan) };
  }
  const { alias, names } = aliasWithColumns(f.as, UNNAMED_JOIN);
  // PostgreSQL has no whole-row value of a join alias either (it fails with an internal error).
  if (rowItems?.has(alias) === true) unsupported(`count(${alias}.*) of a join alias`);
  const inner = planFrom(members, null, env).plan;
  // The join's row holds its hidden columns too (the sources of USING columns): the alias has
  // only the visible ones. They are new objects, so the inner columns they pass through are read
  // from the tables whatever the query refers to.
  const slots = inner.columns.flatMap((c, k) => (c.hidden ? [] : [k]));
  for (const k of slots) inner.columns[k]!.used = true;
  const visible = new ProjectPlan(inner, slots.map((k): CompiledExpr => ({ type: inner.columns[k]!.type, evaluate: (ctx) => ctx.row![k]! })), slots.map((k) => inner.columns[k]!));
  const plan = renamed(visible, alias, names);
  return { columns: plan.columns, join, on, alias, using, build: (conds) => filtered(plan, conds, env) };
}

/** `alias` or `alias(col, ...)` as node-sql-parser hands it over for VALUES and functions in FROM. */
function aliasWithColumns(text: unknown, fallback: string): { alias: string; names: string[] | undefined } {
  if (text === null || text === undefined || text === '') return { alias: fallback, names: undefined };
  const m = /^\s*("?)([^"(\s]+)\1\s*(?:\((.*)\))?\s*$/.exec(String(text));
  if (m === null) return sqlFail('42601', `cannot read the alias ${String(text)}`);
  const names = m[3] === undefined ? undefined : m[3].split(',').map((n) => n.trim().replace(/^"(.*)"$/, '$1').toLowerCase());
  return { alias: m[1] === '"' ? m[2]! : m[2]!.toLowerCase(), names };
}

/**
 * A function in FROM (set-returning.ts; any other function gives one row, its value), `WITH
 * ORDINALITY` or not. Its arguments may read the items before it, which makes it LATERAL
 * (PostgreSQL reads every function in FROM so).
 */
function setReturningItem(f: Ast, join: JoinKind, on: Ast | null, using: string[] | undefined, env: PlanEnv, before: readonly FromItem[]): FromItem {
  let fn = (f.expr ?? f) as Ast;
  const ordinality = functionName(fn) === ORDINALITY_MARKER;
  if (ordinality) fn = (fn.args.value as Ast[])[0]!;
  const name = functionName(fn);
  const { alias, names } = aliasWithColumns(f.as, name);
  const aliased = f.as !== null && f.as !== undefined && f.as !== '';
  const argNodes = (fn.args?.value ?? []) as Ast[];
  const make = (parent: Scope | undefined, planEnv: PlanEnv = env, conds: Ast[] = []): Plan => {
    const cenv = exprEnv(planEnv, new Scope([], parent), undefined, 'functions in FROM');
    const resolved = isSetFunction(name) ? setFunction(name, argNodes.map((a) => compileExpression(a, cenv))) : scalarFunction(compileExpression(fn, cenv));
    const own = resolved.fn.columns.map((c) => c.name ?? (resolved.fn.columns.length === 1 && aliased ? alias : name));
    const all = ordinality ? [...own, 'ordinality'] : own;
    if (names !== undefined && names.length > all.length) sqlFail('42P10', `table "${alias}" has ${all.length} columns available but ${names.length} columns specified`);
    const columns: PlanColumn[] = all.map((n, k) => ({ name: names?.[k] ?? n, type: resolved.fn.columns[k]?.type ?? 'int8', qualifier: alias }));
    // Conditions that read nothing of the function's row are tested once, before it is called, as
    // PostgreSQL's one-time filter: `jsonb_typeof(t.doc) = 'array'` guards jsonb_array_elements(t.doc).
    const gate: Ast[] = [];
    const rest: Ast[] = [];
    for (const c of conds) (readsItem(c, alias, columns) || hasVolatile(c) ? rest : gate).push(c);
    const gateExpr = gate.length === 0 ? undefined : compileQuals(gate, exprEnv(planEnv, new Scope([], parent)), 'WHERE');
    return filteredUnder(functionPlan(resolved.fn, resolved.args, columns, name, ordinality, gateExpr), rest, planEnv, parent);
  };
  if (before.length > 0) {
    const { result, reads } = leftReads(before, env, (parent, probeEnv) => make(parent, probeEnv));
    if (reads.length > 0) return lateralItem(result.columns, join, on, alias, using, reads, (left, conds) => make(left, env, conds));
  }
  const plain = make(env.parent);
  return { columns: plain.columns, join, on, alias, using, build: (conds) => (conds.length === 0 ? plain : make(env.parent, env, conds)) };
}

/** A function of one value in FROM: one row holding its value (PostgreSQL's function scan of a scalar function). */
function scalarFunction(value: CompiledExpr): { fn: SetFunction; args: CompiledExpr[] } {
  return { fn: { columns: [{ name: undefined, type: outputType(value.type) }], rows: ([v]) => [[v!]] }, args: [value] };
}

/** Whether a condition may read the columns of FROM item `alias` (true when it cannot be told: a subquery). */
function readsItem(c: Ast, alias: string, columns: PlanColumn[]): boolean {
  const refs: Ast[] = [];
  if (!columnRefs(c, refs)) return true;
  return refs.some((r) => {
    const q = columnQualifier(r);
    return q === null ? columns.some((col) => col.name === columnName(r)) : q === alias;
  });
}

/**
 * The plan of a function's call in FROM: `gate` tested before the call (nothing when it is not
 * true), the arguments evaluated once, its rows with their ordinality (int8, from 1) after them.
 */
function functionPlan(fn: SetFunction, args: CompiledExpr[], columns: PlanColumn[], name: string, ordinality: boolean, gate: CompiledExpr | undefined): Plan {
  return {
    columns,
    *rows(x: Exec): Generator<Step> {
      const ctx = x.ctx();
      if (gate !== undefined && gate.evaluate(ctx).value !== true) return;
      const values = args.map((a) => a.evaluate(ctx));
      let n = 0n;
      for (const row of fn.rows(values, ctx)) {
        yield ordinality ? [...row, { type: 'int8', value: ++n }] : row;
        if (x.tick()) yield PAUSE;
      }
    },
    explain: () => ({ node: `Function Scan on ${name}` }),
  };
}

/**
 * Plans `make(parent)` with the columns of the items before it as its enclosing level (copies, so
 * the items' own columns are not marked read by a plan that never runs): what it makes, and the
 * aliases of the items it read. The probe's environment registers no init plans.
 */
function leftReads<T>(before: readonly FromItem[], env: PlanEnv, make: (parent: Scope, probeEnv: PlanEnv) => T): { result: T; reads: string[] } {
  const copies = before.map((it) => it.columns.map((c): PlanColumn => ({ ...c, used: false })));
  const { initPlans: _unused, ...probeEnv } = env;
  const result = make(new Scope(copies.flat(), env.parent), probeEnv);
  return { result, reads: before.filter((_, k) => copies[k]!.some((c) => c.used === true)).map((it) => it.alias) };
}

/**
 * A LATERAL FROM item: `make(left, conds)` plans it under the left side's columns, with the
 * conditions on it alone, when the join is planned (the probe that found its references gave its
 * columns).
 */
function lateralItem(columns: PlanColumn[], join: JoinKind, on: Ast | null, alias: string, using: string[] | undefined, reads: string[], make: (left: Scope, conds: Ast[]) => Plan): FromItem {
  return {
    columns,
    join,
    on,
    alias,
    using,
    reads,
    build: () => sqlFail('XX000', `internal: LATERAL item "${alias}" planned without its left side`),
    lateral: make,
  };
}

/**
 * A subquery in FROM without LATERAL that failed on a reference to an item before it: PostgreSQL's
 * error, which says so (42P01 for `t.col`, 42703 with its HINT for an unqualified name).
 * @throws SQL_ERROR when `err` is such a reference; returns otherwise
 */
function refuseLateralReference(err: unknown, before: readonly FromItem[]): void {
  if (!isTetraError(err) || err.code !== 'SQL_ERROR') return;
  const table = /^missing FROM-clause entry for table "(.*)"$/.exec(err.message)?.[1];
  if (table !== undefined && before.some((it) => it.alias === table)) {
    sqlFail('42P01', `invalid reference to FROM-clause entry for table "${table}"`, `There is an entry for table "${table}", but it cannot be referenced from this part of the query.`, 'To reference that table, you must mark this subquery with LATERAL.');
  }
  const column = /^column "(.*)" does not exist$/.exec(err.message)?.[1];
  const owner = column === undefined ? undefined : before.find((it) => it.columns.some((c) => !c.hidden && c.name === column));
  if (owner !== undefined) sqlFail('42703', err.message, `There is a column named "${column}" in table "${owner.alias}", but it cannot be referenced from this part of the query.`, 'To reference that column, you must mark this subquery with LATERAL.');
}

/** VALUES (...), (...) as a table: column types resolved across rows as PostgreSQL does. */
function valuesPlan(node: Ast, env: PlanEnv, alias: string, names: string[] | undefined): Plan {
  const rows = (node.values as Ast[]).map((r) => (r.type === 'expr_list' ? (r.value as Ast[]) : [r]));
  const width = rows[0]?.length ?? 0;
  if (rows.some((r) => r.length !== width)) sqlFail('42601', 'VALUES lists must all be the same length');
  const cenv = exprEnv(env, new Scope([], env.parent), undefined, 'VALUES');
  const compiled = rows.map((r) => r.map((e) => compileExpression(e, cenv)));
  const types = Array.from({ length: width }, (_, c) => outputType(commonType(compiled.map((r) => r[c]!.type), 'VALUES')));
  const exprRows = compiled.map((r) => r.map((e, c) => coerceTo(e, types[c]!)));
  if (names !== undefined && names.length > width) sqlFail('42P10', `table "${alias}" has ${width} columns available but ${names.length} columns specified`);
  // A column's collation: its values' (select_common_collation, a conflict allowed).
  const columns = types.map((type, c) => ({ name: names?.[c] ?? `column${c + 1}`, type, qualifier: alias, collation: isCollatable(type) ? mergeCollations(compiled.map((r) => r[c]!)) : undefined }));
  return new ValuesPlan(columns, exprRows);
}

function coerceTo(e: CompiledExpr, t: SqlTypeName): CompiledExpr {
  if (e.type === t) return e;
  if (e.type === 'unknown') return coerce(e, t);
  return castTo(e, t);
}

/** `plan` with `conds` tested on its rows, compiled with `parent` as the enclosing level. */
function filteredUnder(plan: Plan, conds: Ast[], env: PlanEnv, parent: Scope | undefined): Plan {
  if (conds.length === 0) return plan;
  return new FilterPlan(plan, compileQuals(conds, exprEnv(env, new Scope(plan.columns, parent)), 'WHERE'), 'pushed-down condition');
}

function filtered(plan: Plan, conds: Ast[], env: PlanEnv): Plan {
  return filteredUnder(plan, conds, env, env.parent);
}

// ---- access paths --------------------------------------------------------------------------

interface ColumnCond {
  column: number;
  op: '=' | '<' | '<=' | '>' | '>=' | 'in';
  exprs: CompiledExpr[];
}

const FLIP: Record<string, ColumnCond['op']> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

/** Chooses how to read `table` given the conditions on it; all of them are re-checked on each row. */
/** ORDER BY over plain columns of a lone table, all in one direction with default NULL placement. */
export interface OrderHint {
  /** Names of the ordering columns (resolved against the table when its access is chosen). */
  names: string[];
  desc: boolean;
}

export function tableAccess(table: TableDef, alias: string, conds: Ast[], env: PlanEnv, hint?: OrderHint): TableScanPlan {
  const live = liveColumns(table);
  const hintIds = hint?.names.map((n) => live.find((c) => c.name === n)?.id);
  const orderHint = hint !== undefined && hintIds!.every((id) => id !== undefined) ? { columns: hintIds as number[], desc: hint.desc } : undefined;
  const cols = liveColumns(table);
  // The scan's own column objects: references resolved here mark what the scan must decode.
  const scan = {};
  const columns: PlanColumn[] = cols.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation), origin: { scan, primaryKey: table.primaryKey.includes(c.id) } }));
  noteTableRead(table, columns);
  const scope = new Scope(columns, env.parent);
  // Bounds read no column of this table (checked per condition): compiled over its scope, they
  // only read enclosing rows.
  const outerEnv = exprEnv(env, scope);
  // A condition's column reference as the table's column name (undefined: not of this table).
  const ownName = (ref: AstNode): string | undefined => {
    try {
      const s = scope.resolve(columnQualifier(ref as Ast), columnName(ref as Ast));
      return s.depth === 0 ? cols[s.index]!.name : undefined;
    } catch {
      return undefined;
    }
  };
  // The table's index expressions, matched against the conditions' operands.
  const forms = table.indexes.some((i) => i.expressions !== undefined) ? indexExpressionForms(table) : undefined;
  const perCond = conds.map((c) => columnConds(c, scope, cols, table, outerEnv, ownName, forms));
  const found = perCond.flat();
  const filter = conds.length === 0 ? undefined : compileQuals(conds, exprEnv(env, scope), 'WHERE');
  const path = choosePath(table, found, orderHint, impliedPartialIndexes(table.indexes, conds, ownName));
  if (keyWatch !== undefined && path.eq.some((alt) => alt.some((e) => keyWatch!.exprs.has(e)))) keyWatch.keyed.push(table);
  return new TableScanPlan(table, alias, path, filter, conds.length > 0 ? `${conds.length} condition(s)` : '', columns, lazyBareConditions(conds, scope, env), exactKeys(table, perCond, path));
}

/**
 * bareConditions of `conds`, planned once on first ask: only a fused aggregate asks (it compiles
 * the operands again); undefined when there are none, or they do not fit.
 */
function lazyBareConditions(conds: Ast[], scope: Scope, env: PlanEnv): () => BareCond[] | undefined {
  let bare: BareCond[] | null | undefined;
  // Tested in the order the general filter runs them (compileQuals; these hold no correlated subquery).
  return () => (bare ??= conds.length > 0 ? (bareConditions(orderQuals(conds), scope, env) ?? null) : null) ?? undefined;
}

/** Column types whose bare values the fused filter compares (see BareOrder), by the comparison's type. */
const BARE_ORDERS: Partial<Record<SqlTypeName, Partial<Record<SqlTypeName, BareOrder>>>> = {
  int2: { int2: 'plain', int4: 'plain', int8: 'plain', float8: 'float' },
  int4: { int4: 'plain', int8: 'plain', float8: 'float' },
  int8: { int8: 'plain', float8: 'int8-float' },
  float8: { float8: 'float' },
  text: { text: 'text' },
  boolean: { boolean: 'plain' },
  date: { date: 'plain' },
  timestamp: { timestamp: 'plain' },
  timestamptz: { timestamptz: 'plain' },
};

const BARE_OPS: Record<string, BareCompare> = { '=': '=', '<>': '<>', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

/**
 * The conditions on a scanned table as tests of bare values (bare-filter.ts), or undefined when
 * one of them is not `column op operand` / `operand op column` / `column IS [NOT] NULL` with a
 * fixed operand and types whose bare comparison is exactly the general one.
 */
function bareConditions(conds: Ast[], scope: Scope, env: PlanEnv): BareCond[] | undefined {
  const out: BareCond[] = [];
  const slotOf = (n: Ast): number | undefined => {
    if (n.type !== 'column_ref') return undefined;
    try {
      const s = scope.resolve(columnQualifier(n), columnName(n));
      return s.depth === 0 ? s.index : undefined;
    } catch {
      return undefined;
    }
  };
  // The level the operands' subqueries are planned under: a reference from one of them to this
  // row or an enclosing one counts there (Scope.resolve), which makes it correlated.
  const view = scope.withView({ context: 'WHERE' });
  const cenv = exprEnv(env, scope, undefined, 'WHERE', view);
  /** `column op operand` as the general `comparison` compiles it, when the bare test is exact. */
  const comparison = (slot: number, op: BareCompare, operandNode: Ast): BareCond | undefined => {
    if (!fixedOperand(operandNode)) return undefined;
    const colType = scope.columns[slot]!.type;
    try {
      const e = compileExpression(operandNode, cenv);
      // A subquery reading this row or an enclosing one is not fixed for the execution.
      if (view.innerRefs !== 0) return undefined;
      const t = resolveComparison(op, colType, e.type);
      const order = BARE_ORDERS[colType]?.[t];
      return order === undefined ? undefined : { slot, op, operand: coerce(e, t), order };
    } catch {
      // The general filter's compilation raises the same error, or refuses what this one did.
      return undefined;
    }
  };
  for (const c of conds) {
    if (c.type !== 'binary_expr') return undefined;
    const op = String(c.operator).toUpperCase();
    if (op === 'IS' || op === 'IS NOT') {
      const slot = slotOf(c.left as Ast);
      if (slot === undefined || (c.right as Ast).type !== 'null') return undefined;
      out.push({ slot, op: op === 'IS' ? 'null' : 'notnull' });
      continue;
    }
    if (op === 'BETWEEN') {
      // As the general BETWEEN: x >= lo and x <= hi, both bounds evaluated together.
      const slot = slotOf(c.left as Ast);
      const right = c.right as Ast;
      const bounds = right.type === 'expr_list' ? (right.value as Ast[]) : [];
      if (slot === undefined || bounds.length !== 2) return undefined;
      const lo = comparison(slot, '>=', bounds[0]!);
      const hi = comparison(slot, '<=', bounds[1]!);
      if (lo === undefined || hi === undefined) return undefined;
      out.push({ ...lo, withNext: true }, hi);
      continue;
    }
    if (!(op in BARE_OPS)) return undefined;
    const left = slotOf(c.left as Ast);
    const cond = left !== undefined ? comparison(left, BARE_OPS[op]!, c.right as Ast) : undefined;
    const right = cond === undefined && left === undefined ? slotOf(c.right as Ast) : undefined;
    const flipped = right !== undefined ? comparison(right, (FLIP[op] ?? BARE_OPS[op]!) as BareCompare, c.left as Ast) : undefined;
    if (cond === undefined && flipped === undefined) return undefined;
    out.push((cond ?? flipped)!);
  }
  return out;
}

/** An operand whose value is the same for every row: literals, parameters, scalar subqueries, casts and negations of those. */
function fixedOperand(n: Ast): boolean {
  if (n.ast !== undefined) return true;
  switch (n.type) {
    case 'number':
    case 'bigint':
    case 'single_quote_string':
    case 'bool':
    case 'null':
    case 'var':
      return true;
    case 'cast':
      return !n.tail && fixedOperand(n.expr as Ast);
    case 'unary_expr':
      return n.operator === '-' && fixedOperand(n.expr as Ast);
    default:
      return false;
  }
}

function columnConds(
  c: Ast,
  scope: Scope,
  cols: ReturnType<typeof liveColumns>,
  table: TableDef,
  outerEnv: CompileEnv,
  ownName: (ref: AstNode) => string | undefined,
  forms: Map<string, number> | undefined,
): ColumnCond[] {
  if (c.type !== 'binary_expr') return [];
  const op = String(c.operator).toUpperCase();
  const colOf = (n: Ast): number | undefined => {
    if (n.type !== 'column_ref') return undefined;
    try {
      const s = scope.resolve(columnQualifier(n), columnName(n));
      if (s.depth !== 0) return undefined;
      return cols[s.index]!.id;
    } catch {
      return undefined;
    }
  };
  const constant = (n: Ast): CompiledExpr | undefined => {
    const refs: Ast[] = [];
    if (!columnRefs(n, refs)) return undefined;
    let key = false;
    for (const r of refs) {
      try {
        const s = scope.resolve(columnQualifier(r), columnName(r));
        if (s.depth === 0) return undefined;
        if (keyWatch?.columns.has(s.column) === true) key = true;
      } catch {
        return undefined;
      }
    }
    try {
      const e = compileExpression(n, outerEnv);
      if (key) keyWatch!.exprs.add(e);
      return e;
    } catch {
      return undefined;
    }
  };
  const typeOk = (col: number, e: CompiledExpr): boolean => boundable(keyColumnType(table, col), e.type);
  // An operand that is a column of the table, or one of its indexes' expressions (`forms`).
  const keyOf = (n: Ast): number | undefined => {
    const col = colOf(n);
    if (col !== undefined || forms === undefined || n.type === 'column_ref') return col;
    const form = canonicalExpression(n, ownName);
    return form === undefined ? undefined : forms.get(form);
  };
  // key = ANY (array): each element a key to read, as PostgreSQL's index scan with `= ANY`; an
  // untyped literal or a JSON array parameter read as an array of the key's type.
  const quantifier = op === '=' ? arrayQuantifier(c.right as Ast) : undefined;
  if (quantifier !== undefined && !quantifier.all) {
    const lc = keyOf(c.left as Ast);
    const e = lc === undefined ? undefined : constant(quantifier.array as Ast);
    if (lc === undefined || e === undefined) return [];
    const colType = keyColumnType(table, lc);
    const wanted = arrayOf(colType);
    const array: CompiledExpr = e.type === 'unknown' || (e.type === 'jsonb' && e.param !== undefined) ? { type: wanted, evaluate: (ctx) => castValue(e.evaluate(ctx), { type: wanted }) } : e;
    if (!isArrayType(array.type) || !boundable(colType, elementTypeOf(array.type))) return [];
    manyValued.add(array);
    return [{ column: lc, op: 'in', exprs: [array] }];
  }
  if (op in FLIP) {
    const lc = keyOf(c.left as Ast);
    const rc = keyOf(c.right as Ast);
    if (lc !== undefined) {
      const e = constant(c.right as Ast);
      if (e !== undefined && typeOk(lc, e)) return [{ column: lc, op: op as ColumnCond['op'], exprs: [e] }];
    }
    if (rc !== undefined) {
      const e = constant(c.left as Ast);
      if (e !== undefined && typeOk(rc, e)) return [{ column: rc, op: FLIP[op]!, exprs: [e] }];
    }
    return [];
  }
  if (op === 'IN') {
    const lc = keyOf(c.left as Ast);
    const list = c.right as Ast;
    if (lc === undefined || list.type !== 'expr_list' || isSubqueryList(list)) return [];
    const exprs = (list.value as Ast[]).map((v) => constant(v));
    if (exprs.some((e) => e === undefined || !typeOk(lc, e))) return [];
    return [{ column: lc, op: 'in', exprs: exprs as CompiledExpr[] }];
  }
  if (op === 'BETWEEN') {
    const lc = keyOf(c.left as Ast);
    const bounds = (c.right as Ast).value as Ast[] | undefined;
    if (lc === undefined || bounds?.length !== 2) return [];
    const lo = constant(bounds[0]!);
    const hi = constant(bounds[1]!);
    if (lo === undefined || hi === undefined || !typeOk(lc, lo) || !typeOk(lc, hi)) return [];
    return [
      { column: lc, op: '>=', exprs: [lo] },
      { column: lc, op: '<=', exprs: [hi] },
    ];
  }
  return [];
}

/** Key column types whose key bytes are equal exactly when the values are (`=` of the column's type). */
const EXACT_KEY_TYPES: ReadonlySet<SqlTypeName> = new Set(['int2', 'int4', 'int8', 'text', 'boolean', 'date', 'timestamp', 'timestamptz', 'uuid']);

/**
 * Whether `path`'s key ranges hold exactly the rows `conds` keep: no range, and every condition
 * one equality or IN list of a key column the path fixes with those very operands,
 * of a type whose key bytes are equal exactly when the values are (TableScanPlan.countRows then
 * counts without reading a row). A partial index's predicate is among the conditions when it is
 * used, so it is a condition the path must fix too; an index on expressions is never exact here.
 */
function exactKeys(table: TableDef, perCond: readonly ColumnCond[][], path: AccessPath): boolean {
  if (path.eq.length === 0 || path.lo !== undefined || path.hi !== undefined || path.index?.expressions !== undefined) return false;
  const width = path.eq[0]!.length;
  if (perCond.length === 0 || perCond.length !== width) return false;
  return perCond.every((ccs) => {
    // An equality, or an IN list (= ANY of an array too): its values are the path's alternatives
    // at that column, each a key range of its own (accessRanges reads a repeated one once).
    const cc = ccs.length === 1 ? ccs[0]! : undefined;
    if (cc === undefined || (cc.op !== '=' && cc.op !== 'in')) return false;
    const k = path.keyColumns.indexOf(cc.column);
    if (k < 0 || k >= width || !path.eq.every((alt) => cc.exprs.includes(alt[k]!))) return false;
    const type = keyColumnType(table, cc.column);
    return EXACT_KEY_TYPES.has(type) || isEnumType(type);
  });
}

/** Picks the primary key or the index with the longest equality prefix (then a range); a partial index only when `partial` holds it. */
function choosePath(table: TableDef, conds: ColumnCond[], orderHint?: { columns: number[]; desc: boolean }, partial?: Set<IndexDef>): AccessPath {
  if (orderHint !== undefined && orderHint.columns.length === 0) orderHint = undefined;
  const candidates: { index: AccessPath['index']; keyColumns: number[]; unique: boolean }[] = [];
  if (table.primaryKey.length > 0) candidates.push({ index: undefined, keyColumns: table.primaryKey, unique: true });
  for (const ix of table.indexes) {
    if (ix.expressions !== undefined && ix.expressionTypes === undefined) continue;
    if (ix.predicate !== undefined && partial?.has(ix) !== true) continue;
    candidates.push({ index: ix, keyColumns: plannerKeyColumns(ix), unique: ix.unique });
  }
  let best: { path: AccessPath; score: number } | undefined;
  for (const cand of candidates) {
    const eq: CompiledExpr[][] = [[]];
    const eqTypes: SqlTypeName[] = [];
    let k = 0;
    let alternatives = 1;
    for (; k < cand.keyColumns.length; k++) {
      const col = cand.keyColumns[k]!;
      const e = conds.find((c) => c.column === col && c.op === '=');
      const inList = e === undefined ? conds.find((c) => c.column === col && c.op === 'in') : undefined;
      if (e === undefined && (inList === undefined || alternatives * inList.exprs.length > 1000)) break;
      const values = e !== undefined ? e.exprs : inList!.exprs;
      alternatives *= values.length;
      const next: CompiledExpr[][] = [];
      for (const prefix of eq) for (const v of values) next.push([...prefix, v]);
      eq.splice(0, eq.length, ...next);
      eqTypes.push(keyColumnType(table, col));
    }
    let lo: AccessPath['lo'];
    let hi: AccessPath['hi'];
    if (k < cand.keyColumns.length) {
      const col = cand.keyColumns[k]!;
      const type = keyColumnType(table, col);
      const l = conds.find((c) => c.column === col && (c.op === '>' || c.op === '>='));
      const h = conds.find((c) => c.column === col && (c.op === '<' || c.op === '<='));
      if (l !== undefined) lo = { expr: l.exprs[0]!, type, inclusive: l.op === '>=' };
      if (h !== undefined) hi = { expr: h.exprs[0]!, type, inclusive: h.op === '<=' };
    }
    let score = k * 10 + (lo !== undefined ? 3 : 0) + (hi !== undefined ? 3 : 0);
    if (k === cand.keyColumns.length && cand.unique) score += 100;
    if (cand.index === undefined) score += 1;
    let reverse = false;
    let ordered = false;
    if (orderHint !== undefined && eq.length <= 1) {
      // Columns fixed by an equality are in order trivially; the rest must follow the prefix.
      const fixed = new Set(cand.keyColumns.slice(0, k));
      const rest = orderHint.columns.filter((c) => !fixed.has(c));
      if (rest.every((c, i) => cand.keyColumns[k + i] === c)) {
        score += 5;
        reverse = orderHint.desc;
        ordered = true;
      }
    }
    if (score <= 1 && orderHint === undefined) score = cand.index === undefined ? 1 : 0;
    const names = cand.keyColumns.map((c) => keyColumnName(table, c));
    const text = k > 0 || lo || hi ? `Key: (${names.join(', ')})${k > 0 ? `, ${k} equal` : ''}${lo || hi ? ', range' : ''}${eq.length > 1 ? `, ${eq.length} lookups` : ''}` : '';
    const path: AccessPath = { index: cand.index, keyColumns: cand.keyColumns, eq: k > 0 ? eq : [], eqTypes, lo, hi, reverse, ordered, text: ordered ? `${text}${text ? ', ' : ''}in ORDER BY order` : text };
    if (k === 0 && lo === undefined && hi === undefined && !ordered) continue;
    if (best === undefined || score > best.score) best = { path, score };
  }
  return best?.path ?? { index: undefined, keyColumns: table.primaryKey, eq: [], eqTypes: [], reverse: false, text: '' };
}
