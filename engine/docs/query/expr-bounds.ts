/**
 * Index bounds from `$expr` (MongoDB 5.0+ plans `$expr` equalities and comparisons on an index): a
 * top-level `{$expr: {$eq: ["$path", <value>]}}` (either order, inside a top-level `$expr` `$and`
 * too), or `{$expr: {$in: ["$path", <array>]}}`, where the value does not read the document (a
 * constant, `$$NOW`, a variable of the command's `let` or of a `$lookup`'s `let`, an expression of
 * those), is read by the planner as the equality `{path: value}` (`{path: {$in: [...]}}`); a
 * `$gt`, `$gte`, `$lt` or `$lte` of the path with such a value as an ExprRangeOp: a range over the
 * order of all values, since an aggregation comparison is not bracketed by type as the query
 * operators are (`{$gt: ["$a", 5]}` holds for every string and date), and the range below a value
 * takes null and missing fields in. Arrays compare as a whole there, so the planner reads such a
 * range only on an index that has never held an array on its path (not multikey).
 *
 * Only for planning: the documents the bounds give are tested against the whole filter, so the
 * bounds need only hold every match. They do: an aggregation field path reads through documents
 * only, and its value equals a value that is not an array only when the document holds that value
 * at the path, where every index on the path has an entry for it (a multikey index too). So only
 * values that are not arrays are taken, and not null (whose match could be a missing field, which a
 * sparse index leaves out), nor NaN. A value that would need the document, or that is missing,
 * gives no bounds: the plan is what it was.
 */

import { Scope, type Expr } from '../aggregate/expression/expression.js';
import { compileExpression } from '../aggregate/expression/operator-table.js';
import { exprIsVolatile } from '../aggregate/dependencies.js';
import { isPlainObject, MISSING } from '../values.js';
import type { AndNode, ExprNode, FieldNode, FieldOp, FilterNode } from './filter-ast.js';

type ComparisonName = '$gt' | '$gte' | '$lt' | '$lte';

/**
 * A planner's bound from an `$expr` comparison (above): the values at the path lie above (`$gt`,
 * `$gte`) or below (`$lt`, `$lte`) `bound` in the order of all values. Never matched: only the
 * copy of the filter the planner reads holds one (typed there as a FieldOp), and fieldBounds reads it.
 */
export interface ExprRangeOp {
  readonly op: '$exprRange';
  readonly value: { readonly cmp: ComparisonName; readonly bound: unknown };
}

/** One equality (`$in`, comparison) an `$expr` gives: the path, and the value's expression. */
interface ExprEquality {
  readonly path: string;
  readonly op: '$eq' | '$in' | ComparisonName;
  readonly value: Expr;
}

/** The comparison with its sides swapped: `{$lt: [5, "$a"]}` is `{$gt: ["$a", 5]}`. */
const FLIPPED: Record<ComparisonName, ComparisonName> = { $gt: '$lt', $gte: '$lte', $lt: '$gt', $lte: '$gte' };

/** What each `$expr` node of a filter gives the planner, worked out once per node. */
const EQUALITIES = new WeakMap<ExprNode, readonly ExprEquality[]>();

/**
 * `ast` with the equalities its top-level `$expr`s give, each merged into the field node of its
 * path, for the planner to read bounds from; `ast` itself when there are none. `vars`: the
 * variables the filter is evaluated with (the command's `let`, a `$lookup`'s), without which an
 * equality to a variable gives nothing.
 */
export function withExprEqualities(ast: AndNode, vars: Scope | undefined): AndNode {
  let added: Map<string, FieldOp[]> | undefined;
  let scope: Scope | undefined;
  for (const child of ast.children) {
    if (child.kind !== 'expr') continue;
    for (const eq of equalitiesOf(child)) {
      scope ??= vars ?? new Scope(new Map([['NOW', new Date()]]));
      const op = boundOp(eq, scope);
      if (op === undefined) continue;
      added ??= new Map();
      const ops = added.get(eq.path);
      if (ops === undefined) added.set(eq.path, [op]);
      else ops.push(op);
    }
  }
  if (added === undefined) return ast;
  const children: FilterNode[] = [];
  for (const child of ast.children) {
    const more = child.kind === 'field' ? added.get(child.path) : undefined;
    if (child.kind !== 'field' || more === undefined) {
      children.push(child);
      continue;
    }
    children.push({ kind: 'field', path: child.path, ops: [...child.ops, ...more] } satisfies FieldNode);
    added.delete(child.path);
  }
  for (const [path, ops] of added) children.push({ kind: 'field', path, ops } satisfies FieldNode);
  return { kind: 'and', children };
}

