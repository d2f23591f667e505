import { isAggregateName } from '../aggregates.js';
import type { CompiledExpr } from '../compiled-expr.js';
import { compileExpression, type AstNode, type CompileEnv } from '../expression-eval.js';
import { typeDisplay } from '../sql-cast.js';
import { COLLATE_MARKER } from '../sql-grammar-gaps.js';
import { coerce } from '../type-resolution.js';
import { sqlFail } from '../sql-types.js';

type Ast = AstNode & Record<string, any>;

/*
 * The conditions of WHERE, JOIN ... ON, HAVING, UPDATE / DELETE ... WHERE and ON CONFLICT ... WHERE
 * as PostgreSQL runs them, which is not as an expression:
 *  - the condition is an implicit-AND list of quals: its top-level ANDs are split (parenthesised
 *    or not: canonicalize_qual flattens them), `NOT (a OR b)` is `NOT a AND NOT b` and `NOT NOT a`
 *    is `a` (eval_const_expressions' negate_clause), `a OR false` is `a` (its constant folding,
 *    here of the literals TRUE and FALSE only), and `a BETWEEN b AND c` is `a >= b AND a <= c`
 *    (the parser's own reading of BETWEEN);
 *  - the quals are ordered by their estimated cost per row, cheapest first, keeping the written
 *    order between equals (order_qual_clauses' stable sort over cost_qual_eval);
 *  - they run in that order and stop at the first that is not true (ExecQual): a NULL stops them,
 *    where the AND of an expression would go on to see whether a later operand is false.
 * So `WHERE v > 5 AND 1 / x = 1` raises nothing for a row where v is NULL (and x is 0), while the
 * same AND in a select list or a CHECK raises 22012 there. The order and the stop decide only
 * which errors a statement raises; its rows are the same either way.
 *
 * The cost is PostgreSQL's model as far as the syntax tells it, in units of one operator call: an
 * operator or function call costs 1 (the procost of nearly every built-in), columns, constants,
 * parameters, AND / OR / NOT, IS [NOT] NULL, COALESCE and CASE cost nothing of their own, a
 * subexpression without columns is folded to a constant (0), a cast costs 1 (2 for the text I/O
 * conversions PostgreSQL makes of a cast from text, which the tree alone cannot tell apart), an
 * IN list half its length (the hashed search PostgreSQL makes of 9 or more constants: 2), an
 * aggregate or window call nothing (it is read like a column), an uncorrelated subquery nothing
 * (an InitPlan's parameter) and a correlated one CORRELATED_SUBQUERY_COST (a SubPlan runs a whole
 * scan per row).
 */

/** How each qual made by qualList is compiled: the context of its boolean check, and whether it negates its operand. */
const QUAL_INFO = new WeakMap<Ast, { context: string; negate?: boolean }>();

/**
 * The implicit-AND list of a condition (see the module comment), in written order.
 * `context` names the clause in the error for a condition that is not boolean.
 */
export function qualList(node: Ast | null | undefined, context: string): Ast[] {
  const out: Ast[] = [];
  if (node !== null && node !== undefined) split(node, context, false, out);
  return out;
}

