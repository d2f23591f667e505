import { isAggregateName } from '../aggregates.js';
import type { Catalog } from '../catalog.js';
import type { CompiledExpr } from '../compiled-expr.js';
import { compileExpression, type AstNode, type CompileEnv } from '../expression-eval.js';
import { sqlFail } from '../sql-types.js';
import { Scope } from './scope.js';
import { callArgs, exprEnv, functionName, isSubqueryList, type PlanEnv } from './select.js';

type Ast = AstNode & Record<string, any>;

/**
 * The places of a table definition whose expressions PostgreSQL's parser restricts (its
 * p_expr_kind): no subquery, aggregate, window function or set-returning function, and in a
 * DEFAULT no column either. Each refusal is PostgreSQL's, with its SQLSTATE and message, raised
 * where PostgreSQL's transformExpr meets the construct (a call's arguments are read before the
 * call is refused, a subquery is refused before anything inside or beside it is read).
 */
export type ExpressionKind = 'check' | 'default' | 'generated' | 'index expression' | 'index predicate' | 'transform';

const PLACES: Record<ExpressionKind, { subquery: string; plural: string }> = {
  check: { subquery: 'cannot use subquery in check constraint', plural: 'check constraints' },
  default: { subquery: 'cannot use subquery in DEFAULT expression', plural: 'DEFAULT expressions' },
  generated: { subquery: 'cannot use subquery in column generation expression', plural: 'column generation expressions' },
  'index expression': { subquery: 'cannot use subquery in index expression', plural: 'index expressions' },
  'index predicate': { subquery: 'cannot use subquery in index predicate', plural: 'index predicates' },
  // ALTER COLUMN ... TYPE ... USING
  transform: { subquery: 'cannot use subquery in transform expression', plural: 'transform expressions' },
};

/**
 * PostgreSQL's set-returning functions (pg_proc.proretset) a user may call by name; tetradb has
 * none of them as a scalar function (generate_series is read only in FROM), so a call of one is
 * refused here as PostgreSQL refuses it, rather than as an unknown function.
 */
const SET_RETURNING = new Set([
  'generate_series', 'generate_subscripts', 'unnest', 'regexp_matches', 'regexp_split_to_table', 'string_to_table', 'json_array_elements',
  'json_array_elements_text', 'json_each', 'json_each_text', 'json_object_keys', 'json_populate_recordset', 'json_to_recordset', 'jsonb_array_elements',
  'jsonb_array_elements_text', 'jsonb_each', 'jsonb_each_text', 'jsonb_object_keys', 'jsonb_path_query', 'jsonb_path_query_tz', 'jsonb_populate_recordset',
  'jsonb_to_recordset',
]);

/** Whether a node is a subquery of any form: scalar, EXISTS, IN (SELECT ...), op ANY/ALL (SELECT ...). */
function isSubquery(n: Ast): boolean {
  if (n.ast !== undefined && n.type === undefined) return true;
  if (n.type === 'function' && functionName(n) === 'exists') return true;
  if (n.type === 'unary_expr' && String(n.operator).toUpperCase() === 'NOT EXISTS') return true;
  if (n.type !== 'binary_expr') return false;
  const op = String(n.operator).toUpperCase();
  if ((op === 'IN' || op === 'NOT IN') && isSubqueryList(n.right)) return true;
  const q = n.right as Ast | undefined;
  return q?.type === 'function' && ['any', 'some', 'all'].includes(functionName(q)) && (q.args?.value?.[0] as Ast | undefined)?.ast !== undefined;
}

/** What a call is, as far as these places (and a view's shape, view-writes.ts) care: an aggregate, a window function, a set-returning function. */
export function callKind(n: Ast): 'aggregate' | 'window' | 'set-returning' | undefined {
  if (n.type === 'window_func' || ((n.type === 'aggr_func' || n.type === 'function') && n.over)) return 'window';
  if (n.type === 'aggr_func' || (n.type === 'function' && isAggregateName(functionName(n)))) return 'aggregate';
  if (n.type === 'function' && SET_RETURNING.has(functionName(n))) return 'set-returning';
  return undefined;
}

/**
 * The compile environment of an expression of `kind` over `columns` (the table's; none for a
 * DEFAULT): the SELECT machinery with PostgreSQL's refusals of these places first.
 * @throws SQL_ERROR 0A000 subquery, set-returning function, column in a DEFAULT; 42803 aggregate; 42P20 window function
 */
export function restrictedEnv(kind: ExpressionKind, catalog: Catalog, columns: Scope['columns']): CompileEnv {
  const place = PLACES[kind];
  const env: PlanEnv = { catalog, params: [], parent: undefined, ctes: new Map() };
  const refuse = (n: Ast, self: CompileEnv): CompiledExpr | undefined => {
    if (isSubquery(n)) sqlFail('0A000', place.subquery);
    if (kind === 'default' && n.type === 'column_ref') sqlFail('0A000', 'cannot use column reference in DEFAULT expression');
    const call = callKind(n);
    if (call === undefined) return undefined;
    // PostgreSQL transforms a call's arguments before it looks at the call.
    for (const a of callArgs(n).args) compileExpression(a, self);
    if (call === 'aggregate') sqlFail('42803', `aggregate functions are not allowed in ${place.plural}`);
    if (call === 'window') sqlFail('42P20', `window functions are not allowed in ${place.plural}`);
    return sqlFail('0A000', `set-returning functions are not allowed in ${place.plural}`);
  };
  return exprEnv(env, new Scope(columns, undefined), refuse, place.plural);
}
