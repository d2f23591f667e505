/**
 * The N accumulators (manual: $firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN;
 * MongoDB 5.2+), parsed with MongoDB's rules and messages (accumulator_multi.cpp), and computed as
 * MongoDB's accumulators compute them: each keeps at most `n` values, so a group's memory is
 * bounded by `n` whatever its size.
 * - $firstN/$lastN keep the first (last) n inputs, missing as null;
 * - $minN/$maxN keep the n smallest (largest) in BSON order, null and missing skipped; results
 *   ascending for $minN, descending for $maxN;
 * - $topN/$bottomN keep the outputs of the n documents first (last) in `sortBy` order, a find sort
 *   (sort.ts), missing outputs as null; results in sort order. When the set is full, a document
 *   enters only if it sorts strictly before the last kept ($topN) or strictly after the first
 *   kept ($bottomN): ties keep what came first, and the one that leaves is, among ties, the
 *   latest ($topN) or earliest ($bottomN) kept, as MongoDB's multimap does;
 * - $top/$bottom are $topN/$bottomN with n = 1 and give the value itself.
 * Also the expression forms of $firstN, $lastN, $minN and $maxN over an array (`{n, input}`).
 */

import { compileSort, sortKeyFromData, sortKeyToData, type CompiledSort } from '../../sort.js';
import { compareValues, describeValue, isPlainObject, MISSING } from '../../values.js';
import { approxBytes } from '../stage.js';
import { exprError, isNullish, type ExprOperator } from './expression.js';
import { BinaryHeap } from '../../binary-heap.js';

/** The largest n: a 64-bit integer (MongoDB coerces n to a long). */
const MAX_N = 2 ** 63;

/** A value as MongoDB's Value::toString writes it in these messages. */
function shown(v: unknown): string {
  if (v === MISSING || v === undefined) return 'MISSING';
  if (typeof v === 'string') return `"${v}"`;
  return describeValue(v);
}

/** An element as MongoDB's messages write it: `name: value`. */
function element(name: string, v: unknown): string {
  return `${name}: ${shown(v)}`;
}

/** MongoDB's AccumulatorN::validateN: a positive integer. @throws QUERY_ERROR */
export function validateN(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) >= MAX_N) exprError(name, `Value for 'n' must be of integral type, but found ${shown(v)}`);
  if (v <= 0) exprError(name, `'n' must be greater than 0, found ${v}`);
  return v;
}

/** `{n, input}` of $firstN, $lastN, $minN and $maxN (AccumulatorN::parseArgs). @throws QUERY_ERROR */
export function parseNInput(spec: unknown, name: string): { n: unknown; input: unknown } {
  if (!isPlainObject(spec)) exprError(name, `specification must be an object; found ${element(name, spec)}`);
  for (const k of Object.keys(spec)) if (k !== 'n' && k !== 'input') exprError(name, `Unknown argument for 'n' operator: ${k}`);
  if (!Object.hasOwn(spec, 'n')) exprError(name, "Missing value for 'n'");
  if (!Object.hasOwn(spec, 'input')) exprError(name, "Missing value for 'input'");
  return { n: spec['n'], input: spec['input'] };
}

/** A parsed $top, $bottom, $topN or $bottomN. */
export interface TopBottomSpec {
  readonly n: unknown;
  readonly output: unknown;
  readonly sort: CompiledSort;
}

/** True for $top and $bottom (n is 1, the result a value). */
export function isSingle(name: string): boolean {
  return name === '$top' || name === '$bottom';
}

/** True for $bottom and $bottomN. */
export function isBottom(name: string): boolean {
  return name === '$bottom' || name === '$bottomN';
}