function split(node: Ast, context: string, negated: boolean, out: Ast[]): void {
  const op = node.type === 'binary_expr' ? String(node.operator).toUpperCase() : undefined;
  if (op === (negated ? 'AND' : 'OR')) {
    // `x OR false` is x (and `NOT (x AND true)` is NOT x): eval_const_expressions drops the
    // constant, which leaves x's ANDs at the top.
    const dropped = negated;
    if (isBool(node.right as Ast, dropped)) return split(node.left as Ast, context, negated, out);
    if (isBool(node.left as Ast, dropped)) return split(node.right as Ast, context, negated, out);
  }
  if (op === (negated ? 'OR' : 'AND')) {
    split(node.left as Ast, op, negated, out);
    split(node.right as Ast, op, negated, out);
    return;
  }
  const notOperand = isNot(node);
  if (notOperand !== undefined) {
    split(notOperand, 'NOT', !negated, out);
    return;
  }
  if (!negated && op === 'BETWEEN' && (node.right as Ast).type === 'expr_list' && (node.right as Ast).value.length === 2 && !hasSubquery(node.left)) {
    const [lo, hi] = (node.right as Ast).value as Ast[];
    for (const q of [
      { type: 'binary_expr', operator: '>=', left: node.left, right: lo },
      { type: 'binary_expr', operator: '<=', left: node.left, right: hi },
    ] as Ast[]) {
      QUAL_INFO.set(q, { context });
      out.push(q);
    }
    return;
  }
  if (negated) {
    const q: Ast = { type: 'unary_expr', operator: 'NOT', expr: node };
    QUAL_INFO.set(q, { context, negate: true });
    out.push(q);
    return;
  }
  // A qual split again (the conditions of a parenthesised join, rejoined by AND) keeps its context.
  if (!QUAL_INFO.has(node)) QUAL_INFO.set(node, { context });
  out.push(node);
}

const isBool = (n: Ast, value: boolean): boolean => n.type === 'bool' && n.value === value;

/** The operand of `NOT x` (the parser writes `NOT (...)` as a call of NOT), or undefined. */
function isNot(n: Ast): Ast | undefined {
  if (n.type === 'unary_expr' && String(n.operator).toUpperCase() === 'NOT') return n.expr as Ast;
  if (n.type === 'function' && callName(n) === 'not' && (n.args?.value as Ast[] | undefined)?.length === 1) return n.args.value[0] as Ast;
  return undefined;
}

function callName(n: Ast): string {
  const parts = (n.name?.name ?? []) as { value: unknown }[];
  return parts.length === 1 ? String(parts[0]!.value).toLowerCase() : '';
}

function hasSubquery(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasSubquery);
  const n = node as Ast;
  if (n.ast !== undefined) return true;
  return Object.keys(n).some((k) => k !== 'loc' && hasSubquery(n[k]));
}

/** A correlated subquery runs a whole plan per row: far more than any operator. */
const CORRELATED_SUBQUERY_COST = 1000;

/** Correlated subqueries planned so far (select.ts subPlan counts them): compileQuals reads the count around each qual. */
let correlatedSubqueries = 0;

/** Called by the planner for each correlated subquery it plans. */
export function noteCorrelatedSubquery(): void {
  correlatedSubqueries++;
}

/**
 * The quals made by qualList as one condition: each compiled in written order (so errors of
 * compilation come as PostgreSQL's parser raises them), then run cheapest first, stopping at the
 * first that is not true. The result is true (also for no quals), or the first result that was
 * not (false or NULL).
 * @throws SQL_ERROR 42804 for a qual that is not boolean, and what compiling raises
 */
export function compileQuals(quals: readonly Ast[], cenv: CompileEnv, context: string, checkOnly?: ReadonlySet<Ast>): CompiledExpr {
  const compiled: { expr: CompiledExpr; cost: number }[] = [];
  for (const q of quals) {
    const before = correlatedSubqueries;
    const expr = compileQual(q, cenv, context);
    // `checkOnly` quals are compiled for their errors, and run elsewhere.
    if (checkOnly?.has(q) !== true) compiled.push({ expr, cost: qualCost(q) + (correlatedSubqueries - before) * CORRELATED_SUBQUERY_COST });
  }
  const ordered = stableSort(compiled, (x) => x.cost).map((x) => x.expr);
  if (ordered.length === 1) return ordered[0]!;
  return {
    type: 'boolean',
    evaluate(ctx) {
      for (const e of ordered) {
        const v = e.evaluate(ctx);
        if (v.value !== true) return v;
      }
      return { type: 'boolean', value: true };
    },
  };
}