/** The condition an equality gives with these variables, or undefined when it gives none. */
function boundOp(eq: ExprEquality, scope: Scope): FieldOp | undefined {
  let value: unknown;
  try {
    value = eq.value(scope);
  } catch {
    // The test of each document raises it (or does not, when no document is read): not planning's to.
    return undefined;
  }
  if (eq.op === '$eq') return boundable(value) ? { op: '$eq', value } : undefined;
  if (eq.op === '$in') {
    if (!Array.isArray(value) || !value.every(boundable)) return undefined;
    return { op: '$in', value };
  }
  if (!rangeBound(value)) return undefined;
  const range: ExprRangeOp = { op: '$exprRange', value: { cmp: eq.op, bound: value } };
  // Only the planner's copy holds it (see ExprRangeOp).
  return range as unknown as FieldOp;
}

/** A range's bound: a number (not NaN), a string, a boolean or a date (not null, arrays or documents). */
function rangeBound(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isNaN(value);
  return typeof value === 'string' || typeof value === 'boolean' || value instanceof Date;
}

function boundable(value: unknown): boolean {
  return value !== MISSING && value !== null && value !== undefined && !Array.isArray(value) && !(typeof value === 'number' && Number.isNaN(value));
}

function equalitiesOf(node: ExprNode): readonly ExprEquality[] {
  let found = EQUALITIES.get(node);
  if (found === undefined) {
    const made: ExprEquality[] = [];
    collect(node.spec, new Set(node.names), made);
    EQUALITIES.set(node, (found = made));
  }
  return found;
}

/** Adds the equalities of `spec`, an `$expr`'s expression or a conjunct of its `$and`. */
function collect(spec: unknown, names: ReadonlySet<string>, out: ExprEquality[]): void {
  if (!isPlainObject(spec)) return;
  const keys = Object.keys(spec);
  if (keys.length !== 1) return;
  const op = keys[0]!;
  const args = spec[op];
  if (op === '$and' && Array.isArray(args)) {
    for (const a of args) collect(a, names, out);
    return;
  }
  const comparison = op === '$gt' || op === '$gte' || op === '$lt' || op === '$lte';
  if ((op !== '$eq' && op !== '$in' && !comparison) || !Array.isArray(args) || args.length !== 2) return;
  const sides: Array<[unknown, unknown, ExprEquality['op']]> = op === '$in' ? [[args[0], args[1], op]] : [[args[0], args[1], op], [args[1], args[0], comparison ? FLIPPED[op] : op]];
  for (const [field, other, cmp] of sides) {
    const path = fieldPathOf(field);
    if (path === undefined || readsDocument(other) || exprIsVolatile(other)) continue;
    let value: Expr;
    try {
      value = compileExpression(other, names);
    } catch {
      return; // the filter's own compile reported it, or will
    }
    out.push({ path, op: cmp, value });
    return;
  }
}

/** `"$a.b"` -> `a.b`; undefined for anything else (a variable, an expression, a path with a `$` part). */
function fieldPathOf(spec: unknown): string | undefined {
  if (typeof spec !== 'string' || !spec.startsWith('$') || spec.startsWith('$$') || spec.length < 2) return undefined;
  const path = spec.slice(1);
  return path.split('.').every((p) => p !== '' && !p.startsWith('$')) ? path : undefined;
}

/** True when an expression (as written) may read the document: a field path, `$$ROOT`/`$$CURRENT`, `$getField`, `$meta`. */
export function readsDocument(spec: unknown): boolean {
  if (typeof spec === 'string') {
    if (spec.startsWith('$$')) {
      const name = spec.slice(2).split('.')[0];
      return name === 'ROOT' || name === 'CURRENT';
    }
    return spec.startsWith('$') && spec.length > 1;
  }
  if (Array.isArray(spec)) return spec.some(readsDocument);
  if (!isPlainObject(spec)) return false;
  for (const [key, value] of Object.entries(spec)) {
    if (key === '$literal') continue;
    if (key === '$meta') return true;
    if (key === '$getField') {
      // `{$getField: "a"}` and `{$getField: {field: "a"}}` read the current document; with `input` only that.
      if (!isPlainObject(value) || !Object.hasOwn(value, 'input')) return true;
      if (readsDocument(value['input']) || readsDocument(value['field'])) return true;
      continue;
    }
    if (readsDocument(value)) return true;
  }
  return false;
}