// MongoDB's SortPattern messages for a sortBy; $meta has no meaning without text search here.
function checkSortBy(sortBy: Record<string, unknown>, name: string): void {
  if (Object.keys(sortBy).length === 0) exprError(name, `${name} requires a non-empty 'sortBy'`);
  for (const [k, v] of Object.entries(sortBy)) {
    if (isPlainObject(v)) exprError(name, `unsupported: $meta sort in ${name}'s sortBy ('${k}')`);
    if (typeof v !== 'number') exprError(name, `Illegal key in $sort specification: ${element(k, v)}`);
    if (Math.trunc(v) !== 1 && Math.trunc(v) !== -1) exprError(name, '$sort key ordering must be 1 (for ascending) or -1 (for descending)');
  }
}

/** `{n, output, sortBy}` (no n for $top/$bottom), checked as accumulatorNParseArgs. @throws QUERY_ERROR */
export function parseTopBottom(spec: unknown, name: string): TopBottomSpec {
  if (!isPlainObject(spec)) exprError(name, `specification must be an object; found ${element(name, spec)}`);
  const single = isSingle(name);
  for (const [k, v] of Object.entries(spec)) {
    if (k === 'sortBy') {
      if (!isPlainObject(v)) exprError(name, 'invalid parameter: expected an object (sortBy)');
    } else if (k !== 'output' && (single || k !== 'n')) exprError(name, `Unknown argument to ${name} '${k}'`);
  }
  if (!single && !Object.hasOwn(spec, 'n')) exprError(name, "Missing value for 'n'");
  if (!Object.hasOwn(spec, 'output')) exprError(name, "Missing value for 'output'");
  if (!Object.hasOwn(spec, 'sortBy')) exprError(name, "Missing value for 'sortBy'");
  const sortBy = spec['sortBy'] as Record<string, unknown>;
  checkSortBy(sortBy, name);
  // Directions given as 1.0 or -1.5 are MongoDB's 1 and -1 (it takes the long value).
  const normalized = Object.fromEntries(Object.entries(sortBy).map(([k, v]) => [k, Math.trunc(v as number)]));
  return { n: single ? 1 : spec['n'], output: spec['output'], sort: compileSort(normalized) };
}

/** A bounded accumulator's running state for one group or window; `bytes`: what it holds. */
export interface NAccumulator {
  add(v: unknown): void;
  result(): unknown;
  readonly bytes: number;
  /**
   * What it keeps, as plain data, in the order it took them: adding these to another accumulator
   * (of a later stretch of input: $group's spilled runs) gives the state both stretches would have.
   */
  state(): unknown[];
  /** Takes in state() of an accumulator that saw the input after this one's. */
  merge(state: readonly unknown[]): void;
}

/** $firstN: the first n inputs, missing as null. */
export function firstN(n: number): NAccumulator {
  const out: unknown[] = [];
  let bytes = 0;
  return {
    add(v) {
      if (out.length >= n) return;
      const x = v === MISSING ? null : v;
      out.push(x);
      bytes += approxBytes(x);
    },
    result: () => [...out],
    get bytes() {
      return bytes;
    },
    state: () => [...out],
    merge(state) {
      for (const v of state) this.add(v);
    },
  };
}

/** $lastN: the last n inputs, missing as null (a window of n that slides over an array). */
export function lastN(n: number): NAccumulator {
  let kept: unknown[] = [];
  let head = 0;
  let bytes = 0;
  return {
    add(v) {
      const x = v === MISSING ? null : v;
      kept.push(x);
      bytes += approxBytes(x);
      if (kept.length - head > n) bytes -= approxBytes(kept[head++]);
      // Compact once the dropped part dominates (amortized O(1)).
      if (head > 1024 && head * 2 > kept.length) {
        kept = kept.slice(head);
        head = 0;
      }
    },
    result: () => kept.slice(head),
    get bytes() {
      return bytes;
    },
    state: () => kept.slice(head),
    merge(state) {
      for (const v of state) this.add(v);
    },
  };
}

