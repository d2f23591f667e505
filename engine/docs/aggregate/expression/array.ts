/**
 * Array expression operators (manual: Array and Set Expression Operators), and the expression
 * forms of `$sum`, `$avg`, `$min` and `$max` (over an array argument or several arguments).
 * null or missing where an array is expected gives null, except where the manual says otherwise
 * (`$size`, `$in`: errors; `$isArray`: false); other types are errors naming the type.
 */

import { bsonTypeOf, compareValues, isPlainObject, MISSING } from '../../values.js';
import { ValueSet } from '../value-key.js';
import { compareAgg, truthy } from './comparison.js';
import { checkVariableName, compileArgs, exprError, intArg, isNullish, unary, type Expr, type ExprOperator } from './expression.js';

function arr(v: unknown, name: string, what = 'argument'): unknown[] {
  if (!Array.isArray(v)) exprError(name, `${name}'s ${what} must be an array, but is ${bsonTypeOf(v)}`);
  return v;
}

const size = unary((v, name) => {
  if (!Array.isArray(v)) exprError(name, `The argument to $size must be an array. Type of argument: ${bsonTypeOf(v)}`);
  return v.length;
});

const arrayElemAt: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [a, i] = compileArgs(args, ctx, name, 2);
    return (scope) => {
      const v = a!(scope);
      const at = i!(scope);
      if (isNullish(v) || isNullish(at)) return null;
      const list = arr(v, name, 'first argument');
      const k = intArg(at, name, 'the index');
      const pos = k < 0 ? list.length + k : k;
      return pos >= 0 && pos < list.length ? list[pos] : MISSING;
    };
  },
};

function end(which: 'first' | 'last'): ExprOperator {
  return unary((v, name) => {
    if (isNullish(v)) return null;
    const list = arr(v, name);
    if (list.length === 0) return MISSING;
    return which === 'first' ? list[0] : list[list.length - 1];
  });
}

const inOperator: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [v, a] = compileArgs(args, ctx, name, 2);
    return (scope) => {
      const list = a!(scope);
      if (!Array.isArray(list)) exprError(name, `$in requires an array as a second argument, found: ${bsonTypeOf(list)}`);
      const x = v!(scope);
      return list.some((el) => compareAgg(el, x) === 0);
    };
  },
};

const concatArrays: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 0, Infinity);
    return (scope) => {
      const out: unknown[] = [];
      for (const e of parts) {
        const v = e(scope);
        if (isNullish(v)) return null;
        if (!Array.isArray(v)) exprError(name, `$concatArrays only supports arrays, not ${bsonTypeOf(v)}`);
        // One by one: out.push(...v) throws RangeError past ~120k elements.
        for (let i = 0; i < v.length; i++) out.push(v[i]);
      }
      return out;
    };
  },
};

const slice: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 2, 3);
    return (scope) => {
      const values = parts.map((e) => e(scope));
      if (values.some(isNullish)) return null;
      const list = arr(values[0], name, 'first argument');
      if (values.length === 2) {
        const n = intArg(values[1], name, 'the count');
        return n >= 0 ? list.slice(0, n) : list.slice(Math.max(0, list.length + n));
      }
      const pos = intArg(values[1], name, 'the position');
      const n = intArg(values[2], name, 'the count');
      if (n <= 0) exprError(name, `Third argument to $slice must be positive: ${n}`);
      const start = pos >= 0 ? Math.min(pos, list.length) : Math.max(0, list.length + pos);
      return list.slice(start, start + n);
    };
  },
};

const range: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 2, 3);
    return (scope) => {
      const [from, to, step = 1] = parts.map((e, k) => intArg(e(scope), name, ['the start', 'the end', 'the step'][k]!));
      if (step === 0) exprError(name, "$range requires a non-zero step value");
      const out: number[] = [];
      for (let x = from!; step > 0 ? x < to! : x > to!; x += step) {
        out.push(x);
        if (out.length > 1_000_000) exprError(name, '$range would produce more than a million values');
      }
      return out;
    };
  },
};

const indexOfArray: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 2, 4);
    return (scope) => {
      const list = parts[0]!(scope);
      if (isNullish(list)) return null;
      const items = arr(list, name, 'first argument');
      const x = parts[1]!(scope);
      const from = parts[2] === undefined ? 0 : intArg(parts[2](scope), name, 'the starting index');
      const to = parts[3] === undefined ? items.length : Math.min(items.length, intArg(parts[3](scope), name, 'the ending index'));
      for (let i = from; i < to; i++) if (compareAgg(items[i], x) === 0) return i;
      return -1;
    };
  },
};

// $map, $filter and $reduce bind variables: `as` (default "this"), $$value for $reduce.
function bound(args: unknown, name: string, allowed: readonly string[], required: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(args)) exprError(name, `${name} only supports an object as its argument`);
  for (const k of Object.keys(args)) if (!allowed.includes(k)) exprError(name, `Unrecognized parameter to ${name}: ${k}`);
  for (const k of required) if (!Object.hasOwn(args, k)) exprError(name, `Missing '${k}' parameter to ${name}`);
  return args;
}

function asName(args: Record<string, unknown>, name: string): string {
  if (!Object.hasOwn(args, 'as')) return 'this';
  const as = args['as'];
  if (typeof as !== 'string') exprError(name, `${name}'s 'as' must be a string`);
  return checkVariableName(as, name);
}

