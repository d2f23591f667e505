/**
 * The window functions of $setWindowFields (manual: $setWindowFields, "Window Operators"), each
 * parsed with MongoDB's rules and messages (window_function_expression.h and its parsers) and
 * computed over one sorted partition at a time:
 * - accumulators over a window (window-bounds.ts; default: the whole partition): $sum, $avg,
 *   $min, $max, $count, $push, $addToSet, $stdDevPop, $stdDevSamp, $covariancePop,
 *   $covarianceSamp, $first, $last, $integral, $derivative (explicit window), and $mergeObjects
 *   (windows starting at the partition's first document only, as MongoDB 8.x);
 * - $rank, $denseRank, $documentNumber (one sortBy field, no window);
 * - $shift {output, by, default}, $expMovingAvg {input, N | alpha}, $locf, $linearFill;
 * - $firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN, $percentile, $median
 *   (window-n-functions.ts);
 * - $minMaxScaler {input, min, max} (MongoDB 8.2): the input rescaled from its window's range to
 *   [min, max].
 * A window that slides (its start moves) feeds a removable accumulator (window-accumulators.ts):
 * each document enters and leaves once, O(n) per partition for the counting ones.
 */

import { bsonTypeOf, compareValues, isPlainObject, MISSING, type Doc } from '../../values.js';
import type { TimeUnit } from '../expression/date-units.js';
import { constantValue } from '../expression/constant.js';
import { isNullish, Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { stageError } from '../stage.js';
import { NON_REMOVABLE, RemovableSum, WINDOW_ACCUMULATORS, type WindowAccumulatorFactory } from './window-accumulators.js';
import { N_WINDOW_FUNCTIONS, parseNWindowFunction } from './window-n-functions.js';
import { leftUnbounded, parseTimeUnit, parseWindow, WHOLE_PARTITION, windowsOf, type SortShape, type WindowBounds } from './window-bounds.js';

const STAGE = '$setWindowFields';

/** One sorted partition, as the window functions read it. */
export interface Partition {
  readonly docs: readonly Doc[];
  readonly scopes: readonly Scope[];
  /** The values of the sortBy field, when sortBy has exactly one. */
  readonly sortValues: readonly unknown[] | undefined;
  /** True where a document's sortBy key equals the previous document's (ties, for the ranks). */
  readonly tiesPrevious: readonly boolean[];
}

/** A parsed window function: its value for each document of a partition (MISSING: no field). */
export interface WindowFunction {
  compute(p: Partition): unknown[];
  /** Fields it reads besides those of its expressions (a $topN's sortBy). */
  readonly paths?: readonly string[];
}

function fail(message: string): never {
  stageError(STAGE, message);
}

type Parser = (spec: Doc, name: string, sort: SortShape, names: ReadonlySet<string>) => WindowFunction;

/** Each document's value, computed once and only when a window needs it (as MongoDB evaluates). */
function lazy(n: number, valueAt: (i: number) => unknown): (i: number) => unknown {
  const cache = new Array<unknown>(n);
  const done = new Uint8Array(n);
  return (i) => {
    if (done[i] === 0) {
      cache[i] = valueAt(i);
      done[i] = 1;
    }
    return cache[i];
  };
}

const lazyValues = (p: Partition, input: Expr): ((i: number) => unknown) => lazy(p.docs.length, (i) => input(p.scopes[i]!));

/** Slides the windows over the partition: each document enters once and leaves once. */
function slide(p: Partition, bounds: WindowBounds, value: (i: number) => unknown, make: WindowAccumulatorFactory): unknown[] {
  const n = p.docs.length;
  const { start, end } = windowsOf(bounds, n, p.sortValues);
  const out = new Array<unknown>(n);
  const acc = make();
  let removed = 0; // documents before this one have left
  let added = 0; // documents before this one have entered
  for (let i = 0; i < n; i++) {
    const s = start[i]!;
    const e = end[i]!;
    if (s > e) {
      out[i] = make().result();
      continue;
    }
    // The same window as the previous document's (the whole partition, ties of a range): the
    // same value, computed once and shared (values are never changed in place).
    if (i > 0 && s === start[i - 1] && e === end[i - 1]) {
      out[i] = out[i - 1];
      continue;
    }
    while (removed < s && removed < added) {
      acc.remove(value(removed), removed);
      removed++;
    }
    if (removed < s) removed = s;
    if (added < removed) added = removed;
    while (added <= e) {
      acc.add(value(added), added);
      added++;
    }
    out[i] = acc.result();
  }
  return out;
}

function checkNoSecond(name: string | undefined): void {
  if (name !== undefined) fail('Cannot specify two functions in window function spec');
}

/** `{$sum: <expr>, window: {...}}` and the other accumulators (MongoDB's ExpressionRemovable). */
const accumulator: Parser = (spec, _name, sort, names) => {
  let fn: string | undefined;
  let bounds = WHOLE_PARTITION;
  for (const k of Object.keys(spec)) {
    if (k === 'window') bounds = parseWindow(spec[k], sort);
    else if (isWindowFunction(k)) {
      checkNoSecond(fn);
      fn = k;
    } else fail(`Window function found an unknown argument: ${k}`);
  }
  let op = fn!;
  let inputSpec = spec[op];
  if (op === '$count') {
    if (!isPlainObject(inputSpec) || Object.keys(inputSpec).length > 0) fail('$count only accepts an empty object as input');
    op = '$sum';
    inputSpec = 1;
  }
  if (NON_REMOVABLE.has(op) && !leftUnbounded(bounds)) fail(`Window function ${op} is not supported with a removable window`);
  const input = compileExpression(inputSpec, names);
  const make = WINDOW_ACCUMULATORS[op]!;
  return { compute: (p) => slide(p, bounds, lazyValues(p, input), make) };
};

/** $first/$last: the input at the window's first (last) document; null for an empty window. */
const endpoint: Parser = (spec, name, sort, names) => {
  let bounds = WHOLE_PARTITION;
  for (const k of Object.keys(spec)) {
    if (k === 'window') bounds = parseWindow(spec[k], sort);
    else if (k !== name) fail(`${name} got unexpected argument: ${k}`);
  }
  const input = compileExpression(spec[name], names);
  const last = name === '$last';
  return {
    compute(p) {
      const { start, end } = windowsOf(bounds, p.docs.length, p.sortValues);
      return p.docs.map((_d, i) => (start[i]! > end[i]! ? null : input(p.scopes[last ? end[i]! : start[i]!]!)));
    },
  };
};

/** $rank, $denseRank, $documentNumber: ties are documents whose sortBy values sort alike. */
const rank: Parser = (spec, name, sort) => {
  if (Object.keys(spec).length !== 1) fail('Rank style window functions take no other arguments');
  const arg = spec[name];
  if (!isPlainObject(arg) || Object.keys(arg).length > 0) fail(`${name} must be specified with '{}' as the value`);
  if (sort.fields !== 1) fail(`${name} must be specified with a top level sortBy expression with exactly one element`);
  return {
    compute(p) {
      const out = new Array<unknown>(p.docs.length);
      let rankOf = 0;
      let dense = 0;
      for (let i = 0; i < p.docs.length; i++) {
        if (name === '$documentNumber') out[i] = i + 1;
        else {
          if (i === 0 || !p.tiesPrevious[i]) {
            rankOf = i + 1;
            dense++;
          }
          out[i] = name === '$rank' ? rankOf : dense;
        }
      }
      return out;
    },
  };
};

/** $shift {output, by, default}: the output expression on the document `by` places away. */
const shift: Parser = (spec, name, sort, names) => {
  let fn: string | undefined;
  for (const k of Object.keys(spec)) {
    if (k === 'window') fail("$shift does not accept a 'window' field");
    else if (isWindowFunction(k)) {
      if (fn !== undefined) fail('Cannot specify multiple functions in window function spec');
      fn = k;
      if (!isPlainObject(spec[k])) fail('Argument to $shift must be an object');
    } else fail(`Window function found an unknown argument: ${k}`);
  }
  const args = spec[name] as Doc;
  let output: Expr | undefined;
  let by: number | undefined;
  let fallback: unknown = null;
  for (const [k, v] of Object.entries(args)) {
    if (k === 'output') output = compileExpression(v, names);
    else if (k === 'default') {
      const c = constantValue(v, (e) => compileExpression(e));
      if (c === undefined) fail("'$shift:default' expression must yield a constant value.");
      fallback = c.value === MISSING ? null : c.value;
    } else if (k === 'by') {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) fail(`'$shift:by' field must be an integer, but found  by: ${JSON.stringify(v)}`);
      by = v;
    } else fail(`Unknown argument in ${name}`);
  }
  if (output === undefined) fail(`${name} requires an 'output' expression.`);
  if (by === undefined) fail(`${name} requires 'by' as an integer value.`);
  if (sort.fields === undefined) fail(`'${name}' requires a sortBy`);
  const offset = by;
  const out = output;
  return {
    compute: (p) => p.docs.map((_d, i) => {
      const j = i + offset;
      return j < 0 || j >= p.docs.length ? fallback : out(p.scopes[j]!);
    }),
  };
};