/** $minN (sign -1) and $maxN (sign 1): the n extreme values, null and missing skipped. */
export function extremeN(n: number, sign: 1 | -1): NAccumulator {
  // The root is the kept value nearest to leaving: the largest for $minN, the smallest for $maxN.
  const heap = new BinaryHeap<unknown>((a, b) => sign * compareValues(a, b) < 0);
  let bytes = 0;
  return {
    add(v) {
      if (isNullish(v)) return;
      if (heap.size < n) heap.push(v);
      else if (sign * compareValues(v, heap.root) > 0) {
        bytes -= approxBytes(heap.root);
        heap.replaceRoot(v);
      } else return;
      bytes += approxBytes(v);
    },
    result: () => [...heap.items].sort((a, b) => -sign * compareValues(a, b)),
    get bytes() {
      return bytes;
    },
    state: () => [...heap.items],
    merge(state) {
      for (const v of state) this.add(v);
    },
  };
}

/** What $topN and the like take from each document: its sort key and its output. */
export interface Keyed {
  readonly key: readonly unknown[];
  readonly out: unknown;
}

/** $topN/$bottomN (and $top/$bottom with n = 1, `single`): see the file comment for ties. */
export function topBottomN(n: number, bottom: boolean, single: boolean, sort: CompiledSort): NAccumulator {
  interface Entry extends Keyed {
    readonly seq: number;
  }
  const order = (a: Entry, b: Entry): number => sort.compareKeyed(a.key, b.key) || a.seq - b.seq;
  // The root is the entry that leaves first: the last in order for $topN, the first for $bottomN.
  const heap = new BinaryHeap<Entry>((a, b) => (bottom ? order(a, b) < 0 : order(a, b) > 0));
  let seq = 0;
  let bytes = 0;
  return {
    add(v) {
      const { key, out } = v as Keyed;
      const entry: Entry = { key, out: out === MISSING ? null : out, seq: seq++ };
      if (heap.size < n) heap.push(entry);
      else {
        const c = sort.compareKeyed(key, heap.root.key);
        if (bottom ? c <= 0 : c >= 0) return;
        bytes -= approxBytes(heap.root.out) + approxBytes(heap.root.key);
        heap.replaceRoot(entry);
      }
      bytes += approxBytes(entry.out) + approxBytes(key);
    },
    result() {
      const outs = [...heap.items].sort(order).map((e) => e.out);
      return single ? (outs[0] ?? null) : outs;
    },
    get bytes() {
      return bytes;
    },
    // In input order (seq), so ties keep ranking the earlier input first after a merge; keys as data.
    state: () => [...heap.items].sort((a, b) => a.seq - b.seq).map((e) => [sortKeyToData(e.key), e.out]),
    merge(state) {
      for (const item of state) {
        const [key, out] = item as [unknown[], unknown];
        this.add({ key: sortKeyFromData(key), out });
      }
    },
  };
}

/** The accumulator $firstN, $lastN, $minN or $maxN names, for n values. */
export function nAccumulator(name: string, n: number): NAccumulator {
  switch (name) {
    case '$firstN':
      return firstN(n);
    case '$lastN':
      return lastN(n);
    case '$minN':
      return extremeN(n, -1);
    case '$maxN':
      return extremeN(n, 1);
    default:
      throw new Error(`not an N accumulator: ${name}`);
  }
}

// The expression forms: the accumulator over the elements of an array (MongoDB's
// ExpressionFromAccumulatorN); anything else, null and missing included, is an error.
const arrayForm: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const spec = parseNInput(args, name);
    const n = ctx.compile(spec.n);
    const input = ctx.compile(spec.input);
    return (scope) => {
      const acc = nAccumulator(name, validateN(n(scope), name));
      const list = input(scope);
      if (!Array.isArray(list)) exprError(name, 'Input must be an array');
      for (const el of list) acc.add(el);
      return acc.result();
    };
  },
};

export const accumulatorNOperators: Record<string, ExprOperator> = {
  $firstN: arrayForm,
  $lastN: arrayForm,
  $minN: arrayForm,
  $maxN: arrayForm,
};
