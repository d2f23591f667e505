/**
 * The accumulators of $setWindowFields windows (manual: $setWindowFields, "Window Operators"),
 * removable so that a sliding window costs O(1) amortized per document entering or leaving it
 * (MongoDB's WindowFunction* removable states): sums with compensation and counts of the
 * non-finite values, a monotonic deque for $min/$max, compensated sums of products for the standard
 * deviations and covariances, counted values for $addToSet. Values leave in the order they came
 * (first in, first out). Their results on an empty window are MongoDB's: 0 for $sum, [] for
 * $push/$addToSet, {} for $mergeObjects, null for the others. Each says what it holds (`bytes`,
 * counted against the stage's bound); one made for a window that only grows (nothing leaves it)
 * keeps only what its result needs ($min/$max their extreme).
 */

import { compareValues, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { isNullish } from '../expression/expression.js';
import { groupKey } from '../value-key.js';
import { approxBytes, stageError } from '../stage.js';

/** One window's running state: values enter at the right and leave at the left. */
export interface WindowAccumulator {
  /** `i` is the document's position in its partition. */
  add(v: unknown, i: number): void;
  remove(v: unknown, i: number): void;
  result(): unknown;
  /** Estimated bytes it holds. */
  readonly bytes: number;
  /** True when remove() needs only the position (it keeps what it took): no queue of values is kept for it. */
  readonly removesOwn?: boolean;
}

/** `removable`: values will leave (the window's start moves); false: the window only grows. */
export type WindowAccumulatorFactory = (removable: boolean) => WindowAccumulator;

/** What an accumulator of a few numbers holds. */
export const SMALL_STATE_BYTES = 64;

/** A double-ended queue over an array with a moving head (amortized O(1)). */
export class Deque<T> {
  #items: T[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }
  front(): T {
    return this.#items[this.#head]!;
  }
  back(): T {
    return this.#items[this.#items.length - 1]!;
  }
  push(v: T): void {
    this.#items.push(v);
  }
  popBack(): void {
    this.#items.pop();
    if (this.size === 0) this.clear();
  }
  shift(): void {
    this.#head++;
    if (this.size === 0) this.clear();
    else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
  toArray(): T[] {
    return this.#items.slice(this.#head);
  }
}

/** A sum that values can leave: Neumaier-compensated, the non-finite values counted apart. */
export class RemovableSum {
  #sum = 0;
  #compensation = 0;
  #nan = 0;
  #posInf = 0;
  #negInf = 0;

  #plus(x: number): void {
    const t = this.#sum + x;
    if (Math.abs(this.#sum) >= Math.abs(x)) this.#compensation += this.#sum - t + x;
    else this.#compensation += x - t + this.#sum;
    this.#sum = t;
  }

  add(x: number): void {
    if (Number.isNaN(x)) this.#nan++;
    else if (x === Infinity) this.#posInf++;
    else if (x === -Infinity) this.#negInf++;
    else this.#plus(x);
  }

  remove(x: number): void {
    if (Number.isNaN(x)) this.#nan--;
    else if (x === Infinity) this.#posInf--;
    else if (x === -Infinity) this.#negInf--;
    else this.#plus(-x);
  }

  get value(): number {
    if (this.#nan > 0 || (this.#posInf > 0 && this.#negInf > 0)) return NaN;
    if (this.#posInf > 0) return Infinity;
    if (this.#negInf > 0) return -Infinity;
    return this.#sum + this.#compensation;
  }
}

const isNumber = (v: unknown): v is number => typeof v === 'number';

function sum(): WindowAccumulator {
  const s = new RemovableSum();
  return {
    add: (v) => void (isNumber(v) && s.add(v)),
    remove: (v) => void (isNumber(v) && s.remove(v)),
    result: () => s.value,
    bytes: SMALL_STATE_BYTES,
  };
}

function avg(): WindowAccumulator {
  const s = new RemovableSum();
  let n = 0;
  return {
    add: (v) => {
      if (!isNumber(v)) return;
      s.add(v);
      n++;
    },
    remove: (v) => {
      if (!isNumber(v)) return;
      s.remove(v);
      n--;
    },
    result: () => (n === 0 ? null : s.value / n),
    bytes: SMALL_STATE_BYTES,
  };
}

// A monotonic deque of (position, value): its front is the window's extreme. Null and missing
// are ignored, as $min/$max ignore them; equal values keep the earliest (as $group's $min). A
// window that only grows keeps its extreme alone.
function extreme(sign: 1 | -1): WindowAccumulatorFactory {
  return (removable) => {
    if (!removable) {
      let best: unknown = MISSING;
      let bytes = 0;
      return {
        add: (v) => {
          if (isNullish(v) || (best !== MISSING && sign * compareValues(v, best) <= 0)) return;
          best = v;
          bytes = approxBytes(v);
        },
        remove: () => {
          throw new Error('a window that only grows has nothing to remove');
        },
        result: () => (best === MISSING ? null : best),
        get bytes() {
          return bytes;
        },
      };
    }
    const q = new PositionQueue();
    return {
      add: (v, i) => {
        if (isNullish(v)) return;
        while (q.size > 0 && sign * compareValues(v, q.back()) > 0) q.popBack();
        q.push(i, v, approxBytes(v) + 16);
      },
      remove: (_v, i) => q.leave(i),
      result: () => (q.size === 0 ? null : q.front()),
      get bytes() {
        return q.bytes;
      },
      removesOwn: true,
    };
  };
}

/** Values with the positions they entered at and the bytes they hold: one leaves by its position, from the front. */
class PositionQueue {
  readonly #q = new Deque<{ i: number; v: unknown; b: number }>();
  bytes = 0;

  get size(): number {
    return this.#q.size;
  }
  front(): unknown {
    return this.#q.front().v;
  }
  back(): unknown {
    return this.#q.back().v;
  }
  push(i: number, v: unknown, b: number): void {
    this.bytes += b;
    this.#q.push({ i, v, b });
  }
  popBack(): void {
    this.bytes -= this.#q.back().b;
    this.#q.popBack();
  }
  /** The front value leaves if it entered at position `i` (else it had left already, or never entered). */
  leave(i: number): void {
    if (this.#q.size === 0 || this.#q.front().i !== i) return;
    this.bytes -= this.#q.front().b;
    this.#q.shift();
  }
  values(): unknown[] {
    return this.#q.toArray().map((e) => e.v);
  }
}

/**
 * The values of the window's positions, in order, each leaving with its position: $push (missing
 * skipped) and $firstN/$lastN (missing as null). `entryBytes`: what holding one costs besides the value.
 */
export function positionalValues(missingAsNull: boolean, entryBytes: number): WindowAccumulatorFactory {
  return () => {
    const q = new PositionQueue();
    return {
      add: (v, i) => {
        if (v === MISSING) {
          if (!missingAsNull) return;
          v = null;
        }
        q.push(i, v, approxBytes(v) + entryBytes);
      },
      remove: (_v, i) => q.leave(i),
      result: () => q.values(),
      get bytes() {
        return q.bytes;
      },
      removesOwn: true,
    };
  };
}

// MongoDB's removable $addToSet keeps a multiset in BSON order, and returns it in that order.
function addToSet(): WindowAccumulator {
  const counts = new Map<string, { v: unknown; n: number; b: number }>();
  let bytes = 0;
  return {
    add: (v) => {
      if (v === MISSING) return;
      const key = groupKey(v);
      const e = counts.get(key);
      if (e !== undefined) {
        e.n++;
        return;
      }
      const b = approxBytes(v) + 2 * key.length + 32;
      bytes += b;
      counts.set(key, { v, n: 1, b });
    },
    remove: (v) => {
      if (v === MISSING) return;
      const key = groupKey(v);
      const e = counts.get(key)!;
      if (--e.n > 0) return;
      bytes -= e.b;
      counts.delete(key);
    },
    result: () => [...counts.values()].map((e) => e.v).sort(compareValues),
    get bytes() {
      return bytes;
    },
  };
}

// The standard deviations and covariances from compensated sums of x, y, x*x and x*y: the
// co-moment is (n * sum(xy) - sum(x) * sum(y)) / n, exact where the sums are (small integers,
// equal values give exactly 0), where running means (Welford) drift as values leave the window.
// A co-moment below 0 (rounding) is 0, as MongoDB resets it.
class CoMoments {
  n = 0;
  readonly #x = new RemovableSum();
  readonly #y = new RemovableSum();
  readonly #xy = new RemovableSum();
  add(x: number, y: number): void {
    this.n++;
    this.#x.add(x);
    this.#y.add(y);
    this.#xy.add(x * y);
  }
  remove(x: number, y: number): void {
    this.n--;
    this.#x.remove(x);
    this.#y.remove(y);
    this.#xy.remove(x * y);
  }
  /** The sum of (x - mean x) * (y - mean y). */
  get comoment(): number {
    if (this.n === 0) return 0;
    return (this.n * this.#xy.value - this.#x.value * this.#y.value) / this.n;
  }
}

function stdDev(sample: boolean): WindowAccumulatorFactory {
  return () => {
    const m = new CoMoments();
    return {
      add: (v) => void (isNumber(v) && m.add(v, v)),
      remove: (v) => void (isNumber(v) && m.remove(v, v)),
      result: () => {
        if (m.n === 0 || (sample && m.n === 1)) return null;
        const m2 = m.comoment;
        return Number.isNaN(m2) ? NaN : Math.sqrt(Math.max(0, m2) / (sample ? m.n - 1 : m.n));
      },
      bytes: SMALL_STATE_BYTES,
    };
  };
}

// $covariancePop/$covarianceSamp take [x, y]; pairs where either is not a number are skipped.
function covariance(sample: boolean): WindowAccumulatorFactory {
  return () => {
    const m = new CoMoments();
    const pair = (v: unknown): [number, number] | undefined =>
      Array.isArray(v) && v.length === 2 && isNumber(v[0]) && isNumber(v[1]) ? [v[0], v[1]] : undefined;
    return {
      add: (v) => {
        const p = pair(v);
        if (p !== undefined) m.add(p[0], p[1]);
      },
      remove: (v) => {
        const p = pair(v);
        if (p !== undefined) m.remove(p[0], p[1]);
      },
      result: () => {
        if (m.n === 0 || (sample && m.n === 1)) return null;
        return m.comoment / (sample ? m.n - 1 : m.n);
      },
      bytes: SMALL_STATE_BYTES,
    };
  };
}

// Only with windows that start at the partition's first document (MongoDB has no removable
// $mergeObjects): later documents' fields overwrite earlier ones.
function mergeObjects(): WindowAccumulator {
  const out: Doc = {};
  let bytes = 16;
  return {
    add: (v) => {
      if (isNullish(v)) return;
      if (!isPlainObject(v)) stageError('$setWindowFields', `$mergeObjects requires object inputs, but input ${JSON.stringify(v)} is of type ${Array.isArray(v) ? 'array' : typeof v}`);
      for (const [k, x] of Object.entries(v)) {
        // Counted as approxBytes counts a field of a document.
        const old = getOwn(out, k);
        if (old !== MISSING) bytes -= 16 + 2 * k.length + approxBytes(old);
        bytes += 16 + 2 * k.length + approxBytes(x);
        setOwn(out, k, x);
      }
    },
    remove: () => {
      throw new Error('$mergeObjects is not removable');
    },
    result: () => ({ ...out }),
    get bytes() {
      return bytes;
    },
  };
}

/** The accumulator window functions by name ($count is `$sum: 1`). */
export const WINDOW_ACCUMULATORS: Readonly<Record<string, WindowAccumulatorFactory>> = {
  $sum: sum,
  $avg: avg,
  $min: extreme(-1),
  $max: extreme(1),
  $push: positionalValues(false, 16),
  $addToSet: addToSet,
  $stdDevPop: stdDev(false),
  $stdDevSamp: stdDev(true),
  $covariancePop: covariance(false),
  $covarianceSamp: covariance(true),
  $mergeObjects: mergeObjects,
};

/** Accumulators MongoDB has only in windows that start at the partition's first document. */
export const NON_REMOVABLE: ReadonlySet<string> = new Set(['$mergeObjects']);

/**
 * The input values of the documents in a sliding window, in order: a value leaves the
 * accumulator as it entered it (MongoDB's removable executors queue them too), so an input is
 * evaluated once per document (a `$rand` stays the same) and a leaving document is not read again.
 */
export class ValueQueue {
  readonly #q = new Deque<{ v: unknown; b: number }>();
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  push(v: unknown): void {
    const b = approxBytes(v) + 16;
    this.#bytes += b;
    this.#q.push({ v, b });
  }

  /** The oldest value, taken out. */
  shift(): unknown {
    const e = this.#q.front();
    this.#bytes -= e.b;
    this.#q.shift();
    return e.v;
  }
}