const map: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const a = bound(args, name, ['input', 'as', 'in'], ['input', 'in']);
    const as = asName(a, name);
    const input = ctx.compile(a['input']);
    const body = ctx.withNames([as]).compile(a['in']);
    return (scope) => {
      const v = input(scope);
      if (isNullish(v)) return null;
      return arr(v, name, "'input'").map((el) => {
        const r = body(scope.with(new Map([[as, el]])));
        return r === MISSING ? null : r;
      });
    };
  },
};

const filter: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const a = bound(args, name, ['input', 'as', 'cond', 'limit'], ['input', 'cond']);
    const as = asName(a, name);
    const input = ctx.compile(a['input']);
    const cond = ctx.withNames([as]).compile(a['cond']);
    const limit: Expr | undefined = Object.hasOwn(a, 'limit') ? ctx.compile(a['limit']) : undefined;
    return (scope) => {
      const v = input(scope);
      if (isNullish(v)) return null;
      let max = Infinity;
      if (limit !== undefined) {
        const l = limit(scope);
        if (!isNullish(l)) {
          max = intArg(l, name, "'limit'");
          if (max < 1) exprError(name, `$filter: 'limit' must be greater than 0: ${max}`);
        }
      }
      const out: unknown[] = [];
      for (const el of arr(v, name, "'input'")) {
        if (truthy(cond(scope.with(new Map([[as, el]]))))) out.push(el);
        if (out.length >= max) break;
      }
      return out;
    };
  },
};

const reduce: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const a = bound(args, name, ['input', 'initialValue', 'in'], ['input', 'initialValue', 'in']);
    const input = ctx.compile(a['input']);
    const initial = ctx.compile(a['initialValue']);
    const body = ctx.withNames(['this', 'value']).compile(a['in']);
    return (scope) => {
      const v = input(scope);
      if (isNullish(v)) return null;
      let acc = initial(scope);
      for (const el of arr(v, name, "'input'")) acc = body(scope.with(new Map([['this', el], ['value', acc]])));
      return acc;
    };
  },
};

// The expression forms of the accumulators: one array argument is its elements, several
// arguments are themselves; non-numbers are ignored by $sum/$avg, null and missing by $min/$max.
function accumulatorExpression(fold: (values: unknown[]) => unknown): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const parts = compileArgs(args, ctx, name, 1, Infinity);
      return (scope) => {
        let values: unknown[];
        if (parts.length === 1) {
          const v = parts[0]!(scope);
          values = Array.isArray(v) ? v : [v];
        } else values = parts.map((e) => e(scope));
        return fold(values);
      };
    },
  };
}

/** $sum of values: numbers added, everything else ignored. */
export function sumOf(values: readonly unknown[]): number {
  let total = 0;
  for (const v of values) if (typeof v === 'number') total += v;
  return total;
}

/** $min/$max of values: null and missing ignored; null when nothing is left. */
export function extremeOf(values: readonly unknown[], sign: 1 | -1): unknown {
  let best: unknown = MISSING;
  for (const v of values) {
    if (isNullish(v)) continue;
    if (best === MISSING || sign * compareValues(v, best) > 0) best = v;
  }
  return best === MISSING ? null : best;
}

/** The distinct elements of an array, first occurrences in order. */
function setOf(v: unknown, name: string): ValueSet {
  const out = new ValueSet();
  for (const el of arr(v, name)) out.add(el);
  return out;
}

function setOperator(fn: (sets: ValueSet[]) => unknown, min: number, max = Infinity): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const parts = compileArgs(args, ctx, name, min, max);
      return (scope) => {
        const values = parts.map((e) => e(scope));
        if (values.some(isNullish)) return null;
        return fn(values.map((v) => setOf(v, name)));
      };
    },
  };
}


export const arrayOperators: Record<string, ExprOperator> = {
  $size: size,
  $arrayElemAt: arrayElemAt,
  $first: end('first'),
  $last: end('last'),
  $in: inOperator,
  $concatArrays: concatArrays,
  $slice: slice,
  $range: range,
  $indexOfArray: indexOfArray,
  $reverseArray: unary((v, name) => (isNullish(v) ? null : [...arr(v, name)].reverse())),
  $isArray: unary((v) => Array.isArray(v)),
  $map: map,
  $filter: filter,
  $reduce: reduce,
  $sum: accumulatorExpression(sumOf),
  $avg: accumulatorExpression((values) => {
    const nums = values.filter((v): v is number => typeof v === 'number');
    return nums.length === 0 ? null : sumOf(nums) / nums.length;
  }),
  $max: accumulatorExpression((values) => extremeOf(values, 1)),
  $min: accumulatorExpression((values) => extremeOf(values, -1)),
  $setUnion: setOperator((sets) => {
    const union = new ValueSet();
    for (const s of sets) for (const x of s.values) union.add(x);
    return union.values;
  }, 0),
  $setIntersection: setOperator((sets) => (sets.length === 0 ? [] : sets[0]!.values.filter((x) => sets.every((s) => s.has(x)))), 0),
  $setDifference: setOperator(([a, b]) => a!.values.filter((x) => !b!.has(x)), 2, 2),
  $setEquals: setOperator((sets) => sets.every((s) => s.size === sets[0]!.size && s.values.every((x) => sets[0]!.has(x))), 2),
  $setIsSubset: setOperator(([a, b]) => a!.values.every((x) => b!.has(x)), 2, 2),
  $allElementsTrue: unary((v, name) => arr(v, name).every(truthy)),
  $anyElementTrue: unary((v, name) => arr(v, name).some(truthy)),
};