/** Quals in the order compileQuals runs them (the syntactic cost alone: for conditions without correlated subqueries). */
export function orderQuals(quals: readonly Ast[]): Ast[] {
  return stableSort(quals, qualCost);
}

function stableSort<T>(items: readonly T[], cost: (x: T) => number): T[] {
  return items
    .map((item, i) => ({ item, i, c: cost(item) }))
    .sort((a, b) => a.c - b.c || a.i - b.i)
    .map((x) => x.item);
}

function compileQual(q: Ast, cenv: CompileEnv, context: string): CompiledExpr {
  const info = QUAL_INFO.get(q);
  if (info?.negate === true) {
    const e = asBoolean(compileExpression(q.expr as Ast, cenv), info.context);
    return {
      type: 'boolean',
      evaluate(ctx) {
        const v = e.evaluate(ctx).value as boolean | null;
        return { type: 'boolean', value: v === null ? null : !v };
      },
    };
  }
  return asBoolean(compileExpression(q, cenv), info?.context ?? context);
}

/** A condition's value must be boolean; an untyped literal is read as one ('t'). */
function asBoolean(e: CompiledExpr, context: string): CompiledExpr {
  if (e.type === 'boolean') return e;
  if (e.type === 'unknown') return coerce(e, 'boolean');
  return sqlFail('42804', `argument of ${context} must be type boolean, not type ${typeDisplay(e.type) ?? e.type}`);
}

// ---- cost ---------------------------------------------------------------------------------------

/** Functions whose value changes from call to call (never folded, and never moved out of HAVING). */
const VOLATILE = new Set(['random', 'setseed', 'nextval', 'currval', 'lastval', 'setval', 'set_config', 'clock_timestamp', 'timeofday', 'gen_random_uuid', 'txid_current']);
/** Functions PostgreSQL never folds while planning: their value is fixed only within a statement. */
const STABLE = new Set(['current_setting', 'now', 'current_timestamp', 'transaction_timestamp', 'statement_timestamp', 'localtimestamp', 'current_date', 'localtime', 'current_time', 'to_char', 'age']);
/** Node kinds that are leaves of no cost. */
const FREE_LEAVES = new Set(['column_ref', 'number', 'bigint', 'single_quote_string', 'bool', 'null', 'var', 'date', 'timestamp', 'interval', 'double_quote_string', 'star', 'origin', 'default']);
/** An IN list this long with constant members is searched by hash (MIN_ARRAY_SIZE_FOR_HASHED_SAOP). */
const HASHED_IN_LIST = 9;

/** PostgreSQL's estimated per-row cost of a qual (see the module comment). */
export function qualCost(node: unknown): number {
  if (node === null || typeof node !== 'object') return 0;
  if (Array.isArray(node)) return node.reduce((s: number, n) => s + qualCost(n), 0);
  const n = node as Ast;
  // A subquery: an uncorrelated one is a parameter per row; a correlated one is counted where it is planned.
  if (n.ast !== undefined) return 0;
  if (FREE_LEAVES.has(n.type)) return 0;
  if (isConstant(n)) return 0;
  switch (n.type) {
    case 'aggr_func':
    case 'window_func':
      return 0;
    case 'cast':
      return qualCost(n.expr) + 1;
    case 'unary_expr': {
      const op = String(n.operator).toUpperCase();
      return qualCost(n.expr) + (op === 'NOT' || op === 'NOT EXISTS' || op === '+' ? 0 : 1);
    }
    case 'binary_expr': {
      const op = String(n.operator).toUpperCase();
      if (op === 'AND' || op === 'OR') return qualCost(n.left) + qualCost(n.right);
      if (op === 'IS' || op === 'IS NOT') {
        const r = n.right as Ast;
        // IS [NOT] DISTINCT FROM (kept as text by the parser here) is an operator; the NULL and truth tests are free.
        return qualCost(n.left) + (r?.type === 'default' && /^DISTINCT FROM /i.test(String(r.value)) ? 1 : 0);
      }
      const right = n.right as Ast;
      if ((op === 'IN' || op === 'NOT IN') && right?.type === 'expr_list') {
        const items = right.value as Ast[];
        if (items.length === 1 && items[0]!.ast !== undefined) return qualCost(n.left) + 1;
        const members = qualCost(items);
        return qualCost(n.left) + members + (items.length >= HASHED_IN_LIST && items.every(isConstant) ? 2 : items.length * 0.5);
      }
      if (op === 'BETWEEN' || op === 'NOT BETWEEN') return 2 * qualCost(n.left) + qualCost(right) + 2;
      return qualCost(n.left) + qualCost(right) + 1;
    }
    case 'function': {
      if (n.over) return 0;
      const name = callName(n);
      if (isAggregateName(name)) return 0;
      const args = qualCost(n.args);
      // COLLATE only labels its operand (PostgreSQL's CollateExpr costs nothing).
      if (name === 'not' || name === 'coalesce' || name === 'exists' || name === COLLATE_MARKER) return args;
      return args + 1;
    }
    case 'case': {
      // A simple CASE compares its subject with each WHEN value: one operator each.
      const whens = n.expr ? ((n.args ?? []) as Ast[]).filter((a) => a.type === 'when').length : 0;
      return qualCost(n.expr) + qualCost(n.args) + whens;
    }
    default:
      return Object.keys(n).reduce((s, k) => (k === 'loc' ? s : s + qualCost(n[k])), 0);
  }
}