/** Milliseconds in the units $derivative and $integral take (MongoDB's typical lengths). */
const UNIT_MS: Readonly<Partial<Record<TimeUnit, number>>> = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1000, millisecond: 1 };

function typeName(v: unknown): string {
  return bsonTypeOf(v);
}

/** `{$derivative | $integral: {input, unit}, window}`, checked as MongoDB's ExpressionWithUnit. */
function withUnit(spec: Doc, name: string, sort: SortShape, names: ReadonlySet<string>): { input: Expr; unitMs: number | undefined; bounds: WindowBounds | undefined } {
  if (sort.fields === undefined) fail(`${name} requires a sortBy`);
  if (sort.fields !== 1) fail(`${name} requires a non-compound sortBy`);
  let bounds: WindowBounds | undefined;
  for (const k of Object.keys(spec)) {
    if (k === 'window') bounds = parseWindow(spec[k], sort);
    else if (k !== name) fail(`${name} got unexpected argument: ${k}`);
  }
  const args = spec[name];
  if (!isPlainObject(args)) fail(`${name} expects an object, but got a ${typeName(args)}: ${name}: ${JSON.stringify(args)}`);
  let input: Expr | undefined;
  let unitMs: number | undefined;
  for (const [k, v] of Object.entries(args)) {
    if (k === 'input') input = compileExpression(v, names);
    else if (k === 'unit') {
      if (typeof v !== 'string') fail(`unit' must be a string, but got ${typeName(v)}`);
      const unit = parseTimeUnit(v);
      const ms = UNIT_MS[unit];
      if (ms === undefined) fail("unit must be 'week' or smaller");
      unitMs = ms;
    } else fail(`${name} got unexpected argument: ${k}`);
  }
  if (input === undefined) fail(`${name} requires an 'input' expression`);
  return { input, unitMs, bounds };
}

