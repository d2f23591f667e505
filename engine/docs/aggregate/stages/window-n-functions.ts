/**
 * The N window functions ($firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN) and the
 * percentiles ($percentile, $median) of $setWindowFields, parsed as MongoDB's ExpressionN and
 * ExpressionQuantile (window_function_expression.cpp): `{<fn>: <args as the accumulator's>,
 * window}`, `n` a constant (it is evaluated on an empty document, so a field path is missing and
 * refused).
 * - $firstN/$lastN read the first (last) n positions of each window directly: O(n) per document.
 * - The others keep the window's values sorted (SortedBag), so a sliding window costs one insertion
 *   and one removal per document (MongoDB's removable states keep a sorted multiset too); entries
 *   that enter together are sorted once and merged, so a window that only grows (the whole
 *   partition) costs one sort. $topN/$bottomN over a window that starts at the partition's first
 *   document use the $group accumulator instead, as MongoDB does: with ties in sortBy, which
 *   documents a full $bottomN keeps depends on their arrival (accumulator-n.ts), and a sorted
 *   window would keep the later ones.
 * Empty windows give [] (null for $top, $bottom and $median, null per p for $percentile).
 */

import type { CompiledSort } from '../../sort.js';
import { compareValues, MISSING, type Doc } from '../../values.js';
import { isBottom, isSingle, parseNInput, parseTopBottom, topBottomN, validateN, type Keyed } from '../expression/accumulator-n.js';
import { isNullish, Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { countsForPercentile, parsePercentile, sortedPercentileResult, type PercentileSpec } from '../expression/percentile.js';
import { stageError } from '../stage.js';
import type { WindowAccumulatorFactory } from './window-accumulators.js';
import { leftUnbounded, parseWindow, WHOLE_PARTITION, windowsOf, type SortShape, type WindowBounds } from './window-bounds.js';

const STAGE = '$setWindowFields';

/** A partition as these functions read it (window-functions.ts's Partition). */
interface PartitionView {
  readonly docs: readonly Doc[];
  readonly scopes: readonly Scope[];
  readonly sortValues: readonly unknown[] | undefined;
}

/** How the caller slides an accumulator over a partition's windows (window-functions.ts). */
export type Slide = (p: PartitionView, bounds: WindowBounds, value: (i: number) => unknown, make: WindowAccumulatorFactory) => unknown[];

/** A parsed N or percentile window function. */
export interface NWindowFunction {
  compute(p: PartitionView, slide: Slide): unknown[];
  /** Fields it reads besides its expressions' (a sortBy's). */
  readonly paths: readonly string[];
}

/**
 * Values kept in order with insertions batched: added entries wait unsorted until the order is
 * read or an entry leaves, then are sorted and merged in at once.
 */
class SortedBag<T> {
  #sorted: T[] = [];
  #pending: T[] = [];
  readonly #compare: (a: T, b: T) => number;

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare;
  }

  add(v: T): void {
    this.#pending.push(v);
  }

  /** Removes the entry equal to `v` (entries are told apart by their position). */
  remove(v: T): void {
    this.#flush();
    const at = this.#lowerBound(v);
    if (at < this.#sorted.length && this.#compare(this.#sorted[at]!, v) === 0) this.#sorted.splice(at, 1);
  }

  get sorted(): readonly T[] {
    this.#flush();
    return this.#sorted;
  }

  #lowerBound(v: T): number {
    let lo = 0;
    let hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#compare(this.#sorted[mid]!, v) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #flush(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    // One entry (a sliding window's step): a binary insertion; many: a sort and a merge.
    if (pending.length === 1) {
      this.#sorted.splice(this.#lowerBound(pending[0]!), 0, pending[0]!);
      return;
    }
    pending.sort(this.#compare);
    const a = this.#sorted;
    const out: T[] = new Array<T>(a.length + pending.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < a.length && j < pending.length) out[k++] = this.#compare(a[i]!, pending[j]!) <= 0 ? a[i++]! : pending[j++]!;
    while (i < a.length) out[k++] = a[i++]!;
    while (j < pending.length) out[k++] = pending[j++]!;
    this.#sorted = out;
  }
}

/** A value with its position in the partition, which tells equal values apart. */
interface At<T> {
  readonly v: T;
  readonly i: number;
}

function minMaxN(n: number, max: boolean): WindowAccumulatorFactory {
  return () => {
    const bag = new SortedBag<At<unknown>>((a, b) => compareValues(a.v, b.v) || a.i - b.i);
    return {
      add: (v, i) => void (!isNullish(v) && bag.add({ v, i })),
      remove: (v, i) => void (!isNullish(v) && bag.remove({ v, i })),
      result() {
        const s = bag.sorted;
        return max ? s.slice(Math.max(0, s.length - n)).reverse().map((e) => e.v) : s.slice(0, n).map((e) => e.v);
      },
    };
  };
}

// A sliding window's $topN/$bottomN: every document of the window in sort order (ties by
// position), the first n for $topN, the last n for $bottomN (MongoDB's removable state).
function removableTopBottom(n: number, bottom: boolean, single: boolean, sort: CompiledSort): WindowAccumulatorFactory {
  return () => {
    const bag = new SortedBag<At<Keyed>>((a, b) => sort.compareKeyed(a.v.key, b.v.key) || a.i - b.i);
    return {
      add: (v, i) => bag.add({ v: v as Keyed, i }),
      remove: (v, i) => bag.remove({ v: v as Keyed, i }),
      result() {
        const s = bag.sorted;
        const kept = (bottom ? s.slice(Math.max(0, s.length - n)) : s.slice(0, n)).map((e) => (e.v.out === MISSING ? null : e.v.out));
        return single ? (kept[0] ?? null) : kept;
      },
    };
  };
}

// The $group accumulator over a window that only grows (nothing is ever removed from it).
function growingTopBottom(n: number, bottom: boolean, single: boolean, sort: CompiledSort): WindowAccumulatorFactory {
  return () => {
    const acc = topBottomN(n, bottom, single, sort);
    return {
      add: (v) => acc.add(v),
      remove: () => {
        throw new Error('a window starting at the partition start has nothing to remove');
      },
      result: () => acc.result(),
    };
  };
}

function percentile(spec: PercentileSpec): WindowAccumulatorFactory {
  return () => {
    const bag = new SortedBag<number>((a, b) => a - b);
    return {
      add: (v) => void (countsForPercentile(v) && bag.add(v)),
      remove: (v) => void (countsForPercentile(v) && bag.remove(v)),
      result() {
        const s = bag.sorted;
        if (s.length === 0) return spec.median ? null : spec.ps.map(() => null);
        return sortedPercentileResult(spec, s);
      },
    };
  };
}

/** The `window` of the spec (default: the whole partition); any other field is refused. */
function boundsOf(spec: Doc, name: string, sort: SortShape): WindowBounds {
  let bounds = WHOLE_PARTITION;
  for (const k of Object.keys(spec)) {
    if (k === 'window') bounds = parseWindow(spec[k], sort);
    else if (k !== name) stageError(STAGE, `${name} got unexpected argument: ${k}`);
  }
  return bounds;
}

// `n` is evaluated on an empty document with no variables, as MongoDB's ExpressionN does.
function constantN(spec: unknown, name: string, names: ReadonlySet<string>): number {
  return validateN(compileExpression(spec, names)(Scope.of({})), name);
}

// $firstN/$lastN: the values at the first (last) n positions of each window, missing as null.
function firstLastN(n: number, last: boolean, bounds: WindowBounds, input: Expr): NWindowFunction {
  return {
    paths: [],
    compute(p) {
      const { start, end } = windowsOf(bounds, p.docs.length, p.sortValues);
      const out = new Array<unknown>(p.docs.length);
      for (let i = 0; i < out.length; i++) {
        const s = start[i]!;
        const e = end[i]!;
        if (i > 0 && s === start[i - 1] && e === end[i - 1]) {
          out[i] = out[i - 1];
          continue;
        }
        const from = last ? Math.max(s, e - n + 1) : s;
        const to = last ? e : Math.min(e, s + n - 1);
        const values: unknown[] = [];
        for (let j = from; j <= to; j++) {
          const v = input(p.scopes[j]!);
          values.push(v === MISSING ? null : v);
        }
        out[i] = values;
      }
      return out;
    },
  };
}

/** Parses one of these window functions (`name` is in N_WINDOW_FUNCTIONS). @throws QUERY_ERROR */
export function parseNWindowFunction(spec: Doc, name: string, sort: SortShape, names: ReadonlySet<string>): NWindowFunction {
  const bounds = boundsOf(spec, name, sort);
  const args = spec[name];
  if (name === '$percentile' || name === '$median') {
    const q = parsePercentile(args, name, (e) => compileExpression(e, names));
    const input = compileExpression(q.input, names);
    const make = percentile(q);
    return { paths: [], compute: (p, slide) => slide(p, bounds, (i) => input(p.scopes[i]!), make) };
  }
  if (name === '$firstN' || name === '$lastN' || name === '$minN' || name === '$maxN') {
    const a = parseNInput(args, name);
    const input = compileExpression(a.input, names);
    const n = constantN(a.n, name, names);
    if (name === '$firstN' || name === '$lastN') return firstLastN(n, name === '$lastN', bounds, input);
    const make = minMaxN(n, name === '$maxN');
    return { paths: [], compute: (p, slide) => slide(p, bounds, (i) => input(p.scopes[i]!), make) };
  }
  const t = parseTopBottom(args, name);
  const output = compileExpression(t.output, names);
  const n = constantN(t.n, name, names);
  const make = (leftUnbounded(bounds) ? growingTopBottom : removableTopBottom)(n, isBottom(name), isSingle(name), t.sort);
  return {
    paths: t.sort.keys.map((k) => k.path),
    compute: (p, slide) => slide(p, bounds, (i): Keyed => ({ key: t.sort.keyOf(p.docs[i]), out: output(p.scopes[i]!) }), make),
  };
}

/** The window functions this file parses. */
export const N_WINDOW_FUNCTIONS: readonly string[] = ['$firstN', '$lastN', '$minN', '$maxN', '$top', '$bottom', '$topN', '$bottomN', '$percentile', '$median'];
