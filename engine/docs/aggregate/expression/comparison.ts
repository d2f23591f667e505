/**
 * Comparison and boolean expression operators (manual: Comparison and Boolean Expression
 * Operators). Comparisons take any two values in BSON order, across types (unlike query
 * operators); a missing value sorts before null and equals only another missing value. Truth:
 * false, null, missing and 0 are false, everything else (empty strings and arrays too) true.
 */

import { compareValues, MISSING } from '../../values.js';
import { compileArgs, type ExprOperator } from './expression.js';

/** BSON order with missing first (aggregation's comparison). */
export function compareAgg(a: unknown, b: unknown): number {
  if (a === MISSING || b === MISSING) return a === b ? 0 : a === MISSING ? -1 : 1;
  return compareValues(a, b);
}

/** Aggregation truth. */
export function truthy(v: unknown): boolean {
  return !(v === false || v === null || v === MISSING || v === undefined || v === 0);
}

function comparison(test: (c: number) => boolean | number): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const [a, b] = compileArgs(args, ctx, name, 2);
      return (scope) => test(compareAgg(a!(scope), b!(scope)));
    },
  };
}

const and: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 0, Infinity);
    return (scope) => parts.every((e) => truthy(e(scope)));
  },
};

const or: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 0, Infinity);
    return (scope) => parts.some((e) => truthy(e(scope)));
  },
};

const not: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [a] = compileArgs(args, ctx, name, 1);
    return (scope) => !truthy(a!(scope));
  },
};

export const comparisonOperators: Record<string, ExprOperator> = {
  $eq: comparison((c) => c === 0),
  $ne: comparison((c) => c !== 0),
  $gt: comparison((c) => c > 0),
  $gte: comparison((c) => c >= 0),
  $lt: comparison((c) => c < 0),
  $lte: comparison((c) => c <= 0),
  $cmp: comparison((c) => c),
  $and: and,
  $or: or,
  $not: not,
};