const derivative: Parser = (spec, name, sort, names) => {
  const { input, unitMs, bounds } = withUnit(spec, name, sort, names);
  if (bounds === undefined) fail('$derivative requires explicit window bounds');
  return {
    compute(p) {
      const { start, end } = windowsOf(bounds, p.docs.length, p.sortValues);
      const times = p.sortValues!;
      return p.docs.map((_d, i) => {
        const s = start[i]!;
        const e = end[i]!;
        if (s > e) return null;
        const t0 = times[s];
        const t1 = times[e];
        if (unitMs !== undefined) {
          if (!(t0 instanceof Date && t1 instanceof Date)) fail("$derivative with 'unit' expects the sortBy field to be a Date");
        } else {
          if (t0 instanceof Date || t1 instanceof Date) fail("$derivative where the sortBy is a Date requires an 'unit'");
          if (typeof t0 !== 'number' || typeof t1 !== 'number') fail("$derivative (with no 'unit') expects the sortBy field to be numeric");
        }
        const run = +(t1 as number | Date) - +(t0 as number | Date);
        const rise = difference(input(p.scopes[e]!), input(p.scopes[s]!));
        // A window of one document (the partition's first with [-1, 0]) has no run.
        if (run === 0) return null;
        const slope = rise / run;
        return unitMs === undefined ? slope : slope * unitMs;
      });
    },
  };
};

// $subtract's rules for the rise: numbers, or dates (milliseconds).
function difference(a: unknown, b: unknown): number {
  if (isNullish(a) || isNullish(b)) fail('$derivative input must not be null or missing');
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a instanceof Date && typeof b === 'number') return a.getTime() - b;
  return fail(`can't $subtract ${typeName(b)} from ${typeName(a)}`);
}