/**
 * Whether PostgreSQL folds the node to a constant while planning: no column, subquery,
 * aggregate or window call, and only immutable functions (parameters count as constants: a
 * custom plan has their values).
 */
function isConstant(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return true;
  if (Array.isArray(node)) return node.every(isConstant);
  const n = node as Ast;
  if (n.ast !== undefined || n.type === 'column_ref' || n.type === 'aggr_func' || n.type === 'window_func' || n.over) return false;
  if (n.type === 'function') {
    const name = callName(n);
    if (VOLATILE.has(name) || STABLE.has(name) || isAggregateName(name) || name === 'exists') return false;
  }
  return Object.keys(n).every((k) => k === 'loc' || isConstant(n[k]));
}

/** Whether a node calls a volatile function (outside subqueries). */
export function hasVolatile(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasVolatile);
  const n = node as Ast;
  if (n.ast !== undefined) return false;
  if (n.type === 'function' && VOLATILE.has(callName(n))) return true;
  return Object.keys(n).some((k) => k !== 'loc' && hasVolatile(n[k]));
}

/**
 * Whether a node calls a function that is not immutable (volatile or stable), which PostgreSQL
 * refuses in a generation expression (contain_mutable_functions). Only named functions are
 * known here: a cast or operator that depends on the time zone setting is not seen.
 */
export function hasMutableCall(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasMutableCall);
  const n = node as Ast;
  if (n.type === 'function' && (VOLATILE.has(callName(n)) || STABLE.has(callName(n)))) return true;
  return Object.keys(n).some((k) => k !== 'loc' && hasMutableCall(n[k]));
}

/**
 * Whether a HAVING qual moves to WHERE, as PostgreSQL's planner moves it when the query has a
 * GROUP BY: it holds no aggregate, window call, subquery or volatile function (it is then a
 * function of the grouped columns, and rows failing it make no group).
 */
export function movesToWhere(q: Ast): boolean {
  const walk = (node: unknown): boolean => {
    if (node === null || typeof node !== 'object') return true;
    if (Array.isArray(node)) return node.every(walk);
    const n = node as Ast;
    if (n.ast !== undefined || n.type === 'aggr_func' || n.type === 'window_func' || n.over) return false;
    if (n.type === 'function' && (isAggregateName(callName(n)) || callName(n) === 'exists')) return false;
    return Object.keys(n).every((k) => k === 'loc' || walk(n[k]));
  };
  return walk(q) && !hasVolatile(q);
}
