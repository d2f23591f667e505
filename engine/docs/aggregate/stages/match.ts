/**
 * $match: the find filter (query/compile-filter.ts), plus `$expr` at its top level: an
 * aggregation expression evaluated on the document (with `$lookup`'s `let` variables), true
 * when its value is truthy.
 */

import { compileFilter, filterFields, filterReadsAll, type CompiledFilter } from '../../query/compile-filter.js';
import { needsOf, READS_ALL } from '../dependencies.js';
import { isPlainObject, type Doc } from '../../values.js';
import { Scope, type Expr } from '../expression/expression.js';
import { truthy } from '../expression/comparison.js';
import { compileExpression } from '../expression/operator-table.js';
import { stageError, streaming, type Stage } from '../stage.js';

/** A $match, with the part an index plan can use. */
export interface MatchStage extends Stage {
  /** The filter without `$expr` (what the query planner can use). */
  readonly filter: CompiledFilter;
  test(doc: Doc, vars: Scope | undefined): boolean;
}

export function matchStage(spec: unknown, names: ReadonlySet<string>): MatchStage {
  if (!isPlainObject(spec)) stageError('$match', 'the $match filter must be an object');
  const { $expr: exprSpec, ...rest } = spec;
  const filter = compileFilter(rest);
  const expr: Expr | undefined = Object.hasOwn(spec, '$expr') ? compileExpression(exprSpec, names) : undefined;
  const test = (doc: Doc, vars: Scope | undefined): boolean => {
    if (!filter.test(doc)) return false;
    if (expr === undefined) return true;
    return truthy(expr(vars === undefined ? Scope.of(doc) : vars.with(new Map([['ROOT', doc], ['CURRENT', doc]]))));
  };
  const needs = filterReadsAll(filter.ast) ? READS_ALL : needsOf(expr === undefined ? [] : [exprSpec], filterFields(filter.ast), false);
  const stage = streaming('$match', needs, (chunk, ctx) => chunk.filter((d) => test(d, ctx.vars)));
  return { ...stage, filter, test };
}