const integral: Parser = (spec, name, sort, names) => {
  const { input, unitMs, bounds } = withUnit(spec, name, sort, names);
  const window = bounds ?? WHOLE_PARTITION;
  const make: WindowAccumulatorFactory = () => {
    // The trapezoids between neighbouring points of the window; NaN points counted apart.
    const points: Array<[number, number, boolean]> = [];
    let head = 0;
    const area = new RemovableSum();
    let nan = 0;
    const trapezoid = (a: [number, number, boolean], b: [number, number, boolean]): number =>
      Number.isNaN(a[0]) || Number.isNaN(a[1]) || Number.isNaN(b[0]) || Number.isNaN(b[1]) ? 0 : ((b[0] - a[0]) * (a[1] + b[1])) / 2;
    const point = (v: unknown): [number, number, boolean] => {
      const [x, y] = v as [unknown, unknown];
      if (!(typeof y === 'number' && (typeof x === 'number' || x instanceof Date))) {
        fail('The input value of $integral window function must be a vector of 2 value, the first value must be numeric or date type and the second must be numeric.');
      }
      if (unitMs !== undefined && !(x instanceof Date)) fail("$integral with 'outputUnit' expects the sortBy field to be a Date");
      if (unitMs === undefined && typeof x !== 'number') fail("$integral (with no 'outputUnit') expects the sortBy field to be numeric");
      const t = +(x as number | Date);
      return [t, y, Number.isNaN(t) || Number.isNaN(y)];
    };
    return {
      add(v) {
        const pt = point(v);
        if (pt[2]) nan++;
        if (points.length > head) area.add(trapezoid(points[points.length - 1]!, pt));
        points.push(pt);
      },
      remove() {
        const pt = points[head++]!;
        if (pt[2]) nan--;
        if (points.length > head) area.remove(trapezoid(pt, points[head]!));
      },
      result() {
        if (points.length === head) return null;
        if (nan > 0) return NaN;
        return unitMs === undefined ? area.value : area.value / unitMs;
      },
    };
  };
  return {
    compute(p) {
      const times = p.sortValues!;
      return slide(p, window, lazy(p.docs.length, (i) => [times[i], input(p.scopes[i]!)]), make);
    },
  };
};

/** $expMovingAvg {input, N | alpha}: from the partition's start to the current document. */
const expMovingAvg: Parser = (spec, name, sort, names) => {
  const args = spec[name];
  if (Object.keys(spec).length !== 1 || !isPlainObject(args)) fail('$expMovingAvg must have exactly one argument that is an object');
  const shape = "$expMovingAvg sub object must have exactly two fields: An 'input' field, and either an 'N' field or an 'alpha' field";
  if (Object.keys(args).length !== 2 || !Object.hasOwn(args, 'input')) fail(shape);
  if (sort.fields === undefined) fail("$expMovingAvg requires an explicit 'sortBy'");
  const input = compileExpression(args['input'], names);
  let alpha: number;
  let n: number | undefined;
  if (Object.hasOwn(args, 'N')) {
    const count = args['N'];
    if (typeof count !== 'number') fail(`'N' field must be an integer, but found type ${typeName(count)}`);
    if (!Number.isInteger(count)) fail(`'N' field must be an integer, but found  N: ${count}. To use a non-integer, use the 'alpha' argument instead`);
    if (count <= 0) fail(`'N' must be greater than zero. Got ${count}`);
    alpha = 2 / (count + 1);
    n = args['N'] as number;
  } else if (Object.hasOwn(args, 'alpha')) {
    const a = args['alpha'];
    if (typeof a !== 'number') fail("'alpha' must be a number");
    if (!(a > 0 && a < 1)) fail(`'alpha' must be between 0 and 1 (exclusive), found alpha: ${a}`);
    alpha = a;
  } else return fail(`Got unrecognized field in $expMovingAvg${shape}`);
  return {
    compute(p) {
      let current: number | null = null;
      return p.scopes.map((scope) => {
        const v = input(scope);
        // With N, (2v + (N - 1) current) / (N + 1): one rounding, as close to MongoDB's decimal
        // arithmetic as a double gets (v * alpha + current * (1 - alpha) drifts in the last bit).
        if (typeof v === 'number') current = current === null ? v : n !== undefined ? (2 * v + (n - 1) * current) / (n + 1) : v * alpha + current * (1 - alpha);
        return current;
      });
    },
  };
};

/** `{$locf: <expr>}` and `{$linearFill: <expr>}`: no window (MongoDB's left-unbounded functions). */
function noWindow(spec: Doc): string {
  let fn: string | undefined;
  let window = false;
  for (const k of Object.keys(spec)) {
    if (k === 'window') window = true;
    else if (isWindowFunction(k)) {
      checkNoSecond(fn);
      fn = k;
    } else fail(`Window function found an unknown argument: ${k}`);
  }
  if (window) fail(`'window' field is not allowed in ${fn}`);
  return fn!;
}

