/**
 * $percentile and $median (manual: $percentile, $median; MongoDB 7.0+, `discrete` and `continuous`
 * 7.2+), parsed with MongoDB's rules and messages (accumulator_percentile.cpp and its IDL spec):
 * `{input, p, method}` for $percentile (`p` a constant array of numbers in [0, 1]), `{input,
 * method}` for $median (p = 0.5). Only numbers count (NaN is skipped, infinities sort at the ends);
 * results are doubles, null for each p when no number came in.
 * - `discrete`: the value at 0-based rank ceil(n * p) - 1 (0 for p = 0, n - 1 for p = 1) of the
 *   sorted numbers, MongoDB's DiscretePercentile;
 * - `continuous`: rank p * (n - 1), interpolated linearly between its neighbours;
 * - `approximate`: MongoDB computes it with a t-digest, which holds one centroid per value until
 *   the digest compresses (thousands of values), so on small inputs it is exactly the discrete
 *   percentile, and MongoDB's expression and window forms compute it as the discrete one. Here it
 *   is the discrete percentile at every size: exact where MongoDB's estimate may be off by its
 *   t-digest's error on large inputs.
 * Also the expression forms over an array (a number is every percentile of itself).
 */

import { bsonTypeOf, describeValue, isPlainObject } from '../../values.js';
import { constantValue } from './constant.js';
import { exprError, type Expr, type ExprOperator } from './expression.js';

export type PercentileMethod = 'approximate' | 'discrete' | 'continuous';

const METHODS: readonly string[] = ['approximate', 'discrete', 'continuous'];

/** A parsed $percentile or $median: `median` gives one value instead of an array. */
export interface PercentileSpec {
  readonly input: unknown;
  readonly ps: readonly number[];
  readonly method: PercentileMethod;
  readonly median: boolean;
}

const P_RANGE = "The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: ";

// MongoDB's parseP: a constant expression giving a non-empty array of numbers in [0, 1].
function parseP(spec: unknown, name: string, compile: (spec: unknown) => Expr): number[] {
  const c = constantValue(spec, compile);
  if (c === undefined) exprError(name, `The $percentile 'p' field must be an array of constant values, but found value: ${describeValue(spec)}.`);
  const values = c.value;
  if (!Array.isArray(values) || values.length === 0) exprError(name, `${P_RANGE}${describeValue(values)}`);
  return values.map((p) => {
    if (typeof p !== 'number') exprError(name, `${P_RANGE}${describeValue(p)}`);
    // NaN is no percentile (a comparison with it is false either way).
    if (!(p >= 0 && p <= 1)) exprError(name, `${P_RANGE}${p}`);
    return p;
  });
}

/** Parses `{input, p, method}` ($percentile) or `{input, method}` ($median). @throws QUERY_ERROR */
export function parsePercentile(spec: unknown, name: string, compile: (spec: unknown) => Expr): PercentileSpec {
  if (!isPlainObject(spec)) exprError(name, `specification must be an object; found ${name}: ${describeValue(spec)}`);
  const median = name === '$median';
  const fields = median ? ['input', 'method'] : ['input', 'p', 'method'];
  // As MongoDB's IDL parser: each field checked where it stands, then the missing ones.
  for (const [k, v] of Object.entries(spec)) {
    if (!fields.includes(k)) exprError(name, `BSON field '${name}.${k}' is an unknown field.`);
    if (k === 'method') {
      if (typeof v !== 'string') exprError(name, `BSON field '${name}.method' is the wrong type '${bsonTypeOf(v)}', expected type 'string'`);
      if (!METHODS.includes(v)) exprError(name, "Currently only 'approximate', 'discrete', and 'continuous' can be used as percentile 'method'.");
    }
  }
  for (const k of fields) if (!Object.hasOwn(spec, k)) exprError(name, `BSON field '${name}.${k}' is missing but a required field`);
  const ps = median ? [0.5] : parseP(spec['p'], name, compile);
  return { input: spec['input'], ps, method: spec['method'] as PercentileMethod, median };
}

/** True for the values percentiles count: numbers other than NaN. */
export function countsForPercentile(v: unknown): v is number {
  return typeof v === 'number' && !Number.isNaN(v);
}

/** The percentile `p` of `sorted` (ascending, not empty), as MongoDB computes it for `method`. */
export function percentileOf(sorted: ArrayLike<number>, p: number, method: PercentileMethod): number {
  const n = sorted.length;
  if (method !== 'continuous') return sorted[p >= 1 ? n - 1 : Math.max(0, Math.ceil(n * p) - 1)]!;
  const rank = p * (n - 1);
  // Infinities are counted apart in MongoDB: a rank among them is that infinity, never an
  // interpolation with one (which could give NaN between -Infinity and Infinity).
  let negInf = 0;
  while (negInf < n && sorted[negInf] === -Infinity) negInf++;
  let posInf = 0;
  while (posInf < n - negInf && sorted[n - 1 - posInf] === Infinity) posInf++;
  if (rank < negInf) return -Infinity;
  if (rank > n - posInf - 1) return Infinity;
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  if (lo === hi) return sorted[lo]!;
  return (hi - rank) * sorted[lo]! + (rank - lo) * sorted[hi]!;
}

/** The result for the numbers `values` (any order): an array for $percentile, a value for $median. */
export function percentileResult(spec: PercentileSpec, values: readonly number[]): unknown {
  if (values.length === 0) return spec.median ? null : spec.ps.map(() => null);
  const sorted = Float64Array.from(values).sort();
  return sortedPercentileResult(spec, sorted);
}

/** As percentileResult, for numbers already sorted ascending (not empty). */
export function sortedPercentileResult(spec: PercentileSpec, sorted: ArrayLike<number>): unknown {
  const out = spec.ps.map((p) => percentileOf(sorted, p, spec.method));
  return spec.median ? out[0] : out;
}

// The expression forms (MongoDB's ExpressionFromAccumulatorQuantile): a number is each of its
// percentiles; an array's numbers are the data; anything else has no numbers.
const quantileExpression: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const spec = parsePercentile(args, name, (e) => ctx.compile(e));
    const input = ctx.compile(spec.input);
    return (scope) => {
      const v = input(scope);
      if (typeof v === 'number') return spec.median ? v : spec.ps.map(() => v);
      return percentileResult(spec, Array.isArray(v) ? v.filter(countsForPercentile) : []);
    };
  },
};

export const percentileOperators: Record<string, ExprOperator> = {
  $percentile: quantileExpression,
  $median: quantileExpression,
};
