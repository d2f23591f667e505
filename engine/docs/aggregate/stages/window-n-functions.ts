/**
 * The N window functions ($firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN) and the
 * percentiles ($percentile, $median) of $setWindowFields, parsed as MongoDB's ExpressionN and
 * ExpressionQuantile (window_function_expression.cpp): `{<fn>: <args as the accumulator's>,
 * window}`, `n` a constant (it is evaluated on an empty document, so a field path is missing and
 * refused).
 * - $firstN/$lastN keep the values of the first (last) n positions of each window, a window of
 *   their own that slides with it (its start and end never go down either).
 * - The others keep the window's values sorted (SortedBag), so a sliding window costs one insertion
 *   and one removal per document (MongoDB's removable states keep a sorted multiset too); entries
 *   that enter together are sorted once and merged, so a window that only grows (the whole
 *   partition) costs one sort. Over a window that starts at the partition's first document
 *   (nothing leaves it), $minN/$maxN keep their n values only, and $topN/$bottomN use the $group
 *   accumulator, as MongoDB does: with ties in sortBy, which documents a full $bottomN keeps
 *   depends on their arrival (accumulator-n.ts), and a sorted window would keep the later ones.
 *   The percentiles keep every number of the window (as MongoDB's do).
 * Empty windows give [] (null for $top, $bottom and $median, null per p for $percentile).
 */

import type { CompiledSort } from '../../sort.js';
import { compareValues, MISSING, type Doc } from '../../values.js';
import { extremeN, isBottom, isSingle, parseNInput, parseTopBottom, topBottomN, validateN, type Keyed, type NAccumulator } from '../expression/accumulator-n.js';
import { isNullish, Scope } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { countsForPercentile, parsePercentile, sortedPercentileResult, type PercentileSpec } from '../expression/percentile.js';
import { approxBytes, stageError } from '../stage.js';
import { positionalValues, type WindowAccumulator, type WindowAccumulatorFactory } from './window-accumulators.js';
import { specWindow, WHOLE_PARTITION, type SortShape, type WindowBounds } from './window-bounds.js';
import type { WindowEntry } from './window-partition.js';

const STAGE = '$setWindowFields';