/** $locf: the last non-null value so far in the partition (null before the first). */
const locf: Parser = (spec, name, _sort, names) => {
  noWindow(spec);
  const input = compileExpression(spec[name], names);
  return {
    compute(p) {
      let last: unknown = null;
      return p.scopes.map((scope) => {
        const v = input(scope);
        if (!isNullish(v)) last = v;
        return last;
      });
    },
  };
};

/** $linearFill: null and missing values interpolated between the nearest numbers around them. */
const linearFill: Parser = (spec, name, sort, names) => {
  noWindow(spec);
  if (sort.fields !== 1) fail(`${name} must be specified with a top level sortBy expression with exactly one element`);
  const input = compileExpression(spec[name], names);
  return { compute: (p) => linearFillPartition(p, input) };
};

/** MongoDB's WindowFunctionExecLinearFill over one partition. @throws QUERY_ERROR */
export function linearFillPartition(p: Partition, input: Expr): unknown[] {
  const n = p.docs.length;
  const xs = p.sortValues!;
  const ys = p.scopes.map((s) => input(s));
  // The next document with a value and a sortBy value, for each position (scanning backwards).
  const next = new Int32Array(n + 1).fill(-1);
  for (let i = n - 1; i >= 0; i--) next[i] = !isNullish(ys[i]) && !isNullish(xs[i]) ? i : next[i + 1]!;
  const out = new Array<unknown>(n);
  let previousX: unknown = MISSING;
  let left = -1;
  for (let i = 0; i < n; i++) {
    const y = ys[i];
    const x = xs[i];
    if (!(typeof y === 'number' || isNullish(y))) fail(`Value to be filled must be numeric or nullish, but found ${typeName(y)}`);
    if (!(typeof x === 'number' || x instanceof Date)) fail(`Value of the sortBy field must be numeric or a date, but found ${typeName(x)}`);
    if (previousX !== MISSING) {
      if (+(previousX as number | Date) === +x && (previousX instanceof Date) === (x instanceof Date)) fail('There can be no repeated values in the sort field');
      if ((previousX instanceof Date) !== (x instanceof Date)) fail(`Conflicting sort value types, previously received type ${typeName(previousX)}, but found ${typeName(x)}`);
    }
    previousX = x;
    if (!isNullish(y)) {
      left = i;
      out[i] = y;
      continue;
    }
    const right = next[i + 1]!;
    if (left < 0 || right < 0) {
      out[i] = null;
      continue;
    }
    const x1 = +(xs[left] as number | Date);
    const x2 = +(xs[right] as number | Date);
    const y1 = ys[left] as number;
    const y2 = ys[right] as number;
    out[i] = y1 + (+x - x1) * ((y2 - y1) / (x2 - x1));
  }
  return out;
}

// MongoDB parses $minMaxScaler's specification with IDL (window_function_expression.idl, context
// "root"): its messages name the field by its path from there.
const IDL_ROOT = 'root';

/** A bound as MongoDB writes it in $minMaxScaler's messages (C++'s std::to_string of a double). */
function boundText(n: number): string {
  return n.toFixed(6);
}

/**
 * `{$minMaxScaler: {input, min, max} | <input>, window}` (MongoDB 8.2): for each document,
 * ((x - wmin) / (wmax - wmin)) * (max - min) + min, with wmin and wmax the least and greatest
 * input in its window; `min` when they are equal (MongoDB's min_max_scaler::computeResult, which
 * avoids the division by zero). Every input must be a number; the window must hold the current
 * document. Checked in MongoDB's order: the specification's shape, the window, then min and max.
 */
const minMaxScaler: Parser = (spec, name, sort, names) => {
  let bounds = WHOLE_PARTITION;
  for (const k of Object.keys(spec)) {
    if (k !== name && k !== 'window') fail(`BSON field '${IDL_ROOT}.${k}' is an unknown field.`);
  }
  const arg = spec[name];
  // The manual's short form, `{$minMaxScaler: <numeric expression>}`: the input alone (an object
  // whose first field is an operator is an expression, as everywhere else).
  const args: Doc = isPlainObject(arg) && !Object.keys(arg)[0]?.startsWith('$') ? arg : { input: arg };
  for (const k of Object.keys(args)) {
    if (k !== 'input' && k !== 'min' && k !== 'max') fail(`BSON field '${IDL_ROOT}.${name}.${k}' is an unknown field.`);
  }
  if (!Object.hasOwn(args, 'input')) fail(`BSON field '${IDL_ROOT}.${name}.input' is missing but a required field`);
  if (Object.hasOwn(spec, 'window')) {
    if (!isPlainObject(spec['window'])) fail(`BSON field '${IDL_ROOT}.window' is the wrong type '${typeName(spec['window'])}', expected type 'object'`);
    bounds = parseWindow(spec['window'], sort);
    // The current document must be in its own window: the scaled value lies between the window's.
    const within = ' (the current doc), as $minMaxScaler must ensure that the current document being processed is always within the configured window.';
    if (typeof bounds.lower === 'number' && bounds.lower > 0) fail(`Lower specified bound cannot be greater than 0${within} Lower specified bound = ${boundText(bounds.lower)}`);
    if (typeof bounds.upper === 'number' && bounds.upper < 0) fail(`Upper specified bound cannot be less than 0${within} Upper specified bound = ${boundText(bounds.upper)}`);
  }
  const input = compileExpression(args['input'], names);
  if (Object.hasOwn(args, 'min') !== Object.hasOwn(args, 'max')) {
    fail("Only one of 'min' and 'max' were specified as an argument to $minMaxScaler. Neither or both must be specified");
  }
  const constant = (arg: 'min' | 'max', fallback: number): number => {
    if (!Object.hasOwn(args, arg)) return fallback;
    const c = constantValue(args[arg], (e) => compileExpression(e));
    if (c === undefined) fail(`'${arg}' argument to $minMaxScaler must be a constant`);
    if (typeof c.value !== 'number') fail(`'${arg}' argument to $minMaxScaler must be a numeric type`);
    return c.value;
  };
  const sMin = constant('min', 0);
  const sMax = constant('max', 1);
  if (!(compareValues(sMin, sMax) < 0)) fail("the 'max' must be strictly greater than 'min', as arguments to $minMaxScaler");
  return {
    compute(p) {
      const value = lazyValues(p, input);
      for (let i = 0; i < p.docs.length; i++) {
        const v = value(i);
        if (typeof v !== 'number') fail(`'input' argument to $minMaxScaler must evaluate to a numeric type, got: ${typeName(v)}`);
      }
      // Each window's least and greatest input, slid as $min and $max are.
      const lows = slide(p, bounds, value, WINDOW_ACCUMULATORS['$min']!);
      const highs = slide(p, bounds, value, WINDOW_ACCUMULATORS['$max']!);
      return p.docs.map((_d, i) => {
        const x = value(i) as number;
        const lo = lows[i] as number;
        const hi = highs[i] as number;
        if (compareValues(lo, hi) === 0) return sMin;
        return ((x - lo) / (hi - lo)) * (sMax - sMin) + sMin;
      });
    },
  };
};

/** The N functions and percentiles (window-n-functions.ts), sliding as the accumulators do. */
const nFunction: Parser = (spec, name, sort, names) => {
  const fn = parseNWindowFunction(spec, name, sort, names);
  return {
    paths: fn.paths,
    compute: (p) => fn.compute(p, (q, bounds, value, make) => slide(p, bounds, lazy(q.docs.length, value), make)),
  };
};

const PARSERS: Readonly<Record<string, Parser>> = {
  ...Object.fromEntries(['$sum', '$avg', '$min', '$max', '$count', '$push', '$addToSet', '$stdDevPop', '$stdDevSamp', '$covariancePop', '$covarianceSamp', '$mergeObjects'].map((n) => [n, accumulator])),
  $first: endpoint,
  $last: endpoint,
  $rank: rank,
  $denseRank: rank,
  $documentNumber: rank,
  $shift: shift,
  $derivative: derivative,
  $integral: integral,
  $expMovingAvg: expMovingAvg,
  $locf: locf,
  $linearFill: linearFill,
  ...Object.fromEntries(N_WINDOW_FUNCTIONS.map((n) => [n, nFunction])),
  $minMaxScaler: minMaxScaler,
};

function isWindowFunction(name: string): boolean {
  return Object.hasOwn(PARSERS, name);
}

/** Parses one output field's window function (`{$sum: "$x", window: {...}}`). @throws QUERY_ERROR */
export function parseWindowFunction(field: string, spec: unknown, sort: SortShape, names: ReadonlySet<string>): WindowFunction {
  if (!isPlainObject(spec)) fail(`The field '${field}' must be an object`);
  const keys = Object.keys(spec);
  const name = keys.find((k) => k.startsWith('$'));
  if (name === undefined) fail(`Expected a $-prefixed window function${keys.length > 0 ? `, ${keys[0]}` : ''}`);
  if (!isWindowFunction(name)) fail(`Unrecognized window function, ${name}`);
  return PARSERS[name]!(spec, name, sort, names);
}