/** A parsed N or percentile window function: an accumulator that window-functions.ts slides over its windows. */
export interface NWindowFunction {
  readonly bounds: WindowBounds;
  /** What a document brings into a window. */
  value(e: WindowEntry): unknown;
  readonly make: WindowAccumulatorFactory;
  /** $firstN/$lastN: only the first (last) n positions of each window count. */
  readonly cap?: { readonly n: number; readonly last: boolean };
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

/** Bytes an entry of a sorted window costs besides its value. */
const ENTRY_BYTES = 24;

// A window that only grows keeps the n it may answer with (the $group accumulator); a sliding one every value.
function minMaxN(n: number, max: boolean): WindowAccumulatorFactory {
  return (removable) => {
    if (!removable) return growing(extremeN(n, max ? 1 : -1));
    const bag = new SortedBag<At<unknown>>((a, b) => compareValues(a.v, b.v) || a.i - b.i);
    let bytes = 0;
    return {
      add: (v, i) => {
        if (isNullish(v)) return;
        bag.add({ v, i });
        bytes += approxBytes(v) + ENTRY_BYTES;
      },
      remove: (v, i) => {
        if (isNullish(v)) return;
        bag.remove({ v, i });
        bytes -= approxBytes(v) + ENTRY_BYTES;
      },
      result() {
        const s = bag.sorted;
        return max ? s.slice(Math.max(0, s.length - n)).reverse().map((e) => e.v) : s.slice(0, n).map((e) => e.v);
      },
      get bytes() {
        return bytes;
      },
    };
  };
}

// A sliding window's $topN/$bottomN: every document of the window in sort order (ties by
// position), the first n for $topN, the last n for $bottomN (MongoDB's removable state). One that
// only grows: the $group accumulator (see the file comment).
function topBottom(n: number, bottom: boolean, single: boolean, sort: CompiledSort): WindowAccumulatorFactory {
  return (removable) => {
    if (!removable) return growing(topBottomN(n, bottom, single, sort));
    const bag = new SortedBag<At<Keyed>>((a, b) => sort.compareKeyed(a.v.key, b.v.key) || a.i - b.i);
    let bytes = 0;
    const size = (v: Keyed): number => approxBytes(v.key) + approxBytes(v.out) + ENTRY_BYTES;
    return {
      add: (v, i) => {
        bag.add({ v: v as Keyed, i });
        bytes += size(v as Keyed);
      },
      remove: (v, i) => {
        bag.remove({ v: v as Keyed, i });
        bytes -= size(v as Keyed);
      },
      result() {
        const s = bag.sorted;
        const kept = (bottom ? s.slice(Math.max(0, s.length - n)) : s.slice(0, n)).map((e) => (e.v.out === MISSING ? null : e.v.out));
        return single ? (kept[0] ?? null) : kept;
      },
      get bytes() {
        return bytes;
      },
    };
  };
}

// The $group accumulator over a window that only grows (nothing is ever removed from it).
function growing(acc: NAccumulator): WindowAccumulator {
  return {
    add: (v) => acc.add(v),
    remove: () => {
      throw new Error('a window starting at the partition start has nothing to remove');
    },
    result: () => acc.result(),
    get bytes() {
      return acc.bytes;
    },
  };
}

function percentile(spec: PercentileSpec): WindowAccumulatorFactory {
  return () => {
    const bag = new SortedBag<number>((a, b) => a - b);
    let count = 0;
    return {
      add: (v) => {
        if (!countsForPercentile(v)) return;
        bag.add(v);
        count++;
      },
      remove: (v) => {
        if (!countsForPercentile(v)) return;
        bag.remove(v);
        count--;
      },
      result() {
        const s = bag.sorted;
        if (s.length === 0) return spec.median ? null : spec.ps.map(() => null);
        return sortedPercentileResult(spec, s);
      },
      get bytes() {
        return count * ENTRY_BYTES;
      },
    };
  };
}

// `n` is evaluated on an empty document with no variables, as MongoDB's ExpressionN does.
function constantN(spec: unknown, name: string, names: ReadonlySet<string>): number {
  return validateN(compileExpression(spec, names)(Scope.of({})), name);
}

/** Parses one of these window functions (`name` is in N_WINDOW_FUNCTIONS). @throws QUERY_ERROR */
export function parseNWindowFunction(spec: Doc, name: string, sort: SortShape, names: ReadonlySet<string>): NWindowFunction {
  const bounds = specWindow(spec, name, sort) ?? WHOLE_PARTITION;
  const args = spec[name];
  if (name === '$percentile' || name === '$median') {
    const q = parsePercentile(args, name, (e) => compileExpression(e, names));
    const input = compileExpression(q.input, names);
    return { bounds, paths: [], value: (e) => input(e.scope), make: percentile(q) };
  }
  if (name === '$firstN' || name === '$lastN' || name === '$minN' || name === '$maxN') {
    const a = parseNInput(args, name);
    const input = compileExpression(a.input, names);
    const n = constantN(a.n, name, names);
    const value = (e: WindowEntry): unknown => input(e.scope);
    if (name === '$firstN' || name === '$lastN') return { bounds, paths: [], value, make: positionalValues(true, ENTRY_BYTES), cap: { n, last: name === '$lastN' } };
    return { bounds, paths: [], value, make: minMaxN(n, name === '$maxN') };
  }
  const t = parseTopBottom(args, name);
  const output = compileExpression(t.output, names);
  const n = constantN(t.n, name, names);
  return {
    bounds,
    paths: t.sort.keys.map((k) => k.path),
    value: (e): Keyed => ({ key: t.sort.keyOf(e.doc), out: output(e.scope) }),
    make: topBottom(n, isBottom(name), isSingle(name), t.sort),
  };
}

/** The window functions this file parses. */
export const N_WINDOW_FUNCTIONS: readonly string[] = ['$firstN', '$lastN', '$minN', '$maxN', '$top', '$bottom', '$topN', '$bottomN', '$percentile', '$median'];
